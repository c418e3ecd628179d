r"""Dynamics and multi-time correlations of a system from process tensors (one or several environments).

The state carried from step to step is ``s[chi_1, ..., chi_E, x]``: one bond leg per environment and the
Liouville index ``x`` of ``vec(rho)``.  Step ``n`` applies the pre-control of ``n``, records
``rho_n`` (every bond contracted with its cap), applies the post-control, ``prop_1(n)``, each process tensor's
MPO tensor of ``n`` (rank 3: a diagonal multiply on the system leg, no rank-4 tensor is built), and
``prop_2(n)``.  The loop over steps is one :func:`oqupy._loops.scan` (``lax.scan`` in ``oqupy_jax``, over
tensors padded to one bond dimension per environment; a plain loop over exact shapes in ``oqupy_numpy``),
split into a few chunks for progress reporting.

Layout: the arguments are checked and the per-step matrices prepared on the host (:mod:`oqupy._dynamics_setup`);
the step loop is the kernels of :mod:`oqupy._propagation`; this module drives them.  The correlation functions
are host code (``@host``): loops over :func:`compute_dynamics` with controls.
"""

import itertools
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from oqupy import config
from oqupy._boundary import array_namespace, concatenate_to_host, expm, is_traced
from oqupy._checks import check_initial_state, check_system, nonfinite_system_error
from oqupy._codegen import BACKEND, host
from oqupy._dynamics_setup import (
    Environment,
    StepMatrices,
    chunks,
    correlation_grid,
    prepare,
    propagators,
    real_inputs,
    step_indices,
    step_matrices,
)
from oqupy._field_dynamics import compute_dynamics_with_field
from oqupy._loops import shard
from oqupy._propagation import (
    Loop,
    Step,
    loop_inputs,
    propagate,
    propagate_batch,
    read_out,
    read_out_batch,
    real_loop,
)
from oqupy._validation import first_nonfinite_step
from oqupy.control import Control
from oqupy.dynamics import Dynamics
from oqupy.operators import left_super, right_super
from oqupy.system import BaseSystem, ParameterizedSystem, System, TimeDependentSystem
from oqupy.util import check_convert, get_progress

if BACKEND == "jax":
    from oqupy._dynamics_setup import on_devices

__runs_on__ = "device"

__all__ = [
    "compute_correlations",
    "compute_correlations_nt",
    "compute_dynamics",
    "compute_dynamics_batch",
    "compute_dynamics_with_field",
    "shard_batch",
]


def _forward(
    loop: Loop,
    matrices: StepMatrices,
    num_steps: int,
    record_all: bool,
    progress_type: Optional[str],
    batched: bool,
) -> List[np.ndarray]:
    """Run the step loop in chunks (:func:`oqupy._dynamics_setup.chunks`); returns the recorded ``vec(rho)`` as
    pieces to be joined along the step axis: one per chunk (if ``record_all``), then the final state (each with a
    leading batch axis if ``batched``).

    In ``oqupy_jax`` every chunk is one asynchronous call of the jitted scan: nothing here waits for the device,
    and the pieces stay where they were computed until the caller joins them.
    """
    states = loop.states
    recorded = []
    axis = 1 if batched else 0
    with get_progress(progress_type)(num_steps, title="--> Compute dynamics") as progress:
        for begin, end in chunks(num_steps):
            steps = Step(
                enter=matrices.enter[..., begin:end, :, :],
                leave=matrices.leave[..., begin:end, :, :],
                tensors=loop.tensors,
                caps=loop.caps,
                index=np.arange(begin, end),
            )
            if batched:
                states, rhos = propagate_batch(states, matrices.links, loop.uniform, steps)
            else:
                states, rhos = propagate(states, matrices.links, loop.uniform, steps)
            if record_all:
                recorded.append(rhos)
            progress.update(end)
    last_caps = tuple(
        cell.cap if caps is None else caps[num_steps] for caps, cell in zip(loop.caps, loop.uniform)
    )
    final = read_out_batch(states, last_caps) if batched else read_out(states, last_caps)
    recorded.append(np.expand_dims(final, axis))
    return recorded


def _loop_and_basis(
    environments: List[Environment], matrices: StepMatrices, vectors: Any
) -> Tuple[Loop, StepMatrices, Any]:
    """The step loop's inputs and step matrices: in the real basis ``Q`` (returned, so that ``vec(rho) = Q^dagger
    s_real`` afterwards) where every environment is uniform and the step preserves Hermiticity
    (:func:`oqupy._dynamics_setup.real_inputs`), else as they are (``None``)."""
    real = real_inputs(environments, matrices, vectors)
    if real is None:
        return loop_inputs(environments, vectors), matrices, None
    return real_loop(real), StepMatrices(real.enter, real.leave, real.links), real.basis


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
    parameters: Optional[np.ndarray] = None,
) -> Dynamics:
    """Dynamics of ``system`` coupled to the environments described by ``process_tensor``.

    In ``oqupy_jax`` the function can be differentiated and mapped: under ``jax.grad``, ``jax.jacfwd``,
    ``jax.jit`` or ``jax.vmap`` of a function that builds a ``System`` or ``ParameterizedSystem`` from traced
    values (or passes traced ``parameters`` or a traced ``initial_state``), the returned ``Dynamics`` holds traced
    states; otherwise its states are NumPy arrays (see :mod:`oqupy._boundary`).

    Parameters
    ----------
    system: System, TimeDependentSystem or ParameterizedSystem
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
    parameters: ndarray
        Only for a ``ParameterizedSystem`` (then required): its (2 N, M) parameters, two rows per step (see
        :class:`oqupy.ParameterizedSystem`); ``num_steps`` defaults to N if no process tensor fixes it.

    Raises
    ------
    ValueError
        Among OQuPy's cases: ``dt`` not positive and finite, ``start_time`` NaN or infinite, ``num_steps``
        negative; a system whose propagator is NaN or infinite at some step (the message names the time; the
        error's ``dynamics`` attribute holds the states before it, with ``record_all``).
    """
    check_system(system)
    dim = system.dimension
    if isinstance(system, ParameterizedSystem):
        if parameters is None:
            raise TypeError("A ParameterizedSystem needs its 'parameters' (a (2 N, M) array).")
        rows = system.check_parameters(parameters)
        if num_steps is None and not process_tensor:
            num_steps = rows.shape[0] // 2
    setup = prepare(dim, initial_state, dt, num_steps, start_time, process_tensor, control)
    dt, num_steps, start = setup.dt, setup.num_steps, setup.start_time
    first: Any
    if is_traced(initial_state):
        first = initial_state
        assert first.shape == (dim, dim), f"Argument 'initial_state' must have shape {(dim, dim)}."
        first = first.reshape(dim * dim)
    else:
        first = np.asarray(check_initial_state(initial_state, dim)).reshape(dim * dim)
    vector = first @ setup.controls.pre[0].T
    if isinstance(system, ParameterizedSystem):
        prop_1, prop_2 = system.get_propagator_stack(dt, rows, num_steps)
    else:
        prop_1, prop_2 = propagators(system, dt, start, num_steps, subdiv_limit, liouvillian_epsrel)
    bad = first_nonfinite_step(prop_1, prop_2)  # None when traced: values unknown
    matrices = step_matrices(setup.environments, setup.controls, prop_1, prop_2)
    loop, matrices, real_basis = _loop_and_basis(setup.environments, matrices, vector)
    # the chunks' states joined once on the host (traced: with jax.numpy) and handed to Dynamics in one call
    rhos = concatenate_to_host(_forward(loop, matrices, num_steps, record_all, progress_type, False))
    if real_basis is not None:
        rhos = rhos @ real_basis.conj()  # vec(rho) = Q^dagger s_real
    steps = range(num_steps + 1) if record_all else [num_steps]
    times = [start + dt * step for step in steps]  # Python floats: concrete under ``jax.jit`` too
    kept = len(times)
    if bad is not None:
        # the states after a step with a NaN or infinite propagator are dropped (all of them without
        # ``record_all``), and an error below
        kept = sum(time <= start + dt * (bad + 0.5) for time in times) if record_all else 0
    dynamics = Dynamics(times[:kept], rhos.reshape(-1, dim, dim)[:kept])
    if bad is not None:
        raise nonfinite_system_error(start + bad * dt, dt, dynamics)
    return dynamics


def _batch_propagators(
    systems: List[BaseSystem],
    dt: float,
    start_time: float,
    num_steps: int,
    subdiv_limit: Optional[int],
    liouvillian_epsrel: float,
) -> Tuple[np.ndarray, np.ndarray]:
    """The two stacks of half-step propagators of every system: ``(len(systems), num_steps, d^2, d^2)`` each.

    When every system is a :class:`System` (constant), one batched ``expm`` of their Liouvillians gives each
    system's single half-step propagator, broadcast over the steps without copies (4,096 systems: one call
    instead of 4,096, and no per-step copies); otherwise each system's own stacks are stacked.
    """
    if all(type(system) is System for system in systems):
        liouvillians = [system.liouvillian() for system in systems]
        xp = array_namespace(*liouvillians)
        half_steps = xp.asarray(expm(xp.stack(liouvillians) * (dt / 2.0)), dtype=config.NpDtype)
        shape = (len(systems), num_steps, *half_steps.shape[1:])
        stacked = xp.broadcast_to(half_steps[:, None], shape)
        return stacked, stacked
    stacks = [
        propagators(system, dt, start_time, num_steps, subdiv_limit, liouvillian_epsrel) for system in systems
    ]
    xp = array_namespace(*[stack for pair in stacks for stack in pair])
    return xp.stack([first for first, _ in stacks]), xp.stack([second for _, second in stacks])


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
    devices: Any = None,
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
    devices: list of jax.Device
        ``oqupy_jax``: the devices the batch is sharded over (default: all of ``jax.devices()``; after
        ``jax.distributed.initialize()`` that is every device of the job).  The batch is padded to a multiple
        of their number and trimmed afterwards.  Ignored by ``oqupy_numpy``.

    Returns
    -------
    times: ndarray
        The ``num_steps + 1`` times (only the last with ``record_all=False``).
    states: ndarray
        Shape ``(len(systems), len(times), d, d)``; in ``oqupy_jax`` a ``jax.Array`` that stays sharded over
        ``devices`` along the batch axis (see ``states.sharding``), not gathered to one device or to NumPy.
    """
    systems = list(systems)
    assert systems, "Argument 'systems' must hold at least one system."
    for system in systems:
        check_system(system)
        if isinstance(system, ParameterizedSystem):
            raise TypeError("compute_dynamics_batch takes System and TimeDependentSystem objects.")
    dim = systems[0].dimension
    if any(system.dimension != dim for system in systems):
        raise ValueError("All systems must have the same Hilbert space dimension.")
    setup = prepare(dim, initial_state, dt, num_steps, start_time, process_tensor, control)
    dt, num_steps, start = setup.dt, setup.num_steps, setup.start_time
    if isinstance(initial_state, (list, tuple)):
        assert len(initial_state) == len(systems), "Give one initial state, or one per system."
        matrices_0 = [check_initial_state(state, dim) for state in initial_state]
    else:
        matrices_0 = [check_initial_state(initial_state, dim)] * len(systems)
    # stacked where the pieces are (on the host unless traced): one transfer to the devices, not one per system
    xp = array_namespace(*matrices_0)
    vectors = xp.stack([matrix.reshape(dim * dim) for matrix in matrices_0]) @ setup.controls.pre[0].T
    prop_1, prop_2 = _batch_propagators(systems, dt, start, num_steps, subdiv_limit, liouvillian_epsrel)
    broken = first_nonfinite_step(prop_1, prop_2)  # the first system with a NaN or infinite propagator
    if broken is not None:
        bad = first_nonfinite_step(prop_1[broken], prop_2[broken]) or 0
        raise nonfinite_system_error(start + bad * dt, dt, None, f"system {broken} of 'systems'")
    matrices = step_matrices(setup.environments, setup.controls, prop_1, prop_2)
    loop, matrices, real_basis = _loop_and_basis(setup.environments, matrices, vectors)
    if BACKEND == "jax":
        # each device reads the process tensors' whole stacks: copied to each once per device set, kept
        placed = [
            None if env.padded is None else on_devices(env.padded, devices) for env in setup.environments
        ]
        loop = Loop(
            tuple(stack if here is None else here.tensors for stack, here in zip(loop.tensors, placed)),
            tuple(caps if here is None else here.caps for caps, here in zip(loop.caps, placed)),
            loop.uniform,
            loop.states,
        )
    enter, leave, states = shard((matrices.enter, matrices.leave, loop.states), devices)
    matrices = StepMatrices(enter, leave, matrices.links)
    loop = Loop(loop.tensors, loop.caps, loop.uniform, states)
    rhos = np.concatenate(_forward(loop, matrices, num_steps, record_all, progress_type, True), axis=1)
    if real_basis is not None:
        rhos = rhos @ real_basis.conj()  # vec(rho) = Q^dagger s_real
    times = start + dt * np.arange(num_steps + 1) if record_all else start + dt * np.array([num_steps])
    return times, rhos[: len(systems)].reshape(len(systems), -1, dim, dim)


def shard_batch(batch: Any, devices: Any = None) -> Any:
    """``batch`` placed on ``devices`` for a batched computation along its first axis.

    For ``jax.vmap`` of your own functions, e.g. of ``jax.grad`` of a function that calls
    :func:`compute_dynamics` (:func:`compute_dynamics_batch` shards its batch itself)::

        placed = oqupy.shard_batch(thetas)                     # (B, 2N, p) -> (B', 2N, p), B' >= B
        gradients = jax.jit(jax.vmap(jax.grad(fidelity)))(placed)[: len(thetas)]

    ``oqupy_jax``: a ``jax.Array`` padded along axis 0 with copies of ``batch[0]`` to a multiple of the number
    of devices and sharded over a one-axis mesh (``"batch"``) of ``devices`` (default: all of
    ``jax.devices()``; after ``jax.distributed.initialize()`` that is every device of the job); a jitted
    ``vmap`` over it runs on every device, and its results come back sharded the same way.  Trim them to the
    original length.  ``oqupy_numpy``: ``batch`` unchanged (``devices`` is ignored).
    """
    (placed,) = shard((batch,), devices)
    return placed


# -- correlations ---------------------------------------------------------------------------------------


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
    dt, length = correlation_grid(process_tensor, dt)
    indices = [step_indices(times, dt, start_time, length) for times in ops_times]
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
