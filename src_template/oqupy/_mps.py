"""Truncated SVDs: the truncation decision (on the host, :func:`truncation_rank`, and as array operations inside
kernels, :func:`kept_rank`), LAPACK's SVD and the truncated split on the host (:func:`lapack_svd`, :func:`split`:
the TEMPO and PT-TEMPO steps, :mod:`oqupy._tempo_step` and :mod:`oqupy._pt_tempo_step`, in both packages), the
SVD inside kernels (:func:`svd`: PT-TEBD's gates, :mod:`oqupy._chain_mps`) and stored bond sizes.

Truncation (relative Frobenius criterion): keep the smallest ``chi`` with
``sqrt(sum_{k >= chi} s_k^2) <= epsrel * s_0``.  Inside kernels of ``oqupy_jax`` bond dimensions are padded to
capacities or buckets (:func:`bucket`) with exactly zero singular values (the kept rank is applied by masking), so
the number of compiled shapes stays small; ``oqupy_numpy`` keeps exact shapes.
"""

from typing import Any, Tuple

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from oqupy._codegen import BACKEND, host, kernel

__runs_on__ = "device"

DEGENERACY_RTOL = 1e-9
"""Singular values this close (relative) to the last kept one are kept with it."""


@host
def truncation_rank(values: np.ndarray, epsrel: float, residual: float = 0.0) -> int:
    """Smallest rank whose discarded singular values have norm <= ``epsrel`` times the largest one.

    ``residual``: a norm discarded before (the part of a matrix outside a sketched range,
    :func:`oqupy._pt_tempo_step.sketched_split`), added to every tail.

    The rank never cuts through a (numerically) degenerate multiplet: singular values within a relative
    ``DEGENERACY_RTOL`` of the last kept one are kept too.  Otherwise the kept subspace, and so the
    result, would depend on LAPACK's arbitrary basis of that multiplet (symmetric couplings make such
    multiplets common), and the two packages or two machines would disagree at the truncation level.
    """
    values = np.asarray(values)
    if values.size == 0 or values[0] == 0.0:
        return 1
    # tails[j]: the squared norm of the j + 1 smallest values, non-decreasing; keeping rank k discards
    # tails[size - 1 - k] + residual**2, so the rank counts the tails above the squared bound
    tails = np.cumsum(values[::-1] ** 2)
    bound = (epsrel * values[0]) ** 2 - residual**2
    rank = max(1, values.size - int(np.searchsorted(tails, bound, side="right")))
    while (
        rank < values.size
        and values[rank] > 0.0
        and values[rank] >= values[rank - 1] * (1.0 - DEGENERACY_RTOL)
    ):
        rank += 1
    return rank


@kernel
def kept_rank(values: np.ndarray, epsrel: float) -> np.ndarray:
    """:func:`truncation_rank` as array operations (an integer array of shape ``()``), for use inside kernels.

    The same decision: the smallest rank whose discarded tail has norm ``<= epsrel * s_0`` (at least 1), then
    extended over the multiplet of the last kept value (``DEGENERACY_RTOL``), and 1 if ``s_0 == 0``.  The
    extension is the first index ``k >= rank`` that does not continue the multiplet (``s_k == 0`` or
    ``s_k < s_{k-1} (1 - DEGENERACY_RTOL)``), found with a mask instead of a loop, so no value leaves the device.
    """
    size = values.shape[0]
    largest = np.max(values)  # s_0: singular values come sorted, largest first
    discarded = np.sqrt(np.cumsum((values**2)[::-1])[::-1])
    rank = np.maximum(np.count_nonzero(discarded > epsrel * largest), 1)
    index = np.arange(size)
    previous = np.concatenate([values[:1], values[:-1]])
    joins = (index > 0) & (values > 0.0) & (values >= previous * (1.0 - DEGENERACY_RTOL))
    extended = np.min(np.where((index >= rank) & ~joins, index, size))
    return np.where(largest == 0.0, 1, extended)


def stored(exact: int, capacity: int) -> int:
    """Bond dimension stored for a bond of ``exact`` dimension inside a compiled step (PT-TEBD's chain).

    ``oqupy_jax``: every bond is padded to its ``capacity`` (one compiled step per capacity);
    ``oqupy_numpy``: the exact dimension.
    """
    if BACKEND == "jax":
        return capacity
    else:
        return exact


def kept_size(rank: Any, capacity: int) -> int:
    """Stored size of a truncation to ``rank`` (from :func:`kept_rank`) inside a kernel.

    ``oqupy_jax``: ``capacity`` (static; triplets beyond the traced ``rank`` are masked); ``oqupy_numpy``: the
    rank itself.
    """
    if BACKEND == "jax":
        return capacity
    else:
        return int(rank)


def bucket(rank: int) -> int:
    """Bond dimension stored for a kept ``rank``.

    ``oqupy_jax``: powers of two up to 8, multiples of 8 up to 64, then multiples of 16 (1, 2, 4, 8, 16, 24,
    ..., 64, 80, 96, ...).  This bounds the number of compiled shapes (17 buckets up to a bond of 160) and
    keeps the padding of the SVD matrices, whose cost grows with the cube of the bond, small.
    """
    if BACKEND == "jax":
        if rank <= 8:
            return 1 << max(rank - 1, 0).bit_length()
        step = 8 if rank <= 64 else 16
        return -(-rank // step) * step
    else:
        return rank


@host
def lapack_svd(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD ``matrix = left @ diag(values) @ right`` by LAPACK ``gesdd``, retried with ``gesvd`` if it does
    not converge (on the host in both packages).

    Real and complex double matrices go to SciPy's direct ``dgesdd`` / ``zgesdd`` wrappers, a wide matrix as its
    (Fortran-ordered, uncopied) transpose: at PT-TEMPO's sizes (tens of rows) ``np.linalg.svd`` spends about as
    much again in its own overhead (113 against 211 microseconds at 23 x 39, ``docs/benchmarks.md``).
    """
    if matrix.size == 0 or matrix.dtype not in (np.float64, np.complex128):
        return np.linalg.svd(matrix, full_matrices=False)
    rows, columns = matrix.shape
    wide = rows < columns
    tall = matrix.T if wide else matrix
    gesdd = scipy.linalg.lapack.dgesdd if matrix.dtype == np.float64 else scipy.linalg.lapack.zgesdd
    left, values, right, info = gesdd(tall, compute_uv=1, full_matrices=0)
    if info != 0 or not np.isfinite(values[0]):
        return scipy.linalg.svd(matrix, full_matrices=False, lapack_driver="gesvd")
    if wide:
        # tall = left values right, so matrix = right^T values left^T (^T, not ^dagger: conj not needed)
        return right.T, values, left.T
    return left, values, right


@host
def split(
    matrix: np.ndarray, epsrel: float, weights_left: bool = False
) -> Tuple[np.ndarray, np.ndarray, int]:
    """Truncated split ``matrix ~ left @ right`` at the rank of :func:`truncation_rank`, on the host (TEMPO's and
    PT-TEMPO's steps, :mod:`oqupy._tempo_step` and :mod:`oqupy._pt_tempo_step`).

    The singular values go to ``right`` (``left`` is an isometry), or to ``left`` if ``weights_left``.
    Returns ``(left, right, rank)`` with exactly ``rank`` columns / rows.
    """
    left, values, right = lapack_svd(matrix)
    rank = truncation_rank(values, epsrel)
    return truncated_factors(left[:, :rank], values[:rank], right[:rank], weights_left)


@host
def truncated_factors(
    left: np.ndarray, values: np.ndarray, right: np.ndarray, weights_left: bool
) -> Tuple[np.ndarray, np.ndarray, int]:
    """``(left, right, rank)`` of a truncated SVD, the singular values moved into one factor (see :func:`split`)."""
    if weights_left:
        return left * values[None, :], right, values.shape[0]
    return left, values[:, None] * right, values.shape[0]


@kernel
def svd(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD inside kernels: XLA's in ``oqupy_jax``, :func:`lapack_svd` in ``oqupy_numpy``."""
    if BACKEND == "jax":
        left, values, right = np.linalg.svd(matrix, full_matrices=False)
        return left, values, right
    else:
        return lapack_svd(matrix)
