"""What the attributes of ``self`` may hold, from the class's own code."""

from typing import Callable, Optional

import libcst as cst

from codegen.flow.numpy_model import _CONTAINER_ANNOTATIONS, _SCALAR_ANNOTATIONS


def class_attribute_kinds(
    node: cst.ClassDef,
    qname: Callable[[cst.CSTNode], Optional[str]],
    is_array: Callable[[Optional[cst.Annotation]], bool],
) -> dict[str, frozenset[str]]:
    """What each attribute of ``self`` may hold, from the class's own code: an annotation where it is set
    (``self.cache: dict = {}``, or ``cache: dict`` in the class body) decides; otherwise every value assigned to
    ``self.attr`` in the class's methods must be a literal (a number, a list or a dict) for it to be known
    not to be an array; a local name that the method binds only to list (or dict) displays counts as one
    (``caps = []; ...; self.caps = caps``).  A property annotated with a scalar or container type that returns
    the attribute (``def step(self) -> int: return self._step``) declares it, as an annotation would.  An
    attribute never assigned here is ``unknown`` (it may be an array)."""
    annotated: dict[str, frozenset[str]] = {}
    declared: dict[str, frozenset[str]] = {}  # by properties that return the attribute
    assigned: dict[str, set[str]] = {}

    def kinds_of_annotation(annotation: cst.Annotation) -> frozenset[str]:
        if is_array(annotation):
            return frozenset({"array"})
        expr = annotation.annotation
        optional = isinstance(expr, cst.Subscript) and qname(expr.value) == "typing.Optional"
        if optional:  # ``Optional[int]``: a number or None
            inner = expr.slice[0].slice
            expr = inner.value if isinstance(inner, cst.Index) else expr
        qualified = qname(expr.value if isinstance(expr, cst.Subscript) else expr) or ""
        if qualified in _SCALAR_ANNOTATIONS:
            return frozenset({"num", "other"} if optional else {"num"})
        if qualified in _CONTAINER_ANNOTATIONS:
            return frozenset({_CONTAINER_ANNOTATIONS[qualified]})
        return frozenset({"unknown"})

    def kinds_of_value(
        expr: Optional[cst.BaseExpression],
        owner: str = "",
        scalars: frozenset[str] = frozenset(),
        containers: Optional[dict[str, str]] = None,
    ) -> str:
        while isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        if isinstance(expr, cst.Name) and expr.value in scalars:
            return "num"  # a parameter annotated as a number
        if isinstance(expr, cst.Name) and containers and expr.value in containers:
            return containers[expr.value]  # a local name bound only to list (dict) displays
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == owner:
            return f"ref:{expr.attr.value}"  # another attribute of the object: resolved below
        if isinstance(expr, cst.Call) and qname(expr.func) in HDF5_OPENERS:
            return "hdf5"
        held = _hdf5_child(expr, owner)
        if held is not None:
            return f"hdf5ref:{held}"  # ``self._f.create_dataset(...)``, ``self._f["x"]``: resolved below
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return "num"
        if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return "num"
        if isinstance(expr, (cst.List, cst.ListComp)):
            return "list"
        if isinstance(expr, (cst.Dict, cst.DictComp)):
            return "dict"
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or (
            isinstance(expr, cst.Name) and expr.value == "None"
        ):
            return "other"
        return "unknown"

    for statement in node.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    annotated.setdefault(small.target.value, kinds_of_annotation(small.annotation))
        if not isinstance(statement, cst.FunctionDef):
            continue
        params = [*statement.params.posonly_params, *statement.params.params]
        if not params or any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in statement.decorators
        ):
            continue
        owner = params[0].name.value
        returned = _returned_attribute(statement, owner, qname)
        if returned is not None and statement.returns is not None:
            kinds = kinds_of_annotation(statement.returns)
            if kinds <= {"num", "other", "list", "dict"}:
                declared.setdefault(returned, kinds)
        containers = _container_locals(statement)
        scalars = frozenset(
            p.name.value
            for p in (*params, *statement.params.kwonly_params)
            if p.annotation is not None and kinds_of_annotation(p.annotation) <= {"num", "other"}
        )

        class _Targets(cst.CSTVisitor):
            def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
                return inner is statement  # nested functions' ``self`` is another story: unknown

            def _attr(self, target: cst.BaseExpression) -> Optional[str]:
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name)
                    and target.value.value == owner
                ):
                    return target.attr.value
                return None

            def _unpacked(self, target: cst.BaseExpression) -> None:
                if isinstance(target, (cst.Tuple, cst.List)):
                    for element in target.elements:
                        self._unpacked(element.value)
                elif self._attr(target) is not None:
                    assigned.setdefault(self._attr(target), set()).add("unknown")

            def visit_Assign(self, small: cst.Assign) -> None:
                for target in small.targets:
                    name = self._attr(target.target)
                    if name is not None:
                        assigned.setdefault(name, set()).add(
                            kinds_of_value(small.value, owner, scalars, containers)
                        )
                    else:
                        self._unpacked(target.target)

            def visit_AnnAssign(self, small: cst.AnnAssign) -> None:
                name = self._attr(small.target)
                if name is not None:
                    annotated.setdefault(name, kinds_of_annotation(small.annotation))

            def visit_AugAssign(self, small: cst.AugAssign) -> None:
                name = self._attr(small.target)
                if name is not None:  # ``self.n += 1`` keeps a number a number
                    assigned.setdefault(name, set()).add(
                        "num" if kinds_of_value(small.value) == "num" else "unknown"
                    )

            def visit_For(self, small: cst.For) -> None:
                self._unpacked(small.target)

            def visit_WithItem(self, small: cst.WithItem) -> None:
                if small.asname is not None:
                    self._unpacked(small.asname.name)

        statement.visit(_Targets())
    for _ in range(len(assigned) + 1):  # ``self.a = self.b``: a holds what b may hold
        for name, found in assigned.items():
            for ref in [k for k in found if k.startswith("ref:")]:
                other = ref[len("ref:") :]
                target = annotated.get(other, assigned.get(other))
                if target is not None and not any(k.startswith("ref:") for k in target):
                    found.discard(ref)
                    found.update(target)
    for name, found in assigned.items():  # a dataset or group of an attribute that only holds HDF5 files
        for ref in [k for k in found if k.startswith("hdf5ref:")]:
            parent = assigned.get(ref[len("hdf5ref:") :], set())
            found.discard(ref)
            found.add("hdf5" if "hdf5" in parent and parent <= {"hdf5", "other"} else "unknown")
    for found in assigned.values():
        if "hdf5" in found:  # an h5py object: written and resized through its own methods, never an array
            found.discard("hdf5")
            found.add("other")
    kinds = {
        name: frozenset("unknown" if k.startswith("ref:") else k for k in found)
        for name, found in assigned.items()
    }
    kinds.update(declared)
    kinds.update(annotated)
    return kinds


#: calls that open an HDF5 file (an h5py ``File``: a mapping of datasets and groups)
HDF5_OPENERS = frozenset({"h5py.File"})
#: methods of an h5py file or group that return one of its datasets or groups
HDF5_CHILDREN = frozenset({"create_dataset", "require_dataset", "create_group", "require_group", "get"})


def _hdf5_child(expr: Optional[cst.BaseExpression], owner: str) -> Optional[str]:
    """``attr`` for ``<owner>.attr.create_dataset(...)`` (a method of ``HDF5_CHILDREN``) or ``<owner>.attr[k]``
    with a string key: a dataset or group if ``attr`` holds an HDF5 file."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value not in HDF5_CHILDREN:
            return None
        expr = expr.func.value
    elif isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        key = expr.slice[0].slice
        if not (
            isinstance(key, cst.Index) and isinstance(key.value, (cst.SimpleString, cst.FormattedString))
        ):
            return None
        expr = expr.value
    else:
        return None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == owner:
        return expr.attr.value
    return None


def _returned_attribute(
    method: cst.FunctionDef, owner: str, qname: Callable[[cst.CSTNode], Optional[str]]
) -> Optional[str]:
    """``attr`` for a ``@property`` whose body (after a docstring) is ``return <owner>.attr``; None otherwise."""
    if not any(qname(d.decorator) == "builtins.property" for d in method.decorators):
        return None
    body = list(method.body.body) if isinstance(method.body, cst.IndentedBlock) else []
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr):
        if isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    small = body[0].body[0]
    if not isinstance(small, cst.Return):
        return None
    value = small.value
    if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == owner:
        return value.attr.value
    return None


def _container_locals(method: cst.FunctionDef) -> dict[str, str]:
    """The names that ``method`` (its nested scopes included) binds only to list or only to dict displays: such a
    name holds a list (dict) wherever it is bound.  Any other binding (a parameter, another value, a loop or
    ``with`` target, an unpacking, an import, ``global``/``nonlocal``, ``del``) disqualifies it."""
    found: dict[str, set[str]] = {}

    def add(name: str, kind: str) -> None:
        found.setdefault(name, set()).add(kind)

    def display(expr: Optional[cst.BaseExpression]) -> str:
        if isinstance(expr, (cst.List, cst.ListComp)):
            return "list"
        if isinstance(expr, (cst.Dict, cst.DictComp)):
            return "dict"
        return "unknown"

    class _Bindings(cst.CSTVisitor):
        def visit_Param(self, node: cst.Param) -> None:
            add(node.name.value, "unknown")

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                self._target(target.target, display(node.value))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._target(node.target, display(node.value))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target, display(node.value))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self._target(node.target, display(node.value))

        def visit_For(self, node: cst.For) -> None:
            self._target(node.target, "unknown")

        def visit_CompFor(self, node: cst.CompFor) -> None:
            self._target(node.target, "unknown")

        def visit_AsName(self, node: cst.AsName) -> None:  # ``with ... as x``, ``except E as x``, imports
            self._target(node.name, "unknown")

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            name = node.evaluated_alias or node.evaluated_name
            add(name.split(".", 1)[0], "unknown")

        def visit_Global(self, node: cst.Global) -> None:
            for item in node.names:
                add(item.name.value, "unknown")

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            for item in node.names:
                add(item.name.value, "unknown")

        def visit_Del(self, node: cst.Del) -> None:
            self._target(node.target, "unknown")

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            add(node.name.value, "unknown")

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            add(node.name.value, "unknown")

        def _target(self, target: cst.BaseExpression, kind: str) -> None:
            if isinstance(target, cst.Name):
                add(target.value, kind)
            elif isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    self._target(element.value, "unknown")
            elif isinstance(target, cst.StarredElement):
                self._target(target.value, "unknown")

    method.visit(_Bindings())
    return {
        name: next(iter(kinds)) for name, kinds in found.items() if len(kinds) == 1 and kinds != {"unknown"}
    }
