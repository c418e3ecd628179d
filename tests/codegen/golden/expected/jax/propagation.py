"""A small module that exercises every rewrite rule (golden test input)."""

from functools import partial
from typing import Callable

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from scipy import integrate

from oqupy_jax import config
from oqupy_jax._types import Matrix


def integrate_rate(rate: Callable[[float], float], t_end: float) -> float:
    """Host-side SciPy integration; NumPy stays NumPy here."""
    return integrate.quad(np.vectorize(rate, signature="()->()"), 0.0, t_end)[0]


@partial(jax.jit, static_argnames=("num_steps",))
def propagate(state: jax.Array, propagators: jax.Array, num_steps: int) -> jax.Array:
    """Apply ``num_steps`` propagators to a vectorised state."""
    states = jnp.zeros((num_steps + 1, state.shape[0]), dtype=jnp.complex128)
    states = states.at[:1].set(state)
    for step in range(num_steps):
        states = states.at[step + 1 : step + 2, :].set(
            propagators[range(propagators.shape[0])[step]] @ states[step]
        )
    states = states.at[:, :1].multiply(1.0)
    return states.astype(config.NpDtype)


def sampled_propagators(hamiltonian: Callable[[float], Matrix], times: jax.Array, dt: float) -> jax.Array:
    """expm(-i H(t) dt) for every time."""
    matrices = jnp.vectorize(hamiltonian, signature="()->(m,m)")(times)
    stack = jnp.stack([jsl.expm(-1j * dt * h) for h in matrices])
    flat = jnp.zeros(stack.size, dtype=jnp.complex128)
    flat = flat.at[...].set(stack.reshape(-1))
    flat = flat.reshape(stack.shape)
    return flat


def spectrum(hamiltonian: jax.Array) -> jax.Array:
    """Eigenvalues of a Hermitian matrix."""
    return jnp.linalg.eigvalsh(hamiltonian)


def bucket(n: int) -> int:
    """Bond dimension used for compilation."""
    return 1 << max(n - 1, 0).bit_length()
