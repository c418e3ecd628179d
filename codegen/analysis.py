"""Shared analysis for rules: marker context (host / kernel / backend blocks) and array-ness of names.

Array-ness is known, never guessed: a name is an array when it is a parameter annotated ``np.ndarray``
(or an alias from ``oqupy._types``), or when it was last bound to an array-creating expression.
Names bound to a view of an array (a subscript, ``.T``, ``.reshape``, ``np.asarray``, a plain alias)
are tracked separately so that writes through them can be refused.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from codegen import names
from codegen.diagnostics import Diagnostic

MARKERS = "oqupy._codegen"
BACKEND_MARKER = f"{MARKERS}.BACKEND"
KERNEL_MARKER = f"{MARKERS}.kernel"
HOST_MARKER = f"{MARKERS}.host"
ARRAY_ANNOTATIONS = frozenset({"numpy.ndarray", "oqupy._types.Matrix", "oqupy._types.Vector"})

FRESH = "fresh"  # a local array owned by this scope
PARAM = "param"  # an array argument: the caller owns it
VIEW = "view"  # may share memory with another array


@dataclass
class ModuleContext:
    """What every rule knows about the module being translated."""

    path: str  # e.g. "src_template/oqupy/util.py"
    module_name: str  # e.g. "oqupy.util"
    backend: str  # "numpy" or "jax"
    package: str  # "oqupy_numpy" or "oqupy_jax"
    runs_on: str = "device"  # the module's ``__runs_on__``: "host" modules keep NumPy/SciPy in both packages
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fired: dict[str, int] = field(default_factory=dict)
    codemod: CodemodContext = field(default_factory=CodemodContext)

    def fire(self, rule: str) -> None:
        self.fired[rule] = self.fired.get(rule, 0) + 1


def backend_test(
    node: cst.BaseExpression, qname: Callable[[cst.CSTNode], Optional[str]]
) -> Optional[tuple[str, bool]]:
    """For ``BACKEND == "x"`` / ``BACKEND != "x"`` return (x, is_equality); otherwise None."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    if qname(node.left) != BACKEND_MARKER or not isinstance(target.comparator, cst.SimpleString):
        return None
    if isinstance(target.operator, cst.Equal):
        return target.comparator.evaluated_value, True
    if isinstance(target.operator, cst.NotEqual):
        return target.comparator.evaluated_value, False
    return None


class QualifiedNames:
    """Mixin: single qualified name of an expression, via libcst metadata."""

    def qname(self, node: cst.CSTNode) -> Optional[str]:
        probe = node
        while isinstance(probe, cst.Attribute):
            probe = probe.value
        if not isinstance(probe, cst.Name):
            return None  # `f(x).reshape` and the like have no qualified name
        try:
            found = self.get_metadata(QualifiedNameProvider, node, set())
        except KeyError:
            return None
        if len(found) != 1:
            return None
        return next(iter(found)).name

    def decorator_marker(self, decorator: cst.Decorator) -> Optional[str]:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        name = self.qname(expr)
        return name if name in (KERNEL_MARKER, HOST_MARKER) else None

    def has_marker(self, node: cst.FunctionDef | cst.ClassDef, marker: str) -> bool:
        return any(self.decorator_marker(d) == marker for d in node.decorators)

    def is_array_annotation(self, annotation: Optional[cst.Annotation]) -> bool:
        if annotation is None:
            return False
        expr = annotation.annotation
        if isinstance(expr, cst.Subscript) and self.qname(expr.value) == "typing.Optional":
            expr = expr.slice[0].slice.value
        return self.qname(expr) in ARRAY_ANNOTATIONS


class ArrayScopes:
    """Per-function record of which local names are arrays, updated in source order."""

    def __init__(self, owner: QualifiedNames) -> None:
        self.owner = owner
        self.stack: list[dict[str, str]] = [{}]

    def enter_function(self, node: cst.FunctionDef) -> None:
        scope: dict[str, str] = {}
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if self.owner.is_array_annotation(param.annotation):
                scope[param.name.value] = PARAM
        self.stack.append(scope)

    def exit_function(self) -> None:
        self.stack.pop()

    def status(self, name: str) -> Optional[str]:
        return self.stack[-1].get(name)

    def base_status(self, expr: cst.BaseExpression) -> Optional[str]:
        """Status of the name at the root of ``a``, ``a[i]``, ``a[i][j]``, ``a.real``."""
        while isinstance(expr, (cst.Subscript, cst.Attribute)):
            expr = expr.value
        return self.status(expr.value) if isinstance(expr, cst.Name) else None

    def classify(self, value: cst.BaseExpression) -> Optional[str]:
        """Array status of a name bound to ``value`` (None: not known to be an array)."""
        qname = self.owner.qname
        if isinstance(value, cst.Name):
            return VIEW if self.status(value.value) else None
        if isinstance(value, cst.Subscript):
            return VIEW if self.base_status(value) else None
        if isinstance(value, cst.Attribute):
            if value.attr.value in names.VIEW_ATTRIBUTES and self.base_status(value.value):
                return VIEW
            return None
        if isinstance(value, cst.Call):
            func = value.func
            qualified = qname(func)
            if qualified in names.VIEW_CALLS:
                return VIEW if value.args and self.classify(value.args[0].value) else FRESH
            if qualified in names.ARRAY_CREATORS or (qualified or "").startswith("numpy."):
                return FRESH
            if isinstance(func, cst.Attribute) and self.base_status(func.value):
                if func.attr.value == "copy":
                    return FRESH
                if func.attr.value in names.VIEW_METHODS:
                    return VIEW
                return FRESH if func.attr.value in ("conj", "astype", "dot", "sum", "__matmul__") else None
            return None
        if isinstance(value, cst.BinaryOperation):
            return FRESH if self.classify(value.left) or self.classify(value.right) else None
        if isinstance(value, cst.UnaryOperation):
            return FRESH if self.classify(value.expression) else None
        return None

    def bind(
        self, target: cst.BaseExpression, value: Optional[cst.BaseExpression], annotated: bool = False
    ) -> None:
        scope = self.stack[-1]
        if isinstance(target, cst.Name):
            status = self.classify(value) if value is not None else None
            if annotated and status is None:
                status = FRESH
            if status is None:
                scope.pop(target.value, None)
            else:
                scope[target.value] = status
        elif isinstance(target, (cst.Tuple, cst.List)):
            fresh = value is not None and (self.owner.qname(getattr(value, "func", value)) or "").startswith(
                "numpy."
            )
            for element in target.elements:
                if isinstance(element.value, cst.Name):
                    if fresh:
                        scope[element.value.value] = FRESH
                    else:
                        scope.pop(element.value.value, None)


class _MarkerContext(QualifiedNames):
    """Where the walk is: inside ``@host`` / ``@kernel`` code, and which local names are arrays.

    Shared by the checking and the rewriting bases; they only differ in their hook signatures.
    """

    def _init_context(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.host_depth = 1 if ctx.runs_on == "host" else 0
        self.kernel_depth = 0
        self.function_depth = 0
        self.arrays = ArrayScopes(self)

    @property
    def in_host(self) -> bool:
        return self.host_depth > 0

    @property
    def in_kernel(self) -> bool:
        return self.kernel_depth > 0

    def _enter(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        self.host_depth += self.has_marker(node, HOST_MARKER)
        if isinstance(node, cst.FunctionDef):
            self.kernel_depth += self.has_marker(node, KERNEL_MARKER)
            self.function_depth += 1
            self.arrays.enter_function(node)

    def _leave(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        self.host_depth -= self.has_marker(node, HOST_MARKER)
        if isinstance(node, cst.FunctionDef):
            self.kernel_depth -= self.has_marker(node, KERNEL_MARKER)
            self.function_depth -= 1
            self.arrays.exit_function()

    def _bind(self, node: cst.Assign | cst.AnnAssign | cst.For) -> None:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self.arrays.bind(target.target, node.value)
        elif isinstance(node, cst.AnnAssign):
            self.arrays.bind(node.target, node.value, self.is_array_annotation(node.annotation))
        else:
            self.arrays.bind(node.target, None)


class TemplateVisitor(_MarkerContext, cst.CSTVisitor):
    """Base of the checking half of rules: runs on the untouched template, so positions are exact.

    It follows the markers: code in the other backend's block is skipped, and ``in_host`` /
    ``in_kernel`` tell whether the current node lies inside ``@host`` or ``@kernel`` code.
    """

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)
    RULE = ""

    def __init__(self, ctx: ModuleContext) -> None:
        super().__init__()
        self._init_context(ctx)

    def report(self, node: cst.CSTNode, message: str, idiom: str = "") -> None:
        start = self.get_metadata(PositionProvider, node).start
        self.ctx.diagnostics.append(
            Diagnostic(self.ctx.path, start.line, start.column + 1, self.RULE, message, idiom)
        )

    # -- backend blocks: visit only what this backend keeps ---------------------------------------
    def visit_If(self, node: cst.If) -> Optional[bool]:
        test = backend_test(node.test, self.qname)
        if test is None:
            return None
        name, equal = test
        keep_body = (name == self.ctx.backend) == equal
        kept = node.body if keep_body else node.orelse
        if isinstance(kept, cst.Else):
            kept = kept.body
        if kept is not None and not isinstance(kept, cst.If):
            kept.visit(self)
        return False

    # -- context ------------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        self._enter(node)
        return None

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave(original_node)

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        self._enter(node)
        return None

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._leave(original_node)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._bind(original_node)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._bind(original_node)

    def visit_For(self, node: cst.For) -> Optional[bool]:
        self._bind(node)
        return None


class TemplateTransformer(_MarkerContext, cst.CSTTransformer):
    """Base of the rewriting half of rules (runs after backend blocks are cut)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider)
    RULE = ""

    def __init__(self, ctx: ModuleContext) -> None:
        super().__init__()
        self._init_context(ctx)

    def fire(self) -> None:
        self.ctx.fire(self.RULE)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        self._enter(node)
        return None

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self._leave(original_node)
        return updated_node

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        self._enter(node)
        return None

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef):
        self._leave(original_node)
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        self._bind(original_node)
        return updated_node

    def leave_AnnAssign(self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign):
        self._bind(original_node)
        return updated_node

    def visit_For(self, node: cst.For) -> Optional[bool]:
        self._bind(node)
        return None


def is_simple_index(element: cst.SubscriptElement) -> bool:
    """True for index elements that can be evaluated twice safely (names, constants, slices of them)."""
    value = element.slice
    if isinstance(value, cst.Index):
        return is_pure(value.value)
    if isinstance(value, cst.Slice):
        return all(part is None or is_pure(part) for part in (value.lower, value.upper, value.step))
    return False


def is_pure(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.Ellipsis)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return is_pure(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return is_pure(expr.left) and is_pure(expr.right)
    if isinstance(expr, cst.Attribute):
        return is_pure(expr.value)
    return False
