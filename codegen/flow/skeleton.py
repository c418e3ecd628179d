"""Source-order facts of a function (positions, reads, bindings) and small syntactic helpers."""

from dataclasses import replace
from typing import Optional

import libcst as cst

from codegen.flow.values import State

# -- the source-order skeleton: positions, reads, bindings ----------------------------------------------------


class Skeleton(cst.CSTVisitor):
    """Pre-order numbering of every node, the names read at each position, closures' names."""

    def __init__(self, root: cst.FunctionDef) -> None:
        super().__init__()
        self.root = root
        self.span: dict[int, tuple[int, int]] = {}
        self.counter = 0
        self.binding: set[int] = set()
        self.reads: list[tuple[int, str]] = []
        self.closure: set[str] = set()
        self.assigned: set[str] = set()
        self.nested = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.counter += 1
        self.span[id(node)] = (self.counter, self.counter)
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not self.root:
            self.nested += 1
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind(target.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            self._bind(node.target)
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                self.binding.discard(id(node.target))  # also read
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._bind(node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._bind(node.asname.name)
        elif isinstance(node, cst.NamedExpr):
            self._bind(node.target)
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            self._bind(node.name.name)
        elif isinstance(node, cst.Name) and id(node) not in self.binding:
            if self.nested:
                self.closure.add(node.value)
            self.reads.append((self.counter, node.value))
        if isinstance(node, cst.Attribute):
            node.value.visit(self)
            return False
        if isinstance(node, cst.Arg):
            node.value.visit(self)
            return False
        if isinstance(node, (cst.Param, cst.ImportAlias)):
            if node is not None and isinstance(node, cst.Param) and node.default is not None:
                node.default.visit(self)
            return False
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not self.root:
            self.assigned.add(node.name.value)
            if isinstance(node, cst.FunctionDef):
                node.params.visit(self)
                node.body.visit(self)
            else:
                node.body.visit(self)
            return False
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        start, _ = self.span[id(original_node)]
        self.span[id(original_node)] = (start, self.counter)
        if isinstance(original_node, (cst.FunctionDef, cst.Lambda)) and original_node is not self.root:
            self.nested -= 1

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.binding.add(id(target))
            if not self.nested:
                self.assigned.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)


def _refine(test: cst.BaseExpression, state: State) -> State:
    """The state after ``if <test>: <always exits>``: ``n < c`` / ``n <= c`` / ``c > n`` give ``n >= ...``."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return state
    left, comparison = test.left, test.comparisons[0]
    right, operator = comparison.comparator, comparison.operator
    if isinstance(left, cst.Integer) and isinstance(right, cst.Name):
        left, right = right, left
        operator = {cst.GreaterThan: cst.LessThan(), cst.GreaterThanEqual: cst.LessThanEqual()}.get(
            type(operator), operator
        )
    if not (isinstance(left, cst.Name) and isinstance(right, cst.Integer) and left.value in state.names):
        return state
    bound = int(right.value, 0) + (1 if isinstance(operator, cst.LessThanEqual) else 0)
    if not isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
        return state
    value = state.names[left.value]
    if value.kinds == frozenset({"num"}) and value.dtype == "i":
        refined = state.copy()
        refined.names[left.value] = replace(value, low=max(bound, value.low or bound))
        return refined
    return state


def _narrow(test: cst.BaseExpression, state: State, holds: bool) -> State:
    """The state where ``test`` is ``holds``: ``x is not None`` true (or ``x is None`` false) leaves a name that
    may be None (:attr:`~codegen.flow.values.Val.none`: ``Optional[int]``, ``x = None``) what else it may be."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return state
    left, comparison = test.left, test.comparisons[0]
    right = comparison.comparator
    if not (isinstance(left, cst.Name) and isinstance(right, cst.Name) and right.value == "None"):
        return state
    if isinstance(comparison.operator, cst.IsNot):
        not_none = holds
    elif isinstance(comparison.operator, cst.Is):
        not_none = not holds
    else:
        return state
    value = state.names.get(left.value)
    if not not_none or value is None or not value.none or len(value.kinds) < 2:
        return state
    narrowed = state.copy()
    narrowed.names[left.value] = replace(value, kinds=value.kinds - {"other"}, none=False)
    return narrowed


def _interval(expr: cst.BaseExpression, state: State) -> Optional[tuple[int, int]]:
    """The values an integer expression of literals and ``range(<literal>)`` loop variables may take."""
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0), int(expr.value, 0)
    if isinstance(expr, cst.Name):
        value = state.names.get(expr.value)
        if value is not None and value.const is not None:
            return value.const, value.const
        if value is not None and value.stop is not None and value.stop.isdigit() and int(value.stop) > 0:
            return 0, int(value.stop) - 1
        return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _interval(expr.expression, state)
        return (-inner[1], -inner[0]) if inner is not None else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Add, cst.Subtract, cst.Multiply)
    ):
        left, right = _interval(expr.left, state), _interval(expr.right, state)
        if left is None or right is None:
            return None
        if isinstance(expr.operator, cst.Add):
            return left[0] + right[0], left[1] + right[1]
        if isinstance(expr.operator, cst.Subtract):
            return left[0] - right[1], left[1] - right[0]
        products = [a * b for a in left for b in right]
        return min(products), max(products)
    return None


def _pairwise(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """``a, b = e1, e2``: same length, no starred element on either side."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
        return False
    if len(target.elements) != len(value.elements):
        return False
    return not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))


def _names_in(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_in(e.value)]
    return []


def _del_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for e in target.elements for t in _del_targets(e.value)]
    return [target]


def _calls(stmt: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    stmt.visit(_Collect())
    return found


def _argument(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None
