r"""The numerical machinery of spectral-density correlations; runs on the host.

Functions behind :class:`oqupy.bath_correlations.CustomSD` and ``PowerLawSD``: the cutoff functions,
the spectral density :math:`J(\omega) = j(\omega) X(\omega, \omega_c)` of a parameter snapshot, the
thermal factor, the integrands of :math:`\eta` and :math:`C` (real and imaginary time) and their
quadrature, the :math:`\beta`-periodic continuation of Matsubara values, the reorganisation energy, the
zero-frequency limit of :math:`J(\omega)\coth(\omega/2T)`, and the finite-difference stencils that turn
:math:`\eta` into the 2-D integrals of :math:`C`.  The physics conventions (formulas, signs, units) are
stated once, in :mod:`oqupy.bath_correlations`.  All functions are pure except the two cached ones.

All integrands are written in forms without cancellation or overflow (``tanh``/``expm1``; the cutoff is
tested first so that ``j`` is never evaluated where ``X`` vanishes).  Integrals use
``scipy.integrate.quad`` on real and imaginary parts separately, split at the cutoff into
:math:`[0, \omega_c]` and :math:`[\omega_c, \infty)` (hard cutoff: the first part only).  The cached
entry points (:func:`cached_value`, :func:`cached_reorganisation_energy`) store values by value in a
dict owned by the correlations object, keyed on its current public parameters.

Everything here is NumPy/SciPy (and ``math``) in every generated package.
"""

import math
from functools import partial
from typing import Any, Callable, Dict, Hashable, List, NamedTuple, Optional, Union

import numpy as np

from oqupy._quadrature import (
    IntegrationArgs,
    cached,
    frequency_range,
    half_line_integral,
    oscillatory_integral,
)
from oqupy.config import NpDtype

__runs_on__ = "host"

SMALL_PHASE = 1e-3
"""Below this |omega tau| the odd part sin(x) - x is evaluated by its Taylor series."""

LIMIT_PROBE = 1e-6
"""The zero-frequency limit is estimated at omega = LIMIT_PROBE * cutoff (and twice that)."""


def hard_cutoff(omega: float, omega_c: float) -> float:
    r"""Step cutoff :math:`\Theta(\omega_c - \omega)` (zero at :math:`\omega = \omega_c`)."""
    return 1.0 if omega < omega_c else 0.0


def exponential_cutoff(omega: float, omega_c: float) -> float:
    r"""Exponential cutoff :math:`e^{-\omega/\omega_c}`."""
    return math.exp(-omega / omega_c)


def gaussian_cutoff(omega: float, omega_c: float) -> float:
    r"""Gaussian cutoff :math:`e^{-(\omega/\omega_c)^2}`."""
    return math.exp(-((omega / omega_c) ** 2))


CUTOFF_DICT: Dict[str, Callable[[float, float], float]] = {
    "hard": hard_cutoff,
    "exponential": exponential_cutoff,
    "gaussian": gaussian_cutoff,
}
"""Cutoff functions ``X(omega, omega_c)`` by ``cutoff_type``."""


class SpectralDensity(NamedTuple):
    """A snapshot of the parameters of a spectral density and its bath temperature."""

    j_scalar: Callable[[float], float]  # the bare j(omega), a scalar callable
    cutoff: float  # omega_c > 0
    cutoff_type: str  # a key of CUTOFF_DICT
    temperature: float  # T >= 0


class MatsubaraPoint(NamedTuple):
    r"""Where a Matsubara value at a real :math:`\tau` is integrated, and how many periods lie beyond it."""

    rest: float  # in [0, beta]: where the integral is evaluated
    periods: int  # whole periods beta beyond rest (always 0 for the correlation)


class Stencil(NamedTuple):
    r"""A 2-D integral of :math:`C` as the weighted sum ``sum(weights[k] * eta(taus[k]))``."""

    taus: List[float]
    weights: List[float]


def sin_minus_x(x: float) -> float:
    """``sin(x) - x`` without cancellation for small ``|x|``."""
    if abs(x) < SMALL_PHASE:
        x2 = x * x
        return -x * x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0))
    return math.sin(x) - x


def spectral_density_function(density: SpectralDensity) -> Callable[[float], float]:
    r"""The spectral density :math:`J(\omega) = j(\omega) X(\omega, \omega_c)` as a scalar closure.

    ``j`` is not called where the cutoff :math:`X` vanishes.
    """
    j_scalar = density.j_scalar
    cutoff_function = CUTOFF_DICT[density.cutoff_type]
    omega_c = float(density.cutoff)

    def spectral_density(omega: float) -> float:
        factor = cutoff_function(omega, omega_c)
        if factor == 0.0:
            return 0.0
        return float(j_scalar(omega)) * factor

    return spectral_density


def probe_spectral_density(density: SpectralDensity) -> None:
    """``AssertionError`` unless ``J`` is a finite float at a few frequencies up to the cutoff; ``ValueError`` if it
    is negative there."""
    spectral_density = spectral_density_function(density)
    cutoff = density.cutoff
    for omega in (0.1 * cutoff, 0.5 * cutoff, (1.0 - 2**-20) * cutoff):
        try:
            value = float(spectral_density(omega))
        except Exception as err:
            raise AssertionError(
                f"Spectral density must be vectorizable and must return float (failed at omega={omega})."
            ) from err
        assert math.isfinite(value), f"Spectral density must return finite floats (J({omega}) = {value})."
        if value < 0.0:
            raise ValueError(
                f"Spectral density must be non-negative (J({omega}) = {value}): a bath's J(omega) >= 0 for "
                "omega > 0; couple with the opposite sign instead."
            )


def thermal_factor(temperature: float) -> Callable[[float], float]:
    r""":math:`\coth(\omega / 2T)` as a scalar closure (1 at T = 0), overflow-free."""
    temperature = float(temperature)
    if temperature == 0.0:
        return lambda omega: 1.0
    return lambda omega: 1.0 / math.tanh(0.5 * omega / temperature)


def spectral_integral(
    density: SpectralDensity, integrand: Callable[[float], float], args: IntegrationArgs
) -> float:
    """Integral of ``integrand`` over the frequencies of ``density`` (split at its cutoff)."""
    return half_line_integral(integrand, float(density.cutoff), density.cutoff_type == "hard", args)


def eta_value(
    density: SpectralDensity, tau: float, args: IntegrationArgs, matsubara: bool
) -> Union[float, complex]:
    r"""One value of :math:`\eta(\tau)`, or of :math:`\eta_M(\tau)` (real) if ``matsubara``, by quadrature.

    ``matsubara`` needs ``density.temperature > 0`` and is meant for :math:`0 \le \tau \le \beta` (outside,
    the integral diverges; see :func:`matsubara_point`).
    """
    if tau == 0.0:
        return 0.0 if matsubara else 0j
    spectral_density = spectral_density_function(density)
    if matsubara:
        beta = 1.0 / float(density.temperature)

        def integrand(omega: float) -> float:
            weight = spectral_density(omega)
            if weight == 0.0:
                return 0.0
            try:
                ratio = (
                    math.expm1(-omega * tau)
                    * math.expm1(-omega * (beta - tau))
                    / (-math.expm1(-omega * beta))
                )
            except OverflowError:  # tau outside [0, beta]: the integral diverges
                return math.inf
            return weight / omega**2 * (ratio - omega * tau)

        return spectral_integral(density, integrand, args)

    thermal = thermal_factor(density.temperature)

    def real_integrand(omega: float) -> float:
        weight = spectral_density(omega)
        if weight == 0.0:
            return 0.0
        return weight / omega**2 * thermal(omega) * 2.0 * math.sin(0.5 * omega * tau) ** 2

    def imag_integrand(omega: float) -> float:
        weight = spectral_density(omega)
        if weight == 0.0:
            return 0.0
        return weight / omega**2 * sin_minus_x(omega * tau)

    return complex(
        spectral_integral(density, real_integrand, args), spectral_integral(density, imag_integrand, args)
    )


def correlation_value(
    density: SpectralDensity, tau: float, args: IntegrationArgs, matsubara: bool
) -> Union[float, complex]:
    r"""One value of :math:`C(\tau)`, or of :math:`C_M(\tau)` (real) if ``matsubara``, by quadrature.

    As for :func:`eta_value`, ``matsubara`` needs T > 0 and :math:`0 \le \tau \le \beta`.
    """
    spectral_density = spectral_density_function(density)
    if matsubara:
        beta = 1.0 / float(density.temperature)

        def integrand(omega: float) -> float:
            weight = spectral_density(omega)
            if weight == 0.0:
                return 0.0
            try:
                ratio = (math.exp(-omega * tau) + math.exp(-omega * (beta - tau))) / (
                    -math.expm1(-omega * beta)
                )
            except OverflowError:  # tau outside [0, beta]: the integral diverges
                return math.inf
            return weight * ratio

        return spectral_integral(density, integrand, args)

    thermal = thermal_factor(density.temperature)

    def real_integrand(omega: float) -> float:
        weight = spectral_density(omega)
        if weight == 0.0:
            return 0.0
        return weight * thermal(omega) * math.cos(omega * tau)

    def imag_integrand(omega: float) -> float:
        weight = spectral_density(omega)
        if weight == 0.0:
            return 0.0
        return -weight * math.sin(omega * tau)

    return complex(
        spectral_integral(density, real_integrand, args), spectral_integral(density, imag_integrand, args)
    )


def square_influences(
    density: SpectralDensity, dt: float, lags: List[int], args: IntegrationArgs
) -> np.ndarray:
    r"""The square integrals of :math:`C` at step distances ``lags`` (each ``>= 1``), directly.

    The second difference :math:`\eta((k+1)\Delta) - 2\eta(k\Delta) + \eta((k-1)\Delta)` is, under the integral
    over :math:`J`, a single oscillation with a smooth amplitude:

    .. math::

        \eta_k = \int_0^\infty \frac{J(\omega)}{\omega^2} 4\sin^2\left(\frac{\omega\Delta}{2}\right)
                 \left[\coth\left(\frac{\omega}{2T}\right) \cos(\omega k\Delta)
                 - i \sin(\omega k\Delta)\right] \mathrm{d}\omega .

    Integrated with the oscillation as a QUADPACK weight (:func:`oqupy._quadrature.oscillatory_integral`), every
    :math:`\eta_k` has an absolute error near double precision relative to :math:`\eta_1`, at any lag.  The
    difference of :math:`\eta` values instead cancels the large, growing :math:`\eta(k\Delta)` and keeps
    their quadrature errors, which are not smooth in ``k``: at long memories and tight ``epsrel`` those
    errors, not the bath, set the bond dimension of TEMPO and PT-TEMPO (``docs/tempo.md``).
    """
    spectral_density = spectral_density_function(density)
    thermal = thermal_factor(density.temperature)
    cutoff, hard = float(density.cutoff), density.cutoff_type == "hard"

    def amplitude(omega: float, with_thermal: bool) -> float:
        if omega == 0.0:  # QAWO also samples the end points: the limit at 0 is probed just beside it
            omega = LIMIT_PROBE * cutoff
        weight = spectral_density(omega)
        if weight == 0.0:
            return 0.0
        half = math.sin(0.5 * omega * dt)
        value = weight / omega**2 * 4.0 * half * half
        return value * thermal(omega) if with_thermal else value

    def real_amplitude(omega: float) -> float:
        return amplitude(omega, True)

    def imag_amplitude(omega: float) -> float:
        return amplitude(omega, False)

    upper, real_scale = frequency_range(real_amplitude, cutoff, hard, args)
    imag_scale = half_line_integral(imag_amplitude, cutoff, hard, args)
    values = np.empty(len(lags), dtype=NpDtype)
    for index, lag in enumerate(lags):
        frequency = lag * dt
        real = oscillatory_integral(real_amplitude, "cos", frequency, (cutoff, upper, real_scale), args)
        imag = oscillatory_integral(imag_amplitude, "sin", frequency, (cutoff, upper, imag_scale), args)
        values[index] = complex(real, -imag)
    return values


VALUE_FUNCTIONS = {"eta": eta_value, "correlation": correlation_value}
"""The quadrature of one value, by quantity."""


def matsubara_point(quantity: str, tau: float, beta: float) -> MatsubaraPoint:
    r"""Where the Matsubara ``quantity`` (``'eta'`` or ``'correlation'``) at any real ``tau`` is integrated.

    :math:`C_M` is :math:`\beta`-periodic: ``rest = tau mod beta``, ``periods = 0``.  :math:`\eta_M` is
    even: ``|tau| = rest + periods * beta`` with ``0 <= rest <= beta``; see :func:`continue_matsubara_eta`.
    """
    if quantity == "eta":
        distance = abs(tau)
        periods = math.floor(distance / beta)
        rest = min(max(distance - periods * beta, 0.0), beta)
        return MatsubaraPoint(rest, periods)
    return MatsubaraPoint(tau % beta, 0)


def continue_matsubara_eta(value: float, point: MatsubaraPoint, beta: float, reorganisation: float) -> float:
    r""":math:`\eta_M(\tau)` from ``value`` :math:`= \eta_M(\mathrm{rest})` (see :func:`matsubara_point`).

    :math:`\eta_M(\tau) = \eta_M(r) - \lambda n (2r + n\beta)` for :math:`|\tau| = r + n\beta`: the double
    integral of the periodic :math:`-C_M`, using :math:`\eta_M(\beta) = -\lambda\beta` and
    :math:`\eta_M'(\beta) = -2\lambda` (``reorganisation`` is :math:`\lambda`).
    """
    return value - reorganisation * point.periods * (2.0 * point.rest + point.periods * beta)


def reorganisation_energy(density: SpectralDensity, args: IntegrationArgs) -> float:
    r"""Reorganisation energy :math:`\lambda = \int_0^\infty J(\omega)/\omega\, d\omega`."""
    spectral_density = spectral_density_function(density)

    def integrand(omega: float) -> float:
        weight = spectral_density(omega)
        return 0.0 if weight == 0.0 else weight / omega

    return spectral_integral(density, integrand, args)


def cached_reorganisation_energy(
    cache: Dict[Hashable, Any], params: Hashable, density: SpectralDensity, args: IntegrationArgs
) -> float:
    """:func:`reorganisation_energy`, cached in ``cache`` under the public parameters ``params``."""
    key = ("reorganisation", params, args.epsrel, args.subdiv_limit)
    return cached(cache, key, lambda: reorganisation_energy(density, args))


def cached_square_influences(
    cache: Dict[Hashable, Any],
    params: Hashable,
    density: SpectralDensity,
    dt: float,
    dkmax: int,
    args: IntegrationArgs,
) -> np.ndarray:
    """:func:`square_influences` of the lags ``1 ... dkmax``, each cached in ``cache`` (only missing ones computed)."""
    keys = [("square", params, dt, lag, args.epsrel, args.subdiv_limit) for lag in range(1, dkmax + 1)]
    missing = [lag for lag, key in zip(range(1, dkmax + 1), keys) if key not in cache]
    computed = dict(zip(missing, square_influences(density, dt, missing, args))) if missing else {}

    def compute(lag: int) -> complex:
        if lag in computed:
            return complex(computed[lag])
        return complex(square_influences(density, dt, [lag], args)[0])  # the cache was cleared meanwhile

    values = np.empty(dkmax, dtype=NpDtype)
    for index, key in enumerate(keys):
        values[index] = cached(cache, key, partial(compute, index + 1))
    return values


def cached_value(
    cache: Dict[Hashable, Any],
    params: Hashable,
    density: SpectralDensity,
    quantity: str,
    args: IntegrationArgs,
    matsubara: bool,
    tau: float,
) -> Union[float, complex]:
    """One value of ``quantity`` (``'eta'`` or ``'correlation'``) at ``tau``, cached in ``cache``.

    The key holds ``params``, the correlations' current public parameters (``density`` is their snapshot),
    so a changed parameter never returns a stale value.  Matsubara values (``density.temperature > 0``) at
    any real ``tau`` are integrals at :func:`matsubara_point`, continued by :func:`continue_matsubara_eta`.
    """
    compute = VALUE_FUNCTIONS[quantity]
    if not matsubara:
        key = (quantity, params, tau, args.epsrel, args.subdiv_limit, False)
        return cached(cache, key, lambda: compute(density, tau, args, False))
    beta = 1.0 / float(density.temperature)
    point = matsubara_point(quantity, tau, beta)
    key = (quantity, params, point.rest, args.epsrel, args.subdiv_limit, True)
    value = cached(cache, key, lambda: compute(density, point.rest, args, True))
    if point.periods > 0:
        reorganisation = cached_reorganisation_energy(cache, params, density, args)
        value = continue_matsubara_eta(value, point, beta, reorganisation)
    return value


def zero_frequency_limit(density: SpectralDensity) -> float:
    r"""Estimate of :math:`L = \lim_{\omega\to 0^+} J(\omega)\coth(\omega/2T)` for any ``j``.

    Linear extrapolation from :math:`\omega = h` and :math:`2h` with ``h = LIMIT_PROBE * cutoff``, clipped
    at 0.
    """
    spectral_density = spectral_density_function(density)
    thermal = thermal_factor(density.temperature)
    small = LIMIT_PROBE * float(density.cutoff)
    values = [spectral_density(h) * thermal(h) for h in (small, 2.0 * small)]
    return max(0.0, 2.0 * values[0] - values[1])


def power_law_zero_frequency_limit(alpha: float, zeta: float, cutoff: float, temperature: float) -> float:
    r"""Exact :math:`L = \lim_{\omega\to 0^+} J(\omega)\coth(\omega/2T)` of a power law.

    For :math:`J = 2\alpha\omega^\zeta\omega_c^{1-\zeta}X(\omega, \omega_c)` (``PowerLawSD``).

    At T = 0 :math:`J(\omega) \sim \omega^\zeta`; at T > 0 :math:`J\coth \sim 2T\omega^{\zeta-1}`: the limit
    is 0 for a positive power, the prefactor for power 0 and infinite (with the prefactor's sign) otherwise.
    """
    if alpha == 0.0:
        return 0.0
    if temperature == 0.0:
        power = zeta
        prefactor = 2.0 * alpha * cutoff ** (1.0 - zeta)
    else:
        power = zeta - 1.0
        prefactor = 4.0 * alpha * temperature * cutoff ** (1.0 - zeta)
    if power > 0.0:
        return 0.0
    if power == 0.0:
        return prefactor
    return math.copysign(math.inf, prefactor)


def eta_stencil(shape: str, delta: float, time_1: float, time_2: Optional[float]) -> Stencil:
    r"""The 2-D integral of :math:`C` over ``shape`` as a finite difference of :math:`\eta`.

    - ``'upper-triangle'``: :math:`\eta(t_1+\Delta) - \eta(t_1)`
    - ``'square'``: :math:`\eta(t_1+\Delta) - 2\eta(t_1) + \eta(t_1-\Delta)`
    - ``'rectangle'``: :math:`\eta(t_2) - \eta(t_1) - \eta(t_2-\Delta) + \eta(t_1-\Delta)`, with
      :math:`t_2 = t_1 + \Delta` if ``time_2`` is None.
    """
    if shape == "upper-triangle":
        return Stencil([time_1 + delta, time_1], [1.0, -1.0])
    if shape == "square":
        return Stencil([time_1 + delta, time_1, time_1 - delta], [1.0, -2.0, 1.0])
    end = time_1 + delta if time_2 is None else time_2
    return Stencil([end, time_1, end - delta, time_1 - delta], [1.0, -1.0, -1.0, 1.0])


def influence_stencil(etas: np.ndarray) -> np.ndarray:
    r"""TEMPO's coefficients from :math:`\eta(k\,dt)`, ``k = 0 ... dkmax + 1``: length ``dkmax + 1``.

    ``coefficients[0] = eta(dt) - eta(0)`` (upper triangle) and, for ``k >= 1``,
    ``coefficients[k] = eta((k+1)dt) - 2 eta(k dt) + eta((k-1)dt)`` (squares).
    """
    coefficients = np.empty(etas.shape[0] - 1, dtype=NpDtype)
    coefficients[0] = etas[1] - etas[0]
    coefficients[1:] = etas[2:] - 2.0 * etas[1:-1] + etas[:-2]
    return coefficients
