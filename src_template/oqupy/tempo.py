r"""TEMPO: time-evolving matrix product operators for a system coupled to a Gaussian bosonic bath.

Physics convention (stated once): ``H_total = H_S + S (x) B`` with the bath correlation
:math:`C(\tau) = \langle B(\tau) B(0) \rangle`; states are vectorised row-major; each step of length ``dt``
is ``prop_2 . influence . prop_1`` with the half-step propagators of the system.  The path of the
coupling eigenbasis index over the last ``dkmax`` steps is kept as a matrix product state (the augmented
density tensor) and truncated with the relative criterion ``epsrel``.

**[Strathearn2018]** A. Strathearn, P. Kirton, D. Kilda, J. Keeling and B. W. Lovett, *Efficient
non-Markovian quantum dynamics using time-evolving matrix product operators*, Nat. Commun. 9, 3322 (2018).
"""

from typing import Optional

import numpy as np

from oqupy import config
from oqupy._checks import check_initial_state, check_system_and_bath, nonfinite_system_error, warn_long_memory
from oqupy._gibbs_tempo import GibbsParameters, GibbsTempo, gibbs_tempo_compute
from oqupy._influences import influence_matrix, line_influence, self_influence
from oqupy._mean_field_tempo import MeanFieldTempo
from oqupy._tempo_network import TempoNetwork
from oqupy._tempo_parameters import (
    TempoParameters,
    guess_tempo_parameters,
    max_time_dependent_frequency,
    num_steps_between,
)
from oqupy._validation import check_time_window, finite_float, first_nonfinite_step
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.dynamics import Dynamics
from oqupy.system import BaseSystem
from oqupy.util import get_progress

__runs_on__ = "device"

__all__ = [
    "GibbsParameters",
    "GibbsTempo",
    "MeanFieldTempo",
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

# OQuPy 0.5's private name, kept because OQuPy's own test suite calls ``oqupy.tempo._max_tdependentsystem_frequency``
# (the only private name provided; see docs/migration.md).
_max_tdependentsystem_frequency = max_time_dependent_frequency


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
        self._start_time = finite_float(start_time, "start_time")
        self._unique = unique
        self._backend_config = backend_config
        self._network = TempoNetwork(bath, parameters, self._initial_state, unique)
        self._dynamics = Dynamics(description=f"computed from '{self.name}' tempo")
        self._dynamics.add(self._start_time, self._initial_state)

    @property
    def dimension(self) -> int:
        """Hilbert space dimension of the system."""
        return self._system.dimension

    @property
    def max_bond_dimension(self) -> int:
        """Largest bond dimension kept so far."""
        return self._network.max_bond

    def get_dynamics(self) -> Dynamics:
        """All states computed so far."""
        return self._dynamics

    def compute(self, end_time: float, progress_type: Optional[str] = None) -> Dynamics:
        """Propagate up to ``end_time`` (continuing a previous computation) and return the dynamics.

        Raises
        ------
        ValueError
            ``end_time`` NaN, infinite or before ``start_time``; or the system's propagators are not finite
            (a Hamiltonian or rate that is NaN or infinite at some time): the steps before that time are computed
            and kept (:meth:`get_dynamics`), and the message names the time.
        """
        end_time = finite_float(end_time, "end_time")
        if end_time < self._start_time:
            raise ValueError(
                f"Argument 'end_time' ({end_time}) must not be before 'start_time' ({self._start_time})."
            )
        parameters, network = self._parameters, self._network
        target = num_steps_between(self._start_time, end_time, parameters.dt)
        if target <= network.step:
            return self._dynamics
        count = target - network.step
        first_time = self._start_time + network.step * parameters.dt
        prop_1, prop_2 = self._system.get_propagator_stack(
            parameters.dt, first_time, count, parameters.subdiv_limit, parameters.liouvillian_epsrel
        )
        bad = first_nonfinite_step(prop_1, prop_2)
        network.reserve(target)
        operators = network.operators(prop_1, prop_2)
        with get_progress(progress_type)(count, title="--> TEMPO computation") as progress:
            for index in range(count if bad is None else bad):
                state = network.advance(index, operators)
                self._dynamics.add(self._start_time + network.step * parameters.dt, state)
                progress.update(index + 1)
        if bad is not None:
            raise nonfinite_system_error(first_time + bad * parameters.dt, parameters.dt, self._dynamics)
        return self._dynamics


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
    """Shortcut: create a :class:`Tempo` (guessing parameters if none are given) and compute to ``end_time``.

    ``ValueError`` for NaN or infinite times and for ``end_time`` before ``start_time``; a memory cut-off longer than
    the run is a ``UserWarning``.  If the system's propagators stop being finite part-way, the ``ValueError``
    carries the dynamics computed so far as its ``dynamics`` attribute.
    """
    start_time, end_time = check_time_window(start_time, end_time)
    if parameters is None:
        assert tolerance is not None, "If 'parameters' is None then 'tolerance' must be given."
        parameters = guess_tempo_parameters(bath, start_time, end_time, system, tolerance)
    elif isinstance(parameters, TempoParameters):
        warn_long_memory(parameters, num_steps_between(start_time, end_time, parameters.dt))
    tempo = Tempo(
        system, bath, parameters, initial_state, start_time, unique, backend_config, name, description
    )
    tempo.compute(end_time, progress_type=progress_type)
    return tempo.get_dynamics()
