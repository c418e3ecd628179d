"""The template's layout: where code runs is a property of the module, and the docs' table of modules is true.

Every module of ``src_template/oqupy`` declares ``__runs_on__ = "host"`` (codegen only renames the package) or
``"device"`` (translated to ``jax.numpy``, kernels jitted); ``docs/template_guide.md`` lists each module with the
same placement; modules stay small; ``@host`` is the rare exception inside a device module; no module reaches
into another module's private names.
"""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src_template" / "oqupy"
GUIDE = REPO / "docs" / "template_guide.md"
MAX_LINES = 600
MAX_HOST_DECORATORS = 9
NOT_TRANSLATED = {"_codegen.py"}  # the markers themselves

MODULES = sorted(p for p in PACKAGE.glob("*.py") if p.name not in NOT_TRANSLATED)
SUBMODULES = {p.stem for p in PACKAGE.glob("*.py")}


def declared(path: Path) -> str | None:
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "__runs_on__"
            and isinstance(node.value, ast.Constant)
        ):
            return node.value.value
    return None


def documented() -> dict[str, str]:
    """``{file name: "host" | "device"}`` from the table of modules in the template guide."""
    rows = re.findall(r"^\|\s*`([\w.]+\.py)`\s*\|\s*(host|device)\s*\|", GUIDE.read_text(), flags=re.M)
    return dict(rows)


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_module_declares_where_it_runs(path):
    assert declared(path) in ("host", "device"), f'{path.name}: add `__runs_on__ = "host"` or "device"'


def test_the_guide_table_is_true():
    table = documented()
    actual = {p.name: declared(p) for p in MODULES}
    assert table == actual


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_module_is_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines: split it by concept"


def host_decorators(path: Path) -> int:
    count = 0
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            count += sum(isinstance(d, ast.Name) and d.id == "host" for d in node.decorator_list)
    return count


def test_host_decorators_are_rare():
    counts = {p.name: host_decorators(p) for p in MODULES}
    assert sum(counts.values()) <= MAX_HOST_DECORATORS, {k: v for k, v in counts.items() if v}
    for path in MODULES:
        if declared(path) == "host":
            assert counts[path.name] == 0, f"{path.name} is a host module: `@host` says nothing there"


def private_reach_ins(path: Path) -> list[str]:
    """``from oqupy.m import _x`` and ``m._x`` for a template module ``m`` (private submodules are fine)."""
    tree = ast.parse(path.read_text())
    found = []
    modules = set()  # local names bound to template modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "oqupy":
            for alias in node.names:
                if node.module == "oqupy" and alias.name in SUBMODULES:
                    modules.add(alias.asname or alias.name)
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.name}:{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("oqupy.") and alias.asname:
                    modules.add(alias.asname)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_private_reach_ins():
    found = [problem for path in MODULES for problem in private_reach_ins(path)]
    assert not found, found


def test_private_method_calls_stay_inside_their_class():
    """``obj._name(...)`` is only called on ``self`` / ``cls`` (never on another module's object)."""
    found = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr.startswith("_")
                and not node.func.attr.startswith("__")
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "cls"))
                and not (isinstance(node.func.value, ast.Call))  # super()._x()
            ):
                found.append(f"{path.name}:{node.lineno}: .{node.func.attr}(...)")
    assert not found, found
