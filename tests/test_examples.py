"""Every script in ``examples/`` runs, in its ``--quick`` mode, against each package under test.

Each run is a fresh interpreter, as a user would start it; the test checks the exit status and that the plot was
written (a PNG signature).  A new example is picked up by the glob and must accept ``--backend``, ``--quick`` and
``--output``.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import selected_packages

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _cases(config):
    return [
        pytest.param(example, package, id=f"{example.stem}-{package}")
        for example in EXAMPLES
        for package in selected_packages(config)
        if package.startswith("oqupy_")
    ]


def pytest_generate_tests(metafunc):
    if {"example", "package"} <= set(metafunc.fixturenames):
        metafunc.parametrize(("example", "package"), _cases(metafunc.config))


def test_examples_exist():
    assert len(EXAMPLES) >= 3


def test_example_runs_quick(example, package, tmp_path):
    output = tmp_path / f"{example.stem}.png"
    backend = package.removeprefix("oqupy_")
    result = subprocess.run(
        [sys.executable, str(example), "--backend", backend, "--quick", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert output.read_bytes()[:8] == PNG_SIGNATURE


DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_getting_started_snippets_run(capsys):
    """The code blocks of docs/index.md, run in order as one script with oqupy_numpy."""
    text = (DOCS / "index.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    exec(compile("\n".join(blocks), str(DOCS / "index.md"), "exec"), namespace)
    assert float(namespace["sz"][0]) == pytest.approx(1.0)
    assert len(namespace["dynamics"].times) == 51
