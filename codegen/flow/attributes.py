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
    not to be an array.  An attribute never assigned here is ``unknown`` (it may be an array)."""
    annotated: dict[str, frozenset[str]] = {}
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
        expr: Optional[cst.BaseExpression], owner: str = "", scalars: frozenset[str] = frozenset()
    ) -> str:
        while isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        if isinstance(expr, cst.Name) and expr.value in scalars:
            return "num"  # a parameter annotated as a number
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == owner:
            return f"ref:{expr.attr.value}"  # another attribute of the object: resolved below
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
                        assigned.setdefault(name, set()).add(kinds_of_value(small.value, owner, scalars))
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
    kinds = {
        name: frozenset("unknown" if k.startswith("ref:") else k for k in found)
        for name, found in assigned.items()
    }
    kinds.update(annotated)
    return kinds
