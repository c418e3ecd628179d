"""The tensor network of one TEMPO computation: the past sites, the current site, and one step at a time.

:class:`oqupy.tempo.Tempo` advances one network with the propagators of its system, computed for a whole run at
once; :class:`oqupy.tempo.MeanFieldTempo` advances one network per system with propagators that depend on the
field, built step by step.  Both run the same host step (:func:`oqupy._tempo_step.step`: NumPy and LAPACK at exact
bond dimensions, in both packages) with the same influences (:class:`oqupy._influences.Influences`).  Conventions
are stated in :mod:`oqupy.tempo`.
"""

from typing import List, Optional

import numpy as np

from oqupy import _tempo_step, config, operators
from oqupy._influences import Influences
from oqupy._tempo_parameters import TempoParameters
from oqupy.bath import Bath

__runs_on__ = "host"

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
        self._past: List[np.ndarray] = []  # the sites of the latest min(step, memory) times, oldest first
        self._current = np.asarray(initial_state).reshape(1, dim2)
        self._memory: Optional[int] = None  # set by reserve()
        self.step = 0
        self.max_bond = 1

    def reserve(self, target: int) -> None:
        """Make room for the memory of a run up to step ``target`` (before any step of that run)."""
        dkmax = self.parameters.dkmax
        memory = target if dkmax is None else min(dkmax, target)
        if self._memory is None or self._memory < memory:
            # the memory grows only until the cut-off, so no site has been merged away yet
            self.influences.extend(memory)
            self._memory = memory

    def operators(self, prop_1: np.ndarray, prop_2: np.ndarray) -> _tempo_step.TempoOperators:
        """The tensors of the steps whose half-step propagators are stacked in ``prop_1`` and ``prop_2``."""
        assert self._memory is not None, "reserve() comes first"
        influences = self.influences
        return _tempo_step.TempoOperators(
            influences.stack[: self._memory],
            influences.west,
            influences.north,
            influences.self_influence,
            np.matmul(self._to_eigenbasis, np.asarray(prop_1)),
            np.matmul(np.asarray(prop_2), self._from_eigenbasis),
        )

    def advance(self, index: int, operators: _tempo_step.TempoOperators) -> np.ndarray:
        """One step with the propagators ``index`` of ``operators``; returns the density matrix of the new step."""
        memory = self._memory
        assert memory is not None, "reserve() comes first"
        if memory == 0:
            # dkmax = 0, the Markovian limit: no past site, each step feels only its own influence I0
            propagated = self._current @ operators.into[index].T
            self._current = (propagated * operators.self_influence) @ operators.out_of[index].T
            self.step += 1
            dim = round(self._current.shape[1] ** 0.5)
            return self._current.reshape(dim, dim)
        # the influence of distance K at this step (the memory tail); before the memory is full it is unused
        oldest = self.influences.get(memory, max(self.step, memory))
        self._past, self._current, state, rank = _tempo_step.step(
            self._past, self._current, index, oldest, operators, self.parameters.epsrel, memory
        )
        self.max_bond = max(self.max_bond, rank)
        self.step += 1
        return state
