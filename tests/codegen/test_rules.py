"""Tests generated from each rule's VALID / INVALID examples (the examples are the rule's documentation)."""

import pytest

from codegen.analysis import ModuleContext
from codegen.build import package_dtypes
from codegen.format import format_source
from codegen.pipeline import array_aliases, translate
from codegen.rules import RULES

PACKAGES = {"numpy": "oqupy_numpy", "jax": "oqupy_jax"}
PATH = "src_template/oqupy/example.py"
DTYPES = package_dtypes()  # examples may import the template's dtype constants (``oqupy.config.NpDtype``)


def run(template: str, backend: str):
    ctx = ModuleContext(PATH, "oqupy.example", backend, PACKAGES[backend], dtypes=DTYPES)
    return translate(template, ctx), ctx


def formatted(source: str, backend: str) -> str:
    return format_source(source, f"generated/{PACKAGES[backend]}/src/{PACKAGES[backend]}/example.py")


VALID = [
    pytest.param(rule, example, backend, id=f"{rule.NAME}-{i}-{backend}")
    for rule in RULES
    for i, example in enumerate(rule.VALID)
    for backend in PACKAGES
    if getattr(example, backend) is not None
]
INVALID = [
    pytest.param(rule, invalid, id=f"{rule.NAME}-{i}")
    for rule in RULES
    for i, invalid in enumerate(rule.INVALID)
]


@pytest.mark.parametrize(("rule", "example", "backend"), VALID)
def test_valid_example(rule, example, backend):
    output, ctx = run(example.template, backend)
    assert output is not None, [str(d) for d in ctx.diagnostics]
    assert formatted(output, backend) == formatted(getattr(example, backend), backend)
    if backend in rule.BACKENDS and rule.rewrites():
        assert ctx.fired.get(rule.NAME), f"{rule.NAME} did not fire on its own example"


@pytest.mark.parametrize(("rule", "invalid"), INVALID)
def test_invalid_example(rule, invalid):
    output, ctx = run(invalid.template, invalid.backend)
    assert output is None, "an invalid example was translated"
    messages = [str(d) for d in ctx.diagnostics]
    assert any(f"[{rule.NAME}]" in m and invalid.message in m for m in messages), messages
    assert all(m.startswith(f"{PATH}:") for m in messages)


IDIOMS = [
    pytest.param(rule, idiom, id=f"{rule.NAME}-{i}") for rule in RULES for i, idiom in enumerate(rule.IDIOMS)
]


@pytest.mark.parametrize(("rule", "idiom"), IDIOMS)
def test_idiom_before_is_refused_and_after_translates(rule, idiom):
    output, ctx = run(idiom.before, idiom.backend)
    assert output is None and any(d.rule == rule.NAME for d in ctx.diagnostics), [
        str(d) for d in ctx.diagnostics
    ]
    output, ctx = run(idiom.after, idiom.backend)
    assert output is not None, [str(d) for d in ctx.diagnostics]


def test_every_rule_is_documented_by_examples():
    for rule in RULES:
        assert rule.__doc__ and rule.NAME
        assert rule.VALID or rule.INVALID, rule.NAME
        if rule.rewrites():
            assert rule.VALID, f"{rule.NAME} rewrites but shows no before/after example"


def test_all_problems_reported_in_one_run():
    template = (
        "import numpy as np\n\n\ndef f(x: np.ndarray, n: int):\n    x[0] = 1.0\n    y = np.zeros(3)\n"
        "    y.fill(2.0)\n    return np.random.rand(n)\n"
    )
    output, ctx = run(template, "jax")
    assert output is None
    rules = sorted({d.rule for d in ctx.diagnostics})
    assert rules == ["argument-write", "inplace-method", "numpy-to-jax"]
    lines = sorted(d.line for d in ctx.diagnostics)
    assert lines == [5, 7, 8]


def test_lists_dicts_and_attributes_are_left_alone():
    template = (
        "import numpy as np\n\n\nclass A:\n    def __init__(self):\n        self.values = [0]\n\n"
        "    def f(self):\n        d = {}\n        d['a'] = 1\n        items = [1]\n"
        "        items[0] = 2\n        self.values[0] = 3\n        return d, items\n"
    )
    output, _ = run(template, "jax")
    assert "d['a'] = 1" in output and "items[0] = 2" in output and "self.values[0] = 3" in output


def test_names_are_matched_by_qualified_name_not_spelling():
    template = (
        "import numpy\nfrom numpy import linalg as la\n\n\ndef f(a: numpy.ndarray):\n"
        "    b = numpy.zeros(2)\n    b[0] = 1.0\n    return la.svd(a), b\n"
    )
    output, _ = run(template, "jax")
    assert "jnp.linalg.svd(a)" in output and "b = b.at[0].set(1.0)" in output
    # a local function that happens to be called `zeros` is not numpy's
    output, _ = run(
        "def zeros(n):\n    return [0] * n\n\n\ndef g():\n    x = zeros(2)\n    x[0] = 1\n    return x\n",
        "jax",
    )
    assert "x[0] = 1" in output


def test_backend_name_never_survives():
    template = (
        "from oqupy._codegen import BACKEND\n\n\ndef f():\n    if BACKEND == 'jax':\n        return 1\n"
        "    else:\n        return 2\n"
    )
    for backend in PACKAGES:
        output, _ = run(template, backend)
        assert "BACKEND" not in output and "_codegen" not in output
        assert ("return 1" in output) == (backend == "jax")


def test_array_aliases_declared_by_the_template_annotate_arrays():
    source = (
        "import numpy as np\nfrom numpy import ndarray\n\nMatrix = np.ndarray\nVector = ndarray\nSize = int\n"
    )
    aliases = array_aliases(source, "oqupy._types")
    assert aliases == {"oqupy._types.Matrix", "oqupy._types.Vector"}
    template = "from oqupy._types import Matrix\n\n\ndef f(x: Matrix):\n    x[0] = 1.0\n    return x\n"
    ctx = ModuleContext(PATH, "oqupy.example", "jax", "oqupy_jax", array_types=aliases | {"numpy.ndarray"})
    assert translate(template, ctx) is None
    assert [d.rule for d in ctx.diagnostics] == ["argument-write"]
    output, _ = run(template, "jax")  # without the declaration, `Matrix` is not known to be an array
    assert output is not None and "x[0] = 1.0" in output


def test_comprehension_conditions_are_analysed():
    # the flow analysis walks each `if` of a comprehension (a crash here once stopped the build)
    template = (
        "import numpy as np\n\n\ndef f(x: np.ndarray, axis: int):\n"
        "    others = tuple(a for a in range(x.ndim) if a != axis)\n"
        "    rows = [np.sum(x) for _ in range(2) if np.any(x != 0)]\n"
        "    return np.sum(x, axis=others), rows\n"
    )
    for backend in PACKAGES:
        output, ctx = run(template, backend)
        assert output is not None, [str(d) for d in ctx.diagnostics]
        assert "if a != axis" in output


def test_every_finding_of_the_flow_analysis_has_a_rule_that_reports_it():
    """Every rule name ``codegen/flow`` files findings under is a rule that reports them in functions and at module
    level (issue 32: a donated buffer reused at module level was filed under a name no rule printed)."""
    import ast
    import inspect
    from pathlib import Path

    filed = set()
    for path in Path("codegen/flow").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "report"
                and len(node.args) > 1
            ):
                if isinstance(node.args[1], ast.Constant):
                    filed.add(node.args[1].value)
    rules = {rule.NAME: rule for rule in RULES}
    assert filed and filed <= set(rules), filed - set(rules)
    for name in filed:
        for hook in ("check_Module", "check_FunctionDef"):
            source = inspect.getsource(getattr(rules[name], hook))
            assert "report_findings" in source or "_report_flow" in source, (name, hook)
