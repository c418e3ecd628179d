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
periodic :math:`-C_M` (exactly, through :math:`\lambda`; see
:func:`oqupy._spectral_integrals.continue_matsubara_eta`).  Upstream
instead drops the :math:`e^{-\omega(\beta-\tau)}` term wherever :math:`e^{-\omega/T}` is below machine
epsilon, which perturbs values near :math:`\tau = \beta` and makes :math:`\tau > \beta` values arbitrary.

Values are cached per instance in a dict keyed by value: the quantity, ``tau``, ``epsrel``,
``subdiv_limit``, ``matsubara`` *and* the current public parameters (``j_function`` identity,
``cutoff``, ``cutoff_type``, ``temperature``, and ``alpha``, ``zeta`` for ``PowerLawSD``).  Changing a
public attribute therefore never returns stale values (unlike upstream's ``lru_cache``).  A
``j_function`` that reads outside mutable state is not tracked: replace the attribute instead.

This module holds the concrete correlations and re-exports the abstract :class:`BaseCorrelations` (from
:mod:`oqupy._correlations_base`).  The integrands and their quadrature are pure functions in
:mod:`oqupy._spectral_integrals`; the argument checks, quadrature helpers and the cache are in
:mod:`oqupy._quadrature`.  All of it runs on the host, with NumPy/SciPy in every generated package.
"""

import math
from functools import partial
from typing import Any, Callable, Dict, Hashable, Optional, Union

import numpy as np

from oqupy._correlations_base import BaseCorrelations
from oqupy._quadrature import (
    SHAPES,
    ArrayLike,
    as_real_array,
    cached,
    check_grid_args,
    check_integration_args,
    check_tail_time,
    correlation_2d_quadrature,
    tabulate,
)
from oqupy._spectral_integrals import (
    CUTOFF_DICT,
    SpectralDensity,
    cached_reorganisation_energy,
    cached_square_influences,
    cached_value,
    eta_stencil,
    influence_stencil,
    power_law_zero_frequency_limit,
    probe_spectral_density,
    spectral_density_function,
    zero_frequency_limit,
)
from oqupy._validation import as_float
from oqupy.config import INTEGRATE_EPSREL, SUBDIV_LIMIT, NpDtype, NpDtypeReal
from oqupy.util import check_convert, check_true

__runs_on__ = "host"

__all__ = ["CUTOFF_DICT", "BaseCorrelations", "CustomCorrelations", "CustomSD", "PowerLawSD"]


def _value_cache(correlations: BaseCorrelations) -> Dict[Hashable, Any]:
    """The by-value cache of ``correlations`` (see the module docstring); created on first use."""
    return correlations.__dict__.setdefault("_cache", {})


def _as_float(value: Any, label: str) -> float:
    """``float(value)``; ``AssertionError`` "<label> must be a float." otherwise (as upstream)."""
    return as_float(value, label, AssertionError, f"{label} must be a float.")


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
        self._cache: Dict[Hashable, Any] = {}
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
        if shape not in SHAPES:
            raise NotImplementedError(f"Shape '{shape}' not implemented.")
        tmp_delta = check_convert(delta, float, "delta")
        tmp_time_1 = check_convert(time_1, float, "time_1")
        if time_2 is None:
            tmp_time_2 = tmp_time_1 + tmp_delta
        else:
            assert shape == "rectangle", "Argument 'time_2' can only be used with shape='rectangle'."
            tmp_time_2 = check_convert(time_2, float, "time_2")
        args = check_integration_args(epsrel, subdiv_limit)
        key = ("2d", self.correlation_function, tmp_delta, tmp_time_1, tmp_time_2, shape, args)
        function = getattr(self.correlation_function, "pyfunc", self.correlation_function)
        integral = partial(
            correlation_2d_quadrature, function, tmp_delta, tmp_time_1, tmp_time_2, shape, args
        )
        return cached(_value_cache(self), key, integral)


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
        self._cache: Dict[Hashable, Any] = {}
        try:
            tmp_j_function = np.vectorize(j_function)
            probe = float(tmp_j_function(1.0))
        except Exception as err:
            raise AssertionError("Spectral density must be vectorizable and must return float.") from err
        assert math.isfinite(probe), (
            f"Spectral density must return finite floats (j_function(1.0) = {probe})."
        )
        self.j_function = tmp_j_function

        tmp_cutoff = _as_float(cutoff, "Cutoff")
        assert tmp_cutoff > 0.0, f"Cutoff must be positive (but is {tmp_cutoff})."
        self.cutoff = tmp_cutoff

        assert cutoff_type in CUTOFF_DICT, (
            f"Cutoff type must be one of: {list(CUTOFF_DICT)} (but is {cutoff_type!r})."
        )
        self.cutoff_type = cutoff_type

        tmp_temperature = _as_float(temperature, "Temperature")
        check_true(
            tmp_temperature >= 0.0 and math.isfinite(tmp_temperature),
            f"Temperature must be >= 0.0 and finite (but is {tmp_temperature}).",
        )
        self.temperature = tmp_temperature

        probe_spectral_density(self._density())

    def _str_items(self) -> list:
        return [("cutoff", self.cutoff), ("cutoff_type", self.cutoff_type), ("temperature", self.temperature)]

    def _j_scalar(self) -> Callable[[float], float]:
        """The bare ``j`` as a scalar callable (the function inside the ``np.vectorize`` wrapper)."""
        return getattr(self.j_function, "pyfunc", self.j_function)

    def _density(self) -> SpectralDensity:
        """A snapshot of the current parameters, for the integrals."""
        return SpectralDensity(
            self._j_scalar(), float(self.cutoff), str(self.cutoff_type), float(self.temperature)
        )

    def _parameter_key(self) -> tuple:
        """The current public parameters, for cache keys."""
        return (type(self).__name__, self.j_function, self.cutoff, self.cutoff_type, self.temperature)

    def _check_matsubara(self, matsubara: bool) -> bool:
        """``bool(matsubara)``; ``ValueError`` for Matsubara values at T = 0."""
        tmp = bool(matsubara)
        if tmp:
            check_true(self.temperature > 0.0, "Matsubara correlations are only defined for temperature > 0.")
        return tmp

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
        density = spectral_density_function(self._density())
        return tabulate(density, as_real_array(omega, "omega"), NpDtypeReal)

    def correlation(
        self,
        tau: ArrayLike,
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
        matsubara: Optional[bool] = False,
    ) -> ArrayLike:
        r"""Auto-correlation function :math:`C(\tau)` of the spectral density at temperature :math:`T`.

        The integral over :math:`J` is given in the module docstring (with :math:`C_M` for ``matsubara``).

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

        The integral over :math:`J` is given in the module docstring (with :math:`\eta_M` for ``matsubara``).

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
        if shape not in SHAPES:
            raise NotImplementedError(f"Shape '{shape}' not implemented.")
        tmp_matsubara = self._check_matsubara(bool(matsubara))
        tmp_delta = check_convert(delta, float, "delta")
        tmp_time_1 = check_convert(time_1, float, "time_1")
        tmp_time_2 = None
        if shape == "rectangle" and time_2 is not None:
            tmp_time_2 = check_convert(time_2, float, "time_2")
        stencil = eta_stencil(shape, tmp_delta, tmp_time_1, tmp_time_2)
        etas = self.eta_function(
            np.array(stencil.taus), epsrel=epsrel, subdiv_limit=subdiv_limit, matsubara=tmp_matsubara
        )
        integral = sum(weight * eta for weight, eta in zip(stencil.weights, etas.tolist(), strict=True))
        if tmp_matsubara:
            return float(np.real(integral))
        return complex(integral)

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

        ``eta[0] = eta(dt)``; the squares ``eta[k] = eta((k+1)dt) - 2 eta(k dt) + eta((k-1)dt)`` are not
        taken as that difference (which keeps the quadrature errors of the growing :math:`\eta` values) but
        integrated directly as one oscillatory integral each
        (:func:`oqupy._spectral_integrals.square_influences`), accurate at every lag; each is cached by
        value.  Matsubara coefficients (GibbsTEMPO: smooth, short) use the difference of :math:`\eta_M`.

        Returns
        -------
        eta: np.ndarray
            complex128 array of length ``dkmax + 1`` (zero imaginary part if ``matsubara``).
        """
        grid = check_grid_args(dt, dkmax)
        tmp_matsubara = self._check_matsubara(bool(matsubara))
        if tmp_matsubara:
            times = grid.dt * np.arange(grid.dkmax + 2, dtype=NpDtypeReal)
            etas = np.asarray(
                self.eta_function(times, epsrel=epsrel, subdiv_limit=subdiv_limit, matsubara=True),
                dtype=NpDtype,
            )
            return influence_stencil(etas)
        args = check_integration_args(epsrel, subdiv_limit)
        coefficients = np.empty(grid.dkmax + 1, dtype=NpDtype)
        coefficients[0] = complex(
            self.eta_function(grid.dt, epsrel=args.epsrel, subdiv_limit=args.subdiv_limit)
        )
        coefficients[1:] = cached_square_influences(
            _value_cache(self), self._parameter_key(), self._density(), grid.dt, grid.dkmax, args
        )
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
        tmp_tail = check_tail_time(tail_time)
        if math.isfinite(tmp_tail):
            return super().tail_coefficient(dt, dkmax, tmp_tail, epsrel, subdiv_limit, matsubara)
        grid = check_grid_args(dt, dkmax)
        check_true(not matsubara, "An infinite tail_time is not defined for Matsubara correlations.")
        args = check_integration_args(epsrel, subdiv_limit)
        time_1 = float(grid.dkmax) * grid.dt
        etas = self.eta_function(
            np.array([time_1, time_1 - grid.dt]), epsrel=args.epsrel, subdiv_limit=args.subdiv_limit
        )
        limit_real = self._zero_frequency_limit()
        reorganisation = cached_reorganisation_energy(
            _value_cache(self), self._parameter_key(), self._density(), args
        )
        asymptote = complex(0.5 * math.pi * limit_real * grid.dt, -reorganisation * grid.dt)
        return asymptote - complex(etas[0] - etas[1])

    def _evaluate(
        self, quantity: str, tau: ArrayLike, epsrel: Any, subdiv_limit: Any, matsubara: Any
    ) -> ArrayLike:
        """Cached, element-wise evaluation of ``'eta'`` or ``'correlation'`` over ``tau``."""
        tmp_matsubara = self._check_matsubara(bool(matsubara))
        args = check_integration_args(epsrel, subdiv_limit)
        taus = as_real_array(tau, "tau")
        cache, params, density = _value_cache(self), self._parameter_key(), self._density()
        value = partial(cached_value, cache, params, density, quantity, args, tmp_matsubara)
        return tabulate(value, taus, NpDtypeReal if tmp_matsubara else NpDtype)

    def _zero_frequency_limit(self) -> float:
        r"""Estimate of :math:`\lim_{\omega\to 0^+} J(\omega)\coth(\omega/2T)` (see ``tail_coefficient``)."""
        return zero_frequency_limit(self._density())


class PowerLawSD(CustomSD):
    r"""Correlations of the power-law spectral density :math:`J(\omega) = 2\alpha \omega^\zeta \omega_c^{1-\zeta} X(\omega, \omega_c)`.

    :math:`\zeta = 1` is Ohmic, :math:`\zeta > 1` super-Ohmic, :math:`\zeta < 1` sub-Ohmic.  ``alpha`` and
    ``zeta`` are plain writable attributes, like the inherited ``cutoff``, ``cutoff_type`` and
    ``temperature``; the integrals always use their current values.

    Parameters
    ----------
    alpha: float
        The coupling strength :math:`\alpha \ge 0` (``ValueError`` otherwise).
    zeta: float
        The exponent :math:`\zeta > 0` (``ValueError`` otherwise: for :math:`\zeta \le 0` the reorganisation
        energy :math:`\int J(\omega)/\omega \, d\omega` diverges at :math:`\omega = 0`).
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
        self.alpha = _as_float(alpha, "Alpha")
        self.zeta = _as_float(zeta, "Zeta")
        self.cutoff = _as_float(cutoff, "Cutoff")
        check_true(
            self.alpha >= 0.0 and math.isfinite(self.alpha),
            f"Argument 'alpha' must be a non-negative finite number (got {self.alpha}).",
        )
        check_true(
            self.zeta > 0.0 and math.isfinite(self.zeta),
            f"Argument 'zeta' must be a positive finite number (got {self.zeta}): with zeta <= 0 the reorganisation "
            "energy, the integral of J(omega) / omega, diverges at omega = 0.",
        )

        def j_function(omega: float) -> float:
            return 2.0 * self.alpha * omega**self.zeta * self.cutoff ** (1.0 - self.zeta)

        super().__init__(
            j_function,
            cutoff=self.cutoff,
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
        return power_law_zero_frequency_limit(
            float(self.alpha), float(self.zeta), float(self.cutoff), float(self.temperature)
        )
