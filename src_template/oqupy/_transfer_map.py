"""The transfer map of one step through uniform process tensors: flattened states, read-out, operators.

With a time-independent system and uniform process tensors every step of :func:`oqupy.compute_dynamics` is the
same linear map of the carried state ``s[chi_1, ..., chi_E, x]`` (bond legs, then ``vec(rho)``; see
:mod:`oqupy.system_dynamics`), here acting on flattened states ``(n, prod(chi_e) d^2)``.  Used by
:mod:`oqupy.stationary`.  Host code; the step computes with ``jax.numpy`` when ``oqupy_jax`` traces the system
(:mod:`oqupy._boundary`), and :func:`solved_state` and :func:`scan_rows` keep to ``xp`` functions and
:func:`oqupy._loops.scan` so that ``jax.grad`` goes through them.
"""

import math
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

import numpy as np
import scipy.linalg

from oqupy import config
from oqupy._boundary import array_namespace, is_traced
from oqupy._codegen import BACKEND
from oqupy._dynamics_setup import (
    Controls,
    RealInputs,
    environment,
    process_tensor_list,
    propagators,
    real_inputs,
    step_matrices,
)
from oqupy._loops import scan
from oqupy._real_powers import RealStep, real_powers
from oqupy._slow_modes import Apply, SlowModes, advance
from oqupy.process_tensor import TtiProcessTensor
from oqupy.system import System
from oqupy.util import check_convert

__runs_on__ = "host"

__all__ = [
    "RealMap",
    "TransferMap",
    "apply_super",
    "check_operator",
    "check_steps",
    "dense_matrix",
    "on_columns",
    "powers",
    "read_row",
    "real_map",
    "real_steps",
    "scan_rows",
    "solved_state",
    "transfer_map",
    "unique_state",
]


if BACKEND == "jax":
    REAL_POWERS = True
    """Exact powers of a map with a real form (:class:`RealMap`) run in the real basis (:func:`powers`), one
    compiled scan each: at these sizes a step is latency, and XLA's three real products have less of it than
    NumPy's complex step (``docs/benchmarks.md``)."""
else:
    REAL_POWERS = False
    """Exact powers run as the complex structured step (:func:`powers`): NumPy's real step is slower than its
    complex one at these sizes, the products being too small for BLAS to pay (``docs/benchmarks.md``)."""


class RealMap(NamedTuple):
    """The step in the real basis (:func:`oqupy._dynamics_setup.real_basis`), where it is a real map: one uniform
    process tensor with a real cell and a Hermiticity-preserving system step (concrete values only)."""

    basis: np.ndarray  # Q: a state's system leg x in the real basis is Q x
    forward: RealStep  # s -> T s
    backward: RealStep  # s -> T^T s


class TransferMap(NamedTuple):
    """One step of the dynamics as a map of flattened states, and the read-out."""

    step: Callable[[np.ndarray], np.ndarray]  # rows (n, size) -> (n, size): s -> T s for each row
    back: Callable[[np.ndarray], np.ndarray]  # rows (n, size) -> (n, size): r -> r T (the transposed step)
    matrix: Callable[[], Any]  # T as a dense matrix acting on columns
    shape: Tuple[int, ...]  # (chi_1, ..., chi_E, d^2)
    caps: List[np.ndarray]
    left: np.ndarray  # the bond vectors before the first step, as one flattened product (size / d^2)
    dim: int
    dt: float
    traced: bool  # the system's propagators are traced (oqupy_jax under jax.grad, jit, vmap)
    real: Optional[RealMap] = None  # the step in the real basis, where it is real there


def transfer_map(system: Any, process_tensor: Any, dt: Optional[float]) -> TransferMap:
    """Validate the arguments and build one step's map (as :func:`oqupy.compute_steady_state` does)."""
    if not isinstance(system, System):
        raise TypeError(
            "Argument 'system' must be a time-independent oqupy.System (a TimeDependentSystem has no stationary "
            "state)."
        )
    process_tensors = process_tensor_list(process_tensor)
    if not process_tensors or not all(isinstance(pt, TtiProcessTensor) for pt in process_tensors):
        raise TypeError(
            "Argument 'process_tensor' must be a uniform process tensor (TtiProcessTensor) or a list of them: "
            "a finite process tensor has no stationary limit (use compute_correlations)."
        )
    dim = system.dimension
    for pt in process_tensors:
        if pt.hilbert_space_dimension != dim:
            raise ValueError(
                f"Process tensor of Hilbert dimension {pt.hilbert_space_dimension} used with a system of "
                f"dimension {dim}."
            )
    dts = [float(pt.dt) for pt in process_tensors if pt.dt is not None]
    if dt is not None:
        given = float(check_convert(dt, float, "dt"))
        if not math.isfinite(given) or given <= 0.0:
            raise ValueError("Argument 'dt' must be positive.")
        dts.append(given)
    if not dts:
        raise ValueError("No time step: give 'dt' or a process tensor with a time step.")
    if max(dts) - min(dts) > 1e-12 * max(dts):
        raise ValueError(f"Process tensors and 'dt' disagree on the time step: {sorted(dts)}.")
    step_dt = min(dts)
    environments = [environment(pt, 1) for pt in process_tensors]
    identity = np.identity(dim * dim, dtype=config.NpDtype)
    prop_1, prop_2 = propagators(system, step_dt, 0.0, 1, config.SUBDIV_LIMIT, config.INTEGRATE_EPSREL)
    matrices = step_matrices(
        environments, Controls(np.stack([identity, identity]), identity[None]), prop_1, prop_2
    )
    enter, leave, links = matrices.enter[0], matrices.leave[0], matrices.links
    cells = [env.uniform.cell for env in environments if env.uniform is not None]
    caps = [env.uniform.cap for env in environments if env.uniform is not None]
    shape = tuple(cell.shape[1] for cell in cells) + (dim * dim,)
    left: np.ndarray = np.ones(1, dtype=config.NpDtype)
    for env in environments:
        assert env.left is not None  # every environment is uniform
        left = np.kron(left, np.asarray(env.left))

    xp = array_namespace(enter, leave)  # jax.numpy for a system built from traced values (oqupy_jax)
    bonds = len(cells)

    flipped = [np.ascontiguousarray(np.swapaxes(cell, -1, -2)) for cell in cells]  # cell[x, f, p]

    def contract(state: Any, cell: np.ndarray, axis: int) -> Any:
        """``out[..., f, ..., x] = sum_p state[..., p, ..., x] cell[x, p, f]`` on bond ``axis``: one
        matrix-matrix product per ``x`` over every vector and every other bond at once."""
        moved = xp.moveaxis(state, (-1, axis + 1), (0, -1))  # (x, n, other bonds, p)
        out = xp.matmul(moved.reshape(moved.shape[0], -1, moved.shape[-1]), cell)
        return xp.moveaxis(out.reshape(moved.shape[:-1] + out.shape[-1:]), (0, -1), (-1, axis + 1))

    def step(vectors: np.ndarray) -> np.ndarray:
        state = vectors.reshape((-1,) + shape) @ enter
        for axis, cell in enumerate(cells):
            if axis > 0:
                state = state @ links[axis - 1]
            state = contract(state, cell, axis)
        return (state @ leave).reshape(vectors.shape)

    def back(vectors: np.ndarray) -> np.ndarray:
        state = vectors.reshape((-1,) + shape) @ leave.T
        for axis in range(bonds - 1, -1, -1):
            state = contract(state, flipped[axis], axis)
            if axis > 0:
                state = state @ links[axis - 1].T
        return (state @ enter.T).reshape(vectors.shape)

    size = int(np.prod(shape))

    def matrix() -> Any:
        """``T`` on columns.  One bath: ``T[(f, y), (p, x)] = sum_z enter[x, z] cell[z, p, f] leave[z, y]``, one
        product over ``z`` (the step applied to the identity would cost ``M`` steps); several: the identity."""
        if bonds > 1:
            return step(np.identity(size, dtype=config.NpDtype)).T
        ends = enter[:, :, None] * leave[None, :, :]  # (x, z, y)
        rows = xp.tensordot(cells[0], xp.swapaxes(ends, 0, 1), axes=(0, 0))  # (p, f, x, y)
        return xp.transpose(rows, (1, 3, 0, 2)).reshape(size, size)

    real = real_inputs(environments, matrices, identity[0])
    return TransferMap(
        step,
        back,
        matrix,
        shape,
        caps,
        left,
        dim,
        step_dt,
        is_traced(enter, leave),
        None if real is None or bonds > 1 else real_map(real),
    )


def real_map(real: RealInputs) -> RealMap:
    """One bath's step in the real basis as :class:`oqupy._real_powers.RealStep`: the cell's non-zero blocks
    ``(Z, Z')`` (each fixed index's matrix; a pair's ``(2 chi, 2 chi)`` block as its four quarters), with the rows
    of ``enter`` at each input index ``Z`` and of ``leave`` at each output index ``Z'``; and its transpose."""
    cell = real.uniform[0]
    assert cell.pairs is not None
    fixed, bond = cell.cell.shape[0], cell.cell.shape[1]
    inputs: List[int] = list(range(fixed))
    outputs: List[int] = list(range(fixed))
    blocks = [cell.cell]
    for pair in range(cell.pairs.shape[0]):
        first = fixed + 2 * pair
        inputs.extend([first, first, first + 1, first + 1])
        outputs.extend([first, first + 1, first, first + 1])
        quarters = np.transpose(cell.pairs[pair].reshape(2, bond, 2, bond), (0, 2, 1, 3))
        blocks.append(quarters.reshape(4, bond, bond))
    matrices = np.concatenate(blocks)
    gather = np.ascontiguousarray(real.enter[0][:, inputs].T)
    scatter = np.ascontiguousarray(real.leave[0][outputs, :].T)
    backward = RealStep(
        np.ascontiguousarray(scatter.T), np.ascontiguousarray(np.swapaxes(matrices, 1, 2)), gather.T
    )
    return RealMap(real.basis, RealStep(gather, matrices, scatter), backward)


def real_steps(
    transfer: TransferMap, vectors: np.ndarray, num_steps: int, backward: bool = False
) -> np.ndarray:
    """``vectors`` (rows ``(n, M)``, complex) and their ``num_steps`` successors under the step (``T``; with
    ``backward`` ``T^T``), computed in the real basis (:class:`RealMap`; a complex row as its real and imaginary
    parts) by :func:`oqupy._real_powers.real_powers` and brought back: ``(num_steps + 1, n, M)``."""
    real = transfer.real
    assert real is not None
    if num_steps == 0:
        return vectors[None]
    basis = real.basis
    # x -> Q x for T (s_real = Q s); for T^T a row r with r . s = (r Q^dagger) . (Q s)
    into, out_of = (basis.conj().T, basis) if backward else (basis.T, basis.conj())
    count = vectors.shape[0]
    state = np.moveaxis(vectors.reshape((count,) + transfer.shape) @ into, -1, 0)  # (x, n, chi)
    rows = np.ascontiguousarray(np.concatenate([state.real, state.imag], axis=1))
    powers = np.asarray(real_powers(rows, real.backward if backward else real.forward, num_steps))
    powers = powers[:, :, :count] + 1j * powers[:, :, count:]  # (k, x, n, chi)
    powers = np.moveaxis(powers, 1, -1) @ out_of
    return powers.reshape(num_steps + 1, count, -1)


def powers(
    transfer: TransferMap,
    apply: Apply,
    modes: Optional[SlowModes],
    columns: np.ndarray,
    gaps: np.ndarray,
    row: Optional[np.ndarray] = None,
    backward: bool = False,
) -> np.ndarray:
    """:func:`oqupy._slow_modes.advance` by ``apply`` (``T``, or ``T^T`` with ``backward``); exact powers
    (``modes`` None) of a map with a real form in the real basis (:func:`real_steps`) where :data:`REAL_POWERS`."""
    if modes is None and REAL_POWERS and transfer.real is not None:
        stepped = real_steps(transfer, columns.T, int(gaps.max()), backward)[gaps]  # (G, P, M)
        return np.transpose(stepped, (2, 1, 0)) if row is None else (stepped @ row).T
    return advance(apply, modes, columns, gaps, row)


def read_row(transfer: TransferMap, operator: np.ndarray) -> np.ndarray:
    """The row ``r`` with ``r . s = tr(operator rho(s))`` (``rho`` read out with the caps)."""
    row = np.asarray(operator).T.reshape(-1)
    for cap in reversed(transfer.caps):
        row = np.multiply.outer(cap, row).reshape(-1)
    return row


def apply_super(transfer: TransferMap, superoperator: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``superoperator`` on the system leg of flattened states ``(n, size)``."""
    size = vectors.shape[-1]
    state = vectors.reshape(-1, size // transfer.dim**2, transfer.dim**2) @ superoperator.T
    return state.reshape(vectors.shape)


def check_operator(operator: Any, dim: int, name: str) -> np.ndarray:
    """``operator`` as a complex ``dim x dim`` array; ``ValueError`` naming ``name`` otherwise."""
    matrix = np.asarray(operator, dtype=config.NpDtype)
    if matrix.shape != (dim, dim):
        raise ValueError(
            f"Argument '{name}' must have shape {(dim, dim)} (the system's), not {matrix.shape}."
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"Argument '{name}' contains NaN or inf.")
    return matrix


def check_steps(num_steps: Any, name: str = "num_steps") -> int:
    if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)):
        raise TypeError(f"Argument '{name}' must be int.")
    if num_steps <= 0:
        raise ValueError(f"Argument '{name}' must be positive, not {num_steps}.")
    return int(num_steps)


def dense_matrix(transfer: TransferMap) -> Any:
    """``T`` as a dense matrix acting on columns."""
    return transfer.matrix()


def on_columns(step: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """A step on rows (``transfer.step``: ``T``; ``transfer.back``: ``T^T``) as a map of columns ``(M,)`` or
    ``(M, P)``."""
    return lambda columns: step(columns.T).T


def bordered(transfer: TransferMap) -> Tuple[Any, Any, np.ndarray, np.ndarray]:
    """``(T, 1 - T + v r, v, r)``: the dense map, the bordered matrix whose solution for ``v`` is the steady state
    (when it is unique), ``v`` (``r v = 1``) and the trace read-out ``r``."""
    dim2 = transfer.dim**2
    matrix = dense_matrix(transfer)
    identity = np.identity(matrix.shape[0], dtype=config.NpDtype)
    trace_row = read_row(transfer, np.identity(transfer.dim, dtype=config.NpDtype))
    guess = np.kron(transfer.left, np.identity(transfer.dim, dtype=config.NpDtype).reshape(dim2))
    guess = guess / transfer.dim
    return matrix, identity - matrix + np.outer(guess, trace_row), guess, trace_row


def check_gaps(gaps: Any, count: int) -> List[np.ndarray]:
    """``gaps`` as ``count`` arrays of non-negative step counts."""
    if not isinstance(gaps, (list, tuple)) or len(gaps) != count:
        raise ValueError(f"Argument 'gaps' must be a list of {count} entries (one per pair of operators).")
    result = []
    for entry in gaps:
        steps = np.atleast_1d(np.asarray(entry))
        if steps.ndim != 1 or steps.size == 0 or not np.issubdtype(steps.dtype, np.integer):
            raise TypeError("Each entry of 'gaps' must be an int or a sequence of ints (numbers of steps).")
        if np.any(steps < 0):
            raise ValueError("The entries of 'gaps' must be non-negative numbers of steps.")
        result.append(steps.astype(np.int64))
    return result


def real_bordered(transfer: TransferMap) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """``(1 - R + v' r', v')``: :func:`bordered`'s system and ``v`` in the real basis, real (``R = P T P^dagger``,
    ``P`` the basis ``Q`` on the system leg: ``s' = P s``), built from the real cell's blocks; ``None`` where the
    map has no real form (:class:`RealMap`).  A real LU costs a third of the complex one."""
    real = transfer.real
    if real is None:
        return None
    dim2 = transfer.dim**2
    step = real.forward
    size = step.blocks.shape[1] * dim2
    # R[(f, Y), (p, X)] = sum_k gather[k, X] blocks[k, p, f] scatter[Y, k]
    ends = step.gather.T[:, :, None] * step.scatter.T[None, :, :]  # (X, k, Y)
    turned = np.tensordot(step.blocks, ends, axes=(0, 1))  # (p, f, X, Y)
    system = -np.transpose(turned, (1, 3, 0, 2)).reshape(size, size)
    identity = np.identity(transfer.dim, dtype=config.NpDtype).reshape(dim2)
    guess = np.kron(np.real(transfer.left), (real.basis @ identity).real / transfer.dim)
    trace_row = np.kron(np.real(transfer.caps[0]), (real.basis.conj() @ identity).real)
    system += np.outer(guess, trace_row)
    system[np.diag_indices(size)] += 1.0
    return system, guess


def unique_state(transfer: TransferMap, rcond_limit: float, tolerance: float) -> Optional[np.ndarray]:
    """The steady state from one LU factorisation of the bordered map (:func:`bordered`; concrete maps only), or
    ``None`` where that is near singular (reciprocal condition number below ``rcond_limit``: a steady state that
    may not be unique) or where the solution is no fixed point of ``T`` (``|T s - s| > tolerance |s|``: no
    eigenvalue 1).  Solved in the real basis where the map is real there (:func:`real_bordered`)."""
    real = real_bordered(transfer)
    if real is None:
        _, system, guess, _ = bordered(transfer)
    else:
        system, guess = real
    factors = scipy.linalg.lu_factor(system, check_finite=False)
    (gecon,) = scipy.linalg.get_lapack_funcs(("gecon",), (factors[0],))
    rcond, _ = gecon(factors[0], np.linalg.norm(system, 1), norm="1")
    if not rcond >= rcond_limit:
        return None
    state = scipy.linalg.lu_solve(factors, guess, check_finite=False)
    if real is not None:
        assert transfer.real is not None
        dim2 = transfer.dim**2
        state = (state.reshape(-1, dim2) @ transfer.real.basis.conj()).reshape(-1)  # s = P^dagger s'
    residual = np.linalg.norm(transfer.step(state[None])[0] - state)
    return state if residual <= tolerance * np.linalg.norm(state) else None


def solved_state(transfer: TransferMap) -> Tuple[Any, Any, np.ndarray]:
    """``(T, s_ss, r)``: the dense map, its steady state from one linear solve, and the trace read-out ``r``.

    ``r`` is the left eigenvector of eigenvalue 1 (every step keeps the trace), so ``s_ss`` solves
    ``(1 - T + v r) s = v`` for any ``v`` with ``r v = 1`` (a unique steady state; no eigenvectors, so it can be
    differentiated).
    """
    matrix, system, guess, trace_row = bordered(transfer)
    state = array_namespace(system).linalg.solve(system, guess)
    return matrix, state, trace_row


def scan_rows(matrix: Any, starts: Any, num_steps: int, row: Optional[np.ndarray] = None) -> Any:
    """``T^k starts`` for ``k = 0 .. num_steps`` (states as rows: ``(num_steps + 1, n, M)``), or their read-out
    ``row . T^k starts`` (``(num_steps + 1, n)``) with ``row``: one compiled loop (``lax.scan`` in ``oqupy_jax``)."""
    xp = array_namespace(matrix, starts)
    record = (lambda states: states) if row is None else (lambda states: states @ row)

    def advance(states: Any, _: Any) -> Tuple[Any, Any]:
        states = states @ matrix.T
        return states, record(states)

    _, later = scan(advance, starts, np.arange(num_steps))
    first = record(starts)[None]
    return first if num_steps == 0 else xp.concatenate([first, later])
