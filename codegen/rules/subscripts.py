"""Subscripts: writes whose index is not provably in bounds and free of duplicates are refused, reads not
provably in bounds are checked or NaN-filled (or refused), and a Python list of integers used as an index is
read through an array in ``oqupy_jax`` (chained writes: :mod:`codegen.rules.chained`)."""

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen.flow.numpy_model import _code
from codegen.rules.base import Example, Idiom, Invalid
from codegen.rules.inplace import _checked
from codegen.rules.refusal_base import _FlowRefusal

UNKNOWN_READ_IDIOM = (
    "annotate the value (`np.ndarray`: the reads are checked; `list`, `tuple`, `dict`: read as written)"
)


class IndexSafety(_FlowRefusal):
    """Refuse writes whose index is not provably in bounds and free of duplicates; make unprovable reads loud.

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

    Reads: out of bounds, NumPy raises ``IndexError`` and JAX clamps the index (``jnp.arange(3.0)[5]`` is
    ``2.0``, also for a Python int, also outside ``jax.jit``): a silent wrong value.  So every read of what
    is known to be an array (``a[...]`` outside ``@host``) goes through the same prover.  Proven reads stay as
    written (slices, ``...``, ``None``, masks, a literal or a list display of literals within a known axis length
    (``np.eye(1, n)[0]``: axis 0 has length 1), a ``range`` loop variable over the axis the array was created
    with).  An unproven integer that is a Python int (a literal, a ``range`` or ``enumerate`` counter,
    ``tuple.index``, an ``int`` argument outside kernels) on a known axis of a name is checked against the
    static shape, ``a[range(a.shape[0])[i]]``: exactly NumPy's ``IndexError``, at trace time under ``jax.jit``,
    at no run-time cost.  Anything else (a traced integer such as a kernel's argument or an array's element, an
    integer array or list, an index of unknown kind, an axis after ``...``) cannot be checked while tracing and
    reads ``a.at[...].get(mode="fill")``: JAX's modes for ``get`` are ``promise_in_bounds`` (the default, which
    clamps), ``clip`` (clamps), ``drop`` / ``fill`` (out-of-bounds elements read ``fill_value``, by default NaN
    for inexact dtypes, the most negative integer for signed ones, ``True`` for booleans); there is no raising
    mode.  NaN is loud (it reaches every result it touches); the integer fill value is not, so a read that needs
    ``fill`` from an array known to be integer or boolean is refused, and one from an array of unknown dtype (an
    ``np.ndarray`` argument) is NaN-filled only when it is inexact at run time.  Values of unknown kind (an
    unannotated argument, an attribute, a container's element, what an unannotated function returns; annotate
    a parameter, a local where it is bound, or the function's return: ``-> Tuple[np.ndarray, List[int]]``,
    ``-> Optional[int]`` narrowed by ``if k is not None``) may be lists, tuples or dicts and are read as written; each such read by an integer is listed as a
    note (``ModuleContext.notes``; ``python tools/codegen_corpus.py template`` prints the template's), since a
    ``jax.Array`` there would clamp.  Reads that cannot go out of bounds are not listed: slices, ``...``,
    ``None``, a field name, ``x.shape[k]`` (a tuple of ints in both packages), a ``typing`` subscript.

    Idiom: index with such a loop variable or literal; build the result without writes (``np.where``,
    ``np.eye(1, n)[0]``, gathers); scatters with ``np.add.at`` in ``@host`` code.  For reads: declare a kernel's
    integer argument static, index by a ``range`` variable, or clamp explicitly (``np.take(a, i, mode="clip")``,
    the same in both packages).
    """

    NEEDS = ("<subscript>",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.reads: list[
            dict
        ] = []  # per enclosing function: id of a read -> its verdict (codegen.flow.reads)

    def _enter(self, node: cst.Module | cst.FunctionDef) -> None:
        self.reads.append({} if self.in_host else self.flow(node, cache=False).reads)

    def _report_flow(self, node: cst.FunctionDef | cst.Module) -> None:
        super()._report_flow(node)
        if not self.in_host:
            for read in self.flow(node).unknown_reads.values():
                self.note(
                    read,
                    f"read `{_code(read)}` of a value of unknown kind, left as written (out of bounds a jax.Array "
                    "clamps where NumPy raises IndexError)",
                    UNKNOWN_READ_IDIOM,
                )

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
        return cst.Call(
            func=cst.Attribute(value=at, attr=cst.Name("get")),
            args=[mode],
            lpar=updated_node.lpar,
            rpar=updated_node.rpar,
        )

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
                        out = out.at[2 * i, j].set(values[range(values.shape[0])[i]])
                        out = out.at[2 * i + 1, j].set(values[range(values.shape[0])[i]] + 1.0)
                return out
            """,
        ),
        Example(  # reads: proven, checked against the static shape (Python ints), NaN-filled (inexact arrays)
            """
            import numpy as np

            from oqupy._codegen import kernel


            def reads(x: np.ndarray, n: int, k: int):
                grid = np.arange(4.0)
                table = np.zeros((3, n))
                total = grid[3] + grid[-4] + grid[1:3].sum() + grid[[0, -1]].sum()
                for i in range(n):
                    total = total + table[2, i]
                return total + x[0] + x[k] + np.eye(1, n)[0]


            @kernel
            def pick(x: np.ndarray, values: np.ndarray, k: int):
                scaled = values * 1.0
                return scaled[k], x[0]
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def reads(x: jax.Array, n: int, k: int):
                grid = jnp.arange(4.0)
                table = jnp.zeros((3, n))
                total = grid[3] + grid[-4] + grid[1:3].sum() + grid[jnp.asarray([0, -1])].sum()
                for i in range(n):
                    total = total + table[2, i]
                return total + x[range(x.shape[0])[0]] + x[range(x.shape[0])[k]] + jnp.eye(1, n)[0]


            @jax.jit
            def pick(x: jax.Array, values: jax.Array, k: int):
                scaled = values * 1.0
                return scaled.at[k].get(mode="fill"), x[range(x.shape[0])[0]]
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
                return vector, table, vector[size - 1]
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
                return vector, table, vector[range(vector.shape[0])[size - 1]]
            """,
        ),
    )
    IDIOMS = (
        Idiom(  # a static argument is a Python int: checked against the static shape
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray, k: int):
                steps = np.arange(4)
                return steps[k] * x
            """,
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel(static=("k",))
            def f(x: np.ndarray, k: int):
                steps = np.arange(4)
                return steps[k] * x
            """,
        ),
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
        Invalid(  # a traced index into an integer array: JAX would clamp it, and its fill value is a number
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray, k: int):
                steps = np.arange(4)
                return steps[k] * x
            """,
            "read `steps[k]` with `k`, an integer not provably within axis 0, on a `i` array",
        ),
        Invalid(  # a gather from an integer array
            """
            import numpy as np


            def f(idx: np.ndarray):
                return np.arange(4)[idx]
            """,
            "`idx`, an integer array or list, on a `i` array",
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
                grid = np.arange(4.0)
                ends = grid[[0, -1]]
                idx = [0, 2]
                pairs = x[idx, 1]
                every_third = x[[3 * i for i in range(n)]]
                return ends, pairs, every_third
            """,
            numpy="""
            import numpy as np


            def samples(x: np.ndarray, n: int):
                grid = np.arange(4.0)
                ends = grid[[0, -1]]
                idx = [0, 2]
                pairs = x[idx, 1]
                every_third = x[[3 * i for i in range(n)]]
                return ends, pairs, every_third
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def samples(x: jax.Array, n: int):
                grid = jnp.arange(4.0)
                ends = grid[jnp.asarray([0, -1])]
                idx = [0, 2]
                pairs = jnp.asarray(x).at[jnp.asarray(idx), 1].get(mode="fill")
                every_third = jnp.asarray(x).at[jnp.asarray([3 * i for i in range(n)])].get(mode="fill")
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
