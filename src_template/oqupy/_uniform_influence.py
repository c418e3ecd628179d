r"""The influence functional of a stationary bath as one repeating tensor, built by infinite TEBD; runs on the host.

For a memory cut-off ``K`` every step sees the same influences ``I_0 ... I_K`` (:mod:`oqupy._influences`), so
``F(a_1, ..., a_N) = prod_n I_0(a_n) prod_{k=1}^{K} I_k(a_{n-k}, a_n)`` is translation invariant.  Instead of
contracting the network along the time ``n`` (TEMPO, PT-TEMPO: ``N K`` truncated SVDs), this module contracts
it along the lag ``k`` ([Link2024]): the gates of one lag over all times form one translation-invariant layer.

Layout of the network (the picture the code follows).  Every time ``n`` owns two legs: ``v_n`` (the path
index of ``n`` as the *later* time of a gate: its west class) and ``d_n`` (the path index of an earlier time,
routed towards the later times: a north class).  Above the layer of lag ``k`` the pair of time ``n`` holds
``(v_n = a_n, d_n = a_{n-k})``.  The layer multiplies ``I_k(d_n, v_n)`` and hands ``d_n`` one time back:
below it, time ``n - 1`` holds ``a_{n-k} = a_{(n-1)-(k-1)}``.  On the MPS ``... v_n d_n v_{n+1} d_{n+1} ...``
this is a two-site gate on every pair ``(v_n, d_n)``: multiply, then swap the two sites; the new pairs sit
across the other bond, so the layers alternate between the two bonds of a two-site unit cell, as in iTEBD.
Above the top layer every leg is free (a product of ones); below the last one ``d_n = a_n = v_n``, so the
repeating tensor is ``f[l, a, r] = B_v[l, w(a), m] B_d[m, c(a), r] I_0(a)``.

Every leg also carries the value ``∅`` (no coupling: every influence 1; it shares the class of a path index
that couples to nothing where there is one, e.g. the diagonal ones on a ``v`` leg), so that ``f[:, ∅, :]`` is
the transfer matrix of a time outside the window.  The left boundary ``v_l`` (no coupling
before the first step) is its dominant left eigenvector; the right boundary ``v_r`` (the future traced out, the
cap of every step) is the dominant right eigenvector of ``sum_a w_a f[:, a, :]`` with the trace weights
``w``.  ``f`` is divided by that eigenvalue (so the trace is kept) and ``v_l . v_r = 1``.

Gauge: Hastings' inverse-free form of iTEBD (J. Math. Phys. 50, 095207 (2009)): the sites are kept as
``B = Gamma lambda``; after a gate ``theta = X S Y`` the right site is ``Y`` and the left one is the gated
pair contracted with ``Y^dagger``, so no singular value is ever divided by.  Truncation: the relative criterion
of TEMPO (:func:`oqupy._mps.truncation_rank`, degeneracy rule included), so ``epsrel`` means what it means for
:class:`oqupy.PtTempo`.

**[Link2024]** V. Link, H.-H. Tu and W. T. Strunz, *Open quantum system dynamics from infinite tensor network
contraction*, Phys. Rev. Lett. 132, 200403 (2024).
"""

import math
from typing import Any, List, NamedTuple, Optional, Tuple

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from oqupy import config
from oqupy._influences import Influences, real_tensor
from oqupy._mps import truncation_rank

__runs_on__ = "host"

__all__ = ["Lanes", "UniformInfluence", "boundary_vectors", "uniform_influence"]

DENSE_EIG_LIMIT = 600
"""Bond dimensions up to this use a dense eigensolver for the boundary vectors, larger ones Arnoldi."""


WEIGHT_TOLERANCE = 1e-10
"""Trace weights below this (relative to the largest) are rounding: their path index is not traced."""


class UniformInfluence(NamedTuple):
    """The repeating tensor of a uniform influence functional and what its construction measured."""

    cell: (
        np.ndarray
    )  # f[l, a, r]: bond, full path index (coupling eigenbasis), bond; divided by its eigenvalue
    left: np.ndarray  # v_l: the bond vector before the first step (v_l . v_r = 1)
    right: np.ndarray  # v_r: the future traced out (every cap)
    ranks: List[int]  # kept bond after the layer of lag K, K - 1, ..., 1
    discarded: float  # largest relative norm of discarded singular values over the layers
    cutoff_influence: float  # s_1 / s_0 of the first layer: how much the influence at lag K still matters


class Lanes(NamedTuple):
    """The values of the two legs of a time: the classes, and where ``∅`` is among them."""

    north: int  # values of a d leg (north classes, plus ∅ unless a class already has O- = O+ = 0)
    west: int  # values of a v leg (west classes, plus ∅ unless a class already has O- = 0)
    empty_north: int
    empty_west: int


def _lanes(influences: Influences) -> Lanes:
    """``∅`` shares the class of a path index that couples to nothing (every influence 1), if there is one."""
    north_comm = influences.comm[influences.north_rep]
    north_acomm = influences.acomm[influences.north_rep]
    west_comm = influences.comm[influences.west_rep]
    scale = max(float(np.max(np.abs(influences.acomm))), 1.0)
    empty_north = np.flatnonzero(
        (np.abs(north_comm) <= 1e-12 * scale) & (np.abs(north_acomm) <= 1e-12 * scale)
    )
    empty_west = np.flatnonzero(np.abs(west_comm) <= 1e-12 * scale)
    north, west = north_comm.shape[0], west_comm.shape[0]
    return Lanes(
        north + (empty_north.size == 0),
        west + (empty_west.size == 0),
        int(empty_north[0]) if empty_north.size else north,
        int(empty_west[0]) if empty_west.size else west,
    )


def _extended(influence: np.ndarray, lanes: Lanes) -> np.ndarray:
    """``I[c, w]`` on the legs' values: a row / column of ones for ``∅`` where it has no class of its own."""
    north, west = influence.shape
    extended = np.ones((lanes.north, lanes.west), dtype=config.NpDtype)
    extended[:north, :west] = influence
    return extended


def _dominant(matrix: np.ndarray, left: bool) -> tuple:
    """(eigenvalue, eigenvector) of largest modulus; the left eigenvector if ``left``."""
    operator = matrix.T if left else matrix
    if operator.shape[0] <= DENSE_EIG_LIMIT:
        values, vectors = scipy.linalg.eig(operator)
        index = int(np.argmax(np.abs(values)))
        return values[index], vectors[:, index]
    values, vectors = scipy.sparse.linalg.eigs(operator, k=1, which="LM")
    return values[0], vectors[:, 0]


def _lane_bases(influences: Influences, lanes: Lanes) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The real bases of the path index and of the two legs' values (the classes, and ``∅`` as a fixed index in
    a lane of its own where it has one), or None where the influences have none (then the build is complex)."""
    bases = influences.real_bases
    if bases is None:
        return None
    path, north, west = bases
    for basis, empty in ((north, lanes.empty_north), (west, lanes.empty_west)):
        # ``∅`` shares a class only with indices that couple to nothing, which the swap maps onto themselves
        if empty < basis.shape[0] and basis[empty, empty] != 1.0:
            return None
    extended = []
    for basis, size in ((north, lanes.north), (west, lanes.west)):
        lane_basis = np.identity(size, dtype=config.NpDtype)
        lane_basis[: basis.shape[0], : basis.shape[0]] = basis
        extended.append(lane_basis)
    return path, extended[0], extended[1]


def _gated(pair: np.ndarray, gate: np.ndarray, bases: Optional[tuple]) -> np.ndarray:
    """``pair[l, c, w, r]`` multiplied by the gate ``I[c, w]``: elementwise in the coupling's basis, as the real
    matrix ``(N x W) diag(I) (N x W)^dagger`` in the real one (``N``, ``W``: the legs' bases)."""
    if bases is None:
        return pair * gate[None, :, :, None]
    _, north, west = bases
    operator = real_tensor(
        np.einsum("Cc,Ww,cw,Dc,Vw->CWDV", north, west, gate, north.conj(), west.conj(), optimize=True)
    )
    return np.transpose(np.tensordot(pair, operator, axes=((1, 2), (2, 3))), (0, 2, 3, 1))


def uniform_influence(
    influences: Influences, dkmax: int, epsrel: float, weights: np.ndarray, progress: Optional[Any] = None
) -> UniformInfluence:
    """The uniform influence functional of memory ``dkmax`` (module docstring), truncated with ``epsrel``.

    Built in the real basis of the swap ``(i, j) -> (j, i)`` where the influences have one
    (``Influences(..., real=True)``: every gate, site and SVD real, and the cell, once turned back to the
    coupling's basis, satisfies ``f[:, swap a, :] = conj(f[:, a, :])`` with real boundary vectors; see
    :func:`oqupy._dynamics_setup.real_uniform`), in the coupling's basis (complex) otherwise.

    Parameters
    ----------
    influences: Influences
        The bath's influences (lags ``1 ... dkmax`` made available here; the oldest lag carries the memory
        tail if the parameters ask for one, with its stationary length ``dt + add_correlation_time``).
    dkmax: int
        The memory cut-off ``K`` (at least 1).
    epsrel: float
        Relative truncation tolerance of every bond.
    weights: ndarray
        Trace weights ``w_a`` of the path index (``t_in * t_out`` of the process tensor).
    progress:
        A progress object (:func:`oqupy.util.get_progress`), told the number of layers done; None: none.
    """
    influences.extend(dkmax)
    north, west = influences.north, influences.west
    lanes = _lanes(influences)
    bases = _lane_bases(influences, lanes)
    v_site: np.ndarray = np.full((1, lanes.west, 1), 1.0 / np.sqrt(lanes.west), dtype=config.NpDtype)
    d_site: np.ndarray = np.full((1, lanes.north, 1), 1.0 / np.sqrt(lanes.north), dtype=config.NpDtype)
    if bases is not None:
        v_site = real_tensor(np.einsum("Ww,lwr->lWr", bases[2], v_site))
        d_site = real_tensor(np.einsum("Cc,lcr->lCr", bases[1], d_site))
    weights_before = np.ones(1, dtype=config.NpDtypeReal)
    ranks: List[int] = []
    discarded, cutoff_influence = 0.0, 0.0
    parameters = influences.parameters
    extra = parameters.add_correlation_time or 0.0
    # a step whose memory tail has its full length (an infinite tail: every step's is shorter)
    stationary: Any = math.inf if math.isinf(extra) else dkmax + int(math.ceil(extra / parameters.dt)) + 1
    for lag in range(dkmax, 0, -1):
        gate = _extended(influences.get(lag, stationary), lanes)
        # the pair (v, d), swapped to (d, v) and gated
        pair = _gated(np.transpose(np.tensordot(v_site, d_site, axes=1), (0, 2, 1, 3)), gate, bases)
        bond, paths_d, paths_v, right = pair.shape
        theta = (weights_before[:, None, None, None] * pair).reshape(bond * paths_d, paths_v * right)
        _, values, vh = np.linalg.svd(theta, full_matrices=False)
        rank = truncation_rank(values, epsrel)
        if lag == dkmax:
            cutoff_influence = float(values[1] / values[0]) if values.size > 1 else 0.0
        discarded = max(discarded, float(np.sqrt(np.sum(values[rank:] ** 2)) / values[0]))
        norm = float(np.linalg.norm(values[:rank]))
        v_site = vh[:rank].reshape(rank, paths_v, right)
        d_site = np.tensordot(pair, v_site.conj(), axes=((2, 3), (1, 2))) / norm
        weights_before = values[:rank] / norm
        ranks.append(rank)
        if progress is not None:
            progress.update(len(ranks))
    # below the last layer both legs of a time hold its own path index (in the real basis: the classes' values
    # first, ``∅``'s own lane, a fixed index, last)
    pair = np.tensordot(v_site[:, : west.shape[0], :], d_site[:, : north.shape[0], :], axes=1)
    cell = np.einsum("lwcr,awc->lar", pair, influences.network.close, optimize=True)
    empty = v_site[:, lanes.empty_west, :] @ d_site[:, lanes.empty_north, :]
    if bases is None:
        cell, left, right_vector = boundary_vectors(cell, empty, weights)
    else:
        path = bases[0]
        # sum_a w_a f[:, a, :] = sum_A (conj(R) w)_A f_real[:, A, :]
        cell, left, right_vector = boundary_vectors(
            cell, empty, real_tensor(path.conj() @ weights), real=True
        )
        cell = np.einsum("Aa,lAr->lar", path.conj(), cell)  # back to the coupling's basis
    return UniformInfluence(cell, left, right_vector, ranks, discarded, cutoff_influence)


def _real_vector(vector: np.ndarray) -> np.ndarray:
    """An eigenvector of a real matrix to a real eigenvalue, turned real (its phase removed)."""
    largest = vector[int(np.argmax(np.abs(vector)))]
    return real_tensor(vector * (abs(largest) / largest))


def boundary_vectors(cell: np.ndarray, empty: np.ndarray, weights: np.ndarray, real: bool = False) -> tuple:
    """``(f, v_l, v_r)`` of the module docstring: ``f`` divided by the traced transfer matrix's eigenvalue and
    made causal; with ``real`` (a real ``f`` and ``empty``, in the real basis) real vectors and a real ``f``.

    ``empty`` is ``f[:, ∅, :]``; ``weights`` the trace weights of the path index.  Causality: a time whose
    path index is traced (every ``a`` with ``w_a != 0``) must not influence the past, ``f[:, a, :] v_r = v_r``;
    the truncation breaks this at its own level, which would make the trace drift over many steps.  Each such
    slice gets the smallest (rank-one) correction that restores it, so the trace is kept at every step.
    """
    value, right = _dominant(np.einsum("lar,a->lr", cell, weights), left=False)
    _, left = _dominant(empty, left=True)
    if real:
        # the eigenvalue that keeps the trace is 1 up to the truncation: real, and so are its vectors
        value, right, left = (
            float(real_tensor(np.atleast_1d(value))[0]),
            _real_vector(right),
            _real_vector(left),
        )
    cell = cell / value
    # a weight is zero up to the rounding of the transforms into the coupling's basis (a spin-1 coupling S_x
    # gives 1e-17 where a path index is not traced; taken as traced, its slice was forced to keep v_r)
    traced = np.flatnonzero(np.abs(weights) > WEIGHT_TOLERANCE * np.abs(weights).max())
    defects = right[:, None] - np.einsum("lar,r->la", cell[:, traced, :], right)
    cell[:, traced, :] += np.einsum("la,r->lar", defects, right.conj() / np.vdot(right, right))
    overlap = left @ right
    if abs(overlap) == 0.0:
        raise ValueError("The boundary vectors of the uniform influence are orthogonal.")
    return cell, left / overlap, right
