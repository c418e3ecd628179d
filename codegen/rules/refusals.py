"""Refusals: constructs whose meaning would differ between the NumPy and the JAX package.

Each rule only checks (it has no rewrite) and reports ``src_template/<file>:<line>:<col>``, the rule and
an idiom that translates safely.  They apply to code that reaches ``oqupy_jax`` outside ``@host``.
"""

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen import names
from codegen.flow import ufunc_inputs
from codegen.rules.base import Example, Idiom, Invalid, Rule


class _Refusal(Rule):
    """Checks only code that reaches the JAX package outside ``@host``."""

    BACKENDS = ("jax",)


class _FlowRefusal(_Refusal):
    """Reports the problems the flow analysis (:mod:`codegen.flow`) files under this rule's name, for each
    function and for the module's top-level code."""

    def check_Module(self, node: cst.Module) -> None:
        self._report_flow(node)

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._report_flow(node)

    def _report_flow(self, node: cst.FunctionDef | cst.Module) -> None:
        if not self.in_host or self.HOST:
            self.report_findings(node)

    HOST = False  # whether the rule also reports (some of) its findings in ``@host`` code


class ArgumentWrite(_FlowRefusal):
    """Refuse in-place writes into arguments: ``x[i] = v`` or ``x += v`` on a parameter, on a view or alias of
    one (``y = x[1:]``, ``y = np.atleast_1d(x)``), or on a parameter without an ``np.ndarray`` / ``list`` /
    ``dict`` / scalar annotation (it may be an array).  NumPy callers would see the change, JAX callers not.
    ``@host`` functions too: they get the caller's array as NumPy has it in ``oqupy_numpy``, and a read-only
    copy or view of a ``jax.Array`` in ``oqupy_jax``.

    Idiom: ``x = x.copy()`` first and return the result; annotate parameters.
    """

    HOST = True

    def renders(self, finding) -> bool:
        return not self.in_host or any(key == "argument" for key, _ in finding.facts)

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f(x: np.ndarray):
                x[0] = 1.0
                return x
            """,
            """
            import numpy as np


            def f(x: np.ndarray):
                y = np.array(x, dtype=np.float64)
                y[:1] = 1.0
                return y
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x[0] = 1.0
                return x
            """,
            "argument `x`",
        ),
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x += 1.0
                return x
            """,
            "argument `x`",
        ),
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                y = np.atleast_1d(x)
                y[0] = 1.0
                return y
            """,
            "argument `x` through `y`",
        ),
        Invalid(
            """
            def f(u):
                u += 1.0
                return u
            """,
            "unannotated argument `u`",
        ),
        Invalid(
            """
            import numpy as np
            from oqupy._codegen import host


            @host
            def normalise(x: np.ndarray):
                y = np.asarray(x)
                y[:] = y / y.sum()
            """,
            "in-place write to the argument `x` through `y`",
        ),
    )


class ViewWrite(_FlowRefusal):
    """Refuse a write into an array while another live name (or a container, attribute or call) may share
    its memory, and writes through views that may be read-only or not owned by the function.

    The analysis is flow-sensitive (facts per program point, joined at branches and loops) and alias-aware:
    ``w = a[1:]``, ``w = a``, ``a = w = np.zeros(3)``, ``lst = [a]`` all make ``a`` and ``w`` share memory;
    a write into either is refused while the other is used later.  A view whose base is dead may be
    written (``w = a[1:]; w[0] = 1; return w``).  Functions that may return views are listed in
    ``codegen/flow.py``; every NumPy function outside its fresh and writable-view tables counts as one.

    Idiom: take ``.copy()`` where the second name is bound, or bind a new name.
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                w = a[1:]
                a[:1] = 5.0
                return a, w
            """,
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                w = a[1:].copy()
                a[:1] = 5.0
                return a, w
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros((2, 2))
                b = a[0]
                b[1] = 5.0
                return a
            """,
            "write into `b` while `a` shares its memory",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(2)
                a.real[0] = 1.0
                return a
            """,
            "view `.real`",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                w = a[1:]
                a[1] = 5.0
                return w
            """,
            "write into `a` while `w` shares its memory",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.arange(3.0)
                w = np.flip(a)
                w[0] = 5.0
                return a, w
            """,
            "write into `w` while `a` shares its memory",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self):
                    self.x = np.zeros(3)
                    w = self.x[1:]
                    self.x[1] = 5.0
                    return w
            """,
            "`w` shares its memory",
        ),
    )


class AttributeWrite(_FlowRefusal):
    """Refuse in-place writes into an array held by an attribute (``self.x[i] = v``, ``self.x[i] += v``,
    ``self.x += v``, or a write through ``w = self.x``) unless this function allocated that array, stored it
    in the attribute itself, and no other live name, container or call can see it (then the write becomes
    ``self.x = self.x.at[i].set(v)``).  NumPy changes the array for every holder (the caller that passed it,
    another object), JAX would rebind one attribute.  An attribute counts as a container or a number (writes
    allowed) when the class annotates it (``self.cache: dict = {}``) or only ever assigns it literals.

    Idiom: build the new array in a local name and assign it to the attribute.
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            class A:
                def __init__(self, x: np.ndarray):
                    self.x = x

                def bump(self, v: float):
                    self.x[:1] += v
            """,
            """
            import numpy as np


            class A:
                def __init__(self, x: np.ndarray):
                    self.x = x

                def bump(self, v: float):
                    x = np.array(self.x, dtype=np.float64)
                    x[:1] += v
                    self.x = x
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            class A:
                def f(self, v: float):
                    self.x[1:] = v
            """,
            "the attribute `self.x`",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self):
                    w = self.x
                    w[0] = 1.0
                    return w
            """,
            "`w`, which may be the array of an attribute",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self, v: float):
                    self.total += v
            """,
            "`+=` on the attribute `self.total`",
        ),
        Invalid(
            """
            import numpy as np


            class A:
                def f(self, helper):
                    self.x = np.zeros(3)
                    helper(self)
                    self.x[0] = 1.0
                    return self.x
            """,
            "the attribute `self.x`",
        ),
    )


class ChainedWrite(_FlowRefusal):
    """Write ``a[i][j] = v`` as ``a[i, j] = v`` when every inner index is an integer (``a[i]`` is then a view of
    ``a``, so the two mean the same in NumPy); refuse other chained subscript writes (``a[1:3][0] = v``,
    ``a[idx][0] = v``), ``a[i] = b[j] = v``, ``del a[i]`` on arrays and subscripts in tuple targets
    (``a[0], a[1] = a[1], a[0]``: NumPy assigns one after the other, through views)."""

    NEEDS = ("<chained-write>",)
    MAY_BE_IDLE = True
    VALID = (
        Example(
            """
            import numpy as np


            def f(v: float):
                a = np.zeros((2, 3))
                a[1][-1] = v
                a[0][1] += 2.0
                return a
            """,
            jax="""
            import jax.numpy as jnp


            def f(v: float):
                a = jnp.zeros((2, 3))
                a = a.at[1, -1].set(v)
                a = a.at[0, 1].add(2.0)
                return a
            """,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flat: list[set[int]] = []

    def _enter(self, node: cst.Module | cst.FunctionDef) -> None:
        self.flat.append(set() if self.in_host else self.flow(node, cache=False).flattened)

    def visit_Module(self, node: cst.Module) -> None:
        self._enter(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.flat.pop()
        return updated_node

    def _flat(self, original: cst.CSTNode, target: cst.BaseExpression) -> cst.BaseExpression:
        if id(original) not in self.flat[-1] or not isinstance(target, cst.Subscript):
            return target
        inner: list[cst.SubscriptElement] = []
        base = target.value
        while isinstance(base, cst.Subscript):
            inner = [*base.slice, *inner]
            base = base.value
        self.fire()
        return target.with_changes(value=base, slice=[*inner, *target.slice])

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        if len(updated_node.targets) != 1:
            return updated_node
        target = updated_node.targets[0]
        return updated_node.with_changes(
            targets=[target.with_changes(target=self._flat(original_node, target.target))]
        )

    def leave_AugAssign(self, original_node: cst.AugAssign, updated_node: cst.AugAssign):
        return updated_node.with_changes(target=self._flat(original_node, updated_node.target))

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f():
                a = np.arange(4.0)
                a[0], a[1] = a[1], a[0]
                return a
            """,
            """
            import numpy as np


            def f():
                a = np.arange(4.0)
                first, second = a[1], a[0]
                a[0] = first
                a[1] = second
                return a
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros((2, 2))
                a[0:1][0] = 1.0
                return a
            """,
            "chained",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(2)
                del a[0]
                return a
            """,
            "`del`",
        ),
    )


class IndexSafety(_FlowRefusal):
    """Refuse writes whose index is not provably in bounds and free of duplicates.

    JAX drops out-of-bounds ``.at[]`` updates (NumPy raises ``IndexError``), and with repeated integer-array
    indices ``.at[].add`` accumulates where NumPy applies once.  Proven: slices, ``...``, ``None``; a literal
    within a literal shape (``np.zeros(4)``, ``a[3]``); a ``for i in range(n)`` variable (or ``-1 - i``,
    ``n - 1 - i``) on an axis created with length ``n`` (a literal or a name never rebound); a boolean mask
    of the array itself (``a[a > 0] = 0.0``) with a scalar value; tuples of such literals and slices, written
    out (``a[(0, -2)]``), bound to a name or held by a dict of such tuples (``a[regions["head"]]``).  A literal
    index on an axis of unknown length is checked against the shape in ``oqupy_jax``
    (``a.at[range(a.shape[0])[0]]``: the shape is static under ``jax.jit``, so it raises ``IndexError`` as NumPy
    does).  Everything else is refused.

    Idiom: index with such a loop variable or literal; build the result without writes (``np.where``,
    ``np.eye(1, n)[0]``, gathers); scatters with ``np.add.at`` in ``@host`` code.
    """

    VALID = (
        Example(
            """
            import numpy as np


            def unit(size: int, r: float):
                vector = np.zeros(size)
                vector[0] = 1.0
                table = np.zeros((3, 4))
                table[(0, -2)] = 1.0
                regions = {"head": (slice(0, 2), 1)}
                table[regions["head"]] += r
                return vector, table
            """,
            jax="""
            import jax.numpy as jnp


            def unit(size: int, r: float):
                vector = jnp.zeros(size)
                vector = vector.at[range(vector.shape[0])[0]].set(1.0)
                table = jnp.zeros((3, 4))
                table = table.at[(0, -2)].set(1.0)
                regions = {"head": (slice(0, 2), 1)}
                table = table.at[regions["head"]].add(r)
                return vector, table
            """,
        ),
    )
    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f(n: int, v: float):
                a = np.zeros(n)
                for i in range(n - 1):
                    a[i + 1] += v
                return a
            """,
            """
            import numpy as np


            def f(n: int, v: float):
                a = np.zeros(n)
                a[1:] += v
                return a
            """,
        ),
        Idiom(
            """
            import numpy as np


            def f(tensor: np.ndarray):
                grid = np.indices(tensor.shape)
                out = np.zeros(tensor.shape * 2)
                out[(*grid, *grid)] = tensor
                return out
            """,
            """
            import numpy as np


            def f(tensor: np.ndarray):
                grid = np.indices(tensor.shape * 2)
                half = len(tensor.shape)
                on_delta = np.all(grid[:half] == grid[half:], axis=0)
                return np.where(on_delta, tensor[tuple(grid[:half])], 0)
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(4)
                a[6] = 0.0
                return a
            """,
            "not provably within axis 0 of length `4`",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                idx = np.array([1, 1, 2])
                a[idx] += 1.0
                return a
            """,
            "integer array or list",
        ),
    )


class DtypeSafety(_FlowRefusal):
    """Refuse augmented operators where NumPy's in-place casting and JAX's rebinding disagree.

    ``a /= 2`` on an integer array raises in NumPy and gives floats in JAX; ``a += 1j`` on a real array;
    ``a *= b`` or ``a @= b`` that would change ``a``'s shape; ``a[3] /= 2`` on an integer array (NumPy casts
    the element back); ``x += v`` where ``x`` may be an array of unknown origin.  Element writes
    ``a[i] = v`` need a value kind that fits the array's dtype (``int`` < ``float`` < ``complex``).

    Idiom: give the array the result's dtype (``dtype=np.complex128``) or write ``a = a / 2`` (a new array).
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f():
                a = np.arange(4)
                a /= 2
                return a
            """,
            """
            import numpy as np


            def f():
                a = np.arange(4)
                a = a / 2
                return a
            """,
        ),
        Idiom(
            """
            import numpy as np


            def f():
                a = np.zeros(4)
                a[1] = 1j
                return a
            """,
            """
            import numpy as np


            def f():
                a = np.zeros(4, dtype=np.complex128)
                a[1] = 1j
                return a
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.arange(4)
                a /= 2
                return a
            """,
            "`/=` on a `i` array",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(4)
                a += 1j
                return a
            """,
            "a `c` value on a `f` array",
        ),
    )


class ClosureWrite(_FlowRefusal):
    """Refuse writes from a nested function into an array of the enclosing function, from a function into an
    array of the module, and into names declared ``global`` / ``nonlocal`` (``x = x.at[i].set(v)`` would bind a
    new local name in JAX, and the array itself cannot be written).

    Idiom: pass the array in and return the updated one.
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f():
                a = np.zeros(3)

                def g():
                    a[:1] = 1.0

                g()
                return a
            """,
            """
            import numpy as np


            def f():
                a = np.zeros(3)

                def g(b):
                    return np.concatenate([np.ones(1), b[1:]])

                a = g(a)
                return a
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)

                def g():
                    a[0] = 1.0

                g()
                return a
            """,
            "enclosing scope",
        ),
        Invalid(
            """
            import numpy as np

            TABLE = np.zeros(3)


            def f(v: float):
                TABLE[0] = v
                return TABLE
            """,
            "module-level array",
        ),
    )


class InplaceMethod(_FlowRefusal):
    """Refuse in-place array methods (``.fill``, ``.sort``, ``.resize``, ``.put``, ...) and ``np.copyto``.

    Two are rewritten in ``oqupy_jax`` instead, as statements on a local array: ``x.sort(...)`` becomes
    ``x = x.sort(...)`` (``jax.Array.sort`` returns the sorted copy) where ``x`` could be written in place (the
    rules of argument-write and view-write apply), and ``x.setflags(write=False)`` is dropped (JAX arrays are
    immutable; the analysis then treats ``x`` as read-only).

    A method call counts when its receiver may be an array by the flow analysis (``b = x.flatten(); b.sort()``
    included: ``jax.Array.sort()`` returns a sorted copy and drops it).
    """

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f(x: np.ndarray):
                b = np.zeros_like(x)
                b.fill(2.0)
                return b
            """,
            """
            import numpy as np


            def f(x: np.ndarray):
                return np.full_like(x, 2.0)
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                a.fill(2.0)
                return a
            """,
            "`.fill()`",
        ),
        Invalid(
            """
            import numpy as np


            def f(b: np.ndarray):
                a = np.zeros(3)
                np.copyto(a, b)
                return a
            """,
            "numpy.copyto",
        ),
    )

    NEEDS = ("<method-statement>",)
    MAY_BE_IDLE = True
    VALID = (
        Example(
            """
            import numpy as np


            def f(x: np.ndarray):
                times = x * 2.0
                times.sort()
                times.setflags(write=False)
                return times
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def f(x: jax.Array):
                times = x * 2.0
                times = jnp.sort(times)
                return times
            """,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.methods: list[dict[int, str]] = []

    def _enter(self, node: cst.Module | cst.FunctionDef) -> None:
        self.methods.append({} if self.in_host else self.flow(node, cache=False).rewritten_methods)

    def visit_Module(self, node: cst.Module) -> None:
        self._enter(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.methods.pop()
        return updated_node

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr):
        how = self.methods[-1].get(id(original_node)) if self.methods else None
        if how is None:
            return updated_node
        self.fire()
        if how == "drop":
            return cst.RemovalSentinel.REMOVE
        call = updated_node.value
        receiver = call.func.value
        AddImportsVisitor.add_needed_import(self.ctx.codemod, "jax.numpy", asname="jnp")
        sort = cst.Call(
            func=cst.Attribute(cst.Name("jnp"), cst.Name("sort")), args=[cst.Arg(receiver), *call.args]
        )
        return cst.Assign(targets=[cst.AssignTarget(receiver)], value=sort)

    def check_Call(self, node: cst.Call) -> None:
        if self.in_host:
            return
        func = node.func
        if self.qname(func) in names.INPLACE_FUNCTIONS:
            self.report(
                node, f"`{self.qname(func)}` writes into its argument", "build the result as a new array"
            )


class UnmodelledStatement(_FlowRefusal):
    """Refuse statements the array analysis does not model (``match``): it cannot tell what their cases bind
    or write, so no write after them could be proven.

    Idiom: write the cases with ``if`` / ``elif`` / ``else``.
    """

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(kind: str):
                a = np.zeros(3)
                match kind:
                    case "first":
                        a[0] = 1.0
                    case _:
                        pass
                return a
            """,
            "`match` statement",
        ),
    )
    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f(kind: str):
                a = np.zeros(3)
                match kind:
                    case "first":
                        a[0] = 1.0
                return a
            """,
            """
            import numpy as np


            def f(kind: str):
                a = np.zeros(3)
                if kind == "first":
                    a[0] = 1.0
                return a
            """,
        ),
    )


class OutArgument(_Refusal):
    """Refuse ``out=`` arguments of NumPy/SciPy functions, also given by position to a ufunc (``np.exp(a, b)``)."""

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(a: np.ndarray):
                y = np.zeros(3)
                np.exp(a, out=y)
                return y
            """,
            "`out=`",
        ),
        Invalid(
            """
            import numpy as np


            def f(a: np.ndarray):
                y = np.zeros(3)
                np.exp(a, y)
                return y
            """,
            "positional `out`",
        ),
    )

    def check_Call(self, node: cst.Call) -> None:
        if self.in_host or (self.qname(node.func) or "").split(".")[0] not in ("numpy", "scipy"):
            return
        inputs = ufunc_inputs(self.qname(node.func))
        positional = [arg for arg in node.args if arg.keyword is None]
        if inputs is not None and len(positional) > inputs:
            self.report(
                positional[inputs],
                f"positional `out` argument of the ufunc `{self.qname(node.func)}`",
                "assign the result: `y = np.exp(a)`",
            )
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                self.report(
                    arg, "`out=` writes into an existing array", "assign the result: `y = np.add(a, b)`"
                )


class DataDependentShape(_Refusal):
    """Refuse data-dependent output shapes inside kernels (``unique``, ``nonzero``, boolean masks)."""

    INVALID = (
        Invalid(
            """
            import numpy as np
            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray) -> np.ndarray:
                return np.unique(x)
            """,
            "data-dependent output shape",
        ),
        Invalid(
            """
            import numpy as np
            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray) -> np.ndarray:
                return x[x > 0]
            """,
            "boolean mask",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.masks: list[set[str]] = [set()]  # per function: names bound to boolean masks

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.masks.append(set())

    def check_leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.masks.pop()

    def check_leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if self._is_mask(node.value):
                    self.masks[-1].add(target.target.value)
                else:
                    self.masks[-1].discard(target.target.value)

    def _is_mask(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Comparison):
            return True
        if isinstance(expr, cst.Call) and self.qname(expr.func) in names.BOOLEAN_CALLS:
            return True
        return isinstance(expr, cst.Name) and expr.value in self.masks[-1]

    def check_Call(self, node: cst.Call) -> None:
        if self.in_host or not self.in_kernel:
            return
        qualified = self.qname(node.func)
        one_arg_where = qualified == "numpy.where" and len(node.args) == 1
        if qualified in names.DATA_DEPENDENT or one_arg_where:
            self.report(
                node,
                f"`{qualified}` has a data-dependent output shape inside a kernel",
                "compute it on the host before the kernel, or use `np.where(mask, a, b)`",
            )

    def check_Subscript(self, node: cst.Subscript) -> None:
        if self.in_host or not self.in_kernel or id(node) not in self.current_flow().array_subscripts:
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and self._is_mask(element.slice.value):
                self.report(node, "boolean mask index inside a kernel", "use `np.where(mask, value, x)`")
