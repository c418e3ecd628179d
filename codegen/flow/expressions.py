"""Expressions: what each one evaluates to (:class:`~codegen.flow.values.Val`), calls through the NumPy model."""

from dataclasses import replace
from typing import Optional

import libcst as cst

from codegen.flow.numpy_model import (
    COMPLEX_ONLY,
    KNOWN_CONTAINERS,
    PURE_BUILTINS,
    STORING_METHODS,
    _code,
    _ufunc_kind,
    promote,
)
from codegen.flow.values import (
    _SLICE,
    INT_TUPLE,
    NONE,
    OTHER,
    TEXT,
    UNKNOWN,
    State,
    Val,
    _arith,
    _binary_symbol,
    field_name,
    join,
    num,
    numbers_tuple,
    returned_val,
)
from codegen.names import HOST_CALLS


class Expressions:
    """Mixin of :class:`~codegen.flow.interpreter.FunctionFlow`: evaluation of expressions."""

    # -- expressions -----------------------------------------------------------------------------------
    def _escape(self, value: Val, state: State) -> None:
        state.escaped.update(b for b in value.bufs if b.startswith(("new@", "old@")))
        if value.obj:
            state.escaped.add(value.obj)

    def _list_kind(self, value: Val, state: State) -> Optional[str]:
        """The element kind of a list this function built from numbers (a display or a comprehension), as
        ``np.asarray`` would give it, while nothing else can have changed its elements: no other list, no call
        and no closure holds it, and every statement that could change it dropped the kind (None otherwise)."""
        if value.kinds != frozenset({"list"}) or not value.obj or value.obj in state.escaped:
            return None
        return value.dtype

    def _list_changed(self, value: Val, state: State) -> None:
        """A statement may have changed the elements of the list ``value``: every name of it forgets its kind."""
        if "list" not in value.kinds or not value.obj:
            return
        for name, held in state.names.items():
            if held.obj == value.obj:
                state.names[name] = replace(held, dtype=None, text=False)

    def _built_list(self, node: cst.CSTNode, kinds: list[Val]) -> Val:
        """A new list made at ``node`` with elements of the values ``kinds`` (its element kind when all are
        numbers of a known kind)."""
        start = self.skeleton.span.get(id(node), (0, 0))[0]
        numbers = bool(kinds) and all(v.kinds == frozenset({"num"}) and v.dtype for v in kinds)
        return Val(
            frozenset({"list"}),
            obj=f"list@{start}",
            dtype=promote(*(v.dtype for v in kinds)) if numbers else None,
            traced=any(v.traced for v in kinds),
            text=bool(kinds) and all(v.text for v in kinds),
        )

    def _site(self, node: cst.CSTNode) -> str:
        """The array object made at ``node`` (a view: its memory is another's, the object is new).  Objects an
        earlier run of the site made (a loop's earlier iterations) become ``oldobj@``: the new one is apart."""
        obj = f"obj@{self.skeleton.span.get(id(node), (0, 0))[0]}"
        state = self._state
        if state is not None:
            older = "old" + obj
            for name, value in state.names.items():
                if value.obj == obj:
                    state.names[name] = replace(value, obj=older)
            if obj in state.escaped:
                state.escaped.discard(obj)
                state.escaped.add(older)
        return obj

    def _new(self, node: cst.CSTNode, **facts) -> Val:
        """A fresh allocation at ``node``: the *recency* abstraction keeps the newest array of a site apart
        (``new@<site>``) from all older ones (``old@<site>``, e.g. those of earlier loop iterations)."""
        start, _ = self.skeleton.span.get(id(node), (0, 0))
        newest, older = f"new@{start}", f"old@{start}"
        state = self._state
        if state is not None:
            for name, value in state.names.items():
                if newest in value.bufs:
                    state.names[name] = replace(value, bufs=(value.bufs - {newest}) | {older})
            if newest in state.escaped:
                state.escaped.discard(newest)
                state.escaped.add(older)
        return Val(frozenset({"array"}), frozenset({newest}), owned=True, obj=self._site(node), **facts)

    def _length(self, expr: cst.BaseExpression, state: State) -> Optional[str]:
        """A length expression that keeps its value for the whole call: a literal or a never rebound name."""
        if isinstance(expr, cst.Integer):
            return str(int(expr.value))
        if isinstance(expr, cst.Name) and expr.value not in self.skeleton.assigned:
            val = state.names.get(expr.value)
            if val is not None and val.kinds == frozenset({"num"}) and val.dtype == "i":
                return expr.value
        if (  # ``n + 1``: ``"n+1"`` (a ``range(n)`` variable is within it)
            isinstance(expr, cst.BinaryOperation)
            and isinstance(expr.operator, cst.Add)
            and isinstance(expr.right, cst.Integer)
            and int(expr.right.value, 0) >= 0
        ):
            inner = self._length(expr.left, state)
            if inner is not None and inner.isdigit():
                return str(int(inner) + int(expr.right.value, 0))
            if inner is not None and "*" not in inner and "+" not in inner:
                return f"{inner}+{int(expr.right.value, 0)}"
            return None
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            factor, other = (
                (expr.left, expr.right) if isinstance(expr.left, cst.Integer) else (expr.right, expr.left)
            )
            inner = self._length(other, state) if isinstance(factor, cst.Integer) else None
            if inner is not None and int(factor.value, 0) > 0:  # ``2 * n``: ``"2*n"``
                if inner.isdigit():
                    return str(int(factor.value, 0) * int(inner))
                return f"{int(factor.value, 0)}*{inner}" if "*" not in inner and "+" not in inner else None
        return None

    def _shape_of(self, expr: Optional[cst.BaseExpression], state: State) -> Optional[tuple[str, ...]]:
        if expr is None:
            return None
        if isinstance(expr, (cst.Tuple, cst.List)):  # "" for an axis of unknown length
            parts = [self._length(e.value, state) or "" for e in expr.elements if isinstance(e, cst.Element)]
            return tuple(parts) if len(parts) == len(expr.elements) else None
        length = self._length(expr, state)
        return (length,) if length is not None else None

    def ev(self, expr: cst.BaseExpression, state: State) -> Val:
        self._state = state
        return self._ev(expr, state)

    def _ev(self, expr: cst.BaseExpression, state: State) -> Val:
        ev = self._ev
        if isinstance(expr, cst.Name):
            if expr.value in state.names:
                return state.names[expr.value]
            if expr.value in ("None",):
                return NONE
            if expr.value in ("True", "False"):
                return num("b")
            return UNKNOWN
        if isinstance(expr, cst.Integer):
            return num("i", const=int(expr.value, 0))
        if isinstance(expr, cst.Float):
            return num("f")
        if isinstance(expr, cst.Imaginary):
            return num("c")
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            if isinstance(expr, cst.FormattedString):
                for part in expr.parts:
                    if isinstance(part, cst.FormattedStringExpression):
                        ev(part.expression, state)
            return TEXT
        if isinstance(expr, cst.Ellipsis):
            return OTHER
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            vals = [ev(element.value, state) for element in expr.elements]
            for val in vals:
                self._escape(val, state)
            if isinstance(expr, cst.List):
                starred = any(isinstance(e, cst.StarredElement) for e in expr.elements)
                return self._built_list(expr, [] if starred else vals)
            index = None
            if isinstance(expr, cst.Tuple) and not any(
                isinstance(e, cst.StarredElement) for e in expr.elements
            ):
                self.element_vals[id(expr)] = vals
                if all(v.const is not None or v.index == _SLICE for v in vals):
                    index = frozenset({tuple(v.const if v.const is not None else None for v in vals)})
            return Val(frozenset({"other"}), index=index)
        if isinstance(expr, cst.Dict):
            values = []
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    ev(element.key, state)
                values.append(ev(element.value, state))
                self._escape(values[-1], state)
            indices = [v.index for v in values]
            index = frozenset().union(*indices) if indices and all(i is not None for i in indices) else None
            return Val(frozenset({"dict"}), index=index)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            produced = self._comprehension(expr, state)
            if isinstance(expr, cst.ListComp):
                return self._built_list(expr, [produced])
            return Val(frozenset({"dict" if isinstance(expr, cst.DictComp) else "list"}))
        if isinstance(expr, cst.StarredElement):
            return ev(expr.value, state)
        if isinstance(expr, cst.BinaryOperation):
            return _arith(ev(expr.left, state), ev(expr.right, state), _binary_symbol(expr), self._new(expr))
        if isinstance(expr, cst.UnaryOperation):
            operand = ev(expr.expression, state)
            if isinstance(expr.operator, cst.Not):
                return num("b")
            if "array" in operand.kinds:
                return self._new(
                    expr,
                    contig=operand.contig,
                    shape=operand.shape,
                    dtype=operand.dtype,
                    device=operand.device,
                )
            if operand.kinds == frozenset({"num"}):
                const = (
                    -operand.const
                    if operand.const is not None and isinstance(expr.operator, cst.Minus)
                    else None
                )
                return num(operand.dtype, const=const, traced=operand.traced)
            return Val(frozenset({"unknown"}))
        if isinstance(expr, cst.Comparison):
            sides = [ev(expr.left, state)] + [ev(c.comparator, state) for c in expr.comparisons]
            arrays = [s for s in sides if "array" in s.kinds]
            if arrays:
                return self._new(expr, dtype="b", shape=arrays[0].shape, device=any(a.device for a in arrays))
            if all(s.kinds == frozenset({"num"}) for s in sides):
                return num("b")
            return Val(frozenset({"unknown"}))
        if isinstance(expr, cst.BooleanOperation):
            return join(ev(expr.left, state), ev(expr.right, state)) or UNKNOWN
        if isinstance(expr, cst.IfExp):
            ev(expr.test, state)
            return join(ev(expr.body, state), ev(expr.orelse, state)) or UNKNOWN
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, state)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, state)
        if isinstance(expr, cst.Call):
            return self._call(expr, state)
        if isinstance(expr, cst.Lambda):
            return OTHER
        if isinstance(expr, cst.NamedExpr):
            value = ev(expr.value, state)
            self._bind(expr.target, value, state, expr)
            return value
        if isinstance(expr, (cst.Await, cst.Yield)):
            inner = getattr(expr, "value", None) or getattr(expr, "expression", None)
            if isinstance(inner, cst.BaseExpression):
                self._escape(ev(inner, state), state)
            return UNKNOWN
        return UNKNOWN

    def _comprehension(self, expr: cst.CSTNode, state: State) -> Val:
        """Evaluate a comprehension in its own scope; the value of its element (of the last one for a dict)."""
        inner = state.copy()
        clause = expr.for_in
        while clause is not None:
            self._bind_iteration(clause.target, clause.iter, inner, expr)
            for condition in clause.ifs:
                self._ev(condition.test, inner)
            clause = clause.inner_for_in
        element = self._ev(expr.value if isinstance(expr, cst.DictComp) else expr.elt, inner)
        self._escape(element, inner)
        state.escaped |= inner.escaped
        for name, held in list(state.names.items()):  # a list the comprehension may have changed
            if held.obj and inner.names.get(name, held).dtype != held.dtype:
                self._list_changed(held, state)
        return element

    def _subscript(self, expr: cst.Subscript, state: State) -> Val:
        base = self._ev(expr.value, state)
        vals = [self._index_val(e, state) for e in expr.slice]
        if base.kinds == frozenset({"dict"}) and base.index is not None:
            return Val(frozenset({"other"}), index=base.index)  # one of the dict's index tuples
        if "array" in base.kinds:
            self.array_subscripts.add(id(expr))
            self._read(expr, base, vals, state)
        elif "unknown" in base.kinds and self.reporting and self._integer_read(expr, vals):
            self.unknown_reads[id(expr)] = self.synthetic.get(id(expr), expr)
        if "array" not in base.kinds:
            if (
                numbers_tuple(base)
                and len(vals) == 1
                and vals[0] is not None
                and vals[0].kinds == frozenset({"num"})
            ):
                return num(base.dtype)  # ``quad(...)[0]``: a Python float
            kind = self._list_kind(base, state)
            if (
                kind is not None
                and len(vals) == 1
                and vals[0] is not None
                and vals[0].kinds == frozenset({"num"})
            ):
                return num(kind, traced=base.traced)  # an element of a list of numbers built here
            if base.kinds <= {"num", "other"} and "unknown" not in base.kinds:
                return UNKNOWN if "other" in base.kinds else num(None)
            return UNKNOWN
        for element, v in zip(expr.slice, vals):
            if v is not None and "list" in v.kinds:
                self._list_index(expr, element, v, state)
        # an array or list index copies (NumPy's advanced indexing); anything that may be an int, a slice, a
        # tuple of them, ``...`` or ``None`` may give a view of ``base``, which the result then shares
        fancy = any(v is not None and v.kinds and v.kinds <= {"array", "list"} for v in vals)
        if fancy:
            return self._new(expr, dtype=base.dtype, device=base.device)
        ints = sum(v is not None and v.kinds == frozenset({"num"}) for v in vals)
        if base.shape is not None and ints == len(vals) == len(base.shape):
            return num(base.dtype, traced=True)  # an element: a JAX scalar in oqupy_jax
        partial = base.shape is not None and ints < len(base.shape) and len(vals) == ints
        return Val(
            frozenset({"array"}) if any(v is None for v in vals) or partial else frozenset({"array", "num"}),
            base.bufs,
            base.owned,
            dtype=base.dtype,
            origin=base.origin,
            device=base.device,
        )

    def _emitted(self, func: cst.BaseExpression) -> Optional[str]:
        """``jnp.sort`` / ``jnp.asarray`` written by an earlier JAX rewrite (its import is added at the end, so
        ``jnp`` is unbound in the tree a later rewrite analyses): the NumPy function of that name."""
        dotted = _code(func)
        if (
            dotted.startswith("jnp.")
            and "jnp" not in self.locals
            and dotted[4:].replace(".", "").isidentifier()
        ):
            return f"numpy.{dotted[4:]}"
        return None

    def _list_index(
        self, expr: cst.Subscript, element: cst.SubscriptElement, value: Val, state: State
    ) -> None:
        """``x[idx]`` with a Python list ``idx``: JAX refuses lists as indices, so oqupy_jax reads
        ``x[jnp.asarray(idx)]``, which means the same only for integers (``jnp.asarray([])`` is a float array,
        and a list of booleans is a mask)."""
        if self._list_kind(value, state) == "i" and isinstance(element.slice, cst.Index):
            self.list_indices.add(id(element.slice.value))
            return
        self.report(
            expr,
            "list-index",
            f"`{_code(expr)}` indexes an array with a Python list whose elements are not provably integers"
            " (JAX refuses lists as indices, and an empty or changed list need not hold integers)",
            "index with an integer array: `x[np.asarray(idx, dtype=int)]`, or build the list here from integer"
            " literals or a comprehension over `range`",
        )

    def _integer_read(self, expr: cst.Subscript, vals: list[Optional[Val]]) -> bool:
        """Whether a read may index by an integer: not only slices, ``...`` and ``None`` (never out of bounds),
        not a field name (a string), not a type (``Callable[..., Any]``)."""
        qualified = self.qname(expr.value)
        if qualified is not None and qualified.startswith(("typing.", "collections.abc.")):
            return False
        for items in self._index_items(expr, vals):
            for item in items:
                if item[0] == "expr" and not field_name(item[2]):
                    return True
        return False

    def _attribute(self, expr: cst.Attribute, state: State) -> Val:
        qualified = self.qname(expr)
        if qualified in KNOWN_CONTAINERS:
            return Val(frozenset({KNOWN_CONTAINERS[qualified]}))
        if qualified is not None and qualified.startswith(("numpy.", "math.")):
            return (
                num("f")
                if qualified in ("numpy.pi", "numpy.e", "numpy.inf", "numpy.nan", "math.pi")
                else OTHER
            )
        base = self._ev(expr.value, state)
        attr = expr.attr.value
        if self._attribute_key(expr, state) is not None:
            return self._attribute_val(expr, state)
        if "array" in base.kinds:
            if attr in ("T", "mT"):
                shape = tuple(reversed(base.shape)) if base.shape is not None else None
                return replace(base, contig=False, shape=shape)
            if attr in ("real", "imag", "flat"):
                return replace(base, owned=False, contig=False, shape=None, origin=f"`.{attr}` of an array")
            if attr in ("ndim", "size", "itemsize", "nbytes"):
                return num("i")
            if attr == "dtype":
                return OTHER
        if attr in ("shape", "strides") and base.kinds <= {"array", "unknown"}:
            return INT_TUPLE  # NumPy's and JAX's: a tuple of Python ints, which raises IndexError itself
        if base.kinds == frozenset({"other"}) and not base.bufs:
            return UNKNOWN
        return UNKNOWN

    def _args(self, call: cst.Call, state: State) -> list[Val]:
        return [self._ev(arg.value, state) for arg in call.args]

    def _call(self, call: cst.Call, state: State) -> Val:
        func = call.func
        read = self._at_get(call, state)
        if read is not None:
            return read
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            held = state.names.get(func.value.value)
            if held is not None and held.index is not None and func.attr.value in STORING_METHODS:
                state.names[func.value.value] = replace(held, index=None)  # a dict of indices changes
        qualified = self.qname(func) or self._emitted(func)
        if qualified is None and isinstance(func, cst.Attribute):
            receiver = self._ev(func.value, state)
            args = self._args(call, state)
            return self._method(call, func.attr.value, receiver, args, state)
        if (
            isinstance(func, cst.Attribute)
            and qualified is not None
            and not qualified.startswith(("numpy.", "scipy.", "math.", "builtins."))
        ):
            receiver = self._ev(func.value, state)
            if receiver != UNKNOWN or isinstance(func.value, cst.Name) and func.value.value in state.names:
                args = self._args(call, state)
                return self._method(call, func.attr.value, receiver, args, state)
        args = self._args(call, state)
        if qualified in COMPLEX_ONLY and (not args or args[0].dtype != "c"):
            self.report(
                call,
                "numpy-to-jax",
                f"`{qualified}` of a matrix that may be real (NumPy's result is real where every eigenvalue is"
                " real, JAX's always complex)",
                "make the matrix complex first (`np.asarray(m, dtype=np.complex128)`), or use `eigh` for a"
                " Hermitian matrix",
            )
        arrays = [a for a in args if "array" in a.kinds]
        if qualified == "builtins.slice" and all(
            a.kinds == frozenset({"num"}) or a in (OTHER, NONE) for a in args
        ):
            return Val(frozenset({"other"}), index=_SLICE)
        if qualified in PURE_BUILTINS:
            if qualified == "builtins.range":
                return OTHER
            kind = PURE_BUILTINS[qualified]
            if qualified in ("builtins.abs", "builtins.round") and args and args[0].maybe_array:
                # ``abs(a)`` of an array is a new array (``round`` too, through ``ndarray.__round__``)
                kinds = (
                    frozenset({"array"})
                    if args[0].kinds == frozenset({"array"})
                    else frozenset({"array", "num"})
                )
                kind = _ufunc_kind("numpy.abs", [args[0].dtype]) if qualified == "builtins.abs" else None
                fresh = self._new(call, dtype=kind, shape=args[0].shape, device=args[0].device)
                return replace(fresh, kinds=kinds)
            if kind is None and args:
                kind = args[0].dtype if args[0].kinds == frozenset({"num"}) else None
            if qualified in ("builtins.str", "builtins.repr"):
                return TEXT
            # ``int(t)`` / ``len(t)`` of a tracer fail while tracing: their results are Python ints
            traced = qualified not in ("builtins.int", "builtins.len") and any(a.traced for a in args)
            return num(kind, traced=traced) if qualified != "builtins.print" else OTHER
        if qualified is not None and qualified.startswith("numpy."):
            return self._numpy(call, qualified, args, arrays, state)
        if qualified in ("math.sqrt", "math.exp", "math.log", "math.cos", "math.sin"):
            return num("f")
        for arg in args:
            self._escape(arg, state)
        self._forget_attributes(state)  # the callee may store or rebind any object's attributes
        if qualified in HOST_CALLS and HOST_CALLS[qualified]:  # ``quad``: (value, error), Python floats
            return Val(frozenset({"other"}), dtype=HOST_CALLS[qualified])
        returned = None
        if isinstance(func, cst.Name) and func.value not in self.locals and qualified == func.value:
            returned = self.returns.get(func.value)  # a module function annotated ``-> complex``: a scalar
        elif qualified is not None and "." in qualified:
            returned = self.returns.get(qualified)  # a package function (``opr.commutator``)
        if returned is not None:
            return returned_val(returned, f"`{_code(func)}(...)`")
        if qualified in ("builtins.list", "builtins.sorted"):
            return Val(frozenset({"list"}), frozenset({"?"}))
        if qualified in ("builtins.dict",):
            return Val(frozenset({"dict"}), frozenset({"?"}))
        if qualified in ("builtins.tuple", "builtins.zip", "builtins.enumerate", "builtins.map"):
            return Val(frozenset({"other"}), frozenset({"?"}))
        return UNKNOWN
