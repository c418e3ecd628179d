"""PT-TEBD tensor kernels on an augmented MPS (:mod:`oqupy.mps_mpo` states the leg orders).

The chain is held as site tensors ``Gamma_k[L, P, A, R]`` and bond weights ``Lambda_0 ... Lambda_n``
(vectors; ``Lambda_0`` and ``Lambda_n`` are ones on the open ends), the state being
``Lambda_0 Gamma_0 Lambda_1 Gamma_1 ... Gamma_{n-1} Lambda_n``.  Ranks are decided on the host
(:func:`oqupy._mps.truncation_rank`).  ``oqupy_numpy`` keeps exact bond dimensions; ``oqupy_jax`` pads every
bond created by a split and every process-tensor leg (:func:`padded`: a bucket of :func:`oqupy._mps.bucket`,
at least ``MIN_PADDED``, and a bond never shrinks) with zero weights and zero tensor entries, so that each
kernel compiles for a few shapes, not once per bond dimension.  A zero weight has a zero inverse
(:func:`inverse_weights`), so padding never enters a result.
"""

from typing import Any, List, Sequence, Tuple

import numpy as np

from oqupy._codegen import BACKEND, kernel
from oqupy._mps import bucket, svd, truncation_rank

__runs_on__ = "device"

MIN_PADDED = 16
"""Smallest stored size of a padded bond or leg in ``oqupy_jax``."""


def padded(rank: int, floor: int = MIN_PADDED) -> int:
    """Stored size of a bond or leg of dimension ``rank``.

    ``oqupy_jax``: ``bucket(rank)``, but at least ``floor``; ``oqupy_numpy``: ``rank``.
    """
    size = bucket(rank)
    if BACKEND == "jax":
        size = max(size, floor)
    return size


def keep_triplets(
    left: np.ndarray, values: np.ndarray, right: np.ndarray, rank: Any, size: int
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first ``size`` singular triplets, zero beyond ``rank`` and zero-padded up to ``size``.

    Called inside kernels with ``size`` static (:func:`padded`) and ``rank`` traced.
    """
    keep = min(size, values.shape[0])
    mask = np.arange(keep) < rank
    left = left[:, :keep] * mask[None, :]
    values = values[:keep] * mask
    right = right[:keep] * mask[:, None]
    if size > keep:
        left = np.pad(left, ((0, 0), (0, size - keep)))
        values = np.pad(values, (0, size - keep))
        right = np.pad(right, ((0, size - keep), (0, 0)))
    return left, values, right


def inverse_weights(weights: np.ndarray) -> np.ndarray:
    """``1 / weights`` where a weight is non-zero, 0 where it is zero (padding)."""
    nonzero = weights != 0
    return np.where(nonzero, 1.0 / np.where(nonzero, weights, 1.0), 0.0)


@kernel
def apply_site_operator(gamma: np.ndarray, operator: np.ndarray) -> np.ndarray:
    """``operator[o, p] Gamma[l, p, a, r]``: a one-site superoperator on the physical leg."""
    return np.transpose(np.tensordot(operator, gamma, axes=([1], [1])), (1, 0, 2, 3))


@kernel
def absorb_process_tensor(gamma: np.ndarray, mpo: np.ndarray) -> np.ndarray:
    """Contract a process-tensor MPO tensor ``M[past, future, in, out]`` into ``Gamma`` (A with past, P with in)."""
    return np.transpose(np.tensordot(gamma, mpo, axes=([1, 2], [2, 0])), (0, 3, 2, 1))


@kernel
def _split_sites(
    lambda_l: np.ndarray, gamma_l: np.ndarray, gamma_r: np.ndarray, lambda_r: np.ndarray
) -> Tuple[np.ndarray, ...]:
    """SVDs of the two sites with their outer weights, as ``[(L, A), (P, M)]`` and ``[(M, P), (A, R)]``."""
    left = np.transpose(lambda_l[:, None, None, None] * gamma_l, (0, 2, 1, 3))
    right = gamma_r * lambda_r[None, None, None, :]
    left = left.reshape(left.shape[0] * left.shape[1], left.shape[2] * left.shape[3])
    right = right.reshape(right.shape[0] * right.shape[1], right.shape[2] * right.shape[3])
    return svd(left) + svd(right)


@kernel(static=("size_l", "size_r"))
def _gate_theta(
    split_l: Tuple[np.ndarray, ...],
    split_r: Tuple[np.ndarray, ...],
    ranks: Tuple[Any, Any],
    size_l: int,
    size_r: int,
    gate_l: np.ndarray,
    lambda_m: np.ndarray,
    gate_r: np.ndarray,
) -> Tuple[np.ndarray, ...]:
    """The gate on the two middle parts, ``theta[(k, o_l), (o_r, j)]`` and its SVD.

    ``split_l`` and ``split_r`` are the SVDs of :func:`_split_sites`, kept to ``ranks`` (padded to ``size_l``,
    ``size_r``); returns the two isometries carrying the process-tensor legs and the SVD of ``theta``.
    """
    isometry_l, values_l, rest_l = keep_triplets(split_l[0], split_l[1], split_l[2], ranks[0], size_l)
    rest_r, values_r, isometry_r = keep_triplets(split_r[0], split_r[1], split_r[2], ranks[1], size_r)
    middle_l = (values_l[:, None] * rest_l).reshape(size_l, gate_l.shape[1], lambda_m.shape[0])
    middle_r = (rest_r * values_r[None, :]).reshape(lambda_m.shape[0], gate_r.shape[2], size_r)
    product = np.tensordot(middle_l * lambda_m[None, None, :], gate_l, axes=([1], [1]))  # [k, m, o, b]
    product = np.tensordot(product, middle_r, axes=([1], [0]))  # [k, o, b, q, j]
    theta = np.transpose(np.tensordot(product, gate_r, axes=([2, 3], [0, 2])), (0, 1, 3, 2))  # [k, o, s, j]
    theta = theta.reshape(theta.shape[0] * theta.shape[1], theta.shape[2] * theta.shape[3])
    return (isometry_l, isometry_r) + svd(theta)


@kernel(static=("size",))
def _new_gammas(
    lambda_l: np.ndarray,
    isometry_l: np.ndarray,
    split: Tuple[np.ndarray, ...],
    rank: Any,
    size: int,
    isometry_r: np.ndarray,
    lambda_r: np.ndarray,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two new site tensors ``[L, P, A, R]`` and the new middle weights (``split`` kept to ``rank``).

    ``isometry_l[(l, a), k]``, ``left[(k, o), x]``, ``right[x, (s, j)]``, ``isometry_r[j, (b, r)]``; the outer
    weights are divided out again.
    """
    left, values, right = keep_triplets(split[0], split[1], split[2], rank, size)
    middle_l, middle_r = isometry_l.shape[1], isometry_r.shape[0]
    iso_l = isometry_l.reshape(lambda_l.shape[0], isometry_l.shape[0] // lambda_l.shape[0], middle_l)
    iso_r = isometry_r.reshape(middle_r, isometry_r.shape[1] // lambda_r.shape[0], lambda_r.shape[0])
    part_l = left.reshape(middle_l, left.shape[0] // middle_l, size)
    part_r = right.reshape(size, right.shape[1] // middle_r, middle_r)
    gamma_l = np.tensordot(
        inverse_weights(lambda_l)[:, None, None] * iso_l, part_l, axes=([2], [0])
    )  # [l, a, o, x]
    gamma_r = np.tensordot(part_r, iso_r * inverse_weights(lambda_r)[None, None, :], axes=([2], [0]))
    return np.transpose(gamma_l, (0, 2, 1, 3)), values, gamma_r


def apply_nn_gate(
    lambdas: Sequence[np.ndarray],
    gamma_l: np.ndarray,
    gamma_r: np.ndarray,
    gate_l: np.ndarray,
    gate_r: np.ndarray,
    epsrel: float,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A two-site gate on neighbouring sites (Fux et al. 2023, supplement Fig. S2).

    ``lambdas`` are the weights left of, between and right of the two sites.  The process-tensor legs are
    split off each site (with its outer weight) by an SVD, the gate acts on the two middle parts, a third SVD
    gives the new middle weights, and the outer weights are divided out.  Every SVD is truncated with
    ``epsrel``; the three ranks are decided on the host between three kernels.

    Returns
    -------
    gamma_l, lambda_m, gamma_r: ndarray
        The new tensors of the two sites and the new weights between them.
    """
    lambda_l, lambda_m, lambda_r = lambdas
    splits = _split_sites(lambda_l, gamma_l, gamma_r, lambda_r)
    rank_l, rank_r = truncation_rank(splits[1], epsrel), truncation_rank(splits[4], epsrel)
    isometry_l, isometry_r, *split = _gate_theta(
        splits[:3], splits[3:], (rank_l, rank_r), padded(rank_l), padded(rank_r), gate_l, lambda_m, gate_r
    )
    rank = truncation_rank(split[1], epsrel)
    size = padded(rank, max(MIN_PADDED, lambda_m.shape[0]))
    return _new_gammas(lambda_l, isometry_l, tuple(split), rank, size, isometry_r, lambda_r)


@kernel
def trace_site(gamma: np.ndarray, cap: np.ndarray, identity: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """A site with its process-tensor leg closed by ``cap``, ``B[l, p, r]``, and also traced over its physical
    leg with ``identity = vec(1)``, ``T[l, r]``."""
    traced = np.tensordot(gamma, cap, axes=([2], [0]))
    return traced, np.tensordot(traced, identity, axes=([1], [0]))


@kernel
def _grow_left(vector: np.ndarray, transfer: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return (vector @ transfer) * weights


@kernel
def _grow_right(vector: np.ndarray, transfer: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return weights * (transfer @ vector)


def environments(
    transfers: Sequence[np.ndarray], lambdas: Sequence[np.ndarray]
) -> Tuple[List[np.ndarray], List[np.ndarray]]:
    """Left and right environments of every site from the fully traced sites ``T_k[l, r]``.

    ``left[k]`` is the vector on the left bond of site ``k`` (``Lambda_k`` included), ``right[k]`` on its right
    bond (``Lambda_{k+1}`` included); both ends are closed with ones.  ``left`` has one more entry,
    ``left[n]``, whose sum is the trace of the whole chain.
    """
    left = [lambdas[0]]
    for site, transfer in enumerate(transfers):
        left.append(_grow_left(left[site], transfer, lambdas[site + 1]))
    right = [lambdas[-1]]
    for site in range(len(transfers) - 1, 0, -1):
        right.insert(0, _grow_right(right[0], transfers[site], lambdas[site]))
    return left, right


def reduced_vector(
    sites: Sequence[int],
    traced: Sequence[np.ndarray],
    transfers: Sequence[np.ndarray],
    lambdas: Sequence[np.ndarray],
    left: np.ndarray,
    right: np.ndarray,
) -> np.ndarray:
    """The reduced state of the sorted ``sites`` as a tensor ``[P_{s_0}, P_{s_1}, ...]``.

    Sites between the first and the last that are not in ``sites`` are traced out (``transfers``); ``left``
    and ``right`` are the environments of the first and the last site.
    """
    carry = left[None, :]
    first, last = sites[0], sites[-1]
    for site in range(first, last + 1):
        if site in sites:
            block = traced[site]
            carry = np.tensordot(carry, block, axes=([1], [0])).reshape(
                carry.shape[0] * block.shape[1], block.shape[2]
            )
        else:
            carry = carry @ transfers[site]
        if site < last:
            carry = carry * lambdas[site + 1][None, :]
    vector = carry @ right
    return vector.reshape(tuple(traced[site].shape[1] for site in sites))
