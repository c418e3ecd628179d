r"""Gradients of a function of the final state with respect to the parameters of a ``ParameterizedSystem``.

The adjoint method (Fux et al., PRL 126, 200401 (2021); Butler et al., PRL 132, 060401 (2024)).  The objective
``F`` is linear in the final state, ``F = sum_ij T[i, j] rho_N[i, j]`` with ``T = target_derivative`` (for a
target state sigma, ``F = Tr(sigma rho_N)`` has ``T = sigma.T``); a non-linear objective enters through its
derivative at the final state (``target_derivative`` may be a callable of ``rho_N``, e.g. ``lambda rho: 2 *
rho.T`` for the purity).

1. Forward: the step loop of :mod:`oqupy.system_dynamics`, storing before ``prop_1`` of every step the full
   state ``s_n[chi_1, ..., chi_E, a]`` (one bond leg per environment).
2. Backward: the adjoint ``lambda = T (x) caps_N`` (the derivative of ``F`` with respect to the final state with
   its bond legs) goes back through the transposed pre-control, ``prop_2``, the environments' tensors (bond
   legs swapped, input and output system legs swapped), ``prop_1`` and the controls.
3. For each step ``n`` the rank-4 adjoint tensor ``D_n[a, b, c, e] = sum s_n[chi, a] W_n[(chi, b), (chi', c)]
   lambda_n[chi', e]``, with ``W_n`` the environments' tensors of step ``n`` (and their basis transforms) and
   ``lambda_n`` the adjoint after ``prop_2(n)``: legs (input of ``prop_1``, its output = input of the
   environments, their output = input of ``prop_2``, its output).  Then ``F = sum D_n[a, b, c, e] U_1[b, a]
   U_2[e, c]`` for every ``n``, and the chain rule gives ``dF/dtheta_{2n, j} = sum D_n[a, b, c, e]
   dU_1/dtheta_j[b, a] U_2[e, c]`` and ``dF/dtheta_{2n+1, j} = sum D_n[a, b, c, e] U_1[b, a] dU_2/dtheta_j[e,
   c]``.  The propagator derivatives are those of :class:`oqupy.ParameterizedSystem` (Frechet derivative of
   ``expm``).

Host code: NumPy in both packages.  In ``oqupy_jax`` the same gradient is also ``jax.grad`` of a function that
calls :func:`oqupy.compute_dynamics` with traced parameters (exact to rounding; see ``docs/gradients.md``).
"""

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from oqupy import config
from oqupy._checks import check_initial_state
from oqupy._dynamics_setup import Environment, prepare
from oqupy.control import Control
from oqupy.dynamics import Dynamics
from oqupy.system import ParameterizedSystem
from oqupy.util import get_progress

__runs_on__ = "host"

__all__ = ["compute_gradient_and_dynamics", "state_gradient"]


# -- the environments of one step, forward and transposed ---------------------------------------------


def _step_tensor(env: Environment, step: int) -> np.ndarray:
    """The MPO tensor of ``env`` at ``step``: ``T[p, f, x]`` (rank 3) or ``T[p, f, i, o]`` (rank 4)."""
    if env.uniform is not None:
        return np.transpose(env.uniform.cell, (1, 2, 0))
    return np.asarray(env.tensors[step])


def _cap(env: Environment, step: int) -> np.ndarray:
    return env.uniform.cap if env.uniform is not None else np.asarray(env.caps[step])


def _contract(state: np.ndarray, tensor: np.ndarray, axis: int, adjoint: bool) -> np.ndarray:
    """Contract bond leg ``axis`` and the system leg of ``state`` with one tensor (or its transpose)."""
    moved = np.moveaxis(state, axis, -2)
    if tensor.ndim == 3:
        moved = np.einsum("...fx,pfx->...px" if adjoint else "...px,pfx->...fx", moved, tensor)
    else:
        moved = np.einsum("...fo,pfio->...pi" if adjoint else "...pi,pfio->...fo", moved, tensor)
    return np.moveaxis(moved, -2, axis)


def _environments(
    state: np.ndarray, environments: List[Environment], step: int, adjoint: bool = False
) -> np.ndarray:
    """``W_n`` (module docstring) applied to ``state[..., chi_1, ..., chi_E, x]``, or its transpose."""
    count = len(environments)
    if not count:
        return state
    first = state.ndim - 1 - count
    order = range(count - 1, -1, -1) if adjoint else range(count)
    for e in order:
        env = environments[e]
        state = state @ (env.transform_out.T if adjoint else env.transform_in)
        state = _contract(state, _step_tensor(env, step), first + e, adjoint)
        state = state @ (env.transform_in.T if adjoint else env.transform_out)
    return state


def _read_out(state: np.ndarray, environments: List[Environment], step: int) -> np.ndarray:
    for env in environments:
        state = np.tensordot(_cap(env, step), state, axes=1)
    return state


def _adjoint_tensor(
    forward: np.ndarray, adjoint: np.ndarray, environments: List[Environment], step: int
) -> np.ndarray:
    """``D_n[a, b, c, e]`` from the stored state ``forward[chi, a]`` and the adjoint ``adjoint[chi', e]``."""
    dim2 = forward.shape[-1]
    # a batch over (a, b): the state forward[chi, a] entering the environments on system index b
    batch = np.einsum("...a,bx->ab...x", forward, np.identity(dim2, dtype=forward.dtype))
    out = _environments(batch, environments, step)
    bonds = "".join(chr(ord("i") + k) for k in range(len(environments)))
    return np.einsum(f"ab{bonds}c,{bonds}e->abce", out, adjoint)


# -- the adjoint method ---------------------------------------------------------------------------------


def compute_gradient_and_dynamics(
    system: ParameterizedSystem,
    initial_state: np.ndarray,
    target_derivative: Any,
    process_tensors: Any,
    parameters: Any,
    start_time: float = 0.0,
    dt: Optional[float] = None,
    num_steps: Optional[int] = None,
    control: Optional[Control] = None,
    record_all: bool = True,
    progress_type: Optional[str] = None,
) -> Tuple[List[np.ndarray], Dynamics]:
    """Forward and backward propagation: the adjoint tensors of every step and the dynamics.

    Parameters
    ----------
    system: ParameterizedSystem
        The system (``TypeError`` for any other type).
    initial_state: ndarray
        Density matrix at ``start_time``.
    target_derivative: ndarray or callable
        ``T = dF/drho_N`` as a (d, d) matrix, or a callable of the final state returning it
        (``AssertionError`` if None).
    process_tensors: list
        The environments (each with the same ``dt``).
    parameters: ndarray
        (2 N, M) parameters, two rows per step (see :class:`oqupy.ParameterizedSystem`).
    start_time, dt, num_steps, control, record_all, progress_type:
        As for :func:`oqupy.compute_dynamics`.

    Returns
    -------
    adjoint_tensors: list of ndarray
        One (d^2, d^2, d^2, d^2) tensor ``D_n`` per step (legs in the module docstring).
    dynamics: Dynamics
        The dynamics (``num_steps + 1`` states; only the final one if not ``record_all``).
    """
    if not isinstance(system, ParameterizedSystem):
        raise TypeError("Argument 'system' must be a ParameterizedSystem.")
    assert target_derivative is not None, "The target derivative must be given explicitly."
    dim = system.dimension
    rows = system.check_parameters(parameters)
    if num_steps is None and not process_tensors:
        num_steps = rows.shape[0] // 2
    setup = prepare(dim, initial_state, dt, num_steps, start_time, process_tensors, control)
    dt, num_steps, environments = setup.dt, setup.num_steps, setup.environments
    pre, post = setup.controls
    prop_1, prop_2 = system.get_propagator_stack(dt, rows, num_steps)
    vector = check_initial_state(initial_state, dim).reshape(dim * dim) @ pre[0].T
    state = vector
    for env in environments:
        bond = env.left if env.uniform is not None else np.ones(1, dtype=config.NpDtype)
        state = state[..., None, :] * np.asarray(bond)[:, None]

    stored: List[np.ndarray] = []
    rhos: List[np.ndarray] = []
    with get_progress(progress_type)(num_steps, title="--> Compute forward propagation") as progress:
        for step in range(num_steps):
            rhos.append(_read_out(state, environments, step))
            state = state @ post[step].T
            stored.append(state)
            state = _environments(state @ prop_1[step].T, environments, step) @ prop_2[step].T
            state = state @ pre[step + 1].T
            progress.update(step + 1)
    final = _read_out(state, environments, num_steps).reshape(dim, dim)
    times = setup.start_time + dt * np.arange(num_steps + 1)
    dynamics = Dynamics()
    if record_all:
        for time, rho in zip(times[:-1], rhos):
            dynamics.add(float(time), rho.reshape(dim, dim))
    dynamics.add(float(times[-1]), final)

    target = target_derivative(final) if callable(target_derivative) else target_derivative
    target = np.asarray(target, dtype=config.NpDtype)
    assert target.shape == (dim, dim), f"The target derivative must have shape {(dim, dim)}."
    adjoint = target.reshape(dim * dim)
    for env in environments:
        adjoint = adjoint[..., None, :] * np.asarray(_cap(env, num_steps))[:, None]
    adjoint = adjoint @ pre[num_steps]
    tensors: List[np.ndarray] = [np.empty(0)] * num_steps
    with get_progress(progress_type)(num_steps, title="--> Compute backward propagation") as progress:
        for count, step in enumerate(range(num_steps - 1, -1, -1)):
            tensors[step] = _adjoint_tensor(stored[step], adjoint, environments, step)
            adjoint = _environments(adjoint @ prop_2[step], environments, step, adjoint=True) @ prop_1[step]
            adjoint = adjoint @ post[step] @ pre[step]
            progress.update(count + 1)
    return tensors, dynamics


def _chain_rule(
    adjoint_tensor: Any,
    dprop_dparam: Callable[[int], Tuple[List[np.ndarray], List[np.ndarray]]],
    propagators: Callable[[int], Tuple[np.ndarray, np.ndarray]],
    num_steps: int,
    num_parameters: int,
    progress_type: Optional[str] = None,
) -> np.ndarray:
    """dF/dtheta, shape (2 num_steps, num_parameters), complex: the chain rule of the module docstring."""
    result = np.zeros((2 * num_steps, num_parameters), dtype=config.NpDtype)
    with get_progress(progress_type)(num_steps, title="--> Apply chain rule") as progress:
        for step in range(num_steps):
            tensor = np.asarray(adjoint_tensor[step])
            first, second = propagators(step)
            first_derivatives, second_derivatives = dprop_dparam(step)
            for j in range(num_parameters):
                result[2 * step, j] = np.einsum("abce,ba,ec->", tensor, first_derivatives[j], second)
                result[2 * step + 1, j] = np.einsum("abce,ba,ec->", tensor, first, second_derivatives[j])
            progress.update(step + 1)
    return result


def state_gradient(
    system: ParameterizedSystem,
    initial_state: np.ndarray,
    target_derivative: Any,
    process_tensors: Any,
    parameters: np.ndarray,
    start_time: float = 0.0,
    progress_type: Optional[str] = None,
) -> Dict[str, Any]:
    """The gradient of ``F`` (module docstring) with respect to ``parameters``, and the dynamics.

    The number of steps and ``dt`` are those of ``process_tensors[0]``.  ``TypeError`` if ``parameters`` is not
    a NumPy array.

    Returns
    -------
    dict
        ``'final_state'``: the final density matrix; ``'gradprop'``: the adjoint tensors of
        :func:`compute_gradient_and_dynamics`; ``'gradient'``: dF/dtheta, a complex (2 N, M) array (its real part
        is the gradient of Re F); ``'dynamics'``: the ``Dynamics``.
    """
    if not isinstance(parameters, np.ndarray):
        raise TypeError("Argument 'parameters' must be a numpy array of shape (2 N, M).")
    first = list(process_tensors)[0]
    num_steps = len(first)
    dt = first.dt
    gradprop, dynamics = compute_gradient_and_dynamics(
        system,
        initial_state,
        target_derivative,
        process_tensors,
        parameters,
        start_time=start_time,
        dt=dt,
        num_steps=num_steps,
        progress_type=progress_type,
    )
    gradient = _chain_rule(
        gradprop,
        system.get_propagator_derivatives(dt, parameters),
        system.get_propagators(dt, parameters),
        num_steps,
        parameters.shape[1],
        progress_type,
    )
    return {
        "final_state": dynamics.states[-1],
        "gradprop": gradprop,
        "gradient": gradient,
        "dynamics": dynamics,
    }
