"""The input-validation helpers of the package, in one place: the one float converter and the range checks built on
it.  :mod:`oqupy.util` re-exports OQuPy 0.5's public helpers (``check_convert``, ``check_true``, ...) from here;
:mod:`oqupy._checks` builds the checks of whole arguments (systems, baths, initial states) on top of these.

Host code: plain Python and NumPy in both packages.  Every message names the argument and, for a range check, the
allowed range and the value given.
"""

import math
from typing import Any, Optional

import numpy as np

__runs_on__ = "host"

__all__ = [
    "as_float",
    "check_convert",
    "check_dimension",
    "check_epsrel",
    "check_isinstance",
    "check_time_window",
    "check_true",
    "finite_complex",
    "finite_float",
    "first_nonfinite_step",
    "positive_float",
]


def check_convert(
    variable: Any, conv_type: Any, name: Optional[str] = None, msg: Optional[str] = None
) -> Any:
    """Return ``conv_type(variable)``; raise ``TypeError`` naming the argument if that fails."""
    try:
        return conv_type(variable)
    except Exception as err:
        label = f"Variable '{name}'" if name is not None else "Variable"
        text = f"{label} must be {getattr(conv_type, '__name__', conv_type)}."
        if msg is not None:
            text += " " + msg
        raise TypeError(text) from err


def check_isinstance(
    variable: Any, types: Any, name: Optional[str] = None, msg: Optional[str] = None
) -> None:
    """Raise ``TypeError`` unless ``variable`` is an instance of ``types``."""
    if not isinstance(variable, types):
        label = f"'{name}'" if name is not None else ""
        text = f"Variable {label} is not of the type {types}."
        if msg is not None:
            text += " " + msg
        raise TypeError(text)


def check_true(expr: Any, msg: Optional[str] = None) -> None:
    """Raise ``ValueError`` with ``msg`` (default: no message) unless ``expr`` is truthy."""
    if not expr:
        raise ValueError(msg if msg is not None else "")


def check_dimension(value: Any, name: str) -> int:
    """Return ``value`` if it is a positive ``int`` (not a bool); raise ``AssertionError`` otherwise (OQuPy's type)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AssertionError(f"Argument '{name}' must be int.")
    assert value > 0, f"Argument '{name}' must be positive."
    return value


def as_float(value: Any, name: str, error: type = TypeError, message: Optional[str] = None) -> float:
    """``float(value)``; otherwise ``error`` (OQuPy's type at that argument: ``TypeError`` or ``AssertionError``)
    with ``message`` (default: "Argument '<name>' must be float.").  The package's one float converter."""
    try:
        return float(value)
    except Exception as err:
        raise error(message if message is not None else f"Argument '{name}' must be float.") from err


def finite_float(value: Any, name: str, error: type = TypeError) -> float:
    """``value`` as a finite float; ``ValueError`` naming the argument if it is NaN or infinite."""
    number = as_float(value, name, error)
    if not math.isfinite(number):
        raise ValueError(f"Argument '{name}' must be a finite number (got {number}).")
    return number


def finite_complex(value: Any, name: str) -> complex:
    """``value`` as a finite complex number; ``TypeError`` if it is not a number, ``ValueError`` naming the argument
    if it is NaN or infinite."""
    try:
        number = complex(value)
    except Exception as err:
        raise TypeError(f"Argument '{name}' must be complex.") from err
    if not (math.isfinite(number.real) and math.isfinite(number.imag)):
        raise ValueError(f"Argument '{name}' must be a finite number (got {number}).")
    return number


def positive_float(
    value: Any, name: str, allow_zero: bool = False, finite: bool = False, error: type = TypeError
) -> float:
    """``value`` as a float; ``ValueError`` naming the argument and its range unless it is positive (or zero, if
    allowed), and finite if ``finite``."""
    number = as_float(value, name, error)
    bad = math.isnan(number) or number < 0.0 or (number == 0.0 and not allow_zero)
    if bad or (finite and math.isinf(number)):
        sign = "non-negative" if allow_zero else "positive"
        kind = f"a {sign} finite number" if finite else sign
        raise ValueError(f"Argument '{name}' must be {kind} (got {number}).")
    return number


def check_epsrel(value: Any, name: str = "epsrel", error: type = TypeError) -> float:
    """A relative truncation tolerance as a float in the open interval (0, 1); ``ValueError`` otherwise.

    An SVD truncated at ``epsrel >= 1`` would keep nothing but the largest singular value whatever the state: no
    run means that, so it is refused rather than silently computed.
    """
    number = as_float(value, name, error)
    if not 0.0 < number < 1.0:
        raise ValueError(f"Argument '{name}' must lie in the open interval (0, 1) (got {number}).")
    return number


def check_time_window(start_time: Any, end_time: Any, error: type = TypeError) -> tuple:
    """``(start_time, end_time)`` as finite floats with ``end_time >= start_time``; ``ValueError`` naming the
    argument otherwise (``error`` for values that are not numbers at all)."""
    start = finite_float(start_time, "start_time", error)
    end = finite_float(end_time, "end_time", error)
    if end < start:
        raise ValueError(f"Argument 'end_time' ({end}) must not be before 'start_time' ({start}).")
    return start, end


def first_nonfinite_step(*stacks: Any) -> Optional[int]:
    """The first index along axis 0 at which any of ``stacks`` (arrays of equal length) holds NaN or inf; None if
    all are finite, or if one is a JAX tracer (its values are unknown; ``np.asarray`` would fail)."""
    try:
        arrays = [np.asarray(stack) for stack in stacks]
    except Exception:
        return None
    bad = np.zeros(arrays[0].shape[0], dtype=bool) if arrays else np.zeros(0, dtype=bool)
    for array in arrays:
        bad = bad | ~np.isfinite(array).all(axis=tuple(range(1, array.ndim)))
    indices = np.flatnonzero(bad)
    return int(indices[0]) if indices.size else None
