"""Refusals: constructs whose meaning would differ between the NumPy and the JAX package.

Each rule only checks (it has no rewrite) and reports ``src_template/<file>:<line>:<col>``, the rule and
an idiom that translates safely.  They apply to code that reaches ``oqupy_jax`` outside ``@host``.
"""

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen import names
from codegen.rules.base import Example, Idiom, Invalid
from codegen.rules.refusal_base import _FlowRefusal


class DtypeSafety(_FlowRefusal):
    """Refuse augmented operators where NumPy's in-place casting and JAX's rebinding disagree.

    ``a /= 2`` on an integer array raises in NumPy and gives floats in JAX; ``a += 1j`` on a real array;
    ``a @= b`` or ``a //= b`` with ``b`` of unproven shape (``a *= b`` becomes ``a = a.at[...].multiply(b)``, see
    ``inplace-update``, which raises as NumPy does where ``b`` does not fit ``a``); ``a[3] /= 2`` on an integer
    array (NumPy casts the element back); ``x += v`` where ``x`` may be an array of unknown origin. Element
    writes ``a[i] = v`` need a value kind that fits the array's dtype (``int`` < ``float`` < ``complex``).
    Kinds are sets: an ``np.ndarray`` argument (and a copy of it) may be integer, float or complex, ``x * 2.0``
    float or complex, and a write must fit every pair (a float into a maybe-integer array is truncated by both
    packages, so ``y = x.copy(); y[0] = 0.5`` translates, ``y += 0.5`` does not); a dtype may come from a module
    constant (``DTYPE = np.complex128``), one of the template's ``config`` module (``oqupy.config.NpDtype``) or
    a NumPy dtype string (``dtype="complex128"``).  Scalars are immutable, so ``x += v`` on one rebinds in both
    packages: ``np.sum(x)`` (one array, no ``axis``) and a call of a module function annotated ``-> complex``
    are scalars; ``np.abs(x)`` (any ufunc, or ``abs``) of an ``x`` that may be an array is not, and neither is
    an element ``a[i]`` of an array of unknown rank.

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
    VALID = (
        Example(
            """
            import numpy as np

            DTYPE = np.complex128


            def f(x: np.ndarray):
                y = x.copy()
                y[0] = 0.5
                y += 1
                a = np.zeros(2, dtype=DTYPE)
                a[1] = x[0]
                return y, a
            """,
            jax="""
            import jax
            import jax.numpy as jnp

            DTYPE = jnp.complex128


            def f(x: jax.Array):
                y = x.copy()
                y = jnp.asarray(y).at[range(y.shape[0])[0]].set(0.5)
                y += 1
                a = jnp.zeros(2, dtype=DTYPE)
                a = a.at[1].set(x[range(x.shape[0])[0]])
                return y, a
            """,
        ),
        Example(  # a dtype given as NumPy's string
            """
            import numpy as np


            def f(g):
                a = np.zeros(3, dtype="complex128")
                a[0] = g(0)
                return a
            """,
            jax="""
            import jax.numpy as jnp


            def f(g):
                a = jnp.zeros(3, dtype="complex128")
                a = a.at[0].set(g(0))
                return a
            """,
        ),
        Example(  # a package constant (``oqupy.config``), scalars from reductions and annotated functions
            """
            import numpy as np
            from oqupy.config import NpDtype


            def integral(a: float) -> complex:
                return a * 1j


            def f(x: np.ndarray, values: list):
                a = np.zeros(2, dtype=NpDtype)
                a[0] = values[0]
                total = np.sum(x)
                total += 1.0
                acc = integral(0.0)
                acc += integral(1.0)
                return a, total, acc
            """,
            jax="""
            import jax
            import jax.numpy as jnp

            from oqupy_jax.config import NpDtype


            def integral(a: float) -> complex:
                return a * 1j


            def f(x: jax.Array, values: list):
                a = jnp.zeros(2, dtype=NpDtype)
                a = a.at[0].set(values[0])
                total = jnp.sum(x)
                total += 1.0
                acc = integral(0.0)
                acc += integral(1.0)
                return a, total, acc
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


            def f(x: np.ndarray):
                y = x.copy()
                y += 0.5
                return y
            """,
            "a `f` value on a `i` array",
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
        Invalid(  # a ufunc (or ``abs``) of an unknown value is a new array or a number
            """
            import numpy as np


            def f(x):
                y = np.abs(x)
                z = y
                y += 1
                return z
            """,
            "`y += ...` where `y` may be an array",
        ),
    )


class InplaceMethod(_FlowRefusal):
    """Refuse in-place array methods (``.fill``, ``.sort``, ``.resize``, ``.put``, ...) and ``np.copyto``.

    Two are rewritten in ``oqupy_jax`` instead, as statements on a local array: ``x.sort(...)`` becomes
    ``x = jnp.sort(x, ...)`` (a sorted copy) where ``x`` could be written in place (the
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
