"""Deterministic formatting of generated code with the pinned ruff (import sorting, then ``ruff format``)."""

import subprocess
import sys
from pathlib import Path

CONFIG = Path(__file__).with_name("ruff.toml")


def _ruff(args: list[str], source: str, filename: str) -> str:
    command = [
        sys.executable,
        "-m",
        "ruff",
        *args,
        "--config",
        str(CONFIG),
        "--stdin-filename",
        filename,
        "-",
    ]
    result = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"ruff {' '.join(args)} failed on {filename}:\n{result.stderr}")
    return result.stdout


def format_source(source: str, filename: str) -> str:
    """Sort imports and format ``source`` as the file ``filename`` (a relative path)."""
    sorted_source = _ruff(["check", "--fix", "--exit-zero", "--quiet"], source, filename)
    return _ruff(["format", "--quiet"], sorted_source, filename)
