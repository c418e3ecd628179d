"""The write policy: bindings, subscript / attribute / ``.shape`` writes, augmented assignment, donation.

Each write the analysis cannot prove is filed as a :class:`~codegen.flow.values.Finding` under the rule that
renders it; proved writes go to ``owned_writes`` for the JAX rewrite.
"""

from dataclasses import replace
from typing import Optional

import libcst as cst

from codegen.flow.numpy_model import _ARRAY_ATTRIBUTES, AT_OPERATORS, AUG_SYMBOLS, _augmented_problem, _code
from codegen.flow.shapes import _names_axis, _unit_axes_only
from codegen.flow.skeleton import _argument, _calls, _names_in
from codegen.flow.values import (
    UNKNOWN,
    State,
    Val,
    _arith,
    field_name,
    forget_flat,
    num,
    numbers_tuple,
    untracked_attribute,
    value_kinds,
)


class Writes:
    """Mixin of :class:`~codegen.flow.interpreter.FunctionFlow`: bindings and writes."""

    # -- bindings and writes ---------------------------------------------------------------------------
    def _bind(self, target: cst.BaseExpression, value: Val, state: State, stmt: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self._forget_attributes(state, base=target.value)
            self._captured(target.value, value, state)
            forget_flat(state, target.value)
            state.names[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            if value.items is not None and len(value.items) == len(target.elements):
                if not any(isinstance(item, cst.StarredElement) for item in target.elements):
                    for item, element in zip(target.elements, value.items):
                        self._bind(item.value, element, state, stmt)
                    return
            if numbers_tuple(value):  # ``value, error = quad(...)``
                element = num(value.dtype)
            elif "array" not in value.kinds:
                element = UNKNOWN
            else:
                element = replace(value, owned=False, kinds=frozenset({"array", "num"}))
            for item in target.elements:
                self._bind(item.value, element, state, stmt)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, Val(frozenset({"list"}), value.bufs), state, stmt)
        else:
            self._assign(target, None, value, state, stmt)

    def _assign(
        self,
        target: cst.BaseExpression,
        value_node: Optional[cst.BaseExpression],
        value: Val,
        state: State,
        stmt: cst.CSTNode,
    ) -> None:
        if isinstance(target, cst.Name):
            if target.value in self.declared:
                self._escape(value, state)
            self._forget_attributes(state, base=target.value)
            self._captured(target.value, value, state)
            forget_flat(state, target.value)
            state.names[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            subscripts = [e.value for e in target.elements if isinstance(e.value, cst.Subscript)]
            if subscripts:
                self.report(
                    subscripts[0],
                    "chained-write",
                    "subscript inside a tuple target (NumPy assigns one after the other, through views)",
                    "assign each element in its own statement, from names bound first",
                )
            if value_node is not None:
                self._bind(target, value, state, stmt)
        elif isinstance(target, cst.Attribute):
            self.ev(target.value, state)
            if target.attr.value == "shape":
                self._shape_assign(target, value_node, state, stmt)
                return
            key = self._attribute_key(target, state)
            # ``o.attr = v`` may rebind the attribute of any object that ``o`` may be
            self._forget_attributes(state, attr=target.attr.value)
            if key is None:
                self._escape(value, state)
            else:
                state.names[key] = value
        elif isinstance(target, cst.Subscript):
            self._subscript_write(target, None, value_node, value, state, stmt)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, Val(frozenset({"list"}), value.bufs), state, stmt)

    def _captured(self, name: str, value: Val, state: State) -> None:
        """A list bound to a name that a nested function uses may be changed by any call: its kind is lost."""
        if name in self.skeleton.closure and value.obj.startswith("list@"):
            state.escaped.add(value.obj)

    def _shape_assign(
        self, target: cst.Attribute, value_node: Optional[cst.BaseExpression], state: State, stmt: cst.CSTNode
    ) -> None:
        base = target.value
        if not isinstance(base, cst.Name):
            return  # ``self.x.shape =``: refused by the shape-assign rule
        current = state.names.get(base.value)
        if current is None or not current.maybe_array:
            return  # not an array: NumPy semantics of whatever it is, as in the template
        if current.kinds != frozenset({"array"}) or not (current.owned or current.obj):
            self.report(
                target,
                "shape-assign",
                f"`.shape =` on `{base.value}`, which is not a local array (an argument, a view or unknown)",
                f"reshape a local copy: `y = {base.value}.reshape(s)`",
            )
            return
        # ``.shape =`` changes one array object: other names of the same memory keep their shapes, so it is
        # enough that no other live name, container or call holds the *object* (a fresh view made here)
        reason = self._exclusive(base.value, current, state, stmt) if not current.obj else None
        if current.obj and current.obj in state.escaped:
            reason = f"its array object is also held by a container, an attribute or a call (`{base.value}` escaped)"
        for other, val in sorted(state.names.items()):
            if reason is None and current.obj and other != base.value and val.obj == current.obj:
                if self._live(other, stmt):
                    reason = f"`{other}` is the same array object and is used later"
        one_axis = current.ndim == 1 or (current.shape is not None and len(current.shape) == 1)
        one_axis = one_axis or bool(current.flat) and _names_axis(value_node, current.flat)
        # inserting (or dropping) axes of size 1 is a view for every layout, so NumPy never refuses it
        unit_axes = _unit_axes_only(value_node, base.value)
        if reason is None and not current.contig and not one_axis and not unit_axes:
            reason = "may not be C-contiguous (NumPy refuses `.shape =` there, `reshape` copies)"
        if reason is not None:
            self.report(
                target,
                "shape-assign",
                f"`{base.value}.shape =` where `{base.value}` {reason}",
                f"bind a new name: `y = {base.value}.reshape(s)`",
            )
            return
        self.owned_writes.add(id(stmt))
        state.names[base.value] = replace(
            current, shape=self._shape_of(value_node, state), ndim=None, flat=""
        )

    def _subscript_write(
        self,
        target: cst.Subscript,
        op: Optional[str],
        value_node: Optional[cst.BaseExpression],
        value: Val,
        state: State,
        stmt: cst.CSTNode,
    ) -> None:
        flat = self._flattened(target, state)
        if flat is not None:
            self.synthetic[id(flat)] = target
            self.flattened.add(id(stmt))
            target = flat
        base = target.value
        index_vals = [self._index_val(e, state) for e in target.slice]
        key = self._attribute_key(base, state) if isinstance(base, cst.Attribute) else None
        if isinstance(base, cst.Name):
            name = base.value
            current = state.names.get(name)
        elif key is not None:  # ``self.x[i] = v``: the attribute is tracked like a name
            name, current = key, self._attribute_val(base, state)
        else:
            base_val = self.ev(base, state)
            self._escape(value, state)
            if "array" in base_val.kinds or not self._keyed(index_vals, state):
                self._foreign_write(target, base, base_val, state)
            return
        self.array_subscripts.add(id(target))
        if current is None:
            self._escape(value, state)
            if name in self.enclosing or name in self.declared:
                self.report(
                    target,
                    "closure-write",
                    f"write into `{name}` of an enclosing scope (JAX would rebind a local name)",
                    "pass the array in and return the updated one",
                )
            elif name in self.module_arrays:
                self.report(
                    target,
                    "closure-write",
                    f"write into the module-level array `{name}` (a JAX array cannot be written, and "
                    f"`{name} = {name}.at[...]` would bind a local name)",
                    "pass the array in and return the updated one",
                )
            return
        if not current.maybe_array:
            self._escape(value, state)  # a list or dict now holds the value
            self._list_changed(current, state)
            if current.index is not None and name in state.names:
                state.names[name] = replace(current, index=None)
            return
        if "array" not in current.kinds:  # unknown: an unannotated argument or an unknown call's result
            self._escape(value, state)
            if self._keyed(index_vals, state):
                return
            if "." in name or any(b.startswith("attr:") for b in current.bufs):
                self._attribute_problem(target, name, current, "write into")
            elif any(b.startswith("param:") for b in current.bufs):
                self.report(
                    target,
                    "argument-write",
                    f"write into `{name}`, {current.origin} (an array would change for NumPy callers only)",
                    f"annotate it (`np.ndarray`, `list`, `dict`); for an array copy first: `{name} = {name}.copy()`",
                    (("argument", name),),
                )
            return
        where = self._write_problem(name, current, state, stmt)
        if where is not None:
            return
        if self._index_problem(target, name, current, index_vals, op, value, state, stmt):
            return
        if self._dtype_problem(target, current, op, value):
            return
        if name in self.declared:
            self.report(
                target, "closure-write", f"write into the global/nonlocal `{name}`", "return the array"
            )
            return
        self.owned_writes.add(id(stmt))
        if (
            not current.device
        ):  # may be a NumPy array in oqupy_jax (made from an argument without a NumPy call)
            self.host_writes.add(id(stmt))
            state.names[name] = replace(state.names.get(name, current), device=True)

    def _keyed(self, index_vals: list[Optional[Val]], state: State) -> bool:
        """A write by string keys (``f.attrs["name"] = v``) into what is not known to be an array: no JAX array
        has string keys, so it is the object's ``__setitem__`` as written, in both packages (a mapping, an HDF5
        attribute set, a NumPy record field): like an unknown method, it may change any object's attributes."""
        if not index_vals or not all(v is not None and field_name(v) for v in index_vals):
            return False
        self._forget_attributes(state)
        return True

    def _flattened(self, target: cst.Subscript, state: State) -> Optional[cst.Subscript]:
        """``a[i][j]`` as ``a[i, j]`` when every inner index is an integer (then the inner subscripts are views of
        ``a`` and the write lands in ``a``); None otherwise."""
        inner: list[cst.SubscriptElement] = []
        base = target.value
        if not isinstance(base, cst.Subscript):
            return None
        while isinstance(base, cst.Subscript):
            for element in base.slice:
                if not isinstance(element.slice, cst.Index) or isinstance(element.slice.value, cst.Ellipsis):
                    return None
                val = self._ev(element.slice.value, state)
                if val.kinds != frozenset({"num"}) or val.dtype != "i":
                    return None
            inner = [*base.slice, *inner]
            base = base.value
        if not isinstance(base, (cst.Name, cst.Attribute)) or "array" not in self._ev(base, state).kinds:
            return None
        return cst.Subscript(value=base, slice=[*inner, *target.slice])

    def _write_problem(
        self, name: str, current: Val, state: State, stmt: cst.CSTNode, device: bool = True
    ) -> Optional[str]:
        """Report and return a reason when writing into ``name`` is not exclusive; None when it is."""
        if not current.owned and ("." in name or any(b.startswith("attr:") for b in current.bufs)):
            self._attribute_problem(stmt, name, current, "in-place write into")
            return f"`{name}` may hold an attribute's array"
        if not current.owned:
            params = sorted(b[len("param:") :] for b in current.bufs if b.startswith("param:"))
            if params:
                reason = f"`{name}` shares memory with the argument `{params[0]}`"
                self.report(
                    stmt,
                    "argument-write",
                    f"in-place write to the argument `{params[0]}`"
                    + (f" through `{name}`" if name != params[0] else "")
                    + " (NumPy callers would see it, JAX callers not)",
                    f"copy first: `{name} = {name}.copy()`, and return the result",
                    (("argument", params[0]),),
                )
                return reason
            origin = current.origin or "memory this function does not own"
            reason = f"`{name}` may be a (read-only) view of {origin}"
            self.report(
                stmt,
                "view-write",
                f"write through `{name}`, which may be a view of {origin}",
                f"take a copy first: `{name} = {name}.copy()`",
            )
            return reason
        reason = self._exclusive(name, current, state, stmt)
        if reason is not None:
            self.report(
                stmt,
                "view-write",
                f"write into `{name}` while {reason}",
                "take `.copy()` where the other name is bound, or bind a new name",
            )
        elif current.kinds != frozenset({"array"}):
            reason = f"`{name}` may or may not be an array here"
            self.report(stmt, "view-write", f"write into {reason}", "bind one kind of value per name")
        return reason

    def _attribute_problem(self, node: cst.CSTNode, name: str, current: Val, what: str) -> None:
        attrs = sorted(b[len("attr:") :] for b in current.bufs if b.startswith("attr:"))
        if "." in name:
            held = f"the attribute `{name}`, which may hold an array this function did not allocate"
            short = name.rsplit(".", 1)[-1]
        else:
            held = f"`{name}`, which may be the array of an attribute (`.{attrs[0] if attrs else '?'}`)"
            short = name
        self.report(
            node,
            "attribute-write",
            f"{what} {held} (NumPy changes it for every holder, JAX would rebind one name)",
            f"build a new array and assign it: `{short} = np.array({name}, dtype=...)`, write into `{short}`, then"
            f" `{name} = {short}`; or annotate the attribute where it is set (`self.{short}: list = []`)",
        )

    def _foreign_write(
        self, target: cst.Subscript, base: cst.BaseExpression, base_val: Val, state: State
    ) -> None:
        """A subscript write whose base is neither a name nor a tracked attribute."""
        if isinstance(base, cst.Subscript):
            if "array" in base_val.kinds:
                self.array_subscripts.add(id(target))
                self.report(
                    target, "chained-write", "chained subscript write", "use one subscript: `a[i, j] = v`"
                )
            return
        if not isinstance(base, cst.Attribute):
            return
        owner = self._ev(base.value, state)
        if "array" in owner.kinds:
            self.array_subscripts.add(id(target))
            self.report(
                target,
                "view-write",
                f"write through the view `.{base.attr.value}` of an array",
                "build the new array explicitly (e.g. `x = x + 1j * v`) instead of writing into a view",
            )
        elif base_val.maybe_array:
            self._attribute_problem(target, _code(base), base_val, "write into")

    def _exclusive(self, name: str, current: Val, state: State, stmt: cst.CSTNode) -> Optional[str]:
        if current.bufs & state.escaped:
            return f"its memory is also held by a container, an attribute or a call (`{name}` escaped)"
        for other, val in sorted(state.names.items()):
            if other != name and val.bufs & current.bufs and self._live(other, stmt):
                return f"`{other}` shares its memory and is used later"
        return None

    def _live(self, name: str, stmt: cst.CSTNode) -> bool:
        if self.module or self.all_live or "." in name or name in self.skeleton.closure:
            return True
        start, end = self.skeleton.span[id(stmt)]
        ranges = [(end + 1, 10**9)] + [self.skeleton.span[id(loop)] for loop in self.loops]
        return any(n == name and any(lo <= pos <= hi for lo, hi in ranges) for pos, n in self.skeleton.reads)

    def _augassign(self, node: cst.AugAssign, state: State) -> None:
        op = AUG_SYMBOLS[type(node.operator)]
        value = self.ev(node.value, state)
        target = node.target
        if isinstance(target, cst.Subscript):
            inner: cst.BaseExpression = target
            while isinstance(inner, cst.Subscript):  # read and written as one: the write's index is checked
                self.write_targets.add(id(inner))
                inner = inner.value
            self.ev(target, state)
            self._subscript_write(target, op, node.value, value, state, node)
            return
        if isinstance(target, cst.Attribute):
            key = self._attribute_key(target, state)
            if key is None:
                self._escape(value, state)
                current = self.ev(target, state)
                if "array" in self._ev(target.value, state).kinds:
                    self.report(
                        node,
                        "view-write",
                        f"`{_code(target)} {op}=` writes through the view `.{target.attr.value}` of an array",
                        "build the new array explicitly (e.g. `x = x + 1j * v`)",
                    )
                elif current.maybe_array:
                    self._attribute_problem(node, _code(target), current, f"`{op}=` on")
                return
            name, current = key, self._attribute_val(target, state)
        elif isinstance(target, cst.Name):
            name = target.value
            current = state.names.get(name)
            forget_flat(state, name)
        else:
            return
        if current is None:
            if name in self.enclosing or name in self.declared or name in self.module_arrays:
                self.report(
                    node,
                    "closure-write",
                    f"`{name} {op}=` on a name of an enclosing scope",
                    "return the value",
                )
            return
        if not current.maybe_array:
            self._list_changed(current, state)  # ``lst += [...]`` extends the list in place
            state.names[name] = _arith(current, value, op)
            return
        if "array" not in current.kinds and ("." in name or any(b.startswith("attr:") for b in current.bufs)):
            self._escape(value, state)
            self._attribute_problem(node, name, current, f"`{op}=` on")
            return
        if "array" not in current.kinds or current.kinds != frozenset({"array"}):
            self.report(
                node,
                "argument-write" if any(b.startswith("param:") for b in current.bufs) else "dtype-safety",
                f"`{name} {op}= ...` where `{name}` may be an array"
                + (f" ({current.origin})" if current.origin else "")
                + " (NumPy updates it in place, JAX rebinds the name)",
                f"write `{name} = {name} {op} ...` (a new value in both packages)",
                (("argument", name),) if any(b.startswith("param:") for b in current.bufs) else (),
            )
            return
        if self._write_problem(name, current, state, node) is not None:
            return
        whole = False  # ``x = x.at[...].add(v)``: JAX broadcasts ``v`` into ``x``'s shape or raises, as NumPy
        if op == "@":
            reason = "`@=` (the result's shape may differ)"
        elif "array" in value.kinds and (
            value.shape is None or value.shape != current.shape or "" in value.shape
        ):
            whole = op in AT_OPERATORS and "." not in name and name not in self.declared
            reason = (
                None
                if whole
                else "an array operand of unproven shape (NumPy refuses to change the shape in place, JAX rebinds)"
            )
        else:
            reason = None
        if reason is None:
            if current.dtype is None:
                reason = "an array whose dtype the analysis does not know"
            else:
                reason = _augmented_problem(op, current.dtype, value_kinds(value))
        if reason is not None:
            self.report(
                node,
                "dtype-safety",
                f"`{name} {op}= ...` with {reason}",
                f"write `{name} = {name} {op} ...` (a new array in both packages)",
            )
        elif whole:
            self.owned_writes.add(id(node))
            if not current.device:  # may be a NumPy array in oqupy_jax: ``jnp.asarray(x).at[...]``
                self.host_writes.add(id(node))
                state.names[name] = replace(current, device=True)

    # -- donation --------------------------------------------------------------------------------------
    def _check_donation(self, stmt: cst.CSTNode, state: State) -> None:
        if not self.donating:
            return
        rebound = set()
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                rebound.update(_names_in(target.target))
        for call in _calls(stmt):
            if not isinstance(call.func, cst.Name) or call.func.value not in self.donating:
                continue
            for position, param in self.donating[call.func.value]:
                arg = _argument(call, position, param)
                if isinstance(arg, cst.Name) and arg.value not in rebound and self._live(arg.value, stmt):
                    self.report(
                        call,
                        "kernel-jit",
                        f"`{arg.value}` is used after being donated to `{call.func.value}` (JAX deletes its buffer)",
                        f"rebind it from the result: `{arg.value} = {call.func.value}(...)`",
                    )

    # -- attributes ------------------------------------------------------------------------------------
    def _attribute_key(self, expr: cst.BaseExpression, state: State) -> Optional[str]:
        """``"obj.attr"`` for ``obj.attr`` where ``obj`` is a name that is not an array or a number."""
        if not isinstance(expr, cst.Attribute) or not isinstance(expr.value, cst.Name):
            return None
        if (
            expr.attr.value in _ARRAY_ATTRIBUTES
            or self.qname(expr) is not None
            and self.qname(expr).startswith(("numpy.", "math.", "scipy."))
        ):
            return None
        owner = state.names.get(expr.value.value)
        if owner is None or owner.kinds & {"array", "num"}:
            return None
        return f"{expr.value.value}.{expr.attr.value}"

    def _attribute_val(self, expr: cst.Attribute, state: State) -> Val:
        """The value of a keyed attribute: tracked, or what the object held before (memory not owned here)."""
        key = self._attribute_key(expr, state)
        assert key is not None
        if key in state.names:
            return state.names[key]
        base, attr = key.rsplit(".", 1)
        kinds = frozenset({"unknown"})
        if base == self.self_name and self.attributes is not None:
            kinds = self.attributes.get(attr, kinds)
        if kinds == frozenset({"num"}):
            return num(None)
        value = untracked_attribute(key, kinds)
        if value.maybe_array:  # ``o.attr`` may be the same object's attribute as a tracked ``self.attr``
            shared = [v.bufs for k, v in state.names.items() if "." in k and k.rsplit(".", 1)[1] == attr]
            value = replace(value, bufs=value.bufs.union(*shared))
        return value

    def _forget_attributes(self, state: State, base: str = "", attr: str = "") -> None:
        """Stop tracking attributes (of ``base``, named ``attr``, or all): their arrays count as escaped."""
        for key in [k for k in state.names if "." in k]:
            owner, name = key.rsplit(".", 1)
            if (not base or owner == base) and (not attr or name == attr):
                self._escape(state.names.pop(key), state)
