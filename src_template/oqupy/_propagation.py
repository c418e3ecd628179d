"""The compiled step loop of the dynamics from process tensors (the kernels of :mod:`oqupy.system_dynamics`).

Device code: ``jax.jit`` kernels around ``jax.lax.scan`` / ``jax.vmap`` in ``oqupy_jax``; plain functions and
Python loops over exact shapes in ``oqupy_numpy``.  The carried state ``s[chi_1, ..., chi_E, x]`` (one bond leg per
environment, then the Liouville index) and the order of operations in a step are stated in
:mod:`oqupy.system_dynamics`.
"""

from typing import Any, List, NamedTuple, Sequence, Tuple

import numpy as np

from oqupy import config
from oqupy._codegen import BACKEND, host, kernel
from oqupy._dynamics_setup import Environment, RealInputs, Uniform
from oqupy._loops import scan, vmap

if BACKEND == "jax":
    # only oqupy_jax pads; oqupy_numpy keeps exact shapes
    from oqupy._dynamics_setup import stack_padded

__runs_on__ = "device"

__all__ = [
    "Loop",
    "Step",
    "by_index",
    "contract_environment",
    "contract_real_uniform",
    "dynamics_step",
    "loop_inputs",
    "propagate",
    "propagate_batch",
    "read_out",
    "real_loop",
    "read_out_batch",
]


class Step(NamedTuple):
    """What the scan consumes: ``enter``, ``leave`` and ``index`` stacked along a leading axis of the steps run,
    ``tensors`` and ``caps`` whole (every step of the process tensors; the scan reads entry ``index``).

    ``enter``: everything before the first environment (post-control, ``prop_1``, its transform in);
    ``leave``: everything after the last (its transform out, ``prop_2``, the next pre-control);
    ``tensors``: per environment, its MPO tensors; ``caps``: per environment, its caps (for the read-out);
    ``index``: the step numbers.  Reading the tensors by index inside the loop, rather than passing a slice of
    them, spares ``oqupy_jax`` a device copy of the chunk's tensors at every call.  A uniform environment has
    None in ``tensors`` and ``caps``: its cell and cap are the same at every step and travel in the carry
    instead (see :func:`dynamics_step`).
    """

    enter: Any
    leave: Any
    tensors: Any  # a tuple over environments (or None in ``in_axes``)
    caps: Any
    index: Any


class Loop(NamedTuple):
    """The environments as the step loop wants them, and the initial states with their bond legs."""

    tensors: Tuple[
        Any, ...
    ]  # per environment: stacked and padded (oqupy_jax) or a list per step (oqupy_numpy); None if uniform
    caps: Tuple[Any, ...]  # per environment, the same
    uniform: Tuple[Any, ...]  # per environment: None, or its ``Uniform`` (cell, cap)
    states: np.ndarray  # (*batch, chi_1, ..., chi_E, d^2)


def loop_inputs(environments: List[Environment], vectors: np.ndarray) -> Loop:
    """The tensors and caps of every bath as the scan wants them, and the initial states ``vectors`` with bonds.

    The bond leg of a finite environment starts as ``[1]`` (zero-padded to its bucket in ``oqupy_jax``), of a
    uniform one as its left boundary vector.
    """
    tensors: List[Any] = []
    caps: List[Any] = []
    uniform: List[Any] = []
    bond_vectors: List[Any] = []
    for env in environments:
        if env.uniform is not None:
            tensors.append(None)
            caps.append(None)
            bond_vectors.append(env.left)
            # oqupy_jax: on the device once per call, not copied from the host at every chunk
            uniform.append(Uniform(np.asarray(env.uniform.cell), np.asarray(env.uniform.cap)))
        else:
            if BACKEND == "jax":
                padded = stack_padded(env.tensors, env.caps) if env.padded is None else env.padded
                tensors.append(padded.tensors)
                caps.append(padded.caps)
                bond_vectors.append(np.eye(1, padded.caps.shape[1], dtype=config.NpDtype)[0])
            else:
                tensors.append([by_index(tensor) for tensor in env.tensors])
                caps.append(env.caps)
                bond_vectors.append(np.ones(1, dtype=config.NpDtype))
            uniform.append(None)
    states: Any = vectors
    for vector in bond_vectors:
        states = states[..., None, :] * vector[:, None]
    return Loop(tuple(tensors), tuple(caps), tuple(uniform), states)


def real_loop(real: RealInputs) -> Loop:
    """:class:`Loop` of the step loop in the real basis (:func:`oqupy._dynamics_setup.real_inputs`): every
    environment uniform, its real cell on the device once per call."""
    uniform = tuple(
        Uniform(np.asarray(cell.cell), np.asarray(cell.cap), np.asarray(cell.pairs)) for cell in real.uniform
    )
    nothing = tuple(None for _ in uniform)
    return Loop(nothing, nothing, uniform, real.states)


@host
def by_index(tensor: np.ndarray) -> np.ndarray:
    """An MPO tensor in the loop's layout: ``T[p, f, x]`` as the contiguous ``by_index[x, p, f]`` (one matrix per
    system index: each step's product reads it without a transpose); a rank-4 ``T[p, f, i, o]`` as it is."""
    return np.ascontiguousarray(np.transpose(tensor, (2, 0, 1))) if tensor.ndim == 3 else tensor


def _contract_by_index(moved: np.ndarray, by_index: np.ndarray) -> np.ndarray:
    """``out[x, ..., f] = sum_p moved[x, ..., p] T[p, f, x]`` with ``by_index[x] = T[:, :, x]``: one batched
    matrix product over the system index ``x`` (BLAS in NumPy; one ``dot_general`` in XLA)."""
    rows = moved.reshape(moved.shape[0], -1, moved.shape[-1])  # (x, other bonds, p)
    return np.matmul(rows, by_index).reshape(moved.shape[:-1] + (by_index.shape[-1],))


def contract_environment(state: np.ndarray, tensor: np.ndarray, axis: int) -> np.ndarray:
    """Contract bond leg ``axis`` and the system leg of a state in the loop's layout ``s[x, chi_1, ..., chi_E]``
    with one MPO tensor in the loop's layout (:func:`by_index`: ``[x, p, f]`` for rank 3, ``T[p, f, i, o]``)."""
    moved = np.moveaxis(state, axis + 1, -1)
    if tensor.ndim == 3:
        moved = _contract_by_index(moved, tensor)
    else:
        moved = np.einsum("i...p,pfio->o...f", moved, tensor)
    return np.moveaxis(moved, -1, axis + 1)


def contract_real_uniform(
    state: np.ndarray, fixed_cells: np.ndarray, blocks: np.ndarray, axis: int
) -> np.ndarray:
    """:func:`contract_environment` for a uniform cell in the real basis (:class:`Uniform` with ``pairs``: the
    fixed indices' matrices ``fixed_cells[x, p, f]`` and the pairs' ``blocks``; the state's system leg ordered as
    :func:`oqupy._dynamics_setup.real_basis`: fixed indices, then the pairs).

    A fixed index ``x`` takes ``s_x c_x``; a pair takes ``[s_A, s_B] @ [[c_A, c_B], [-c_B, c_A]] / sqrt 2``, the
    complex product ``s_a T_a`` in its real and imaginary parts.  Both are real batched matrix products, the pair's
    rows made by a reshape of the state (its two rows are adjacent).
    """
    moved = np.moveaxis(state, axis + 1, -1)  # (x, other bonds, p)
    fixed = fixed_cells.shape[0]
    pairs, width, twice = blocks.shape  # (pairs, 2 p, 2 f)
    others = moved.shape[1:-1]
    out_fixed = _contract_by_index(moved[:fixed], fixed_cells)
    rows = np.moveaxis(moved[fixed:].reshape((pairs, 2) + moved.shape[1:]), 1, -2).reshape(pairs, -1, width)
    out_pairs = np.matmul(rows, blocks).reshape((pairs,) + others + (2, twice // 2))
    out_pairs = np.moveaxis(out_pairs, -2, 1).reshape((2 * pairs,) + others + (twice // 2,))
    return np.moveaxis(np.concatenate([out_fixed, out_pairs], axis=0), -1, axis + 1)


def read_out(state: np.ndarray, caps: Sequence[Any]) -> np.ndarray:
    """``vec(rho)`` of a state ``s[chi_1, ..., chi_E, x]``: every bond leg contracted with its cap."""
    for cap in caps:
        state = np.tensordot(cap, state, axes=1)
    return state


def _read_out_first(state: np.ndarray, caps: Sequence[Any]) -> np.ndarray:
    """:func:`read_out` of a state in the loop's layout ``s[x, chi_1, ..., chi_E]``."""
    for cap in caps:
        state = np.tensordot(state, cap, axes=([1], [0]))
    return state


def _on_system(matrix: np.ndarray, state: np.ndarray) -> np.ndarray:
    """``s @ matrix`` on the system leg of a state in the loop's layout:
    ``out[y, ...] = sum_x M[x, y] s[x, ...]``."""
    return np.tensordot(matrix, state, axes=([0], [0]))


def dynamics_step(carry: Tuple[Any, Any, Any, Any, Any], step: Step) -> Tuple[Any, np.ndarray]:
    """One step of the forward contraction (the body of the scan); returns the new carry and ``vec(rho_n)``.

    ``carry`` is ``(state, links, uniform, tensors, caps)``: the state in the loop's layout ``s[x, chi_1, ...,
    chi_E]`` (the system leg first: XLA's CPU backend runs the batched products over ``x`` about three times
    faster without a transpose at every step), the matrices between consecutive environments, per environment
    None (finite) or its ``(cell, cap)`` (uniform), and the finite environments' whole stacks of tensors and
    caps, read at ``step.index``.  ``step`` holds this step's ``enter``, ``leave`` and ``index``.
    """
    state, _, _, tensors, all_caps = carry
    # tuples over the environments (an index beyond them raises IndexError in both packages)
    links: Tuple[np.ndarray, ...] = carry[1]
    uniform: Tuple[Any, ...] = carry[2]  # None or the environment's ``Uniform``
    caps = tuple(
        cell.cap if cell is not None else stack[step.index] for stack, cell in zip(all_caps, uniform)
    )
    rho = _read_out_first(state, caps)
    state = _on_system(step.enter, state)
    for axis, stack in enumerate(tensors):
        if axis > 0:
            state = _on_system(links[axis - 1], state)
        if uniform[axis] is not None and uniform[axis].pairs is not None:
            state = contract_real_uniform(state, uniform[axis].cell, uniform[axis].pairs, axis)
        else:
            # a uniform environment's cell is stored as ``cell[x, p, f]``, the loop's layout of a rank-3 tensor
            tensor = stack[step.index] if uniform[axis] is None else uniform[axis].cell
            state = contract_environment(state, tensor, axis)
    state = _on_system(step.leave, state)
    return (state, links, uniform, tensors, all_caps), rho


def _propagate(
    state: np.ndarray, links: Sequence[Any], uniform: Sequence[Any], steps: Step
) -> Tuple[np.ndarray, np.ndarray]:
    scanned = Step(enter=steps.enter, leave=steps.leave, tensors=None, caps=None, index=steps.index)
    carry = (np.moveaxis(state, -1, 0), links, uniform, steps.tensors, steps.caps)
    (state, _, _, _, _), rhos = scan(dynamics_step, carry, scanned)
    return np.moveaxis(state, 0, -1), rhos


@kernel
def propagate(
    state: np.ndarray, links: Sequence[Any], uniform: Sequence[Any], steps: Step
) -> Tuple[np.ndarray, np.ndarray]:
    """Run :func:`dynamics_step` over the stacked ``steps``; returns the final state and the recorded states."""
    return _propagate(state, links, uniform, steps)


@kernel
def propagate_batch(
    states: np.ndarray, links: Sequence[Any], uniform: Sequence[Any], steps: Step
) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`propagate` for a batch of systems: a leading axis on ``states`` and on the step matrices."""
    per_system = Step(enter=0, leave=0, tensors=None, caps=None, index=None)
    return vmap(_propagate, in_axes=(0, None, None, per_system))(states, links, uniform, steps)


@kernel
def read_out_batch(states: np.ndarray, caps: Sequence[Any]) -> np.ndarray:
    """:func:`read_out` for a batch of states."""
    return vmap(read_out, in_axes=(0, None))(states, caps)
