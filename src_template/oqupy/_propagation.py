"""The compiled step loop of the dynamics from process tensors (the kernels of :mod:`oqupy.system_dynamics`).

Device code: ``jax.jit`` kernels around ``jax.lax.scan`` / ``jax.vmap`` in ``oqupy_jax``; plain functions and
Python loops over exact shapes in ``oqupy_numpy``.  The carried state ``s[chi_1, ..., chi_E, x]`` (one bond leg per
environment, then the Liouville index) and the order of operations in a step are stated in
:mod:`oqupy.system_dynamics`.
"""

from typing import Any, List, NamedTuple, Sequence, Tuple

import numpy as np

from oqupy import config
from oqupy._codegen import BACKEND, kernel
from oqupy._dynamics_setup import Environment
from oqupy._loops import scan, vmap

if BACKEND == "jax":
    # only oqupy_jax pads, and splits uniform cells; oqupy_numpy keeps exact shapes
    from oqupy._dynamics_setup import Uniform, stack_padded

__runs_on__ = "device"

__all__ = [
    "Loop",
    "Step",
    "contract_environment",
    "contract_uniform",
    "dynamics_step",
    "loop_inputs",
    "propagate",
    "propagate_batch",
    "read_out",
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
            if BACKEND == "jax":  # real and imaginary parts apart (see ``_propagation.contract_uniform``)
                cell = env.uniform.cell
                uniform.append(Uniform(np.stack([np.real(cell), np.imag(cell)]), env.uniform.cap))
            else:
                uniform.append(env.uniform)
        else:
            if BACKEND == "jax":
                padded = stack_padded(env.tensors, env.caps) if env.padded is None else env.padded
                tensors.append(padded.tensors)
                caps.append(padded.caps)
                bond_vectors.append(np.eye(1, padded.caps.shape[1], dtype=config.NpDtype)[0])
            else:
                tensors.append(env.tensors)
                caps.append(env.caps)
                bond_vectors.append(np.ones(1, dtype=config.NpDtype))
            uniform.append(None)
    states: Any = vectors
    for vector in bond_vectors:
        states = states[..., None, :] * vector[:, None]
    return Loop(tuple(tensors), tuple(caps), tuple(uniform), states)


def _contract_rank3(moved: np.ndarray, by_index: np.ndarray) -> np.ndarray:
    """``out[..., f, x] = sum_p moved[..., p, x] T[p, f, x]`` with ``by_index[x] = T[:, :, x]``: one
    matrix-vector product per system index ``x`` (BLAS), not a generic einsum loop."""
    rows = np.swapaxes(moved, -1, -2)[..., :, None, :]  # (..., x, 1, p)
    return np.swapaxes(np.matmul(rows, by_index)[..., 0, :], -1, -2)


def contract_environment(state: np.ndarray, tensor: np.ndarray, axis: int) -> np.ndarray:
    """Contract the bond leg ``axis`` and the system leg of ``state`` with one MPO tensor (rank 3 or 4)."""
    moved = np.moveaxis(state, axis, -2)
    if tensor.ndim == 3:
        moved = _contract_rank3(moved, np.transpose(tensor, (2, 0, 1)))
    else:
        moved = np.einsum("...pi,pfio->...fo", moved, tensor)
    return np.moveaxis(moved, -2, axis)


def contract_uniform(state: np.ndarray, cell: np.ndarray, axis: int) -> np.ndarray:
    """:func:`contract_environment` with a uniform environment's cell, stored as ``cell[x, p, f]``.

    ``oqupy_jax`` stores it as ``cell[part, x, p, f]`` (real and imaginary parts apart) and multiplies the parts
    as four real products: XLA's CPU complex matrix-vector product is 2.6 times slower (measured at 327 x 327).
    """
    moved = np.moveaxis(state, axis, -2)
    if BACKEND == "jax":
        rows = np.swapaxes(moved, -1, -2)[..., :, None, :]  # (..., x, 1, p)
        real, imag = np.real(rows), np.imag(rows)
        product = (np.matmul(real, cell[0]) - np.matmul(imag, cell[1])) + 1j * (
            np.matmul(real, cell[1]) + np.matmul(imag, cell[0])
        )
        moved = np.swapaxes(product[..., 0, :], -1, -2)
    else:
        moved = _contract_rank3(moved, cell)
    return np.moveaxis(moved, -2, axis)


def read_out(state: np.ndarray, caps: Sequence[Any]) -> np.ndarray:
    """``vec(rho)``: every bond leg of ``state`` contracted with its cap."""
    for cap in caps:
        state = np.tensordot(cap, state, axes=1)
    return state


def dynamics_step(carry: Tuple[Any, Any, Any, Any, Any], step: Step) -> Tuple[Any, np.ndarray]:
    """One step of the forward contraction (the body of the scan); returns the new carry and ``vec(rho_n)``.

    ``carry`` is ``(state, links, uniform, tensors, caps)``: the state, the matrices between consecutive
    environments, per environment None (finite) or its ``(cell, cap)`` (uniform), and the finite environments'
    whole stacks of tensors and caps, read at ``step.index``.  ``step`` holds this step's ``enter``, ``leave`` and
    ``index``.
    """
    state, links, uniform, tensors, all_caps = carry
    caps = tuple(
        cell.cap if cell is not None else stack[step.index] for stack, cell in zip(all_caps, uniform)
    )
    rho = read_out(state, caps)
    state = state @ step.enter
    for axis, stack in enumerate(tensors):
        if axis > 0:
            state = state @ links[axis - 1]
        if uniform[axis] is None:
            state = contract_environment(state, stack[step.index], axis)
        else:
            state = contract_uniform(state, uniform[axis].cell, axis)
    state = state @ step.leave
    return (state, links, uniform, tensors, all_caps), rho


def _propagate(
    state: np.ndarray, links: Sequence[Any], uniform: Sequence[Any], steps: Step
) -> Tuple[np.ndarray, np.ndarray]:
    scanned = Step(enter=steps.enter, leave=steps.leave, tensors=None, caps=None, index=steps.index)
    carry = (state, links, uniform, steps.tensors, steps.caps)
    (state, _, _, _, _), rhos = scan(dynamics_step, carry, scanned)
    return state, rhos


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
