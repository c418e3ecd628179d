"""TEMPO's computational parameters (``TempoParameters``) and their rough estimate (``guess_tempo_parameters``).

Host code: validation, and sampling of the bath correlation function and of the system's frequencies, in NumPy in
both packages.  ``oqupy.tempo`` re-exports the public names.
"""

import math
import warnings
from typing import Any, Callable, Optional, Tuple

import numpy as np

from oqupy import config
from oqupy._validation import check_epsrel, positive_float
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.bath_correlations import BaseCorrelations
from oqupy.system import BaseSystem, System, TimeDependentSystem, TimeDependentSystemWithField
from oqupy.util import check_convert, check_true

__runs_on__ = "host"

__all__ = [
    "TempoParameters",
    "guess_tempo_parameters",
    "max_time_dependent_frequency",
    "num_steps_between",
]

# The warnings of OQuPy 0.5, word for word (scripts may filter on them).
GUESS_WARNING_MSG = (
    "Estimating TEMPO parameters. No guarantee subsequent dynamics calculations are converged. "
    "Please refer to the TEMPO documentation and check convergence by varying the parameters manually."
)
MF_SYS_WARNING_MSG = (
    "Assuming unit complex field value in mean-field Hamiltonian to estimate max system frequency."
)
MAX_DKMAX_WARNING_MSG = (
    f"Reached maximal recommended `tcut` (DKMAX = {config.MAX_DKMAX} timesteps)! "
    "Interrupt TEMPO parameter estimation. "
    "Please choose a lower tolerance, or analyse the correlation function to choose TEMPO parameters manually. "
    "Could not reach specified tolerance! "
)
MAX_SYS_SAMPLES_MSG = (
    f"Reached maximal recommend sample points MAX_SYS_SAMPLES = {config.MAX_SYS_SAMPLES} when attempting to "
    "resolve maximum system frequency. Please choose a lower tolerance or determine TEMPO parameters manually. "
)


def num_steps_between(start_time: float, end_time: float, dt: float) -> int:
    """Number of whole steps of length ``dt`` in ``[start_time, end_time]``, robust to rounding (0.3/0.1 = 3)."""
    ratio = (end_time - start_time) / dt
    nearest = round(ratio)
    if abs(ratio - nearest) <= 1e-9 * max(1.0, abs(ratio)):
        return int(nearest)
    return int(math.floor(ratio))


class TempoParameters(BaseAPIClass):
    r"""Computational parameters of a TEMPO (or PT-TEMPO) run; all read-only.

    Parameters
    ----------
    dt: float
        Time step (> 0, finite).
    epsrel: float
        Relative SVD truncation tolerance, in the open interval (0, 1).
    tcut: float
        Memory cut-off time (>= 0, finite); ``dkmax = ceil(tcut / dt)``.  Give at most one of ``tcut`` and
        ``dkmax``.  A cut-off longer than a run is the full memory of that run (``tempo_compute`` and ``PtTempo``
        warn, as the value is likely a mistake).
    dkmax: int
        Memory cut-off in steps (>= 0; 0 is the Markovian limit: each step feels only its own influence).
        Neither: full memory.
    add_correlation_time: float
        Correlations beyond the cut-off, up to this extra time (may be ``inf``), are folded into the oldest
        kept step (exact for a conserved coupling operator).  ``None``: dropped.  Needs ``dkmax >= 1``
        (with ``dkmax = 0`` no earlier step is kept to carry it).
    subdiv_limit: int
        Subdivision limit of the integration of time-dependent Liouvillians (``None``: midpoint samples).
    liouvillian_epsrel: float
        Relative tolerance of that integration.

    Notes
    -----
    Unlike OQuPy 0.5, ``epsrel`` is only the SVD tolerance: bath integrals always use
    ``config.INTEGRATE_EPSREL``.
    """

    _str_key_width = 21

    def __init__(
        self,
        dt: float,
        epsrel: float,
        tcut: Optional[float] = None,
        dkmax: Optional[int] = None,
        add_correlation_time: Optional[float] = None,
        subdiv_limit: Optional[int] = config.SUBDIV_LIMIT,
        liouvillian_epsrel: float = config.INTEGRATE_EPSREL,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        self._dt = positive_float(dt, "dt", finite=True)
        self._epsrel = check_epsrel(epsrel)
        assert tcut is None or dkmax is None, "Only one of 'tcut', 'dkmax' should be specified."
        if tcut is not None:
            self._tcut: Optional[float] = positive_float(tcut, "tcut", allow_zero=True, finite=True)
            steps = round(self._tcut / self._dt, 10)
            if not math.isfinite(steps):
                raise ValueError(f"Argument 'tcut' ({self._tcut}) is too long for 'dt' ({self._dt}).")
            self._dkmax: Optional[int] = int(math.ceil(steps))
        elif dkmax is not None:
            if not isinstance(dkmax, int) or isinstance(dkmax, bool):
                raise TypeError("Argument 'dkmax' must be int.")
            if dkmax < 0:
                raise ValueError(f"Argument 'dkmax' must be non-negative (got {dkmax}).")
            self._dkmax = dkmax
            self._tcut = dkmax * self._dt
        else:
            self._tcut = None
            self._dkmax = None
        self._add_correlation_time = (
            None
            if add_correlation_time is None
            else positive_float(add_correlation_time, "add_correlation_time", True)
        )
        if subdiv_limit is None:
            self._subdiv_limit: Optional[int] = None
        else:
            self._subdiv_limit = check_convert(subdiv_limit, int, "subdiv_limit")
            check_true(self._subdiv_limit >= 0, "Argument 'subdiv_limit' must be non-negative.")
        self._liouvillian_epsrel = positive_float(liouvillian_epsrel, "liouvillian_epsrel", finite=True)

    def _str_items(self) -> list:
        return [
            ("dt", self._dt),
            ("tcut [dkmax]", f"{self._tcut} [{self._dkmax}]"),
            ("epsrel", self._epsrel),
            ("add_correlation_time", self._add_correlation_time),
        ]

    @property
    def dt(self) -> float:
        """Time step."""
        return self._dt

    @property
    def epsrel(self) -> float:
        """Relative SVD truncation tolerance."""
        return self._epsrel

    @property
    def tcut(self) -> Optional[float]:
        """Memory cut-off time (None: full memory)."""
        return self._tcut

    @property
    def dkmax(self) -> Optional[int]:
        """Memory cut-off in steps (None: full memory)."""
        return self._dkmax

    @property
    def add_correlation_time(self) -> Optional[float]:
        """Extra correlation time folded into the oldest kept step."""
        return self._add_correlation_time

    @property
    def subdiv_limit(self) -> Optional[int]:
        """Subdivision limit for time-dependent Liouvillians."""
        return self._subdiv_limit

    @property
    def liouvillian_epsrel(self) -> float:
        """Integration tolerance for time-dependent Liouvillians."""
        return self._liouvillian_epsrel


def _sample_correlations(correlations: BaseCorrelations, taus: np.ndarray) -> np.ndarray:
    return np.array([complex(correlations.correlation(float(tau))) for tau in taus], dtype=config.NpDtype)


def _estimate_from_correlations(
    correlations: BaseCorrelations, duration: float, tolerance: float
) -> Tuple[float, int]:
    """(dt, dkmax) resolving C(tau) to ``tolerance`` over ``duration`` (OQuPy 0.5's grid refinement).

    Start from 11 points on ``[0, duration]``; on each level, halve every interval and compare, per interval, the
    trapezoid rule on the coarse points with the one on the refined points.  Errors and the cumulative integral
    of |C| are relative to the total integral of |C| on the refined grid.  The grid is cut two points after the
    cumulative integral passes ``1 - tolerance``; refinement stops when every error (of the uncut grid) is below
    ``tolerance``, or with a warning when the next grid would exceed ``MAX_DKMAX`` points.
    """
    taus = np.linspace(0.0, duration, 11)
    values = _sample_correlations(correlations, taus)
    fine_taus, fine_values = taus, values
    while True:
        if len(fine_taus) > config.MAX_DKMAX:
            warnings.warn(MAX_DKMAX_WARNING_MSG, UserWarning)
            break
        taus, values = fine_taus, fine_values
        midpoints = (taus[:-1] + taus[1:]) / 2.0
        fine_taus = np.empty(2 * len(taus) - 1)
        fine_taus[0::2], fine_taus[1::2] = taus, midpoints
        fine_values = np.empty(2 * len(taus) - 1, dtype=config.NpDtype)
        fine_values[0::2], fine_values[1::2] = values, _sample_correlations(correlations, midpoints)
        widths = taus[1:] - taus[:-1]
        coarse = 0.5 * widths * (values[:-1] + values[1:])
        fine = 0.5 * (coarse + widths * fine_values[1::2])
        magnitudes = np.abs(values)
        coarse_abs = 0.5 * widths * (magnitudes[:-1] + magnitudes[1:])
        cumulative = np.cumsum(0.5 * (coarse_abs + widths * np.abs(fine_values[1::2])))
        total = cumulative[-1]
        if not total > 0.0:
            raise ValueError(
                "The bath correlation function vanishes on the time window: nothing to estimate."
            )
        errors = np.abs(coarse - fine) / total
        cut = int(np.nonzero(cumulative / total > 1.0 - tolerance)[0][0])
        cut = min(cut + 2, len(taus))
        taus, values = taus[:cut], values[:cut]
        fine_taus, fine_values = fine_taus[: 2 * cut - 1], fine_values[: 2 * cut - 1]
        if np.all(errors < tolerance):
            break
    return float(np.min(taus[1:] - taus[:-1])), len(taus)


def _squared_norm(operator: Any) -> float:
    """Largest eigenvalue of O^dagger O, i.e. the squared spectral norm (what OQuPy 0.5 calls its spectral norm)."""
    matrix = np.asarray(operator, dtype=config.NpDtype)
    return float(np.max(np.abs(np.linalg.eigvalsh(matrix.conj().T @ matrix))))


def _max_frequency_at(hamiltonian: Callable, system: Any, times: np.ndarray) -> float:
    largest = max(_squared_norm(hamiltonian(t)) for t in times)
    for gamma, operator in zip(system.gammas, system.lindblad_operators):
        largest = max(largest, max(_squared_norm(gamma(t) * operator(t)) for t in times))
    return largest


def max_time_dependent_frequency(system: BaseSystem, times: np.ndarray) -> float:
    """Largest "frequency" of a time-dependent system sampled at ``times`` (OQuPy 0.5's measure).

    The frequency is the largest squared norm ``||O||^2`` of ``H(t)`` and of each ``gamma_n(t) L_n(t)``.  The
    Hamiltonian of a ``TimeDependentSystemWithField`` is evaluated at the field ``exp(i pi / 4)``.

    Raises
    ------
    TypeError
        If ``system`` is neither a ``TimeDependentSystem`` nor a ``TimeDependentSystemWithField``.
    """
    if isinstance(system, TimeDependentSystem):
        return _max_frequency_at(system.hamiltonian, system, times)
    if isinstance(system, TimeDependentSystemWithField):
        field = np.exp(1j * np.pi / 4)
        with_field = system.hamiltonian

        def hamiltonian(t: float) -> Any:
            return with_field(t, field)

        return _max_frequency_at(hamiltonian, system, times)
    raise TypeError("System must have time-dependence")


def _estimate_from_system(system: BaseSystem, start_time: float, end_time: float, max_samples: int) -> float:
    """Nyquist step ``0.5 / f`` of the system's largest "frequency" ``f`` (OQuPy 0.5's estimate).

    ``f`` is the largest squared norm ``||O||^2`` of the Hamiltonian and of the weighted Lindblad operators
    ``gamma_n L_n`` (OQuPy's quirk: a norm would be the physical choice).  Time-dependent systems are sampled on
    11 points, the number doubling until ``f`` changes by less than ``DEFAULT_TOLERANCE`` (warning past
    ``max_samples``); a mean-field system warns that its field is guessed.  Any other system raises ``TypeError``.
    """
    nyquist = 0.5
    if isinstance(system, System):
        frequencies = [_squared_norm(system.hamiltonian)] + [
            _squared_norm(gamma * operator)
            for gamma, operator in zip(system.gammas, system.lindblad_operators)
        ]
        return nyquist / max(frequencies)
    if isinstance(system, TimeDependentSystemWithField):
        warnings.warn(MF_SYS_WARNING_MSG, UserWarning)

    num = 11
    frequency = max_time_dependent_frequency(system, np.linspace(start_time, end_time, num))
    while True:
        num *= 2
        if num > max_samples:
            warnings.warn(MAX_SYS_SAMPLES_MSG, UserWarning)
            return nyquist / frequency
        refined = max_time_dependent_frequency(system, np.linspace(start_time, end_time, num))
        if abs(frequency - refined) < config.DEFAULT_TOLERANCE:
            return nyquist / frequency
        frequency = refined


def _round_significant(value: float, digits: int = 4) -> float:
    """``value`` rounded to ``digits`` significant figures (half to even, as NumPy's ``round``)."""
    if value == 0.0 or not math.isfinite(value):
        return value
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(abs(value))))
    return round(value * scale) / scale


def _estimate_epsrel(dkmax: int, tolerance: float) -> float:
    """``tolerance * 10**(-log4(dkmax))``: a longer memory needs a tighter SVD truncation."""
    power = math.log(dkmax) / math.log(4) - math.log(tolerance) / math.log(10)
    return 10.0 ** (-power)


def guess_tempo_parameters(
    bath: Bath,
    start_time: float,
    end_time: float,
    system: Optional[BaseSystem] = None,
    tolerance: float = config.DEFAULT_TOLERANCE,
    max_samples: int = config.MAX_SYS_SAMPLES,
) -> TempoParameters:
    """A rough estimate of TEMPO's parameters: the same guesses as OQuPy 0.5.

    .. warning::
        Nothing guarantees that a computation with these parameters is converged; always warns so
        (``UserWarning``).  Check convergence by varying the parameters.

    Parameters
    ----------
    bath: Bath
        Its correlation function sets a time step that resolves it to ``tolerance`` and the memory ``dkmax``
        after which the integral of its modulus is within ``tolerance`` of the total (on ``[0, end - start]``).
    start_time, end_time: float
        The time window of the computation.
    system: BaseSystem
        If given, the Nyquist step of its largest frequency replaces the bath's step when it is smaller, and
        ``dkmax`` grows to keep the same memory time.  The frequency is OQuPy 0.5's: the largest *squared*
        norm ``||O||^2`` of the Hamiltonian and of each ``gamma_n L_n`` (``H = 4 sigma_x`` gives
        ``dt = 0.5 / 16``), kept for parity.  Time-dependent systems are sampled on a refined grid of times.
    tolerance: float
        Relative tolerance of the estimate.
    max_samples: int
        Largest number of times at which a time-dependent system is sampled.

    Returns
    -------
    TempoParameters
        ``dt`` and ``epsrel = tolerance * 10**(-log4(dkmax))`` rounded to four significant figures, ``dkmax``;
        the description says which of bath and system limited ``dt``.
    """
    assert isinstance(bath, Bath), "Argument 'bath' must be a oqupy.Bath object."
    try:
        start, end = float(start_time), float(end_time)
    except Exception as err:
        raise TypeError("Start and end time must be a float.") from err
    if not (math.isfinite(start) and math.isfinite(end)):
        raise ValueError(f"Arguments 'start_time' and 'end_time' must be finite (got {start} and {end}).")
    if end <= start:
        raise ValueError(f"End time must be bigger than start time (got start_time {start}, end_time {end}).")
    assert system is None or isinstance(system, BaseSystem), (
        "Argument 'system' must be 'None' or a oqupy.BaseSystem object."
    )
    tolerance = check_convert(tolerance, float, "tolerance")
    assert 0.0 < tolerance < 1.0, (
        f"Argument 'tolerance' must lie in the open interval (0, 1) (got {tolerance})."
    )
    max_samples = check_convert(max_samples, int, "max_samples")
    assert max_samples > 0, "Argument 'max_samples' must be positive."
    warnings.warn(GUESS_WARNING_MSG, UserWarning)

    description = "Estimated with 'guess_tempo_parameters()' based on bath correlations"
    dt, dkmax = _estimate_from_correlations(bath.correlations, end - start, tolerance)
    if system is None:
        description += "."
    else:
        system_dt = _estimate_from_system(system, start, end, max_samples)
        if system_dt >= dt:
            description += " (limiting) and system frequencies."
        else:
            description += " and system frequencies (limiting)."
            dkmax = int(math.ceil(dkmax * dt / system_dt))
            dt = system_dt
    return TempoParameters(
        dt=_round_significant(dt),
        epsrel=_round_significant(_estimate_epsrel(dkmax, tolerance)),
        dkmax=dkmax,
        name="Roughly estimated parameters",
        description=description,
    )
