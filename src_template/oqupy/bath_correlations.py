r"""Environment auto-correlations: custom correlation functions and spectral densities.

Physics convention (hbar = k_B = 1).  The bath couples to the system through ``S (x) F``; its
auto-correlation function is

.. math::

    C(\tau) = \langle F(\tau) F(0) \rangle
            = \int_0^\infty J(\omega) \left[ \coth\left(\frac{\omega}{2T}\right) \cos(\omega\tau)
              - i \sin(\omega\tau) \right] \mathrm{d}\omega ,

with the spectral density :math:`J(\omega) = j(\omega) X(\omega, \omega_c)` (the cutoff :math:`X` is
always applied on top of the user's ``j_function``, OQuPy issue #46).  The twice-integrated
correlation (the "eta function") is

.. math::

    \eta(\tau) = \int_0^\tau \mathrm{d}t' \int_0^{t'} \mathrm{d}t'' C(t' - t'')
               = \int_0^\infty \frac{J(\omega)}{\omega^2} \left[ \coth\left(\frac{\omega}{2T}\right)
                 (1 - \cos\omega\tau) + i (\sin\omega\tau - \omega\tau) \right] \mathrm{d}\omega ,

so :math:`\eta(0) = 0`, :math:`\mathrm{Re}\,\eta \ge 0` is the dephasing exponent and
:math:`\mathrm{Im}\,\eta(\tau) \to -\lambda\tau + \mathrm{const}`, with the reorganisation energy
:math:`\lambda = \int_0^\infty J(\omega)/\omega \,\mathrm{d}\omega`.  The 2-D integrals of ``C``
used by TEMPO are finite differences of :math:`\eta` (square, upper-triangle and rectangle shapes).

Matsubara (imaginary-time) values, ``matsubara=True``, substitute :math:`\tau \to -i\tau` and return
the real part; they are defined only for :math:`T > 0` (``ValueError`` otherwise):

.. math::

    C_M(\tau) = \int_0^\infty J(\omega) \frac{e^{-\omega\tau} + e^{-\omega(\beta - \tau)}}{1 - e^{-\omega\beta}}
                \mathrm{d}\omega , \qquad
    \eta_M(\tau) = \int_0^\infty \frac{J(\omega)}{\omega^2} \left[
                   \frac{(1 - e^{-\omega\tau})(1 - e^{-\omega(\beta-\tau)})}{1 - e^{-\omega\beta}}
                   - \omega\tau \right] \mathrm{d}\omega ,

with :math:`\beta = 1/T`; note :math:`\eta_M'' = -C_M` and :math:`C_M(0) = C_M(\beta)`.  These integrals
are evaluated for :math:`0 \le \tau \le \beta` only; outside that interval (where they may diverge)
:math:`C_M` is continued :math:`\beta`-periodically (KMS) and :math:`\eta_M` as the double integral of the
periodic :math:`-C_M` (exactly, through :math:`\lambda`; see ``CustomSD._matsubara_value``).  Upstream
instead drops the :math:`e^{-\omega(\beta-\tau)}` term wherever :math:`e^{-\omega/T}` is below machine
epsilon, which perturbs values near :math:`\tau = \beta` and makes :math:`\tau > \beta` values arbitrary.

All integrands are written in forms without cancellation or overflow (``tanh``/``expm1``; the cutoff
is tested first so that ``j`` is never evaluated where ``X`` vanishes).  Integrals use
``scipy.integrate.quad`` on real and imaginary parts separately, split at the cutoff into
:math:`[0, \omega_c]` and :math:`[\omega_c, \infty)` (hard cutoff: the first part only).

Values are cached per instance in a dict keyed by value: the quantity, ``tau``, ``epsrel``,
``subdiv_limit``, ``matsubara`` *and* the current public parameters (``j_function`` identity,
``cutoff``, ``cutoff_type``, ``temperature``, and ``alpha``, ``zeta`` for ``PowerLawSD``).  Changing a
public attribute therefore never returns stale values (unlike upstream's ``lru_cache``).  A
``j_function`` that reads outside mutable state is not tracked: replace the attribute instead.

Everything here runs on the host with NumPy/SciPy in every generated package (``@host``).
"""

import math
from functools import partial
from typing import Any, Callable, Dict, Hashable, Optional, Tuple, Union

import numpy as np
from scipy import integrate

from oqupy.base_api import BaseAPIClass
from oqupy.config import INTEGRATE_EPSREL, SUBDIV_LIMIT, NpDtype, NpDtypeReal
from oqupy.util import check_convert, check_true

__runs_on__ = "host"

ArrayLike = Any  # a float or an array of floats (results follow the input: scalar in, scalar out)

_CACHE_MAX_ENTRIES = 2**16
"""The per-instance cache is cleared when it grows beyond this many values."""

_SHAPES = ("square", "upper-triangle", "rectangle")

_SMALL_PHASE = 1e-3
"""Below this |omega tau| the odd part sin(x) - x is evaluated by its Taylor series."""

_LIMIT_PROBE = 1e-6
"""CustomSD estimates lim_{w->0} J(w) coth(w/2T) at w = _LIMIT_PROBE * cutoff (and twice that)."""


# -- helpers --------------------------------------------------------------------


def _sin_minus_x(x: float) -> float:
    """``sin(x) - x`` without cancellation for small ``|x|``."""
    if abs(x) < _SMALL_PHASE:
        x2 = x * x
        return -x * x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0))
    return math.sin(x) - x


def _quad(func: Callable[[float], float], lower: float, upper: float, epsrel: float, limit: int) -> float:
    """``scipy.integrate.quad`` value of ``func`` over ``[lower, upper]``."""
    return integrate.quad(func, lower, upper, epsrel=epsrel, limit=limit)[0]


def _check_integration_args(epsrel: Any, subdiv_limit: Any) -> Tuple[float, int]:
    """Convert ``epsrel`` (float > 0) and ``subdiv_limit`` (int >= 1)."""
    tmp_epsrel = check_convert(epsrel, float, "epsrel")
    check_true(tmp_epsrel > 0.0, f"Argument 'epsrel' must be positive (but is {tmp_epsrel}).")
    tmp_limit = check_convert(subdiv_limit, int, "subdiv_limit")
    check_true(tmp_limit >= 1, f"Argument 'subdiv_limit' must be at least 1 (but is {tmp_limit}).")
    return tmp_epsrel, tmp_limit


def _check_grid_args(dt: Any, dkmax: Any) -> Tuple[float, int]:
    """Convert ``dt`` (float > 0) and ``dkmax`` (integer >= 0)."""
    tmp_dt = check_convert(dt, float, "dt")
    check_true(
        tmp_dt > 0.0 and math.isfinite(tmp_dt),
        f"Argument 'dt' must be positive and finite (but is {tmp_dt}).",
    )
    tmp_dkmax = check_convert(dkmax, int, "dkmax")
    check_true(float(dkmax) == float(tmp_dkmax), f"Argument 'dkmax' must be an integer (but is {dkmax}).")
    check_true(tmp_dkmax >= 0, f"Argument 'dkmax' must be non-negative (but is {tmp_dkmax}).")
    return tmp_dt, tmp_dkmax


def _as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array; ``TypeError`` naming the argument otherwise."""
    try:
        return np.asarray(value, dtype=NpDtypeReal)
    except Exception as err:
        raise TypeError(f"Argument '{name}' must be a float or an array of floats.") from err


# -- base class -------------------------------------------------------------------


class BaseCorrelations(BaseAPIClass):
    """Base class of environment auto-correlations (abstract).

    Subclasses implement ``correlation`` and ``correlation_2d_integral``; the helpers
    ``influence_coefficients`` and ``tail_coefficient`` build on them.

    Parameters
    ----------
    name: str
        An optional name for the correlations.
    description: str
        An optional description of the correlations.
    """

    def __init__(self, name: Optional[str] = None, description: Optional[str] = None) -> None:
        self._cache: Dict[Hashable, Any] = {}
        super().__init__(name, description)

    # -- abstract API ----------------------------------------------------------

    def correlation(
        self,
        tau: ArrayLike,
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
    ) -> ArrayLike:
        r"""Auto-correlation function :math:`C(\tau) = \langle F(t) F(t-\tau) \rangle`.

        Parameters
        ----------
        tau: float or np.ndarray
            Time difference(s).
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions of the integration.

        Returns
        -------
        correlation: complex or np.ndarray
            :math:`C(\tau)`.
        """
        raise NotImplementedError(f"{type(self).__name__} has no correlation implementation.")

    def correlation_2d_integral(
        self,
        delta: float,
        time_1: float,
        time_2: Optional[float] = None,
        shape: Optional[str] = "square",
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
    ) -> complex:
        r"""2-D integral of the correlation function over a region of ``(t', t'')``.

        - ``'square'``: :math:`\int_{t_1}^{t_1+\Delta} \mathrm{d}t' \int_0^\Delta \mathrm{d}t'' C(t'-t'')`
        - ``'upper-triangle'``: :math:`\int_{t_1}^{t_1+\Delta} \mathrm{d}t' \int_0^{t'-t_1} \mathrm{d}t'' C(t'-t'')`
        - ``'rectangle'``: :math:`\int_{t_1}^{t_2} \mathrm{d}t' \int_0^\Delta \mathrm{d}t'' C(t'-t'')`

        Parameters
        ----------
        delta: float
            Length :math:`\Delta` of the integration intervals.
        time_1: float
            Lower bound :math:`t_1` of the :math:`t'` interval.
        time_2: float
            Upper bound :math:`t_2` of the :math:`t'` interval (``'rectangle'`` only).
        shape: str
            ``'square'`` (default), ``'upper-triangle'`` or ``'rectangle'``.
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions of the integration.

        Returns
        -------
        integral: complex
            The value of the 2-D integral.
        """
        raise NotImplementedError(f"{type(self).__name__} has no correlation_2d_integral implementation.")

    # -- TEMPO helpers ---------------------------------------------------------

    def influence_coefficients(
        self,
        dt: float,
        dkmax: int,
        epsrel: float = INTEGRATE_EPSREL,
        subdiv_limit: int = SUBDIV_LIMIT,
        matsubara: bool = False,
    ) -> np.ndarray:
        r"""The 2-D correlation integrals of all TEMPO step distances ``0 ... dkmax``.

        ``eta[0]`` is the upper-triangle integral with ``time_1 = 0``, ``delta = dt`` and ``eta[k]``
        (``k >= 1``) the square integral with ``time_1 = k dt``, ``delta = dt`` (``algorithms.md`` §5).
        This generic version calls ``correlation_2d_integral`` once per ``k``; ``CustomSD`` computes
        all of them from one vector of :math:`\eta` values.

        Parameters
        ----------
        dt: float
            Time step (> 0).
        dkmax: int
            Largest step distance (>= 0).
        epsrel: float
            Relative error tolerance of the integration (default ``INTEGRATE_EPSREL``).
        subdiv_limit: int
            Maximal number of interval subdivisions (default ``SUBDIV_LIMIT``).
        matsubara: bool
            Imaginary-time coefficients (only where the subclass supports them).

        Returns
        -------
        eta: np.ndarray
            complex128 array of length ``dkmax + 1``.
        """
        tmp_dt, tmp_dkmax = _check_grid_args(dt, dkmax)
        kwargs = self._matsubara_kwargs(matsubara)
        eta = np.empty(tmp_dkmax + 1, dtype=NpDtype)
        eta[0] = self.correlation_2d_integral(
            delta=tmp_dt,
            time_1=0.0,
            shape="upper-triangle",
            epsrel=epsrel,
            subdiv_limit=subdiv_limit,
            **kwargs,
        )
        for k in range(1, tmp_dkmax + 1):
            eta[k] = self.correlation_2d_integral(
                delta=tmp_dt,
                time_1=float(k) * tmp_dt,
                shape="square",
                epsrel=epsrel,
                subdiv_limit=subdiv_limit,
                **kwargs,
            )
        return eta

    def tail_coefficient(
        self,
        dt: float,
        dkmax: int,
        tail_time: float,
        epsrel: float = INTEGRATE_EPSREL,
        subdiv_limit: int = SUBDIV_LIMIT,
        matsubara: bool = False,
    ) -> complex:
        r"""Rectangle integral of the memory tail beyond ``dkmax`` steps.

        Equal to ``correlation_2d_integral(delta=dt, time_1=dkmax*dt, time_2=dkmax*dt + tail_time,
        shape='rectangle')``.  ``tail_time = 0`` gives 0.

        Parameters
        ----------
        dt: float
            Time step (> 0).
        dkmax: int
            Memory length in steps (>= 0).
        tail_time: float
            Length of the tail (>= 0; ``np.inf`` where the subclass supports it).
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions.
        matsubara: bool
            Imaginary-time coefficient (only where the subclass supports it).

        Returns
        -------
        integral: complex
            The rectangle integral.
        """
        tmp_dt, tmp_dkmax = _check_grid_args(dt, dkmax)
        tmp_tail = self._check_tail_time(tail_time)
        kwargs = self._matsubara_kwargs(matsubara)
        time_1 = float(tmp_dkmax) * tmp_dt
        return complex(
            self.correlation_2d_integral(
                delta=tmp_dt,
                time_1=time_1,
                time_2=time_1 + tmp_tail,
                shape="rectangle",
                epsrel=epsrel,
                subdiv_limit=subdiv_limit,
                **kwargs,
            )
        )

    # -- internals ---------------------------------------------------------------

    def _matsubara_kwargs(self, matsubara: bool) -> dict:
        """Keyword arguments passing ``matsubara`` on (refused where unsupported)."""
        if not matsubara:
            return {}
        raise NotImplementedError(f"{type(self).__name__} has no Matsubara (imaginary-time) correlations.")

    @staticmethod
    def _check_tail_time(tail_time: Any) -> float:
        """Convert ``tail_time`` (float >= 0, may be inf)."""
        tmp_tail = check_convert(tail_time, float, "tail_time")
        check_true(tmp_tail >= 0.0, f"Argument 'tail_time' must be non-negative (but is {tmp_tail}).")
        return tmp_tail

    def _cached(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """Value of ``compute()`` cached under ``key`` (uncached if the key is unhashable)."""
        cache = self.__dict__.setdefault("_cache", {})
        try:
            return cache[key]
        except KeyError:
            pass
        except TypeError:
            return compute()
        value = compute()
        if len(cache) >= _CACHE_MAX_ENTRIES:
            cache.clear()
        cache[key] = value
        return value


# -- custom correlation function --------------------------------------------------------


class CustomCorrelations(BaseCorrelations):
    r"""A user-supplied auto-correlation function :math:`C(\tau)`.

    The 2-D integrals are computed by adaptive 2-D quadrature (``scipy.integrate.nquad``, real and
    imaginary parts separately), so they are slow; they are cached by value.

    Parameters
    ----------
    correlation_function: callable
        :math:`C(\tau)` for a float :math:`\tau`, returning a (complex) number; it is wrapped in
        ``np.vectorize``.
    name: str
        An optional name for the correlations.
    description: str
        An optional description of the correlations.
    """

    def __init__(
        self,
        correlation_function: Callable[[float], complex],
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        try:
            tmp_function = np.vectorize(correlation_function)
            probe = complex(tmp_function(1.0))
        except Exception as err:
            raise AssertionError("Correlation function must be vectorizable and must return float.") from err
        assert np.isfinite(probe), f"Correlation function must return finite values (C(1.0) = {probe})."
        self.correlation_function = tmp_function

    def correlation(
        self, tau: ArrayLike, epsrel: Optional[float] = None, subdiv_limit: Optional[int] = None
    ) -> ArrayLike:
        r"""The correlation function :math:`C(\tau)` (``epsrel`` and ``subdiv_limit`` are ignored).

        Parameters
        ----------
        tau: float or np.ndarray
            Time difference(s).

        Returns
        -------
        correlation: np.ndarray
            :math:`C(\tau)`, same shape as ``tau``.
        """
        del epsrel, subdiv_limit
        return self.correlation_function(tau)

    def correlation_2d_integral(
        self,
        delta: float,
        time_1: float,
        time_2: Optional[float] = None,
        shape: Optional[str] = "square",
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
    ) -> complex:
        r"""2-D integral of :math:`C` by 2-D quadrature (see ``BaseCorrelations``).

        ``time_2`` may only be given with ``shape='rectangle'`` (``AssertionError``); a rectangle
        without ``time_2`` ends at ``time_1 + delta``.  ``time_2 = inf`` is allowed for a decaying
        :math:`C`.  An unknown shape raises ``NotImplementedError``.
        """
        if shape not in _SHAPES:
            raise NotImplementedError(f"Shape '{shape}' not implemented.")
        tmp_delta = check_convert(delta, float, "delta")
        tmp_time_1 = check_convert(time_1, float, "time_1")
        if time_2 is None:
            tmp_time_2 = tmp_time_1 + tmp_delta
        else:
            assert shape == "rectangle", "Argument 'time_2' can only be used with shape='rectangle'."
            tmp_time_2 = check_convert(time_2, float, "time_2")
        tmp_epsrel, tmp_limit = _check_integration_args(epsrel, subdiv_limit)
        key = (
            "2d",
            self.correlation_function,
            tmp_delta,
            tmp_time_1,
            tmp_time_2,
            shape,
            tmp_epsrel,
            tmp_limit,
        )
        return self._cached(
            key, lambda: self._integrate_2d(tmp_delta, tmp_time_1, tmp_time_2, shape, tmp_epsrel, tmp_limit)
        )

    def _integrate_2d(
        self, delta: float, time_1: float, time_2: float, shape: str, epsrel: float, limit: int
    ) -> complex:
        """Real and imaginary parts of the 2-D integral by ``nquad`` (inner variable ``t''``)."""
        raw = getattr(self.correlation_function, "pyfunc", self.correlation_function)

        def real_part(inner: float, outer: float) -> float:
            return complex(raw(outer - inner)).real

        def imag_part(inner: float, outer: float) -> float:
            return complex(raw(outer - inner)).imag

        if shape == "upper-triangle":

            def inner_range(outer: float) -> Tuple[float, float]:
                return (0.0, outer - time_1)

        else:

            def inner_range(outer: float) -> Tuple[float, float]:
                return (0.0, delta)

        ranges = [inner_range, (time_1, time_2)]
        opts = {"epsrel": epsrel, "limit": limit}
        re_part = integrate.nquad(real_part, ranges, opts=[opts, opts])[0]
        im_part = integrate.nquad(imag_part, ranges, opts=[opts, opts])[0]
        return complex(re_part, im_part)


# -- spectral densities -----------------------------------------------------------------


def _hard_cutoff(omega: float, omega_c: float) -> float:
    """Step cutoff :math:`\\Theta(\\omega_c - \\omega)` (zero at :math:`\\omega = \\omega_c`)."""
    return 1.0 if omega < omega_c else 0.0


def _exponential_cutoff(omega: float, omega_c: float) -> float:
    """Exponential cutoff :math:`e^{-\\omega/\\omega_c}`."""
    return math.exp(-omega / omega_c)


def _gaussian_cutoff(omega: float, omega_c: float) -> float:
    """Gaussian cutoff :math:`e^{-(\\omega/\\omega_c)^2}`."""
    return math.exp(-((omega / omega_c) ** 2))


CUTOFF_DICT = {
    "hard": _hard_cutoff,
    "exponential": _exponential_cutoff,
    "gaussian": _gaussian_cutoff,
}
"""Cutoff functions ``X(omega, omega_c)`` by ``cutoff_type``."""


class CustomSD(BaseCorrelations):
    r"""Correlations of a thermal bath with spectral density :math:`J(\omega) = j(\omega) X(\omega, \omega_c)`.

    Cutoff types :math:`X`: ``'hard'`` :math:`\Theta(\omega_c - \omega)`, ``'exponential'``
    :math:`e^{-\omega/\omega_c}`, ``'gaussian'`` :math:`e^{-(\omega/\omega_c)^2}`.  The cutoff is always
    applied on top of ``j_function``; for no extra cutoff use ``'hard'`` with a large ``cutoff``.

    ``j_function``, ``cutoff``, ``cutoff_type`` and ``temperature`` are plain writable attributes; the
    caches are keyed on their current values (see the module docstring).

    Parameters
    ----------
    j_function: callable
        :math:`j(\omega)` for a float :math:`\omega`, returning a float (wrapped in ``np.vectorize``).
    cutoff: float
        The cutoff frequency :math:`\omega_c` (> 0).
    cutoff_type: str
        ``'hard'``, ``'exponential'`` (default) or ``'gaussian'``.
    temperature: float
        The bath temperature :math:`T \ge 0` (default 0).
    name: str
        An optional name for the correlations.
    description: str
        An optional description of the correlations.
    """

    def __init__(
        self,
        j_function: Callable[[float], float],
        cutoff: float,
        cutoff_type: Optional[str] = "exponential",
        temperature: float = 0.0,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        try:
            tmp_j_function = np.vectorize(j_function)
            probe = float(tmp_j_function(1.0))
        except Exception as err:
            raise AssertionError("Spectral density must be vectorizable and must return float.") from err
        assert math.isfinite(probe), (
            f"Spectral density must return finite floats (j_function(1.0) = {probe})."
        )
        self.j_function = tmp_j_function

        try:
            tmp_cutoff = float(cutoff)
        except Exception as err:
            raise AssertionError("Cutoff must be a float.") from err
        assert tmp_cutoff > 0.0, f"Cutoff must be positive (but is {tmp_cutoff})."
        self.cutoff = tmp_cutoff

        assert cutoff_type in CUTOFF_DICT, (
            f"Cutoff type must be one of: {list(CUTOFF_DICT)} (but is {cutoff_type!r})."
        )
        self.cutoff_type = cutoff_type

        try:
            tmp_temperature = float(temperature)
        except Exception as err:
            raise AssertionError("Temperature must be a float.") from err
        check_true(
            tmp_temperature >= 0.0 and math.isfinite(tmp_temperature),
            f"Temperature must be >= 0.0 and finite (but is {tmp_temperature}).",
        )
        self.temperature = tmp_temperature

        self._probe_spectral_density()

    def _str_items(self) -> list:
        return [("cutoff", self.cutoff), ("cutoff_type", self.cutoff_type), ("temperature", self.temperature)]

    # -- spectral density ----------------------------------------------------------

    def _j_scalar(self) -> Callable[[float], float]:
        """The bare ``j`` as a scalar callable (the function inside the ``np.vectorize`` wrapper)."""
        return getattr(self.j_function, "pyfunc", self.j_function)

    def _parameter_key(self) -> tuple:
        """The current public parameters, for cache keys."""
        return (type(self).__name__, self.j_function, self.cutoff, self.cutoff_type, self.temperature)

    def _scalar_spectral_density(self) -> Callable[[float], float]:
        """``J`` as a fast scalar closure over a snapshot of the current parameters."""
        j_scalar = self._j_scalar()
        cutoff_function = CUTOFF_DICT[self.cutoff_type]
        omega_c = float(self.cutoff)

        def spectral_density(omega: float) -> float:
            factor = cutoff_function(omega, omega_c)
            if factor == 0.0:
                return 0.0
            return float(j_scalar(omega)) * factor

        return spectral_density

    def _probe_spectral_density(self) -> None:
        """Assert that ``J`` is a finite float at a few frequencies up to the cutoff."""
        spectral_density = self._scalar_spectral_density()
        for omega in (0.1 * self.cutoff, 0.5 * self.cutoff, (1.0 - 2**-20) * self.cutoff):
            try:
                value = float(spectral_density(omega))
            except Exception as err:
                raise AssertionError(
                    f"Spectral density must be vectorizable and must return float (failed at omega={omega})."
                ) from err
            assert math.isfinite(value), f"Spectral density must return finite floats (J({omega}) = {value})."

    def spectral_density(self, omega: ArrayLike) -> ArrayLike:
        r"""The spectral density :math:`J(\omega)` including the cutoff.

        Parameters
        ----------
        omega: float or np.ndarray
            Frequency (frequencies).

        Returns
        -------
        spectral_density: float or np.ndarray
            :math:`J(\omega)`, same shape as ``omega``.
        """
        spectral_density = self._scalar_spectral_density()
        omegas = _as_real_array(omega, "omega")
        values = np.array([spectral_density(float(w)) for w in omegas.ravel()], dtype=NpDtypeReal)
        if omegas.ndim == 0:
            return float(values[0])
        return values.reshape(omegas.shape)

    # -- integrals -----------------------------------------------------------------

    def _integrate(self, integrand: Callable[[float], float], epsrel: float, limit: int) -> float:
        """Integral over ``[0, inf)`` split at the cutoff (hard cutoff: ``[0, cutoff]`` only)."""
        omega_c = float(self.cutoff)
        value = _quad(integrand, 0.0, omega_c, epsrel, limit)
        if self.cutoff_type != "hard":
            value += _quad(integrand, omega_c, np.inf, epsrel, limit)
        return value

    def _thermal_factor(self) -> Callable[[float], float]:
        r""":math:`\coth(\omega / 2T)` (1 at T = 0), overflow-free."""
        temperature = float(self.temperature)
        if temperature == 0.0:
            return lambda omega: 1.0
        return lambda omega: 1.0 / math.tanh(0.5 * omega / temperature)

    def _check_matsubara(self, matsubara: bool) -> bool:
        """``bool(matsubara)``; ``ValueError`` for Matsubara values at T = 0."""
        tmp = bool(matsubara)
        if tmp:
            check_true(self.temperature > 0.0, "Matsubara correlations are only defined for temperature > 0.")
        return tmp

    def _compute_eta(self, tau: float, epsrel: float, limit: int, matsubara: bool) -> Union[float, complex]:
        """One value of :math:`\\eta(\\tau)` (or :math:`\\eta_M(\\tau)`) by quadrature."""
        if tau == 0.0:
            return 0.0 if matsubara else 0j
        spectral_density = self._scalar_spectral_density()
        if matsubara:
            beta = 1.0 / float(self.temperature)

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

            return self._integrate(integrand, epsrel, limit)

        thermal = self._thermal_factor()

        def real_integrand(omega: float) -> float:
            weight = spectral_density(omega)
            if weight == 0.0:
                return 0.0
            return weight / omega**2 * thermal(omega) * 2.0 * math.sin(0.5 * omega * tau) ** 2

        def imag_integrand(omega: float) -> float:
            weight = spectral_density(omega)
            if weight == 0.0:
                return 0.0
            return weight / omega**2 * _sin_minus_x(omega * tau)

        return complex(
            self._integrate(real_integrand, epsrel, limit), self._integrate(imag_integrand, epsrel, limit)
        )

    def _compute_correlation(
        self, tau: float, epsrel: float, limit: int, matsubara: bool
    ) -> Union[float, complex]:
        """One value of :math:`C(\\tau)` (or :math:`C_M(\\tau)`) by quadrature."""
        spectral_density = self._scalar_spectral_density()
        if matsubara:
            beta = 1.0 / float(self.temperature)

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

            return self._integrate(integrand, epsrel, limit)

        thermal = self._thermal_factor()

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
            self._integrate(real_integrand, epsrel, limit), self._integrate(imag_integrand, epsrel, limit)
        )

    def _evaluate(
        self, quantity: str, tau: ArrayLike, epsrel: Any, subdiv_limit: Any, matsubara: Any
    ) -> ArrayLike:
        """Cached, element-wise evaluation of ``'eta'`` or ``'correlation'`` over ``tau``."""
        tmp_matsubara = self._check_matsubara(bool(matsubara))
        tmp_epsrel, tmp_limit = _check_integration_args(epsrel, subdiv_limit)
        taus = _as_real_array(tau, "tau")
        compute: Callable[[float, float, int, bool], Any] = (
            self._compute_eta if quantity == "eta" else self._compute_correlation
        )
        params = self._parameter_key()
        flat = taus.ravel()
        values = np.empty(flat.shape, dtype=NpDtypeReal if tmp_matsubara else NpDtype)
        for index in range(flat.size):
            t = float(flat[index])
            if tmp_matsubara:
                values[index] = self._matsubara_value(quantity, t, tmp_epsrel, tmp_limit, params)
            else:
                key = (quantity, params, t, tmp_epsrel, tmp_limit, False)
                values[index] = self._cached(key, partial(compute, t, tmp_epsrel, tmp_limit, False))
        if taus.ndim == 0:
            return float(values[0]) if tmp_matsubara else complex(values[0])
        return values.reshape(taus.shape)

    def _matsubara_value(self, quantity: str, tau: float, epsrel: float, limit: int, params: tuple) -> float:
        r"""Matsubara value at any real ``tau``: the integral on ``[0, beta]``, continued periodically.

        :math:`C_M(\tau) = C_M(\tau \bmod \beta)`; :math:`\eta_M` is even and, for
        :math:`|\tau| = r + n\beta` with :math:`0 \le r < \beta`,
        :math:`\eta_M(\tau) = \eta_M(r) - \lambda n (2r + n\beta)` (the double integral of the
        periodic :math:`-C_M`; uses :math:`\eta_M(\beta) = -\lambda\beta`, :math:`\eta_M'(\beta) = -2\lambda`).
        """
        beta = 1.0 / float(self.temperature)
        if quantity == "eta":
            distance = abs(tau)
            periods = math.floor(distance / beta)
            rest = min(max(distance - periods * beta, 0.0), beta)
        else:
            periods = 0
            rest = tau % beta
        compute: Callable[[float, float, int, bool], Any] = (
            self._compute_eta if quantity == "eta" else self._compute_correlation
        )
        key = (quantity, params, rest, epsrel, limit, True)
        value = self._cached(key, lambda: compute(rest, epsrel, limit, True))
        if periods > 0:
            value = value - self._reorganisation_energy(epsrel, limit) * periods * (
                2.0 * rest + periods * beta
            )
        return value

    def correlation(
        self,
        tau: ArrayLike,
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
        matsubara: Optional[bool] = False,
    ) -> ArrayLike:
        r"""Auto-correlation function :math:`C(\tau)` of the spectral density at temperature :math:`T`.

        .. math::

            C(\tau) = \int_0^\infty J(\omega) \left[ \coth\left(\frac{\omega}{2T}\right) \cos(\omega\tau)
                      - i \sin(\omega\tau) \right] \mathrm{d}\omega

        Parameters
        ----------
        tau: float or np.ndarray
            Time difference(s).
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions.
        matsubara: bool
            If True, the real imaginary-time correlation :math:`C_M(\tau)` (requires T > 0).

        Returns
        -------
        correlation: complex, float or np.ndarray
            A Python scalar for scalar ``tau`` (float if ``matsubara``), else an array of ``tau``'s shape.
        """
        return self._evaluate("correlation", tau, epsrel, subdiv_limit, matsubara)

    def eta_function(
        self,
        tau: ArrayLike,
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
        matsubara: Optional[bool] = False,
    ) -> ArrayLike:
        r"""The twice-integrated correlation :math:`\eta(\tau) = \int_0^\tau \int_0^{t'} C(t'-t'')`.

        .. math::

            \eta(\tau) = \int_0^\infty \frac{J(\omega)}{\omega^2} \left[ \coth\left(\frac{\omega}{2T}\right)
                         (1 - \cos\omega\tau) + i (\sin\omega\tau - \omega\tau) \right] \mathrm{d}\omega

        Parameters
        ----------
        tau: float or np.ndarray
            Time(s).
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions.
        matsubara: bool
            If True, :math:`\eta_M(\tau) = \mathrm{Re}\,\eta(-i\tau)` (requires T > 0).

        Returns
        -------
        eta: complex, float or np.ndarray
            A Python scalar for scalar ``tau`` (float if ``matsubara``), else an array of ``tau``'s shape.
        """
        return self._evaluate("eta", tau, epsrel, subdiv_limit, matsubara)

    def correlation_2d_integral(
        self,
        delta: float,
        time_1: float,
        time_2: Optional[float] = None,
        shape: Optional[str] = "square",
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
        matsubara: Optional[bool] = False,
    ) -> Union[float, complex]:
        r"""2-D integrals of :math:`C` as finite differences of :math:`\eta` (see ``BaseCorrelations``).

        - upper-triangle: :math:`\eta(t_1+\Delta) - \eta(t_1)`
        - square: :math:`\eta(t_1+\Delta) - 2\eta(t_1) + \eta(t_1-\Delta)`
        - rectangle: :math:`\eta(t_2) - \eta(t_1) - \eta(t_2-\Delta) + \eta(t_1-\Delta)`

        As upstream, ``time_2`` is used only by ``'rectangle'`` (a rectangle without ``time_2`` ends at
        ``time_1 + delta``).  An unknown shape raises ``NotImplementedError``; ``matsubara`` at T = 0
        raises ``ValueError``.  With ``matsubara`` the (real) result is a float.
        """
        if shape not in _SHAPES:
            raise NotImplementedError(f"Shape '{shape}' not implemented.")
        tmp_matsubara = self._check_matsubara(bool(matsubara))
        tmp_delta = check_convert(delta, float, "delta")
        tmp_time_1 = check_convert(time_1, float, "time_1")
        if shape == "upper-triangle":
            taus = [tmp_time_1 + tmp_delta, tmp_time_1]
            weights = [1.0, -1.0]
        elif shape == "square":
            taus = [tmp_time_1 + tmp_delta, tmp_time_1, tmp_time_1 - tmp_delta]
            weights = [1.0, -2.0, 1.0]
        else:
            tmp_time_2 = tmp_time_1 + tmp_delta if time_2 is None else check_convert(time_2, float, "time_2")
            taus = [tmp_time_2, tmp_time_1, tmp_time_2 - tmp_delta, tmp_time_1 - tmp_delta]
            weights = [1.0, -1.0, -1.0, 1.0]
        etas = self.eta_function(
            np.array(taus), epsrel=epsrel, subdiv_limit=subdiv_limit, matsubara=tmp_matsubara
        )
        integral = sum(weight * eta for weight, eta in zip(weights, etas.tolist(), strict=True))
        if tmp_matsubara:
            return float(np.real(integral))
        return complex(integral)

    # -- TEMPO helpers -------------------------------------------------------------------

    def _matsubara_kwargs(self, matsubara: bool) -> dict:
        return {"matsubara": self._check_matsubara(matsubara)}

    def influence_coefficients(
        self,
        dt: float,
        dkmax: int,
        epsrel: float = INTEGRATE_EPSREL,
        subdiv_limit: int = SUBDIV_LIMIT,
        matsubara: bool = False,
    ) -> np.ndarray:
        r"""The 2-D correlation integrals of all TEMPO step distances ``0 ... dkmax`` (see ``BaseCorrelations``).

        Computed from one vector :math:`\eta(k\,dt)`, ``k = 0 ... dkmax + 1`` (cached by value), by the
        stencils ``eta[0] = eta(dt)`` and ``eta[k] = eta((k+1)dt) - 2 eta(k dt) + eta((k-1)dt)``.

        Returns
        -------
        eta: np.ndarray
            complex128 array of length ``dkmax + 1`` (zero imaginary part if ``matsubara``).
        """
        tmp_dt, tmp_dkmax = _check_grid_args(dt, dkmax)
        tmp_matsubara = self._check_matsubara(bool(matsubara))
        grid = tmp_dt * np.arange(tmp_dkmax + 2, dtype=NpDtypeReal)
        etas = np.asarray(
            self.eta_function(grid, epsrel=epsrel, subdiv_limit=subdiv_limit, matsubara=tmp_matsubara),
            dtype=NpDtype,
        )
        coefficients = np.empty(tmp_dkmax + 1, dtype=NpDtype)
        coefficients[0] = etas[1] - etas[0]
        coefficients[1:] = etas[2:] - 2.0 * etas[1:-1] + etas[:-2]
        return coefficients

    def tail_coefficient(
        self,
        dt: float,
        dkmax: int,
        tail_time: float,
        epsrel: float = INTEGRATE_EPSREL,
        subdiv_limit: int = SUBDIV_LIMIT,
        matsubara: bool = False,
    ) -> complex:
        r"""Rectangle integral of the memory tail (see ``BaseCorrelations``); ``tail_time`` may be ``inf``.

        For ``tail_time = inf`` (real time only; ``ValueError`` with ``matsubara``) the limit
        :math:`t_2 \to \infty` is used: :math:`\eta(t_2) - \eta(t_2 - \Delta) \to \Delta \int_0^\infty C(s)\,ds
        = \Delta [\tfrac{\pi}{2} L - i\lambda]` with :math:`L = \lim_{\omega\to 0^+} J(\omega)\coth(\omega/2T)`
        and the reorganisation energy :math:`\lambda`.  :math:`L = 0` at T = 0 for :math:`J(0) = 0` and at
        T > 0 for super-Ohmic J; for Ohmic J at T > 0 it is :math:`2T J'(0)` (the real part of the tail grows
        linearly: thermal dephasing); for sub-Ohmic J at T > 0 it is infinite (the tail is ``inf``).
        ``PowerLawSD`` knows :math:`L` exactly; ``CustomSD`` estimates it by linear extrapolation of
        :math:`J(\omega)\coth(\omega/2T)` from :math:`\omega = 10^{-6}\omega_c` and :math:`2\cdot 10^{-6}\omega_c`.
        """
        tmp_tail = self._check_tail_time(tail_time)
        if math.isfinite(tmp_tail):
            return super().tail_coefficient(dt, dkmax, tmp_tail, epsrel, subdiv_limit, matsubara)
        tmp_dt, tmp_dkmax = _check_grid_args(dt, dkmax)
        check_true(not matsubara, "An infinite tail_time is not defined for Matsubara correlations.")
        tmp_epsrel, tmp_limit = _check_integration_args(epsrel, subdiv_limit)
        time_1 = float(tmp_dkmax) * tmp_dt
        etas = self.eta_function(
            np.array([time_1, time_1 - tmp_dt]), epsrel=tmp_epsrel, subdiv_limit=tmp_limit
        )
        limit_real = self._zero_frequency_limit()
        reorganisation = self._reorganisation_energy(tmp_epsrel, tmp_limit)
        asymptote = complex(0.5 * math.pi * limit_real * tmp_dt, -reorganisation * tmp_dt)
        return asymptote - complex(etas[0] - etas[1])

    def _zero_frequency_limit(self) -> float:
        r"""Estimate of :math:`\lim_{\omega\to 0^+} J(\omega)\coth(\omega/2T)` (see ``tail_coefficient``)."""
        spectral_density = self._scalar_spectral_density()
        thermal = self._thermal_factor()
        small = _LIMIT_PROBE * float(self.cutoff)
        values = [spectral_density(h) * thermal(h) for h in (small, 2.0 * small)]
        return max(0.0, 2.0 * values[0] - values[1])

    def _reorganisation_energy(self, epsrel: float, limit: int) -> float:
        r"""Reorganisation energy :math:`\lambda = \int_0^\infty J(\omega)/\omega\, d\omega` (cached)."""
        spectral_density = self._scalar_spectral_density()

        def integrand(omega: float) -> float:
            weight = spectral_density(omega)
            return 0.0 if weight == 0.0 else weight / omega

        key = ("reorganisation", self._parameter_key(), epsrel, limit)
        return self._cached(key, lambda: self._integrate(integrand, epsrel, limit))


class PowerLawSD(CustomSD):
    r"""Correlations of the power-law spectral density :math:`J(\omega) = 2\alpha \omega^\zeta \omega_c^{1-\zeta} X(\omega, \omega_c)`.

    :math:`\zeta = 1` is Ohmic, :math:`\zeta > 1` super-Ohmic, :math:`\zeta < 1` sub-Ohmic.  ``alpha`` and
    ``zeta`` are plain writable attributes, like the inherited ``cutoff``, ``cutoff_type`` and
    ``temperature``; the integrals always use their current values.

    Parameters
    ----------
    alpha: float
        The coupling strength :math:`\alpha`.
    zeta: float
        The exponent :math:`\zeta`.
    cutoff: float
        The cutoff frequency :math:`\omega_c` (> 0).
    cutoff_type: str
        ``'hard'``, ``'exponential'`` (default) or ``'gaussian'``.
    temperature: float
        The bath temperature :math:`T \ge 0` (default 0).
    name: str
        An optional name for the correlations.
    description: str
        An optional description of the correlations.
    """

    def __init__(
        self,
        alpha: float,
        zeta: float,
        cutoff: float,
        cutoff_type: str = "exponential",
        temperature: float = 0.0,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        try:
            tmp_alpha = float(alpha)
        except Exception as err:
            raise AssertionError("Alpha must be a float.") from err
        self.alpha = tmp_alpha
        try:
            tmp_zeta = float(zeta)
        except Exception as err:
            raise AssertionError("Zeta must be a float.") from err
        self.zeta = tmp_zeta
        try:
            tmp_cutoff = float(cutoff)
        except Exception as err:
            raise AssertionError("Cutoff must be a float.") from err
        self.cutoff = tmp_cutoff

        def j_function(omega: float) -> float:
            return 2.0 * self.alpha * omega**self.zeta * self.cutoff ** (1.0 - self.zeta)

        super().__init__(
            j_function,
            cutoff=tmp_cutoff,
            cutoff_type=cutoff_type,
            temperature=temperature,
            name=name,
            description=description,
        )
        self._power_law_j_function = self.j_function

    def _str_items(self) -> list:
        return super()._str_items() + [("alpha", self.alpha), ("zeta", self.zeta)]

    def _uses_power_law(self) -> bool:
        """True unless the user replaced ``j_function``."""
        return self.j_function is self.__dict__.get("_power_law_j_function", self.j_function)

    def _parameter_key(self) -> tuple:
        return super()._parameter_key() + (self.alpha, self.zeta)

    def _j_scalar(self) -> Callable[[float], float]:
        # Read alpha, zeta, cutoff from this instance (copy-safe: never through a closure on another one).
        if not self._uses_power_law():
            return super()._j_scalar()
        zeta = float(self.zeta)
        prefactor = 2.0 * float(self.alpha) * float(self.cutoff) ** (1.0 - zeta)
        return lambda omega: prefactor * omega**zeta

    def _zero_frequency_limit(self) -> float:
        if not self._uses_power_law():
            return super()._zero_frequency_limit()
        alpha, zeta, omega_c = float(self.alpha), float(self.zeta), float(self.cutoff)
        if alpha == 0.0:
            return 0.0
        if self.temperature == 0.0:
            power = zeta
            prefactor = 2.0 * alpha * omega_c ** (1.0 - zeta)
        else:
            power = zeta - 1.0
            prefactor = 4.0 * alpha * float(self.temperature) * omega_c ** (1.0 - zeta)
        if power > 0.0:
            return 0.0
        if power == 0.0:
            return prefactor
        return math.copysign(math.inf, prefactor)
