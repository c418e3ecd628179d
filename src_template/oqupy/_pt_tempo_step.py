"""One PT-TEMPO step on the host: the zip-up of a new time's influence line through the open legs and the
canonical sweep, with LAPACK's SVD and exact bond dimensions, in both packages.

Why host code in ``oqupy_jax`` too: a PT-TEMPO build is a chain of some ``N K`` small SVDs (tens to a few
hundred rows), each needing the one before, with bond dimensions that change from split to split.  Compiled for
XLA, every split is either a program of its own shape (hundreds of programs per build) or padded to a bucket
(SVDs at up to 1.6 times the work), and every truncation decision is a device-to-host round trip; measured on a
CPU, that path took 1.4 to 1.9 times as long as NumPy's (``docs/benchmarks.md``).  NumPy calling LAPACK
directly has none of these costs, so both packages build process tensors here and hand the finished MPS to the
(backend) process-tensor classes.  TEMPO's step runs on the host for the same reason (:mod:`oqupy._tempo_step`);
both truncate with :func:`oqupy._mps.split`.

Tensor legs (see :mod:`oqupy.pt_tempo`): an open leg ``leg[l, w, r]`` (left bond, west class of a later time,
right bond), the line's carry ``carry[r, c, x]`` (``c``: north class of the current time), a finished site
``site[l, a, r]`` over the path index ``a``.  The step is written for any basis of the class indices: the
:class:`oqupy._influences.StepNetwork` and the line operators ``line[C, W, c, w]`` fix it.  PT-TEMPO passes the
real basis of :func:`oqupy._influences.conjugation_basis`, in which every tensor, and so every SVD, is real.
"""

from typing import List, Optional, Tuple

import numpy as np
import scipy.linalg.lapack

from oqupy._influences import StepNetwork
from oqupy._mps import lapack_svd, split, truncated_factors, truncation_rank

__runs_on__ = "host"

__all__ = [
    "close_leg",
    "isometric_split",
    "orthonormal_columns",
    "pair_pays",
    "sketch_generator",
    "sketched_split",
    "step",
    "step_pair",
    "zip_leg",
]

SKETCH_SEED = 162
"""Seed of the Gaussian sketches of a build (:func:`sketched_split`): builds are reproducible."""


def sketch_generator() -> np.random.Generator:
    """The random generator of one build's sketches (fixed seed; it advances with the build)."""
    return np.random.default_rng(SKETCH_SEED)


SKETCH_OVERSAMPLING = 10
"""Columns a sketch has beyond the expected rank (:func:`sketched_split`)."""

SKETCH_FRACTION = 0.6
"""A sketch wider than this fraction of the smaller dimension is no cheaper than an SVD: split directly."""


def sketched_split(
    matrix: np.ndarray, epsrel: float, expected: int, rng: np.random.Generator, weights_left: bool = False
) -> Tuple[np.ndarray, np.ndarray, int]:
    """:func:`oqupy._mps.split` through a randomized range finder, for a matrix of (numerically) low rank near
    ``expected``.

    ``Q`` spans ``matrix @ G`` (``G`` Gaussian, ``expected + SKETCH_OVERSAMPLING`` columns; Halko, Martinsson
    and Tropp, SIAM Rev. 53, 217 (2011)); ``B = Q^dagger matrix`` is split by its SVD, and the residual
    ``|matrix - Q B|``, computed explicitly, counts as discarded (:func:`oqupy._mps.truncation_rank`), so the
    truncation error stays ``<= epsrel * s_0`` exactly as for :func:`oqupy._mps.split`.  Falls back to it if the
    residual is above half of that, or the rank reaches the sketch's last columns (the range was not captured).
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
    return truncated_factors(basis @ left[:, :rank], values[:rank], right[:rank], weights_left)


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


def isometric_split(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``matrix = left @ right`` with ``left`` an isometry (:func:`orthonormal_columns`) and nothing truncated;
    ``right = left^dagger matrix``."""
    left = orthonormal_columns(matrix)
    return left, left.conj().T @ matrix


def _leg_carry(carry: np.ndarray, leg: np.ndarray) -> np.ndarray:
    """``sum_r leg[l, w, r] carry[r, c, x]`` as ``product[l, w, c, x]`` (one matrix product)."""
    left, west, right = leg.shape
    _, line, new = carry.shape
    product = np.matmul(leg.reshape(left * west, right), carry.reshape(right, line * new))
    return product.reshape(left, west, line, new)


def zip_leg(carry: np.ndarray, leg: np.ndarray, line: np.ndarray, num_north: int) -> np.ndarray:
    """Absorb one future leg and its influence, the matrix ``line[(C, W), (w, c)]``, into the carry (right to
    left).  Returns ``theta`` with rows ``(l, C)`` and columns ``(W, x)``.
    """
    product = _leg_carry(carry, leg)
    left, west, line_classes, new = product.shape
    theta = np.matmul(line, product.reshape(left, west * line_classes, new))  # [l, (C, W), x]
    return theta.reshape(left * num_north, (line.shape[0] // num_north) * new)


def close_leg(carry: np.ndarray, leg: np.ndarray, close: np.ndarray) -> np.ndarray:
    """End the line on the leg of its own time; the finished site ``site[l, a, x]``.

    ``site[l, a, x] = sum_{w, c, r} leg[l, w, r] carry[r, c, x] close[a, w, c]`` (``close``: the class
    projectors and ``I0``, :class:`oqupy._influences.StepNetwork`).
    """
    site = np.tensordot(_leg_carry(carry, leg), close, axes=([1, 2], [1, 2]))  # [l, x, a]
    return np.transpose(site, (0, 2, 1))


def step(
    legs: List[np.ndarray],
    length: int,
    lines: List[np.ndarray],
    network: StepNetwork,
    epsrel: float,
    sketches: Optional[np.random.Generator] = None,
) -> Tuple[np.ndarray, List[np.ndarray], int]:
    """Finish the site of the current time ``n``; returns ``(site, legs, largest kept rank)``.

    ``legs[k]`` is the open leg of time ``n + k`` (``legs[0]`` the current time's own); times that enter the
    memory now (up to ``length`` legs in all) start as ``network.start_leg``.  ``lines[k - 1]`` is the influence
    of distance ``k >= 1`` between ``n`` and ``n + k``, as the matrix ``line[(C, W), (w, c)]``.  The line of ``a_n``
    runs from the farthest leg back to ``n + 1``, truncating every bond (zip-up), and closes on the leg of ``n``
    (with ``I0``); a left-to-right sweep then makes the site and the legs left-canonical, the optimal truncation
    of every bond (everything to its left is an isometry, everything to its right was made one by the zip-up).
    The site is returned over the path index of the coupling eigenbasis (``network.to_path``), the legs in the
    step's basis.

    With ``sketches`` (a random generator, the fast construction) a zip-up split whose expected rank is small is
    sketched (:func:`sketched_split`), and the sweep truncates only the finished site's bond: the legs'
    bonds are orthogonalised without truncation (:func:`isometric_split`, a thin QR), since the next
    step's zip-up truncates each of them again, with its line applied and in the same canonical form.  Without
    ``sketches`` every split is a full truncated SVD (the reference construction).

    ``network.north_weights`` / ``west_weights`` weight the classes in every truncation
    (:class:`oqupy._influences.Influences`): each split factorises the weighted matrix and takes the weights
    off its factors, so the kept subspaces are those of the unreduced path indices.
    """
    row_weights, column_weights = network.north_weights, network.west_weights
    num_north, num_west = row_weights.shape[0], column_weights.shape[0]
    # the weights of the truncations applied to the line's output (rows C, columns W of theta)
    output_weights = (row_weights[:, None] * column_weights[None, :]).reshape(-1, 1)
    start = network.start_leg.reshape(1, num_west, 1)
    legs = list(legs) + [start] * (length - len(legs))
    carry = network.start_carry.reshape(1, num_north, 1)
    max_rank = 1
    for lag in range(len(legs) - 1, 0, -1):
        bond, new = legs[lag].shape[0], carry.shape[2]
        theta = zip_leg(carry, legs[lag], output_weights * lines[lag - 1], num_north)
        if sketches is None:
            weights, leg, rank = split(theta, epsrel, weights_left=True)
        else:
            # the bond this split replaces had ``bond`` columns one step ago: the rank to expect
            weights, leg, rank = sketched_split(theta, epsrel, bond, sketches, weights_left=True)
        legs[lag] = leg.reshape(rank, num_west, new) / column_weights[None, :, None]
        carry = weights.reshape(bond, num_north, rank) / row_weights[None, :, None]
        max_rank = max(max_rank, rank)
    sites, legs, rank = _sweep(
        [close_leg(carry, legs[0], network.close), *legs[1:]], 1, network, epsrel, sketches
    )
    return sites[0], legs, max(max_rank, rank)


def _sweep(
    chain: List[np.ndarray],
    finished: int,
    network: StepNetwork,
    epsrel: float,
    sketches: Optional[np.random.Generator],
) -> Tuple[List[np.ndarray], List[np.ndarray], int]:
    """The left-to-right sweep after a zip-up: ``chain`` holds ``finished`` sites over the path index, then the
    open legs.  The sites' bonds are truncated (full SVDs), the legs' bonds too without ``sketches``, else only
    orthogonalised (:func:`isometric_split`).  Returns the sites over the coupling eigenbasis's path index
    (``network.to_path``), the left-canonical legs and the largest kept rank."""
    column_weights = network.west_weights
    weighted_west = bool(np.any(column_weights != 1.0))
    max_rank = 1
    for index in range(len(chain) - 1):
        # the finished sites are over the path index (unweighted); the legs over the weighted west classes
        left, classes, right = chain[index].shape
        scaled = index >= finished and weighted_west
        weighted = chain[index] * column_weights[None, :, None] if scaled else chain[index]
        if index < finished or sketches is None:
            isometry, weights, rank = split(weighted.reshape(left * classes, right), epsrel)
        else:
            # a leg's bond: the next step's zip-up truncates it, with that step's line applied
            isometry, weights = isometric_split(weighted.reshape(left * classes, right))
            rank = weights.shape[0]
        isometry = isometry.reshape(left, classes, rank)
        chain[index] = isometry / column_weights[None, :, None] if scaled else isometry
        following = chain[index + 1]
        chain[index + 1] = np.matmul(weights, following.reshape(following.shape[0], -1)).reshape(
            rank, *following.shape[1:]
        )
        max_rank = max(max_rank, rank)
    sites = [
        np.transpose(np.tensordot(network.to_path, site, axes=([1], [1])), (1, 0, 2))
        for site in chain[:finished]
    ]
    return sites, chain[finished:], max_rank


PAIR_MAX_BOND = 48
"""Largest open bond at which :func:`step_pair` replaces two :func:`step` calls (see :func:`pair_pays`)."""

PAIR_MAX_NORTH = 4
"""Most north classes for :func:`step_pair`: its zip-up matrices have ``num_north**2`` row blocks."""


def pair_pays(legs: List[np.ndarray], network: StepNetwork) -> bool:
    """Whether :func:`step_pair` is the cheaper way to the next two sites.

    A pair halves the number of splits (and of sweeps) at the price of matrices ``num_north`` times taller.
    Small splits cost LAPACK's fixed overhead, large ones their arithmetic, so pairs pay at small bonds.
    Measured on one core (``docs/benchmarks.md``): 1.1-1.2x faster on OQuPy #162's bath (bonds up to 39),
    neutral where the bonds grow past 48 (74-250), 1.2x slower with pairs up to bond 96 and 1.3-1.5x at bonds
    74-250 without a limit, 2.5x slower for a spin 1 (9 north classes).
    """
    bond = max([leg.shape[0] for leg in legs] or [1])
    return network.north_weights.shape[0] <= PAIR_MAX_NORTH and bond <= PAIR_MAX_BOND


def step_pair(
    legs: List[np.ndarray],
    length: int,
    first_line: np.ndarray,
    pair_lines: List[np.ndarray],
    network: StepNetwork,
    epsrel: float,
    sketches: Optional[np.random.Generator] = None,
) -> Tuple[List[np.ndarray], List[np.ndarray], int]:
    """Finish the sites of times ``n`` and ``n + 1`` with one zip-up; returns ``([site_n, site_n+1], legs,
    largest kept rank)``, the same tensors as two :func:`step` calls up to the truncations.

    ``legs`` and ``length`` (legs of times ``n ... n + length - 1``) are as for :func:`step`; ``first_line`` is
    the influence of distance 1 from ``n``, and ``pair_lines[k - 2]``
    (:meth:`oqupy._influences.Influences.pair_line`) those of ``n`` and ``n + 1`` on the leg of ``n + k``.  The
    carry holds both lines' north classes, ``carry[r, c, d, x]`` (``c`` of ``a_n``, ``d`` of ``a_n+1``), and one
    split truncates each bond.  Both north classes stay left of every split, with the sites of ``n`` and
    ``n + 1``, so the bonds are those of two single steps.  On the leg of ``n + 1`` the line of ``a_n`` is applied
    and ``a_n+1``'s closes; the site of ``n + 1`` is split off (its path index to the right) and ``a_n``'s line
    closes on the leg of ``n``.  One sweep (:func:`step`'s) follows.
    """
    assert length >= 2, "a pair of steps needs the legs of both times"
    row_weights, column_weights = network.north_weights, network.west_weights
    num_north, num_west = row_weights.shape[0], column_weights.shape[0]
    size = num_north * num_west
    # truncation weights of the rows (c, d, W) of the pair's output
    output_weights = (row_weights[:, None, None] * row_weights[None, :, None] * column_weights).reshape(-1, 1)
    classes = row_weights[:, None] * row_weights[None, :]
    start = network.start_leg.reshape(1, num_west, 1)
    legs = list(legs) + [start] * (length - len(legs))
    both = network.start_carry[:, None] * network.start_carry[None, :]
    carry = both.reshape(1, num_north, num_north, 1)
    max_rank = 1
    for lag in range(len(legs) - 1, 1, -1):
        left, _, right = legs[lag].shape
        new = carry.shape[3]
        product = _leg_carry(carry.reshape(right, num_north * num_north, new), legs[lag])  # [l, w, (c, d), x]
        theta = np.matmul(output_weights * pair_lines[lag - 2], product.reshape(left, size * num_north, new))
        theta = theta.reshape(left * num_north * num_north, num_west * new)  # rows (l, c, d), columns (W, x)
        if sketches is None:
            weights, leg, rank = split(theta, epsrel, weights_left=True)
        else:
            weights, leg, rank = sketched_split(theta, epsrel, left, sketches, weights_left=True)
        legs[lag] = leg.reshape(rank, num_west, new) / column_weights[None, :, None]
        carry = weights.reshape(left, num_north, num_north, rank) / classes[None, :, :, None]
        max_rank = max(max_rank, rank)
    # the leg of n + 1: a_n's line, then a_n+1's closes on it; its path index goes right
    left, _, right = legs[1].shape
    new = carry.shape[3]
    product = _leg_carry(carry.reshape(right, num_north * num_north, new), legs[1])
    first_weights = np.repeat(row_weights, num_west).reshape(-1, 1)  # rows (c, W): c's weight
    theta = np.matmul(first_weights * first_line, product.reshape(left, size, num_north * new))
    theta = np.tensordot(
        theta.reshape(left, num_north, num_west, num_north, new), network.close, axes=([2, 3], [1, 2])
    )  # [l, c, x, a]
    paths = theta.shape[3]
    theta = np.transpose(theta, (0, 1, 3, 2)).reshape(left * num_north, paths * new)
    weights, site, rank = split(theta, epsrel, weights_left=True)
    carry = weights.reshape(left, num_north, rank) / row_weights[None, :, None]
    chain = [close_leg(carry, legs[0], network.close), site.reshape(rank, paths, new), *legs[2:]]
    sites, legs, swept = _sweep(chain, 2, network, epsrel, sketches)
    return sites, legs, max(max_rank, rank, swept)
