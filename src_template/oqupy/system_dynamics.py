r"""Dynamics and multi-time correlations of a system from process tensors (one or several environments).

The state carried from step to step is ``s[chi_1, ..., chi_E, x]``: one bond leg per environment and the
Liouville index ``x`` of ``vec(rho)``.  Step ``n`` applies the pre-control of ``n``, records
``rho_n`` (every bond contracted with its cap), applies the post-control, ``prop_1(n)``, each process tensor's
MPO tensor of ``n`` (rank 3: a diagonal multiply on the system leg, no rank-4 tensor is built), and
``prop_2(n)``.  The loop over steps is one :func:`oqupy._loops.scan` (``lax.scan`` in ``oqupy_jax``, over
tensors padded to one bond dimension per environment; a plain loop over exact shapes in ``oqupy_numpy``),
split into a few chunks for progress reporting.
"""

import itertools
import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from oqupy import config
from oqupy._codegen import BACKEND, host, kernel
from oqupy._loops import scan, vmap
from oqupy._mps import bucket
from oqupy.control import Control
from oqupy.dynamics import Dynamics
from oqupy.operators import left_super, right_super
from oqupy.process_tensor import BaseProcessTensor, TrivialProcessTensor
from oqupy.system import BaseSystem, System, TimeDependentSystem
from oqupy.tempo import _check_initial_state
from oqupy.util import check_convert, get_progress

CHUNK_STEPS = 64
"""Steps per compiled scan call (progress is reported between chunks)."""


# -- kernels ----------------------------------------------------------------------------------------------


def contract_environment(state: np.ndarray, tensor: np.ndarray, axis: int) -> np.ndarray:
    """Contract the bond leg ``axis`` and the system leg of ``state`` with one MPO tensor (rank 3 or 4)."""
    moved = np.moveaxis(state, axis, -2)
    if tensor.ndim == 3:
        moved = np.einsum("...px,pfx->...fx", moved, tensor)
    else:
        moved = np.einsum("...pi,pfio->...fo", moved, tensor)
    return np.moveaxis(moved, -2, axis)


def read_out(state: np.ndarray, caps: Sequence[Any]) -> np.ndarray:
    """``vec(rho)``: every bond leg of ``state`` contracted with its cap."""
    for cap in caps:
        state = np.tensordot(cap, state, axes=1)
    return state


def dynamics_step(carry: Tuple[Any, Any], step: Tuple[Any, Any, Any, Any]) -> Tuple[Any, np.ndarray]:
    """One step of the forward contraction (the body of the scan); returns the new carry and ``vec(rho_n)``."""
    state, links = carry
    enter, leave, tensors, caps = step
    rho = read_out(state, caps)
    state = state @ enter
    for axis, tensor in enumerate(tensors):
        if axis > 0:
            state = state @ links[axis - 1]
        state = contract_environment(state, tensor, axis)
    state = state @ leave
    return (state, links), rho


def _propagate(
    state: np.ndarray, links: Sequence[Any], steps: Sequence[Any]
) -> Tuple[np.ndarray, np.ndarray]:
    (state, _), rhos = scan(dynamics_step, (state, links), steps)
    return state, rhos


@kernel
def propagate(state: np.ndarray, links: Sequence[Any], steps: Sequence[Any]) -> Tuple[np.ndarray, np.ndarray]:
    """Run :func:`dynamics_step` over the stacked ``steps``; returns the final state and the recorded states."""
    return _propagate(state, links, steps)


@kernel
def propagate_batch(
    states: np.ndarray, links: Sequence[Any], steps: Sequence[Any]
) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`propagate` for a batch of systems: a leading axis on ``states`` and on the step matrices."""
    return vmap(_propagate, in_axes=(0, None, (0, 0, None, None)))(states, links, steps)


@kernel
def read_out_batch(states: np.ndarray, caps: Sequence[Any]) -> np.ndarray:
    """:func:`read_out` for a batch of states."""
    return vmap(read_out, in_axes=(0, None))(states, caps)


# -- host-side preparation ------------------------------------------------------------------------------


@host
def _process_tensor_list(process_tensor: Any) -> List[BaseProcessTensor]:
    if process_tensor is None:
        return []
    candidates = list(process_tensor) if isinstance(process_tensor, (list, tuple)) else [process_tensor]
    for candidate in candidates:
        if not isinstance(candidate, BaseProcessTensor):
            raise TypeError("Argument 'process_tensor' must be a process tensor or a list of them.")
    return candidates


@host
def _time_grid(
    process_tensors: List[BaseProcessTensor], dimension: int, dt: Optional[float], num_steps: Optional[int]
) -> Tuple[float, int]:
    for pt in process_tensors:
        if pt.hilbert_space_dimension != dimension:
            raise ValueError(
                f"Process tensor of Hilbert dimension {pt.hilbert_space_dimension} used with a system of "
                f"dimension {dimension}."
            )
        if pt.get_initial_tensor() is not None:
            raise NotImplementedError("Process tensors with an initial tensor are not supported.")
    dts = {pt.dt for pt in process_tensors if pt.dt is not None}
    if dt is not None:
        dt = check_convert(dt, float, "dt")
        if not math.isfinite(dt) or dt <= 0.0:
            raise ValueError("Argument 'dt' must be positive.")
        dts.add(dt)
    if len(dts) > 1 and not all(math.isclose(a, b, rel_tol=1e-12) for a in dts for b in dts):
        raise ValueError(f"Process tensors and 'dt' disagree on the time step: {sorted(dts)}.")
    if not dts:
        raise ValueError("No time step: give 'dt' or a process tensor with a time step.")
    lengths = [len(pt) for pt in process_tensors if not isinstance(pt, TrivialProcessTensor)]
    if num_steps is None:
        if not lengths:
            raise ValueError("Give 'num_steps': no finite process tensor fixes the number of steps.")
        num_steps = min(lengths)
    else:
        if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)):
            raise TypeError("Argument 'num_steps' must be int.")
        if num_steps < 0:
            raise ValueError("Argument 'num_steps' must be non-negative.")
        if lengths and num_steps > min(lengths):
            raise ValueError(
                f"Argument 'num_steps' ({num_steps}) is longer than the shortest process tensor ({min(lengths)})."
            )
    return sorted(dts)[0], int(num_steps)


@host
def _controls(control: Optional[Control], num_steps: int, dim2: int, dt: float, start_time: float) -> tuple:
    """Stacked pre (num_steps + 1) and post (num_steps) superoperators (identity where there is none)."""
    identity = np.identity(dim2, dtype=config.NpDtype)
    pre = np.broadcast_to(identity, (num_steps + 1, dim2, dim2)).copy()
    post = np.broadcast_to(identity, (num_steps, dim2, dim2)).copy()
    if control is not None:
        for step in range(num_steps + 1):
            before, after = control.get_controls(step, dt, start_time)
            if before is not None:
                pre[step] = before
            if after is not None and step < num_steps:
                post[step] = after
    return pre, post


@host
def _environment(pt: BaseProcessTensor, num_steps: int) -> tuple:
    """Tensors of steps ``0 .. num_steps - 1``, caps of ``0 .. num_steps`` and the transforms of one process tensor."""
    pt.check_consistency()
    tensors = [np.asarray(pt.get_raw_mpo_tensor(step), dtype=config.NpDtype) for step in range(num_steps)]
    caps = pt.get_cap_tensors()[: num_steps + 1]
    dim2 = pt.hilbert_space_dimension**2
    identity = np.identity(dim2, dtype=config.NpDtype)
    transform_in = pt.transform_in
    transform_out = pt.transform_out
    return (
        tensors,
        caps,
        identity if transform_in is None else transform_in,
        identity if transform_out is None else transform_out,
    )


@host
def _propagators(
    system: BaseSystem,
    dt: float,
    start_time: float,
    num_steps: int,
    subdiv_limit: Optional[int],
    liouvillian_epsrel: float,
) -> Tuple[np.ndarray, np.ndarray]:
    """The two stacks of half-step propagators (empty for no steps)."""
    if num_steps == 0:
        empty = np.zeros((0, system.dimension**2, system.dimension**2), dtype=config.NpDtype)
        return empty, empty
    return system.get_propagator_stack(dt, start_time, num_steps, subdiv_limit, liouvillian_epsrel)


@host
def _stack_padded(tensors: List[np.ndarray], caps: List[np.ndarray]) -> tuple:
    """One array of tensors (and of caps) zero-padded to a common bond dimension (``_mps.bucket``: a power of
    two in ``oqupy_jax``, the only package that calls this)."""
    if any(tensor.ndim == 4 for tensor in tensors):
        tensors = [
            tensor
            if tensor.ndim == 4
            else np.einsum("pfi,io->pfio", tensor, np.identity(tensor.shape[2], dtype=tensor.dtype))
            for tensor in tensors
        ]
    bond = bucket(max([cap.shape[0] for cap in caps] + [max(t.shape[:2]) for t in tensors]))
    legs = tensors[0].shape[2:] if tensors else ()
    stacked = np.zeros((len(tensors), bond, bond, *legs), dtype=config.NpDtype)
    for step, tensor in enumerate(tensors):
        stacked[step, : tensor.shape[0], : tensor.shape[1]] = tensor
    padded_caps = np.zeros((len(caps), bond), dtype=config.NpDtype)
    for step, cap in enumerate(caps):
        padded_caps[step, : cap.shape[0]] = cap
    return stacked, padded_caps


@host
def _chunks(num_steps: int) -> List[Tuple[int, int]]:
    return [(start, min(start + CHUNK_STEPS, num_steps)) for start in range(0, num_steps, CHUNK_STEPS)]


@host
def _check_system(system: Any) -> None:
    if not isinstance(system, (System, TimeDependentSystem)):
        raise TypeError("Argument 'system' must be a System or TimeDependentSystem.")


@host
def _prepare(
    dimension: int,
    initial_state: Any,
    dt: Optional[float],
    num_steps: Optional[int],
    start_time: Any,
    process_tensor: Any,
    control: Optional[Control],
) -> tuple:
    """Validate the common arguments; returns dt, num_steps, start time, the environments, pre and post controls."""
    process_tensors = _process_tensor_list(process_tensor)
    if control is not None and not isinstance(control, Control):
        raise TypeError("Argument 'control' must be an oqupy.Control object.")
    dt, num_steps = _time_grid(process_tensors, dimension, dt, num_steps)
    if initial_state is None:
        raise ValueError(
            "An initial state must be given (process tensors with an initial tensor are not supported)."
        )
    start_time = check_convert(start_time, float, "start_time")
    if control is not None and control.dimension != dimension:
        raise ValueError(
            f"Control of dimension {control.dimension} used with a system of dimension {dimension}."
        )
    environments = [
        _environment(pt, num_steps) for pt in process_tensors if not isinstance(pt, TrivialProcessTensor)
    ]
    pre, post = _controls(control, num_steps, dimension**2, dt, start_time)
    return dt, num_steps, start_time, environments, pre, post


@host
def _step_matrices(
    environments: list, pre: np.ndarray, post: np.ndarray, prop_1: np.ndarray, prop_2: np.ndarray
) -> tuple:
    """Per step: everything before the first bath (``enter``) and after the last (``leave``), and the links."""
    dim2 = pre.shape[-1]
    first_in = environments[0][2] if environments else np.identity(dim2, dtype=config.NpDtype)
    last_out = environments[-1][3] if environments else np.identity(dim2, dtype=config.NpDtype)
    enter = np.einsum("nba,...ncb,cd->...nad", post, prop_1, first_in)
    leave = np.einsum("ab,...ncb,ndc->...nad", last_out, prop_2, pre[1:])
    links = tuple(environments[e][3] @ environments[e + 1][2] for e in range(len(environments) - 1))
    return enter, leave, links


def _environment_stacks(environments: list, vectors: np.ndarray) -> tuple:
    """The tensors and caps of every bath as the scan wants them, and the initial states ``vectors`` with bonds."""
    batch, dim2 = vectors.shape[:-1], vectors.shape[-1]
    if BACKEND == "jax":
        padded = [_stack_padded(tensors, caps) for tensors, caps, _, _ in environments]
        tensor_stacks = tuple(stack for stack, _ in padded)
        cap_stacks = tuple(caps for _, caps in padded)
        states = np.zeros((*batch, *(caps.shape[1] for caps in cap_stacks), dim2), dtype=config.NpDtype)
        states[(Ellipsis, *((0,) * len(cap_stacks)), slice(None))] = vectors
    else:
        tensor_stacks = tuple(tensors for tensors, _, _, _ in environments)
        cap_stacks = tuple(caps for _, caps, _, _ in environments)
        states = vectors.reshape(batch + (1,) * len(cap_stacks) + (dim2,))
    return tensor_stacks, cap_stacks, states


def _forward(
    states: np.ndarray,
    matrices: tuple,
    tensor_stacks: tuple,
    cap_stacks: tuple,
    num_steps: int,
    record_all: bool,
    progress_type: Optional[str],
    batched: bool,
) -> np.ndarray:
    """Run the step loop in chunks; returns the recorded ``vec(rho)`` (with a leading batch axis if ``batched``)."""
    enter, leave, links = matrices
    recorded = []
    axis = 1 if batched else 0
    with get_progress(progress_type)(num_steps, title="--> Compute dynamics") as progress:
        for begin, end in _chunks(num_steps):
            steps = (
                enter[..., begin:end, :, :],
                leave[..., begin:end, :, :],
                tuple(stack[begin:end] for stack in tensor_stacks),
                tuple(caps[begin:end] for caps in cap_stacks),
            )
            if batched:
                states, rhos = propagate_batch(states, links, steps)
            else:
                states, rhos = propagate(states, links, steps)
            if record_all:
                recorded.append(rhos)
            progress.update(end)
    last_caps = tuple(caps[num_steps] for caps in cap_stacks)
    final = read_out_batch(states, last_caps) if batched else read_out(states, last_caps)
    recorded.append(np.expand_dims(final, axis))
    return np.concatenate(recorded, axis=axis)


def compute_dynamics(
    system: BaseSystem,
    initial_state: Optional[np.ndarray] = None,
    dt: Optional[float] = None,
    num_steps: Optional[int] = None,
    start_time: float = 0.0,
    process_tensor: Any = None,
    control: Optional[Control] = None,
    record_all: bool = True,
    subdiv_limit: Optional[int] = config.SUBDIV_LIMIT,
    liouvillian_epsrel: float = config.INTEGRATE_EPSREL,
    progress_type: Optional[str] = None,
) -> Dynamics:
    """Dynamics of ``system`` coupled to the environments described by ``process_tensor``.

    Parameters
    ----------
    system: System or TimeDependentSystem
        The system.
    initial_state: ndarray
        Density matrix at ``start_time``.
    dt: float
        Time step (default: the process tensors').
    num_steps: int
        Number of steps (default: the length of the shortest process tensor).
    start_time: float
        Initial time.
    process_tensor: process tensor or list of process tensors
        The environments (several: independent baths, their bonds carried side by side); None: none.
    control: Control
        Control operations (default: none).
    record_all: bool
        Record every step (``num_steps + 1`` states) or only the final state.
    subdiv_limit, liouvillian_epsrel:
        Integration of time-dependent Liouvillians (see :class:`oqupy.TimeDependentSystem`).
    progress_type: str
        'silent', 'simple' or 'bar'.
    """
    _check_system(system)
    dim = system.dimension
    dt, num_steps, start, environments, pre, post = _prepare(
        dim, initial_state, dt, num_steps, start_time, process_tensor, control
    )
    vector = np.asarray(_check_initial_state(initial_state, dim)).reshape(dim * dim) @ pre[0].T
    prop_1, prop_2 = _propagators(system, dt, start, num_steps, subdiv_limit, liouvillian_epsrel)
    matrices = _step_matrices(environments, pre, post, prop_1, prop_2)
    tensor_stacks, cap_stacks, state = _environment_stacks(environments, vector)
    rhos = _forward(state, matrices, tensor_stacks, cap_stacks, num_steps, record_all, progress_type, False)
    dynamics = Dynamics(name="Dynamics from process tensors")
    times = start + dt * np.arange(num_steps + 1) if record_all else [start + dt * num_steps]
    for time, rho in zip(times, rhos.reshape(-1, dim, dim)):
        dynamics.add(float(time), rho)
    return dynamics


def compute_dynamics_batch(
    systems: Sequence[BaseSystem],
    initial_state: Any = None,
    dt: Optional[float] = None,
    num_steps: Optional[int] = None,
    start_time: float = 0.0,
    process_tensor: Any = None,
    control: Optional[Control] = None,
    record_all: bool = True,
    subdiv_limit: Optional[int] = config.SUBDIV_LIMIT,
    liouvillian_epsrel: float = config.INTEGRATE_EPSREL,
    progress_type: Optional[str] = None,
) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`compute_dynamics` for many systems through the same process tensors, in one call.

    ``oqupy_jax`` maps the compiled step loop over the systems (``jax.vmap``); ``oqupy_numpy`` runs the same
    entry point as a loop.  Arguments as for :func:`compute_dynamics`, except:

    Parameters
    ----------
    systems: list of System or TimeDependentSystem
        The systems (all of the same dimension); their propagators are computed on the host.
    initial_state: ndarray or list of ndarray
        One density matrix for all systems, or one per system.

    Returns
    -------
    times: ndarray
        The ``num_steps + 1`` times (only the last with ``record_all=False``).
    states: ndarray
        Shape ``(len(systems), len(times), d, d)``.
    """
    systems = list(systems)
    assert systems, "Argument 'systems' must hold at least one system."
    for system in systems:
        _check_system(system)
    dim = systems[0].dimension
    if any(system.dimension != dim for system in systems):
        raise ValueError("All systems must have the same Hilbert space dimension.")
    dt, num_steps, start, environments, pre, post = _prepare(
        dim, initial_state, dt, num_steps, start_time, process_tensor, control
    )
    if isinstance(initial_state, (list, tuple)):
        assert len(initial_state) == len(systems), "Give one initial state, or one per system."
        matrices_0 = [_check_initial_state(state, dim) for state in initial_state]
    else:
        matrices_0 = [_check_initial_state(initial_state, dim)] * len(systems)
    vectors = np.stack([np.asarray(matrix).reshape(dim * dim) for matrix in matrices_0]) @ pre[0].T
    stacks = [
        _propagators(system, dt, start, num_steps, subdiv_limit, liouvillian_epsrel) for system in systems
    ]
    prop_1 = np.stack([first for first, _ in stacks])
    prop_2 = np.stack([second for _, second in stacks])
    matrices = _step_matrices(environments, pre, post, prop_1, prop_2)
    tensor_stacks, cap_stacks, states = _environment_stacks(environments, vectors)
    rhos = _forward(states, matrices, tensor_stacks, cap_stacks, num_steps, record_all, progress_type, True)
    times = start + dt * np.arange(num_steps + 1) if record_all else start + dt * np.array([num_steps])
    return times, rhos.reshape(len(systems), -1, dim, dim)


# -- correlations ---------------------------------------------------------------------------------------


@host
def _step_indices(times: Any, dt: float, start_time: float, num_steps: int) -> List[int]:
    """Step indices of an int, slice, list of ints, float time or (t_start, t_end) interval."""

    def check(index: int) -> int:
        if index < 0 or index > num_steps:
            raise IndexError("Specified time is out of bound.")
        return index

    def from_time(time: float) -> int:
        position = (time - start_time) / dt
        index = int(round(position))
        if abs(position - index) > 1e-6 * max(1.0, abs(position)):
            raise IndexError(f"Time {time} is not on the time grid (start {start_time}, dt {dt}).")
        return check(index)

    if isinstance(times, bool):
        raise TypeError("Unsupported type of operator times.")
    if isinstance(times, (int, np.integer)):
        return [check(int(times))]
    if isinstance(times, slice):
        return list(range(num_steps + 1))[times]
    if isinstance(times, (float, np.floating)):
        return [from_time(float(times))]
    if (
        isinstance(times, tuple)
        and len(times) == 2
        and all(isinstance(t, (float, np.floating)) for t in times)
    ):
        low, high = (float(t) for t in times)
        first = int(math.ceil((low - start_time) / dt - 1e-9))
        last = int(math.floor((high - start_time) / dt + 1e-9))
        if first < 0 or last > num_steps or first > last:
            raise IndexError("Specified time is out of bound.")
        return list(range(first, last + 1))
    if isinstance(times, list):
        indices = []
        for entry in times:
            if isinstance(entry, bool) or not isinstance(entry, (int, np.integer)):
                raise TypeError("A list of operator times must hold ints (step indices).")
            indices.append(check(int(entry)))
        return indices
    raise TypeError("Unsupported type of operator times.")


@host
def _correlation_grid(process_tensor: Any, dt: Optional[float]) -> Tuple[float, int]:
    process_tensors = _process_tensor_list(process_tensor)
    lengths = [len(pt) for pt in process_tensors if not isinstance(pt, TrivialProcessTensor)]
    dts = [pt.dt for pt in process_tensors if pt.dt is not None]
    if dt is None:
        if not dts:
            raise ValueError("No time step: give 'dt' or a process tensor with a time step.")
        dt = dts[0]
    if not lengths:
        raise ValueError("Correlations need a process tensor of finite length.")
    return float(dt), min(lengths)


@host
def compute_correlations_nt(
    system: BaseSystem,
    process_tensor: Any,
    operators: List[np.ndarray],
    ops_times: List[Any],
    ops_order: List[str],
    initial_state: Optional[np.ndarray] = None,
    start_time: float = 0.0,
    dt: Optional[float] = None,
    progress_type: Optional[str] = None,
) -> Tuple[List[np.ndarray], np.ndarray]:
    r"""Multi-time correlation ``<O_n(t_n) ... O_1(t_1)>`` for every time-ordered choice of times.

    Parameters
    ----------
    system: System or TimeDependentSystem
        The system.
    process_tensor: process tensor or list of them
        The environments.
    operators: list of ndarray
        ``O_1 ... O_n`` (each d x d).
    ops_times: list
        For each operator: an int step, a slice, a list of ints, a float time or a ``(t_start, t_end)``
        interval of floats.
    ops_order: list of str
        For each operator: ``'left'`` (``rho -> O rho``) or ``'right'`` (``rho -> rho O``).
    initial_state: ndarray
        Density matrix at ``start_time``.

    Returns
    -------
    times: list of ndarray
        The times of each operator.
    correlations: ndarray
        Shape ``(len(t_1), ..., len(t_n))``; entries whose times are not ordered (``t_k <= t_{k+1}``) are NaN.
    """
    assert isinstance(operators, list) and isinstance(ops_times, list) and isinstance(ops_order, list), (
        "Arguments 'operators', 'ops_times' and 'ops_order' must be lists."
    )
    assert len(operators) == len(ops_times) == len(ops_order), (
        "Arguments 'operators', 'ops_times' and 'ops_order' must have the same length."
    )
    assert len(operators) >= 1, "At least one operator is needed."
    assert isinstance(system, (System, TimeDependentSystem)), "Argument 'system' must be a System."
    dim = system.dimension
    matrices = [np.asarray(op, dtype=config.NpDtype) for op in operators]
    for matrix in matrices:
        assert matrix.shape == (dim, dim), f"Operators must have shape {(dim, dim)}, not {matrix.shape}."
    for order in ops_order:
        assert order in ("left", "right"), "Entries of 'ops_order' must be 'left' or 'right'."
    start_time = float(check_convert(start_time, float, "start_time"))
    dt, length = _correlation_grid(process_tensor, dt)
    indices = [_step_indices(times, dt, start_time, length) for times in ops_times]
    supers = [
        left_super(matrix) if order == "left" else right_super(matrix)
        for matrix, order in zip(matrices, ops_order)
    ]
    result = np.full(tuple(len(index) for index in indices), np.nan + 1j * np.nan, dtype=config.NpDtype)
    last_indices = indices[-1]
    last_operator = matrices[-1]
    combinations = list(itertools.product(*(range(len(index)) for index in indices[:-1])))
    with get_progress(progress_type)(len(combinations), title="--> Compute correlations") as progress:
        for count, positions in enumerate(combinations):
            steps = [indices[k][p] for k, p in enumerate(positions)]
            if any(a > b for a, b in zip(steps, steps[1:])):
                progress.update(count + 1)
                continue
            earliest_last = steps[-1] if steps else 0
            wanted = [j for j, step in enumerate(last_indices) if step >= earliest_last]
            if not wanted:
                progress.update(count + 1)
                continue
            control = Control(dim)
            for step, operation in zip(steps, supers[:-1]):
                control.add_single(int(step), operation)
            num_steps = max(last_indices[j] for j in wanted)
            dynamics = compute_dynamics(
                system,
                initial_state,
                dt,
                num_steps,
                start_time,
                process_tensor,
                control,
                progress_type="silent",
            )
            states = np.asarray(dynamics.states)
            for j in wanted:
                result[(*positions, j)] = np.trace(last_operator @ states[last_indices[j]])
            progress.update(count + 1)
    times = [start_time + dt * np.array(index, dtype=config.NpDtypeReal) for index in indices]
    return times, result


@host
def compute_correlations(
    system: BaseSystem,
    process_tensor: Any,
    operator_a: np.ndarray,
    operator_b: np.ndarray,
    times_a: Any,
    times_b: Any,
    time_order: str = "ordered",
    initial_state: Optional[np.ndarray] = None,
    start_time: float = 0.0,
    dt: Optional[float] = None,
    progress_type: Optional[str] = None,
) -> Tuple[List[np.ndarray], np.ndarray]:
    r"""Two-time correlation ``C[i, j] = <B(t_b[j]) A(t_a[i])>``.

    ``time_order``: ``'ordered'`` fills ``t_a <= t_b``, ``'anti'`` fills ``t_a >= t_b``, ``'full'`` fills
    both (OQuPy 0.5 raises ``UnboundLocalError`` for ``'full'``); other entries are NaN.
    """
    assert time_order in ("ordered", "anti", "full"), (
        "Argument 'time_order' must be 'ordered', 'anti' or 'full'."
    )
    common = (initial_state, start_time, dt, progress_type)
    ordered = anti = None
    times: List[np.ndarray] = []
    if time_order in ("ordered", "full"):
        times, ordered = compute_correlations_nt(
            system, process_tensor, [operator_a, operator_b], [times_a, times_b], ["left", "left"], *common
        )
    if time_order in ("anti", "full"):
        swapped, values = compute_correlations_nt(
            system, process_tensor, [operator_b, operator_a], [times_b, times_a], ["right", "left"], *common
        )
        times, anti = [swapped[1], swapped[0]], values.T
    if ordered is None:
        assert anti is not None
        return times, anti
    if anti is None:
        return times, ordered
    return times, np.where(np.isnan(ordered), anti, ordered)
