r"""Mean-field TEMPO: several systems, each with its own bath, coupled through one field (the Heun step).

Step ``n -> n + 1`` (time ``t_n = start_time + n dt``, states :math:`\rho_n` of every system, field :math:`a_n`):

1. :math:`k_1 = f(t_n, \rho_n, a_n)` with the ``field_eom`` :math:`f` of the :class:`MeanFieldSystem`;
2. every system takes one TEMPO step with the half-step propagators of the linearised field
   :math:`a_n + k_1 (t - t_n)` (:meth:`TimeDependentSystemWithField.get_propagators`);
3. :math:`k_2 = f(t_n + dt, \rho_{n+1}, a_n + dt\,k_1)` and :math:`a_{n+1} = a_n + dt (k_1 + k_2) / 2`.

Each system's TEMPO network is an :class:`oqupy._tempo_network.TempoNetwork` (the host step of
:class:`oqupy.tempo.Tempo`, :mod:`oqupy._tempo_step`); the field equation and the propagators are user callables
and run on the host too.  Host module: NumPy in both packages.

**[FowlerWright2022]** P. Fowler-Wright, B. W. Lovett and J. Keeling, *Efficient many-body non-Markovian
dynamics of organic polaritons*, Phys. Rev. Lett. 129, 173001 (2022).
"""

from typing import Any, Callable, List, Optional

import numpy as np

from oqupy._checks import check_initial_state
from oqupy._system_field import MeanFieldSystem
from oqupy._tempo_network import TempoNetwork
from oqupy._tempo_parameters import TempoParameters, num_steps_between
from oqupy._validation import finite_complex, finite_float
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.dynamics import MeanFieldDynamics
from oqupy.util import get_progress

__runs_on__ = "host"

__all__ = ["MeanFieldTempo", "heun_field"]


def heun_field(
    field_eom: Callable,
    time: float,
    dt: float,
    states: List[np.ndarray],
    field: complex,
    slope: complex,
    new_states: List[np.ndarray],
) -> complex:
    """The field after one Heun step from ``field`` (slope ``slope`` at ``time``) to the states ``new_states``."""
    second = complex(field_eom(time + dt, new_states, field + dt * slope))
    return field + dt * (slope + second) / 2.0


class MeanFieldTempo(BaseAPIClass):
    """Resumable mean-field TEMPO: the dynamics of the systems of a :class:`MeanFieldSystem` and of their field.

    Parameters
    ----------
    mean_field_system: MeanFieldSystem
        The systems and the field equation of motion.
    bath_list: list(Bath)
        One bath per system.
    parameters: TempoParameters
        dt, epsrel and memory cut-off, shared by every system.
    initial_state_list: list(ndarray)
        One initial density matrix per system.
    initial_field: complex
        The field at ``start_time``.
    start_time: float
        Initial time (default 0.0).
    unique: bool
        Reduce path indices to degeneracy classes of each coupling.
    backend_config: dict
        Accepted for OQuPy compatibility; unused.
    """

    def __init__(
        self,
        mean_field_system: MeanFieldSystem,
        bath_list: List[Bath],
        parameters: TempoParameters,
        initial_state_list: List[np.ndarray],
        initial_field: complex,
        start_time: float = 0.0,
        unique: bool = False,
        backend_config: Optional[dict] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        assert isinstance(mean_field_system, MeanFieldSystem), (
            "Argument 'mean_field_system' must be an oqupy.MeanFieldSystem."
        )
        assert isinstance(parameters, TempoParameters), (
            "Argument 'parameters' must be an oqupy.TempoParameters."
        )
        assert isinstance(unique, bool), "Argument 'unique' must be bool."
        assert isinstance(bath_list, list), "Argument 'bath_list' must be a list of oqupy.Bath objects."
        assert isinstance(initial_state_list, list), (
            "Argument 'initial_state_list' must be a list of matrices."
        )
        systems = mean_field_system.system_list
        assert len(systems) == len(bath_list) == len(initial_state_list), (
            f"The lengths of 'bath_list' ({len(bath_list)}) and 'initial_state_list' ({len(initial_state_list)}) "
            f"must equal the number of systems ({len(systems)})."
        )
        super().__init__(name, description)
        states = []
        for system, bath, state in zip(systems, bath_list, initial_state_list):
            assert isinstance(bath, Bath), "Each element of 'bath_list' must be an oqupy.Bath."
            if bath.dimension != system.dimension:
                raise ValueError(
                    f"Hilbert space dimensions of system ({system.dimension}) and bath ({bath.dimension}) differ."
                )
            states.append(check_initial_state(state, system.dimension))
        self._mean_field_system = mean_field_system
        self._parameters = parameters
        self._initial_field = finite_complex(initial_field, "initial_field")
        self._start_time = finite_float(start_time, "start_time")
        self._backend_config = backend_config
        self._propagators = [
            system.get_propagators(
                parameters.dt, self._start_time, parameters.subdiv_limit, parameters.liouvillian_epsrel
            )
            for system in systems
        ]
        self._networks = [
            TempoNetwork(bath, parameters, state, unique) for bath, state in zip(bath_list, states)
        ]
        self._states: List[np.ndarray] = states
        self._field = self._initial_field
        self._step = 0
        self._dynamics = MeanFieldDynamics(description=f"computed from '{self.name}' MeanFieldTempo")
        self._dynamics.add(self._start_time, states, self._field)

    @property
    def max_bond_dimension(self) -> int:
        """Largest bond dimension kept so far, over all systems."""
        return max(network.max_bond for network in self._networks)

    def get_dynamics(self) -> MeanFieldDynamics:
        """All states and fields computed so far."""
        return self._dynamics

    def compute(self, end_time: float, progress_type: Optional[str] = None) -> MeanFieldDynamics:
        """Propagate up to ``end_time`` (continuing a previous computation) and return the dynamics."""
        end_time = finite_float(end_time, "end_time")
        if end_time < self._start_time:
            raise ValueError(
                f"Argument 'end_time' ({end_time}) must not be before 'start_time' ({self._start_time})."
            )
        dt = self._parameters.dt
        target = num_steps_between(self._start_time, end_time, dt)
        if target <= self._step:
            return self._dynamics
        count = target - self._step
        for network in self._networks:
            network.reserve(target)
        field_eom = self._mean_field_system.field_eom
        with get_progress(progress_type)(count, title="--> TEMPO-with-field computation") as progress:
            for index in range(count):
                time = self._start_time + self._step * dt
                slope = complex(field_eom(time, self._states, self._field))
                new_states = [
                    self._system_step(network, propagators, slope)
                    for network, propagators in zip(self._networks, self._propagators)
                ]
                self._field = heun_field(field_eom, time, dt, self._states, self._field, slope, new_states)
                self._states = new_states
                self._step += 1
                self._dynamics.add(time + dt, new_states, self._field)
                progress.update(index + 1)
        return self._dynamics

    def _system_step(self, network: TempoNetwork, propagators: Any, slope: complex) -> np.ndarray:
        """One TEMPO step of one system with the propagators of the linearised field; its new state (host)."""
        prop_1, prop_2 = propagators(self._step, self._field, slope)
        operators = network.operators(prop_1[None], prop_2[None])
        return network.advance(0, operators)
