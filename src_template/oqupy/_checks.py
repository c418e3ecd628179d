"""Argument checks shared by TEMPO, PT-TEMPO and the dynamics from process tensors (OQuPy 0.5's exception types).

Host code: plain NumPy in both packages; each check returns a NumPy value or raises.
"""

from typing import Any

import numpy as np

from oqupy import config
from oqupy._tempo_parameters import TempoParameters
from oqupy.bath import Bath
from oqupy.system import ParameterizedSystem, System, TimeDependentSystem

__runs_on__ = "host"

__all__ = ["check_initial_state", "check_system", "check_system_and_bath", "float_time", "is_identity"]


def check_initial_state(initial_state: Any, dimension: int) -> np.ndarray:
    """``initial_state`` as a complex ``dimension`` x ``dimension`` matrix; ``TypeError`` / ``ValueError`` otherwise.

    Any finite matrix is accepted, as in OQuPy 0.5: the dynamics are linear in the initial state, so a matrix that
    is not a density matrix (``B @ rho`` for a correlation, an operator basis element) is a legitimate input.
    """
    if not hasattr(initial_state, "shape"):
        raise TypeError("Argument 'initial_state' must be a numpy or jax array (a density matrix).")
    state = np.array(initial_state, dtype=config.NpDtype)
    if state.shape != (dimension, dimension):
        raise ValueError(
            f"Argument 'initial_state' must have shape {(dimension, dimension)}, not {state.shape}."
        )
    if not np.all(np.isfinite(state)):
        raise ValueError("Argument 'initial_state' contains NaN or inf.")
    return state


def check_system_and_bath(system: Any, bath: Any, parameters: Any, unique: Any) -> None:
    """The argument checks of ``Tempo`` and ``PtTempo`` (OQuPy's exception types)."""
    if not isinstance(system, (System, TimeDependentSystem)):
        raise TypeError("Argument 'system' must be a System or TimeDependentSystem.")
    assert isinstance(bath, Bath), "Argument 'bath' must be an oqupy.Bath object."
    assert isinstance(parameters, TempoParameters), (
        "Argument 'parameters' must be an oqupy.TempoParameters object."
    )
    assert isinstance(unique, bool), "Argument 'unique' must be bool."
    if bath.dimension != system.dimension:
        raise ValueError(
            f"Hilbert space dimensions of system ({system.dimension}) and bath ({bath.dimension}) differ."
        )


def check_system(system: Any) -> None:
    """``TypeError`` unless ``system`` is a ``System``, ``TimeDependentSystem`` or ``ParameterizedSystem``."""
    if not isinstance(system, (System, TimeDependentSystem, ParameterizedSystem)):
        raise TypeError("Argument 'system' must be a System, TimeDependentSystem or ParameterizedSystem.")


def float_time(value: Any, name: str) -> float:
    """``value`` as a float; ``AssertionError`` (OQuPy's type for PT-TEMPO's times) if it is not one."""
    try:
        return float(value)
    except (TypeError, ValueError) as err:
        raise AssertionError(f"Argument '{name}' must be float.") from err


def is_identity(matrix: np.ndarray) -> bool:
    """True if ``matrix`` is exactly the identity."""
    return bool(np.array_equal(matrix, np.identity(matrix.shape[0], dtype=matrix.dtype)))
