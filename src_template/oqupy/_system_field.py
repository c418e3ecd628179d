r"""Systems driven by a mean field: :class:`TimeDependentSystemWithField` and :class:`MeanFieldSystem`.

Several systems (e.g. emitters in a cavity) share one complex scalar field :math:`a(t)` (e.g. the coherent cavity
field :math:`\langle a \rangle`).  System :math:`m` has the Hamiltonian :math:`H_m(t, a)` and time-dependent
Lindblad terms; the field obeys :math:`\dot a = f(t, [\rho_1, \dots, \rho_M], a)`, the ``field_eom`` of the
:class:`MeanFieldSystem`.  Within a time step from :math:`t_n` the field is linearised,
:math:`a(t) = a_n + \dot a_n (t - t_n)`, and the half-step propagators are built from
:math:`L(t, a(t))` exactly as for :class:`oqupy.system.TimeDependentSystem` (midpoint samples or ``quad_vec``
integrals).  The other conventions (vectorisation, Liouvillian, half steps) are stated in :mod:`oqupy.system`.

**[FowlerWright2022]** P. Fowler-Wright, B. W. Lovett and J. Keeling, *Efficient many-body non-Markovian
dynamics of organic polaritons*, Phys. Rev. Lett. 129, 173001 (2022).

Everything in this module runs on the host with NumPy/SciPy in every generated package.
"""

from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import scipy.linalg
from scipy import integrate

from oqupy._system_base import BaseSystem, build_liouvillian, check_matrix, check_td_lindblad
from oqupy._validation import as_float
from oqupy.base_api import BaseAPIClass
from oqupy.config import INTEGRATE_EPSREL, NpDtype

__runs_on__ = "host"

__all__ = ["MeanFieldSystem", "TimeDependentSystemWithField"]

PROBE_TIME = 1.0
PROBE_FIELD = 1.0 + 1.0j
"""The time and field at which the callables of a field-dependent system are checked (as OQuPy does)."""


def _as_complex(value: Any, name: str) -> complex:
    try:
        return complex(value)
    except Exception as err:
        raise TypeError(f"Argument '{name}' must be complex.") from err


class TimeDependentSystemWithField(BaseSystem):
    """A system whose Hamiltonian depends on time and on a complex mean field, with time-dependent dissipation.

    Parameters
    ----------
    hamiltonian: callable
        ``hamiltonian(t, field)`` is the (d, d) Hamiltonian at time t (a float) and field value ``field`` (a
        complex number).
    gammas: list(callable)
        ``gammas[n](t)`` is the (real) rate of the n-th Lindblad term at time t (default: none).
    lindblad_operators: list(callable)
        ``lindblad_operators[n](t)`` is the (d, d) jump operator of the n-th Lindblad term at time t.
    name: str
        An optional name for the system.
    description: str
        An optional description of the system.

    Notes
    -----
    The Hamiltonian is checked at ``t = 1.0``, ``field = 1 + 1j`` and the Lindblad terms at ``t = 0.0``
    (``AssertionError`` if a callable fails or gives a wrong shape).  As in OQuPy, the Hamiltonian is not
    required to be Hermitian at that probe (a Hamiltonian written for real fields need not be).
    """

    def __init__(
        self,
        hamiltonian: Callable[[float, complex], np.ndarray],
        gammas: Optional[List[Callable[[float], float]]] = None,
        lindblad_operators: Optional[List[Callable[[float], np.ndarray]]] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        assert callable(hamiltonian), "'hamiltonian' must be a callable of time t and field."
        try:
            probe = hamiltonian(PROBE_TIME, PROBE_FIELD)
        except Exception as err:
            raise AssertionError(
                "'hamiltonian' must be a callable that can be evaluated at t=1.0, field=1+1j."
            ) from err
        probe = check_matrix(probe, "hamiltonian(1.0, 1+1j)")
        super().__init__(probe.shape[0], name, description)
        self._hamiltonian = hamiltonian
        terms = check_td_lindblad(gammas, lindblad_operators, self._dimension)
        self._gammas: List[Callable] = terms.gammas
        self._lindblad_operators: List[Callable] = terms.operators

    def _str_items(self) -> list:
        return super()._str_items() + [("lindblad terms", len(self._gammas))]

    def _liouvillian_at(self, t0: float, t: float, field: complex, field_derivative: complex) -> np.ndarray:
        """The Liouvillian at ``t`` with the field linearised from ``t0`` (arguments already checked)."""
        hamiltonian = np.asarray(self._hamiltonian(t, field + field_derivative * (t - t0)), dtype=NpDtype)
        return build_liouvillian(
            hamiltonian, [gamma(t) for gamma in self._gammas], [op(t) for op in self._lindblad_operators]
        )

    def liouvillian(self, t0: float, t: float, field: complex, field_derivative: complex) -> np.ndarray:
        """The d^2 x d^2 Liouvillian at time ``t`` with the field ``field + field_derivative (t - t0)``.

        Non-float times or non-complex field values raise ``TypeError``; ``t < t0`` raises ``AssertionError``.
        """
        t0 = as_float(t0, "t0")
        t = as_float(t, "t")
        assert t >= t0, "Argument 't' must equal or exceed 't0'."
        field = _as_complex(field, "field")
        field_derivative = _as_complex(field_derivative, "field_derivative")
        return self._liouvillian_at(t0, t, field, field_derivative)

    def _half_step_exponent(
        self,
        t0: float,
        start: float,
        end: float,
        field: complex,
        derivative: complex,
        limit: Optional[int],
        epsrel: float,
    ) -> np.ndarray:
        """``L dt/2`` over ``[start, end]``: the midpoint sample (``limit`` None) or the ``quad_vec`` integral."""
        if limit is None:
            return self._liouvillian_at(t0, (start + end) / 2.0, field, derivative) * (end - start)

        def liouvillian(t: float) -> np.ndarray:
            return self._liouvillian_at(t0, t, field, derivative)

        value, _ = integrate.quad_vec(liouvillian, start, end, epsrel=epsrel, limit=limit)
        return np.asarray(value, dtype=NpDtype)

    def get_propagators(
        self,
        dt: float,
        start_time: float = 0.0,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Callable[..., Tuple[np.ndarray, np.ndarray]]:
        """``(step, field, field_derivative) -> (prop_1, prop_2)`` for the half steps of step ``step``.

        With ``t = start_time + step dt`` and the field ``field + field_derivative (s - t)`` at time ``s``:
        ``subdiv_limit=None`` samples L at ``t + dt/4`` and ``t + 3dt/4``; otherwise L is integrated over
        ``[t, t + dt/2]`` and ``[t + dt/2, t + dt]`` by ``quad_vec`` (``limit=subdiv_limit``, ``epsrel``).
        """
        dt = as_float(dt, "dt")
        start_time = as_float(start_time, "start_time")

        def propagators(
            step: int, field: complex, field_derivative: complex
        ) -> Tuple[np.ndarray, np.ndarray]:
            t = start_time + step * dt
            field = _as_complex(field, "field")
            field_derivative = _as_complex(field_derivative, "field_derivative")
            middle = t + dt / 2.0
            first = self._half_step_exponent(t, t, middle, field, field_derivative, subdiv_limit, epsrel)
            second = self._half_step_exponent(
                t, middle, t + dt, field, field_derivative, subdiv_limit, epsrel
            )
            props = scipy.linalg.expm(np.stack([first, second]))
            return np.asarray(props[0], dtype=NpDtype), np.asarray(props[1], dtype=NpDtype)

        return propagators

    @property
    def hamiltonian(self) -> Callable[[float, complex], np.ndarray]:
        """The Hamiltonian ``(t, field) -> (d, d)`` as given."""
        return self._hamiltonian

    @property
    def gammas(self) -> List[Callable]:
        """The rates ``t -> float`` (a new list)."""
        return list(self._gammas)

    @property
    def lindblad_operators(self) -> List[Callable]:
        """The jump operators ``t -> (d, d)`` (a new list)."""
        return list(self._lindblad_operators)


def _probe_state(dimension: int, seed: int) -> np.ndarray:
    """A random full-rank density matrix (seeded: the probe of the field equation is reproducible)."""
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(dimension, dimension)) + 1j * rng.normal(size=(dimension, dimension))
    state = matrix @ matrix.conj().T
    return state / np.trace(state)


class MeanFieldSystem(BaseAPIClass):
    r"""Systems coupled to one common mean field, and the field's equation of motion.

    Parameters
    ----------
    system_list: list(TimeDependentSystemWithField)
        The systems (at least one).
    field_eom: callable
        ``field_eom(t, states, field)`` returns :math:`\dot a` (a complex number) at time ``t`` for the list of
        (d_m, d_m) density matrices ``states`` (one per system, in the order of ``system_list``) and the field.
    name: str
        An optional name.
    description: str
        An optional description.

    Notes
    -----
    ``field_eom`` is probed once, at ``t = 1.0`` and ``field = 1 + 1j`` with seeded random density matrices;
    if it fails or does not return a complex number, ``AssertionError`` is raised.
    """

    def __init__(
        self,
        system_list: List[TimeDependentSystemWithField],
        field_eom: Callable[[float, List[np.ndarray], complex], complex],
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        assert isinstance(system_list, list), "'system_list' must be a list of TimeDependentSystemWithField."
        assert len(system_list) > 0, "'system_list' must hold at least one TimeDependentSystemWithField."
        for system in system_list:
            assert isinstance(system, TimeDependentSystemWithField), (
                "Each element of 'system_list' must be a TimeDependentSystemWithField."
            )
        assert callable(field_eom), "'field_eom' must be a callable (t, states, field) -> complex."
        probes = [_probe_state(system.dimension, seed) for seed, system in enumerate(system_list)]
        try:
            complex(field_eom(PROBE_TIME, probes, PROBE_FIELD))
        except Exception as err:
            shapes = ", ".join(f"({s.dimension}, {s.dimension})" for s in system_list)
            raise AssertionError(
                f"'field_eom' must take a time, a list of matrices of shapes [{shapes}] and a complex field, "
                "and return a complex number."
            ) from err
        self._system_list = list(system_list)
        self._field_eom = field_eom

    def _str_items(self) -> list:
        return [("systems", len(self._system_list))]

    @property
    def system_list(self) -> List[TimeDependentSystemWithField]:
        """The systems (a new list)."""
        return list(self._system_list)

    @property
    def field_eom(self) -> Callable[[float, List[np.ndarray], complex], complex]:
        """The field equation of motion ``(t, states, field) -> da/dt``."""
        return self._field_eom
