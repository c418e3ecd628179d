"""Argument checks shared by TEMPO, PT-TEMPO and the dynamics from process tensors (OQuPy 0.5's exception types).

Host code: plain NumPy in both packages; each check returns a NumPy value or raises.
"""

import warnings
from typing import Any, Tuple

import numpy as np

from oqupy import config
from oqupy._tempo_parameters import TempoParameters, num_steps_between
from oqupy._validation import check_time_window, finite_float
from oqupy.bath import Bath
from oqupy.system import ParameterizedSystem, System, TimeDependentSystem

__runs_on__ = "host"

__all__ = [
    "check_initial_state",
    "check_run_window",
    "check_system",
    "check_system_and_bath",
    "is_identity",
    "nonfinite_system_error",
    "warn_long_memory",
]


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


def check_run_window(
    start_time: Any,
    end_time: Any,
    parameters: TempoParameters,
    ordered: bool = True,
    error: type = TypeError,
    min_steps: int = 0,
) -> Tuple[float, float]:
    """The time window of a TEMPO or PT-TEMPO run as finite floats, checked before any work starts.

    ``ValueError`` naming the argument for NaN or infinite times and, if ``ordered``, for ``end_time`` before
    ``start_time``; ``error`` (OQuPy's type at that entry point) for values that are not numbers.  A memory
    cut-off longer than a run of at least ``min_steps`` steps is a ``UserWarning`` (see :func:`warn_long_memory`;
    a shorter run is the caller's error).
    """
    if ordered:
        start, end = check_time_window(start_time, end_time, error)
    else:
        start, end = finite_float(start_time, "start_time", error), finite_float(end_time, "end_time", error)
    num_steps = num_steps_between(start, end, parameters.dt)
    if num_steps >= min_steps:
        warn_long_memory(parameters, num_steps, stacklevel=4)  # the warning points at the caller's caller
    return start, end


def warn_long_memory(parameters: TempoParameters, num_steps: int, stacklevel: int = 3) -> None:
    """``UserWarning`` if the memory cut-off of ``parameters`` is longer than a run of ``num_steps`` steps.

    OQuPy 0.5 accepts such a cut-off silently (the run keeps its full memory), so this stays a warning, not an
    error: the result is right, but a cut-off chosen for another, longer run is likely a mistake.
    """
    dkmax = parameters.dkmax
    if dkmax is not None and num_steps >= 0 and dkmax > num_steps:
        warnings.warn(
            f"The memory cut-off (tcut = {parameters.tcut}, dkmax = {dkmax}) is longer than the run "
            f"({num_steps} steps of dt = {parameters.dt}): the run keeps its full memory.",
            UserWarning,
            stacklevel=stacklevel,
        )


def nonfinite_system_error(time: float, dt: float, dynamics: Any, system: str = "'system'") -> ValueError:
    """The ``ValueError`` of a run whose system propagators are NaN or infinite from the step at ``time`` on.

    The states computed before that step are kept: in the caller's object (``Tempo.get_dynamics()``) and in the
    error's ``dynamics`` attribute, for the shortcut functions whose object the caller never sees (``None``: a
    batch refused before any step).  ``system`` names the argument.
    """
    kept = (
        "No dynamics were computed."
        if dynamics is None
        else f"The dynamics up to t = {time:.10g} are kept (the error's 'dynamics' attribute)."
    )
    error = ValueError(
        f"The system's propagator of the step from t = {time:.10g} to t = {time + dt:.10g} is not finite: its "
        f"Hamiltonian or Lindblad terms ({system}) are NaN or infinite in that step. {kept}"
    )
    error.dynamics = dynamics  # type: ignore[attr-defined]
    return error


def is_identity(matrix: np.ndarray) -> bool:
    """True if ``matrix`` is exactly the identity."""
    return bool(np.array_equal(matrix, np.identity(matrix.shape[0], dtype=matrix.dtype)))
