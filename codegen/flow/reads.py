"""Reads by integer indices: NumPy raises ``IndexError`` out of bounds, JAX clamps (a silent wrong value).

Every read ``a[...]`` of what may be an array is judged with the bounds prover of the writes
(:meth:`~codegen.flow.indices.Indices._in_bounds`).  Slices, ``...``, ``None``, masks and indices proven in
bounds read as written.  An integer index that is a Python int (a literal, a ``range`` or ``enumerate`` loop
variable, an ``int`` argument outside kernels) on a known axis of a name is checked against the static shape:
``a[range(a.shape[0])[i]]`` raises ``IndexError`` as NumPy does.  Any other unproven index (an integer array or
list, a traced integer, an index of unknown kind) reads ``a.at[...].get(mode="fill")`` from an inexact array
(NaN where NumPy raises) and is refused on integer, boolean or unknown dtypes (JAX's fill value there is an
ordinary number).
"""

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from codegen.flow.numpy_model import _code
from codegen.flow.values import State, Val, field_name


@dataclass(frozen=True)
class Read:
    """The verdict on one read ``a[...]``: ``checks`` (subscript element, axis) to read
    ``a[range(a.shape[axis])[i]]``, ``fill`` (read ``a.at[...].get(mode="fill")``; ``host``: the array may be
    NumPy's, ``jnp.asarray(a).at[...]``), ``refused`` (with the reason), or proven (none of them)."""

    checks: tuple[tuple[int, int], ...] = ()
    fill: bool = False
    host: bool = False
    refused: str = ""


PROVEN = Read()
_UNKNOWN_AXIS = -(10**6)
IDIOM = (
    "index with a slice, a `range` loop variable over the axis the array was created with, or a literal within a "
    'literal shape; for an integer array, gather with `np.take(a, idx, axis=k, mode="clip")` where clamping is '
    "meant (both packages clamp), or move the code into `@host`"
)


def _simple(expr: cst.BaseExpression) -> bool:
    """A name or a chain of attributes of one: evaluated twice by the check, without side effects."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


class Reads:
    """Mixin of :class:`~codegen.flow.interpreter.FunctionFlow`: bounds of the reads by integer indices."""

    def _read(self, expr: cst.Subscript, base: Val, vals: list[Optional[Val]], state: State) -> None:
        if not self.reporting or id(expr) in self.write_targets:
            return
        verdict = self._read_verdict(expr, base, vals, state)
        previous = self.reads.get(id(expr))
        if previous is not None and previous != verdict:  # the same read judged twice: the weaker verdict
            if previous.refused or verdict.refused:
                verdict = previous if previous.refused else verdict
            elif previous.fill or verdict.fill:
                verdict = Read(fill=True, host=previous.host or verdict.host)
            else:
                verdict = Read(checks=tuple(sorted(set(previous.checks) | set(verdict.checks))))
        self.reads[id(expr)] = verdict
        if verdict.refused:
            self.report(expr, "index-safety", f"read `{_code(expr)}` with {verdict.refused}", IDIOM)

    def _read_verdict(self, expr: cst.Subscript, base: Val, vals: list[Optional[Val]], state: State) -> Read:
        checks: set[tuple[int, int]] = set()
        loud = ""
        for items in self._index_items(expr, vals):
            axis = 0
            for item in items:
                if item[0] == "slice":
                    axis += 1
                    continue
                if item[0] == "ellipsis":
                    axis = _UNKNOWN_AXIS
                    continue
                if item[0] == "none":
                    continue
                _, index, val, element = item
                if _checked(index, expr.value, axis):
                    axis += 1
                    continue
                if field_name(val) or (val.kinds == frozenset({"num"}) and val.dtype in ("b", "f", "c")):
                    continue  # a field name; ``a[True]`` adds an axis; a float raises in both packages
                if val.kinds <= {"array", "list"} and val.kinds and val.dtype == "b":
                    axis = _UNKNOWN_AXIS  # a mask: both packages check its shape
                    continue
                length = base.shape[axis] if base.shape is not None and 0 <= axis < len(base.shape) else None
                if self._literal_list_in_bounds(index, length, state):
                    axis += 1
                    continue
                if val.kinds != frozenset({"num"}):
                    what = (
                        "an integer array or list"
                        if val.kinds <= {"array", "list"}
                        else "an index of unknown kind"
                    )
                    loud = loud or f"`{_code(index)}`, {what}"
                    axis = _UNKNOWN_AXIS
                    continue
                if not self._in_bounds(index, val, length, state):
                    if val.traced or element is None or axis < 0 or not _simple(expr.value):
                        loud = loud or f"`{_code(index)}`, an integer not provably within axis {max(axis, 0)}"
                    else:
                        checks.add((element, axis))
                axis += 1
        if not loud:
            return Read(checks=tuple(sorted(checks))) if checks else PROVEN
        if base.dtype is not None and set(base.dtype) <= {"i", "b"}:
            return Read(
                refused=f"{loud}, on a `{base.dtype}` array (out of bounds NumPy raises IndexError and JAX clamps;"
                " only an inexact array can read NaN there instead)"
            )
        return Read(fill=True, host=not base.device)

    def _literal_list_in_bounds(self, index: cst.BaseExpression, length: Optional[str], state: State) -> bool:
        """``a[[0, -1]]``: a list display of integer literals, each within the axis."""
        if not isinstance(index, cst.List) or not index.elements:
            return False
        for element in index.elements:
            value = self._ev(element.value, state) if isinstance(element, cst.Element) else None
            if (
                value is None
                or value.const is None
                or not self._in_bounds(element.value, value, length, state)
            ):
                return False
        return True

    def _at_get(self, call: cst.Call, state: State) -> Optional[Val]:
        """``a.at[...].get(...)`` (written by the JAX rewrite of a read): a new array read from ``a``."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "get"
            and isinstance(func.value, cst.Subscript)
            and isinstance(func.value.value, cst.Attribute)
            and func.value.value.attr.value == "at"
        ):
            return None
        subscript = func.value
        base = self._ev(subscript.value.value, state)
        if "array" not in base.kinds:
            return None
        vals = [self._index_val(e, state) for e in subscript.slice]
        for element, v in zip(subscript.slice, vals):
            if v is not None and "list" in v.kinds:
                self._list_index(subscript, element, v, state)
        for arg in call.args:
            self._ev(arg.value, state)
        return self._new(call, dtype=base.dtype, device=True)


def _checked(index: cst.BaseExpression, base: cst.BaseExpression, axis: int) -> bool:
    """``range(a.shape[axis])[i]`` as an index of ``a`` on ``axis``: in bounds by construction (the check)."""
    if not (isinstance(index, cst.Subscript) and isinstance(index.value, cst.Call)):
        return False
    call = index.value
    if not (isinstance(call.func, cst.Name) and call.func.value == "range" and len(call.args) == 1):
        return False
    length = call.args[0].value
    return (
        isinstance(length, cst.Subscript)
        and isinstance(length.value, cst.Attribute)
        and length.value.attr.value == "shape"
        and _code(length.value.value) == _code(base)
        and len(length.slice) == 1
        and isinstance(length.slice[0].slice, cst.Index)
        and isinstance(length.slice[0].slice.value, cst.Integer)
        and int(length.slice[0].slice.value.value) == axis
    )
