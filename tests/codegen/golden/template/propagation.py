"""A small module that exercises every rewrite rule (golden test input)."""

from typing import Callable

import numpy as np
import scipy.linalg
from scipy import integrate

from oqupy import config
from oqupy._codegen import BACKEND, host, kernel
from oqupy._types import Matrix


@host
def integrate_rate(rate: Callable[[float], float], t_end: float) -> float:
    """Host-side SciPy integration; NumPy stays NumPy here."""
    return integrate.quad(np.vectorize(rate), 0.0, t_end)[0]


@kernel(static=("num_steps",))
def propagate(state: np.ndarray, propagators: np.ndarray, num_steps: int) -> np.ndarray:
    """Apply ``num_steps`` propagators to a vectorised state."""
    states = np.zeros((num_steps + 1, state.shape[0]), dtype=np.complex128)
    states[:1] = state
    for step in range(num_steps):
        states[step + 1 : step + 2, :] = propagators[step] @ states[step]
    states[:, :1] *= 1.0
    return states.astype(config.NpDtype)


def sampled_propagators(hamiltonian: Callable[[float], Matrix], times: np.ndarray, dt: float) -> np.ndarray:
    """expm(-i H(t) dt) for every time."""
    matrices = np.vectorize(hamiltonian)(times)
    stack = np.stack([scipy.linalg.expm(-1j * dt * h) for h in matrices])
    flat = np.zeros(stack.size, dtype=np.complex128)
    flat[...] = stack.reshape(-1)
    flat.shape = stack.shape
    return flat


def spectrum(hamiltonian: np.ndarray) -> np.ndarray:
    """Eigenvalues of a Hermitian matrix."""
    return np.linalg.eigvalsh(hamiltonian)


def bucket(n: int) -> int:
    """Bond dimension used for compilation."""
    if BACKEND == "jax":
        return 1 << max(n - 1, 0).bit_length()
    else:
        return n
