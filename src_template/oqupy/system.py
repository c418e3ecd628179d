"""Open quantum systems: Hamiltonian plus Lindblad dissipation, constant or time dependent.

Conventions (as in the whole package, see :mod:`oqupy.operators`):

- a d x d density matrix ``rho`` is vectorised row-major, ``vec(rho) = rho.reshape(d * d)``, and
  superoperators act as ``S @ vec(rho)`` with ``vec(A @ rho @ B) = kron(A, B.T) @ vec(rho)``;
- the Liouvillian is

  .. math::

      L = -i [H, \\cdot] + \\sum_n \\gamma_n \\left( A_n \\cdot A_n^\\dagger
          - \\frac{1}{2} \\{A_n^\\dagger A_n, \\cdot\\} \\right),

  i.e. ``L = -1j * commutator(H) + sum_n gamma_n * (left_right_super(A_n, A_n^dagger)
  - 0.5 * acommutator(A_n^dagger A_n))`` (hbar = 1);
- a time step of length ``dt`` is split into two half steps: ``get_propagators(dt, start_time)``
  returns ``step -> (prop_1, prop_2)`` where, with ``t = start_time + step * dt``, ``prop_1``
  propagates over ``[t, t + dt/2]`` (before the bath influence) and ``prop_2`` over
  ``[t + dt/2, t + dt]`` (after it).  For a :class:`System` both are ``expm(L dt/2)``.

Everything in this module runs on the host with NumPy/SciPy in every generated package.
"""

from typing import Callable, List, Optional, Tuple

import numpy as np
import scipy.linalg
from scipy import integrate

from oqupy._boundary import array_namespace, expm
from oqupy._system_base import (
    BaseSystem,
    build_liouvillian,
    build_liouvillian_stack,
    check_hamiltonian,
    check_lindblad,
    check_num_steps,
    check_td_lindblad,
    complex_matrix_function,
    evaluate_at_zero,
    read_only,
    vectorize_matrix_function,
    vectorize_scalar_function,
)
from oqupy._system_chain import SystemChain
from oqupy._system_field import MeanFieldSystem, TimeDependentSystemWithField
from oqupy._system_parameterized import ParameterizedSystem
from oqupy.config import INTEGRATE_EPSREL, NpDtype
from oqupy.util import check_convert

__runs_on__ = "host"

__all__ = [
    "BaseSystem",
    "MeanFieldSystem",
    "ParameterizedSystem",
    "System",
    "SystemChain",
    "TimeDependentSystem",
    "TimeDependentSystemWithField",
]


class System(BaseSystem):
    """A system with a constant Hamiltonian and constant Lindblad dissipation.

    Parameters
    ----------
    hamiltonian: ndarray
        Hermitian (d, d) system Hamiltonian.
    gammas: list(float)
        Rates of the Lindblad terms (default: none).
    lindblad_operators: list(ndarray)
        (d, d) jump operators A_n of the Lindblad terms, one per rate (default: none).
    name: str
        An optional name for the system.
    description: str
        An optional description of the system.
    """

    def __init__(
        self,
        hamiltonian: np.ndarray,
        gammas: Optional[List[float]] = None,
        lindblad_operators: Optional[List[np.ndarray]] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        self._hamiltonian = check_hamiltonian(hamiltonian)
        super().__init__(self._hamiltonian.shape[0], name, description)
        terms = check_lindblad(gammas, lindblad_operators, self._dimension)
        self._gammas: List[float] = terms.gammas
        self._lindblad_operators: List[np.ndarray] = terms.operators
        self._liouvillian = read_only(
            build_liouvillian(self._hamiltonian, self._gammas, self._lindblad_operators)
        )

    def _str_items(self) -> list:
        return super()._str_items() + [("lindblad terms", len(self._gammas))]

    def liouvillian(self) -> np.ndarray:
        """The d^2 x d^2 Liouvillian (module docstring), a copy of the cached one."""
        return self._liouvillian.copy()

    def _half_step_propagator(self, dt: complex) -> np.ndarray:
        """``expm(L dt/2)`` as a read-only array (a JAX array if the Hamiltonian or a rate is traced)."""
        xp = array_namespace(self._liouvillian)
        return read_only(xp.asarray(expm(self._liouvillian * (dt / 2.0)), dtype=NpDtype))

    def get_propagators(
        self,
        dt: float,
        start_time: float = 0.0,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Callable[[int], Tuple[np.ndarray, np.ndarray]]:
        """``step -> (expm(L dt/2), expm(L dt/2))``; ``start_time``, ``subdiv_limit``, ``epsrel`` are unused."""
        del start_time, subdiv_limit, epsrel
        propagator = self._half_step_propagator(dt)

        def propagators(step: int) -> Tuple[np.ndarray, np.ndarray]:
            return propagator.copy(), propagator.copy()

        return propagators

    def get_unitary_propagators(
        self,
        dt: complex,
        start_time: float = 0.0,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Callable[[int], Tuple[np.ndarray, np.ndarray]]:
        """``step -> (expm(-iH dt/2), expm(-iH dt/2))`` on the d x d Hilbert space.

        ``dt`` may be complex: ``dt = -1j * dbeta`` gives the imaginary-time step ``expm(-H dbeta/2)``.
        ``start_time``, ``subdiv_limit`` and ``epsrel`` are unused.
        """
        del start_time, subdiv_limit, epsrel
        dt = check_convert(dt, complex, "dt")
        propagator = np.asarray(scipy.linalg.expm(-1j * self._hamiltonian * (dt / 2.0)), dtype=NpDtype)
        propagator.setflags(write=False)

        def propagators(step: int) -> Tuple[np.ndarray, np.ndarray]:
            return propagator.copy(), propagator.copy()

        return propagators

    def get_propagator_stack(
        self,
        dt: float,
        start_time: float,
        num_steps: int,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Half-step propagators of steps ``0 .. num_steps - 1``: one ``expm``, broadcast to two new arrays."""
        num_steps = check_num_steps(num_steps)
        propagator = self._half_step_propagator(dt)
        xp = array_namespace(propagator)
        shape = (num_steps,) + propagator.shape
        return xp.broadcast_to(propagator, shape).copy(), xp.broadcast_to(propagator, shape).copy()

    @property
    def hamiltonian(self) -> np.ndarray:
        """The system Hamiltonian (a copy)."""
        return self._hamiltonian.copy()

    @property
    def gammas(self) -> List[float]:
        """The rates of the Lindblad terms (a new list)."""
        return list(self._gammas)

    @property
    def lindblad_operators(self) -> List[np.ndarray]:
        """The jump operators of the Lindblad terms (copies)."""
        return [op.copy() for op in self._lindblad_operators]


class TimeDependentSystem(BaseSystem):
    """A system with a time-dependent Hamiltonian and time-dependent Lindblad dissipation.

    Parameters
    ----------
    hamiltonian: callable
        ``hamiltonian(t)`` is the Hermitian (d, d) Hamiltonian at time t (a float).
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
    The callables are checked at t = 0.0 only (shape, finiteness, Hermiticity of the Hamiltonian).
    The properties return vectorised versions: an array of n times gives (n, d, d) or (n,) arrays.
    """

    def __init__(
        self,
        hamiltonian: Callable[[float], np.ndarray],
        gammas: Optional[List[Callable[[float], float]]] = None,
        lindblad_operators: Optional[List[Callable[[float], np.ndarray]]] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        initial_hamiltonian = check_hamiltonian(
            evaluate_at_zero(hamiltonian, "hamiltonian"), "hamiltonian(0.0)"
        )
        super().__init__(initial_hamiltonian.shape[0], name, description)
        self._hamiltonian_function = complex_matrix_function(hamiltonian)
        terms = check_td_lindblad(gammas, lindblad_operators, self._dimension)
        self._gamma_functions: List[Callable] = terms.gammas
        self._lindblad_functions: List[Callable] = terms.operators
        self._hamiltonian = vectorize_matrix_function(self._hamiltonian_function)
        self._gammas = [vectorize_scalar_function(gamma) for gamma in self._gamma_functions]
        self._lindblad_operators = [vectorize_matrix_function(op) for op in self._lindblad_functions]

    def _str_items(self) -> list:
        return super()._str_items() + [("lindblad terms", len(self._gammas))]

    def liouvillian(self, t: float) -> np.ndarray:
        """The d^2 x d^2 Liouvillian at time ``t`` (module docstring)."""
        t = check_convert(t, float, "t")
        return build_liouvillian(
            self._hamiltonian_function(t),
            [gamma(t) for gamma in self._gamma_functions],
            [op(t) for op in self._lindblad_functions],
        )

    def _liouvillian_stack(self, times: np.ndarray) -> np.ndarray:
        """Liouvillians at the (n,) ``times``, sampled with the vectorised callables: (n, d^2, d^2)."""
        return build_liouvillian_stack(
            np.asarray(self._hamiltonian(times), dtype=NpDtype),
            [gamma(times) for gamma in self._gammas],
            [np.asarray(op(times), dtype=NpDtype) for op in self._lindblad_operators],
        )

    def _integrated_liouvillian(
        self, start: float, end: float, subdiv_limit: int, epsrel: float
    ) -> np.ndarray:
        """The integral of L(t) over [start, end] (``scipy.integrate.quad_vec``)."""
        value, _ = integrate.quad_vec(self.liouvillian, start, end, epsrel=epsrel, limit=subdiv_limit)
        return np.asarray(value, dtype=NpDtype)

    def get_propagators(
        self,
        dt: float,
        start_time: float = 0.0,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Callable[[int], Tuple[np.ndarray, np.ndarray]]:
        """``step -> (prop_1, prop_2)`` for the half steps of step ``step`` (t = start_time + step dt).

        With ``subdiv_limit=None``: ``expm(L(t + dt/4) dt/2)`` and ``expm(L(t + 3dt/4) dt/2)`` (midpoint
        rule per half step).  Otherwise: ``expm`` of the integrals of L over ``[t, t + dt/2]`` and
        ``[t + dt/2, t + dt]`` by ``quad_vec`` with ``limit=subdiv_limit`` and ``epsrel``.
        """
        dt = check_convert(dt, float, "dt")
        start_time = check_convert(start_time, float, "start_time")

        def propagators(step: int) -> Tuple[np.ndarray, np.ndarray]:
            t = start_time + step * dt
            if subdiv_limit is None:
                first = self.liouvillian(t + dt / 4.0) * (dt / 2.0)
                second = self.liouvillian(t + 3.0 * dt / 4.0) * (dt / 2.0)
            else:
                first = self._integrated_liouvillian(t, t + dt / 2.0, subdiv_limit, epsrel)
                second = self._integrated_liouvillian(t + dt / 2.0, t + dt, subdiv_limit, epsrel)
            return (
                np.asarray(scipy.linalg.expm(first), dtype=NpDtype),
                np.asarray(scipy.linalg.expm(second), dtype=NpDtype),
            )

        return propagators

    def get_propagator_stack(
        self,
        dt: float,
        start_time: float,
        num_steps: int,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Half-step propagators of steps ``0 .. num_steps - 1`` as two (num_steps, d^2, d^2) arrays.

        Same values as :meth:`get_propagators`.  Midpoint mode samples L at all 2 num_steps midpoints
        at once; the ``quad_vec`` mode integrates step by step (adaptive); both end in one batched ``expm``.
        """
        num_steps = check_num_steps(num_steps)
        dt = check_convert(dt, float, "dt")
        start_time = check_convert(start_time, float, "start_time")
        dim = self._dimension**2
        if num_steps == 0:
            return np.zeros((0, dim, dim), dtype=NpDtype), np.zeros((0, dim, dim), dtype=NpDtype)
        times = start_time + np.arange(num_steps) * dt
        if subdiv_limit is None:
            midpoints = np.stack([times + dt / 4.0, times + 3.0 * dt / 4.0], axis=1).reshape(2 * num_steps)
            exponents = self._liouvillian_stack(midpoints) * (dt / 2.0)
        else:
            exponents = np.empty((2 * num_steps, dim, dim), dtype=NpDtype)
            for step in range(num_steps):
                t = float(times[step])
                exponents[2 * step] = self._integrated_liouvillian(t, t + dt / 2.0, subdiv_limit, epsrel)
                exponents[2 * step + 1] = self._integrated_liouvillian(
                    t + dt / 2.0, t + dt, subdiv_limit, epsrel
                )
        # a Liouvillian that is NaN or infinite at some time gives NaN propagators from that half step on, so
        # that the caller can compute the steps before it and name the time (``expm`` refuses non-finite input)
        finite = np.isfinite(exponents).all(axis=(1, 2))
        flat = np.full((2 * num_steps, dim, dim), np.nan, dtype=NpDtype)
        flat[finite] = scipy.linalg.expm(exponents[finite])
        props = flat.reshape(num_steps, 2, dim, dim)
        return np.ascontiguousarray(props[:, 0]), np.ascontiguousarray(props[:, 1])

    @property
    def hamiltonian(self) -> Callable:
        """The vectorised Hamiltonian ``t -> (d, d)`` (an array of n times gives (n, d, d))."""
        return self._hamiltonian

    @property
    def gammas(self) -> List[Callable]:
        """The vectorised rates ``t -> float`` (a new list)."""
        return list(self._gammas)

    @property
    def lindblad_operators(self) -> List[Callable]:
        """The vectorised jump operators ``t -> (d, d)`` (a new list)."""
        return list(self._lindblad_operators)
