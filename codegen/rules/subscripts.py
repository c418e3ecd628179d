"""Subscripts: writes whose index is not provably in bounds and free of duplicates are refused, a Python list of
integers used as an index is read through an array in ``oqupy_jax``, and ``a[i][j] = v`` is written ``a[i, j] = v``."""

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen.rules.base import Example, Idiom, Invalid
from codegen.rules.inplace import _checked
from codegen.rules.refusal_base import _FlowRefusal


class IndexSafety(_FlowRefusal):
    """Refuse writes whose index is not provably in bounds and free of duplicates.

    JAX drops out-of-bounds ``.at[]`` updates (NumPy raises ``IndexError``), and with repeated integer-array
    indices ``.at[].add`` accumulates where NumPy applies once.  Proven: slices, ``...``, ``None``; a literal
    within a literal shape (``np.zeros(4)``, ``a[3]``); a ``for i in range(n)`` variable (or ``-1 - i``,
    ``n - 1 - i``) on an axis created with length ``n`` (a literal or a name never rebound); ``a * i + b`` with
    ``0 <= a <= k`` and ``0 <= b < k`` on an axis created with length ``k * n`` (``2 * i + 1`` in ``2 * n``); a boolean mask
    of the array itself (``a[a > 0] = 0.0``) with a scalar value; tuples of such literals and slices, written
    out (``a[(0, -2)]``), bound to a name or held by a dict of such tuples (``a[regions["head"]]``).  A literal
    index on an axis of unknown length is checked against the shape in ``oqupy_jax``
    (``a.at[range(a.shape[0])[0]]``: the shape is static under ``jax.jit``, so it raises ``IndexError`` as NumPy
    does).  Everything else is refused.

    Idiom: index with such a loop variable or literal; build the result without writes (``np.where``,
    ``np.eye(1, n)[0]``, gathers); scatters with ``np.add.at`` in ``@host`` code.
    """

    NEEDS = ("<subscript>",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.reads: list[dict] = []  # per enclosing function: id of a read -> its verdict (codegen.flow.reads)

    def _enter(self, node: cst.Module | cst.FunctionDef) -> None:
        self.reads.append({} if self.in_host else self.flow(node, cache=False).reads)

    def visit_Module(self, node: cst.Module) -> None:
        self._enter(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.reads.pop()
        return updated_node

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript):
        verdict = self.reads[-1].get(id(original_node)) if self.reads else None
        if verdict is None or not (verdict.checks or verdict.fill):
            return updated_node
        self.fire()
        if verdict.checks:  # ``a[range(a.shape[0])[i]]``: IndexError where NumPy raises it
            return _checked(updated_node, verdict.checks)
        base = updated_node.value
        if verdict.host:  # an array that may be NumPy's (made from an argument): ``.at`` needs a jax.Array
            AddImportsVisitor.add_needed_import(self.ctx.codemod, "jax.numpy", asname="jnp")
            base = cst.Call(func=cst.Attribute(cst.Name("jnp"), cst.Name("asarray")), args=[cst.Arg(base)])
        at = cst.Subscript(value=cst.Attribute(value=base, attr=cst.Name("at")), slice=updated_node.slice)
        eq = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        mode = cst.Arg(cst.SimpleString('"fill"'), keyword=cst.Name("mode"), equal=eq)
        return cst.Call(func=cst.Attribute(value=at, attr=cst.Name("get")), args=[mode], lpar=updated_node.lpar, rpar=updated_node.rpar)

    VALID = (
        Example(  # two rows per step: ``2 * i`` and ``2 * i + 1`` within ``2 * n``
            """
            import numpy as np


            def pairs(n: int, values: np.ndarray):
                out = np.zeros((2 * n, 3), dtype=np.complex128)
                for i in range(0, n):
                    for j in range(3):
                        out[2 * i][j] = values[i]
                        out[2 * i + 1, j] = values[i] + 1.0
                return out
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def pairs(n: int, values: jax.Array):
                out = jnp.zeros((2 * n, 3), dtype=jnp.complex128)
                for i in range(0, n):
                    for j in range(3):
                        out = out.at[2 * i, j].set(values[i])
                        out = out.at[2 * i + 1, j].set(values[i] + 1.0)
                return out
            """,
        ),
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
        Invalid(  # ``2 * i + 2`` reaches ``2 * n`` at the last step
            """
            import numpy as np


            def f(n: int):
                a = np.zeros((2 * n, 3))
                for i in range(n):
                    a[2 * i + 2, 0] = 1.0
                return a
            """,
            "not provably within axis 0 of length `2*n`",
        ),
    )


class ListIndex(_FlowRefusal):
    """Read by a Python list of integers through an array in ``oqupy_jax``; refuse other lists as indices.

    JAX refuses lists as indices (``a[[0, 2]]``, ``idx = [0, 2]; a[idx]``, ``a[[3 * i for i in range(n)]]``), so
    ``oqupy_jax`` reads ``a[jnp.asarray(idx)]``.  That is NumPy's ``a[idx]`` only for a list of integers
    (``jnp.asarray([])`` is a float array, a list of booleans a mask), so the list must be built in this
    function from integers (a display or a comprehension) and be left as it is: not changed (``append``,
    ``idx[0] = v``, ``+=``, also through another name), passed to a call, stored, or used by a nested function.
    Writes by a list (``a[idx] = v``) are index-safety's: refused.

    Idiom: build the list from integers where it is used, or index with an integer array
    (``a[np.asarray(idx, dtype=int)]``).
    """

    NEEDS = ("<list>",)
    MAY_BE_IDLE = True  # the template may read by no list; the rewrite is the JAX form of a NumPy read

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.lists: list[set[int]] = []  # per enclosing function: ids of the list indices to read as arrays

    def _enter(self, node: cst.Module | cst.FunctionDef) -> None:
        self.lists.append(set() if self.in_host else self.flow(node, cache=False).list_indices)

    def visit_Module(self, node: cst.Module) -> None:
        self._enter(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.lists.pop()
        return updated_node

    def leave_Index(self, original_node: cst.Index, updated_node: cst.Index):
        if not self.lists or id(original_node.value) not in self.lists[-1]:
            return updated_node
        self.fire()
        AddImportsVisitor.add_needed_import(self.ctx.codemod, "jax.numpy", asname="jnp")
        array = cst.Call(
            func=cst.Attribute(cst.Name("jnp"), cst.Name("asarray")), args=[cst.Arg(updated_node.value)]
        )
        return updated_node.with_changes(value=array)

    VALID = (
        Example(  # lists of integers as indices: read through an integer array in oqupy_jax
            """
            import numpy as np


            def samples(x: np.ndarray, n: int):
                ends = x[[0, -1]]
                idx = [0, 2]
                pairs = x[idx, 1]
                every_third = x[[3 * i for i in range(n)]]
                return ends, pairs, every_third
            """,
            numpy="""
            import numpy as np


            def samples(x: np.ndarray, n: int):
                ends = x[[0, -1]]
                idx = [0, 2]
                pairs = x[idx, 1]
                every_third = x[[3 * i for i in range(n)]]
                return ends, pairs, every_third
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def samples(x: jax.Array, n: int):
                ends = x[jnp.asarray([0, -1])]
                idx = [0, 2]
                pairs = x[jnp.asarray(idx), 1]
                every_third = x[jnp.asarray([3 * i for i in range(n)])]
                return ends, pairs, every_third
            """,
        ),
    )
    INVALID = (
        Invalid(  # ``jnp.asarray([])`` is a float array: an empty list is no integer index
            """
            import numpy as np


            def f(x: np.ndarray):
                return x[[]]
            """,
            "Python list whose elements are not provably integers",
        ),
        Invalid(  # the list was changed: its elements need not be integers any more
            """
            import numpy as np


            def f(x: np.ndarray, t: float):
                idx = [0, 1]
                alias = idx
                alias.append(t)
                return x[idx]
            """,
            "Python list whose elements are not provably integers",
        ),
        Invalid(  # a list of unknown elements (an argument)
            """
            import numpy as np


            def f(x: np.ndarray, idx: list):
                return x[idx]
            """,
            "Python list whose elements are not provably integers",
        ),
    )
    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f(x: np.ndarray, idx: list):
                return x[idx]
            """,
            """
            import numpy as np


            def f(x: np.ndarray, idx: list):
                return x[np.asarray(idx, dtype=int)]
            """,
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

    def leave_AnnAssign(self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign):
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
