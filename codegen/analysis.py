"""Shared analysis for rules: marker context (host / kernel / backend blocks) and the array facts.

What a name, an attribute or a subscript holds (an array or not, whose memory, writable in place or not) is
decided by one analysis, :mod:`codegen.flow`, run per function and once for a module's top-level code;
rules ask it through :meth:`MarkerContext.flow` / :meth:`MarkerContext.current_flow`.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider

from codegen.diagnostics import Diagnostic

MARKERS = "oqupy._codegen"
BACKEND_MARKER = f"{MARKERS}.BACKEND"
KERNEL_MARKER = f"{MARKERS}.kernel"
HOST_MARKER = f"{MARKERS}.host"
ARRAY_TYPE = "numpy.ndarray"


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
    #: qualified name -> element kind of the package's dtype constants (``oqupy.config.NpDtype`` -> "c")
    dtypes: tuple[tuple[str, str], ...] = ()
    #: qualified name -> what the package's undecorated module functions are annotated to return: "array"
    #: (``-> np.ndarray``) or an element kind (``-> complex``: "c"); gathered by ``pipeline.function_returns``
    returns: tuple[tuple[str, str], ...] = ()
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: reads left as written that a diagnostic does not refuse: ``u[i]`` of a value of unknown kind in code that
    #: reaches ``oqupy_jax`` (a ``jax.Array`` there would clamp ``i`` out of bounds; a list raises)
    notes: list[Diagnostic] = field(default_factory=list)
    fired: dict[str, int] = field(default_factory=dict)
    codemod: CodemodContext = field(default_factory=CodemodContext)
    #: check mode: (id of a function node, backend) -> its flow analysis, shared by the refusal rules
    flows: dict = field(default_factory=dict)

    def fire(self, rule: str) -> None:
        self.fired[rule] = self.fired.get(rule, 0) + 1


def annotated_returns(
    module: cst.Module,
    qname: Callable[[cst.CSTNode], Optional[str]],
    array_types: frozenset[str] = frozenset({ARRAY_TYPE}),
) -> dict[str, str]:
    """What a module's top-level functions are annotated to return, by name (:func:`return_kind`): "array"
    (``-> np.ndarray``) or the element kind of a scalar (``-> complex``: "c") for undecorated functions; a
    container ("list", "dict", "other" for a tuple, "text" for a string, "tuple:array,list" for a tuple of
    known length) also for ``@host`` / ``@kernel`` ones (a kernel returns its containers as they are); others
    are left out."""
    found = {}
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef) or statement.returns is None:
            continue
        decorators = [
            d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            for d in statement.decorators
        ]
        if not all(qname(d) in (KERNEL_MARKER, HOST_MARKER) for d in decorators):
            continue
        kind = return_kind(statement.returns.annotation, qname, array_types)
        if kind is not None and statement.decorators:
            # a kernel's scalars are 0-d arrays in oqupy_jax (traced inside another kernel): not numbers
            if kind.startswith("tuple:"):
                items = kind[len("tuple:") :].split(",")
                kind = "tuple:" + ",".join("unknown" if item in _SCALAR_KINDS else item for item in items)
            elif kind.removeprefix("optional:") not in CONTAINER_RETURNS:
                kind = None
        if kind is not None:
            found[statement.name.value] = kind
    return found


#: what :func:`return_kind` says of a container (``tuple:...`` aside) and of a scalar
CONTAINER_RETURNS = ("list", "dict", "other", "text")
_SCALAR_KINDS = ("i", "f", "c", "b")


def return_kind(
    annotation: cst.BaseExpression,
    qname: Callable[[cst.CSTNode], Optional[str]],
    array_types: frozenset[str],
    nested: bool = False,
) -> Optional[str]:
    """What an annotation says a value is: "array", a scalar's element kind ("i", "f", "c", "b"), a container
    (:data:`CONTAINER_RETURNS`), ``tuple:k1,k2`` for ``Tuple[K1, K2]`` (each ``k`` one of these or
    "unknown"), ``optional:k`` for ``Optional[K]``; None for anything else (``Any``, ``Union``, a class)."""
    from codegen.flow.numpy_model import _CONTAINER_ANNOTATIONS, _SCALAR_ANNOTATIONS

    base = annotation.value if isinstance(annotation, cst.Subscript) else annotation
    qualified = qname(base) or ""
    if qualified == "typing.Optional" and isinstance(annotation, cst.Subscript) and not nested:
        inner = annotation.slice[0].slice
        kind = return_kind(inner.value, qname, array_types, True) if isinstance(inner, cst.Index) else None
        return None if kind is None else f"optional:{kind}"
    if qualified in array_types:
        return "array"
    if qualified in _SCALAR_ANNOTATIONS:
        return _SCALAR_ANNOTATIONS[qualified]
    if qualified == "builtins.str":
        return "text"
    if (
        qualified in ("typing.Tuple", "builtins.tuple")
        and isinstance(annotation, cst.Subscript)
        and not nested
    ):
        items = [element.slice for element in annotation.slice]
        if all(isinstance(item, cst.Index) for item in items) and not any(
            isinstance(item.value, cst.Ellipsis) for item in items
        ):
            kinds = [return_kind(item.value, qname, array_types, nested=True) or "unknown" for item in items]
            return "tuple:" + ",".join(kinds)
    if qualified in _CONTAINER_ANNOTATIONS:
        return _CONTAINER_ANNOTATIONS[qualified]
    return None


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


def kept_branch(node: cst.If, test: tuple[str, bool], backend: str) -> Optional[cst.BaseSuite | cst.If]:
    """The one place that decides ``if BACKEND == "x": ... else: ...``: the suite (or the ``elif``) that
    ``backend`` keeps, None when it keeps nothing.  ``test`` is :func:`backend_test` of ``node.test``."""
    name, equal = test
    kept = node.body if (name == backend) == equal else node.orelse
    return kept.body if isinstance(kept, cst.Else) else kept


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


class MarkerContext(QualifiedNames):
    """Where a walk is: inside ``@host`` / ``@kernel`` code, in which functions and classes, and the
    annotations visible in the current function; the array facts come from :meth:`flow`.

    The rule base calls ``enter_node`` before and ``leave_node`` after a rule's own hooks, in both modes, so
    rules read this context and never maintain it.
    """

    def _init_context(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.host_depth = 1 if ctx.runs_on == "host" else 0
        self.kernel_depth = 0
        #: enclosing functions and classes, innermost last (a def's own node included in its hooks)
        self.scopes: list[cst.FunctionDef | cst.ClassDef] = []
        #: per function: name -> annotation of the parameters and annotated locals visible there
        self.annotations: list[dict[str, cst.BaseExpression]] = [{}]

    def is_array_annotation(self, annotation: Optional[cst.Annotation]) -> bool:
        if annotation is None:
            return False
        expr = annotation.annotation
        if isinstance(expr, cst.Subscript) and self.qname(expr.value) == "typing.Optional":
            expr = expr.slice[0].slice.value
        return self.qname(expr) in self.ctx.array_types

    def flow(self, node: cst.FunctionDef | cst.Module, cache: bool = True):
        """The flow analysis of a function or of a module's top-level code (see :mod:`codegen.flow`), cached
        per module and backend in check mode."""
        from codegen.flow import FunctionFlow, class_attribute_kinds

        key = (id(node), self.ctx.backend)
        if cache and key in self.ctx.flows:
            return self.ctx.flows[key]
        enclosing: set[str] = set()
        attributes = None
        module_arrays: frozenset[str] = frozenset()
        if isinstance(node, cst.FunctionDef):
            module_arrays = self.flow(self.module_node, cache).arrays
            for scope in self.scopes:
                if isinstance(scope, cst.FunctionDef) and scope is not node:
                    enclosing |= self.flow(scope, cache).locals if cache else _bound_names(scope)
            owner = self.scopes[-2] if len(self.scopes) > 1 and self.scopes[-1] is node else None
            if isinstance(owner, cst.ClassDef) and not any(
                isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
                for d in node.decorators
            ):
                attributes = class_attribute_kinds(owner, self.qname, self.is_array_annotation)
        traced: frozenset[str] = frozenset()
        if isinstance(node, cst.FunctionDef) and self.has_marker(node, KERNEL_MARKER):
            traced = frozenset(p.name.value for p in _all_params(node)) - self._static(node)
        result = FunctionFlow(
            node,
            self.qname,
            self.is_array_annotation,
            lambda test: backend_test(test, self.qname),
            self.ctx.backend,
            frozenset(enclosing),
            self._donating(node),
            attributes,
            module_arrays,
            traced,
            self._module_dtypes(),
            self._module_returns(),
            self._call_sites().get(node.name.value, {}) if self._module_level(node) else {},
        ).run()
        if cache:
            self.ctx.flows[key] = result
        return result

    def current_flow(self):
        """The flow analysis of the innermost function around the walk (of the module at top level)."""
        for scope in reversed(self.scopes):
            if isinstance(scope, cst.FunctionDef):
                return self.flow(scope)
        return self.flow(self.module_node)

    def _static(self, node: cst.FunctionDef) -> frozenset[str]:
        """The static arguments a ``@kernel(static=(...))`` declares."""
        return frozenset(_kernel_names(self, node, "static"))

    def _module_dtypes(self) -> dict[str, str]:
        """Module constants that name a dtype (``NpDtype = np.complex128``): name -> element kind; with the
        package's (``ModuleContext.dtypes``) by qualified name."""
        if "__dtypes__" not in self.ctx.flows:
            from codegen.flow import dtype_of

            found = dict(self.ctx.dtypes)
            for statement in self.module_node.body:
                for small in (
                    getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ()
                ):
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target = small.targets[0].target
                        kind = dtype_of(small.value, self.qname)
                        if isinstance(target, cst.Name) and kind is not None:
                            found[target.value] = kind
            self.ctx.flows["__dtypes__"] = found
        return self.ctx.flows["__dtypes__"]

    def _module_level(self, node: cst.FunctionDef | cst.Module) -> bool:
        return isinstance(node, cst.FunctionDef) and any(s is node for s in self.module_node.body)

    def _call_sites(self) -> dict[str, dict[str, frozenset[str]]]:
        """What the module's calls pass its private functions (``flow.call_sites``), by function and parameter."""
        if "__passed__" not in self.ctx.flows:
            from codegen.flow.call_sites import call_site_kinds

            self.ctx.flows["__passed__"] = call_site_kinds(
                self.module_node, self.qname, self.is_array_annotation
            )
        return self.ctx.flows["__passed__"]

    def _module_returns(self) -> dict[str, str]:
        """What this module's undecorated functions are annotated to return, by name (``annotated_returns``),
        and the package's (``ModuleContext.returns``) by qualified name."""
        if "__returns__" not in self.ctx.flows:
            found = dict(self.ctx.returns)
            found.update(annotated_returns(self.module_node, self.qname, self.ctx.array_types))
            self.ctx.flows["__returns__"] = found
        return self.ctx.flows["__returns__"]

    def _donating(self, node: cst.FunctionDef | cst.Module) -> dict:
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

    def enter_node(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Module):
            self.module_node = node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.scopes.append(node)
            self.host_depth += self.has_marker(node, HOST_MARKER)
        if isinstance(node, cst.FunctionDef):
            self.kernel_depth += self.has_marker(node, KERNEL_MARKER)
            visible = dict(self.annotations[-1])
            for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
                if param.annotation is not None:
                    visible[param.name.value] = param.annotation.annotation
            self.annotations.append(visible)
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            self.annotations[-1][node.target.value] = node.annotation.annotation

    def leave_node(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.scopes.pop()
            self.host_depth -= self.has_marker(node, HOST_MARKER)
        if isinstance(node, cst.FunctionDef):
            self.kernel_depth -= self.has_marker(node, KERNEL_MARKER)
            self.annotations.pop()


def _all_params(node: cst.FunctionDef) -> list[cst.Param]:
    params = node.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _kernel_names(names: QualifiedNames, node: cst.FunctionDef, keyword: str) -> list[str]:
    """The parameter names listed in ``@kernel(<keyword>=("a", ...))``."""
    found: list[str] = []
    for decorator in node.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call) or names.decorator_marker(decorator) != KERNEL_MARKER:
            continue
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                found += [
                    e.value.evaluated_value
                    for e in getattr(arg.value, "elements", [])
                    if isinstance(e.value, cst.SimpleString)
                ]
    return found


def _bound_names(node: cst.FunctionDef) -> set[str]:
    from codegen.flow import Skeleton

    skeleton = Skeleton(node)
    node.visit(skeleton)
    params = node.params
    return skeleton.assigned | {
        p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
    }
