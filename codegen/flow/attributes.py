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
        qualified = qname(expr.value if isinstance(expr, cst.Subscript) else expr) or ""
        if qualified in _SCALAR_ANNOTATIONS:
            return frozenset({"num"})
        if qualified in _CONTAINER_ANNOTATIONS:
            return frozenset({_CONTAINER_ANNOTATIONS[qualified]})
        return frozenset({"unknown"})

    def kinds_of_value(expr: Optional[cst.BaseExpression]) -> str:
        while isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
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
                        assigned.setdefault(name, set()).add(kinds_of_value(small.value))
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
    kinds = {name: frozenset(found) for name, found in assigned.items()}
    kinds.update(annotated)
    return kinds
