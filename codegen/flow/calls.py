"""Calls through the NumPy model: NumPy functions, array and list methods, in-place method statements."""

import math
from dataclasses import replace
from typing import Optional

import libcst as cst

from codegen.flow.numpy_model import (
    _CREATORS,
    _SAME_KIND_FUNCTIONS,
    DTYPE_KEEPING_VIEWS,
    FRESH_FUNCTIONS,
    FRESH_METHODS,
    INPLACE_METHODS,
    SCALAR_REDUCTIONS,
    STORING_METHODS,
    WRITABLE_VIEW_FUNCTIONS,
    WRITABLE_VIEW_METHODS,
    _code,
    _ufunc_kind,
    dtype_of,
    kinds_union,
    promote,
    real_kind,
    ufunc_inputs,
)
from codegen.flow.values import OTHER, UNKNOWN, State, Val, num

#: list methods that leave the list's elements as they are
_READING_LIST_METHODS = frozenset({"copy", "count", "index"})


class Calls:
    """Mixin of :class:`~codegen.flow.interpreter.FunctionFlow`: what NumPy calls and methods return."""

    def _numpy(self, call: cst.Call, qualified: str, args: list[Val], arrays: list[Val], state: State) -> Val:
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        positional = [a.value for a in call.args if a.keyword is None]
        bufs = frozenset().union(*(a.bufs for a in args if a.maybe_array)) if args else frozenset()
        dtype = self.dtype_of(keywords.get("dtype"))
        if qualified == "numpy.array":
            copy = keywords.get("copy")
            if copy is None or (isinstance(copy, cst.Name) and copy.value == "True"):
                first = args[0] if args else OTHER
                order = keywords.get("order")
                contig = isinstance(order, cst.SimpleString) and order.evaluated_value == "C"
                kind = dtype or (
                    first.dtype if first.kinds <= {"num", "array"} else self._list_kind(first, state)
                )
                shape = first.shape if "array" in first.kinds else None
                return self._new(call, dtype=kind, contig=contig, shape=shape, device=True)
            return Val(
                frozenset({"array"}),
                bufs | frozenset({f"new@{self.skeleton.span[id(call)][0]}"}),
                origin="`np.array(..., copy=...)`",
            )
        if ufunc_inputs(qualified) is not None:
            kinds = [a.dtype for a in args[: ufunc_inputs(qualified)]]
            out_kind = _ufunc_kind(qualified, kinds)
            shape = arrays[0].shape if len(arrays) == 1 and len(args) == 1 else None
            if not arrays and any(a.maybe_array for a in args[: ufunc_inputs(qualified)]):
                # ``np.abs(x)`` of an unknown ``x``: a new array or a number (``y += 1`` then may write in place)
                return replace(
                    self._new(call, dtype=out_kind, device=True), kinds=frozenset({"array", "num"})
                )
            if not arrays:
                return num(out_kind, traced=any(a.traced for a in args))
            return self._new(
                call, dtype=out_kind, shape=shape, contig=all(a.contig for a in arrays), device=True
            )
        name = qualified[len("numpy.") :]
        if name == "nan_to_num" and "copy" in keywords:  # ``copy=False`` may return the argument itself
            return Val(frozenset({"array"}), bufs, origin="`np.nan_to_num(..., copy=...)`")
        if qualified in FRESH_FUNCTIONS:
            if name in _CREATORS and "order" not in keywords:
                shape = None
                if name in ("zeros", "ones", "empty", "full") and positional:
                    shape = self._shape_of(positional[0], state)
                elif name in ("eye", "identity") and len(positional) == 1 and "M" not in keywords:
                    length = self._length(positional[0], state)
                    shape = (length, length) if length else None
                elif name == "eye" and positional:  # ``np.eye(1, n)``: one row ("": a length not known)
                    columns = positional[1] if len(positional) > 1 else keywords.get("M")
                    rows = self._length(positional[0], state) or ""
                    shape = (rows, self._length(columns, state) or "" if columns is not None else rows)
                elif name == "arange" and len(positional) == 1:
                    stop = positional[0]
                    if isinstance(stop, cst.Float) and float(stop.value) >= 0:
                        shape = (str(math.ceil(float(stop.value))),)
                    else:
                        shape = self._shape_of(stop, state) if args[0].dtype == "i" else None
                if dtype is None:
                    if name == "full" and len(args) > 1:
                        dtype = args[1].dtype if args[1].kinds == frozenset({"num"}) else None
                    elif name == "arange":
                        dtype = promote(*(a.dtype for a in args[:3])) if args else None
                    else:
                        dtype = "f"
                return self._new(call, contig=True, shape=shape, dtype=dtype, device=True)
            if name in ("zeros_like", "ones_like", "empty_like", "full_like", "copy") and args:
                return self._new(call, dtype=dtype or args[0].dtype, shape=args[0].shape, device=True)
            one = len(positional) == 1 and "axis" not in keywords and "keepdims" not in keywords
            if name in ("allclose", "array_equal") or name in ("any", "all", "count_nonzero") and one:
                return num("b" if name != "count_nonzero" else "i", traced=True)
            if name in SCALAR_REDUCTIONS and one and set(keywords) <= {"dtype"}:  # ``np.sum(x)``: a scalar
                table, kind = SCALAR_REDUCTIONS[name], args[0].dtype
                return num(dtype or (kinds_union(*(table[k] for k in kind)) if kind else None), traced=True)
            if dtype is None and name == "indices":
                dtype = "i"
            if dtype is None and name in _SAME_KIND_FUNCTIONS:  # a list counts with its elements' kind
                dtype = promote(
                    *(a.dtype for a in args if a.kinds <= {"num", "array"} and a.kinds),
                    *(self._list_kind(a, state) for a in args if a.kinds == frozenset({"list"})),
                )
            return self._new(call, dtype=dtype, device=True)
        if qualified in WRITABLE_VIEW_FUNCTIONS and args:
            first = args[0]
            if "array" not in first.kinds:
                if first.kinds <= {"num", "list"}:
                    return self._new(call, dtype=dtype, device=True)
                return replace(UNKNOWN, kinds=frozenset({"array"}), device=True, dtype=dtype)
            shape = (
                self._shape_of(positional[1], state) if name == "reshape" and len(positional) > 1 else None
            )
            same = ("asarray", "asanyarray", "ascontiguousarray", "flip", "fliplr", "flipud", "atleast_1d")
            if name != "reshape":
                shape = first.shape if name in same else None
            contig = first.contig and name in ("reshape", "asarray", "asanyarray")
            obj = (
                first.obj
                if name in ("asarray", "asanyarray", "ascontiguousarray", "atleast_1d")
                else self._site(call)
            )
            return replace(
                first, contig=contig, shape=shape, device=True, obj=obj, ndim=None, dtype=dtype or first.dtype
            )
        if not arrays and not any(a.maybe_array for a in args):
            return (
                UNKNOWN
                if qualified.count(".") > 1
                else Val(frozenset({"array", "num", "other"}), frozenset(), origin=f"`{qualified}`")
            )
        kind = args[0].dtype if args and name in DTYPE_KEEPING_VIEWS else None
        if kind is not None and name in ("real", "imag"):
            kind = real_kind(kind)
        return Val(
            frozenset({"array"})
            | (frozenset({"num"}) if "unknown" in {k for a in args for k in a.kinds} else frozenset()),
            bufs,
            origin=f"`{qualified}(...)`",
            dtype=kind,
        )

    def dtype_of(self, expr: Optional[cst.BaseExpression]) -> Optional[str]:
        kind = dtype_of(expr, self.qname)
        if kind is None and isinstance(expr, cst.Name) and expr.value not in self.skeleton.assigned:
            kind = self.module_dtypes.get(expr.value)
        if kind is None and isinstance(expr, (cst.Name, cst.Attribute)):
            qualified = self.qname(expr) or ""  # a package constant: ``config.NpDtype``, imported ``NpDtype``
            kind = self.module_dtypes.get(qualified) if "." in qualified else None
        return kind

    def _statement_method(self, node: cst.Expr, state: State) -> bool:
        """``x.sort(...)`` and ``x.setflags(write=False)`` as statements on a local array ``x``: the first becomes
        ``x = x.sort(...)`` in oqupy_jax (``jax.Array.sort`` returns the sorted copy) when ``x`` could be written in
        place; the second is dropped there (JAX arrays are immutable) and makes ``x`` read-only for the analysis.
        True when handled."""
        call = node.value
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)
            and call.func.attr.value in ("sort", "setflags")
        ):
            return False
        name = call.func.value.value
        current = state.names.get(name)
        if current is None or current.kinds != frozenset({"array"}):
            return False
        for arg in call.args:
            self.ev(arg.value, state)
        if call.func.attr.value == "setflags":
            args = {a.keyword.value if a.keyword else "write": a.value for a in call.args}
            if set(args) != {"write"} or not (
                isinstance(args["write"], cst.Name) and args["write"].value == "False"
            ):
                return False
            state.names[name] = replace(current, owned=False, origin="an array made read-only by `.setflags`")
            self.rewritten_methods[id(node)] = "drop"
            return True
        if self._write_problem(name, current, state, node, device=False) is not None:
            return True  # reported
        self.rewritten_methods[id(node)] = "rebind"
        return True

    def _method(self, call: cst.Call, method: str, receiver: Val, args: list[Val], state: State) -> Val:
        if (
            "array" in receiver.kinds
            or any(b.startswith("param:") for b in receiver.bufs)
            and receiver.maybe_array
        ):
            if method in INPLACE_METHODS:
                self.report(
                    call,
                    "inplace-method",
                    f"in-place method `.{method}()` on an array (JAX returns a new array and drops it)",
                    "use the functional form (`np.sort(x)`, `np.full_like(x, v)`, `x.reshape(...)`)",
                )
        if "array" in receiver.kinds and receiver.kinds <= {"array", "other"}:
            keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            if method in FRESH_METHODS:
                if method == "copy" and "order" not in keywords:
                    return self._new(
                        call, contig=True, shape=receiver.shape, dtype=receiver.dtype, device=receiver.device
                    )
                if method == "flatten":
                    return self._new(call, contig=True, dtype=receiver.dtype, device=receiver.device)
                if (
                    method in ("sum", "mean", "max", "min", "prod", "trace", "any", "all", "std", "var")
                    and not call.args
                ):
                    return num(receiver.dtype if method not in ("any", "all") else "b", traced=True)
                kind = (
                    receiver.dtype
                    if method not in ("argmax", "argmin", "argsort", "nonzero", "searchsorted")
                    else "i"
                )
                return self._new(call, dtype=kind, device=receiver.device)
            if method == "astype":
                copy = keywords.get("copy")
                kind = self.dtype_of(call.args[0].value if call.args else None)
                if copy is None or (isinstance(copy, cst.Name) and copy.value == "True"):
                    return self._new(call, dtype=kind, shape=receiver.shape, device=receiver.device)
                return replace(receiver, owned=False, dtype=kind, origin="`.astype(..., copy=...)`")
            if method in WRITABLE_VIEW_METHODS:
                shape = None
                if method == "reshape":
                    positional = [a.value for a in call.args if a.keyword is None]
                    shape = (
                        self._shape_of(
                            positional[0]
                            if len(positional) == 1
                            else cst.Tuple([cst.Element(p) for p in positional]),
                            state,
                        )
                        if positional
                        else None
                    )
                return replace(
                    receiver,
                    contig=receiver.contig and method in ("reshape", "ravel"),
                    shape=shape,
                    obj=self._site(call),
                    ndim=1 if method == "ravel" else None,
                )
            if method in ("tolist", "item"):
                return num(receiver.dtype, traced=True) if method == "item" else Val(frozenset({"list"}))
            return replace(receiver, owned=False, shape=None, contig=False, origin=f"`.{method}()`")
        if method in ("index", "count") and receiver.kinds <= {"list", "other"} and receiver.kinds:
            if receiver.kinds != frozenset({"list"}):  # a tuple's, or an object's own method
                for arg in args:
                    self._escape(arg, state)
                self._forget_attributes(state)
            return num("i", low=0)  # a Python int (``tuple.index``, ``list.count``)
        if receiver.kinds <= {"list", "dict"} and receiver.kinds:
            if method not in _READING_LIST_METHODS:
                self._list_changed(receiver, state)
            if method in STORING_METHODS:
                for arg in args:
                    self._escape(arg, state)
                return OTHER
            if method == "copy":
                kind = self._list_kind(receiver, state)
                if kind is not None:  # a new list of the same numbers
                    return self._built_list(call, [num(kind)])
                return Val(receiver.kinds, frozenset({"?"}))
            return UNKNOWN
        for arg in args:
            self._escape(arg, state)
        self._forget_attributes(state)
        if method == "reshape" and receiver.maybe_array:
            return self._reshaped_unknown(call, receiver, state)
        return UNKNOWN

    def _reshaped_unknown(self, call: cst.Call, receiver: Val, state: State) -> Val:
        """``x.reshape(E)`` of a value of unknown kind: a new array object (NumPy's, JAX's and every array
        library's ``reshape`` returns one) over memory that may be ``x``'s.  With one argument ``E`` built
        from locals, ``flat`` keeps its code: a later ``.shape =`` that names ``E`` as one axis either fails
        in both packages (``E`` a tuple) or reshapes a 1-D array (``E`` an int), which NumPy always can."""
        flat = ""
        if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
            arg = call.args[0].value
            names = _plain_names(arg)
            if names is not None and all(
                n in state.names and n not in self.declared and n not in self.skeleton.closure for n in names
            ):
                flat = _code(arg)
        return Val(
            frozenset({"array"}),
            receiver.bufs | frozenset({"?"}),
            obj=self._site(call),
            origin="`.reshape()` of a value of unknown kind",
            flat=flat,
        )


def _plain_names(expr: cst.BaseExpression) -> Optional[list[str]]:
    """The names of an arithmetic expression of names and integers (None if it holds anything else)."""
    if isinstance(expr, cst.Integer):
        return []
    if isinstance(expr, cst.Name):
        return [expr.value]
    if isinstance(expr, cst.UnaryOperation):
        return _plain_names(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        left, right = _plain_names(expr.left), _plain_names(expr.right)
        return None if left is None or right is None else left + right
    return None
