"""Powers of the transfer map in the real basis on a block of real rows, every power recorded (issue 33).

A step through a uniform process tensor with a real form (:func:`oqupy._dynamics_setup.real_inputs`) is a real
map in the real basis of :func:`oqupy._dynamics_setup.real_basis`, and a complex state is two real rows through
it.  There the step is three products (:class:`RealStep`): the system matrix before the cell picks, for each of
the cell's ``K`` non-zero blocks ``(Z, Z')`` (a fixed index's matrix, the four quarters of a pair's block), the
rows of its input index ``Z``; each block multiplies its rows (one batched product); the matrix after the cell
sums them into the output indices.  :func:`real_powers` applies that step ``num_steps`` times to states
``s[x, n, chi]`` (the system leg, the rows, the bond) and records every power: one ``lax.scan`` in
``oqupy_jax``, a Python loop in ``oqupy_numpy``.  :mod:`oqupy.stationary` runs it for the exact powers in
``oqupy_jax`` (at these sizes a step is latency, and XLA's three real products have less of it than NumPy's
complex step, which ``oqupy_numpy`` keeps: ``docs/benchmarks.md``).
"""

from typing import NamedTuple, Tuple

import numpy as np

from oqupy._codegen import kernel
from oqupy._loops import scan

__runs_on__ = "device"

__all__ = ["RealStep", "real_powers", "real_step"]


class RealStep(NamedTuple):
    """One step ``s -> T s`` in the real basis as its cell's ``K`` non-zero blocks, all real."""

    gather: np.ndarray  # (K, d^2): the system matrix before the cell, read at each block's input index
    blocks: np.ndarray  # (K, chi, chi): [p, f]
    scatter: np.ndarray  # (d^2, K): the system matrix after the cell, read at each block's output index


def real_step(state: np.ndarray, step: RealStep) -> np.ndarray:
    """``T`` applied to every row of ``state[x, n, chi]``."""
    picked = np.tensordot(step.gather, state, axes=1)  # (K, n, chi)
    return np.tensordot(step.scatter, np.matmul(picked, step.blocks), axes=1)


@kernel(static=("num_steps",))
def real_powers(state: np.ndarray, step: RealStep, num_steps: int) -> np.ndarray:
    """``state`` and its ``num_steps`` successors under ``step``: ``(num_steps + 1, x, n, chi)``."""

    def advance(current: np.ndarray, _: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        following = real_step(current, step)
        return following, following

    _, later = scan(advance, state, np.arange(num_steps))
    return np.concatenate([state[None], later]) if num_steps > 0 else state[None]
