"""Whole TEMPO steps as single kernels: zip-up, sweep, truncation and read-out in one call.

(A PT-TEMPO step of the same form was removed: on a CPU it lost to ``PtTempo``'s per-split path, which is the
one benchmarked; see ``docs/benchmarks.md``.)

A step is written once with the loop primitives of :mod:`oqupy._loops` over a *ring* of tensors: the tensor of
time ``t`` lives in slot ``t % len(ring)``, so no tensor ever moves and the growth phase (fewer past times than
the memory) is the same program with a shorter trip count.

- ``oqupy_numpy``: the ring is a list of arrays of exact shapes, the loops are plain loops, the truncation keeps
  exactly the kept rank (the same as :func:`oqupy._mps.split`).
- ``oqupy_jax``: the ring is one stacked array whose bonds are padded to a static ``capacity``; each step is one
  compiled program (``jax.jit`` of ``fori_loop``/``cond``), the kept rank is decided on the device
  (:func:`oqupy._mps.kept_rank`) and applied as a mask, and the ring and current buffers are donated.  A split
  whose kept rank exceeds ``capacity`` is an overflow: the step reports the rank it needed and returns its input
  state unchanged, and the caller pads the state to the capacity of that rank and runs the step again.

Singular values of zero padding are exactly zero (or rounding noise far below any kept value), so the padded
and the exact computation keep the same subspaces.
"""

from typing import Any, NamedTuple, Tuple

import numpy as np

from oqupy._codegen import BACKEND, kernel
from oqupy._loops import cond, fori_loop, replace, trimmed
from oqupy._mps import (
    absorb,
    close_line,
    new_sites,
    split_capped,
    stored,
    sum_site,
    unit,
    zip_site,
)

__runs_on__ = "device"

__all__ = [
    "BOND_SIZES",
    "CAPACITIES",
    "TempoOperators",
    "TempoStep",
    "UNBOUNDED",
    "capacity_for",
    "initial_capacity",
    "resize_ring",
    "sizes_within",
    "steps_bucket",
    "tempo_step",
]

CAPACITIES = (4, 8, 16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512)
"""Bond capacities of the compiled steps (``oqupy_jax``): a run compiles its step once per capacity it reaches
(the canonical TEMPO run: 4, 8, 16, 24), and pads its ring of sites to that capacity."""

BOND_SIZES = (
    4,
    8,
    12,
    16,
    20,
    24,
    28,
    32,
    40,
    48,
    56,
    64,
    80,
    96,
    112,
    128,
    160,
    192,
    224,
    256,
    320,
    384,
    512,
)
"""The sizes a bond is cut to inside a compiled step (:func:`sizes_within`): steps of 4 up to 64, where the
padding of every SVD (whose cost grows with the cube of the bond) dominates a CPU run, about 1.25x apart beyond."""


UNBOUNDED = 2**62
"""The capacity passed in ``oqupy_numpy``, whose bonds are exact and never overflow."""


def initial_capacity(paths: int) -> int:
    """Bond capacity of a new run: ``oqupy_jax`` pads to capacities, ``oqupy_numpy`` has none."""
    if BACKEND == "jax":
        return capacity_for(paths)
    else:
        return UNBOUNDED


def capacity_for(rank: int) -> int:
    """The smallest capacity that holds ``rank`` (``oqupy_jax``; multiples of 256 beyond the table)."""
    for capacity in CAPACITIES:
        if rank <= capacity:
            return capacity
    return -(-rank // 256) * 256


def sizes_within(capacity: int) -> Tuple[int, ...]:
    """The bond sizes a step of ``capacity`` factorises its sites at (``oqupy_jax``, :func:`oqupy._loops.trimmed`).

    Every smaller capacity, and every bond size from the capacity below up to ``capacity``: at capacity 24 a site of
    bond 18 runs at 20, one of bond 6 at 8.  Each size is one branch of the step program, so the sizes are fine only
    near the top, where most sites of a TEMPO run are (the canonical run compiles in about 4 s instead of 7).
    """
    below = tuple(size for size in CAPACITIES if size < capacity)
    floor = below[-1] if below else 0
    fine = tuple(size for size in BOND_SIZES if floor < size < capacity)
    return below + fine + (capacity,)


def steps_bucket(count: int) -> int:
    """Stacks of per-step operators are padded to a power of two of steps (one compilation per bucket)."""
    return 1 << max(count - 1, 0).bit_length()


def resize_ring(
    sites: Any, current: np.ndarray, slots: int, capacity: int, paths: int
) -> Tuple[Any, np.ndarray]:
    """The ring grown to ``slots`` slots (new slots at the end) and, in ``oqupy_jax``, bonds padded to ``capacity``.

    Valid while no time has wrapped around the ring yet (the memory grows only before the cut-off is reached).
    ``sites`` is ``None`` for a new run.
    """
    if BACKEND == "jax":
        if sites is None:
            sites = np.zeros((0, capacity, paths, capacity), dtype=np.complex128)
        bond = capacity - sites.shape[1]
        sites = np.pad(sites, ((0, slots - sites.shape[0]), (0, bond), (0, 0), (0, bond)))
        current = np.pad(current, ((0, capacity - current.shape[0]), (0, 0)))
        return sites, current
    else:
        sites = [] if sites is None else list(sites)
        return sites + [None] * (slots - len(sites)), current


class TempoOperators(NamedTuple):
    """The constant tensors of one TEMPO run (device-resident in ``oqupy_jax``)."""

    lines: np.ndarray  # influences of step distances 1 ... K, lines[dk - 1][north, west]
    west: np.ndarray  # west class projectors west[w, b]
    north: np.ndarray  # north class projectors north[c, b]
    self_influence: np.ndarray  # I0[b]
    into: np.ndarray  # per step: (to eigenbasis) @ prop_1, stacked (padded to a bucket of steps)
    out_of: np.ndarray  # per step: prop_2 @ (from eigenbasis), stacked


def _zip_up(
    sites: Any, carry: np.ndarray, lines: np.ndarray, first: Any, count: Any, epsrel: float, capacity: int
) -> Tuple[Any, np.ndarray, np.ndarray]:
    """The influence line of the new time through the ``count`` past sites, oldest (time ``first``) first.

    Returns the new sites, the carry at the end of the line and the largest kept rank (above ``capacity``: the
    bonds overflowed)."""
    ring = len(sites)
    line = carry.shape[2]

    def zip_split(
        carry: np.ndarray, site: np.ndarray, influence: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        left, right, rank = split_capped(zip_site(carry, site, influence), epsrel, capacity, False)
        return (
            left.reshape(carry.shape[0], site.shape[1], left.shape[1]),
            right.reshape(right.shape[0], site.shape[2], line),
            rank,
        )

    def body(index: Any, state: Tuple[Any, np.ndarray, np.ndarray]) -> Tuple[Any, np.ndarray, np.ndarray]:
        sites, carry, needed = state
        slot = (first + index) % ring
        site, carry, rank = trimmed(
            zip_split,
            sizes_within(capacity),
            ((0, 1), (0, 2), ()),
            carry,
            sites[slot],
            lines[count - index - 1],
        )
        return replace(sites, slot, site), carry, np.maximum(needed, rank)

    return fori_loop(0, count, body, (sites, carry, np.array(1)))


def _sweep(
    sites: Any, newest: Any, count: Any, left: np.ndarray, epsrel: float, capacity: int
) -> Tuple[Any, np.ndarray, np.ndarray]:
    """Right-to-left truncation of the ``count`` sites of times ``newest, newest - 1, ...``; returns the
    remainder ``left`` to absorb into the oldest one and the largest kept rank."""
    ring = len(sites)

    def absorb_split(site: np.ndarray, left: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        site = np.tensordot(site, left, axes=1)
        bond, paths, next_bond = site.shape
        left, right, rank = split_capped(site.reshape(bond, paths * next_bond), epsrel, capacity, True)
        return right.reshape(right.shape[0], paths, next_bond), left, rank

    def body(index: Any, state: Tuple[Any, np.ndarray, np.ndarray]) -> Tuple[Any, np.ndarray, np.ndarray]:
        sites, left, top = state
        slot = (newest - index) % ring
        site, left, rank = trimmed(absorb_split, sizes_within(capacity), ((0, 2), (0, 1)), sites[slot], left)
        return replace(sites, slot, site), left, np.maximum(top, rank)

    return fori_loop(0, count, body, (sites, left, np.array(1)))


def _merge_oldest(sites: Any, oldest: Any) -> Any:
    """Sum the site of time ``oldest`` over its path index into the site of the next time."""
    ring = len(sites)
    site, following = sites[oldest % ring], sites[(oldest + 1) % ring]
    vector = np.sum(site, axis=(0, 1))
    merged = np.einsum("l,cr->lcr", unit(site.shape[0]), np.tensordot(vector, following, axes=1))
    return replace(sites, (oldest + 1) % ring, merged)


def _keep(sites: Any, oldest: Any) -> Any:
    return sites


def _first(old: Any, new: Any) -> Any:
    return old


def _second(old: Any, new: Any) -> Any:
    return new


class TempoStep(NamedTuple):
    """What one :func:`tempo_step` returns."""

    sites: Any  # the new ring of past sites
    current: np.ndarray  # the new current site
    state: np.ndarray  # the density matrix of the new time
    rank: np.ndarray  # the largest rank kept by the sweep and the newest split
    needed: np.ndarray  # the largest rank the zip-up needed (above ``capacity``: the bonds overflowed)


@kernel(static=("capacity",), donate=("sites", "current"))
def tempo_step(
    sites: Any,
    current: np.ndarray,
    step: Any,
    index: Any,
    oldest_line: np.ndarray,
    operators: TempoOperators,
    epsrel: float,
    capacity: int,
) -> TempoStep:
    """One TEMPO step ``step -> step + 1``: zip-up, new sites, sweep, memory cut-off and read-out.

    ``sites`` is the ring of the past sites (``len(sites) = K + 1`` slots for a memory of ``K`` steps; the
    ``min(step, K)`` sites of times ``step - count ... step - 1`` are valid), ``current[l, x]`` the current site,
    ``index`` the position of this step in ``operators.into`` / ``out_of``, and ``oldest_line`` the influence of
    distance ``K`` at this step (with the memory tail, if any).  Returns the new ring and current site, the
    density matrix of time ``step + 1``, the largest kept rank of the sweep and the largest of the zip-up
    (``oqupy_jax``: above ``capacity`` the bonds overflowed and the state is returned unchanged).
    """
    ring = len(sites)
    memory = ring - 1
    count = np.minimum(step, memory)
    first = step - count
    lines = replace(operators.lines, memory - 1, oldest_line)
    line = operators.west.shape[0]
    bond = stored(1, capacity)
    # the oldest site's left bond has dimension 1: the line starts as the trivial bond
    carry = np.einsum("l,r,w->lrw", unit(bond), unit(bond), np.ones(line, dtype=np.complex128))
    propagated = current @ operators.into[index].T
    new, carry, needed = _zip_up(sites, carry, lines, first, count, epsrel, capacity)
    line_end = close_line(carry, propagated, operators.west, operators.self_influence)
    site, newest = new_sites(line_end, operators.north, operators.out_of[index])
    left, right, rank = split_capped(newest, epsrel, capacity, True)
    new = replace(new, step % ring, np.tensordot(site, left, axes=1))
    identity = np.identity(left.shape[1], dtype=np.complex128) * (np.arange(left.shape[1]) < rank)
    new, left, top = _sweep(new, step, count + 1, identity, epsrel, capacity)
    new = replace(new, first % ring, absorb(left, new[first % ring]))
    new = cond(count == memory, _merge_oldest, _keep, new, first)
    kept = np.minimum(step + 1, memory)
    vector = fori_loop(
        0, kept, lambda k, vector: sum_site(vector, new[(step + 1 - kept + k) % ring]), unit(bond)
    )
    dim = round(current.shape[1] ** 0.5)
    state = (vector @ right).reshape(dim, dim)
    sites, current = cond(needed > capacity, _first, _second, (sites, current), (new, right))
    return TempoStep(sites, current, state, np.maximum(top, rank), needed)
