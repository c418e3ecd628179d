"""Host-side preparation of the dynamics from process tensors: argument checks, the time grid, controls,
propagators and the per-step matrices, as named tuples that the step loop (:mod:`oqupy._propagation`) consumes.

Host code: NumPy in both packages (validation, process tensors read from memory or HDF5, data-dependent
shapes).  Conventions are stated in :mod:`oqupy.system_dynamics`.
"""

import math
from typing import Any, List, NamedTuple, Optional, Tuple

import numpy as np

from oqupy import config
from oqupy._boundary import array_namespace, is_traced
from oqupy._codegen import BACKEND
from oqupy._influences import REAL_TOLERANCE, conjugation_basis, path_swap
from oqupy._mps import bucket
from oqupy._validation import finite_float, positive_float
from oqupy.control import Control
from oqupy.process_tensor import BaseProcessTensor, TrivialProcessTensor, TtiProcessTensor
from oqupy.system import BaseSystem

if BACKEND == "jax":
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

__runs_on__ = "host"

__all__ = [
    "Controls",
    "Environment",
    "PaddedEnvironment",
    "RealForm",
    "RealInputs",
    "Setup",
    "StepMatrices",
    "Uniform",
    "chunks",
    "controls",
    "correlation_grid",
    "environment",
    "prepare",
    "process_tensor_list",
    "propagators",
    "real_basis",
    "real_inputs",
    "real_uniform",
    "stack_padded",
    "step_indices",
    "step_matrices",
    "time_grid",
]

CHUNK_STEPS = 1024
"""Most steps per compiled scan call (a power of two; progress is reported between chunks)."""


class Uniform(NamedTuple):
    """The repeating tensor of a uniform process tensor and its cap (the same at every step).

    In the coupling's basis (``pairs`` None) ``cell`` is the complex ``T[p, f, a]`` stored as ``cell[a, p, f]``.
    In the real basis of :func:`real_basis` (:func:`real_uniform`) ``cell`` holds the real matrices of the
    fixed indices, ``[x, p, f]``, and ``pairs`` one real ``(2 chi, 2 chi)`` block per pair ``(A, B)``:
    ``[[c_A, c_B], [-c_B, c_A]] / sqrt 2``, so that ``[s_A, s_B] @ block`` is the pair's new ``[s_A, s_B]``.
    """

    cell: np.ndarray  # T[p, f, a] stored as cell[a, p, f] (contiguous: one matrix per path index)
    cap: np.ndarray  # v_r
    pairs: Optional[np.ndarray] = None  # the real form's blocks, one per pair of indices (None: complex)


class RealForm(NamedTuple):
    """A uniform process tensor in the real basis (:func:`real_uniform`)."""

    uniform: Uniform  # the cell (fixed indices and pair blocks) and its cap, real
    left: np.ndarray  # v_l, real


class RealInputs(NamedTuple):
    """What the step loop takes in the real basis (:func:`real_inputs`), all real."""

    basis: np.ndarray  # Q: the real state is Q vec(rho) on the system leg; vec(rho) = Q^dagger s_real
    enter: np.ndarray
    leave: np.ndarray
    links: Tuple[np.ndarray, ...]
    uniform: Tuple[Uniform, ...]
    states: np.ndarray  # (*batch, chi_1, ..., chi_E, d^2)


class Environment(NamedTuple):
    """One process tensor, read for ``num_steps`` steps.

    A finite process tensor has its ``tensors`` and ``caps`` listed per step (``uniform`` None); a uniform one
    has empty lists, its cell in ``uniform`` and the bond vector before the first step in ``left``.
    """

    tensors: List[np.ndarray]  # MPO tensors of steps 0 .. num_steps - 1
    caps: List[np.ndarray]  # caps of steps 0 .. num_steps
    transform_in: np.ndarray  # into the environment's basis (the identity if it has none)
    transform_out: np.ndarray  # out of it
    uniform: Optional[Uniform] = None
    left: Optional[np.ndarray] = None
    padded: Optional["PaddedEnvironment"] = None  # oqupy_jax: tensors and caps stacked on the device
    real: Optional[RealForm] = None  # a uniform one in the real basis, where its cell is real there


class PaddedEnvironment(NamedTuple):
    """An environment's tensors and caps stacked along the step axis, zero-padded to one bond dimension."""

    tensors: np.ndarray
    caps: np.ndarray
    placed: Any = None  # oqupy_jax: {devices: this environment copied to each of them} (see ``on_devices``)


class Controls(NamedTuple):
    """Control superoperators of every step (identities where there is none)."""

    pre: np.ndarray  # (num_steps + 1, d^2, d^2): before the state of step n is recorded
    post: np.ndarray  # (num_steps, d^2, d^2): after it


class Setup(NamedTuple):
    """The validated arguments common to ``compute_dynamics`` and ``compute_dynamics_batch``."""

    dt: float
    num_steps: int
    start_time: float
    environments: List[Environment]  # the non-trivial process tensors, in the order given
    controls: Controls


class StepMatrices(NamedTuple):
    """The system's part of every step, merged with the controls and the environments' transforms."""

    enter: np.ndarray  # (..., num_steps, d^2, d^2): post-control, prop_1, first transform in
    leave: np.ndarray  # (..., num_steps, d^2, d^2): last transform out, prop_2, next pre-control
    links: Tuple[np.ndarray, ...]  # transform out of environment e, then into e + 1


def process_tensor_list(process_tensor: Any) -> List[BaseProcessTensor]:
    """``process_tensor`` (None, one, or a list or tuple of them) as a list; ``TypeError`` for anything else."""
    if process_tensor is None:
        return []
    candidates = list(process_tensor) if isinstance(process_tensor, (list, tuple)) else [process_tensor]
    for candidate in candidates:
        if not isinstance(candidate, BaseProcessTensor):
            raise TypeError("Argument 'process_tensor' must be a process tensor or a list of them.")
    return candidates


def time_grid(
    process_tensors: List[BaseProcessTensor], dimension: int, dt: Optional[float], num_steps: Optional[int]
) -> Tuple[float, int]:
    """(dt, num_steps) agreed by the process tensors and the arguments; OQuPy's exceptions if they disagree."""
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
        dt = positive_float(dt, "dt", finite=True)
        dts.add(dt)
    if len(dts) > 1 and not all(math.isclose(a, b, rel_tol=1e-12) for a in dts for b in dts):
        raise ValueError(f"Process tensors and 'dt' disagree on the time step: {sorted(dts)}.")
    if not dts:
        raise ValueError("No time step: give 'dt' or a process tensor with a time step.")
    lengths = [len(pt) for pt in process_tensors if math.isfinite(pt.max_step)]
    if num_steps is None:
        if not lengths:
            raise ValueError("Give 'num_steps': no finite process tensor fixes the number of steps.")
        num_steps = min(lengths)
    else:
        if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)):
            raise TypeError("Argument 'num_steps' must be int.")
        if num_steps < 0:
            raise ValueError(f"Argument 'num_steps' must be non-negative (got {num_steps}).")
        if lengths and num_steps > min(lengths):
            raise ValueError(
                f"Argument 'num_steps' ({num_steps}) is longer than the shortest process tensor ({min(lengths)})."
            )
    return sorted(dts)[0], int(num_steps)


def controls(control: Optional[Control], num_steps: int, dim2: int, dt: float, start_time: float) -> Controls:
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
    return Controls(pre, post)


def environment(pt: BaseProcessTensor, num_steps: int) -> Environment:
    """Tensors of steps ``0 .. num_steps - 1``, caps of ``0 .. num_steps`` and the transforms of one process tensor
    (a uniform one: its cell and boundary vectors)."""
    dim2 = pt.hilbert_space_dimension**2
    identity = np.identity(dim2, dtype=config.NpDtype)
    transform_in = identity if pt.transform_in is None else pt.transform_in
    transform_out = identity if pt.transform_out is None else pt.transform_out
    if isinstance(pt, TtiProcessTensor):
        uniform = Uniform(np.ascontiguousarray(np.transpose(pt.cell, (2, 0, 1))), pt.right_boundary)
        real = pt.derived(REAL_FORM_KEY, lambda: real_uniform(pt))
        return Environment([], [], transform_in, transform_out, uniform, pt.left_boundary, real=real)
    pt.check_consistency()
    tensors = [np.asarray(pt.get_raw_mpo_tensor(step), dtype=config.NpDtype) for step in range(num_steps)]
    caps = pt.get_cap_tensors()[: num_steps + 1]
    if BACKEND == "jax":
        # stacked and sent to the device once per process tensor and length, not once per call
        padded = pt.derived(num_steps, lambda: on_device(stack_padded(tensors, caps)))
        return Environment(tensors, caps, transform_in, transform_out, padded=padded)
    else:
        return Environment(tensors, caps, transform_in, transform_out)


REAL_FORM_KEY = -1
"""The key of a uniform process tensor's real form among what dynamics derive from it (``derived``)."""


def real_basis(dimension: int) -> Tuple[np.ndarray, int]:
    """``(Q, f)``: the real basis of ``vec(rho)`` for ``d = dimension``, and its number of fixed indices.

    The rows of :func:`oqupy._influences.conjugation_basis` for the swap ``(i, j) -> (j, i)``, reordered: the
    ``f`` fixed indices ``(i, i)`` first, then each pair's ``A = (x_ij + x_ji) / sqrt 2`` and
    ``B = (x_ij - x_ji) / (i sqrt 2)`` next to each other (one row of length ``2 chi`` per pair in the loop).
    ``Q vec(rho)`` is real for a Hermitian ``rho``; a Hermiticity-preserving superoperator ``M`` (the loop applies
    ``s -> M^T s``) is real as ``conj(Q) M Q^T``.
    """
    swap = path_swap(dimension)
    path = np.arange(dimension * dimension)
    fixed = [int(x) for x in path if swap[x] == x]
    pairs = [int(index) for x in path if x < swap[x] for index in (x, swap[x])]
    return conjugation_basis(swap)[fixed + pairs], len(fixed)


def _real_part(array: np.ndarray) -> Optional[np.ndarray]:
    """``array`` as a real array if its imaginary part is rounding (:data:`REAL_TOLERANCE`), else None."""
    scale = float(np.abs(array).max()) if array.size else 0.0
    if array.size and float(np.abs(array.imag).max()) > REAL_TOLERANCE * scale:
        return None
    return np.ascontiguousarray(array.real)


def real_uniform(pt: TtiProcessTensor) -> Optional[RealForm]:
    """The cell of ``pt`` in the real basis (:func:`real_basis`), or None where it is not real there.

    Real for a cell that :class:`oqupy.TtiPtTempo` built in the real basis (``f[:, swap a, :] = conj(f[:, a,
    :])`` with real boundary vectors); a cell of an older build, or one read from a file written before, has a
    complex gauge and keeps the complex step.
    """
    dimension = pt.hilbert_space_dimension
    cell = pt.cell  # T[p, f, a]
    if cell.shape[2] != dimension * dimension:
        return None
    basis, fixed = real_basis(dimension)
    real_cell = _real_part(np.einsum("Aa,pfa->Apf", basis, cell))
    left, right = _real_part(pt.left_boundary), _real_part(pt.right_boundary)
    if real_cell is None or left is None or right is None:
        return None
    first, second = real_cell[fixed::2], real_cell[fixed + 1 :: 2]  # c_A, c_B of each pair
    blocks = np.sqrt(0.5) * np.concatenate(
        [np.concatenate([first, second], axis=2), np.concatenate([-second, first], axis=2)], axis=1
    )
    return RealForm(Uniform(np.ascontiguousarray(real_cell[:fixed]), right, blocks), left)


def real_inputs(
    environments: List[Environment], matrices: StepMatrices, vectors: Any
) -> Optional[RealInputs]:
    """The step loop's inputs in the real basis (:func:`real_basis`), or None where the complex loop must run.

    The real loop runs when every environment is a uniform process tensor with a real form (:func:`real_uniform`),
    the initial states are Hermitian and every step matrix preserves Hermiticity (a Hermitian Hamiltonian,
    Lindblad operators of any kind, controls that preserve Hermiticity): a quarter of the complex loop's
    multiplications.  Otherwise (a finite process tensor among the environments, a non-Hermitian Hamiltonian or
    initial state, a control such as ``left_super(sigma_+)`` of a correlation function, or traced values in
    ``oqupy_jax``, whose imaginary parts cannot be checked) None.
    """
    if not environments or any(env.real is None for env in environments):
        return None
    if is_traced(matrices.enter, matrices.leave, matrices.links, vectors):
        return None
    dimension = int(round(math.sqrt(np.shape(vectors)[-1])))
    basis, _ = real_basis(dimension)
    # s -> M^T s becomes s_real -> (conj(Q) M Q^T)^T s_real
    enter = _real_part(basis.conj() @ np.asarray(matrices.enter) @ basis.T)
    leave = _real_part(basis.conj() @ np.asarray(matrices.leave) @ basis.T)
    links = [_real_part(basis.conj() @ np.asarray(link) @ basis.T) for link in matrices.links]
    states = _real_part(np.asarray(vectors) @ basis.T)
    if enter is None or leave is None or states is None or any(link is None for link in links):
        return None
    for env in environments:
        assert env.real is not None
        states = states[..., None, :] * env.real.left[:, None]
    uniform = tuple(env.real.uniform for env in environments if env.real is not None)
    return RealInputs(basis, enter, leave, tuple(link for link in links if link is not None), uniform, states)


def propagators(
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


def stack_padded(tensors: List[np.ndarray], caps: List[np.ndarray]) -> PaddedEnvironment:
    """One array of tensors (and of caps) zero-padded to a common bond dimension (``_mps.bucket``; only
    ``oqupy_jax`` calls this: ``oqupy_numpy`` keeps exact shapes).  Rank-3 tensors are stacked in the step
    loop's layout ``[step, x, p, f]``, rank-4 ones as ``[step, p, f, i, o]``."""
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
    if len(legs) == 1:  # rank 3: the step loop's layout ``[x, p, f]`` (``_propagation.by_index``)
        stacked = np.ascontiguousarray(np.transpose(stacked, (0, 3, 1, 2)))
    padded_caps = np.zeros((len(caps), bond), dtype=config.NpDtype)
    for step, cap in enumerate(caps):
        padded_caps[step, : cap.shape[0]] = cap
    return PaddedEnvironment(stacked, padded_caps)


def chunks(num_steps: int) -> List[Tuple[int, int]]:
    """``(begin, end)`` of each chunk: ``CHUNK_STEPS`` steps while that many are left, then the rest in decreasing
    powers of two (1,100 steps: 1,024 + 64 + 8 + 4).

    Every run is thus made of the same few scan lengths (``oqupy_jax`` compiles at most ``log2(CHUNK_STEPS) + 1``
    of them per shape of the inputs, not one per remainder), and 10,000 steps are 12 calls, not 157.
    """
    bounds = []
    begin, size = 0, CHUNK_STEPS
    while begin < num_steps:
        while size > num_steps - begin:
            size //= 2
        bounds.append((begin, begin + size))
        begin += size
    return bounds


def prepare(
    dimension: int,
    initial_state: Any,
    dt: Optional[float],
    num_steps: Optional[int],
    start_time: Any,
    process_tensor: Any,
    control: Optional[Control],
) -> Setup:
    """Validate the common arguments of ``compute_dynamics`` and ``compute_dynamics_batch``."""
    process_tensors = process_tensor_list(process_tensor)
    if control is not None and not isinstance(control, Control):
        raise TypeError("Argument 'control' must be an oqupy.Control object.")
    dt, num_steps = time_grid(process_tensors, dimension, dt, num_steps)
    if initial_state is None:
        raise ValueError(
            "An initial state must be given (process tensors with an initial tensor are not supported)."
        )
    start_time = finite_float(start_time, "start_time")
    if control is not None and control.dimension != dimension:
        raise ValueError(
            f"Control of dimension {control.dimension} used with a system of dimension {dimension}."
        )
    environments = [
        environment(pt, num_steps) for pt in process_tensors if not isinstance(pt, TrivialProcessTensor)
    ]
    return Setup(
        dt, num_steps, start_time, environments, controls(control, num_steps, dimension**2, dt, start_time)
    )


def step_matrices(
    environments: List[Environment], controls: Controls, prop_1: np.ndarray, prop_2: np.ndarray
) -> StepMatrices:
    """Per step: everything before the first bath (``enter``) and after the last (``leave``), and the links.

    ``prop_1`` and ``prop_2`` may carry leading batch axes (one stack of propagators per system); traced ones
    (``oqupy_jax`` under ``jax.grad``, ``jit``, ``vmap``) are merged with ``jax.numpy``.
    """
    xp = array_namespace(prop_1, prop_2)
    pre, post = controls
    dim2 = pre.shape[-1]
    identity = np.identity(dim2, dtype=config.NpDtype)
    first_in = environments[0].transform_in if environments else identity
    last_out = environments[-1].transform_out if environments else identity
    # enter[n] = post[n]^T prop_1[n]^T first_in, leave[n] = last_out prop_2[n]^T pre[n + 1]^T: batched matrix
    # products (a generic einsum over thousands of systems took most of a batch's host time)
    enter = xp.matrix_transpose(post) @ xp.matrix_transpose(prop_1) @ first_in
    leave = last_out @ xp.matrix_transpose(prop_2) @ xp.matrix_transpose(pre[1:])
    links = tuple(
        before.transform_out @ after.transform_in for before, after in zip(environments, environments[1:])
    )
    return StepMatrices(enter, leave, links)


def step_indices(times: Any, dt: float, start_time: float, num_steps: Optional[int]) -> List[int]:
    """Step indices of an int, slice, list of ints, float time or (t_start, t_end) interval.

    ``num_steps`` None: no last step (uniform process tensors only); a slice then needs an explicit stop.
    """

    def check(index: int) -> int:
        if index < 0 or (num_steps is not None and index > num_steps):
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
        if num_steps is not None:
            return list(range(num_steps + 1))[times]
        if times.stop is None or times.stop < 0 or (times.start is not None and times.start < 0):
            raise IndexError("With only uniform process tensors, a slice of times needs non-negative bounds.")
        return list(range(times.stop))[times]
    if isinstance(times, (float, np.floating)):
        return [from_time(float(times))]
    if isinstance(times, tuple):
        assert len(times) == 2 and all(isinstance(t, (float, np.floating)) for t in times), (
            "A time interval must be a tuple of two floats (start, end)."
        )
        low, high = (float(t) for t in times)
        first = int(math.ceil((low - start_time) / dt - 1e-9))
        last = int(math.floor((high - start_time) / dt + 1e-9))
        if first < 0 or (num_steps is not None and last > num_steps) or first > last:
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


def correlation_grid(process_tensor: Any, dt: Optional[float]) -> Tuple[float, Optional[int]]:
    """(dt, number of steps) of the process tensors of a correlation computation (None: no last step).

    A missing (or wrong) process tensor or a missing time step is an ``AssertionError``, as in OQuPy.
    """
    candidates = process_tensor if isinstance(process_tensor, (list, tuple)) else [process_tensor]
    assert candidates and all(isinstance(pt, BaseProcessTensor) for pt in candidates), (
        "Correlations need a process tensor (or a list of them)."
    )
    process_tensors = process_tensor_list(process_tensor)
    lengths = [len(pt) for pt in process_tensors if math.isfinite(pt.max_step)]
    dts = [pt.dt for pt in process_tensors if pt.dt is not None]
    if dt is None:
        assert dts, "It is necessary to specify the time step 'dt' because the process tensor has none."
        dt = dts[0]
    if not lengths:
        if not any(isinstance(pt, TtiProcessTensor) for pt in process_tensors):
            raise ValueError("Correlations need a process tensor of finite length, or a uniform one.")
        return float(dt), None
    return float(dt), min(lengths)


if BACKEND == "jax":

    def on_device(host: PaddedEnvironment) -> PaddedEnvironment:
        """``host``'s stacks on the default device, with an empty table of copies for other device sets.

        Placed eagerly even when called while a function is traced (``jax.grad`` through the dynamics): the
        stacks are kept on the process tensor for later calls, where a tracer would have escaped its trace.
        """
        with jax.ensure_compile_time_eval():
            return PaddedEnvironment(jax.device_put(host.tensors), jax.device_put(host.caps), {})

    def on_devices(padded: PaddedEnvironment, devices: Any) -> PaddedEnvironment:
        """``padded`` copied to every one of ``devices`` (default: all), for a batch sharded over them: each device
        reads the whole stacks.  Made once per device set and kept in ``padded.placed``, not at every call."""
        key = tuple(jax.devices() if devices is None else devices)
        if key not in padded.placed:
            everywhere = NamedSharding(Mesh(list(key), ("batch",)), PartitionSpec())
            with jax.ensure_compile_time_eval():  # kept for later calls: never a tracer (see on_device)
                padded.placed[key] = PaddedEnvironment(
                    jax.device_put(padded.tensors, everywhere), jax.device_put(padded.caps, everywhere), {}
                )
        return padded.placed[key]
