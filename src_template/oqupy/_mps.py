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
    :func:`sketched_split`), added to every tail.

    The rank never cuts through a (numerically) degenerate multiplet: singular values within a relative
    ``DEGENERACY_RTOL`` of the last kept one are kept too.  Otherwise the kept subspace, and so the
    result, would depend on LAPACK's arbitrary basis of that multiplet (symmetric couplings make such
    multiplets common), and the two packages or two machines would disagree at the truncation level.
    """
    values = np.asarray(values)
    if values.size == 0 or values[0] == 0.0:
        return 1
    discarded = np.sqrt(np.cumsum((values**2)[::-1]) + residual**2)[::-1]
    rank = max(1, int(np.count_nonzero(discarded > epsrel * values[0])))
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
    """Thin SVD by LAPACK ``gesdd``, retried with ``gesvd`` if it does not converge (NumPy in both packages)."""
    try:
        return np.linalg.svd(matrix, full_matrices=False)
    except np.linalg.LinAlgError:
        return scipy.linalg.svd(matrix, full_matrices=False, lapack_driver="gesvd")


@host
def orthonormal_columns(matrix: np.ndarray) -> np.ndarray:
    """An isometry spanning the columns of ``matrix`` (the ``Q`` of a thin QR), on the host.

    For a real tall matrix straight from LAPACK (``dgeqrf``, ``dorgqr``, as ``np.linalg.qr`` calls them), without
    ``np.linalg.qr``'s checks, workspace queries and triangle, about half its time at PT-TEMPO's sizes.
    """
    rows, columns = matrix.shape
    if matrix.dtype == np.float64 and rows >= columns:
        factored, tau, _, _ = scipy.linalg.lapack.dgeqrf(matrix)
        left, _, _ = scipy.linalg.lapack.dorgqr(factored, tau, overwrite_a=True)
        return left
    left, _ = np.linalg.qr(matrix)
    return left


@host
def isometric_split(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``matrix = left @ right`` with ``left`` an isometry (:func:`orthonormal_columns`) and nothing truncated;
    ``right = left^dagger matrix``."""
    left = orthonormal_columns(matrix)
    return left, left.conj().T @ matrix


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
    return _factors(left[:, :rank], values[:rank], right[:rank], weights_left)


@host
def _factors(
    left: np.ndarray, values: np.ndarray, right: np.ndarray, weights_left: bool
) -> Tuple[np.ndarray, np.ndarray, int]:
    """``(left, right, rank)`` of a truncated SVD, the singular values moved into one factor (see :func:`split`)."""
    if weights_left:
        return left * values[None, :], right, values.shape[0]
    return left, values[:, None] * right, values.shape[0]


SKETCH_OVERSAMPLING = 10
"""Columns a sketch has beyond the expected rank (:func:`sketched_split`)."""

SKETCH_FRACTION = 0.6
"""A sketch wider than this fraction of the smaller dimension is no cheaper than an SVD: split directly."""


@host
def sketched_split(
    matrix: np.ndarray, epsrel: float, expected: int, rng: np.random.Generator, weights_left: bool = False
) -> Tuple[np.ndarray, np.ndarray, int]:
    """:func:`split` through a randomized range finder, for a matrix of (numerically) low rank near ``expected``.

    ``Q`` spans ``matrix @ G`` (``G`` Gaussian, ``expected + SKETCH_OVERSAMPLING`` columns; Halko, Martinsson
    and Tropp, SIAM Rev. 53, 217 (2011)); ``B = Q^dagger matrix`` is split by its SVD, and the residual
    ``|matrix - Q B|``, computed explicitly, counts as discarded (:func:`truncation_rank`), so the truncation
    error stays ``<= epsrel * s_0`` exactly as for :func:`split`.  Falls back to :func:`split` if the residual is
    above half of that, or the rank reaches the sketch's last columns (the range was not captured).
    """
    rows, columns = matrix.shape
    size = expected + SKETCH_OVERSAMPLING
    if size > SKETCH_FRACTION * min(rows, columns):
        return split(matrix, epsrel, weights_left)
    basis = orthonormal_columns(matrix @ rng.standard_normal((columns, size)))
    reduced = basis.conj().T @ matrix
    residual = float(np.linalg.norm(matrix - basis @ reduced))
    left, values, right = lapack_svd(reduced)
    rank = truncation_rank(values, epsrel, residual)
    if residual > 0.5 * epsrel * values[0] or rank > size - SKETCH_OVERSAMPLING // 2:
        return split(matrix, epsrel, weights_left)
    return _factors(basis @ left[:, :rank], values[:rank], right[:rank], weights_left)


@kernel
def svd(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD inside kernels: XLA's in ``oqupy_jax``, :func:`lapack_svd` in ``oqupy_numpy``."""
    if BACKEND == "jax":
        left, values, right = np.linalg.svd(matrix, full_matrices=False)
        return left, values, right
    else:
        return lapack_svd(matrix)
