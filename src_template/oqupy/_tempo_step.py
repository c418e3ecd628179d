"""One TEMPO step on the host: the zip-up of the new time's influence line through the past sites, the new sites,
the right-to-left sweep, the memory cut-off and the read-out, with LAPACK's SVD at exact bond dimensions, in both
packages.

Why host code in ``oqupy_jax`` too: a TEMPO step is a chain of ``2 K`` small SVDs (a few tens of rows), each
needing the one before, whose bond dimensions differ from site to site.  Compiled for XLA (one program per step,
every bond padded to a capacity, each site cut to the nearest of a few sizes by a ``lax.switch``), the step
spent 81 % of its time in LAPACK's SVD on matrices larger than NumPy's, since one size had to hold every bond
axis of a site, and took 1.2 to 1.3 times ``oqupy_numpy``'s time on a CPU after 4 to 6 s of compilation
(``docs/benchmarks.md``).  NumPy calling LAPACK on exact shapes has none of these costs, so both packages run
this module, as they do for PT-TEMPO (:mod:`oqupy._pt_tempo_step`, the same :func:`oqupy._mps.split`).

Tensor legs (see :mod:`oqupy.tempo`): a past site ``site[l, c, r]`` (left bond, path index of one earlier time
reduced to north classes, right bond), the current site ``current[l, x]`` (left bond, Liouville index of the
state), the zip-up carry ``carry[c, r, w]`` (new left bond, old bond, index of the influence line: west classes).
The past sites are a list in time order, oldest first; the oldest has a left bond of dimension 1.
"""

from typing import List, NamedTuple, Sequence, Tuple

import numpy as np

from oqupy._mps import split

__runs_on__ = "host"

__all__ = ["TempoOperators", "TempoStep", "close_line", "merge_oldest", "step", "sum_site", "zip_site"]


class TempoOperators(NamedTuple):
    """The constant tensors of some TEMPO steps."""

    lines: np.ndarray  # influences of step distances 1 ... K, lines[dk - 1][north, west]
    west: np.ndarray  # west class projectors west[w, b]
    north: np.ndarray  # north class projectors north[c, b]
    self_influence: np.ndarray  # I0[b]
    into: np.ndarray  # per step: (to eigenbasis) @ prop_1, stacked
    out_of: np.ndarray  # per step: prop_2 @ (from eigenbasis), stacked


class TempoStep(NamedTuple):
    """What one :func:`step` returns."""

    past: List[np.ndarray]  # the past sites after the step, oldest first
    current: np.ndarray  # the new current site
    state: np.ndarray  # the density matrix of the new time
    rank: int  # the largest rank kept by the sweep and the newest split


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


def close_line(
    carry: np.ndarray, current: np.ndarray, west: np.ndarray, self_influence: np.ndarray
) -> np.ndarray:
    """End of the influence line at the current site: ``G[l, b] = sum_{q,w} carry[l,q,w] P_w[w,b] C[q,b] I0[b]``."""
    return np.einsum("lqw,wb,qb,b->lb", carry, west, current, self_influence)


def sum_site(vector: np.ndarray, site: np.ndarray) -> np.ndarray:
    """``sum_{l,c} vector[l] site[l, c, r]``: one past site summed over its path index."""
    return np.einsum("l,lcr->r", vector, site)


def merge_oldest(past: List[np.ndarray]) -> List[np.ndarray]:
    """The oldest site summed over its path index into the next one (which gets a left bond of dimension 1)."""
    oldest, following = past[0], past[1]
    vector = np.sum(oldest, axis=(0, 1))
    unit = np.zeros(oldest.shape[0], dtype=np.complex128)
    unit[0] = 1.0
    merged = np.einsum("l,cr->lcr", unit, np.tensordot(vector, following, axes=1))
    return [merged, *past[2:]]


def _split_left(site: np.ndarray, epsrel: float) -> Tuple[np.ndarray, np.ndarray, int]:
    """``site[l, c, r] ~ sum_k remainder[l, k] new[k, c, r]`` (truncated; ``new`` right-canonical): one split of
    the sweep.  Returns ``(remainder, new, rank)``."""
    bond, paths, next_bond = site.shape
    remainder, right, rank = split(site.reshape(bond, paths * next_bond), epsrel, weights_left=True)
    return remainder, right.reshape(right.shape[0], paths, next_bond), rank


def step(
    past: Sequence[np.ndarray],
    current: np.ndarray,
    index: int,
    oldest_line: np.ndarray,
    operators: TempoOperators,
    epsrel: float,
    memory: int,
) -> TempoStep:
    """One TEMPO step with the propagators ``index`` of ``operators``, for a memory of ``memory >= 1`` steps.

    ``past`` holds the ``min(step, memory)`` sites of the latest times, oldest first; ``oldest_line`` is the
    influence of distance ``memory`` at this step (with the memory tail, if any).  The line of the new time runs
    from the oldest site to the newest, truncating every bond (zip-up), closes on the current site (with ``I0``)
    and makes the new past site and current site; a right-to-left sweep then truncates every bond in canonical
    form.  When the memory is full the oldest site is summed into the next one.
    """
    past = list(past)
    count = len(past)
    line = operators.west.shape[0]
    carry = np.ones((1, 1, line), dtype=np.complex128)  # the oldest site's left bond is trivial
    for position in range(count):
        distance = count - position
        influence = oldest_line if distance == memory else operators.lines[distance - 1]
        site = past[position]
        left, right, _ = split(zip_site(carry, site, influence), epsrel)
        past[position] = left.reshape(carry.shape[0], site.shape[1], left.shape[1])
        carry = right.reshape(right.shape[0], site.shape[2], line)
    propagated = current @ operators.into[index].T
    line_end = close_line(carry, propagated, operators.west, operators.self_influence)
    site = np.einsum("lb,nb->lnb", line_end, operators.north)
    left, current, top = split(operators.out_of[index].T, epsrel, weights_left=True)
    past.append(np.tensordot(site, left, axes=1))
    remainder, past[count], rank = _split_left(past[count], epsrel)
    top = max(top, rank)
    # newest to oldest: each remainder moves into the next older site
    for position in range(count - 1, -1, -1):
        remainder, past[position], rank = _split_left(np.tensordot(past[position], remainder, axes=1), epsrel)
        top = max(top, rank)
    past[0] = np.tensordot(remainder, past[0], axes=1)
    if count == memory:
        past = merge_oldest(past)
    vector = np.ones(1, dtype=np.complex128)
    for site in past:
        vector = sum_site(vector, site)
    dim = round(current.shape[1] ** 0.5)
    return TempoStep(past, current, (vector @ current).reshape(dim, dim), top)
