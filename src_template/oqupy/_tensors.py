"""Tensor utilities of OQuPy's ``util`` module (re-exported there): Kronecker-delta embedding and reshaping.

Device code: ``jax.numpy`` (and a jitted scatter) in ``oqupy_jax``, NumPy in ``oqupy_numpy``.
"""

from typing import Sequence, Tuple

import numpy as np

from oqupy._codegen import kernel

__runs_on__ = "device"

__all__ = ["add_singleton", "create_delta", "embed_delta", "is_diagonal_matrix"]


@kernel(static=("index_scrambling",))
def embed_delta(tensor: np.ndarray, index_scrambling: Tuple[int, ...]) -> np.ndarray:
    """Embed ``tensor`` into a larger tensor with Kronecker deltas on repeated axes.

    Output axis ``k`` carries the index of input axis ``index_scrambling[k]``; entries whose repeated
    axes carry different indices are zero.  E.g. ``(1, 0, 0, 1)`` on a matrix gives
    ``out[j, i, i, j] = tensor[i, j]``.  A gather and a mask, no Python loop over elements.
    """
    out_shape = tuple(tensor.shape[axis] for axis in index_scrambling)
    grid = np.indices(out_shape)
    first = [index_scrambling.index(axis) for axis in range(tensor.ndim)]  # an output axis of each input axis
    # the first output axis of the same input axis, for each output axis
    partner = [index_scrambling.index(axis) for axis in index_scrambling]
    on_delta = np.ones(out_shape, dtype=bool)
    for position, other in enumerate(partner):
        on_delta = on_delta & (grid[position] == grid[other])
    return np.where(on_delta, tensor[tuple(grid[position] for position in first)], 0)


def create_delta(tensor: np.ndarray, index_scrambling: Sequence[int]) -> np.ndarray:
    """OQuPy-compatible wrapper of :func:`embed_delta` (accepts a list of axes)."""
    return embed_delta(np.asarray(tensor), tuple(int(axis) for axis in index_scrambling))


def add_singleton(tensor: np.ndarray, index: int = -1, copy: bool = True) -> np.ndarray:
    """Return ``tensor`` with a new axis of length one at position ``index``."""
    shape = list(np.shape(tensor))
    position = index if index >= 0 else len(shape) + 1 + index
    shape.insert(position, 1)
    if not copy:
        return np.reshape(tensor, tuple(shape))  # a view where possible; the caller's array keeps its shape
    result = np.asarray(tensor).copy()  # C-contiguous
    result.shape = tuple(shape)
    return result


def is_diagonal_matrix(tensor: np.ndarray) -> bool:
    """True if the square matrix ``tensor`` has only exact zeros off the diagonal."""
    assert len(tensor.shape) == 2, "Tensor must be a matrix."
    assert tensor.shape[0] == tensor.shape[1], "Matrix must be square."
    return bool(np.all(tensor == np.diag(np.diagonal(tensor))))
