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
``site[l, a, r]`` over the full path index ``a``.
"""

from typing import List, Optional, Tuple

import numpy as np

from oqupy._mps import split

__runs_on__ = "host"

__all__ = ["close_leg", "step", "zip_leg"]


def _leg_carry(carry: np.ndarray, leg: np.ndarray) -> np.ndarray:
    """``sum_r leg[l, w, r] carry[r, c, x]`` as ``product[l, w, c, x]`` (one matrix product)."""
    left, west, right = leg.shape
    _, line, new = carry.shape
    product = np.matmul(leg.reshape(left * west, right), carry.reshape(right, line * new))
    return product.reshape(left, west, line, new)


def zip_leg(carry: np.ndarray, leg: np.ndarray, influence: np.ndarray) -> np.ndarray:
    """Absorb one future leg and its influence ``I[c, w]`` into the carry (right to left).

    Returns ``theta`` with rows ``(l, c)`` and columns ``(w, x)``.
    """
    product = _leg_carry(carry, leg) * np.transpose(influence)[None, :, :, None]
    left, west, line, new = product.shape
    return np.transpose(product, (0, 2, 1, 3)).reshape(left * line, west * new)


def close_leg(
    carry: np.ndarray, leg: np.ndarray, west: np.ndarray, north: np.ndarray, self_influence: np.ndarray
) -> np.ndarray:
    """End the line on the leg of its own time; the finished site ``site[l, a, x]``.

    ``site[l, a, x] = sum_r leg[l, w(a), r] carry[r, c(a), x] I0[a]`` with the class projectors ``west[w, a]``
    and ``north[c, a]``.
    """
    return np.einsum("lwcx,wa,ca,a->lax", _leg_carry(carry, leg), west, north, self_influence)


def step(
    legs: List[np.ndarray],
    length: int,
    influences: List[np.ndarray],
    west: np.ndarray,
    north: np.ndarray,
    self_influence: np.ndarray,
    epsrel: float,
    north_weights: Optional[np.ndarray] = None,
    west_weights: Optional[np.ndarray] = None,
) -> Tuple[np.ndarray, List[np.ndarray], int]:
    """Finish the site of the current time ``n``; returns ``(site, legs, largest kept rank)``.

    ``legs[k]`` is the open leg of time ``n + k`` (``legs[0]`` the current time's own); times that enter the
    memory now (up to ``length`` legs in all) start as trivial legs.  ``influences[k - 1]`` is the influence
    ``I[c, w]`` of distance ``k >= 1`` between ``n`` and ``n + k``.  The line of ``a_n``
    runs from the farthest leg back to ``n + 1``, truncating every bond (zip-up), and closes on the leg of ``n``
    (with ``I0``); a left-to-right sweep then makes the site and the legs left-canonical, the optimal truncation
    of every bond (everything to its left is an isometry, everything to its right was made one by the zip-up).

    ``north_weights`` / ``west_weights`` (None: ones) weight the classes in every truncation
    (:class:`oqupy._influences.Influences`): each split factorises the weighted matrix and takes the weights
    off its factors, so the kept subspaces are those of the unreduced path indices.
    """
    num_north, num_west = north.shape[0], west.shape[0]
    row_weights = np.ones(num_north) if north_weights is None else north_weights
    column_weights = np.ones(num_west) if west_weights is None else west_weights
    legs = list(legs) + [np.ones((1, num_west, 1), dtype=np.complex128)] * (length - len(legs))
    carry = np.ones((1, num_north, 1), dtype=np.complex128)
    max_rank = 1
    for lag in range(len(legs) - 1, 0, -1):
        bond, new = legs[lag].shape[0], carry.shape[2]
        theta = zip_leg(carry, legs[lag], influences[lag - 1]).reshape(bond, num_north, num_west, new)
        theta = theta * row_weights[None, :, None, None] * column_weights[None, None, :, None]
        weights, leg, rank = split(theta.reshape(bond * num_north, num_west * new), epsrel, weights_left=True)
        legs[lag] = leg.reshape(rank, num_west, new) / column_weights[None, :, None]
        carry = weights.reshape(bond, num_north, rank) / row_weights[None, :, None]
        max_rank = max(max_rank, rank)
    chain = [close_leg(carry, legs[0], west, north, self_influence), *legs[1:]]
    for index in range(len(chain) - 1):
        # the finished site is over the full path index; the legs over the west classes
        scale = np.ones(chain[index].shape[1]) if index == 0 else column_weights
        left, classes, right = chain[index].shape
        weighted = chain[index] * scale[None, :, None]
        isometry, weights, rank = split(weighted.reshape(left * classes, right), epsrel)
        chain[index] = isometry.reshape(left, classes, rank) / scale[None, :, None]
        chain[index + 1] = np.tensordot(weights, chain[index + 1], axes=1)
        max_rank = max(max_rank, rank)
    return chain[0], chain[1:], max_rank
