r"""Steady states through uniform process tensors: the dominant eigenvector of one step's transfer map.

With a time-independent system and uniform (time-translation-invariant) process tensors every step of
:func:`oqupy.compute_dynamics` is the same linear map of the carried state ``s[chi_1, ..., chi_E, x]`` (bond legs,
then ``vec(rho)``; conventions in :mod:`oqupy.system_dynamics`).  Its dominant eigenvector (eigenvalue 1 for a
trace-preserving step, up to the truncation) is the state the dynamics converge to; the steady state ``rho_ss``
is read off it with the caps ``v_r``, as every ``rho_n`` is.

Host code in both packages: one Arnoldi call (``scipy.sparse.linalg.eigs``; a dense eigensolver for small
maps), which neither package would gain from compiling.
"""

from typing import Any, List, Optional

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from oqupy import config
from oqupy._dynamics_setup import (
    Controls,
    Environment,
    environment,
    process_tensor_list,
    propagators,
    step_matrices,
)
from oqupy.process_tensor import TtiProcessTensor
from oqupy.system import System
from oqupy.util import check_convert

__runs_on__ = "host"

__all__ = ["compute_steady_state"]

DENSE_LIMIT = 400
"""Transfer maps up to this dimension are diagonalised densely; larger ones with Arnoldi."""


def _contract(state: np.ndarray, cell: np.ndarray, axis: int) -> np.ndarray:
    """Contract bond leg ``axis`` (counted after the batch axis) and the system leg with ``cell[x, p, f]``.

    The host twin of :func:`oqupy._propagation.contract_environment` on a uniform cell: Arnoldi calls it from
    SciPy, so it must stay NumPy in both packages (the device form is a JAX kernel in ``oqupy_jax``).
    """
    moved = np.swapaxes(np.moveaxis(state, axis + 1, -2), -1, -2)[..., :, None, :]
    moved = np.swapaxes(np.matmul(moved, cell)[..., 0, :], -1, -2)
    return np.moveaxis(moved, -2, axis + 1)


def compute_steady_state(
    system: System,
    process_tensor: Any,
    dt: Optional[float] = None,
    start_time: float = 0.0,
    subdiv_limit: Optional[int] = config.SUBDIV_LIMIT,
    liouvillian_epsrel: float = config.INTEGRATE_EPSREL,
) -> np.ndarray:
    """The steady state of ``system`` coupled to the environments of uniform process tensors.

    Parameters
    ----------
    system: System
        A time-independent system.
    process_tensor: TtiProcessTensor or list of them
        The environments (each uniform; see :class:`oqupy.TtiPtTempo`).
    dt: float
        Time step (default: the process tensors').
    start_time: float
        Accepted for symmetry with :func:`oqupy.compute_dynamics` (the step does not depend on it).

    Returns
    -------
    rho: ndarray
        The steady-state density matrix (Hermitian, trace 1).
    """
    assert isinstance(system, System), "Argument 'system' must be a time-independent oqupy.System."
    process_tensors = process_tensor_list(process_tensor)
    if not process_tensors or not all(isinstance(pt, TtiProcessTensor) for pt in process_tensors):
        raise TypeError(
            "Argument 'process_tensor' must be a uniform process tensor (TtiProcessTensor) or a list of them."
        )
    dim = system.dimension
    for pt in process_tensors:
        if pt.hilbert_space_dimension != dim:
            raise ValueError(
                f"Process tensor of Hilbert dimension {pt.hilbert_space_dimension} used with a system of dimension {dim}."
            )
    dts = [float(pt.dt) for pt in process_tensors if pt.dt is not None]
    if dt is not None:
        dts.append(float(check_convert(dt, float, "dt")))
    if max(dts) - min(dts) > 1e-12 * max(dts):
        raise ValueError(f"Process tensors and 'dt' disagree on the time step: {sorted(dts)}.")
    step_dt = min(dts)
    start = float(check_convert(start_time, float, "start_time"))
    environments: List[Environment] = [environment(pt, 1) for pt in process_tensors]
    identity = np.identity(dim * dim, dtype=config.NpDtype)
    prop_1, prop_2 = propagators(system, step_dt, start, 1, subdiv_limit, liouvillian_epsrel)
    matrices = step_matrices(
        environments, Controls(np.stack([identity, identity]), identity[None]), prop_1, prop_2
    )
    enter, leave = matrices.enter[0], matrices.leave[0]
    cells = [env.uniform.cell for env in environments if env.uniform is not None]
    caps = [env.uniform.cap for env in environments if env.uniform is not None]
    shape = tuple(cell.shape[1] for cell in cells) + (dim * dim,)
    size = int(np.prod(shape))

    def step(vectors: np.ndarray) -> np.ndarray:
        state = vectors.reshape((-1,) + shape) @ enter
        for axis, cell in enumerate(cells):
            if axis > 0:
                state = state @ matrices.links[axis - 1]
            state = _contract(state, cell, axis)
        return (state @ leave).reshape(vectors.shape)

    if size <= DENSE_LIMIT:
        transfer = step(np.identity(size, dtype=config.NpDtype)).T
        values, vectors = scipy.linalg.eig(transfer)
        vector = vectors[:, int(np.argmax(np.abs(values)))]
    else:
        operator = scipy.sparse.linalg.LinearOperator(
            (size, size), matvec=lambda v: step(v[None])[0], dtype=config.NpDtype
        )
        start_vector = np.ones(size, dtype=config.NpDtype)
        _, found = scipy.sparse.linalg.eigs(operator, k=1, which="LM", v0=start_vector)
        vector = found[:, 0]
    state = vector.reshape(shape)
    for cap in caps:
        state = np.tensordot(cap, state, axes=1)
    rho = state.reshape(dim, dim)
    rho = rho / np.trace(rho)
    return 0.5 * (rho + rho.conj().T)
