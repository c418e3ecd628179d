r"""``compute_dynamics_with_field``: the systems of a :class:`MeanFieldSystem` through process tensors, with the field.

Every system carries its own state ``s[chi_1, ..., chi_E, x]`` through its own process tensors (the step of
:func:`oqupy.system_dynamics.compute_dynamics`: pre-control, read-out, post-control, ``prop_1``, the MPO tensors,
``prop_2``); the systems meet only in the field, which advances with the Heun step of
:mod:`oqupy._mean_field_tempo`: the propagators of step ``n`` use the field linearised with the slope
:math:`f(t_n, \rho_n, a_n)`, where :math:`\rho_n` are the states after the pre-controls of step ``n``.

Host module (NumPy in both packages): the field equation and the propagators are user callables, so each step is
one call of the compiled step loop (:func:`oqupy._propagation.propagate`, one step long) per system.
"""

import math
from typing import Any, List, Optional

import numpy as np

from oqupy import config
from oqupy._checks import check_initial_state, nonfinite_system_error
from oqupy._dynamics_setup import Controls, prepare, process_tensor_list, step_matrices, time_grid
from oqupy._mean_field_tempo import heun_field
from oqupy._propagation import Loop, Step, loop_inputs, propagate, read_out
from oqupy._system_field import MeanFieldSystem
from oqupy._validation import finite_complex, first_nonfinite_step
from oqupy.dynamics import MeanFieldDynamics
from oqupy.util import get_progress

__runs_on__ = "host"

__all__ = ["compute_dynamics_with_field"]


def _caps(loop: Loop, step: int) -> tuple:
    """The caps of every environment of one system at ``step``."""
    return tuple(cell.cap if caps is None else caps[step] for caps, cell in zip(loop.caps, loop.uniform))


def _common_grid(
    dimensions: List[int], process_tensors: List[Any], dt: Optional[float], num_steps: Optional[int]
):
    """(dt, num_steps) for all systems: one time step, and the shortest of their lengths."""
    grids = [
        time_grid(process_tensor_list(pts), dim, dt, num_steps)
        for dim, pts in zip(dimensions, process_tensors)
    ]
    first = grids[0][0]
    if not all(math.isclose(step, first, rel_tol=1e-12) for step, _ in grids):
        raise ValueError(
            f"The process tensors of the systems disagree on the time step: {[g[0] for g in grids]}."
        )
    return first, min(length for _, length in grids)


def compute_dynamics_with_field(
    mean_field_system: MeanFieldSystem,
    initial_field: complex,
    process_tensor_list: Optional[List[Any]] = None,
    dt: Optional[float] = None,
    num_steps: Optional[int] = None,
    initial_state_list: Optional[List[np.ndarray]] = None,
    start_time: float = 0.0,
    control_list: Optional[List[Any]] = None,
    record_all: bool = True,
    subdiv_limit: Optional[int] = config.SUBDIV_LIMIT,
    liouvillian_epsrel: float = config.INTEGRATE_EPSREL,
    progress_type: Optional[str] = None,
) -> MeanFieldDynamics:
    """Dynamics of every system of ``mean_field_system`` through its process tensors, and of the field.

    Parameters
    ----------
    mean_field_system: MeanFieldSystem
        The systems and the field equation of motion.
    initial_field: complex
        The field at ``start_time``.
    process_tensor_list: list
        One entry per system: a process tensor, a list of them (several environments) or None (none).
    dt: float
        Time step (default: the process tensors').
    num_steps: int
        Number of steps (default: the length of the shortest process tensor).
    initial_state_list: list of ndarray
        One density matrix per system.
    start_time: float
        Initial time.
    control_list: list of Control
        One control (or None) per system.
    record_all: bool
        Record every step (``num_steps + 1`` entries) or only the final one.
    subdiv_limit, liouvillian_epsrel:
        Integration of the Liouvillians (see :class:`oqupy.system.TimeDependentSystemWithField`).
    progress_type: str
        'silent', 'simple' or 'bar'.
    """
    initial_field = finite_complex(initial_field, "initial_field")
    assert isinstance(mean_field_system, MeanFieldSystem), (
        "Argument 'mean_field_system' must be an oqupy.MeanFieldSystem."
    )
    systems = mean_field_system.system_list
    count = len(systems)
    nothing: List[Any] = [None] * count
    initial_state_list = nothing if initial_state_list is None else initial_state_list
    control_list = nothing if control_list is None else control_list
    process_tensor_list = nothing if process_tensor_list is None else process_tensor_list
    for argument, label in (
        (process_tensor_list, "process_tensor_list"),
        (initial_state_list, "initial_state_list"),
        (control_list, "control_list"),
    ):
        assert isinstance(argument, list), f"Argument '{label}' must be a list (one entry per system)."
    assert count == len(initial_state_list) == len(control_list) == len(process_tensor_list), (
        f"The lengths of 'process_tensor_list' ({len(process_tensor_list)}), 'initial_state_list' "
        f"({len(initial_state_list)}) and 'control_list' ({len(control_list)}) must equal the number of "
        f"systems ({count})."
    )
    dimensions = [system.dimension for system in systems]
    dt, num_steps = _common_grid(dimensions, process_tensor_list, dt, num_steps)
    setups = [
        prepare(dim, state, dt, num_steps, start_time, pts, control)
        for dim, state, pts, control in zip(dimensions, initial_state_list, process_tensor_list, control_list)
    ]
    start = setups[0].start_time
    loops = []
    for dim, state, setup in zip(dimensions, initial_state_list, setups):
        vector = np.asarray(check_initial_state(state, dim)).reshape(dim * dim) @ setup.controls.pre[0].T
        loops.append(loop_inputs(setup.environments, vector))
    carried = [loop.states for loop in loops]
    all_propagators = [
        system.get_propagators(dt, start, subdiv_limit, liouvillian_epsrel) for system in systems
    ]
    field_eom = mean_field_system.field_eom

    def states_at(step: int) -> List[np.ndarray]:
        return [
            np.asarray(read_out(state, _caps(loop, step))).reshape(dim, dim)
            for state, loop, dim in zip(carried, loops, dimensions)
        ]

    rhos, field = states_at(0), initial_field
    dynamics = MeanFieldDynamics()
    if record_all:
        dynamics.add(start, rhos, field)
    with get_progress(progress_type)(num_steps, title="--> Compute dynamics with field") as progress:
        for step in range(num_steps):
            time = start + step * dt
            slope = complex(field_eom(time, rhos, field))
            for index, (setup, loop, propagators) in enumerate(zip(setups, loops, all_propagators)):
                prop_1, prop_2 = propagators(step, field, slope)
                if first_nonfinite_step(prop_1[None], prop_2[None]) is not None:
                    raise nonfinite_system_error(
                        time, dt, dynamics, f"system {index} of 'mean_field_system', at the field {field:.6g}"
                    )
                pre, post = setup.controls
                controls = Controls(pre[step : step + 2], post[step : step + 1])
                matrices = step_matrices(setup.environments, controls, prop_1[None], prop_2[None])
                steps = Step(
                    enter=matrices.enter,
                    leave=matrices.leave,
                    tensors=loop.tensors,
                    caps=loop.caps,
                    index=np.arange(step, step + 1),
                )
                carried[index], _ = propagate(carried[index], matrices.links, loop.uniform, steps)
            new_rhos = states_at(step + 1)
            field = heun_field(field_eom, time, dt, rhos, field, slope, new_rhos)
            rhos = new_rhos
            if record_all:
                dynamics.add(time + dt, rhos, field)
            progress.update(step + 1)
    if not record_all:
        dynamics.add(start + num_steps * dt, rhos, field)
    return dynamics
