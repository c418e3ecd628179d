"""Containers for the results of a time evolution: times and density matrices.

Host code: states are NumPy arrays in both packages, except in ``oqupy_jax`` while a user function runs under
``jax.grad``, ``jit`` or ``vmap`` (then they are traced JAX arrays, and ``states`` and ``expectations`` are
computed with ``jax.numpy``; see :mod:`oqupy._boundary`).  Stacking on the host also matters for speed: in
``oqupy_jax`` stacking thousands of device arrays is one XLA concatenate with one operand each, which compiled
for minutes (165 s for the 10,001 states of a uniform-PT run).
"""

from bisect import bisect
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from oqupy._boundary import array_namespace, is_traced
from oqupy.base_api import BaseAPIClass
from oqupy.config import NpDtype, NpDtypeReal

__runs_on__ = "host"


class BaseDynamics(BaseAPIClass):
    """Times and states of a time evolution, kept in time order."""

    def __init__(self, name: Optional[str] = None, description: Optional[str] = None) -> None:
        super().__init__(name, description)
        self._times: List[float] = []
        self._states: List[np.ndarray] = []
        self._stacked: Optional[np.ndarray] = None  # the states as one array, when they were given as one
        self._shape: Optional[Tuple[int, ...]] = None

    def __len__(self) -> int:
        return len(self._times)

    def _str_items(self) -> list:
        items: list = [("length", f"{len(self)} timesteps")]
        if self._times:
            items += [("min time", min(self._times)), ("max time", max(self._times))]
        return items

    @property
    def times(self) -> np.ndarray:
        """Times of the recorded states (float64 array)."""
        return np.array(self._times, dtype=NpDtypeReal)

    @property
    def states(self) -> np.ndarray:
        """Recorded density matrices, shape (n, d, d), complex128."""
        if self._stacked is not None:
            return self._stacked.copy()
        if not self._states:
            return np.zeros((0, 0, 0), dtype=NpDtype)
        return array_namespace(self._states).stack(self._states)

    def _state_list(self) -> List[np.ndarray]:
        """The states as a list, to insert into (one array given to the constructor is split on first use)."""
        if self._stacked is not None:
            self._states = list(self._stacked)
            self._stacked = None
        return self._states

    @property
    def shape(self) -> Optional[Tuple[int, ...]]:
        """Shape of each state, or None before the first one is added."""
        return self._shape

    def expectations(
        self, operator: Optional[np.ndarray] = None, real: bool = False
    ) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        """Times and ``Tr(operator @ rho(t))`` (the trace if ``operator`` is None; real part if ``real``)."""
        if len(self) == 0:
            return None, None
        states = self.states
        xp = array_namespace(states, operator)
        if operator is None:
            values = xp.trace(states, axis1=1, axis2=2)
        else:
            assert hasattr(operator, "shape") or isinstance(operator, (list, tuple)), (
                "Argument 'operator' must be an array."
            )
            operator = xp.asarray(operator, dtype=NpDtype)
            assert operator.shape == self._shape, (
                f"Operator shape {operator.shape} differs from states {self._shape}."
            )
            values = xp.einsum("ij,tji->t", operator, states)
        if real:
            values = xp.real(values)
        return self.times, values


class Dynamics(BaseDynamics):
    """A time evolution of one system.

    Parameters
    ----------
    times: list of float
        Times of the states (default: empty).
    states: list of ndarray
        Density matrices, one per time, all of the same square shape.
    """

    def __init__(
        self,
        times: Optional[List[float]] = None,
        states: Optional[List[np.ndarray]] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        assert times is None or hasattr(times, "__len__"), "Argument `times` must be a list of floats."
        assert states is None or hasattr(states, "__len__"), "Argument `states` must be a list of matrices."
        times = [] if times is None else times
        states = [] if states is None else states
        assert len(times) == len(states), "Lists `times` and `states` must have the same length."
        if not self._take_stacked(times, states):
            for time, state in zip(times, states):
                self.add(time, state)

    def _take_stacked(self, times: Sequence[float], states: Any) -> bool:
        """Keep ``states`` as they are when they are one ``(n, d, d)`` array (NumPy, or traced) and ``times`` are
        floats in order: what :meth:`add` would store, without ``n`` calls (10,001 states of a long run).  False
        (nothing kept) otherwise: the caller adds them one by one, with :meth:`add`'s checks and messages."""
        shape = getattr(states, "shape", None)
        if shape is None or len(shape) != 3 or shape[0] == 0 or shape[1] != shape[2]:
            return False
        try:
            floats = [float(time) for time in times]
        except (TypeError, ValueError):
            return False
        if any(later < earlier for earlier, later in zip(floats, floats[1:])):
            return False
        self._stacked = states.astype(NpDtype) if is_traced(states) else np.asarray(states, dtype=NpDtype)
        self._times = floats
        self._shape = tuple(shape[1:])
        return True

    def add(self, time: float, state: np.ndarray) -> None:
        """Insert ``state`` at ``time``, keeping time order."""
        try:
            time = float(time)
        except (TypeError, ValueError) as err:
            raise AssertionError("Argument `time` must be float.") from err
        assert hasattr(state, "shape") or isinstance(state, (list, tuple)), (
            "Argument `state` must be an array."
        )
        state = state.astype(NpDtype) if is_traced(state) else np.asarray(state, dtype=NpDtype)
        assert len(state.shape) == 2 and state.shape[0] == state.shape[1], (
            "Argument `state` must be a square matrix."
        )
        if self._shape is None:
            self._shape = tuple(state.shape)
        assert tuple(state.shape) == self._shape, (
            f"State shape {state.shape} differs from earlier {self._shape}."
        )
        index = bisect(self._times, time)
        self._times.insert(index, time)
        self._state_list().insert(index, state)


class MeanFieldDynamics(BaseAPIClass):
    """A time evolution of several systems sharing one mean field: one :class:`Dynamics` per system and the field.

    Parameters
    ----------
    times: list of float
        Times (default: empty).
    system_states_list: list of lists of ndarray
        ``system_states_list[k]`` holds the density matrix of each system at ``times[k]``.
    fields: list of complex
        The field at each time.
    """

    def __init__(
        self,
        times: Optional[List[float]] = None,
        system_states_list: Optional[List[List[np.ndarray]]] = None,
        fields: Optional[List[complex]] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        times = [] if times is None else times
        system_states_list = [] if system_states_list is None else system_states_list
        fields = [] if fields is None else fields
        for argument, label in (
            (times, "times"),
            (system_states_list, "system_states_list"),
            (fields, "fields"),
        ):
            assert isinstance(argument, list), f"Argument `{label}` must be a list."
        assert len(times) == len(system_states_list) == len(fields), (
            "Lists `times`, `system_states_list` and `fields` must have the same length."
        )
        self._times: List[float] = []
        self._fields: List[complex] = []
        self._system_dynamics: List[Dynamics] = []
        for time, states, field in zip(times, system_states_list, fields):
            self.add(time, states, field)

    def __len__(self) -> int:
        return len(self._times)

    def _str_items(self) -> list:
        return [("length", len(self)), ("systems", len(self._system_dynamics))]

    def add(self, time: float, system_states: List[np.ndarray], field: complex) -> None:
        """Insert the states of every system and the field at ``time``, keeping time order."""
        try:
            time = float(time)
        except (TypeError, ValueError) as err:
            raise AssertionError("Argument `time` must be float.") from err
        try:
            field = complex(field)
        except (TypeError, ValueError) as err:
            raise AssertionError("Argument `field` must be complex.") from err
        if not self._system_dynamics:
            self._system_dynamics = [Dynamics(name=f"system {i}") for i in range(len(system_states))]
        assert len(system_states) == len(self._system_dynamics), (
            f"Number of states ({len(system_states)}) differs from the number of systems "
            f"({len(self._system_dynamics)})."
        )
        for dynamics, state in zip(self._system_dynamics, system_states):
            dynamics.add(time, state)
        index = bisect(self._times, time)
        self._times.insert(index, time)
        self._fields.insert(index, field)

    @property
    def times(self) -> np.ndarray:
        """Times (float64 array)."""
        return np.array(self._times, dtype=NpDtypeReal)

    @property
    def fields(self) -> np.ndarray:
        """The field at each time (complex128 array)."""
        return np.array(self._fields, dtype=NpDtype)

    @property
    def system_dynamics(self) -> List[Dynamics]:
        """One :class:`Dynamics` per system (a new list)."""
        return list(self._system_dynamics)

    def field_expectations(self) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        """Times and field values; ``(None, None)`` when empty."""
        if len(self) == 0:
            return None, None
        return self.times, self.fields

    def expectations(
        self, operator: Optional[np.ndarray] = None, real: bool = False
    ) -> List[Tuple[Optional[np.ndarray], Optional[np.ndarray]]]:
        """``Dynamics.expectations`` of every system: a list of ``(times, values)``, one per system."""
        return [dynamics.expectations(operator, real) for dynamics in self._system_dynamics]
