r"""Time-translation-invariant PT-TEMPO: the process tensor of a stationary bath as one repeating tensor.

For a bath in equilibrium and a memory cut-off ``K = dkmax`` the influence functional is the same at every
step; :class:`TtiPtTempo` builds its repeating tensor with ``K`` truncated SVDs (infinite TEBD along the lag,
:mod:`oqupy._uniform_influence`) instead of the ``N K`` of :class:`oqupy.PtTempo`, and returns a
:class:`oqupy.TtiProcessTensor` that :func:`oqupy.compute_dynamics` uses for any number of steps and
:func:`oqupy.compute_steady_state` turns into a steady state.  ``dt``, ``dkmax`` and ``epsrel`` mean what they
mean for PT-TEMPO (same influences, same truncation criterion); the start time only fixes the time grid (the
bath is stationary).  With ``add_correlation_time`` the oldest lag carries the memory tail at its stationary
length ``dt + add_correlation_time``: unlike :class:`oqupy.PtTempo`, whose tail is shorter for the first
``add_correlation_time / dt`` steps (there is no earlier history to stand for), so the two differ there by the
size of the tail's own approximation.

Runs on the host in both packages (NumPy/SciPy: ``K`` SVDs whose shapes change from layer to layer); the
dynamics through the result runs in each package's compiled step loop.
"""

import math
import warnings
from typing import Optional

import numpy as np

from oqupy import config
from oqupy._influences import Influences, eigenbasis_transforms
from oqupy._tempo_parameters import TempoParameters, guess_tempo_parameters
from oqupy._uniform_influence import UniformInfluence, uniform_influence
from oqupy._validation import as_float, finite_float
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.process_tensor import TtiProcessTensor
from oqupy.util import get_progress

__runs_on__ = "host"

__all__ = ["TtiPtTempo", "tti_pt_tempo_compute"]

CUTOFF_WARNING_RATIO = 0.5
"""Warn when the influence at the memory cut-off is above ``epsrel ** CUTOFF_WARNING_RATIO`` (see ``compute``)."""


class TtiPtTempo(BaseAPIClass):
    """Time-translation-invariant PT-TEMPO: a uniform process tensor of a stationary bath.

    Parameters
    ----------
    bath: Bath
        Coupling operator and bath correlations (stationary: the bath starts in equilibrium).
    start_time: float
        Time of the first step of the process tensor.
    parameters: TempoParameters
        ``dt``, ``epsrel`` and the memory cut-off ``dkmax`` (or ``tcut``; it must be finite), optionally
        ``add_correlation_time``.
    unique: bool
        Reduce path indices to degeneracy classes of the coupling while computing (same result, faster).
    """

    def __init__(
        self,
        bath: Bath,
        start_time: float,
        parameters: TempoParameters,
        unique: bool = False,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        assert isinstance(bath, Bath), "Argument 'bath' must be an oqupy.Bath object."
        assert isinstance(parameters, TempoParameters), (
            "Argument 'parameters' must be an oqupy.TempoParameters object."
        )
        assert isinstance(unique, bool), "Argument 'unique' must be bool."
        if parameters.dkmax is None:
            raise ValueError(
                "A uniform process tensor needs a finite memory: give 'dkmax' (or 'tcut') in the parameters."
            )
        self._start_time = finite_float(start_time, "start_time", AssertionError)
        self._bath = bath
        self._parameters = parameters
        self._unique = unique
        self._result: Optional[UniformInfluence] = None
        self._process_tensor: Optional[TtiProcessTensor] = None
        # the process tensor's transforms into and out of the coupling eigenbasis (None: it is the basis)
        self._transform_in, self._transform_out = eigenbasis_transforms(bath)

    @property
    def dimension(self) -> int:
        """Hilbert space dimension of the system the bath couples to."""
        return self._bath.dimension

    @property
    def max_bond_dimension(self) -> int:
        """Largest bond dimension kept (1 before :meth:`compute`)."""
        return 1 if self._result is None else max(self._result.ranks)

    @property
    def bond_dimensions(self) -> list:
        """Kept bond after each layer, from the lag ``dkmax`` down to 1 (empty before :meth:`compute`)."""
        return [] if self._result is None else list(self._result.ranks)

    @property
    def discarded_weight(self) -> Optional[float]:
        """Largest relative norm of the singular values discarded in a layer (None before :meth:`compute`)."""
        return None if self._result is None else self._result.discarded

    def _trace_weights(self) -> np.ndarray:
        """``t_in * t_out`` in the coupling eigenbasis (``t = vec(1) / sqrt(d)``)."""
        dim = self._bath.dimension
        trace = np.identity(dim, dtype=config.NpDtype).reshape(dim * dim) / math.sqrt(dim)
        trace_in = trace if self._transform_in is None else trace @ self._transform_in
        trace_out = trace if self._transform_out is None else self._transform_out @ trace
        return trace_in * trace_out

    def compute(self, progress_type: Optional[str] = None) -> None:
        """Build the repeating tensor (once; later calls return at once).

        Warns (``UserWarning``) when the influence at the memory cut-off still matters: the first layer's
        second singular value above ``epsrel ** 0.5`` of its first, i.e. the memory, not ``epsrel``, limits
        the accuracy.
        """
        if self._result is not None:
            return
        dkmax, epsrel = int(self._parameters.dkmax), self._parameters.epsrel  # type: ignore[arg-type]
        influences = Influences(self._bath, self._parameters, self._unique, real=True)
        with get_progress(progress_type)(dkmax, title="--> TTI-PT-TEMPO computation") as progress:
            result = uniform_influence(influences, dkmax, epsrel, self._trace_weights(), progress)
        if result.cutoff_influence > epsrel**CUTOFF_WARNING_RATIO:
            warnings.warn(
                f"The memory dkmax={dkmax} is too short for epsrel={epsrel:g}: the influence at the cut-off "
                f"is still {result.cutoff_influence:.2g} (relative), above sqrt(epsrel); increase dkmax or "
                "set add_correlation_time.",
                UserWarning,
            )
        self._result = result

    def get_process_tensor(self, progress_type: Optional[str] = None) -> TtiProcessTensor:
        """The uniform process tensor (computed first if needed)."""
        self.compute(progress_type)
        assert self._result is not None
        if self._process_tensor is None:
            result = self._result
            description = (
                f"Uniform PT-TEMPO process tensor (dkmax {self._parameters.dkmax}, epsrel "
                f"{self._parameters.epsrel:g}, bond {result.cell.shape[0]}) for bath '{self._bath.name}'"
            )
            self._process_tensor = TtiProcessTensor(
                self._bath.dimension,
                self._parameters.dt,
                np.ascontiguousarray(result.cell.transpose(0, 2, 1)),
                result.left,
                result.right,
                self._transform_in,
                self._transform_out,
                self.name,
                description if self.description is None else self.description,
            )
        return self._process_tensor


def _memory_horizon(bath: Bath, tolerance: float) -> float:
    """A time after which ``|C(t)|`` holds less than ``tolerance`` of its integral (doubling from 1)."""
    horizon = 1.0
    for _ in range(20):
        taus = np.linspace(0.0, 2.0 * horizon, 401)
        values = np.abs(np.asarray(bath.correlations.correlation(taus), dtype=config.NpDtype))
        total = float(np.sum(values))
        if total == 0.0 or float(np.sum(values[200:])) < tolerance * total:
            return horizon
        horizon *= 2.0
    return horizon


def tti_pt_tempo_compute(
    bath: Bath,
    start_time: float,
    parameters: Optional[TempoParameters] = None,
    tolerance: Optional[float] = config.PT_DEFAULT_TOLERANCE,
    unique: bool = False,
    progress_type: Optional[str] = None,
    name: Optional[str] = None,
    description: Optional[str] = None,
) -> TtiProcessTensor:
    """Shortcut: create a :class:`TtiPtTempo` (guessing parameters if none are given) and return its process tensor.

    Without ``parameters`` they are guessed as for :func:`oqupy.pt_tempo_compute`, over a window long enough
    for the bath correlations to decay below ``tolerance``.
    """
    if parameters is None:
        assert tolerance is not None, "If 'parameters' is None then 'tolerance' must be given."
        start = as_float(start_time, "start_time", AssertionError)
        parameters = guess_tempo_parameters(
            bath, start, start + _memory_horizon(bath, tolerance), None, tolerance
        )
    tti = TtiPtTempo(bath, start_time, parameters, unique, name, description)
    return tti.get_process_tensor(progress_type)
