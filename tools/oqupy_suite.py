"""Run OQuPy's own test suite against our packages, with only the import swapped.

Usage::

    python tools/oqupy_suite.py PATH_TO_OQUPY_CHECKOUT [--package oqupy_numpy] [--package oqupy_jax]
        [--python PYTHON] [--workdir DIR] [TEST_PATH ...]

For each package, the checkout's ``tests/`` folder is copied to ``DIR/<package>/tests`` (a temporary folder by
default), every ``import oqupy`` / ``from oqupy...`` in it is rewritten to the package (``import oqupy_numpy as
oqupy``), and pytest runs the TEST_PATHs (default ``tests/coverage tests/physics``) there with PYTHON (default: this
interpreter).  ``--package oqupy`` runs the copy unchanged, for a baseline with OQuPy's own interpreter
(``--python /path/to/oqupy-venv/bin/python``).  Prints pass/fail counts per file and the failures' first lines.
Nothing is fetched: the checkout must be on disk, and OQuPy's tests never enter this repository.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections import Counter, defaultdict
from pathlib import Path

_IMPORT_RULES = (
    (re.compile(r"^([ \t]*)import oqupy[ \t]*$", re.M), r"\1import {pkg} as oqupy"),
    (re.compile(r"^([ \t]*)import oqupy as (\w+)", re.M), r"\1import {pkg} as \2"),
    (re.compile(r"^([ \t]*)import oqupy\.([\w.]+) as (\w+)", re.M), r"\1import {pkg}.\2 as \3"),
    (
        re.compile(r"^([ \t]*)import oqupy\.([\w.]+)[ \t]*$", re.M),
        r"\1import {pkg}.\2\n\1import {pkg} as oqupy",
    ),
    (re.compile(r"^([ \t]*)from oqupy(\.[\w.]+)? import", re.M), r"\1from {pkg}\2 import"),
)


def swap_imports(source: str, package: str) -> str:
    """``source`` with OQuPy's imports pointing at ``package`` (names inside the tests stay ``oqupy``)."""
    for pattern, replacement in _IMPORT_RULES:
        source = pattern.sub(replacement.replace("{pkg}", package), source)
    return source


def prepare(checkout: Path, package: str, workdir: Path) -> Path:
    """Copy the checkout's tests into ``workdir/package`` with the imports swapped; return that folder."""
    root = workdir / package
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(checkout / "tests", root / "tests")
    if package != "oqupy":
        for path in (root / "tests").rglob("*.py"):
            path.write_text(swap_imports(path.read_text(encoding="utf-8"), package), encoding="utf-8")
    (root / "tests" / "data" / "temp").mkdir(parents=True, exist_ok=True)
    return root


def run(root: Path, python: str, test_paths: list) -> Path:
    """Run pytest in ``root`` (its own rootdir, no configuration of ours); return the JUnit XML report."""
    report = root / "report.xml"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    command = [
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-c",
        os.devnull,
        "--rootdir",
        str(root),
        "--continue-on-collection-errors",  # a test file that cannot be imported fails alone, not the whole run
    ]
    command += [f"--junitxml={report}", *test_paths]
    subprocess.run(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return report


def summarise(report: Path) -> tuple:
    """(Counter of outcomes per file, list of (test id, outcome, first line of the message))."""
    per_file: dict = defaultdict(Counter)
    failures = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = (child.get("message") or child.text or "").strip().splitlines()
                failures.append((name, outcome, message[0][:160] if message else ""))
        per_file[case.get("classname", "")][outcome] += 1
    return per_file, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="an OQuPy checkout (with its tests/ folder)")
    parser.add_argument("tests", nargs="*", default=["tests/coverage", "tests/physics"])
    parser.add_argument("--package", action="append", help="oqupy_numpy, oqupy_jax or oqupy (repeatable)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that has the package")
    parser.add_argument("--workdir", type=Path, help="where the copies go (default: a temporary folder)")
    args = parser.parse_args()
    if not (args.checkout / "tests").is_dir():
        parser.error(f"{args.checkout} has no tests/ folder")
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="oqupy_suite_"))).resolve()
    python = os.path.abspath(args.python) if os.sep in args.python else args.python  # pytest runs elsewhere
    status = 0
    for package in args.package or ["oqupy_numpy", "oqupy_jax"]:
        root = prepare(args.checkout.resolve(), package, workdir)
        per_file, failures = summarise(run(root, python, args.tests))
        totals = sum(per_file.values(), Counter())
        print(
            f"\n== {package}: "
            + ", ".join(f"{totals[k]} {k}" for k in ("passed", "failed", "error", "skipped"))
        )
        for name in sorted(per_file):
            counts = per_file[name]
            print(f"   {name:55s} " + " ".join(f"{k}={counts[k]}" for k in sorted(counts)))
        for test_id, outcome, message in failures:
            print(f"   {outcome.upper():7s} {test_id}: {message}")
        status = status or int(bool(totals["failed"] or totals["error"]))
    print(f"\n(copies and reports in {workdir})")
    return status


if __name__ == "__main__":
    sys.exit(main())
