r"""TEMPO: time-evolving matrix product operators for a system coupled to a Gaussian bosonic bath.

Physics convention (stated once): ``H_total = H_S + S (x) B`` with the bath correlation
:math:`C(\tau) = \langle B(\tau) B(0) \rangle`; states are vectorised row-major; each step of length ``dt``
is ``prop_2 . influence . prop_1`` with the half-step propagators of the system.  The path of the
coupling eigenbasis index over the last ``dkmax`` steps is kept as a matrix product state (the augmented
density tensor) and truncated with the relative criterion ``epsrel``.

**[Strathearn2018]** A. Strathearn, P. Kirton, D. Kilda, J. Keeling and B. W. Lovett, *Efficient
non-Markovian quantum dynamics using time-evolving matrix product operators*, Nat. Commun. 9, 3322 (2018).
"""

from typing import Any, Optional

import numpy as np

from oqupy import _steps, config, operators
from oqupy._checks import check_initial_state, check_system_and_bath
from oqupy._gibbs_tempo import GibbsParameters, GibbsTempo, gibbs_tempo_compute
from oqupy._influences import Influences, influence_matrix, line_influence, self_influence
from oqupy._tempo_parameters import TempoParameters, guess_tempo_parameters, num_steps_between
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.dynamics import Dynamics
from oqupy.system import BaseSystem
from oqupy.util import check_convert, get_progress

__runs_on__ = "device"

__all__ = [
    "GibbsParameters",
    "GibbsTempo",
    "Tempo",
    "TempoParameters",
    "gibbs_tempo_compute",
    "guess_tempo_parameters",
    "influence_matrix",
    "line_influence",
    "num_steps_between",
    "self_influence",
    "tempo_compute",
]


class Tempo(BaseAPIClass):
    """Resumable TEMPO computation of the reduced dynamics.

    Parameters
    ----------
    system: System or TimeDependentSystem
        The system (Hamiltonian and Markovian terms).
    bath: Bath
        Coupling operator and bath correlations.
    parameters: TempoParameters
        dt, epsrel and memory cut-off.
    initial_state: ndarray
        Density matrix at ``start_time``.
    start_time: float
        Initial time.
    unique: bool
        Reduce path indices to degeneracy classes of the coupling (same results, smaller tensors).
    backend_config: dict
        Accepted for OQuPy compatibility; unused.
    """

    def __init__(
        self,
        system: BaseSystem,
        bath: Bath,
        parameters: TempoParameters,
        initial_state: np.ndarray,
        start_time: float,
        unique: bool = False,
        backend_config: Optional[dict] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        check_system_and_bath(system, bath, parameters, unique)
        self._system = system
        self._bath = bath
        self._parameters = parameters
        self._initial_state = check_initial_state(initial_state, system.dimension)
        self._start_time = check_convert(start_time, float, "start_time")
        self._unique = unique
        self._backend_config = backend_config
        self._influences = Influences(bath, parameters, unique)
        unitary = np.asarray(bath.unitary_transform, dtype=config.NpDtype)
        self._to_eigenbasis = operators.left_right_super(unitary.conj().T, unitary)
        self._from_eigenbasis = operators.left_right_super(unitary, unitary.conj().T)
        dim = system.dimension
        self._sites: Any = None  # the ring of past sites (oqupy._steps), created by the first compute()
        self._current = np.asarray(self._initial_state).reshape(1, dim * dim)
        self._capacity = _steps.initial_capacity(dim * dim)
        self._oldest_lines: dict = {}  # the influence of distance K, one array per distinct value
        self._step = 0
        self._max_bond = 1
        self._dynamics = Dynamics(name=f"Dynamics of {self.name}")
        self._dynamics.add(self._start_time, self._initial_state)

    @property
    def dimension(self) -> int:
        """Hilbert space dimension of the system."""
        return self._system.dimension

    @property
    def max_bond_dimension(self) -> int:
        """Largest bond dimension kept so far."""
        return self._max_bond

    def get_dynamics(self) -> Dynamics:
        """All states computed so far."""
        return self._dynamics

    def compute(self, end_time: float, progress_type: Optional[str] = None) -> Dynamics:
        """Propagate up to ``end_time`` (continuing a previous computation) and return the dynamics."""
        end_time = check_convert(end_time, float, "end_time")
        parameters = self._parameters
        target = num_steps_between(self._start_time, end_time, parameters.dt)
        if target <= self._step:
            return self._dynamics
        count = target - self._step
        first_time = self._start_time + self._step * parameters.dt
        prop_1, prop_2 = self._system.get_propagator_stack(
            parameters.dt, first_time, count, parameters.subdiv_limit, parameters.liouvillian_epsrel
        )
        dkmax = parameters.dkmax
        memory = target if dkmax is None else min(dkmax, target)
        if self._sites is None or len(self._sites) < memory + 1:
            # the memory grows only until the cut-off: no time has wrapped around the ring yet
            self._influences.extend(memory)
            self._sites, self._current = _steps.resize_ring(
                self._sites, self._current, memory + 1, self._capacity, self._influences.north.shape[0]
            )
        operators = self._operators(memory, prop_1, prop_2)
        with get_progress(progress_type)(count, title="--> TEMPO computation") as progress:
            for index in range(count):
                state = self._compute_step(index, operators)
                self._dynamics.add(self._start_time + self._step * parameters.dt, state)
                progress.update(index + 1)
        return self._dynamics

    def _operators(self, memory: int, prop_1: np.ndarray, prop_2: np.ndarray) -> _steps.TempoOperators:
        """The run's constant tensors, sent to the device once per call of :meth:`compute`."""
        influences, count = self._influences, prop_1.shape[0]
        padding = ((0, _steps.steps_bucket(count) - count), (0, 0), (0, 0))
        into = np.pad(np.matmul(np.asarray(self._to_eigenbasis), np.asarray(prop_1)), padding)
        out_of = np.pad(np.matmul(np.asarray(prop_2), np.asarray(self._from_eigenbasis)), padding)
        return _steps.TempoOperators(
            np.asarray(influences.stack[:memory]),
            np.asarray(influences.west),
            np.asarray(influences.north),
            np.asarray(influences.self_influence),
            into,
            out_of,
        )

    def _oldest_line(self, memory: int) -> np.ndarray:
        """The influence of distance ``memory`` at this step (the memory tail), on the device once per value."""
        # before the memory is full the oldest site is younger: the matrix is unused (any of the right shape)
        step = max(self._step, memory)
        matrix = self._influences.get(memory, step)
        key = matrix.tobytes()
        if key not in self._oldest_lines:
            self._oldest_lines[key] = np.asarray(matrix)
        return self._oldest_lines[key]

    def _compute_step(self, index: int, operators: _steps.TempoOperators) -> np.ndarray:
        """One step (re-run from the same state with a larger bond capacity on overflow); returns the state."""
        memory = len(self._sites) - 1
        oldest = self._oldest_line(memory)
        while True:
            sites, current, state, rank, needed = _steps.tempo_step(
                self._sites,
                self._current,
                self._step,
                index,
                oldest,
                operators,
                self._parameters.epsrel,
                self._capacity,
            )
            top, largest = np.stack([rank, needed]).tolist()  # the step's one transfer to the host
            if largest <= self._capacity:
                break
            self._capacity = _steps.capacity_for(largest)
            paths = self._influences.north.shape[0]
            self._sites, self._current = _steps.resize_ring(sites, current, memory + 1, self._capacity, paths)
        self._sites, self._current = sites, current
        self._max_bond = max(self._max_bond, int(top))
        self._step += 1
        return state


def tempo_compute(
    system: BaseSystem,
    bath: Bath,
    initial_state: np.ndarray,
    start_time: float,
    end_time: float,
    parameters: Optional[TempoParameters] = None,
    tolerance: Optional[float] = config.DEFAULT_TOLERANCE,
    unique: bool = False,
    backend_config: Optional[dict] = None,
    progress_type: Optional[str] = None,
    name: Optional[str] = None,
    description: Optional[str] = None,
) -> Dynamics:
    """Shortcut: create a :class:`Tempo` (guessing parameters if none are given) and compute to ``end_time``."""
    if parameters is None:
        assert tolerance is not None, "If 'parameters' is None then 'tolerance' must be given."
        parameters = guess_tempo_parameters(bath, start_time, end_time, system, tolerance)
    tempo = Tempo(
        system, bath, parameters, initial_state, start_time, unique, backend_config, name, description
    )
    tempo.compute(end_time, progress_type=progress_type)
    return tempo.get_dynamics()
