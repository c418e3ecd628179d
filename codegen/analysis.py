"""Shared analysis for rules: marker context (host / kernel / backend blocks) and array-ness of names.

Array-ness is known, never guessed: a name is an array when it is a parameter annotated ``np.ndarray``
(or an alias of it that the template declares, see ``ModuleContext.array_types``), or when it was last bound
to an array-creating expression.
Names bound to a view of an array (a subscript, ``.T``, ``.reshape``, ``np.asarray``, a plain alias)
are tracked separately so that writes through them can be refused.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider

from codegen import names
from codegen.diagnostics import Diagnostic

MARKERS = "oqupy._codegen"
BACKEND_MARKER = f"{MARKERS}.BACKEND"
KERNEL_MARKER = f"{MARKERS}.kernel"
HOST_MARKER = f"{MARKERS}.host"
ARRAY_TYPE = "numpy.ndarray"

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
    #: qualified names of array annotations: ``numpy.ndarray`` and the template's aliases of it
    array_types: frozenset[str] = frozenset({ARRAY_TYPE})
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fired: dict[str, int] = field(default_factory=dict)
    codemod: CodemodContext = field(default_factory=CodemodContext)
    #: check mode: (id of a function node, backend) -> its flow analysis, shared by the refusal rules
    flows: dict = field(default_factory=dict)

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


class ArrayScopes:
    """Per-function record of which local names are arrays, updated in source order."""

    def __init__(self, owner: "MarkerContext") -> None:
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


class MarkerContext(QualifiedNames):
    """Where a walk is: inside ``@host`` / ``@kernel`` code, in which functions and classes, which local
    names are arrays, and the annotations visible in the current function.

    The rule base calls ``enter_node`` before and ``leave_node`` after a rule's own hooks, in both modes, so
    rules read this context and never maintain it.
    """

    def _init_context(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.host_depth = 1 if ctx.runs_on == "host" else 0
        self.kernel_depth = 0
        #: enclosing functions and classes, innermost last (a def's own node included in its hooks)
        self.scopes: list[cst.FunctionDef | cst.ClassDef] = []
        self.arrays = ArrayScopes(self)
        #: per function: name -> annotation of the parameters and annotated locals visible there
        self.annotations: list[dict[str, cst.BaseExpression]] = [{}]

    def is_array_annotation(self, annotation: Optional[cst.Annotation]) -> bool:
        if annotation is None:
            return False
        expr = annotation.annotation
        if isinstance(expr, cst.Subscript) and self.qname(expr.value) == "typing.Optional":
            expr = expr.slice[0].slice.value
        return self.qname(expr) in self.ctx.array_types

    def flow(self, node: cst.FunctionDef, cache: bool = True):
        """The flow analysis of ``node`` (see :mod:`codegen.flow`), cached per module and backend in check mode."""
        from codegen.flow import FunctionFlow

        key = (id(node), self.ctx.backend)
        if cache and key in self.ctx.flows:
            return self.ctx.flows[key]
        enclosing: set[str] = set()
        for scope in self.scopes:
            if isinstance(scope, cst.FunctionDef) and scope is not node:
                enclosing |= self.flow(scope, cache).locals if cache else _bound_names(scope)
        result = FunctionFlow(
            node,
            self.qname,
            self.is_array_annotation,
            lambda test: backend_test(test, self.qname),
            self.ctx.backend,
            frozenset(enclosing),
            self._donating(node),
        ).run()
        if cache:
            self.ctx.flows[key] = result
        return result

    def _donating(self, node: cst.FunctionDef) -> dict:
        """This module's kernels with donated parameters: name -> ((position, parameter), ...)."""
        if "__donating__" not in self.ctx.flows:
            module = node
            try:
                while not isinstance(module, cst.Module):
                    module = self.get_metadata(ParentNodeProvider, module)
            except KeyError:
                return {}
            found = {}
            for statement in module.body:
                if isinstance(statement, cst.FunctionDef) and self.has_marker(statement, KERNEL_MARKER):
                    params = [
                        p.name.value for p in (*statement.params.posonly_params, *statement.params.params)
                    ]
                    params += [p.name.value for p in statement.params.kwonly_params]
                    for decorator in statement.decorators:
                        call = decorator.decorator
                        for arg in call.args if isinstance(call, cst.Call) else ():
                            if arg.keyword is not None and arg.keyword.value == "donate":
                                donated = [
                                    e.value.evaluated_value
                                    for e in getattr(arg.value, "elements", [])
                                    if isinstance(e.value, cst.SimpleString)
                                ]
                                found[statement.name.value] = tuple(
                                    (params.index(n), n) for n in donated if n in params
                                )
            self.ctx.flows["__donating__"] = found
        return self.ctx.flows["__donating__"]

    @property
    def in_host(self) -> bool:
        return self.host_depth > 0

    @property
    def in_kernel(self) -> bool:
        return self.kernel_depth > 0

    @property
    def function_depth(self) -> int:
        return sum(isinstance(scope, cst.FunctionDef) for scope in self.scopes)

    def enter_node(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.scopes.append(node)
            self.host_depth += self.has_marker(node, HOST_MARKER)
        if isinstance(node, cst.FunctionDef):
            self.kernel_depth += self.has_marker(node, KERNEL_MARKER)
            self.arrays.enter_function(node)
            visible = dict(self.annotations[-1])
            for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
                if param.annotation is not None:
                    visible[param.name.value] = param.annotation.annotation
            self.annotations.append(visible)
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            self.annotations[-1][node.target.value] = node.annotation.annotation
        elif isinstance(node, cst.For):
            self.arrays.bind(node.target, None)

    def leave_node(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.scopes.pop()
            self.host_depth -= self.has_marker(node, HOST_MARKER)
        if isinstance(node, cst.FunctionDef):
            self.kernel_depth -= self.has_marker(node, KERNEL_MARKER)
            self.arrays.exit_function()
            self.annotations.pop()
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                self.arrays.bind(target.target, node.value)
        elif isinstance(node, cst.AnnAssign):
            self.arrays.bind(node.target, node.value, self.is_array_annotation(node.annotation))


def _bound_names(node: cst.FunctionDef) -> set[str]:
    from codegen.flow import _Skeleton

    skeleton = _Skeleton(node)
    node.visit(skeleton)
    params = node.params
    return skeleton.assigned | {
        p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
    }


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
