"""Instantaneous control operations on a system (:func:`oqupy.compute_dynamics`) or a chain (:class:`oqupy.PtTebd`).

A control is a ``d^2 x d^2`` superoperator acting on ``vec(rho)`` (row-major, as everywhere in the
package) at a time step: *pre* controls act before the state of that step is recorded ("pre-measurement"),
*post* controls after it.  Several controls at the same step compose in the order they were added (the
later one acts after the earlier one).  Runs on the host: NumPy in every generated package.
"""

from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from oqupy import config
from oqupy._system_chain import check_hs_dims, check_site
from oqupy.base_api import BaseAPIClass
from oqupy.util import check_dimension

__runs_on__ = "host"

_TIME_RTOL = 1e-9


class StepKey(NamedTuple):
    """Where a control given by step acts."""

    step: int
    post: bool  # after the state of the step is recorded (else before)


class TimedControl(NamedTuple):
    """A control given by time, matched to the step grid when the dynamics is computed."""

    time: float
    post: bool  # after the state of the step is recorded (else before)
    operation: np.ndarray  # d^2 x d^2 superoperator


class Control(BaseAPIClass):
    """Control operations on a system of Hilbert space dimension ``dimension``.

    Parameters
    ----------
    dimension: int
        Hilbert space dimension d of the system.
    """

    def __init__(self, dimension: int, name: Optional[str] = None, description: Optional[str] = None) -> None:
        super().__init__(name, description)
        self._dimension = check_dimension(dimension, "dimension")
        self._step_controls: Dict[StepKey, np.ndarray] = {}
        self._time_controls: List[TimedControl] = []

    def _str_items(self) -> list:
        return [
            ("dimension", self._dimension),
            ("controls", len(self._step_controls) + len(self._time_controls)),
        ]

    @property
    def dimension(self) -> int:
        """Hilbert space dimension of the system."""
        return self._dimension

    def add_single(self, time: object, control_operation: np.ndarray, post: bool = False) -> None:
        """Add a control superoperator at a step (``int``) or at a time (``float``), before or after read-out.

        Parameters
        ----------
        time: int or float
            Step index, or time (matched to the step grid when the dynamics is computed).
        control_operation: ndarray
            ``d^2 x d^2`` superoperator, e.g. ``operators.left_super(sigma_x)`` for ``rho -> sigma_x rho``.
        post: bool
            Act after the state of that step is recorded (default: before).
        """
        operation = np.array(control_operation, dtype=config.NpDtype)
        dim2 = self._dimension**2
        assert operation.shape == (dim2, dim2), (
            f"Argument 'control_operation' must have shape {(dim2, dim2)}, not {operation.shape}."
        )
        if not np.all(np.isfinite(operation)):
            raise ValueError("Argument 'control_operation' contains NaN or inf.")
        post = bool(post)
        if isinstance(time, (int, np.integer)) and not isinstance(time, bool):
            key = StepKey(int(time), post)
            previous = self._step_controls.get(key)
            self._step_controls[key] = operation if previous is None else operation @ previous
        elif isinstance(time, (float, np.floating)):
            self._time_controls.append(TimedControl(float(time), post, operation))
        else:
            raise TypeError("Argument 'time' must be int (a step) or float (a time).")

    def add_continuous(self, control_fct: object, post: bool = False) -> None:
        """Continuous controls are not implemented (as in OQuPy 0.5)."""
        raise NotImplementedError("Continuous controls are not implemented.")

    def get_controls(
        self, step: int, dt: Optional[float] = None, start_time: float = 0.0
    ) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        """``(pre, post)`` superoperators at ``step`` (each None if there is none).

        Controls given by time need ``dt``: a time ``t`` belongs to the step ``n`` with
        ``t = start_time + n dt`` (relative tolerance 1e-9).
        """
        result: List[Optional[np.ndarray]] = []
        for post in (False, True):
            operation = self._step_controls.get(StepKey(step, post))
            for control in self._time_controls:
                if control.post != post:
                    continue
                if dt is None:
                    raise ValueError("Controls given by time need the time step 'dt'.")
                position = (control.time - start_time) / dt
                if round(position) == step and abs(position - step) <= _TIME_RTOL * max(1.0, abs(position)):
                    operation = control.operation if operation is None else control.operation @ operation
            result.append(operation)
        return result[0], result[1]


class ChainControl(BaseAPIClass):
    """Single-site control operations on a :class:`oqupy.system.SystemChain`, applied by :class:`oqupy.PtTebd`.

    Several controls on one site at one step compose as OQuPy 0.5's ``ChainControl`` does: the product
    ``earlier @ later``, i.e. the later one acts first (note that :class:`Control` composes the other way).

    Parameters
    ----------
    hilbert_space_dimensions: list(int)
        Hilbert space dimension of every site.
    name, description: str
        Optional name and description.
    """

    def __init__(
        self,
        hilbert_space_dimensions: List[int],
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        self._hs_dims = check_hs_dims(hilbert_space_dimensions)
        self._controls: Dict[Tuple[int, bool], List[Optional[np.ndarray]]] = {}

    def __len__(self) -> int:
        return len(self._hs_dims)

    def _str_items(self) -> list:
        return [("hs_dims", list(self._hs_dims)), ("control steps", len(self._controls))]

    @property
    def hs_dims(self) -> np.ndarray:
        """Hilbert space dimension of every site."""
        return self._hs_dims

    def add_single_site_control(
        self, control: np.ndarray, site: int, step: int, post: bool = False, name: Optional[str] = None
    ) -> None:
        """Add the superoperator ``control`` (``d_site^2 x d_site^2``) on ``site`` at ``step``.

        ``post=False`` acts before the states of that step are recorded, ``post=True`` after.  ``name`` is
        accepted for OQuPy compatibility and not used.
        """
        index = check_site(site, len(self))
        assert isinstance(step, int) and not isinstance(step, bool), "Argument 'step' must be an int."
        dim2 = int(self._hs_dims[index]) ** 2
        operation = np.array(control, dtype=config.NpDtype)
        assert operation.shape == (dim2, dim2), f"Argument 'control' must have shape {(dim2, dim2)}."
        controls = self._controls.setdefault((step, bool(post)), [None] * len(self))
        previous = controls[index]
        controls[index] = operation if previous is None else previous @ operation

    def get_single_site_controls(self, step: int, post: bool) -> Optional[List[Optional[np.ndarray]]]:
        """One superoperator (or None) per site at ``step``; None if no site has a control there."""
        controls = self._controls.get((step, bool(post)))
        if controls is None:
            return None
        return [None if control is None else control.copy() for control in controls]
