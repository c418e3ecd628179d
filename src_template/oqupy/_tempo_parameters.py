"""TEMPO's computational parameters (``TempoParameters``) and their rough estimate (``guess_tempo_parameters``).

Host code: validation, and sampling of the bath correlation function and of the system's frequencies, in NumPy in
both packages.  ``oqupy.tempo`` re-exports the public names.
"""

import math
import warnings
from typing import Any, Optional

import numpy as np

from oqupy import config
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.bath_correlations import BaseCorrelations
from oqupy.system import BaseSystem, System, TimeDependentSystem
from oqupy.util import check_convert, check_true

__runs_on__ = "host"

__all__ = ["TempoParameters", "guess_tempo_parameters", "num_steps_between", "positive_float"]

_ESTIMATE_WARNING = (
    "Estimating TEMPO parameters. No guarantee subsequent dynamics calculations are converged. "
    "Please refer to the TEMPO documentation and check convergence by varying the parameters manually."
)


def positive_float(value: Any, name: str, allow_zero: bool = False) -> float:
    """``value`` as a float; ``ValueError`` naming the argument unless it is positive (or zero, if allowed)."""
    number = check_convert(value, float, name)
    if math.isnan(number) or number < 0.0 or (number == 0.0 and not allow_zero):
        raise ValueError(f"Argument '{name}' must be {'non-negative' if allow_zero else 'positive'}.")
    return number


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
        Time step (> 0).
    epsrel: float
        Relative SVD truncation tolerance (> 0).
    tcut: float
        Memory cut-off time (>= 0); ``dkmax = ceil(tcut / dt)``.  Give at most one of ``tcut`` and ``dkmax``.
    dkmax: int
        Memory cut-off in steps (>= 0).  Neither: full memory.
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
        self._dt = positive_float(dt, "dt")
        self._epsrel = positive_float(epsrel, "epsrel")
        assert tcut is None or dkmax is None, "Only one of 'tcut', 'dkmax' should be specified."
        if tcut is not None:
            self._tcut: Optional[float] = positive_float(tcut, "tcut", allow_zero=True)
            self._dkmax: Optional[int] = int(math.ceil(round(self._tcut / self._dt, 10)))
        elif dkmax is not None:
            if not isinstance(dkmax, int) or isinstance(dkmax, bool):
                raise TypeError("Argument 'dkmax' must be int.")
            if dkmax < 0:
                raise ValueError("Argument 'dkmax' must be non-negative.")
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
        self._liouvillian_epsrel = positive_float(liouvillian_epsrel, "liouvillian_epsrel")

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


def _estimate_from_correlations(correlations: BaseCorrelations, duration: float, tolerance: float) -> tuple:
    """(dt, dkmax) resolving C(tau) to ``tolerance`` (relative to the integral of |C|) over ``duration``."""
    intervals = 10
    while True:
        taus = np.linspace(0.0, duration, 2 * intervals + 1)
        values = np.abs(np.asarray(correlations.correlation(taus), dtype=config.NpDtype))
        coarse = (values[:-2:2] + values[2::2]) * (taus[2] - taus[0]) / 2
        fine = (values[:-2:2] + 2 * values[1:-1:2] + values[2::2]) * (taus[1] - taus[0]) / 2
        total = float(np.sum(fine))
        if total == 0.0:
            return duration, 1
        errors = np.abs(coarse - fine) / total
        if np.all(errors < tolerance):
            break
        if 2 * intervals > config.MAX_DKMAX:
            warnings.warn(
                f"Reached maximal number of samples ({config.MAX_DKMAX}) estimating dt.", UserWarning
            )
            break
        intervals *= 2
    dt = float(taus[1] - taus[0])
    cumulative = np.cumsum((values[1:] + values[:-1]) * dt / 2)
    cut = int(np.searchsorted(cumulative, (1.0 - tolerance) * cumulative[-1]))
    dkmax = min(cut + 2, len(taus) - 1)
    return dt, max(dkmax, 1)


def _estimate_from_system(system: Any, start_time: float, end_time: float, max_samples: int) -> float:
    """Half the inverse of the largest frequency of the system (Hamiltonian and rates)."""
    if isinstance(system, System):
        operators_at = [(system.hamiltonian, 1.0)] + list(zip(system.lindblad_operators, system.gammas))
        norms = [
            abs(rate) * np.max(np.abs(np.linalg.eigvalsh(_hermitian_part(op)))) for op, rate in operators_at
        ]
        return 0.5 / max(max(norms), 1e-300)
    samples = min(max_samples, 100)
    if samples >= max_samples:
        warnings.warn(
            f"Reached maximal number of samples ({max_samples}) estimating system frequencies.", UserWarning
        )
    largest = 0.0
    for t in np.linspace(start_time, end_time, samples):
        largest = max(
            largest, float(np.max(np.abs(np.linalg.eigvalsh(_hermitian_part(system.hamiltonian(t))))))
        )
        for gamma, op in zip(system.gammas, system.lindblad_operators):
            largest = max(
                largest,
                abs(float(gamma(t))) * float(np.max(np.abs(np.linalg.eigvalsh(_hermitian_part(op(t)))))),
            )
    return 0.5 / max(largest, 1e-300)


def _hermitian_part(matrix: Any) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=config.NpDtype)
    return (matrix + matrix.conj().T) / 2


def _round_significant(value: float, digits: int = 4) -> float:
    return float(f"{value:.{digits - 1}e}")


def guess_tempo_parameters(
    bath: Bath,
    start_time: float,
    end_time: float,
    system: Optional[BaseSystem] = None,
    tolerance: float = config.DEFAULT_TOLERANCE,
    max_samples: int = config.MAX_SYS_SAMPLES,
) -> TempoParameters:
    """A rough guess of dt, dkmax and epsrel; always warns that convergence is not guaranteed."""
    assert isinstance(bath, Bath), "Argument 'bath' must be an oqupy.Bath object."
    start = check_convert(start_time, float, "start_time")
    end = check_convert(end_time, float, "end_time")
    check_true(end > start, "End time must be bigger than start time.")
    assert system is None or isinstance(system, (System, TimeDependentSystem)), "Unknown system type."
    tolerance = check_convert(tolerance, float, "tolerance")
    assert tolerance > 0.0, "Argument 'tolerance' must be positive."
    if not isinstance(max_samples, int):
        raise TypeError("Argument 'max_samples' must be int.")
    assert max_samples > 0, "Argument 'max_samples' must be positive."
    warnings.warn(_ESTIMATE_WARNING, UserWarning)
    dt, dkmax = _estimate_from_correlations(bath.correlations, end - start, tolerance)
    if system is not None:
        dt_system = _estimate_from_system(system, start, end, max_samples)
        if dt_system < dt:
            dkmax = int(math.ceil(dkmax * dt / dt_system))
            dt = dt_system
    epsrel = tolerance * 10 ** (-math.log(dkmax, 4)) if dkmax > 1 else tolerance
    return TempoParameters(
        dt=_round_significant(dt),
        epsrel=_round_significant(epsrel),
        dkmax=dkmax,
        name="Roughly estimated parameters",
        description="Estimated with 'guess_tempo_parameters()'",
    )
