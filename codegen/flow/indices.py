"""Index and dtype facts of a write: in bounds, free of duplicates, of a fitting element kind."""

from typing import Optional

import libcst as cst

from codegen.flow.numpy_model import _augmented_problem, _code, _set_problem
from codegen.flow.skeleton import _interval
from codegen.flow.values import State, Val, num, value_kinds


class Indices:
    """Mixin of :class:`~codegen.flow.interpreter.FunctionFlow`: indices and dtypes of writes."""

    # -- index, dtype ----------------------------------------------------------------------------------
    def _index_val(self, element: cst.SubscriptElement, state: State) -> Optional[Val]:
        if isinstance(element.slice, cst.Index):
            return self.ev(element.slice.value, state)
        for part in (element.slice.lower, element.slice.upper, element.slice.step):
            if part is not None:
                self.ev(part, state)
        return None

    def _index_items(self, target: cst.Subscript, index_vals: list[Optional[Val]]) -> list[list[tuple]]:
        """The index of a write as one or more alternatives, each a list of items: ``("slice",)``,
        ``("ellipsis",)``, ``("none",)`` or ``("expr", node, value, position)`` (``position``: the subscript
        element, None when the item comes from a tuple).  ``a[(0, -2)]``, ``a[r]`` with ``r = (0, slice(1, 3))``
        and ``a[regions["a"]]`` with a dict of such tuples are read as the tuples they hold."""
        elements = list(target.slice)
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            expr, val = elements[0].slice.value, index_vals[0]
            vals = self.element_vals.get(id(expr))
            if isinstance(expr, cst.Tuple) and vals is not None:
                return [[self._item(e.value, v, None) for e, v in zip(expr.elements, vals)]]
            if val is not None and val.index is not None:
                return [
                    [("slice",) if c is None else ("expr", expr, num("i", const=c), None) for c in choice]
                    for choice in sorted(val.index, key=repr)
                ]
        return [
            [
                ("slice",) if val is None else self._item(e.slice.value, val, position)
                for position, (e, val) in enumerate(zip(elements, index_vals))
            ]
        ]

    def _item(self, expr: cst.BaseExpression, val: Val, position: Optional[int]) -> tuple:
        if isinstance(expr, cst.Ellipsis):
            return ("ellipsis",)
        if isinstance(expr, cst.Name) and expr.value == "None":
            return ("none",)
        if val.index is not None and len(val.index) == 1 and next(iter(val.index)) == (None,):
            return ("slice",)
        return ("expr", expr, val, position)

    def _index_problem(
        self,
        target: cst.Subscript,
        name: str,
        current: Val,
        index_vals: list[Optional[Val]],
        op: Optional[str],
        value: Val,
        state: State,
        stmt: Optional[cst.CSTNode] = None,
    ) -> bool:
        alternatives = self._index_items(target, index_vals)
        checks: list[tuple[int, int]] = []
        reason = None
        for items in alternatives:
            reason = self._items_problem(items, name, current, value, state, checks)
            if reason is not None:
                break
        if reason is None:
            if checks and stmt is not None:
                self.checked_indices[id(stmt)] = tuple(checks)
            return False
        self.report(
            target,
            "index-safety",
            f"write `{_code(target)}` with {reason}",
            "index with a `range` loop variable over the axis length the array was created with, a literal within "
            "a literal shape, a slice or a mask of the array itself; for scatters use `np.add.at` in @host code",
        )
        return True

    def _items_problem(
        self,
        items: list[tuple],
        name: str,
        current: Val,
        value: Val,
        state: State,
        checks: list[tuple[int, int]],
    ) -> Optional[str]:
        shape = current.shape
        axis = 0
        for position, item in enumerate(items):
            if item[0] == "slice":  # never out of bounds, never duplicates
                axis += 1
                continue
            if item[0] == "ellipsis":
                if any(later[0] == "expr" for later in items[position + 1 :]):
                    return "an integer index after `...`"
                axis = -(10**6)  # axes unknown from here on
                continue
            if item[0] == "none":
                continue
            _, expr, val, element = item
            if self._is_mask(expr, val, name, current) and len(items) == 1:
                if "num" not in value.kinds or value.kinds != frozenset({"num"}):
                    return "a boolean mask with a non-scalar value"
                continue
            if val.kinds != frozenset({"num"}) or val.dtype != "i":
                return (
                    "an index that may be an integer array or list (duplicates: NumPy applies once, JAX accumulates"
                    " or picks any; out of bounds: NumPy raises, JAX drops)"
                )
            length = shape[axis] if shape is not None and 0 <= axis < len(shape) else None
            if not self._in_bounds(expr, val, length, state):
                literal = length is not None and length.lstrip("-").isdigit()
                if val.const is not None and element is not None and axis >= 0 and not literal:
                    checks.append((element, axis))  # oqupy_jax checks it against the static shape
                else:
                    reason = f"index `{_code(expr)}` not provably within axis {max(axis, 0)}" + (
                        f" of length `{length}`" if length else " (shape unknown)"
                    )
                    return reason + " (NumPy raises IndexError, JAX drops the write)"
            axis += 1
        return None

    def _is_mask(self, expr: cst.BaseExpression, val: Val, name: str, current: Val) -> bool:
        if val.kinds != frozenset({"array"}) or val.dtype != "b":
            return False
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            sides = [expr.left, expr.comparisons[0].comparator]
            return any(isinstance(s, (cst.Name, cst.Attribute)) and _code(s) == name for s in sides)
        if isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
            args = [a.value for a in expr.args]
            return (
                len(args) == 1 and isinstance(args[0], (cst.Name, cst.Attribute)) and _code(args[0]) == name
            )
        return val.shape is not None and val.shape == current.shape and "" not in val.shape

    def _in_bounds(self, expr: cst.BaseExpression, val: Val, length: Optional[str], state: State) -> bool:
        if not length:  # None or "": an axis of unknown length
            return False
        literal = int(length) if length.lstrip("-").isdigit() else None
        if literal is None and length in state.names:
            literal = state.names[length].low  # at least this long
        if val.const is not None and literal is not None:
            return -literal <= val.const < literal
        if val.stop is not None and (val.stop == length or length.startswith(f"{val.stop}+")):
            return True  # ``i`` in ``range(n)`` on an axis of length ``n`` or ``n + c``
        if (  # ``-n`` on an axis of length ``n >= 1``
            isinstance(expr, cst.UnaryOperation)
            and isinstance(expr.operator, cst.Minus)
            and isinstance(expr.expression, cst.Name)
            and expr.expression.value == length
            and (literal or 0) >= 1
        ):
            return True
        # ``-1 - i`` and ``length - 1 - i`` with ``i`` in [0, length)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract):
            right = expr.right
            if isinstance(right, cst.Name) and right.value in state.names:
                loop = state.names[right.value].stop
                left = _code(expr.left).replace(" ", "")
                if loop == length and left in ("-1", f"{length}-1"):
                    return True
        span = _interval(expr, state)  # ``3 - i``, ``2 * i + 1`` with ``i`` from ``range(<literal>)``
        if span is not None and literal is not None and -literal <= span[0] and span[1] < literal:
            return True
        # ``a * i + b`` with ``i`` in [0, n) on an axis of length ``k * n``: 0 <= a <= k and 0 <= b < k suffice
        factor, symbol = (int(length.split("*")[0]), length.split("*")[1]) if "*" in length else (1, length)
        affine = _affine(expr, state)
        if affine is None or symbol.isdigit():
            return False
        a, b, stop = affine
        return stop == symbol and 0 <= a <= factor and 0 <= b < factor

    def _dtype_problem(self, target: cst.BaseExpression, current: Val, op: Optional[str], value: Val) -> bool:
        kind = current.dtype
        if op is not None:  # ``a[i] += v``: a number or array of unknown dtype may be of any numeric kind
            value_kind = value_kinds(value)
        else:
            value_kind = value.dtype if value.kinds <= {"num", "array"} else None
        reason = None
        if kind is None:
            reason = "an array whose dtype the analysis does not know"
            if (
                op is None
                and "array" not in value.kinds
                and value_kind is not None
                and value_kind in ("b", "i")
            ):
                reason = None  # an integer or boolean fits any numeric dtype
        elif op is None:
            if value_kind is None:
                if kind != "c":
                    reason = "a value whose dtype the analysis does not know"
            else:
                reason = _set_problem(kind, value_kind)
        else:
            reason = _augmented_problem(op, kind, value_kind)
        if reason is None:
            return False
        text = f"`{_code(target)} {op or ''}=` with {reason}".replace("  =", " =")
        self.report(
            target,
            "dtype-safety",
            text,
            "create the array with the result's dtype (`dtype=np.complex128`) or write `x = x OP v` (a new array)",
        )
        return True


def _affine(expr: cst.BaseExpression, state: State) -> Optional[tuple[int, int, Optional[str]]]:
    """``(a, b, n)`` for an integer expression ``a * i + b`` of one ``range(n)`` loop variable ``i`` (``n`` a
    never rebound name) and literals; ``(0, b, None)`` for a literal; None otherwise."""
    if isinstance(expr, cst.Integer):
        return 0, int(expr.value, 0), None
    if isinstance(expr, cst.Name):
        value = state.names.get(expr.value)
        if value is not None and value.const is not None:
            return 0, value.const, None
        if (
            value is not None
            and value.stop is not None
            and not value.stop.isdigit()
            and "*" not in value.stop
        ):
            return 1, 0, value.stop
        return None
    if not isinstance(expr, cst.BinaryOperation):
        return None
    left, right = _affine(expr.left, state), _affine(expr.right, state)
    if left is None or right is None or (left[2] and right[2] and left[2] != right[2]):
        return None
    stop = left[2] or right[2]
    if isinstance(expr.operator, cst.Add):
        return left[0] + right[0], left[1] + right[1], stop
    if isinstance(expr.operator, cst.Multiply) and (left[0] == 0 or right[0] == 0):
        k, other = (left[1], right) if left[0] == 0 else (right[1], left)
        return k * other[0], k * other[1], stop
    return None
