r"""Bath dynamics: occupations and two-time correlations of bath modes from the system's correlations.

Method: D. Gribben, A. Strathearn, G. E. Fux, P. Kirton and B. W. Lovett, Quantum 6, 847 (2022).

Conventions (stated once, here).  The bath is :math:`H_B = \sum_k \omega_k b_k^\dagger b_k` coupled linearly,
:math:`S \otimes \sum_k g_k (b_k + b_k^\dagger)`, with :math:`S` the bath's coupling operator.  A *band* of width
:math:`\delta\omega` around :math:`\omega` is treated as one mode :math:`b_\omega` with :math:`g^2 = J(\omega)
\delta\omega`, so with ``dw = 1`` the results are densities per unit frequency.  In the Heisenberg picture

.. math::

    b^{(d)}_\omega(t) = e^{i\sigma\omega t}\Big[b^{(d)}_\omega
        + i\sigma g \int_0^t e^{-i\sigma\omega s} S(s)\, ds\Big],
    \qquad \sigma = 2d - 1,

with :math:`b^{(1)} = b^\dagger` and :math:`b^{(0)} = b`; the bracket is the mode in the bath's interaction
picture.  For a Gaussian (thermal, :math:`n(\omega) = 1/(e^{\omega/T} - 1)`) initial bath, every two-point
function of modes is a thermal part plus a double integral of the ordered system correlations
:math:`C(s, s') = \langle S(s') S(s) \rangle` (:math:`s \le s'`), real and imaginary parts against separate
kernels.  The correlations live on the process tensor's step grid (``C[i, j]`` at times ``i dt <= j dt``, from
:func:`oqupy.compute_correlations`) and are held constant over each step; the exponentials are integrated exactly
over each cell (a square above the diagonal, a triangle on it), so the kernels are closed forms built as whole
arrays: masks for the three regions of the integration domain (both times before :math:`t_1`; the earlier before
and the later after :math:`t_1`; both after) select the coefficients.

As in OQuPy 0.5: ``occupation`` weighs the band with :math:`J(\omega)\,\delta\omega`, ``correlation`` with
:math:`\delta\omega_1 \delta\omega_2 \sqrt{J(\omega_1) J(\omega_2)}`; both agree for the default widths of 1.

Host code in both packages: NumPy arrays of the size of the step grid squared and one
:func:`oqupy.compute_correlations` call per extension of the grid; there is nothing per step to compile, so the
results are NumPy arrays in ``oqupy_numpy`` and ``oqupy_jax`` alike.
"""

from typing import Any, Optional, Tuple

import numpy as np

from oqupy import config
from oqupy._validation import finite_float
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.bath_correlations import CustomSD
from oqupy.process_tensor import BaseProcessTensor
from oqupy.system import BaseSystem
from oqupy.system_dynamics import compute_correlations
from oqupy.util import check_convert

__runs_on__ = "host"

__all__ = ["TwoTimeBathCorrelations"]

_DAGGERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def thermal_occupation(freq: float, temperature: float) -> float:
    """Bose-Einstein occupation ``1 / (exp(freq / T) - 1)``; 0 at zero temperature."""
    if temperature <= 0.0:
        return 0.0
    return float(1.0 / np.expm1(freq / temperature))


def _cell_integral(rate: complex, dt: float) -> complex:
    """``(exp(rate dt) - 1) / rate``: the integral of ``exp(rate x)`` over ``0 <= x <= dt`` (``dt`` at 0)."""
    if rate == 0:
        return complex(dt)
    return complex(np.expm1(rate * dt) / rate)


def cell_integrals(rate_late: complex, rate_early: complex, dt: float, size: int) -> np.ndarray:
    r"""Integrals of :math:`e^{a t' + b t''}` over the cells of a ``size x size`` step grid with :math:`t'' \le t'`.

    Entry ``[i, j]`` (row: the earlier time :math:`t''` in step ``i``; column: the later time :math:`t'` in
    step ``j``) is the integral over the square of the two steps for ``i < j``, over the triangle
    :math:`t'' \le t'` for ``i == j``, and 0 below the diagonal.  ``a = rate_late``, ``b = rate_early``.
    """
    starts = dt * np.arange(size)
    late = np.exp(rate_late * starts) * _cell_integral(rate_late, dt)
    early = np.exp(rate_early * starts) * _cell_integral(rate_early, dt)
    if rate_early != 0:
        triangle = (_cell_integral(rate_late + rate_early, dt) - _cell_integral(rate_late, dt)) / rate_early
    elif rate_late != 0:  # the limit rate_early -> 0: the integral of x exp(a x)
        triangle = (dt * np.exp(rate_late * dt) - _cell_integral(rate_late, dt)) / rate_late
    else:
        triangle = 0.5 * dt**2
    diagonal = np.exp((rate_late + rate_early) * starts) * triangle
    rows, columns = np.indices((size, size))
    squares = np.outer(early, late)
    return np.where(rows < columns, squares, np.where(rows == columns, diagonal[rows], 0.0))


def kernels(
    freqs: Tuple[float, float],
    steps: Tuple[int, int],
    dagg: Tuple[int, int],
    occupations: Tuple[float, float],
    dt: float,
) -> Tuple[np.ndarray, np.ndarray]:
    r"""The kernels multiplying ``Re C`` and ``i Im C`` for :math:`\langle b_2^{(d_0)}(t_2) b_1^{(d_1)}(t_1)\rangle`.

    ``freqs = (omega_1, omega_2)``, ``steps = (round(t_1/dt), round(t_2/dt))``, ``occupations = (n_1, n_2)``.
    Both kernels are ``steps[1] x steps[1]``, upper triangular, in the interaction picture and without the
    couplings.  Regions by mask: ``A`` both steps before ``t_1``, ``B`` the earlier before and the later at or
    after ``t_1``, ``C`` both at or after ``t_1``.

    With :math:`\sigma = 2d - 1`, :math:`[b^{(d)}, S(s)] = -i\sigma g \int_0^s e^{-i\sigma\omega v} [S(v), S(s)]\,dv`
    and, for the thermal initial bath, :math:`\langle b^{(d)} Y \rangle = m_b \langle [b^{(d)}, Y] \rangle`,
    :math:`\langle Y b^{(d)} \rangle = m_Y \langle [b^{(d)}, Y] \rangle` with :math:`(m_b, m_Y) = (n + 1, n)` for
    :math:`b` and :math:`(-n, -(n + 1))` for :math:`b^\dagger`.  Collecting the terms: the later time of a cell
    carries :math:`e^{-i\sigma_0\omega_2 t}` (``direct``) everywhere, or :math:`e^{-i\sigma_1\omega_1 t}`
    (``swapped``, the reversed ordering) in ``A``; the real kernel is :math:`-\sigma_0\sigma_1` times the plain
    double integral, the imaginary one adds the commutator terms weighted by :math:`m_Y` of mode 1 and
    :math:`m_b` of mode 2.
    """
    (freq_1, freq_2), (switch, size), (dag_0, dag_1), (n_1, n_2) = freqs, steps, dagg, occupations
    sign_0, sign_1 = 2 * dag_0 - 1, 2 * dag_1 - 1
    rate_2, rate_1 = -1j * sign_0 * freq_2, -1j * sign_1 * freq_1
    direct = cell_integrals(rate_2, rate_1, dt, size)
    swapped = cell_integrals(rate_1, rate_2, dt, size)
    rows, columns = np.indices((size, size))
    early = rows < switch
    region_a = early & (columns < switch)
    region_c = (rows >= switch) & (columns >= switch)
    product = sign_0 * sign_1
    later_weight = n_1 if dag_1 == 0 else -(n_1 + 1.0)  # m_Y of mode 1
    earlier_weight = n_2 + 1.0 if dag_0 == 0 else -n_2  # m_b of mode 2
    real = -product * (np.where(early, direct, 0.0) + np.where(region_a, swapped, 0.0))
    imaginary = (
        np.where(early, -product * (1 + 2 * later_weight) * direct, 0.0)
        + np.where(region_c, -2 * product * later_weight * direct, 0.0)
        + np.where(region_a, product * (1 - 2 * earlier_weight) * swapped, 0.0)
    )
    return real, imaginary


class TwoTimeBathCorrelations(BaseAPIClass):
    """Occupations and two-time correlations of bath modes, computed from the system's correlations.

    Parameters
    ----------
    system: BaseSystem
        The system (``System`` or ``TimeDependentSystem``).
    bath: Bath
        The bath: coupling operator, spectral density and temperature.
    process_tensor: BaseProcessTensor
        The process tensor of ``bath`` (finite, with a time step); its steps are the time grid.
    initial_state: ndarray
        The initial system state; exactly one of it and the process tensor's initial tensor must be given.
    system_correlations: ndarray
        Ordered correlations of the coupling operator computed before (``C[i, j]`` for ``i <= j``, as
        :meth:`generate_system_correlations` makes them); entries below the diagonal are ignored.
    name: str
        An optional name.
    description: str
        An optional description.
    """

    def __init__(
        self,
        system: BaseSystem,
        bath: Bath,
        process_tensor: BaseProcessTensor,
        initial_state: Optional[np.ndarray] = None,
        system_correlations: Optional[np.ndarray] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        assert isinstance(system, BaseSystem), "Argument 'system' must be a BaseSystem."
        assert isinstance(bath, Bath), "Argument 'bath' must be a Bath."
        assert isinstance(process_tensor, BaseProcessTensor), (
            "Argument 'process_tensor' must be a process tensor."
        )
        assert isinstance(bath.correlations, CustomSD), "Bath dynamics need a spectral density (a CustomSD)."
        dt = process_tensor.dt
        assert dt is not None, "The process tensor must have a time step."
        assert np.isfinite(process_tensor.max_step), "The process tensor must have a finite number of steps."
        assert (initial_state is None) != (process_tensor.get_initial_tensor() is None), (
            "The initial state must be given either (exclusively) in the process tensor or as an argument."
        )
        if system_correlations is None:
            correlations = np.zeros((0, 0), dtype=config.NpDtype)
        else:
            correlations = np.array(system_correlations, dtype=config.NpDtype)
            assert correlations.ndim == 2 and correlations.shape[0] == correlations.shape[1], (
                "Argument 'system_correlations' must be a square matrix."
            )
        self._system = system
        self._bath = bath
        self._process_tensor = process_tensor
        self._initial_state = initial_state
        self._system_correlations = correlations
        self._spectral_density = bath.correlations
        self._temperature = float(bath.correlations.temperature)
        self._dt = float(dt)
        super().__init__(name, description)

    @property
    def system(self) -> BaseSystem:
        """The system."""
        return self._system

    @property
    def bath(self) -> Bath:
        """The bath."""
        return self._bath

    @property
    def initial_state(self) -> Optional[np.ndarray]:
        """The initial system state (None: it is in the process tensor)."""
        return self._initial_state

    def _steps(self, time: Any, name: str) -> int:
        """Number of steps up to ``time``; ``ValueError`` if negative, ``IndexError`` past the process tensor."""
        time = finite_float(time, name)
        steps = int(np.round(time / self._dt))
        if steps < 0:
            raise ValueError(f"Argument '{name}' must not be negative.")
        if steps > len(self._process_tensor):
            raise IndexError(f"Argument '{name}' = {time} lies beyond the process tensor.")
        return steps

    def generate_system_correlations(self, final_time: float, progress_type: Optional[str] = None) -> None:
        r"""Extend the ordered correlations of the coupling operator to the steps before ``final_time``.

        Computes :math:`C[i, j] = \langle S(t_j) S(t_i) \rangle` for ``i <= j < round(final_time / dt)`` with
        :func:`oqupy.compute_correlations` (only the columns not yet known); ``progress_type`` as there.
        """
        size = self._steps(final_time, "final_time")
        known = self._system_correlations.shape[0]
        if size <= known:
            return
        unitary = self._bath.unitary_transform
        operator = unitary @ self._bath.coupling_operator @ unitary.conj().T
        _, columns = compute_correlations(
            self._system,
            self._process_tensor,
            operator,
            operator,
            slice(size),
            slice(known, size),
            initial_state=self._initial_state,
            progress_type=progress_type,
        )
        extended = np.full((size, size), np.nan + 1j * np.nan, dtype=config.NpDtype)
        extended[:known, :known] = self._system_correlations
        extended[:, known:] = columns
        self._system_correlations = extended

    def _weighted_sum(self, real: np.ndarray, imaginary: np.ndarray, size: int) -> np.ndarray:
        """``Re C * real + i Im C * imaginary`` on the first ``size`` steps (the unknown lower triangle as 0)."""
        correlations = np.nan_to_num(self._system_correlations[:size, :size])
        return correlations.real * real + 1j * correlations.imag * imaginary

    def occupation(
        self,
        freq: float,
        dw: float = 1.0,
        change_only: bool = False,
        progress_type: Optional[str] = None,
    ) -> Tuple[np.ndarray, np.ndarray]:
        r"""Occupation :math:`\langle b_\omega^\dagger b_\omega \rangle(t)` of the band ``dw`` at ``freq``.

        Parameters
        ----------
        freq: float
            Centre of the band (``0`` gives NaN: the band has no mode).
        dw: float
            Width of the band (default 1: a density).
        change_only: bool
            Leave out the initial thermal occupation.
        progress_type: str
            Progress report of the system correlations ('silent', 'simple', 'bar').

        Returns
        -------
        times: ndarray
            ``0, dt, ..., len(process_tensor) * dt``.
        occupation: ndarray
            The occupation (real values, complex dtype for ``freq = 0``'s NaN as in OQuPy) at each time.
        """
        freq = check_convert(freq, float, "freq")
        dw = check_convert(dw, float, "dw")
        dt = self._dt
        size = len(self._process_tensor)
        times = dt * np.arange(size + 1, dtype=config.NpDtypeReal)
        if freq == 0.0:
            return times, np.full(size + 1, np.nan + 1j * np.nan, dtype=config.NpDtype)
        self.generate_system_correlations(size * dt, progress_type)
        thermal = thermal_occupation(freq, self._temperature)
        real, imaginary = kernels((freq, freq), (size, size), (1, 0), (thermal, thermal), dt)
        coupling = float(self._spectral_density.spectral_density(freq)) * dw
        per_step = np.sum(self._weighted_sum(real, imaginary, size), axis=0)
        occupation = coupling * np.concatenate([[0.0], np.cumsum(per_step).real])
        if not change_only:
            occupation = occupation + thermal
        return times, occupation

    def correlation(
        self,
        freq_1: float,
        time_1: float,
        freq_2: Optional[float] = None,
        time_2: Optional[float] = None,
        dw: Tuple[float, float] = (1.0, 1.0),
        dagg: Tuple[int, int] = (1, 0),
        interaction_picture: bool = False,
        change_only: bool = False,
        progress_type: Optional[str] = None,
    ) -> complex:
        r"""Two-time correlation :math:`\langle b_2^{(d_0)}(t_2)\, b_1^{(d_1)}(t_1) \rangle` of two bands.

        Parameters
        ----------
        freq_1, time_1: float
            Band and time of the earlier operator.
        freq_2, time_2: float
            Band and time of the later operator (default: ``freq_1``, ``time_1``); ``time_1 <= time_2``.
        dw: tuple of float
            Widths of the two bands (default ``(1, 1)``: a density).
        dagg: tuple of int
            ``(d_0, d_1)``: 1 for a creation, 0 for an annihilation operator (``(1, 0)``:
            :math:`\langle b_2^\dagger b_1 \rangle`).
        interaction_picture: bool
            Give the modes in the bath's interaction picture (without the free phases
            :math:`e^{i\sigma\omega t}`).
        change_only: bool
            Leave out the initial (thermal and vacuum) part, present for ``freq_1 == freq_2`` and mixed ``dagg``.
        progress_type: str
            Progress report of the system correlations.

        Returns
        -------
        complex
            The correlation (NaN if a frequency is 0).
        """
        freq_1 = check_convert(freq_1, float, "freq_1")
        freq_2 = freq_1 if freq_2 is None else check_convert(freq_2, float, "freq_2")
        time_1 = check_convert(time_1, float, "time_1")
        time_2 = time_1 if time_2 is None else check_convert(time_2, float, "time_2")
        assert isinstance(dagg, (tuple, list)) and tuple(dagg) in _DAGGERS, (
            "Argument 'dagg' must be one of (0, 0), (0, 1), (1, 0), (1, 1)."
        )
        daggers = (int(dagg[0]), int(dagg[1]))
        assert isinstance(dw, (tuple, list)) and len(dw) == 2, "Argument 'dw' must be a pair of widths."
        width_1, width_2 = (check_convert(width, float, "dw") for width in dw)
        if time_1 > time_2:
            raise ValueError("Argument 'time_1' must not be later than 'time_2'.")
        switch = self._steps(time_1, "time_1")
        size = self._steps(time_2, "time_2")
        if freq_1 == 0.0 or freq_2 == 0.0:
            return complex(np.nan, np.nan)
        self.generate_system_correlations(time_2, progress_type)
        n_1 = thermal_occupation(freq_1, self._temperature)
        n_2 = thermal_occupation(freq_2, self._temperature)
        real, imaginary = kernels((freq_1, freq_2), (switch, size), daggers, (n_1, n_2), self._dt)
        spectral_density = self._spectral_density.spectral_density
        coupling = (
            width_1 * width_2 * np.sqrt(float(spectral_density(freq_1)) * float(spectral_density(freq_2)))
        )
        value = complex(np.sum(self._weighted_sum(real, imaginary, size)) * coupling)
        if not change_only and freq_1 == freq_2 and daggers in ((1, 0), (0, 1)):
            value += n_1 + daggers[1]
        if not interaction_picture:
            sign_0, sign_1 = 2 * daggers[0] - 1, 2 * daggers[1] - 1
            value *= np.exp(1j * (sign_0 * freq_2 * time_2 + sign_1 * freq_1 * time_1))
        return complex(value)
