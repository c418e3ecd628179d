"""PT-TEBD tensor kernels on an augmented MPS (:mod:`oqupy.mps_mpo` states the leg orders).

The chain is held as site tensors ``Gamma_k[L, P, A, R]`` and bond weights ``Lambda_0 ... Lambda_n``
(vectors; ``Lambda_0`` and ``Lambda_n`` are ones on the open ends), the state being
``Lambda_0 Gamma_0 Lambda_1 Gamma_1 ... Gamma_{n-1} Lambda_n``.  Ranks are decided on the host
(:func:`oqupy._mps.truncation_rank`) and every tensor has its exact bond dimensions, so ``oqupy_jax``
compiles each kernel once per shape that occurs.
"""

from typing import List, Sequence, Tuple

import numpy as np

from oqupy._codegen import kernel
from oqupy._mps import svd, truncation_rank

__runs_on__ = "device"


def split_ranked(matrix: np.ndarray, epsrel: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD ``matrix ~ left @ diag(values) @ right`` truncated by the relative-Frobenius criterion."""
    left, values, right = svd(matrix)
    rank = truncation_rank(values, epsrel)
    return left[:, :rank], values[:rank], right[:rank]


@kernel
def apply_site_operator(gamma: np.ndarray, operator: np.ndarray) -> np.ndarray:
    """``operator[o, p] Gamma[l, p, a, r]``: a one-site superoperator on the physical leg."""
    return np.einsum("op,lpar->loar", operator, gamma)


@kernel
def absorb_process_tensor(gamma: np.ndarray, mpo: np.ndarray) -> np.ndarray:
    """Contract a process-tensor MPO tensor ``M[past, future, in, out]`` into ``Gamma`` (A with past, P with in)."""
    return np.einsum("lpar,afpo->lofr", gamma, mpo)


@kernel
def _outer_parts(
    lambda_l: np.ndarray, gamma_l: np.ndarray, gamma_r: np.ndarray, lambda_r: np.ndarray
) -> Tuple[np.ndarray, np.ndarray]:
    """The two sites with their outer weights, as matrices ``[(L, A), (P, M)]`` and ``[(M, P), (A, R)]``."""
    left = np.transpose(lambda_l[:, None, None, None] * gamma_l, (0, 2, 1, 3))
    right = gamma_r * lambda_r[None, None, None, :]
    return (
        left.reshape(left.shape[0] * left.shape[1], left.shape[2] * left.shape[3]),
        right.reshape(right.shape[0] * right.shape[1], right.shape[2] * right.shape[3]),
    )


@kernel
def _theta(
    middle_l: np.ndarray, gate_l: np.ndarray, lambda_m: np.ndarray, gate_r: np.ndarray, middle_r: np.ndarray
) -> np.ndarray:
    """The gate on the two physical legs: ``theta[(k, o_l), (o_r, j)]`` (pairwise contractions)."""
    weighted = middle_l * lambda_m[None, None, :]
    product = np.einsum("kpm,opb->kmob", weighted, gate_l)
    product = np.einsum("kmob,mqj->kobqj", product, middle_r)
    theta = np.einsum("kobqj,bsq->kosj", product, gate_r)
    return theta.reshape(theta.shape[0] * theta.shape[1], theta.shape[2] * theta.shape[3])


@kernel
def _new_gammas(
    inverse_l: np.ndarray,
    isometry_l: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    isometry_r: np.ndarray,
    inverse_r: np.ndarray,
) -> Tuple[np.ndarray, np.ndarray]:
    """The two new site tensors, the outer weights divided out again."""
    gamma_l = np.einsum("l,lak,kox->loax", inverse_l, isometry_l, left)
    gamma_r = np.einsum("xsj,jbr,r->xsbr", right, isometry_r, inverse_r)
    return gamma_l, gamma_r


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
    ``epsrel``.

    Returns
    -------
    gamma_l, lambda_m, gamma_r: ndarray
        The new tensors of the two sites and the new weights between them.
    """
    lambda_l, lambda_m, lambda_r = lambdas
    bond_l, phys_l, aug_l, _ = gamma_l.shape
    _, phys_r, aug_r, bond_r = gamma_r.shape
    matrix_l, matrix_r = _outer_parts(lambda_l, gamma_l, gamma_r, lambda_r)
    isometry_l, values_l, rest_l = split_ranked(matrix_l, epsrel)
    rest_r, values_r, isometry_r = split_ranked(matrix_r, epsrel)
    middle_l = (values_l[:, None] * rest_l).reshape(values_l.shape[0], phys_l, gamma_l.shape[3])
    middle_r = (rest_r * values_r[None, :]).reshape(gamma_r.shape[0], phys_r, values_r.shape[0])
    theta = _theta(middle_l, gate_l, lambda_m, gate_r, middle_r)
    left, values, right = split_ranked(theta, epsrel)
    rank = values.shape[0]
    new_l, new_r = _new_gammas(
        1.0 / lambda_l,
        isometry_l.reshape(bond_l, aug_l, values_l.shape[0]),
        left.reshape(values_l.shape[0], gate_l.shape[0], rank),
        right.reshape(rank, gate_r.shape[1], values_r.shape[0]),
        isometry_r.reshape(values_r.shape[0], aug_r, bond_r),
        1.0 / lambda_r,
    )
    return new_l, values, new_r


@kernel
def bath_trace(gamma: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``Gamma[l, p, a, r] cap[a]``: the process-tensor leg closed by its cap."""
    return np.einsum("lpar,a->lpr", gamma, cap)


@kernel
def full_trace(traced: np.ndarray, identity: np.ndarray) -> np.ndarray:
    """``B[l, p, r] vec(1)[p]``: a bath-traced site traced over its physical leg too."""
    return np.einsum("lpr,p->lr", traced, identity)


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
        left.append((left[site] @ transfer) * lambdas[site + 1])
    right = [lambdas[-1]]
    for site in range(len(transfers) - 1, 0, -1):
        right.insert(0, lambdas[site] * (transfers[site] @ right[0]))
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
            carry = np.einsum("xl,lpr->xpr", carry, block).reshape(carry.shape[0] * block.shape[1], block.shape[2])
        else:
            carry = carry @ transfers[site]
        if site < last:
            carry = carry * lambdas[site + 1][None, :]
    vector = carry @ right
    return vector.reshape(tuple(traced[site].shape[1] for site in sites))
