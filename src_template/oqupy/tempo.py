r"""TEMPO: time-evolving matrix product operators for a system coupled to a Gaussian bosonic bath.

Physics convention (stated once): ``H_total = H_S + S (x) B`` with the bath correlation
:math:`C(\tau) = \langle B(\tau) B(0) \rangle`; states are vectorised row-major; each step of length ``dt``
is ``prop_2 . influence . prop_1`` with the half-step propagators of the system.  The path of the
coupling eigenbasis index over the last ``dkmax`` steps is kept as a matrix product state (the augmented
density tensor) and truncated with the relative criterion ``epsrel``.

**[Strathearn2018]** A. Strathearn, P. Kirton, D. Kilda, J. Keeling and B. W. Lovett, *Efficient
non-Markovian quantum dynamics using time-evolving matrix product operators*, Nat. Commun. 9, 3322 (2018).
"""

import math
import warnings
from typing import Any, Dict, Optional

import numpy as np

from oqupy import _mps, config, operators
from oqupy._codegen import host
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.bath_correlations import BaseCorrelations
from oqupy.dynamics import Dynamics
from oqupy.system import BaseSystem, System, TimeDependentSystem
from oqupy.util import check_convert, check_true, get_progress

_ESTIMATE_WARNING = (
    "Estimating TEMPO parameters. No guarantee subsequent dynamics calculations are converged. "
    "Please refer to the TEMPO documentation and check convergence by varying the parameters manually."
)


@host
def _positive_float(value: Any, name: str, allow_zero: bool = False) -> float:
    number = check_convert(value, float, name)
    if math.isnan(number) or number < 0.0 or (number == 0.0 and not allow_zero):
        raise ValueError(f"Argument '{name}' must be {'non-negative' if allow_zero else 'positive'}.")
    return number


@host
def num_steps_between(start_time: float, end_time: float, dt: float) -> int:
    """Number of whole steps of length ``dt`` in ``[start_time, end_time]``, robust to rounding (0.3/0.1 = 3)."""
    ratio = (end_time - start_time) / dt
    nearest = round(ratio)
    if abs(ratio - nearest) <= 1e-9 * max(1.0, abs(ratio)):
        return int(nearest)
    return int(math.floor(ratio))


@host
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
        self._dt = _positive_float(dt, "dt")
        self._epsrel = _positive_float(epsrel, "epsrel")
        assert tcut is None or dkmax is None, "Only one of 'tcut', 'dkmax' should be specified."
        if tcut is not None:
            self._tcut: Optional[float] = _positive_float(tcut, "tcut", allow_zero=True)
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
            else _positive_float(add_correlation_time, "add_correlation_time", True)
        )
        if subdiv_limit is None:
            self._subdiv_limit: Optional[int] = None
        else:
            self._subdiv_limit = check_convert(subdiv_limit, int, "subdiv_limit")
            check_true(self._subdiv_limit >= 0, "Argument 'subdiv_limit' must be non-negative.")
        self._liouvillian_epsrel = _positive_float(liouvillian_epsrel, "liouvillian_epsrel")

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


@host
def self_influence(eta: complex, comm: np.ndarray, acomm: np.ndarray) -> np.ndarray:
    """``I0[b] = exp(-O-_b (Re eta O-_b + i Im eta O+_b))`` for the step with itself."""
    return np.exp(-comm * (eta.real * comm + 1j * eta.imag * acomm))


@host
def line_influence(
    eta: Any, comm_past: np.ndarray, acomm_past: np.ndarray, comm_current: np.ndarray
) -> np.ndarray:
    """``I[..., a, b] = exp(-(Re eta O-_a + i Im eta O+_a) O-_b)`` for every coefficient in ``eta`` (any shape)."""
    eta = np.asarray(eta)[..., None]
    past = eta.real * comm_past + 1j * eta.imag * acomm_past
    return np.exp(-past[..., :, None] * comm_current)


@host
def influence_matrix(
    dk: int,
    parameters: TempoParameters,
    correlations: BaseCorrelations,
    coupling_acomm: np.ndarray,
    coupling_comm: np.ndarray,
    deg_positions: Optional[tuple] = None,
) -> Optional[np.ndarray]:
    """The influence of step distance ``dk``: a vector for ``dk = 0``, a matrix ``I[past, current]`` otherwise.

    ``dk < 0`` is the memory tail (``None`` without ``add_correlation_time``).  ``deg_positions``
    (north representatives, west representatives) selects rows and columns under ``unique``.
    """
    dt = parameters.dt
    limit = parameters.subdiv_limit or config.SUBDIV_LIMIT
    comm, acomm = np.asarray(coupling_comm), np.asarray(coupling_acomm)
    if dk == 0:
        return self_influence(correlations.influence_coefficients(dt, 0, subdiv_limit=limit)[0], comm, acomm)
    if dk > 0:
        eta = correlations.influence_coefficients(dt, dk, subdiv_limit=limit)[dk]
    else:
        if parameters.add_correlation_time is None or parameters.dkmax is None:
            return None
        tail = min(-dk * dt, dt + parameters.add_correlation_time)  # dk = dkmax - (step + 1)
        eta = correlations.tail_coefficient(dt, parameters.dkmax, tail, subdiv_limit=limit)
    rows, columns = (slice(None), slice(None)) if deg_positions is None else deg_positions
    return line_influence(eta, comm[rows], acomm[rows], comm[columns])


@host
class _Influences:
    """All influence data of one run, computed on the host once (extended when the memory grows)."""

    def __init__(self, bath: Bath, parameters: TempoParameters, unique: bool) -> None:
        self.parameters = parameters
        self.correlations = bath.correlations
        self.comm = bath.coupling_comm
        self.acomm = bath.coupling_acomm
        dim2 = self.comm.shape[0]
        if unique:
            north, west = bath.north_degeneracy_map, bath.west_degeneracy_map
            self.north_rep = bath.north_degeneracy_representatives
            self.west_rep = bath.west_degeneracy_representatives
        else:
            north = west = np.arange(dim2)
            self.north_rep = self.west_rep = np.arange(dim2)
        self.north = (north[None, :] == np.arange(self.north_rep.shape[0])[:, None]).astype(config.NpDtype)
        self.west = (west[None, :] == np.arange(self.west_rep.shape[0])[:, None]).astype(config.NpDtype)
        self.limit = parameters.subdiv_limit or config.SUBDIV_LIMIT
        self.stack = np.zeros((0, self.north_rep.shape[0], self.west_rep.shape[0]), dtype=config.NpDtype)
        self.self_influence = np.ones(dim2, dtype=config.NpDtype)
        self.tails: Dict[float, np.ndarray] = {}
        self.extend(0)

    def _matrix(self, eta: Any) -> np.ndarray:
        return line_influence(
            eta, self.comm[self.north_rep], self.acomm[self.north_rep], self.comm[self.west_rep]
        )

    def extend(self, memory: int) -> None:
        """Make the influences of step distances ``1 ... memory`` available."""
        if 0 < memory <= self.stack.shape[0]:
            return
        eta = self.correlations.influence_coefficients(
            self.parameters.dt, max(memory, 1), subdiv_limit=self.limit
        )
        self.self_influence = self_influence(eta[0], self.comm, self.acomm)
        self.stack = self._matrix(eta[1:])

    def get(self, dk: int, step: int) -> np.ndarray:
        """Influence of distance ``dk`` at ``step``; the oldest kept distance carries the tail if enabled."""
        dkmax, extra = self.parameters.dkmax, self.parameters.add_correlation_time
        if extra is not None and dkmax is not None and dk == dkmax:
            # the oldest kept time stands for itself and every earlier, already summed time:
            # lags dkmax ... step, i.e. a rectangle of length (step + 1 - dkmax) dt (capped)
            dt = self.parameters.dt
            tail = min((step + 1 - dkmax) * dt, dt + extra)
            key = round(tail, 12)
            if key not in self.tails:
                eta = self.correlations.tail_coefficient(dt, dkmax, tail, subdiv_limit=self.limit)
                self.tails[key] = self._matrix(eta)
            return self.tails[key]
        return self.stack[dk - 1]


@host
def _check_initial_state(initial_state: Any, dimension: int) -> np.ndarray:
    if not hasattr(initial_state, "shape"):
        raise TypeError("Argument 'initial_state' must be a numpy or jax array (a density matrix).")
    state = np.array(initial_state, dtype=config.NpDtype)
    if state.shape != (dimension, dimension):
        raise ValueError(
            f"Argument 'initial_state' must have shape {(dimension, dimension)}, not {state.shape}."
        )
    if not np.all(np.isfinite(state)):
        raise ValueError("Argument 'initial_state' contains NaN or inf.")
    if not np.allclose(state, state.conj().T, atol=1e-10):
        raise ValueError("Argument 'initial_state' must be Hermitian (a density matrix).")
    if abs(np.trace(state) - 1.0) > 1e-8:
        raise ValueError(
            f"Argument 'initial_state' must have unit trace (trace is {np.trace(state).real:.6g})."
        )
    if np.linalg.eigvalsh(state).min() < -1e-8:
        raise ValueError("Argument 'initial_state' must be positive semi-definite.")
    return state


@host
def _check_system_and_bath(system: Any, bath: Any, parameters: Any, unique: Any) -> None:
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


class Tempo(BaseAPIClass):
    """Resumable TEMPO computation of the reduced dynamics.

    Parameters
    ----------
    system: System or TimeDependentSystem
        The system (Hamiltonian and Markovian terms).
    bath: Bath
        Coupling operator and bath correlations.
    parameters: TempoParameters
        dt, epsrel and memory cut-off.
    initial_state: ndarray
        Density matrix at ``start_time``.
    start_time: float
        Initial time.
    unique: bool
        Reduce path indices to degeneracy classes of the coupling (same results, smaller tensors).
    backend_config: dict
        Accepted for OQuPy compatibility; unused.
    """

    def __init__(
        self,
        system: BaseSystem,
        bath: Bath,
        parameters: TempoParameters,
        initial_state: np.ndarray,
        start_time: float,
        unique: bool = False,
        backend_config: Optional[dict] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        _check_system_and_bath(system, bath, parameters, unique)
        self._system = system
        self._bath = bath
        self._parameters = parameters
        self._initial_state = _check_initial_state(initial_state, system.dimension)
        self._start_time = check_convert(start_time, float, "start_time")
        self._unique = unique
        self._backend_config = backend_config
        self._influences = _Influences(bath, parameters, unique)
        unitary = np.asarray(bath.unitary_transform, dtype=config.NpDtype)
        self._to_eigenbasis = operators.left_right_super(unitary.conj().T, unitary)
        self._from_eigenbasis = operators.left_right_super(unitary, unitary.conj().T)
        dim = system.dimension
        self._sites: list = []
        self._current = np.asarray(self._initial_state).reshape(1, dim * dim)
        self._step = 0
        self._max_bond = 1
        self._dynamics = Dynamics(name=f"Dynamics of {self.name}")
        self._dynamics.add(self._start_time, self._initial_state)

    @property
    def dimension(self) -> int:
        """Hilbert space dimension of the system."""
        return self._system.dimension

    @property
    def max_bond_dimension(self) -> int:
        """Largest bond dimension kept so far."""
        return self._max_bond

    def get_dynamics(self) -> Dynamics:
        """All states computed so far."""
        return self._dynamics

    def compute(self, end_time: float, progress_type: Optional[str] = None) -> Dynamics:
        """Propagate up to ``end_time`` (continuing a previous computation) and return the dynamics."""
        end_time = check_convert(end_time, float, "end_time")
        parameters = self._parameters
        target = num_steps_between(self._start_time, end_time, parameters.dt)
        if target <= self._step:
            return self._dynamics
        count = target - self._step
        first_time = self._start_time + self._step * parameters.dt
        prop_1, prop_2 = self._system.get_propagator_stack(
            parameters.dt, first_time, count, parameters.subdiv_limit, parameters.liouvillian_epsrel
        )
        dkmax = parameters.dkmax
        self._influences.extend(target if dkmax is None else min(dkmax, target))
        dim = self.dimension
        with get_progress(progress_type)(count, title="--> TEMPO computation") as progress:
            for index in range(count):
                self._compute_step(prop_1[index], prop_2[index])
                state = _mps.read_out(self._sites, self._current).reshape(dim, dim)
                self._dynamics.add(self._start_time + self._step * parameters.dt, state)
                progress.update(index + 1)
        return self._dynamics

    def _compute_step(self, prop_1: np.ndarray, prop_2: np.ndarray) -> None:
        influences, step = self._influences, self._step
        current = self._current @ (self._to_eigenbasis @ prop_1).T
        count = len(self._sites)
        matrices = [influences.get(count - index, step) for index in range(count)]
        sites, line_end = _mps.zip_up(
            self._sites,
            current,
            matrices,
            influences.west,
            influences.self_influence,
            self._parameters.epsrel,
        )
        site, current = _mps.new_sites(line_end, influences.north, prop_2 @ self._from_eigenbasis)
        sites.append(site)
        sites, current, rank = _mps.sweep(sites, current, self._parameters.epsrel)
        self._max_bond = max(self._max_bond, rank)
        dkmax = self._parameters.dkmax
        if dkmax is not None and len(sites) > dkmax:
            if len(sites) > 1:
                sites = [_mps.sum_path(sites[0], sites[1]), *sites[2:]]
            else:
                current = _mps.sum_path(sites[0], current)
                sites = []
        self._sites = sites
        self._current = current
        self._step = step + 1


@host
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


@host
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


@host
def _hermitian_part(matrix: Any) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=config.NpDtype)
    return (matrix + matrix.conj().T) / 2


@host
def _round_significant(value: float, digits: int = 4) -> float:
    return float(f"{value:.{digits - 1}e}")


@host
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


def tempo_compute(
    system: BaseSystem,
    bath: Bath,
    initial_state: np.ndarray,
    start_time: float,
    end_time: float,
    parameters: Optional[TempoParameters] = None,
    tolerance: Optional[float] = config.DEFAULT_TOLERANCE,
    unique: bool = False,
    backend_config: Optional[dict] = None,
    progress_type: Optional[str] = None,
    name: Optional[str] = None,
    description: Optional[str] = None,
) -> Dynamics:
    """Shortcut: create a :class:`Tempo` (guessing parameters if none are given) and compute to ``end_time``."""
    if parameters is None:
        assert tolerance is not None, "If 'parameters' is None then 'tolerance' must be given."
        parameters = guess_tempo_parameters(bath, start_time, end_time, system, tolerance)
    tempo = Tempo(
        system, bath, parameters, initial_state, start_time, unique, backend_config, name, description
    )
    tempo.compute(end_time, progress_type=progress_type)
    return tempo.get_dynamics()
