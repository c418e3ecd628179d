r"""Stationary correlations, spectra and multi-time correlations through uniform process tensors.

With a time-independent system and uniform process tensors every step of :func:`oqupy.compute_dynamics` is the
same linear map ``T`` of the carried state ``s[chi_1, ..., chi_E, x]`` (bond legs, then ``vec(rho)``).  Its
eigenvector of eigenvalue 1 is the steady state *with its bath memory* (the bond legs), so an operator applied
to it is an operator applied at a time ``t -> infinity``.  Every stationary correlation is then a product of
``T``'s powers and of operators, read out with the caps ``v_r``:

``C(tau_k) = <B(t + tau_k) A(t)>  =  b^T T^k a``, ``a = (A . s_ss)``, ``b`` = the read-out of ``B``,

and with ``T = V diag(lambda) V^-1`` every power is a sum of ``lambda_j^k``: all lags at once, and the
Fourier transform in closed form (a geometric series per eigenvalue): the tail needs no window.

Conventions (those of :func:`oqupy.compute_correlations`, whose ``t -> infinity`` limit these are):

- ``C(tau) = <B(t + tau) A(t)>`` is the limit of ``compute_correlations(system, pt, operator_a, operator_b,
  times_a=t, times_b=t + tau)``.  ``time_order='ordered'``: ``tau = k dt >= 0`` (``A`` first: ``rho -> A rho``,
  then ``tr(B rho(tau))``); ``'anti'``: ``tau = -k dt <= 0`` (``rho -> rho B``, then ``tr(A rho(|tau|))``);
  ``'full'``: both.
- Spectrum: ``S(omega) = int dtau exp(-i omega tau) [C(tau) - C(infinity)]`` over all ``tau``, so that
  ``int S(omega) d omega / (2 pi) = <B A> - <B><A>``.  With ``A = sigma^-``, ``B = sigma^+`` it is the emission
  spectrum (``C ~ exp(+i epsilon tau)``: a line at ``omega = +epsilon``); with ``A = sigma^+``, ``B = sigma^-``
  the absorption spectrum, whose line is at ``omega = -epsilon`` in this convention.
- Modes of ``T`` with ``|lambda| >= 1 - UNDAMPED`` never decay: ``C(infinity) = <B><A>`` (``lambda = 1``) and any
  undamped oscillation are returned apart, as lines ``2 pi w delta(omega - Omega)`` (``return_lines``).

Host code in both packages: exact steps through the map (dimension ``prod(chi_e) d^2``, applied as the
structured step of :mod:`oqupy._transfer_map`) until a state has settled into the map's few slow modes, then
those modes (:mod:`oqupy._slow_modes`; a dense eigendecomposition with ``method='dense'``, or where no slow modes
separate); where every power needed is within ``EXACT_STEPS``, the steady state from one linear solve and exact
steps only.  The spectrum by linear solves (``method='solve'``) computes with ``jax.numpy`` when ``oqupy_jax``
traces the system (:mod:`oqupy._boundary`), so ``jax.grad`` goes through it.  Where the map is real in the real
basis (``TransferMap.real``) the solved steady state is a real solve, and ``oqupy_jax`` steps exact powers there, one
jitted scan per chain (:func:`oqupy._transfer_map.powers`; ``docs/benchmarks.md``).
"""

import warnings
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from oqupy import config
from oqupy._boundary import array_namespace, to_host
from oqupy._slow_modes import Apply, SlowModes, dense_modes, slow_modes, walk
from oqupy._transfer_map import (
    TransferMap,
    apply_super,
    check_gaps,
    check_operator,
    check_steps,
    dense_matrix,
    on_columns,
    powers,
    read_row,
    scan_rows,
    solved_state,
    transfer_map,
    unique_state,
)
from oqupy.operators import left_super, right_super
from oqupy.system import System
from oqupy.util import get_progress

__runs_on__ = "host"

__all__ = [
    "SpectralLines",
    "compute_spectrum",
    "compute_stationary_correlations",
    "compute_stationary_multitime_correlations",
]

DENSE_LIMIT = 4000
"""The largest transfer map (``prod(chi_e) d^2``) that is diagonalised."""

UNIT_TOLERANCE = 1e-7
"""Eigenvalues within this distance of 1 count as steady states (relaxation slower than 1e7 steps)."""

UNDAMPED = 1e-9
"""Modes with ``|lambda| >= 1 - UNDAMPED`` are lines (delta peaks) of the spectrum, not part of the continuum."""

EXACT_STEPS = 256
"""Correlations whose powers of ``T`` all stay within this many steps are stepped exactly from a solved steady
state (``method='eig'``, no ``initial_state``): no modes are needed, and finding them costs more steps."""

SOLVE_RCOND = 1e-6
"""Below this reciprocal condition number of ``1 - T + v r`` the solved steady state is not trusted (the steady
state may not be unique) and the modes decide."""

CHECK_STEPS = 20
"""Lags at which the eigendecomposition is checked against step-by-step propagation."""

EIG_TOLERANCE = 1e-8
"""Relative deviation of the eigendecomposition from propagation above which a warning is given."""

_CHUNK = 2048  # lags per matrix-vector product in ``_series``


class _Stationary(NamedTuple):
    """The transfer map (``T`` on columns), its modes and the steady state."""

    transfer: TransferMap
    forward: Apply  # x -> T x, by the structured step
    # the slow modes after an exact head, or every mode; None: every power is stepped
    modes: Optional[SlowModes]
    state: np.ndarray  # s_ss
    dense: Optional[SlowModes]  # with a dense eigendecomposition: the modes of T^T (from the same one)

    def left_modes(self, top: int) -> Optional[SlowModes]:
        """Modes of ``T^T`` for powers up to ``top`` (``None``: none needed, ``top`` is within the head)."""
        if self.modes is None:
            return None
        if self.dense is not None:
            return self.dense
        if top <= self.modes.head:
            return None
        size = len(self.state)
        backward = on_columns(self.transfer.back)
        return slow_modes(backward, size, _limit(size)) or dense_modes(dense_matrix(self.transfer))[1]


def _limit(size: int) -> int:
    """Steps within which the slow modes must separate (beyond them the dense eigendecomposition is cheaper)."""
    return max(256, 4 * size)


def _stationary(
    transfer: TransferMap, initial_state: Any, dense: bool = False, top: Optional[int] = None
) -> _Stationary:
    """The transfer map's (slow) modes and the steady state they select; for powers up to ``top <=
    EXACT_STEPS`` (and no ``initial_state``) the steady state from one linear solve and no modes."""
    if transfer.traced:
        raise TypeError(
            "Under jax.grad, jit or vmap the eigendecomposition (method='eig') cannot run: use the default "
            "method (compute_spectrum: 'solve'; the others: step by step from a solved steady state)."
        )
    size = int(np.prod(transfer.shape))
    forward = on_columns(transfer.step)
    dim = transfer.dim
    trace_row = read_row(transfer, np.identity(dim))
    if not dense and initial_state is None and top is not None and top <= EXACT_STEPS:
        solved = unique_state(transfer, SOLVE_RCOND, UNIT_TOLERANCE)
        if solved is not None:
            return _Stationary(transfer, forward, None, solved / (trace_row @ solved), None)
    modes = None if dense else slow_modes(forward, size, _limit(size))
    left = None
    if modes is None:
        if size > DENSE_LIMIT:
            raise ValueError(
                f"The transfer map has dimension {size} (bonds {transfer.shape[:-1]}), above DENSE_LIMIT "
                f"({DENSE_LIMIT}), and its slow modes do not separate: use a larger epsrel for the process tensor."
            )
        modes, left = dense_modes(dense_matrix(transfer))
    values = modes.values
    unit = np.flatnonzero(np.abs(values - 1.0) < UNIT_TOLERANCE)
    if len(unit) == 0:
        raise ValueError(
            "The transfer map has no eigenvalue 1 (the process tensor does not preserve the trace): "
            f"largest |lambda| = {np.max(np.abs(values)):.3e}."
        )
    if initial_state is None:
        if len(unit) > 1:
            raise ValueError(
                f"The steady state is not unique ({len(unit)} eigenvalues within {UNIT_TOLERANCE} of 1, e.g. "
                "conserved populations): give 'initial_state' to select the sector the system relaxes in."
            )
        state = modes.vectors[:, unit[0]]
    else:
        rho = np.asarray(initial_state, dtype=config.NpDtype)
        if rho.shape != (dim, dim):
            raise ValueError(f"Argument 'initial_state' must have shape {(dim, dim)}, not {rho.shape}.")
        start = np.kron(transfer.left, rho.reshape(-1))
        # the part of the initial state in the eigenvalue-1 subspace (the spectral projector), read where the
        # state has settled into the slow modes (k steps on), with the unit modes' lambda^k undone
        _, seam, coefficients = walk(forward, modes, start[:, None], np.inf, None)
        assert coefficients is not None
        state = modes.vectors[:, unit] @ (coefficients[unit, 0] / values[unit] ** seam)
    trace = trace_row @ state
    if abs(trace) < 1e-12:
        raise ValueError("The initial state has no weight in a steady state (its trace vanishes there).")
    return _Stationary(transfer, forward, modes, state / trace, left)


def _series(values: np.ndarray, weights: np.ndarray, num_steps: int) -> np.ndarray:
    """``sum_j weights_j values_j^k`` for ``k = 0 .. num_steps``: one table of ``values^0 ... values^(c-1)`` and
    one matrix-vector product per chunk of ``c`` lags (the weights advanced by ``values^c`` between chunks)."""
    chunk = min(_CHUNK, num_steps + 1)
    table = np.power(values[None, :], np.arange(chunk)[:, None])
    advance = np.power(values, chunk)
    parts = []
    current = weights
    for _ in range(0, num_steps + 1, chunk):
        parts.append(table @ current)
        current = current * advance
    return np.concatenate(parts)[: num_steps + 1]


def _propagated(stationary: _Stationary, row: np.ndarray, start: np.ndarray, num_steps: int) -> np.ndarray:
    """``row . T^k start`` for ``k = 0 .. num_steps`` by step-by-step propagation."""
    result = np.empty(num_steps + 1, dtype=config.NpDtype)
    vector = start[None]
    result[0] = row @ start
    for k in range(1, num_steps + 1):
        vector = stationary.transfer.step(vector)
        result[k] = row @ vector[0]
    return result


def _one_side(
    stationary: _Stationary,
    row: np.ndarray,
    start: np.ndarray,
    num_steps: int,
    method: str,
) -> np.ndarray:
    """``row . T^k start`` for ``k = 0 .. num_steps`` by ``method``: the exact head and the slow modes; every step
    (``'propagate'``); the dense eigendecomposition (checked against propagation over the first steps)."""
    if method == "propagate":
        return _propagated(stationary, row, start, num_steps)
    modes = stationary.modes
    if stationary.dense is None or modes is None:
        return powers(
            stationary.transfer, stationary.forward, modes, start[:, None], np.arange(num_steps + 1), row
        )[0]
    series = _series(modes.values, (row @ modes.vectors) * modes.coordinates(start), num_steps)
    check = min(num_steps, CHECK_STEPS)
    reference = _propagated(stationary, row, start, check)
    deviation = float(np.max(np.abs(series[: check + 1] - reference)))
    if deviation > EIG_TOLERANCE * max(1.0, float(np.max(np.abs(reference)))):
        warnings.warn(
            f"The transfer map's eigendecomposition is ill-conditioned (deviation {deviation:.1e} from "
            "propagation over the first steps): use method='propagate'.",
            UserWarning,
            stacklevel=3,
        )
    return series


def compute_stationary_correlations(
    system: System,
    process_tensor: Any,
    operator_a: np.ndarray,
    operator_b: np.ndarray,
    num_steps: int,
    time_order: str = "ordered",
    initial_state: Optional[np.ndarray] = None,
    dt: Optional[float] = None,
    method: str = "eig",
    progress_type: Optional[str] = None,
) -> Tuple[np.ndarray, np.ndarray]:
    r"""Two-time correlation ``C(tau) = <B(t + tau) A(t)>`` in the steady state (``t -> infinity``).

    The limit of :func:`oqupy.compute_correlations` ``(system, pt, operator_a, operator_b, times_a=t,
    times_b=t + tau)`` at late ``t``, from one eigendecomposition of a step's transfer map (no transient is
    propagated).  Only a time-independent :class:`oqupy.System` and uniform process tensors
    (:class:`oqupy.TtiProcessTensor`) have a stationary limit; anything else is refused (``TypeError``).

    Parameters
    ----------
    system: System
        The time-independent system.
    process_tensor: TtiProcessTensor or list of them
        The environments, each uniform.
    operator_a, operator_b: ndarray
        ``A`` (at the time ``t``) and ``B`` (at ``t + tau``), each ``d x d``.
    num_steps: int
        Number of lags (positive): ``tau_k = k dt`` for ``k = 0 .. num_steps``.
    time_order: str
        ``'ordered'``: ``tau >= 0``; ``'anti'``: ``tau <= 0`` (``<B(t) A(t + |tau|)>``); ``'full'``: both.
    initial_state: ndarray
        Where the steady state is not unique (e.g. pure dephasing conserves the populations), the state the
        system starts in selects the one it relaxes to; without it a non-unique steady state is a
        ``ValueError``.
    dt: float
        Time step (default: the process tensors').
    method: str
        ``'eig'`` (default): the first lags step by step, until the state has settled into the transfer map's
        slow modes (those that outlive the fast ones by ``1 / SEAM_TOLERANCE``), every later lag from the
        slow modes' eigendecomposition (for ``num_steps <= EXACT_STEPS`` and no ``initial_state``: the steady
        state from one linear solve and every lag step by step); ``'dense'``: every lag from the dense
        eigendecomposition of the whole map (checked against propagation over the first ``CHECK_STEPS``
        lags; ``UserWarning`` if it deviates by more than ``EIG_TOLERANCE``; what ``'eig'`` falls back to where
        no slow modes separate);
        ``'propagate'``: step by step from the steady state.  When ``oqupy_jax`` traces the system (``jax.grad``,
        ``jax.vmap``) the steady state is solved for (it must be unique) and the lags are one ``lax.scan``.
    progress_type: str
        Accepted for symmetry with :func:`oqupy.compute_correlations` (the computation is one call).

    Returns
    -------
    tau: ndarray
        The lags, ascending (``num_steps + 1`` of them; ``2 num_steps + 1`` for ``'full'``).
    correlation: ndarray
        ``C(tau)`` at each lag.
    """
    if time_order not in ("ordered", "anti", "full"):
        raise ValueError(f"Argument 'time_order' must be 'ordered', 'anti' or 'full', not {time_order!r}.")
    steps = check_steps(num_steps)
    if method not in ("eig", "dense", "propagate"):
        raise ValueError(f"Argument 'method' must be 'eig', 'dense' or 'propagate', not {method!r}.")
    with get_progress(progress_type)(1, title="--> Compute stationary correlations") as progress:
        transfer = transfer_map(system, process_tensor, dt)
        a = check_operator(operator_a, transfer.dim, "operator_a")
        b = check_operator(operator_b, transfer.dim, "operator_b")
        if transfer.traced:  # oqupy_jax under jax.grad / vmap: a solved steady state and one scan per side
            _traced_only(initial_state)
            matrix, state, _ = solved_state(transfer)

            def side(superoperator: np.ndarray, row: np.ndarray) -> Any:
                return scan_rows(matrix, apply_super(transfer, superoperator, state[None]), steps, row)[:, 0]

        else:
            stationary = _stationary(transfer, initial_state, method == "dense", steps)

            def side(superoperator: np.ndarray, row: np.ndarray) -> Any:
                start = apply_super(transfer, superoperator, stationary.state[None])[0]
                return _one_side(stationary, row, start, steps, method)

        lags = np.arange(steps + 1)
        parts: List[Any] = []
        taus: List[np.ndarray] = []
        if time_order in ("anti", "full"):
            anti = side(right_super(b), read_row(transfer, a))
            parts.append(anti[::-1] if time_order == "anti" else anti[:0:-1])
            taus.append(-transfer.dt * lags[::-1] if time_order == "anti" else -transfer.dt * lags[:0:-1])
        if time_order in ("ordered", "full"):
            parts.append(side(left_super(a), read_row(transfer, b)))
            taus.append(transfer.dt * lags)
        progress.update(1)
    return np.concatenate(taus).astype(config.NpDtypeReal), array_namespace(*parts).concatenate(parts)


def _traced_only(initial_state: Any) -> None:
    """A traced system (``oqupy_jax``) needs a unique steady state: no ``initial_state`` selects one."""
    if initial_state is not None:
        raise ValueError(
            "Under jax.grad, jit or vmap the steady state is solved for (it must be unique): no 'initial_state'."
        )


class SpectralLines(NamedTuple):
    """Undamped parts of a stationary correlation: ``S`` holds ``2 pi weights_j delta(omega - frequencies_j)``."""

    frequencies: np.ndarray
    weights: np.ndarray


def _spectrum_by_solve(transfer: TransferMap, a: np.ndarray, b: np.ndarray, frequencies: np.ndarray) -> Any:
    """``S(omega)`` from one linear solve per frequency, with the steady state from one more: no eigenvectors.

    ``s_ss`` from :func:`oqupy._transfer_map.solved_state`; ``T' = T - s_ss r`` is the map without its steady
    mode: ``sum_k z^k T^k (u - s_ss r u) = (1 - z T')^-1 (u - s_ss r u)``.
    """
    matrix, state, trace_row = solved_state(transfer)
    xp = array_namespace(matrix)
    identity = np.identity(matrix.shape[0], dtype=config.NpDtype)
    deflated = matrix - xp.outer(state, trace_row)
    ordered = apply_super(transfer, left_super(a), state[None])[0]
    ordered = ordered - state * (trace_row @ ordered)
    anti = apply_super(transfer, right_super(b), state[None])[0]
    anti = anti - state * (trace_row @ anti)
    row_b, row_a = read_row(transfer, b), read_row(transfer, a)
    values = []
    for frequency in frequencies:
        phase = np.exp(-1j * float(frequency) * transfer.dt)
        forward = row_b @ xp.linalg.solve(identity - phase * deflated, ordered)
        backward = row_a @ xp.linalg.solve(identity - deflated / phase, anti)
        values.append(forward + backward - row_b @ ordered)
    return transfer.dt * xp.stack(values)


def compute_spectrum(
    system: System,
    process_tensor: Any,
    operator_a: np.ndarray,
    operator_b: np.ndarray,
    omega: Optional[Sequence[float]] = None,
    initial_state: Optional[np.ndarray] = None,
    dt: Optional[float] = None,
    num_points: int = 4096,
    return_lines: bool = False,
    method: Optional[str] = None,
) -> Any:
    r"""Spectrum ``S(omega) = int dtau exp(-i omega tau) [<B(tau) A(0)>_ss - <B><A>]`` over all ``tau``.

    ``C(tau) = <B(t + tau) A(t)>`` as in :func:`compute_stationary_correlations`; the transform is the
    trapezoidal sum over the lags ``tau = k dt`` (all of them, ``k`` from ``-inf`` to ``inf``), summed in closed
    form: the lags up to the seam ``K`` (where the state has settled into the transfer map's slow modes) summed
    directly, and each decaying slow mode ``w lambda^(k - K)`` beyond it contributes
    ``dt z^K w / (1 - lambda z)``, ``z = exp(-i omega dt)``, so there is no window and no truncated tail.  The undamped modes
    (``|lambda| >= 1 - UNDAMPED``: the coherent part ``<B><A>`` at ``omega = 0``, and any undamped oscillation)
    are left out of ``S`` and returned apart with ``return_lines``.  The sum is periodic in ``omega`` with period
    ``2 pi / dt``: it stands for the continuous transform for ``|omega| << pi / dt``, up to the process
    tensor's own error (and the trapezoid's ``O(dt^2)``).  Over one period it obeys the sum rule
    ``int S d omega / (2 pi) = <B A> - <B><A>`` (to rounding, minus the undamped oscillations' weights).

    With ``A = sigma^-``, ``B = sigma^+`` this is the emission spectrum (lines at ``omega = +epsilon`` for a
    splitting ``epsilon``); with ``A = sigma^+``, ``B = sigma^-`` the absorption spectrum, at ``omega =
    -epsilon``.  For ``B = A^dagger`` it is real and non-negative; then the real part is returned.

    Parameters
    ----------
    system, process_tensor, operator_a, operator_b, initial_state, dt:
        As for :func:`compute_stationary_correlations`.
    omega: array_like
        Angular frequencies (default: ``num_points`` points over ``[-pi / dt, pi / dt)``).
    num_points: int
        Number of default frequencies.
    return_lines: bool
        Also return the undamped modes as :class:`SpectralLines` (``method='eig'`` only).
    method: str
        ``'eig'``: the exact head and the slow modes, for all frequencies (the default for concrete values);
        ``'dense'``: the dense eigendecomposition of the whole map.  ``'solve'``:
        one linear solve of the transfer map's dimension per frequency, for a few frequencies; it needs a unique
        steady state and no undamped oscillation, and it is what runs (the default) when ``oqupy_jax`` traces
        the system: ``jax.grad`` of a spectral feature with respect to the system's parameters, e.g. of
        ``compute_spectrum(System(h(x)), pt, a, b, omega=[w0], method='solve')[1][0]``.

    Returns
    -------
    omega: ndarray
        The frequencies.
    spectrum: ndarray
        ``S(omega)`` (real if ``B = A^dagger``, complex otherwise).
    lines: SpectralLines
        Only with ``return_lines``: the frequencies ``Omega_j`` and weights ``w_j`` of the undamped modes of
        ``C(tau)`` for ``tau >= 0`` (``C(tau) -> sum_j w_j exp(i Omega_j tau)``; weights below ``1e-12`` of
        ``C(0)`` are left out).
    """
    transfer = transfer_map(system, process_tensor, dt)
    if method is None:
        method = "solve" if transfer.traced else "eig"
    if method not in ("eig", "dense", "solve"):
        raise ValueError(f"Argument 'method' must be 'eig', 'dense' or 'solve', not {method!r}.")
    a = check_operator(operator_a, transfer.dim, "operator_a")
    b = check_operator(operator_b, transfer.dim, "operator_b")
    step_dt = transfer.dt
    if omega is None:
        points = check_steps(num_points, "num_points")
        frequencies = (np.arange(points) / points - 0.5) * (2.0 * np.pi / step_dt)
    else:
        frequencies = np.asarray(omega, dtype=config.NpDtypeReal).reshape(-1)
        if not np.all(np.isfinite(frequencies)):
            raise ValueError("Argument 'omega' contains NaN or inf.")
    hermitian = np.allclose(b, a.conj().T)
    if method == "solve":
        if initial_state is not None or return_lines:
            raise ValueError(
                "method='solve' takes no 'initial_state' and no 'return_lines' (use method='eig')."
            )
        solved = _spectrum_by_solve(transfer, a, b, frequencies)
        solved = solved.real if hermitian else solved
        return frequencies, (solved if transfer.traced else to_host(solved))
    stationary = _stationary(transfer, initial_state, method == "dense")
    phase = np.exp(-1j * frequencies * step_dt)
    forward, first, lines = _transform(
        stationary,
        read_row(transfer, b),
        apply_super(transfer, left_super(a), stationary.state[None])[0],
        phase,
    )
    backward, _, _ = _transform(
        stationary,
        read_row(transfer, a),
        apply_super(transfer, right_super(b), stationary.state[None])[0],
        phase.conj(),
    )
    spectrum = step_dt * (forward + backward - first)
    if hermitian:
        spectrum = spectrum.real
    if not return_lines:
        return frequencies, spectrum
    return frequencies, spectrum, lines


def _transform(
    stationary: _Stationary, row: np.ndarray, start: np.ndarray, phase: np.ndarray
) -> Tuple[np.ndarray, complex, SpectralLines]:
    """``sum_k z^k c_k`` over ``k >= 0`` for each ``z`` in ``phase``, with ``c_k = row . T^k start`` less its
    undamped modes: the exact head ``k < K`` summed directly, the slow modes' tail ``w lambda^(k - K)`` in
    closed form (``z^K w / (1 - lambda z)``).  Also ``c_0`` (less the undamped modes) and the undamped modes."""
    modes = stationary.modes
    assert modes is not None  # top=None: the modes are found
    records, seam, coefficients = walk(stationary.forward, modes, start[:, None], np.inf, row)
    assert coefficients is not None
    values = modes.values
    weights = (row @ modes.vectors) * coefficients[:, 0]  # c_(K + j) = sum_m weights_m values_m^j
    undamped = np.abs(values) >= 1.0 - UNDAMPED
    initial = weights[undamped] / values[undamped] ** seam  # their weights at k = 0
    lags = np.arange(seam)
    head = np.array([record[0] for record in records[:seam]], dtype=config.NpDtype)
    head = head - np.power(values[undamped][None, :], lags[:, None]) @ initial
    decaying = ~undamped
    tail = (weights[decaying][None, :] / (1.0 - values[decaying][None, :] * phase[:, None])).sum(axis=1)
    total = np.zeros_like(phase)
    for value in head[::-1]:  # Horner: sum_k z^k head_k
        total = total * phase + value
    total = total + phase**seam * tail
    first = head[0] if seam > 0 else weights[decaying].sum()
    scale = max(1.0, float(np.abs(records[0][0])))
    kept = np.abs(initial) > 1e-12 * scale
    lines = SpectralLines(np.angle(values[undamped][kept]) / stationary.transfer.dt, initial[kept])
    return total, first, lines


def compute_stationary_multitime_correlations(
    system: System,
    process_tensor: Any,
    operators: List[np.ndarray],
    ops_order: List[str],
    gaps: List[Any],
    initial_state: Optional[np.ndarray] = None,
    dt: Optional[float] = None,
    method: Optional[str] = None,
) -> Tuple[List[np.ndarray], np.ndarray]:
    r"""Multi-time correlation in the steady state: ``O_1`` at ``t``, ``O_2`` at ``t + g_1 dt``, ... .

    As :func:`oqupy.compute_correlations_nt` at ``t -> infinity``: each ``O_i`` acts on the state at its
    time from the ``'left'`` (``rho -> O rho``) or the ``'right'`` (``rho -> rho O``), the state propagates
    ``g_i`` steps between ``O_i`` and ``O_{i+1}``, and the last operator is read out, ``tr(O_n rho)``.  E.g.
    ``<O_3(t + tau_1 + tau_2) O_2(t + tau_1) O_1(t)>`` is ``ops_order=['left', 'left', 'left']``; an operator
    from the 'right' multiplies the state from the right (it acts on the bra): the pathways of a third-order
    response function are such combinations (see the Spectra page).  Every gap is a power of the transfer map: with
    ``method='eig'`` (default) step by step up to the seam and through the slow modes beyond it (the last gap
    from the read-out's side, ``O(M)`` per entry), for a map of dimension ``M`` (with every gap within
    ``EXACT_STEPS`` and no ``initial_state``: a solved steady state and exact steps only, no modes needed);
    ``'dense'`` through the dense
    eigendecomposition; with ``'propagate'`` step by step, all
    combinations of the earlier gaps advanced together as one block (one ``lax.scan`` per gap in
    ``oqupy_jax``: what runs, the default, when the system is traced, so ``jax.grad`` and ``jax.vmap`` go
    through it; the steady state must then be unique).

    Parameters
    ----------
    system, process_tensor, initial_state, dt:
        As for :func:`compute_stationary_correlations`.
    operators: list of ndarray
        ``O_1 ... O_n`` (``n >= 2``), each ``d x d``.
    ops_order: list of str
        ``'left'`` or ``'right'`` for each operator (the last one's is immaterial: ``tr(O rho) = tr(rho O)``).
    gaps: list
        ``n - 1`` entries, each an int or a sequence of ints: the steps between ``O_i`` and ``O_{i+1}``.
    method: str
        ``'eig'``, ``'dense'`` or ``'propagate'`` (default: ``'eig'``; ``'propagate'`` for a traced system).

    Returns
    -------
    delays: list of ndarray
        The ``n - 1`` delays ``g_i dt``.
    correlations: ndarray
        Shape ``(len(g_1), ..., len(g_{n-1}))``.
    """
    if not isinstance(operators, (list, tuple)) or not isinstance(ops_order, (list, tuple)):
        raise TypeError("Arguments 'operators' and 'ops_order' must be lists.")
    if len(operators) < 2 or len(ops_order) != len(operators):
        raise ValueError("Give at least two 'operators' and one 'ops_order' entry per operator.")
    for order in ops_order:
        if order not in ("left", "right"):
            raise ValueError(f"Entries of 'ops_order' must be 'left' or 'right', not {order!r}.")
    steps = check_gaps(gaps, len(operators) - 1)
    transfer = transfer_map(system, process_tensor, dt)
    method = ("propagate" if transfer.traced else "eig") if method is None else method
    if method not in ("eig", "dense", "propagate"):
        raise ValueError(f"Argument 'method' must be 'eig', 'dense' or 'propagate', not {method!r}.")
    matrices = [check_operator(op, transfer.dim, f"operators[{i}]") for i, op in enumerate(operators)]
    supers = [left_super(m) if o == "left" else right_super(m) for m, o in zip(matrices, ops_order)]
    delays = [transfer.dt * gap.astype(config.NpDtypeReal) for gap in steps]
    shape = tuple(len(g) for g in steps)
    if transfer.traced:
        _traced_only(initial_state)
        matrix, state, _ = solved_state(transfer)
    else:
        top = max(int(gap.max()) for gap in steps)
        stationary = _stationary(transfer, initial_state, method == "dense", top)
        state = stationary.state
        matrix = dense_matrix(transfer) if method == "propagate" else None
    if method == "propagate":  # every combination of gaps so far as one row of a block, advanced by scans
        xp = array_namespace(matrix)
        rows = apply_super(transfer, supers[0], state[None])
        for gap, superoperator in zip(steps[:-1], supers[1:-1]):
            picked = xp.swapaxes(scan_rows(matrix, rows, int(gap.max()))[gap], 0, 1)  # (P, G, M)
            rows = apply_super(transfer, superoperator, picked.reshape(-1, len(state)))
        read = scan_rows(matrix, rows, int(steps[-1].max()), read_row(transfer, matrices[-1]))
        return delays, read[steps[-1]].T.reshape(shape)
    # columns: the state after O_1 ... O_i, one column per combination of the gaps so far
    columns = apply_super(transfer, supers[0], stationary.state[None]).T
    for gap, superoperator in zip(steps[:-1], supers[1:-1]):
        propagated = powers(transfer, stationary.forward, stationary.modes, columns, gap).reshape(
            len(state), -1
        )
        columns = apply_super(transfer, superoperator, propagated.T).T  # (M, P * G)
    # the last gap from the read-out's side: row . T^g (columns of T^T's powers), against every column
    last = steps[-1]
    left = stationary.left_modes(int(last.max()))
    backward = on_columns(transfer.back)
    rows = powers(transfer, backward, left, read_row(transfer, matrices[-1])[:, None], last, backward=True)[
        :, 0, :
    ]
    return delays, (columns.T @ rows).reshape(shape)
