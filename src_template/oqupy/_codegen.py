"""Template-only markers read by ``codegen`` (never emitted into a generated package).

The template package runs as plain NumPy code: every marker here is a no-op at run time, so
``src_template`` can be imported and debugged directly.  ``python -m codegen build`` reads the
markers and replaces them:

``BACKEND``
    ``if BACKEND == "jax": ... else: ...`` keeps exactly one branch per generated package; the
    comparison never survives into generated code.
``kernel``
    ``@kernel`` marks a pure, module-level numerical function.  The NumPy package gets a plain
    function; the JAX package gets ``jax.jit``.  ``@kernel(static=("size",))`` declares static
    arguments (``static_argnames``; every other argument is traced) and ``donate=("mps",)`` donated
    ones (``donate_argnames``).
``host``
    ``@host`` marks a function or class that must run on the host with real NumPy/SciPy in both
    packages (integrals, validation, file I/O, degeneracy maps).  NumPy names inside it are not
    translated to ``jax.numpy``.
"""

from typing import Any, Callable, Tuple, TypeVar

BACKEND = "numpy"

_F = TypeVar("_F", bound=Callable[..., Any])


def kernel(func: Any = None, *, static: Tuple[str, ...] = (), donate: Tuple[str, ...] = ()) -> Any:
    """Mark ``func`` as a jit kernel with static and donated arguments (no-op in the template)."""
    del static, donate
    if func is None:
        return lambda f: f
    return func


def host(obj: _F) -> _F:
    """Mark ``obj`` as host-side NumPy/SciPy code (no-op in the template)."""
    return obj
