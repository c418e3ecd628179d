"""Facts the transformer gathers beyond one function: what the package's functions return, what a module's
private functions are passed (issue 32: OQuPy's ``system.py`` and ``process_tensor.py`` as they are)."""

import textwrap

from codegen.analysis import ModuleContext
from codegen.pipeline import function_returns, translate

OPERATORS = textwrap.dedent(
    """
    import numpy as np
    from numpy import ndarray


    def commutator(operator: ndarray) -> ndarray:
        return np.kron(operator, np.eye(2)) - np.kron(np.eye(2), operator.T)


    def trace(operator: ndarray) -> complex:
        return complex(np.trace(operator))


    @staticmethod
    def decorated(x) -> ndarray:
        return x


    def unannotated(x):
        return x
    """
)

SYSTEM = textwrap.dedent(
    """
    import numpy as np

    from oqupy import operators as opr


    def liouvillian(hamiltonian, gammas, lindblad_operators):
        result = -1j * opr.commutator(hamiltonian)
        for gamma, op in zip(gammas, lindblad_operators):
            result += gamma * opr.commutator(op)
        return result
    """
)


def test_function_returns_lists_the_annotated_undecorated_functions():
    assert function_returns(OPERATORS, "oqupy.operators") == (
        ("oqupy.operators.commutator", "array"),
        ("oqupy.operators.trace", "c"),
    )


def translated(returns=()):
    ctx = ModuleContext("oqupy/system.py", "oqupy.system", "jax", "oqupy_jax", returns=returns)
    return translate(SYSTEM, ctx), ctx


def test_a_package_function_annotated_to_return_an_array_makes_its_product_a_local_array():
    output, ctx = translated(function_returns(OPERATORS, "oqupy.operators"))
    assert output is not None, [str(d) for d in ctx.diagnostics]
    assert "result = jnp.asarray(result).at[...].add(gamma * opr.commutator(op))" in output


def test_without_the_package_facts_the_call_may_return_anything_and_the_update_is_refused():
    output, ctx = translated()
    assert output is None
    assert any("[dtype-safety]" in str(d) and "may be an array" in str(d) for d in ctx.diagnostics)


def test_a_private_function_passed_on_as_a_value_gets_no_call_site_facts():
    source = textwrap.dedent(
        """
        import h5py


        class Store:
            def create(self, filename: str):
                self._f = h5py.File(filename, "w")
                self._data = self._f.create_dataset("data", (4,), dtype="f8")

            def put(self, step: int, value: float):
                _write(step, self._data, value)
                callback = _write
                return callback


        def _write(step, data, value):
            data[step] = value
        """
    )
    ctx = ModuleContext("oqupy/store.py", "oqupy.store", "jax", "oqupy_jax")
    assert translate(source, ctx) is None
    assert any("[argument-write]" in str(d) for d in ctx.diagnostics)


def test_reads_of_values_of_unknown_kind_are_left_as_written_and_noted():
    """Hole 1 of issue 32 where the transformer cannot close it: ``u[i]`` of an unannotated argument may read a
    list (which raises out of bounds) or a ``jax.Array`` (which clamps), so it is left as written and listed in
    ``ModuleContext.notes``.  Reads that cannot go out of bounds or are of known kinds are not listed: slices and
    ``None``, ``.shape[k]`` (a tuple of ints in both packages), a field name, a type, an annotated list, an
    annotated array (whose reads are checked), a local annotated where it is bound (``row: tuple = u.rows``)."""
    source = textwrap.dedent(
        """
        from typing import Any, Callable

        import numpy as np

        Kernel = Callable[..., Any]


        def f(u, i: int, names: list, a: np.ndarray):
            first = u[i]
            column = u[:, None]
            length = u.shape[0]
            field = u["key"]
            name = names[i]
            row: tuple = u.rows
            return first, column, length, field, name, a[0], row[i]
        """
    )
    ctx = ModuleContext("oqupy/reads.py", "oqupy.reads", "jax", "oqupy_jax")
    output = translate(source, ctx)
    assert output is not None and not ctx.diagnostics
    assert [(note.line, note.rule) for note in sorted(set(ctx.notes))] == [(10, "index-safety")]
    assert "`u[i]`" in ctx.notes[0].message and "annotate" in ctx.notes[0].idiom
    assert "a[range(a.shape[0])[0]]" in output  # the annotated array's read is checked, not noted


def test_annotated_returns_give_containers_tuples_and_optionals():
    """What a call returns, from its function's annotation (same module or the package's, by qualified name):
    ``a, b = pair(n)`` with ``-> Tuple[np.ndarray, List[int]]`` binds an array and a list; a ``@host``
    function's ``-> List[np.ndarray]`` is a list; ``-> Optional[int]`` is an int or None, and ``if k is not
    None:`` leaves an int.  So the array's reads are checked (``a[range(a.shape[0])[k]]``), the lists' are read
    as written, and nothing is listed as of unknown kind; a kernel's scalar stays unknown (a 0-d array)."""
    source = textwrap.dedent(
        """
        from typing import List, Optional, Tuple

        import numpy as np

        from oqupy._codegen import host, kernel


        def pair(n: int) -> Tuple[np.ndarray, List[int]]:
            return np.zeros(n), [0] * n


        def first(x: np.ndarray) -> Optional[int]:
            return None


        @host
        def sites(n: int) -> List[np.ndarray]:
            return [np.zeros(2)] * n


        @kernel
        def traced(x: np.ndarray) -> Tuple[np.ndarray, int]:
            return x, 0


        def use(n: int, i: int, x: np.ndarray):
            a, b = pair(n)
            k = first(a)
            if k is None:
                raise ValueError("none")
            _, j = traced(x)
            return a[k] + b[k] + sites(n)[i] + a[i] + j
        """
    )
    ctx = ModuleContext("oqupy/returns.py", "oqupy.returns", "jax", "oqupy_jax")
    output = translate(source, ctx)
    assert output is not None and not ctx.diagnostics and not ctx.notes
    assert "a[range(a.shape[0])[k]] + b[k] + sites(n)[i] + a[range(a.shape[0])[i]]" in output
    returns = dict(function_returns(source, "oqupy.returns"))
    assert returns == {
        "oqupy.returns.pair": "tuple:array,list",
        "oqupy.returns.first": "optional:i",
        "oqupy.returns.sites": "list",
        "oqupy.returns.traced": "tuple:array,unknown",
    }
    # without the narrowing, ``k`` may be None: an index of unknown kind, read with NaN out of bounds
    unguarded = source.replace('    if k is None:\n        raise ValueError("none")\n', "")
    ctx = ModuleContext("oqupy/returns.py", "oqupy.returns", "jax", "oqupy_jax")
    assert 'jnp.asarray(a).at[k].get(mode="fill")' in translate(unguarded, ctx)
    # ``None`` is its own value now (what ``Optional`` narrows away); ``slice(None, 2)`` is still a slice
    written = (
        "import numpy as np\n\n\ndef g():\n    a = np.zeros(4)\n    a[slice(None, 2)] = 1.0\n    return a\n"
    )
    ctx = ModuleContext("oqupy/returns.py", "oqupy.returns", "jax", "oqupy_jax")
    assert "a = a.at[slice(None, 2)].set(1.0)" in translate(written, ctx) and not ctx.diagnostics
