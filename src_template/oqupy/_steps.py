"""Whole TEMPO and PT-TEMPO steps as single kernels: zip-up, sweep, truncation and read-out in one call.

A step is written once with the loop primitives of :mod:`oqupy._loops` over a *ring* of tensors: the tensor of
time ``t`` lives in slot ``t % len(ring)``, so no tensor ever moves and the growth phase (fewer past times than
the memory) is the same program with a shorter trip count.

- ``oqupy_numpy``: the ring is a list of arrays of exact shapes, the loops are plain loops, the truncation keeps
  exactly the kept rank (the same as :func:`oqupy._mps.split`).
- ``oqupy_jax``: the ring is one stacked array whose bonds are padded to a static ``capacity``; each step is one
  compiled program (``jax.jit`` of ``fori_loop``/``cond``), the kept rank is decided on the device
  (:func:`oqupy._mps.kept_rank`) and applied as a mask, and the ring and current buffers are donated.  A split
  whose kept rank exceeds ``capacity`` sets the returned ``overflow`` flag; the step then returns its input
  state unchanged, and the caller pads the state to a larger capacity and runs the step again.

Singular values of zero padding are exactly zero (or rounding noise far below any kept value), so the padded
and the exact computation keep the same subspaces.
"""

from typing import Any, NamedTuple, Tuple

import numpy as np

from oqupy._codegen import BACKEND, kernel
from oqupy._loops import cond, fori_loop, replace
from oqupy._mps import absorb, close_line, new_sites, split_capped, stored, sum_site, unit, zip_site

__runs_on__ = "device"

__all__ = ["UNBOUNDED", "initial_capacity", "CAPACITIES", "TempoOperators", "capacity_for", "resize_ring", "steps_bucket", "tempo_step"]

CAPACITIES = (8, 16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 448, 512, 640, 768, 1024)
"""Bond capacities of the compiled steps (``oqupy_jax``): roughly 1.25-1.5x apart, so that a run compiles its step
for a handful of capacities while the padding, whose SVD cost grows with the cube of the bond, stays moderate."""


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


def steps_bucket(count: int) -> int:
    """Stacks of per-step operators are padded to a power of two of steps (one compilation per bucket)."""
    return 1 << max(count - 1, 0).bit_length()


def resize_ring(sites: Any, current: np.ndarray, slots: int, capacity: int, paths: int) -> Tuple[Any, np.ndarray]:
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
    """The influence line of the new time through the ``count`` past sites, oldest (time ``first``) first."""
    ring = len(sites)
    line = carry.shape[2]

    def body(index: Any, state: Tuple[Any, np.ndarray, np.ndarray]) -> Tuple[Any, np.ndarray, np.ndarray]:
        sites, carry, overflow = state
        slot = (first + index) % ring
        site = sites[slot]
        theta = zip_site(carry, site, lines[count - index - 1])
        left, right, rank = split_capped(theta, epsrel, capacity, False)
        sites = replace(sites, slot, left.reshape(carry.shape[0], site.shape[1], left.shape[1]))
        carry = right.reshape(right.shape[0], site.shape[2], line)
        return sites, carry, overflow | (rank > capacity)

    return fori_loop(0, count, body, (sites, carry, np.array(False)))


def _sweep(
    sites: Any, newest: Any, count: Any, left: np.ndarray, epsrel: float, capacity: int
) -> Tuple[Any, np.ndarray, np.ndarray]:
    """Right-to-left truncation of the ``count`` sites of times ``newest, newest - 1, ...``; returns the
    remainder ``left`` to absorb into the oldest one and the largest kept rank."""
    ring = len(sites)

    def body(index: Any, state: Tuple[Any, np.ndarray, np.ndarray]) -> Tuple[Any, np.ndarray, np.ndarray]:
        sites, left, top = state
        slot = (newest - index) % ring
        site = np.tensordot(sites[slot], left, axes=1)
        bond, paths, next_bond = site.shape
        left, right, rank = split_capped(site.reshape(bond, paths * next_bond), epsrel, capacity, True)
        sites = replace(sites, slot, right.reshape(right.shape[0], paths, next_bond))
        return sites, left, np.maximum(top, rank)

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
) -> Tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One TEMPO step ``step -> step + 1``: zip-up, new sites, sweep, memory cut-off and read-out.

    ``sites`` is the ring of the past sites (``len(sites) = K + 1`` slots for a memory of ``K`` steps; the
    ``min(step, K)`` sites of times ``step - count ... step - 1`` are valid), ``current[l, x]`` the current site,
    ``index`` the position of this step in ``operators.into`` / ``out_of``, and ``oldest_line`` the influence of
    distance ``K`` at this step (with the memory tail, if any).  Returns the new ring and current site, the
    density matrix of time ``step + 1``, the largest kept rank of the sweep and the overflow flag (``oqupy_jax``:
    a zip-up rank above ``capacity``; the state is then returned unchanged).
    """
    ring = len(sites)
    memory = ring - 1
    count = np.minimum(step, memory)
    first = step - count
    lines = replace(operators.lines, memory - 1, oldest_line)
    line = operators.west.shape[0]
    bond = stored(1, capacity)
    carry = np.einsum("lr,w->lrw", np.identity(bond, dtype=np.complex128), np.ones(line, dtype=np.complex128))
    propagated = current @ operators.into[index].T
    new, carry, overflow = _zip_up(sites, carry, lines, first, count, epsrel, capacity)
    line_end = close_line(carry, propagated, operators.west, operators.self_influence)
    site, newest = new_sites(line_end, operators.north, operators.out_of[index])
    left, right, rank = split_capped(newest, epsrel, capacity, True)
    new = replace(new, step % ring, np.tensordot(site, left, axes=1))
    identity = np.identity(left.shape[1], dtype=np.complex128)
    new, left, top = _sweep(new, step, count + 1, identity, epsrel, capacity)
    new = replace(new, first % ring, absorb(left, new[first % ring]))
    new = cond(count == memory, _merge_oldest, _keep, new, first)
    kept = np.minimum(step + 1, memory)
    vector = fori_loop(
        0, kept, lambda k, vector: sum_site(vector, new[(step + 1 - kept + k) % ring]), unit(bond)
    )
    dim = round(current.shape[1] ** 0.5)
    state = (vector @ right).reshape(dim, dim)
    sites, current = cond(overflow, _first, _second, (sites, current), (new, right))
    return sites, current, state, np.maximum(top, rank), overflow
