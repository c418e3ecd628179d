r"""PT-TEMPO: the process tensor of a Gaussian bosonic bath, computed once and reusable for any system.

The influence functional ``F(a_0, ..., a_{N-1}) = prod_n I0(a_n) prod_{k=1}^{K} I_k(a_{n-k}, a_n)``
(``a_n``: the path index of step ``n`` in the coupling eigenbasis, ``K = dkmax``; the same influences as
:mod:`oqupy.tempo`) is built as a matrix product state over time in the order of [Jorgensen2019]: finished sites ``0 ... n-1`` (one per
step, never touched again), followed by open *legs* for the next ``K`` times, each carrying the west class
of its time and the influences it already has with the past.  Step ``n`` runs the line of ``a_n``
(its north class) from the farthest leg back to the leg of ``n`` itself, truncating every bond (zip-up),
closes it there into the finished site ``n`` over the full index ``a_n`` (with ``I0``), and sweeps left to
right over the legs, so that every bond is truncated with ``epsrel`` in canonical form.  Bond dimensions
shrink towards the far end of the legs, which keeps most of the SVDs small.  PT-TEMPO +
:func:`oqupy.compute_dynamics` reproduces TEMPO on the same parameters up to the truncation.

**[Jorgensen2019]** M. R. Jorgensen and F. A. Pollock, Phys. Rev. Lett. 123, 240602 (2019).
**[Fux2021]** G. E. Fux, E. P. Butler, P. R. Eastham, B. W. Lovett and J. Keeling, Phys. Rev. Lett. 126,
200401 (2021).
"""

from typing import Any, List, Optional, Union

import numpy as np

from oqupy import _pt_tempo_step, config
from oqupy._checks import check_run_window
from oqupy._codegen import host
from oqupy._influences import Influences, eigenbasis_transforms
from oqupy._tempo_parameters import TempoParameters, guess_tempo_parameters, num_steps_between
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.process_tensor import BaseProcessTensor, FileProcessTensor, SimpleProcessTensor
from oqupy.util import get_progress

__runs_on__ = "device"

__all__ = ["PtTempo", "pt_tempo_compute"]


PT_TEMPO_METHODS = ("fast", "reference")
"""``method`` of :class:`PtTempo`: ``"fast"`` builds in the real basis with sketched zip-up splits and legs
orthogonalised without truncation in the sweep;
``"reference"`` in the coupling's complex basis with a full SVD for every split (the construction before
2026-12-07, kept to check the fast one against)."""

NEGLIGIBLE_BOND = 1e-13
"""A bond index whose slice norm is below this fraction of the largest one carries nothing."""


@host
def _export_tensors(sites: List[Any]) -> List[np.ndarray]:
    """MPS sites ``site[p, a, f]`` -> MPO tensors ``T[p, f, a]``.

    Bond indices that carry nothing on either side (the zero padding of ``oqupy_jax``, which picks up
    rounding noise of order 1e-20 in SVDs, or a singular value below ``NEGLIGIBLE_BOND``) are dropped, so
    the stored process tensor has the same, exact bond dimensions in both packages.
    """
    tensors = [np.asarray(site).transpose(0, 2, 1) for site in sites]
    for step in range(len(tensors) - 1):
        left, right = tensors[step], tensors[step + 1]
        norms_left = np.sqrt(np.sum(np.abs(left) ** 2, axis=(0, 2)))
        norms_right = np.sqrt(np.sum(np.abs(right) ** 2, axis=(1, 2)))
        used = (norms_left > NEGLIGIBLE_BOND * norms_left.max()) & (
            norms_right > NEGLIGIBLE_BOND * norms_right.max()
        )
        if not np.any(used):
            used[0] = True
        tensors[step] = left[:, used, :]
        tensors[step + 1] = right[used, :, :]
    return [np.ascontiguousarray(tensor) for tensor in tensors]


class PtTempo(BaseAPIClass):
    """Process tensor time-evolving matrix product operator computation (PT-TEMPO).

    Parameters
    ----------
    bath: Bath
        Coupling operator and bath correlations.
    start_time, end_time: float
        The process tensor covers ``N = (end_time - start_time) / dt`` steps (at least 2).
    parameters: TempoParameters
        dt, epsrel, memory cut-off and tail, as for TEMPO.
    unique: bool
        Reduce path indices to degeneracy classes of the coupling while computing (same result, faster).
    process_tensor_file: str or bool
        ``None``/``False``: keep the result in memory (:class:`SimpleProcessTensor`); a filename, or
        ``True`` for a temporary file: write it to HDF5 (:class:`FileProcessTensor`).
    overwrite: bool
        Replace an existing ``process_tensor_file``.
    backend_config: dict
        Accepted for OQuPy compatibility; unused.
    method: str
        ``"fast"`` (default): every tensor real (:func:`oqupy._influences.conjugation_basis`), larger zip-up
        splits sketched with an explicit residual (:func:`oqupy._pt_tempo_step.sketched_split`), the legs'
        bonds truncated by the zip-ups only (the sweep orthogonalises them), the lines of two times in one
        zip-up while the bonds are small (:func:`oqupy._pt_tempo_step.pair_pays`); same truncation bound.
        ``"reference"``: the complex build with full SVDs.  Both are described in ``docs/process_tensor.md``.
    """

    def __init__(
        self,
        bath: Bath,
        start_time: float,
        end_time: float,
        parameters: TempoParameters,
        unique: bool = False,
        process_tensor_file: Optional[Union[str, bool]] = None,
        overwrite: bool = False,
        backend_config: Optional[dict] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
        method: str = "fast",
    ) -> None:
        super().__init__(name, description)
        if method not in PT_TEMPO_METHODS:
            raise ValueError(f"Argument 'method' must be one of {PT_TEMPO_METHODS}, not {method!r}.")
        assert isinstance(bath, Bath), "Argument 'bath' must be an oqupy.Bath object."
        assert isinstance(parameters, TempoParameters), (
            "Argument 'parameters' must be an oqupy.TempoParameters object."
        )
        assert isinstance(unique, bool), "Argument 'unique' must be bool."
        # finite times (ValueError), before any work; start after end is OQuPy's AssertionError below
        self._start_time, self._end_time = check_run_window(
            start_time, end_time, parameters, False, AssertionError, min_steps=2
        )
        self._num_steps = num_steps_between(self._start_time, self._end_time, parameters.dt)
        assert self._num_steps >= 2, (
            f"PT-TEMPO needs at least two time steps between 'start_time' ({self._start_time}) and 'end_time' "
            f"({self._end_time}) with dt = {parameters.dt}."
        )
        self._bath = bath
        self._parameters = parameters
        self._unique = unique
        self._file = process_tensor_file
        self._overwrite = overwrite
        self._backend_config = backend_config
        # always reduced to the coupling's classes; without ``unique`` weighted so that the result is the
        # unreduced one (same truncations), at the reduced cost
        self._influences = Influences(bath, parameters, unique, weighted_classes=True, real=method == "fast")
        # the process tensor's transforms into and out of the coupling eigenbasis (None: it is the basis)
        self._transform_in, self._transform_out = eigenbasis_transforms(bath)
        self._sites: list = []  # finished sites site[l, a, r], left-canonical
        self._legs: list = []  # the open legs leg[l, w, r] of the next times, orthogonality centre last
        self._step = 0
        self._sketches = _pt_tempo_step.sketch_generator() if method == "fast" else None
        self._max_bond = 1
        self._process_tensor: Optional[BaseProcessTensor] = None

    @property
    def dimension(self) -> int:
        """Hilbert space dimension of the system the bath couples to."""
        return self._bath.dimension

    @property
    def num_steps(self) -> int:
        """Number of time steps of the process tensor."""
        return self._num_steps

    @property
    def max_bond_dimension(self) -> int:
        """Largest bond dimension kept so far."""
        return self._max_bond

    def compute(self, progress_type: Optional[str] = None) -> None:
        """Compute every step (resumes where an earlier call stopped) and assemble the process tensor.

        The progress reports three phases: the bath's influences, the time steps (with the largest bond
        dimension so far), and the assembly of the process tensor (with its file, if any).
        """
        progress = get_progress(progress_type)
        remaining = self._num_steps - self._step
        if remaining > 0:
            dkmax = self._parameters.dkmax
            memory = self._num_steps if dkmax is None else min(dkmax, self._num_steps)
            with progress(1, title=f"--> PT-TEMPO computation [1/3]: bath influences ({memory} lags)") as bar:
                self._influences.extend(memory)
                bar.update(1)
            first = self._step
            with progress(remaining, title="--> PT-TEMPO computation [2/3]: time steps") as bar:
                while self._step < self._num_steps:
                    self._compute_step()
                    bar.update(self._step - first)
                    bar.set_status(bond=self._max_bond)
        if self._process_tensor is None:
            where = "" if self._file is None or self._file is False else " and writing its file"
            with progress(
                1, title=f"--> PT-TEMPO computation [3/3]: assembling the process tensor{where}"
            ) as bar:
                self._process_tensor = self._assemble()
                bar.update(1)

    def get_process_tensor(self, progress_type: Optional[str] = None) -> BaseProcessTensor:
        """The process tensor (computed first if needed)."""
        self.compute(progress_type)
        assert self._process_tensor is not None
        return self._process_tensor

    def _compute_step(self) -> None:
        """Finish the site of time ``n`` (its influences with the later times, then its bond to the future), or
        the sites of ``n`` and ``n + 1`` in one zip-up where that is cheaper (the fast method,
        :func:`oqupy._pt_tempo_step.pair_pays`)."""
        influences, step = self._influences, self._step
        last = self._last_time(step)
        lines = [influences.line(lag, step + lag) for lag in range(1, last - step + 1)]
        epsrel, network = self._parameters.epsrel, influences.network
        if (
            self._sketches is not None
            and lines  # a memory of at least one step (dkmax 0: nothing to zip)
            and step + 1 < self._num_steps
            and _pt_tempo_step.pair_pays(self._legs, network)
        ):
            length = self._last_time(step + 1) - step + 1
            pairs = [influences.pair_line(lag, step + lag, lag > len(lines)) for lag in range(2, length)]
            sites, self._legs, rank = _pt_tempo_step.step_pair(
                self._legs, length, lines[0], pairs, network, epsrel, self._sketches
            )
        else:
            site, self._legs, rank = _pt_tempo_step.step(
                self._legs, last - step + 1, lines, network, epsrel, self._sketches
            )
            sites = [site]
        self._sites.extend(sites)
        self._max_bond = max(self._max_bond, rank)
        self._step = step + len(sites)

    def _last_time(self, step: int) -> int:
        """The latest time the line of ``step`` reaches (the memory cut-off ``dkmax``, or the last step)."""
        dkmax = self._parameters.dkmax
        return self._num_steps - 1 if dkmax is None else min(step + dkmax, self._num_steps - 1)

    def _assemble(self) -> BaseProcessTensor:
        """The process tensor, normalised so that ``cap_0 = 1`` (the initial state is read back exactly)."""
        dt, dim = self._parameters.dt, self._bath.dimension
        transform_in, transform_out = self._transform_in, self._transform_out
        pt = SimpleProcessTensor(dim, dt, transform_in, transform_out, self.name, self.description)
        tensors = _export_tensors(self._sites)
        self._sites = []  # at most two copies of the MPS at any time: the sites, then the exported tensors
        for step, tensor in enumerate(tensors):
            pt.set_mpo_tensor(step, tensor, copy=False)
        pt.compute_caps()
        trace = pt.get_cap_tensor(0)
        assert trace is not None
        pt.set_mpo_tensor(0, tensors[0] / trace[0], copy=False)
        pt.compute_caps()
        if self._file is None or self._file is False:
            return pt
        filename = None if self._file is True else str(self._file)
        mode = "overwrite" if self._overwrite else "write"
        pt_file = FileProcessTensor(
            mode, filename, dim, dt, transform_in, transform_out, self.name, self.description
        )
        pt.copy_into(pt_file)
        pt_file.flush()
        return pt_file


def pt_tempo_compute(
    bath: Bath,
    start_time: float,
    end_time: float,
    parameters: Optional[TempoParameters] = None,
    unique: bool = False,
    tolerance: Optional[float] = config.PT_DEFAULT_TOLERANCE,
    process_tensor_file: Optional[Union[str, bool]] = None,
    overwrite: bool = False,
    backend_config: Optional[dict] = None,
    progress_type: Optional[str] = None,
    name: Optional[str] = None,
    description: Optional[str] = None,
    method: str = "fast",
) -> BaseProcessTensor:
    """Shortcut: create a :class:`PtTempo` (guessing parameters if none are given) and return its process tensor.

    ``method``: ``"fast"`` (default) or ``"reference"``, as for :class:`PtTempo`.
    """
    if parameters is None:
        assert tolerance is not None, "If 'parameters' is None then 'tolerance' must be given."
        parameters = guess_tempo_parameters(bath, start_time, end_time, None, tolerance)
    pt_tempo = PtTempo(
        bath,
        start_time,
        end_time,
        parameters,
        unique,
        process_tensor_file,
        overwrite,
        backend_config,
        name,
        description,
        method,
    )
    return pt_tempo.get_process_tensor(progress_type)
