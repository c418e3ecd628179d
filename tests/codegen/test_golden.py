"""Whole-file golden tests: ``golden/template/*.py`` -> ``golden/expected/{numpy,jax}/*.py``.

To accept new output after an intended change: ``UPDATE_GOLDEN=1 pytest tests/codegen/test_golden.py``,
then review the diff of ``tests/codegen/golden/expected``.
"""

import os
from pathlib import Path

import pytest

from codegen.analysis import ModuleContext
from codegen.format import format_source
from codegen.pipeline import translate

GOLDEN = Path(__file__).with_name("golden")
PACKAGES = {"numpy": "oqupy_numpy", "jax": "oqupy_jax"}
CASES = sorted((GOLDEN / "template").glob("*.py"))


@pytest.mark.parametrize("backend", PACKAGES)
@pytest.mark.parametrize("template", CASES, ids=[p.stem for p in CASES])
def test_golden(template, backend):
    package = PACKAGES[backend]
    ctx = ModuleContext(f"src_template/oqupy/{template.name}", f"oqupy.{template.stem}", backend, package)
    output = translate(template.read_text(), ctx)
    assert output is not None, [str(d) for d in ctx.diagnostics]
    output = format_source(output, f"generated/{package}/src/{package}/{template.name}")
    expected = GOLDEN / "expected" / backend / template.name
    if os.environ.get("UPDATE_GOLDEN"):
        expected.write_text(output)
    assert output == expected.read_text()


def test_there_are_golden_cases():
    assert CASES
