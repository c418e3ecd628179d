"""Pure tensor kernels of TEMPO: one site of the zip-up, closing a line, path sums, and the truncated
SVD with its truncation decision (host and device forms).  The whole TEMPO step that strings them together is
:func:`oqupy._steps.tempo_step`; PT-TEMPO's step runs on the host (:mod:`oqupy._pt_tempo_step`).

Tensors are plain arrays with a fixed leg order:

- a past MPS site ``site[l, c, r]``: left bond, path index of one earlier time (coupling eigenbasis,
  reduced to north degeneracy classes), right bond;
- the current site ``current[l, x]``: left bond, Liouville index of the state (row-major vec);
- the zip-up carry ``carry[c, r, w]``: new left bond, old bond, index of the influence line (west classes).

Truncation (relative Frobenius criterion): keep the smallest ``chi`` with
``sqrt(sum_{k >= chi} s_k^2) <= epsrel * s_0``.  In ``oqupy_jax`` bond dimensions are padded to buckets
(:func:`bucket`) with exactly zero singular values (the kept rank is applied by masking), so the number of
compiled shapes stays small; ``oqupy_numpy`` keeps exact shapes.
"""

from typing import Any, Tuple

import numpy as np
import scipy.linalg

from oqupy._codegen import BACKEND, host, kernel

__runs_on__ = "device"

DEGENERACY_RTOL = 1e-9
"""Singular values this close (relative) to the last kept one are kept with it."""


@kernel
def zip_site(carry: np.ndarray, site: np.ndarray, influence: np.ndarray) -> np.ndarray:
    """Absorb one past site and its influence ``I[c, w]`` into the carry; return the matrix to split.

    Returns ``theta`` with rows ``(new left bond, c)`` and columns ``(right bond, w)``.
    """
    left, bond, line = carry.shape
    _, paths, right = site.shape
    # one matrix product per line index w (BLAS), instead of a three-operand einsum loop
    weighted = np.einsum("rcq,cw->wrcq", site, influence).reshape(line, bond, paths * right)
    theta = np.matmul(np.transpose(carry, (2, 0, 1)), weighted)
    return np.transpose(theta.reshape(line, left, paths, right), (1, 2, 3, 0)).reshape(
        left * paths, right * line
    )


@kernel
def close_line(
    carry: np.ndarray, current: np.ndarray, west: np.ndarray, self_influence: np.ndarray
) -> np.ndarray:
    """End of the influence line at the current site: ``G[l, b] = sum_{q,w} carry[l,q,w] P_w[w,b] C[q,b] I0[b]``."""
    return np.einsum("lqw,wb,qb,b->lb", carry, west, current, self_influence)


@kernel
def new_sites(line_end: np.ndarray, north: np.ndarray, to_state: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The past site of the new time (path index reduced to north classes) and the new current site."""
    site = np.einsum("lb,nb->lnb", line_end, north)
    return site, to_state.T


@kernel
def sum_site(vector: np.ndarray, site: np.ndarray) -> np.ndarray:
    """``sum_{l,c} vector[l] site[l, c, r]``: one past site summed over its path index."""
    return np.einsum("l,lcr->r", vector, site)


@host
def truncation_rank(values: np.ndarray, epsrel: float) -> int:
    """Smallest rank whose discarded singular values have norm <= ``epsrel`` times the largest one.

    The rank never cuts through a (numerically) degenerate multiplet: singular values within a relative
    ``DEGENERACY_RTOL`` of the last kept one are kept too.  Otherwise the kept subspace, and so the
    result, would depend on LAPACK's arbitrary basis of that multiplet (symmetric couplings make such
    multiplets common), and the two packages or two machines would disagree at the truncation level.
    """
    values = np.asarray(values)
    if values.size == 0 or values[0] == 0.0:
        return 1
    discarded = np.sqrt(np.cumsum((values**2)[::-1]))[::-1]
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
    discarded = np.sqrt(np.cumsum((values**2)[::-1])[::-1])
    rank = np.maximum(np.count_nonzero(discarded > epsrel * values[0]), 1)
    index = np.arange(size)
    previous = np.concatenate([values[:1], values[:-1]])
    joins = (index > 0) & (values > 0.0) & (values >= previous * (1.0 - DEGENERACY_RTOL))
    extended = np.min(np.where((index >= rank) & ~joins, index, size))
    return np.where(values[0] == 0.0, 1, extended)


def stored(exact: int, capacity: int) -> int:
    """Bond dimension stored for a bond of ``exact`` dimension inside a whole-step kernel.

    ``oqupy_jax``: every bond is padded to the step's ``capacity`` (one compiled step per capacity);
    ``oqupy_numpy``: the exact dimension.
    """
    if BACKEND == "jax":
        return capacity
    else:
        return exact


def unit(size: int) -> np.ndarray:
    """``(1, 0, ..., 0)``: the trivial bond vector (a bond of dimension 1, padded to ``size``)."""
    if size < 1:
        raise ValueError(f"a bond vector has at least one entry, not {size}")
    vector = np.zeros(size, dtype=np.complex128)
    vector[0] = 1.0
    return vector


def split_capped(
    matrix: np.ndarray, epsrel: float, capacity: int, weights_left: bool
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`split` inside a whole-step kernel: the rank is decided on the device (:func:`kept_rank`).

    ``oqupy_jax`` keeps ``capacity`` triplets and masks those beyond the rank (the caller compares the returned
    rank with ``capacity`` to detect an overflow); ``oqupy_numpy`` keeps exactly ``rank`` triplets.
    """
    left, values, right = svd(matrix)
    rank = kept_rank(values, epsrel)
    left, right = truncate(left, values, right, rank, kept_size(rank, capacity), weights_left)
    return left, right, rank


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


@kernel
def svd(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD inside kernels: XLA's in ``oqupy_jax``, :func:`lapack_svd` in ``oqupy_numpy``."""
    if BACKEND == "jax":
        left, values, right = np.linalg.svd(matrix, full_matrices=False)
        return left, values, right
    else:
        return lapack_svd(matrix)


@kernel(static=("size", "weights_left"))
def truncate(
    left: np.ndarray, values: np.ndarray, right: np.ndarray, rank: Any, size: int, weights_left: bool
) -> Tuple[np.ndarray, np.ndarray]:
    """Keep ``size`` singular triplets (zero-padded if there are fewer), those beyond ``rank`` set to 0.

    ``rank`` is traced in ``oqupy_jax`` (one compilation per ``size``, not per rank); ``size`` and
    ``weights_left`` are static.
    """
    available = values.shape[0]
    keep = min(size, available)
    kept = np.arange(keep) < rank
    weights = values[:keep] * kept
    # both factors masked: padded bonds hold exact zeros (which `_loops.trimmed` relies on), not stray vectors
    if weights_left:
        left = left[:, :keep] * weights[None, :]
        right = right[:keep] * kept[:, None]
    else:
        left = left[:, :keep] * kept[None, :]
        right = weights[:, None] * right[:keep]
    if size > available:
        left = np.pad(left, ((0, 0), (0, size - available)))
        right = np.pad(right, ((0, size - available), (0, 0)))
    return left, right


def absorb(weights: np.ndarray, site: np.ndarray) -> np.ndarray:
    """``weights[k, l] site[l, ...]``: move the remainder of a split into the next site."""
    return np.tensordot(weights, site, axes=1)
