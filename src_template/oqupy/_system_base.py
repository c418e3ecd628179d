"""The base of every system: argument checks, Liouvillians and :class:`BaseSystem`.

The conventions (vectorisation, Liouvillian, half steps) are stated once, in :mod:`oqupy.system`.
Everything in this module runs on the host with NumPy/SciPy in every generated package.
"""

from typing import Any, Callable, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from oqupy._boundary import array_namespace, is_traced
from oqupy._types import Matrix
from oqupy.base_api import BaseAPIClass
from oqupy.config import INTEGRATE_EPSREL, NpDtype, NpDtypeReal
from oqupy.util import check_convert, check_true

__runs_on__ = "host"

HERMITICITY_RTOL = 1e-10
"""Relative tolerance (w.r.t. the largest entry, at least 1) of the Hermiticity check of Hamiltonians."""


# -- vectorisation of time-dependent callables --------------------------------


def vectorize_matrix_function(function: Callable[[float], Matrix]) -> Callable:
    """Vectorise ``function`` over times: an array of n times gives an (n, m, m) array."""
    return np.vectorize(function)


def vectorize_scalar_function(function: Callable[[float], float]) -> Callable:
    """Vectorise ``function`` over times: an array of n times gives an (n,) array."""
    return np.vectorize(function)


def complex_matrix_function(function: Callable) -> Callable:
    """Wrap ``function`` so that it returns complex128 arrays (fixes the dtype of its vectorisation)."""

    def matrix(t: float) -> np.ndarray:
        return np.asarray(function(t), dtype=NpDtype)

    return matrix


def real_scalar_function(function: Callable) -> Callable:
    """Wrap ``function`` so that it returns Python floats (fixes the dtype of its vectorisation)."""

    def scalar(t: float) -> float:
        return float(function(t))

    return scalar


# -- validation -----------------------------------------------------------------


class LindbladTerms(NamedTuple):
    """Checked rates and jump operators of the Lindblad terms, one rate per operator."""

    gammas: list  # floats (System) or callables t -> float (TimeDependentSystem)
    operators: list  # (d, d) arrays (System) or callables t -> (d, d) array (TimeDependentSystem)


def read_only(array: Any) -> Any:
    """``array`` made read-only if it is a NumPy array (a JAX array is immutable anyway); returns it."""
    if isinstance(array, np.ndarray):
        array.setflags(write=False)
    return array


def check_matrix(matrix: Any, name: str, shape: Optional[Tuple[int, int]] = None) -> np.ndarray:
    """Return a read-only complex128 copy of the finite square matrix ``matrix`` (AssertionError if not).

    A traced ``matrix`` (``oqupy_jax`` under ``jax.grad``, ``jit``, ``vmap``) has its shape checked, not its
    values, and stays a JAX array.
    """
    if is_traced(matrix):
        result = array_namespace(matrix).asarray(matrix, dtype=NpDtype)
        assert result.ndim == 2 and result.shape[0] == result.shape[1], f"'{name}' must be a square matrix."
        assert shape is None or result.shape == tuple(shape), f"'{name}' must have shape {shape}."
        return result
    try:
        result = np.array(matrix, dtype=NpDtype)
    except Exception as err:
        raise AssertionError(f"'{name}' must be a numpy array (or array-like) of numbers.") from err
    assert result.ndim == 2, f"'{name}' must be a matrix (got {result.ndim} dimensions)."
    assert result.shape[0] == result.shape[1], f"'{name}' must be a square matrix (got shape {result.shape})."
    if shape is not None:
        assert result.shape == tuple(shape), f"'{name}' must have shape {tuple(shape)} (got {result.shape})."
    assert np.all(np.isfinite(result)), f"'{name}' must have finite entries (no NaN or inf)."
    result.setflags(write=False)
    return result


def check_hamiltonian(hamiltonian: Any, name: str = "hamiltonian") -> np.ndarray:
    """Return a read-only copy of the finite, square, Hermitian matrix ``hamiltonian`` (traced: shape only)."""
    result = check_matrix(hamiltonian, name)
    if is_traced(result):
        return result
    scale = max(1.0, float(np.max(np.abs(result)))) if result.size else 1.0
    deviation = float(np.max(np.abs(result - result.conj().T))) if result.size else 0.0
    assert deviation <= HERMITICITY_RTOL * scale, (
        f"'{name}' must be Hermitian (largest deviation |H - H^dagger| = {deviation:.3g})."
    )
    return result


def check_list(value: Any, name: str) -> list:
    """Return ``value`` (None, list, tuple or array) as a new list (AssertionError otherwise)."""
    if value is None:
        return []
    assert isinstance(value, (list, tuple, np.ndarray)), f"'{name}' must be a list."
    return list(value)


def check_paired_lists(gammas: Any, lindblad_operators: Any) -> Tuple[list, list]:
    """``gammas`` and ``lindblad_operators`` as lists of equal length (AssertionError otherwise)."""
    gamma_list = check_list(gammas, "gammas")
    operator_list = check_list(lindblad_operators, "lindblad_operators")
    assert len(gamma_list) == len(operator_list), (
        f"Lists 'gammas' ({len(gamma_list)}) and 'lindblad_operators' ({len(operator_list)}) "
        "must have the same length."
    )
    return gamma_list, operator_list


def check_lindblad(gammas: Any, lindblad_operators: Any, dimension: int) -> LindbladTerms:
    """Validate constant rates and jump operators: equal-length lists of finite floats and (d, d) matrices."""
    gamma_list, operator_list = check_paired_lists(gammas, lindblad_operators)
    checked_gammas = []
    for n, gamma in enumerate(gamma_list):
        if is_traced(gamma):
            checked_gammas.append(gamma)
            continue
        try:
            value = float(gamma)
        except Exception as err:
            raise AssertionError(f"'gammas[{n}]' must be a real number.") from err
        assert np.isfinite(value), f"'gammas[{n}]' must be finite (no NaN or inf)."
        checked_gammas.append(value)
    checked_operators = [
        check_matrix(op, f"lindblad_operators[{n}]", (dimension, dimension))
        for n, op in enumerate(operator_list)
    ]
    return LindbladTerms(checked_gammas, checked_operators)


def evaluate_at_zero(function: Any, name: str) -> Any:
    """Return ``function(0.0)``; AssertionError if it is not callable or cannot be evaluated."""
    assert callable(function), f"'{name}' must be a callable of time t (a float)."
    try:
        return function(0.0)
    except Exception as err:
        raise AssertionError(f"'{name}' must be a callable that can be evaluated at t=0.0.") from err


def check_td_lindblad(gammas: Any, lindblad_operators: Any, dimension: int) -> LindbladTerms:
    """Validate time-dependent rates and jump operators; return the dtype-fixing wrappers."""
    gamma_list, operator_list = check_paired_lists(gammas, lindblad_operators)
    checked_gammas = []
    for n, gamma in enumerate(gamma_list):
        name = f"gammas[{n}]"
        value = evaluate_at_zero(gamma, name)
        try:
            value = float(value)
        except Exception as err:
            raise AssertionError(f"'{name}' must return a real number (got {value!r} at t=0.0).") from err
        assert np.isfinite(value), f"'{name}' must return a finite number (got {value} at t=0.0)."
        checked_gammas.append(real_scalar_function(gamma))
    checked_operators = []
    for n, operator in enumerate(operator_list):
        name = f"lindblad_operators[{n}]"
        check_matrix(evaluate_at_zero(operator, name), name + "(0.0)", (dimension, dimension))
        checked_operators.append(complex_matrix_function(operator))
    return LindbladTerms(checked_gammas, checked_operators)


def check_num_steps(num_steps: Any) -> int:
    """Convert ``num_steps`` to a non-negative int (TypeError / ValueError)."""
    value = check_convert(num_steps, int, "num_steps")
    check_true(value == num_steps, "Argument 'num_steps' must be an integer.")
    check_true(value >= 0, "Argument 'num_steps' must be non-negative.")
    return value


# -- Liouvillians ------------------------------------------------------------------


def build_liouvillian(
    hamiltonian: np.ndarray, gammas: Sequence[float], lindblad_operators: Sequence[np.ndarray]
) -> np.ndarray:
    """The d^2 x d^2 Liouvillian of one Hamiltonian and its Lindblad terms (conventions: :mod:`oqupy.system`).

    NumPy for concrete arguments, ``jax.numpy`` if one is traced (:func:`oqupy._boundary.array_namespace`).
    """
    xp = array_namespace(hamiltonian, gammas, lindblad_operators)
    one = xp.identity(hamiltonian.shape[0], dtype=NpDtype)
    result = -1j * (xp.kron(hamiltonian, one) - xp.kron(one, hamiltonian.T))
    for gamma, op in zip(gammas, lindblad_operators):
        number = op.conj().T @ op
        result = result + gamma * (
            xp.kron(op, op.conj()) - 0.5 * (xp.kron(number, one) + xp.kron(one, number.T))
        )
    return xp.asarray(result, dtype=NpDtype)


def left_right_super_stack(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Stacked ``left_right_super``: (..., d, d) operators (broadcast) give (..., d^2, d^2) superoperators."""
    dim = left.shape[-1]
    product = np.einsum("...ik,...lj->...ijkl", left, right)
    return product.reshape(product.shape[:-4] + (dim * dim, dim * dim))


def build_liouvillian_stack(
    hamiltonians: np.ndarray, gammas: Sequence[np.ndarray], lindblad_operators: Sequence[np.ndarray]
) -> np.ndarray:
    """Liouvillians of n sampled times: (n, d, d) Hamiltonians, (n,) rates, (n, d, d) operators -> (n, d^2, d^2)."""
    one = np.identity(hamiltonians.shape[-1], dtype=NpDtype)
    result = -1j * (left_right_super_stack(hamiltonians, one) - left_right_super_stack(one, hamiltonians))
    for gamma, op in zip(gammas, lindblad_operators):
        op_dagger = np.conj(np.swapaxes(op, -1, -2))
        number = op_dagger @ op
        dissipator = left_right_super_stack(op, op_dagger) - 0.5 * (
            left_right_super_stack(number, one) + left_right_super_stack(one, number)
        )
        result = result + np.asarray(gamma, dtype=NpDtypeReal)[:, None, None] * dissipator
    return np.asarray(result, dtype=NpDtype)


# -- systems -------------------------------------------------------------------------


class BaseSystem(BaseAPIClass):
    """Base class of systems of Hilbert-space dimension ``dimension``.

    Parameters
    ----------
    dimension: int
        Hilbert-space dimension d of the system.
    name: str
        An optional name for the system.
    description: str
        An optional description of the system.
    """

    def __init__(self, dimension: int, name: Optional[str] = None, description: Optional[str] = None) -> None:
        assert isinstance(dimension, (int, np.integer)) and not isinstance(dimension, bool), (
            "'dimension' must be an integer."
        )
        assert dimension >= 1, "'dimension' must be positive."
        self._dimension = int(dimension)
        super().__init__(name, description)

    def _str_items(self) -> list:
        return [("dimension", self._dimension)]

    @property
    def dimension(self) -> int:
        """Hilbert-space dimension of the system."""
        return self._dimension

    def liouvillian(self, *args: Any, **kwargs: Any) -> np.ndarray:
        """The d^2 x d^2 Liouvillian (implemented by subclasses)."""
        raise NotImplementedError(f"Class {type(self).__name__} has no liouvillian implementation.")

    def get_propagators(
        self,
        dt: float,
        start_time: float = 0.0,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Callable[[int], Tuple[np.ndarray, np.ndarray]]:
        """``step -> (prop_1, prop_2)``, the half-step propagators (implemented by subclasses)."""
        raise NotImplementedError(f"Class {type(self).__name__} has no get_propagators implementation.")

    def get_propagator_stack(
        self,
        dt: float,
        start_time: float,
        num_steps: int,
        subdiv_limit: Optional[int] = None,
        epsrel: float = INTEGRATE_EPSREL,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Half-step propagators of steps ``0 .. num_steps - 1`` as two (num_steps, d^2, d^2) arrays.

        The base implementation stacks the results of :meth:`get_propagators`; subclasses vectorise.
        """
        num_steps = check_num_steps(num_steps)
        propagators = self.get_propagators(dt, start_time, subdiv_limit, epsrel)
        dim = self._dimension**2
        prop_1 = np.empty((num_steps, dim, dim), dtype=NpDtype)
        prop_2 = np.empty((num_steps, dim, dim), dtype=NpDtype)
        for step in range(num_steps):
            first, second = propagators(step)
            prop_1[step] = first
            prop_2[step] = second
        return prop_1, prop_2
