"""Translate one template module for one backend: check everything, then rewrite rule by rule."""

from typing import Iterable, Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from codegen.analysis import ARRAY_TYPE, MARKERS, ModuleContext, annotated_returns
from codegen.rules import RULES, Rule


def _dotted(node: Optional[cst.BaseExpression]) -> str:
    return cst.Module([]).code_for_node(node) if node is not None else ""


DECLARATIONS = ("__runs_on__",)
"""Module-level declarations read by codegen and dropped from the generated packages."""


class _DropMarkers(cst.CSTTransformer):
    """Last step: the marker import and the declarations never reach a generated package."""

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
            and targets[0].target.value in DECLARATIONS
        ):
            return cst.RemovalSentinel.REMOVE
        return updated_node


def module_declaration(module: cst.Module, name: str) -> Optional[cst.BaseExpression]:
    """The value assigned to the module-level declaration ``name`` (e.g. ``__runs_on__``)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.Assign)
                    and isinstance(small.targets[0].target, cst.Name)
                    and small.targets[0].target.value == name
                ):
                    return small.value
    return None


def module_runs_on(module: cst.Module) -> str:
    """Where a template module's code runs: ``__runs_on__ = "host"`` or ``"device"`` (the default).

    A host module keeps NumPy/SciPy in both packages (codegen only renames the package); a device module
    is translated (``jax.numpy``, jitted kernels).  A value other than these is kept as written so that the
    ``host-marker`` rule can refuse it with its position.
    """
    value = module_declaration(module, "__runs_on__")
    if isinstance(value, cst.SimpleString):
        return str(value.evaluated_value)
    return "device" if value is None else "?"


class _Aliases(cst.CSTVisitor):
    """Module-level ``Name = np.ndarray`` assignments (by qualified name, whatever ``numpy`` is called)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        found = self.get_metadata(QualifiedNameProvider, node.value, set())
        if {q.name for q in found} == {ARRAY_TYPE}:
            self.names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))


class _DtypeConstants(_Aliases):
    """Module-level ``Name = np.complex128`` assignments: name -> element kind (by qualified name)."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: dict[str, str] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        from codegen.flow.numpy_model import dtype_of

        kind = dtype_of(
            node.value,
            lambda n: next(iter(q.name for q in self.get_metadata(QualifiedNameProvider, n, set())), None),
        )
        if kind is not None:
            self.kinds.update((t.target.value, kind) for t in node.targets if isinstance(t.target, cst.Name))


def dtype_constants(source: str, module_name: str) -> tuple[tuple[str, str], ...]:
    """Qualified names of the dtype constants a module declares (``NpDtype = np.complex128``) with their
    element kinds: other modules that import them know the dtype of ``np.zeros(n, dtype=NpDtype)``."""
    visitor = _DtypeConstants()
    MetadataWrapper(cst.parse_module(source)).visit(visitor)
    return tuple(sorted((f"{module_name}.{name}", kind) for name, kind in visitor.kinds.items()))


_BUILTIN_NAMES = frozenset({"int", "float", "complex", "bool", "str", "list", "dict", "tuple"})


def _imported_names(module: cst.Module, module_name: str) -> dict[str, str]:
    """What a module's top-level imports bind: local name -> qualified name (``np`` -> ``numpy``)."""
    names: dict[str, str] = {}
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = _dotted(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        names[alias.asname.name.value] = dotted
                    else:
                        head = dotted.split(".")[0]
                        names[head] = head
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = _dotted(small.module)
                if small.relative:  # ``from . import x`` in ``oqupy.y``: ``oqupy.x``
                    package = module_name.split(".")[: -len(small.relative)]
                    base = ".".join([*package, base] if base else package)
                for alias in small.names:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(local, cst.Name):
                        names[local.value] = f"{base}.{_dotted(alias.name)}"
    return names


def function_returns(source: str, module_name: str) -> tuple[tuple[str, str], ...]:
    """Qualified names of a module's functions annotated to return an array, a scalar or a container
    (``analysis.annotated_returns``): other modules of the package that call them know what they get
    (``opr.commutator(h)`` is an array, so ``-1j * opr.commutator(h)`` is a new complex one).

    The annotations' names are resolved through the module's top-level imports alone (and the builtins), without
    libcst's scope analysis: the build reads every template module this way before translating any, so it has
    to be quick (about a tenth of the time)."""
    module = cst.parse_module(source)
    imported = _imported_names(module, module_name)

    def qname(node: cst.CSTNode) -> Optional[str]:
        attributes = []
        while isinstance(node, cst.Attribute):
            attributes.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name):
            return None
        if node.value in imported:
            head = imported[node.value]
        elif node.value in _BUILTIN_NAMES:
            head = f"builtins.{node.value}"
        else:
            return None
        return ".".join([head, *reversed(attributes)])

    kinds = annotated_returns(module, qname)
    return tuple(sorted((f"{module_name}.{name}", kind) for name, kind in kinds.items()))


def array_aliases(source: str, module_name: str) -> frozenset[str]:
    """Qualified names of the aliases of ``np.ndarray`` a template module declares (``Matrix = np.ndarray``)."""
    visitor = _Aliases()
    MetadataWrapper(cst.parse_module(source)).visit(visitor)
    return frozenset(f"{module_name}.{name}" for name in visitor.names)


class _Facts(cst.CSTVisitor):
    """Qualified names and statement kinds present in a module (lets the pipeline skip idle passes)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.facts: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Name, cst.Attribute)):
            self.facts.update(q.name for q in self.get_metadata(QualifiedNameProvider, node, set()))
        elif (
            isinstance(node, cst.Expr)
            and isinstance(node.value, cst.Call)
            and isinstance(node.value.func, cst.Attribute)
            and node.value.func.attr.value in ("sort", "setflags")
        ):
            self.facts.add("<method-statement>")
        elif isinstance(node, (cst.List, cst.ListComp)):
            self.facts.add("<list>")  # a list an index may read by
        elif isinstance(node, cst.Subscript):
            self.facts.add("<subscript>")  # a read index-safety may check
        elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(target, cst.Subscript):
                    self.facts.add("<subscript-write>")
                    if isinstance(target.value, cst.Subscript):
                        self.facts.add("<chained-write>")
                elif isinstance(target, cst.Attribute) and target.attr.value == "shape":
                    self.facts.add("<shape-write>")
                elif isinstance(target, cst.Name) and isinstance(node, cst.AugAssign):
                    self.facts.add("<augmented-name>")  # ``x += v``: may become ``x = x.at[...].add(v)``
        return True


def module_facts(wrapper: MetadataWrapper) -> set[str]:
    visitor = _Facts()
    wrapper.visit(visitor)
    return visitor.facts


def check(wrapper: MetadataWrapper, ctx: ModuleContext, rules: Iterable[type[Rule]] = RULES) -> None:
    """Run every rule for ``ctx.backend`` in check mode on the untouched module; problems go to ``ctx.diagnostics``."""
    for rule in rules:
        if rule.checks() and ctx.backend in rule.BACKENDS:
            rule(ctx).check(wrapper)


def transform(
    module: cst.Module,
    ctx: ModuleContext,
    rules: Iterable[type[Rule]] = RULES,
    facts: Optional[set[str]] = None,
) -> cst.Module:
    """Apply the rewrites for ``ctx.backend`` in order, then fix imports and drop the markers.

    A rule whose ``NEEDS`` (qualified names or statement kinds) are absent from the module cannot fire and
    is skipped; each pass resolves scope metadata again, which dominates the build time.
    """
    for rule in rules:
        if not rule.rewrites() or ctx.backend not in rule.BACKENDS:
            continue
        if facts is not None and rule.NEEDS and not any(_present(need, facts) for need in rule.NEEDS):
            continue
        module = rule(ctx).rewrite(module)
    if ctx.codemod.scratch.get(AddImportsVisitor.CONTEXT_KEY):
        module = AddImportsVisitor(ctx.codemod).transform_module(module)
    if ctx.codemod.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
        module = RemoveImportsVisitor(ctx.codemod).transform_module(module)
    return module.visit(_DropMarkers(ctx.package))


def _present(need: str, facts: set[str]) -> bool:
    if need.endswith("."):
        return any(fact.startswith(need) for fact in facts)
    return need in facts


class Parsed:
    """A template module parsed once, with metadata shared by the checks of every backend."""

    def __init__(self, source: str) -> None:
        self.module = cst.parse_module(source)
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.facts = module_facts(self.wrapper)


def translate(source: str | Parsed, ctx: ModuleContext, rules: Iterable[type[Rule]] = RULES) -> Optional[str]:
    """Translated source, or None when the checks found problems (then see ``ctx.diagnostics``)."""
    rules = tuple(rules)
    parsed = source if isinstance(source, Parsed) else Parsed(source)
    ctx.runs_on = module_runs_on(parsed.module)
    before = len(ctx.diagnostics)
    check(parsed.wrapper, ctx, rules)
    if len(ctx.diagnostics) > before:
        return None
    return transform(parsed.module, ctx, rules, parsed.facts).code
