"""``ParameterizedSystem``: a system whose Hamiltonian and Lindblad terms are functions of control parameters.

The parameters are piecewise constant over half steps: a (2N, M) array ``parameters`` holds M parameters per
half step, row ``2n`` for the first half of step ``n`` (``prop_1``) and row ``2n + 1`` for the second
(``prop_2``).  Conventions (vectorisation, Liouvillian, half steps) are those of :mod:`oqupy.system`.

Derivatives of the half-step propagators ``U = expm(L(theta) dt/2)``: the Frechet derivative of the matrix
exponential, ``dU/dtheta_j = expm_frechet(L dt/2, dL/dtheta_j dt/2)`` (exact), with ``dL/dtheta_j`` from a
five-point central stencil of step ``PARAMETER_STEP`` on the Liouvillian (exact, up to rounding of about
1e-13 relative, for a Liouvillian polynomial of degree <= 4 in the parameters, e.g. a linear control field).
OQuPy 0.5 differentiates ``U`` itself numerically (``numdifftools``).

Host code (NumPy/SciPy) for concrete parameters; traced parameters (``oqupy_jax`` under ``jax.grad``,
``jit``, ``vmap``) build Liouvillians and propagators with ``jax.numpy`` (:mod:`oqupy._boundary`).
"""

import functools
import inspect
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import scipy.linalg

from oqupy._boundary import array_namespace, expm, is_traced, stack_rows
from oqupy._system_base import (
    BaseSystem,
    build_liouvillian,
    check_hamiltonian,
    check_matrix,
    check_paired_lists,
)
from oqupy.config import NpDtype
from oqupy.util import check_convert

__runs_on__ = "host"

__all__ = ["PARAMETER_STEP", "ParameterizedSystem"]

PARAMETER_STEP = 1e-3
"""Step of the five-point stencil for dL/dtheta (module docstring)."""

_TRIAL_VALUE = 0.5
"""The parameter value at which the callables are checked (OQuPy 0.5 checks at 0.5 too)."""


class ParameterizedSystem(BaseSystem):
    """A system with Hamiltonian ``H(theta_1, ..., theta_M)`` and Lindblad terms depending on the same parameters.

    Parameters
    ----------
    hamiltonian: callable
        ``hamiltonian(*theta)`` is the Hermitian (d, d) Hamiltonian; the number M of parameters is the number of
        its positional arguments.
    gammas: list(callable)
        ``gammas[n](*theta)`` is the (real) rate of the n-th Lindblad term (default: none).
    lindblad_operators: list(callable)
        ``lindblad_operators[n](*theta)`` is the (d, d) jump operator of the n-th Lindblad term.
    propagator_derivatives: callable
        Optional ``propagator_derivatives(dt, theta)`` returning the M derivatives ``dU/dtheta_j`` of the
        half-step propagator ``U = expm(L(theta) dt/2)``; by default they are computed (module docstring).
    name: str
        An optional name for the system.
    description: str
        An optional description of the system.

    Notes
    -----
    The callables are checked with every parameter at 0.5 (shape, finiteness, Hermiticity of the
    Hamiltonian); a non-callable ``hamiltonian`` raises ``TypeError``, a bad value ``AssertionError``.
    """

    def __init__(
        self,
        hamiltonian: Callable[..., np.ndarray],
        gammas: Optional[List[Callable[..., float]]] = None,
        lindblad_operators: Optional[List[Callable[..., np.ndarray]]] = None,
        propagator_derivatives: Optional[Callable[[float, Any], List[np.ndarray]]] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        if not callable(hamiltonian):
            raise TypeError("Argument 'hamiltonian' must be a callable of the parameters.")
        number = len(inspect.getfullargspec(hamiltonian).args)
        trial = [_TRIAL_VALUE] * number
        dimension = check_hamiltonian(hamiltonian(*trial), "hamiltonian(0.5, ...)").shape[0]
        super().__init__(dimension, name, description)
        gamma_list, operator_list = check_paired_lists(gammas, lindblad_operators)
        for n, (gamma, operator) in enumerate(zip(gamma_list, operator_list)):
            assert callable(gamma) and callable(operator), (
                f"'gammas[{n}]' and 'lindblad_operators[{n}]' must be callables of the parameters."
            )
            value = gamma(*trial)
            assert np.isfinite(float(np.real(value))), f"'gammas[{n}]' must return a finite real number."
            check_matrix(operator(*trial), f"lindblad_operators[{n}]", (dimension, dimension))
        if propagator_derivatives is not None and not callable(propagator_derivatives):
            raise TypeError("Argument 'propagator_derivatives' must be a callable (dt, parameters) -> list.")
        self._number_of_parameters = number
        self._hamiltonian = hamiltonian
        self._gammas = gamma_list
        self._lindblad_operators = operator_list
        self._propagator_derivatives = propagator_derivatives

    def _str_items(self) -> list:
        return super()._str_items() + [
            ("parameters", self._number_of_parameters),
            ("lindblad terms", len(self._gammas)),
        ]

    def liouvillian(self, *parameters: Any) -> np.ndarray:
        """The d^2 x d^2 Liouvillian at the M ``parameters`` (``TypeError`` for another number of them)."""
        if len(parameters) != self._number_of_parameters:
            raise TypeError(
                f"liouvillian() takes {self._number_of_parameters} parameters ({len(parameters)} given)."
            )
        return build_liouvillian(
            self._hamiltonian(*parameters),
            [gamma(*parameters) for gamma in self._gammas],
            [operator(*parameters) for operator in self._lindblad_operators],
        )

    def _half_step(self, dt: float, row: Any) -> np.ndarray:
        """``expm(L(row) dt/2)``."""
        generator = self.liouvillian(*row) * (dt / 2.0)
        return array_namespace(generator).asarray(expm(generator), dtype=NpDtype)

    def get_propagators(  # type: ignore[override]  # OQuPy 0.5's signature: parameters, not times
        self, dt: float, parameters: Any
    ) -> Callable[[int], Tuple[np.ndarray, np.ndarray]]:
        """``step -> (expm(L(parameters[2 step]) dt/2), expm(L(parameters[2 step + 1]) dt/2))``."""

        def propagators(step: int) -> Tuple[np.ndarray, np.ndarray]:
            return self._half_step(dt, parameters[2 * step]), self._half_step(dt, parameters[2 * step + 1])

        return propagators

    def get_propagator_stack(  # type: ignore[override]  # parameters, not times
        self, dt: float, parameters: Any, num_steps: Optional[int] = None
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Half-step propagators of steps ``0 .. num_steps - 1`` as two (num_steps, d^2, d^2) arrays.

        ``parameters`` has shape (2 N, M) with N >= ``num_steps`` (default N); ``ValueError`` otherwise.
        One batched ``expm``; traced ``parameters`` are mapped with ``jax.vmap`` (:mod:`oqupy._boundary`).
        """
        rows = self.check_parameters(parameters, num_steps)
        num_steps = rows.shape[0] // 2 if num_steps is None else num_steps
        xp = array_namespace(rows)
        dim = self._dimension**2
        if num_steps == 0:
            empty = np.zeros((0, dim, dim), dtype=NpDtype)
            return empty, empty
        generators = stack_rows(self.liouvillian, rows[: 2 * num_steps]) * (dt / 2.0)
        props = xp.asarray(expm(generators), dtype=NpDtype).reshape(num_steps, 2, dim, dim)
        return props[:, 0], props[:, 1]

    def check_parameters(self, parameters: Any, num_steps: Optional[int] = None) -> Any:
        """``parameters`` as a (2 N, M) float array (a traced one stays traced); ``ValueError`` if the shape is not
        (2 N, M) with N >= ``num_steps``."""
        rows = parameters if is_traced(parameters) else np.asarray(parameters, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != self._number_of_parameters or rows.shape[0] % 2:
            raise ValueError(
                f"Argument 'parameters' must have shape (2 N, {self._number_of_parameters}), not {rows.shape}."
            )
        if num_steps is not None and rows.shape[0] < 2 * num_steps:
            raise ValueError(
                f"Argument 'parameters' has {rows.shape[0]} rows; {num_steps} steps need {2 * num_steps}."
            )
        return rows

    def halfstep_propagator_derivative(self, dt: float) -> Callable[[Any], List[np.ndarray]]:
        """``theta -> [dU/dtheta_j for j in range(M)]`` for ``U = expm(L(theta) dt/2)`` (module docstring)."""
        dt = check_convert(dt, float, "dt")

        def derivatives(row: Any) -> List[np.ndarray]:
            theta = np.asarray(row, dtype=float).reshape(self._number_of_parameters)
            generator = self.liouvillian(*theta) * (dt / 2.0)
            result = []
            for j in range(self._number_of_parameters):
                direction = self._liouvillian_derivative(theta, j) * (dt / 2.0)
                result.append(np.asarray(scipy.linalg.expm_frechet(generator, direction, compute_expm=False)))
            return result

        return derivatives

    def _liouvillian_derivative(self, theta: np.ndarray, j: int) -> np.ndarray:
        """dL/dtheta_j at ``theta`` by the five-point stencil of step ``PARAMETER_STEP``."""
        step = PARAMETER_STEP * max(1.0, abs(float(theta[j])))

        def at(shift: float) -> np.ndarray:
            shifted = theta.copy()
            shifted[j] += shift
            return self.liouvillian(*shifted)

        return (8.0 * (at(step) - at(-step)) - (at(2.0 * step) - at(-2.0 * step))) / (12.0 * step)

    def get_propagator_derivatives(
        self, dt: float, parameters: Any
    ) -> Callable[[int], Tuple[List[np.ndarray], List[np.ndarray]]]:
        """``step -> (derivatives of prop_1, derivatives of prop_2)``, each a list of M (d^2, d^2) arrays, from the
        user's ``propagator_derivatives`` if given, else :meth:`halfstep_propagator_derivative`."""
        half_step: Callable[[Any], List[np.ndarray]]
        if self._propagator_derivatives is not None:
            half_step = functools.partial(self._propagator_derivatives, dt)
        else:
            half_step = self.halfstep_propagator_derivative(dt)

        def derivatives(step: int) -> Tuple[List[np.ndarray], List[np.ndarray]]:
            return half_step(parameters[2 * step]), half_step(parameters[2 * step + 1])

        return derivatives

    @property
    def number_of_parameters(self) -> int:
        """The number M of parameters."""
        return self._number_of_parameters

    @property
    def hamiltonian(self) -> Callable[..., np.ndarray]:
        """The Hamiltonian ``(*theta) -> (d, d)``."""
        return self._hamiltonian

    @property
    def gammas(self) -> List[Callable[..., float]]:
        """The rates ``(*theta) -> float`` (a new list)."""
        return list(self._gammas)

    @property
    def lindblad_operators(self) -> List[Callable[..., np.ndarray]]:
        """The jump operators ``(*theta) -> (d, d)`` (a new list)."""
        return list(self._lindblad_operators)
