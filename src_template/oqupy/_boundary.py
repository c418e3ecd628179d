"""The array boundary of the package: NumPy arrays for concrete values, JAX arrays only under tracing.

A value is *traced* while ``jax.jit``, ``jax.grad``, ``jax.jacfwd`` or ``jax.vmap`` runs a user function
through the package (``oqupy_jax`` only; ``oqupy_numpy`` never traces).  Host code that may meet traced values
(the systems, the step matrices, ``Dynamics``) asks :func:`array_namespace` for the array functions of its
inputs: ``numpy`` / SciPy for concrete values, ``jax.numpy`` / ``jax.scipy`` for traced ones; argument checks
look at what is concrete (shapes always, values only when concrete).  Results that reach the user pass
:func:`to_host`: a concrete result is a NumPy array in both packages.

Host code: the JAX names are in a backend block, so ``oqupy_numpy`` holds only the NumPy branch.
"""

from types import ModuleType
from typing import Any

import numpy as np
import scipy.linalg

from oqupy._codegen import BACKEND

if BACKEND == "jax":
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

__runs_on__ = "host"

__all__ = ["array_namespace", "expm", "is_traced", "to_host"]


def is_traced(*values: Any) -> bool:
    """True if any array in ``values`` (nested lists, tuples and dicts are searched) is a JAX tracer."""
    if BACKEND == "jax":
        return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(values))
    else:
        del values
        return False


def array_namespace(*values: Any) -> ModuleType:
    """``numpy`` if every array in ``values`` is concrete, ``jax.numpy`` if one is traced."""
    if BACKEND == "jax":
        if is_traced(*values):
            return jnp
    return np


def expm(matrices: Any) -> Any:
    """Matrix exponential of a (..., n, n) stack: SciPy for concrete values, ``jax.scipy`` for traced ones."""
    if BACKEND == "jax":
        if is_traced(matrices):
            return jsl.expm(matrices)
    return scipy.linalg.expm(matrices)


def to_host(value: Any) -> Any:
    """``value`` as a NumPy array if it is concrete (a JAX array is copied to the host); a tracer unchanged."""
    if is_traced(value):
        return value
    return np.asarray(value)
