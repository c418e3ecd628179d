"""Quadrature plumbing of the correlation integrals; runs on the host.

What :mod:`oqupy.bath_correlations` and :mod:`oqupy._spectral_integrals` share that is not physics: the
checks of integration and grid arguments, ``scipy.integrate.quad`` over the half line split at the cutoff,
the 2-D ``nquad`` of a user's correlation function, element-wise tabulation over arrays of times, and the
by-value cache.  The conventions are stated once, in :mod:`oqupy.bath_correlations`.  Everything here is
NumPy/SciPy in every generated package.
"""

import math
import warnings
from typing import Any, Callable, Dict, Hashable, NamedTuple, Tuple

import numpy as np
from scipy import integrate

from oqupy.config import NpDtypeReal
from oqupy.util import check_convert, check_true

__runs_on__ = "host"

ArrayLike = Any
"""A float or an array of floats (results follow the input: scalar in, scalar out)."""

CACHE_MAX_ENTRIES = 2**16
"""A cache is cleared when it grows beyond this many values."""

SHAPES = ("square", "upper-triangle", "rectangle")
"""The regions of ``correlation_2d_integral``."""


class IntegrationArgs(NamedTuple):
    """Checked accuracy arguments of one quadrature."""

    epsrel: float  # relative error tolerance (> 0)
    subdiv_limit: int  # maximal number of interval subdivisions (>= 1)


class TimeGrid(NamedTuple):
    """Checked TEMPO time grid."""

    dt: float  # time step (> 0, finite)
    dkmax: int  # largest step distance (>= 0)


def check_integration_args(epsrel: Any, subdiv_limit: Any) -> IntegrationArgs:
    """Convert ``epsrel`` (float > 0) and ``subdiv_limit`` (int >= 1); ``TypeError`` / ``ValueError``."""
    tmp_epsrel = check_convert(epsrel, float, "epsrel")
    check_true(tmp_epsrel > 0.0, f"Argument 'epsrel' must be positive (but is {tmp_epsrel}).")
    tmp_limit = check_convert(subdiv_limit, int, "subdiv_limit")
    check_true(tmp_limit >= 1, f"Argument 'subdiv_limit' must be at least 1 (but is {tmp_limit}).")
    return IntegrationArgs(tmp_epsrel, tmp_limit)


def check_grid_args(dt: Any, dkmax: Any) -> TimeGrid:
    """Convert ``dt`` (float > 0) and ``dkmax`` (integer >= 0); ``TypeError`` / ``ValueError``."""
    tmp_dt = check_convert(dt, float, "dt")
    check_true(
        tmp_dt > 0.0 and math.isfinite(tmp_dt),
        f"Argument 'dt' must be positive and finite (but is {tmp_dt}).",
    )
    tmp_dkmax = check_convert(dkmax, int, "dkmax")
    check_true(float(dkmax) == float(tmp_dkmax), f"Argument 'dkmax' must be an integer (but is {dkmax}).")
    check_true(tmp_dkmax >= 0, f"Argument 'dkmax' must be non-negative (but is {tmp_dkmax}).")
    return TimeGrid(tmp_dt, tmp_dkmax)


def check_tail_time(tail_time: Any) -> float:
    """Convert ``tail_time`` (float >= 0, may be inf)."""
    tmp_tail = check_convert(tail_time, float, "tail_time")
    check_true(tmp_tail >= 0.0, f"Argument 'tail_time' must be non-negative (but is {tmp_tail}).")
    return tmp_tail


def as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array; ``TypeError`` naming the argument otherwise."""
    try:
        return np.asarray(value, dtype=NpDtypeReal)
    except Exception as err:
        raise TypeError(f"Argument '{name}' must be a float or an array of floats.") from err


def tabulate(function: Callable[[float], Any], points: np.ndarray, dtype: Any) -> ArrayLike:
    """``function`` at every element of ``points``, as ``dtype``.

    Returns a Python scalar (float or complex) for a 0-d ``points``, else an array of its shape.
    """
    flat = points.ravel()
    values = np.empty(flat.shape, dtype=dtype)
    for index in range(flat.size):
        values[index] = function(float(flat[index]))
    if points.ndim == 0:
        return values[0].item()
    return values.reshape(points.shape)


def cached(cache: Dict[Hashable, Any], key: Hashable, compute: Callable[[], Any]) -> Any:
    """The value of ``compute()`` stored in ``cache`` under ``key`` (computed on a miss).

    An unhashable key is not cached; the cache is cleared once it holds ``CACHE_MAX_ENTRIES`` values.
    """
    try:
        return cache[key]
    except KeyError:
        pass
    except TypeError:
        return compute()
    value = compute()
    if len(cache) >= CACHE_MAX_ENTRIES:
        cache.clear()
    cache[key] = value
    return value


def quad_value(func: Callable[[float], float], lower: float, upper: float, args: IntegrationArgs) -> float:
    """``scipy.integrate.quad`` value of ``func`` over ``[lower, upper]``."""
    return integrate.quad(func, lower, upper, epsrel=args.epsrel, limit=args.subdiv_limit)[0]


def half_line_integral(
    integrand: Callable[[float], float], cutoff: float, hard_cutoff: bool, args: IntegrationArgs
) -> float:
    """Integral of ``integrand`` over ``[0, inf)`` split at ``cutoff`` (hard cutoff: ``[0, cutoff]`` only)."""
    value = quad_value(integrand, 0.0, cutoff, args)
    if not hard_cutoff:
        value += quad_value(integrand, cutoff, np.inf, args)
    return value


FREQUENCY_TAIL = 1e-16
"""The oscillatory integrals stop where the rest of their amplitude's integral is below this fraction of it."""

OSCILLATORY_EPSABS = 1e-14
"""Absolute tolerance of an oscillatory integral, as a fraction of the integral of its amplitude."""


def frequency_range(
    amplitude: Callable[[float], float], cutoff: float, hard_cutoff: bool, args: IntegrationArgs
) -> Tuple[float, float]:
    """``(upper, scale)``: where the half-line integral of ``amplitude >= 0`` may stop, and its value.

    ``upper`` is the cutoff for a hard cutoff, else the first ``2^m`` multiple of the cutoff beyond which
    the integral is below ``FREQUENCY_TAIL`` of the whole (at most ``2^14`` cutoffs).
    """
    scale = half_line_integral(amplitude, cutoff, hard_cutoff, args)
    if hard_cutoff:
        return cutoff, scale
    upper = 2.0 * cutoff
    while upper < 2.0**14 * cutoff and quad_value(amplitude, upper, np.inf, args) > FREQUENCY_TAIL * scale:
        upper *= 2.0
    return upper, scale


def oscillatory_integral(
    amplitude: Callable[[float], float],
    weight: str,
    frequency: float,
    bounds: Tuple[float, float, float],
    args: IntegrationArgs,
) -> float:
    r"""``int amplitude(w) weight(frequency w) dw`` over ``[0, upper]``, split at the cutoff (QUADPACK's QAWO).

    ``weight`` is ``'cos'`` or ``'sin'``; ``bounds`` is ``(cutoff, upper, scale)`` with ``upper`` and
    ``scale`` from :func:`frequency_range`.  The weight is integrated exactly on every subinterval, so
    the result keeps an absolute accuracy of ``OSCILLATORY_EPSABS * scale`` however many periods the
    interval holds (a plain ``quad`` of the product loses it).
    """
    cutoff, upper, scale = bounds
    options = {
        "weight": weight,
        "wvar": frequency,
        "epsabs": OSCILLATORY_EPSABS * scale,
        "epsrel": args.epsrel,
        "limit": args.subdiv_limit,
    }
    with warnings.catch_warnings():
        # QAWO reports round-off once its absolute tolerance is at the level of double precision
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value = integrate.quad(amplitude, 0.0, cutoff, **options)[0]
        if upper > cutoff:
            value += integrate.quad(amplitude, cutoff, upper, **options)[0]
    return float(value)


def correlation_2d_quadrature(
    correlation: Callable[[float], complex],
    delta: float,
    time_1: float,
    time_2: float,
    shape: str,
    args: IntegrationArgs,
) -> complex:
    r"""2-D integral of a correlation function by ``scipy.integrate.nquad`` (real and imaginary parts apart).

    The outer variable :math:`t'` runs over ``[time_1, time_2]``, the inner :math:`t''` over
    ``[0, t' - time_1]`` for ``shape='upper-triangle'`` and over ``[0, delta]`` otherwise; the integrand is
    ``correlation(t' - t'')`` (a scalar callable).
    """

    def real_part(inner: float, outer: float) -> float:
        return complex(correlation(outer - inner)).real

    def imag_part(inner: float, outer: float) -> float:
        return complex(correlation(outer - inner)).imag

    if shape == "upper-triangle":

        def inner_range(outer: float) -> Tuple[float, float]:
            return (0.0, outer - time_1)

    else:

        def inner_range(outer: float) -> Tuple[float, float]:
            return (0.0, delta)

    ranges = [inner_range, (time_1, time_2)]
    opts = {"epsrel": args.epsrel, "limit": args.subdiv_limit}
    re_part = integrate.nquad(real_part, ranges, opts=[opts, opts])[0]
    im_part = integrate.nquad(imag_part, ranges, opts=[opts, opts])[0]
    return complex(re_part, im_part)
