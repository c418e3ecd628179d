"""PT-TEBD tensor kernels on an augmented MPS (:mod:`oqupy.mps_mpo` states the leg orders).

The chain is held as site tensors ``Gamma_k[L, P, A, R]`` and bond weights ``Lambda_0 ... Lambda_n``
(vectors; ``Lambda_0`` and ``Lambda_n`` are ones on the open ends), the state being
``Lambda_0 Gamma_0 Lambda_1 Gamma_1 ... Gamma_{n-1} Lambda_n``.  A two-site gate is one kernel
(:func:`apply_nn_gate`) whose three truncation ranks are decided on the device.

``oqupy_numpy`` keeps exact bond dimensions.  ``oqupy_jax`` stores every inner bond of the chain with
per-run *capacities* and every process-tensor leg padded (:func:`padded`), with zero weights and zero tensor
entries; a zero weight has a zero inverse (:func:`inverse_weights`), so padding never enters a result.  The
shapes of a gate then depend only on the capacities and on which sites are ends or carry an environment, so a
run compiles each kernel a few times, not once per bond dimension.  The gate returns its ranks; when one is
above its capacity, the caller repeats the step with larger capacities (:func:`capacity`).
"""

from typing import Any, List, Sequence, Tuple

import numpy as np

from oqupy._codegen import BACKEND, kernel
from oqupy._mps import bucket, kept_rank, kept_size, svd

__runs_on__ = "device"

MIN_PADDED = 16
"""Smallest stored size of a padded bond or leg in ``oqupy_jax``."""

CAPACITIES = (16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512)
"""Bond capacities of the chain in ``oqupy_jax`` (multiples of 256 beyond): a run compiles its gate once per
capacity it reaches."""

UNBOUNDED = 2**62
"""The capacity of every bond in ``oqupy_numpy``, whose bonds are exact and never overflow."""


def capacity(rank: int) -> int:
    """Capacity of the chain's bonds that holds ``rank``: in ``oqupy_jax`` the smallest of :data:`CAPACITIES`
    (at least ``MIN_PADDED``); in ``oqupy_numpy`` unbounded (exact bonds)."""
    if BACKEND == "jax":
        for size in CAPACITIES:
            if rank <= size:
                return size
        return -(-rank // 256) * 256
    else:
        return UNBOUNDED


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

    Called inside kernels with ``size`` static and ``rank`` traced.
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


def _split_sites(
    lambda_l: np.ndarray, gamma_l: np.ndarray, gamma_r: np.ndarray, lambda_r: np.ndarray
) -> Tuple[np.ndarray, np.ndarray]:
    """The two sites with their outer weights as matrices ``[(L, A), (P, M)]`` and ``[(M, P), (A, R)]``."""
    left = np.transpose(lambda_l[:, None, None, None] * gamma_l, (0, 2, 1, 3))
    right = gamma_r * lambda_r[None, None, None, :]
    left = left.reshape(left.shape[0] * left.shape[1], left.shape[2] * left.shape[3])
    right = right.reshape(right.shape[0] * right.shape[1], right.shape[2] * right.shape[3])
    return left, right


def _theta(
    middle_l: np.ndarray, lambda_m: np.ndarray, middle_r: np.ndarray, gate_l: np.ndarray, gate_r: np.ndarray
) -> np.ndarray:
    """The gate on the two middle parts ``middle_l[k, p, m]``, ``middle_r[m, q, j]``: ``theta[(k, o_l), (o_r, j)]``."""
    # the two middle parts joined first, then the whole two-site gate on both physical legs: about
    # (gate bond) x fewer operations than contracting the gate's halves one after the other
    pair = np.tensordot(middle_l * lambda_m[None, None, :], middle_r, axes=([2], [0]))  # [k, p, q, j]
    gate = np.tensordot(gate_l, gate_r, axes=([2], [0]))  # [o, p, s, q]
    theta = np.transpose(np.tensordot(pair, gate, axes=([1, 2], [1, 3])), (0, 2, 3, 1))  # [k, o, s, j]
    return theta.reshape(theta.shape[0] * theta.shape[1], theta.shape[2] * theta.shape[3])


def _new_gammas(
    lambda_l: np.ndarray,
    isometry_l: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    isometry_r: np.ndarray,
    lambda_r: np.ndarray,
) -> Tuple[np.ndarray, np.ndarray]:
    """The two new site tensors ``[L, P, A, R]``, the outer weights divided out again.

    ``isometry_l[(l, a), k]``, ``left[(k, o), x]``, ``right[x, (s, j)]``, ``isometry_r[j, (b, r)]``.
    """
    middle_l, middle_r, size = isometry_l.shape[1], isometry_r.shape[0], left.shape[1]
    iso_l = isometry_l.reshape(lambda_l.shape[0], isometry_l.shape[0] // lambda_l.shape[0], middle_l)
    iso_r = isometry_r.reshape(middle_r, isometry_r.shape[1] // lambda_r.shape[0], lambda_r.shape[0])
    part_l = left.reshape(middle_l, left.shape[0] // middle_l, size)
    part_r = right.reshape(size, right.shape[1] // middle_r, middle_r)
    gamma_l = np.tensordot(
        inverse_weights(lambda_l)[:, None, None] * iso_l, part_l, axes=([2], [0])
    )  # [l, a, o, x]
    gamma_r = np.tensordot(part_r, iso_r * inverse_weights(lambda_r)[None, None, :], axes=([2], [0]))
    return np.transpose(gamma_l, (0, 2, 1, 3)), gamma_r


@kernel(static=("capacities",))
def apply_nn_gate(
    lambdas: Tuple[np.ndarray, np.ndarray, np.ndarray],
    gamma_l: np.ndarray,
    gamma_r: np.ndarray,
    gate_l: np.ndarray,
    gate_r: np.ndarray,
    epsrel: float,
    capacities: Tuple[int, int, int],
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A two-site gate on neighbouring sites (Fux et al. 2023, supplement Fig. S2), one kernel.

    ``lambdas`` are the weights left of, between and right of the two sites.  The process-tensor legs are
    split off each site (with its outer weight) by an SVD, the gate acts on the two middle parts, a third SVD
    gives the new middle weights, and the outer weights are divided out.  Every SVD is truncated with
    ``epsrel``, its rank decided on the device (:func:`oqupy._mps.kept_rank`).

    ``capacities = (bond, left, right)``: in ``oqupy_jax`` the new middle bond is stored with ``bond`` entries
    and the bonds split off the left and the right site with ``left`` and ``right`` (static: one compilation per
    triple and per shape of the sites), the triplets beyond each rank masked; ``oqupy_numpy`` keeps exact ranks
    and ignores them.  A rank above its capacity is an overflow: the result is then truncated to the capacity,
    and the caller, who sees the ranks, computes the step again with larger capacities.

    Returns
    -------
    gamma_l, lambda_m, gamma_r, ranks: ndarray
        The new tensors of the two sites, the new weights between them and the three ranks ``(middle bond,
        left split, right split)``.
    """
    lambda_l, lambda_m, lambda_r = lambdas
    matrix_l, matrix_r = _split_sites(lambda_l, gamma_l, gamma_r, lambda_r)
    left_u, left_s, left_v = svd(matrix_l)
    right_u, right_s, right_v = svd(matrix_r)
    rank_l, rank_r = kept_rank(left_s, epsrel), kept_rank(right_s, epsrel)
    isometry_l, values_l, rest_l = keep_triplets(
        left_u, left_s, left_v, rank_l, kept_size(rank_l, capacities[1])
    )
    rest_r, values_r, isometry_r = keep_triplets(
        right_u, right_s, right_v, rank_r, kept_size(rank_r, capacities[2])
    )
    middle_l = (values_l[:, None] * rest_l).reshape(values_l.shape[0], gate_l.shape[1], lambda_m.shape[0])
    middle_r = (rest_r * values_r[None, :]).reshape(lambda_m.shape[0], gate_r.shape[2], values_r.shape[0])
    theta_u, theta_s, theta_v = svd(_theta(middle_l, lambda_m, middle_r, gate_l, gate_r))
    rank = kept_rank(theta_s, epsrel)
    left, values, right = keep_triplets(theta_u, theta_s, theta_v, rank, kept_size(rank, capacities[0]))
    new_l, new_r = _new_gammas(lambda_l, isometry_l, left, right, isometry_r, lambda_r)
    return new_l, values, new_r, np.stack([rank, rank_l, rank_r])


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
