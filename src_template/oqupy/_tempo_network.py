"""The tensor network of one TEMPO computation: the ring of past sites, its bond capacity, and one step at a time.

:class:`oqupy.tempo.Tempo` advances one network with the propagators of its system, computed for a whole run at
once; :class:`oqupy.tempo.MeanFieldTempo` advances one network per system with propagators that depend on the
field, built step by step.  Both run the same compiled step (:func:`oqupy._steps.tempo_step`) with the same
influences (:class:`oqupy._influences.Influences`).  Conventions are stated in :mod:`oqupy.tempo`.
"""

from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from oqupy import _steps, config, operators
from oqupy._influences import Influences
from oqupy._tempo_parameters import TempoParameters
from oqupy.bath import Bath

__runs_on__ = "device"

__all__ = ["TempoNetwork"]


class TempoNetwork:
    """The augmented density tensor of one TEMPO run, advanced step by step.

    Parameters
    ----------
    bath: Bath
        Coupling operator and bath correlations.
    parameters: TempoParameters
        dt, epsrel and memory cut-off.
    initial_state: ndarray
        The (checked) density matrix of step 0.
    unique: bool
        Reduce path indices to degeneracy classes of the coupling.
    """

    def __init__(
        self, bath: Bath, parameters: TempoParameters, initial_state: np.ndarray, unique: bool
    ) -> None:
        self.parameters = parameters
        self.influences = Influences(bath, parameters, unique)
        unitary = np.asarray(bath.unitary_transform, dtype=config.NpDtype)
        self._to_eigenbasis = operators.left_right_super(unitary.conj().T, unitary)
        self._from_eigenbasis = operators.left_right_super(unitary, unitary.conj().T)
        dim2 = initial_state.shape[0] ** 2
        self._sites: Any = None  # the ring of past sites (oqupy._steps), created by the first reserve()
        self._current = np.asarray(initial_state).reshape(1, dim2)
        self._capacity = _steps.initial_capacity(dim2)
        self._oldest_lines: dict = {}  # the influence of distance K, one array per distinct value
        self._constants: Optional[tuple] = None  # (memory, lines, west, north, self influence) on the device
        self.step = 0
        self.max_bond = 1

    def reserve(self, target: int) -> None:
        """Make room for the memory of a run up to step ``target`` (before any step of that run)."""
        dkmax = self.parameters.dkmax
        memory = target if dkmax is None else min(dkmax, target)
        if self._sites is None or len(self._sites) < memory + 1:
            # the memory grows only until the cut-off: no time has wrapped around the ring yet
            self.influences.extend(memory)
            self._sites, self._current = _steps.resize_ring(
                self._sites, self._current, memory + 1, self._capacity, self.influences.north.shape[0]
            )

    def operators(self, prop_1: np.ndarray, prop_2: np.ndarray) -> _steps.TempoOperators:
        """The tensors of the steps whose half-step propagators are stacked in ``prop_1`` and ``prop_2``.

        The influences go to the device once per memory length; the propagators are padded to a bucket of steps.
        """
        memory = len(self._sites) - 1
        if self._constants is None or self._constants[0] != memory:
            influences = self.influences
            self._constants = (
                memory,
                np.asarray(influences.stack[:memory]),
                np.asarray(influences.west),
                np.asarray(influences.north),
                np.asarray(influences.self_influence),
            )
        count = prop_1.shape[0]
        padding = ((0, _steps.steps_bucket(count) - count), (0, 0), (0, 0))
        into = np.pad(np.matmul(np.asarray(self._to_eigenbasis), np.asarray(prop_1)), padding)
        out_of = np.pad(np.matmul(np.asarray(prop_2), np.asarray(self._from_eigenbasis)), padding)
        _, lines, west, north, self_influence = self._constants
        return _steps.TempoOperators(lines, west, north, self_influence, into, out_of)

    def _oldest_line(self, memory: int) -> np.ndarray:
        """The influence of distance ``memory`` at this step (the memory tail), on the device once per value."""
        # before the memory is full the oldest site is younger: the matrix is unused (any of the right shape)
        matrix = self.influences.get(memory, max(self.step, memory))
        key = matrix.tobytes()
        if key not in self._oldest_lines:
            self._oldest_lines[key] = np.asarray(matrix)
        return self._oldest_lines[key]

    def advance(self, index: int, operators: _steps.TempoOperators) -> np.ndarray:
        """One step with the propagators ``index`` of ``operators``; returns the density matrix of the new step."""
        memory = len(self._sites) - 1
        if memory == 0:
            # dkmax = 0, the Markovian limit: no past site, each step feels only its own influence I0
            # (the bond of the current site is trivial: its first row; oqupy_jax pads it to the capacity)
            propagated = self._current[:1] @ operators.into[index].T
            self._current = (propagated * operators.self_influence) @ operators.out_of[index].T
            self.step += 1
            dim = round(self._current.shape[1] ** 0.5)
            return self._current.reshape(dim, dim)
        ring, state, top = advance_ring(
            Ring(self._sites, self._current, self._capacity),
            self.step,
            index,
            self._oldest_line(memory),
            operators,
            self.parameters.epsrel,
            memory + 1,
            self.influences.north.shape[0],
        )
        self._sites, self._current, self._capacity = ring
        self.max_bond = max(self.max_bond, top)
        self.step += 1
        return state


class Ring(NamedTuple):
    """A TEMPO network's ring of past sites, its current site and their bond capacity (:mod:`oqupy._steps`)."""

    sites: Any
    current: Any
    capacity: int


def advance_ring(
    ring: Ring,
    step: int,
    index: int,
    oldest: Any,
    operators: _steps.TempoOperators,
    epsrel: float,
    slots: int,
    paths: int,
) -> Tuple[Ring, Any, int]:
    """One :func:`oqupy._steps.tempo_step` of ``ring``, re-run from the same sites with a larger bond capacity
    (``slots`` sites, ``paths`` path classes) when a bond overflows; returns the new ring, the density matrix of
    the new step and the step's largest kept bond."""
    sites, current, capacity = ring
    while True:
        new_sites, new_current, state, rank, needed = _steps.tempo_step(
            sites, current, step, index, oldest, operators, epsrel, capacity
        )
        top, largest = np.stack([rank, needed]).tolist()  # the step's one transfer to the host
        if largest <= capacity:
            return Ring(new_sites, new_current, capacity), state, int(top)
        capacity = _steps.capacity_for(largest)
        sites, current = _steps.resize_ring(new_sites, new_current, slots, capacity, paths)
