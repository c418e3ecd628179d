"""Translate one template module for one backend: check everything, then rewrite rule by rule."""

from typing import Iterable, Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import MetadataWrapper

from codegen.analysis import MARKERS, ModuleContext
from codegen.rules import RULES, Rule


def _dotted(node: Optional[cst.BaseExpression]) -> str:
    return cst.Module([]).code_for_node(node) if node is not None else ""


class _DropMarkers(cst.CSTTransformer):
    """Last step: the marker import and ``__backends__`` never reach a generated package."""

    def __init__(self, package: str) -> None:
        super().__init__()
        self.modules = {MARKERS, MARKERS.replace("oqupy", package, 1)}

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom):
        if _dotted(original_node.module) in self.modules:
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        targets = original_node.targets
        if (
            len(targets) == 1
            and isinstance(targets[0].target, cst.Name)
            and targets[0].target.value == "__backends__"
        ):
            return cst.RemovalSentinel.REMOVE
        return updated_node


def module_backends(module: cst.Module) -> tuple[str, ...]:
    """The packages a template module is emitted into (``__backends__``, default both)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.Assign)
                    and isinstance(small.targets[0].target, cst.Name)
                    and small.targets[0].target.value == "__backends__"
                ):
                    return tuple(e.value.evaluated_value for e in small.value.elements)
    return ("numpy", "jax")


def check(module: cst.Module, ctx: ModuleContext, rules: Iterable[type[Rule]] = RULES) -> None:
    """Run every rule's checker on the untouched module; problems go to ``ctx.diagnostics``."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    for rule in rules:
        if rule.Checker is not None:
            wrapper.visit(rule.Checker(ctx))


def transform(module: cst.Module, ctx: ModuleContext, rules: Iterable[type[Rule]] = RULES) -> cst.Module:
    """Apply the transformers for ``ctx.backend`` in order, then fix imports and drop the markers."""
    for rule in rules:
        if rule.Transformer is not None and ctx.backend in rule.BACKENDS:
            module = MetadataWrapper(module).visit(rule.Transformer(ctx))
    module = AddImportsVisitor(ctx.codemod).transform_module(module)
    module = RemoveImportsVisitor(ctx.codemod).transform_module(module)
    return module.visit(_DropMarkers(ctx.package))


def translate(source: str, ctx: ModuleContext, rules: Iterable[type[Rule]] = RULES) -> Optional[str]:
    """Translated source, or None when the checks found problems (then see ``ctx.diagnostics``)."""
    rules = tuple(rules)
    module = cst.parse_module(source)
    before = len(ctx.diagnostics)
    check(module, ctx, rules)
    if len(ctx.diagnostics) > before:
        return None
    return transform(module, ctx, rules).code
