r"""Process tensors: the influence of an environment on a system, as a matrix product operator over time.

Leg order of an MPO tensor of step ``n`` (stated once): ``[0]`` past bond, ``[1]`` future bond, ``[2]``
input (from the system), ``[3]`` output (to the system).  A stored rank-3 tensor ``T[p, f, a]`` means an
implicit delta between input and output (``M[p, f, a, a] = T[p, f, a]``), which is what PT-TEMPO produces
and what :func:`oqupy.compute_dynamics` contracts without ever building the rank-4 tensor.  Inputs and
outputs live in the basis of ``transform_in`` / ``transform_out`` (the coupling eigenbasis): the system
vector ``v`` enters as ``v @ transform_in`` and leaves as ``w @ transform_out``.

The cap ``c_n`` closes the future bond of step ``n - 1`` (``c_N = [1]``): it is the future of the network
traced out with the identity, ``c_n[p] = sum_{f,i,o} M_n[p,f,i,o] c_{n+1}[f] t_in[i] t_out[o]`` with
``t = vec(1)/sqrt(d)``, so that ``rho_n`` is read off the state by contracting its bond with ``c_n``.

This module holds the in-memory process tensors (:class:`TrivialProcessTensor`, :class:`SimpleProcessTensor`,
the uniform :class:`TtiProcessTensor`)
and :func:`import_process_tensor`; it re-exports the common interface :class:`BaseProcessTensor` (from
:mod:`oqupy._process_tensor_base`) and the HDF5 file format (:class:`FileProcessTensor`,
:class:`ProcessTensorFileError`, from :mod:`oqupy.process_tensor_file`).  All of it runs on the host: the
tensors are NumPy arrays in both packages (data to store and read, not device state);
:func:`oqupy.compute_dynamics` moves what it needs to the device.

**[Jorgensen2019]** M. R. Jorgensen and F. A. Pollock, *Exploiting the causal tensor network structure of
quantum processes to efficiently simulate non-Markovian path integrals*, Phys. Rev. Lett. 123, 240602 (2019).
"""

import math
from typing import List, Optional

import numpy as np

from oqupy import config
from oqupy._process_tensor_base import BaseProcessTensor, as_tensor, check_step
from oqupy.process_tensor_file import (
    FILE_FORMAT,
    FILE_VERSION,
    UNIFORM_FILE_FORMAT,
    FileHeader,
    FileProcessTensor,
    ProcessTensorFileError,
    UniformContent,
    file_format,
    read_uniform,
    write_uniform,
)

__runs_on__ = "host"

__all__ = [
    "FILE_FORMAT",
    "FILE_VERSION",
    "BaseProcessTensor",
    "FileProcessTensor",
    "ProcessTensorFileError",
    "SimpleProcessTensor",
    "TrivialProcessTensor",
    "TtiProcessTensor",
    "UNIFORM_FILE_FORMAT",
    "import_process_tensor",
]


class TrivialProcessTensor(BaseProcessTensor):
    """No environment: no MPO tensors, infinite length, cap ``[1]``."""

    def __init__(
        self, hilbert_space_dimension: int = 1, name: Optional[str] = None, description: Optional[str] = None
    ) -> None:
        super().__init__(hilbert_space_dimension, name=name, description=description)

    def __len__(self) -> int:
        return 0

    @property
    def max_step(self) -> float:
        """A trivial process tensor never ends."""
        return float("inf")

    def get_initial_tensor(self) -> None:
        """No initial tensor."""
        return None

    def get_raw_mpo_tensor(self, step: int) -> None:
        """No influence at any step."""
        return None

    def get_mpo_tensor(self, step: int, transformed: bool = True) -> None:
        """No influence at any step."""
        return None

    def get_cap_tensor(self, step: int) -> np.ndarray:
        """Always ``[1]``."""
        return np.ones(1, dtype=config.NpDtype)

    def get_bond_dimensions(self) -> None:
        """No bonds."""
        return None


class SimpleProcessTensor(BaseProcessTensor):
    """A process tensor held in memory (see the module docstring for the conventions).

    Parameters
    ----------
    hilbert_space_dimension: int
        Dimension d of the system Hilbert space.
    dt: float
        Time step.
    transform_in, transform_out: ndarray
        Basis change into and out of the tensors' system legs (``None``: identity).
    """

    def __init__(
        self,
        hilbert_space_dimension: int,
        dt: Optional[float] = None,
        transform_in: Optional[np.ndarray] = None,
        transform_out: Optional[np.ndarray] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(hilbert_space_dimension, dt, transform_in, transform_out, name, description)
        self._initial_tensor: Optional[np.ndarray] = None
        self._mpo_tensors: List[Optional[np.ndarray]] = []
        self._cap_tensors: List[Optional[np.ndarray]] = []

    def __len__(self) -> int:
        return len(self._mpo_tensors)

    def set_initial_tensor(self, initial_tensor: Optional[np.ndarray] = None) -> None:
        """Store (a copy of) the initial tensor; None removes it."""
        self._initial_tensor = None if initial_tensor is None else as_tensor(initial_tensor, "initial tensor")

    def get_initial_tensor(self) -> Optional[np.ndarray]:
        """A copy of the initial tensor, or None."""
        return None if self._initial_tensor is None else self._initial_tensor.copy()

    def set_mpo_tensor(self, step: int, tensor: Optional[np.ndarray] = None, *, copy: bool = True) -> None:
        """Store (a copy of) the rank-3 or rank-4 MPO tensor of ``step``; the caps become stale.

        ``copy=False`` keeps a complex128 NumPy array as it is (the caller gives up ownership).
        """
        step = check_step(step)
        if tensor is not None:
            tensor = as_tensor(tensor, f"MPO tensor of step {step}", copy)
            if tensor.ndim not in (3, 4):
                raise ValueError(f"An MPO tensor must have rank 3 or 4, not {tensor.ndim}.")
        while len(self._mpo_tensors) <= step:
            self._mpo_tensors.append(None)
        self._mpo_tensors[step] = tensor
        self._cap_tensors = []
        self._tensors_changed()

    def get_raw_mpo_tensor(self, step: int) -> Optional[np.ndarray]:
        """The stored MPO tensor of ``step`` (rank 3 or 4, untransformed; not a copy: do not modify)."""
        step = check_step(step)
        if step >= len(self._mpo_tensors):
            raise IndexError(f"Process tensor has only {len(self._mpo_tensors)} steps, not step {step}.")
        return self._mpo_tensors[step]

    def set_cap_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Store (a copy of) the cap of ``step``."""
        step = check_step(step)
        while len(self._cap_tensors) <= step:
            self._cap_tensors.append(None)
        self._cap_tensors[step] = None if tensor is None else as_tensor(tensor, f"cap of step {step}")
        self._tensors_changed()

    def get_cap_tensor(self, step: int) -> Optional[np.ndarray]:
        """A copy of the cap of ``step``, or None if caps were not computed."""
        step = check_step(step)
        if step > len(self._mpo_tensors):
            raise IndexError(f"Process tensor has caps for steps 0 ... {len(self._mpo_tensors)}, not {step}.")
        cap = self._cap_tensors[step] if step < len(self._cap_tensors) else None
        return None if cap is None else cap.copy()

    def export(self, filename: str, overwrite: bool = False) -> None:
        """Write this process tensor (with its caps) to the HDF5 file ``filename``."""
        mode = "overwrite" if overwrite else "write"
        pt_file = FileProcessTensor(
            mode,
            filename,
            self.hilbert_space_dimension,
            self.dt,
            self.transform_in,
            self.transform_out,
            self.name,
            self.description,
        )
        try:
            self.copy_into(pt_file)
        except BaseException:
            pt_file.abandon()
            raise
        pt_file.close()

    def copy_into(self, target: BaseProcessTensor) -> None:
        """Write the initial tensor, every MPO tensor and the caps (computed if needed) into ``target``."""
        if self._initial_tensor is not None:
            target.set_initial_tensor(self._initial_tensor)
        for step, tensor in enumerate(self._mpo_tensors):
            target.set_mpo_tensor(step, tensor)
        for step, cap in enumerate(self.get_cap_tensors()):
            target.set_cap_tensor(step, cap)


class TtiProcessTensor(BaseProcessTensor):
    r"""A time-translation-invariant (uniform) process tensor: the same MPO tensor at every step, for any number of steps.

    The influence of a stationary bath with a memory cut-off, ``F(a_1 ... a_N) = v_l^T T[a_1] ... T[a_N] v_r``
    (computed by :class:`oqupy.TtiPtTempo`).  As a :class:`BaseProcessTensor`: ``max_step`` is infinite and
    ``len()`` raises ``OverflowError`` (there is no last step); the MPO tensor of step 0 is ``v_l^T T`` (past
    bond 1), of every later step ``T``; the cap of step 0 is ``[1]``, of every later step ``v_r``.

    Parameters
    ----------
    hilbert_space_dimension: int
        Dimension d of the system Hilbert space.
    dt: float
        Time step.
    cell: ndarray
        The repeating rank-3 tensor ``T[p, f, a]`` (past bond, future bond, path index; implicit delta
        between input and output, as for PT-TEMPO's tensors).
    left, right: ndarray
        The boundary vectors ``v_l`` (before the first step) and ``v_r`` (the future traced out).
    transform_in, transform_out: ndarray
        Basis change into and out of the coupling eigenbasis (``None``: identity).
    """

    def __init__(
        self,
        hilbert_space_dimension: int,
        dt: float,
        cell: np.ndarray,
        left: np.ndarray,
        right: np.ndarray,
        transform_in: Optional[np.ndarray] = None,
        transform_out: Optional[np.ndarray] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        assert dt is not None, "A uniform process tensor needs a time step 'dt'."
        super().__init__(hilbert_space_dimension, dt, transform_in, transform_out, name, description)
        self._cell = as_tensor(cell, "cell")
        self._left = as_tensor(left, "left boundary vector")
        self._right = as_tensor(right, "right boundary vector")
        if self._cell.ndim != 3 or self._cell.shape[0] != self._cell.shape[1]:
            raise ValueError(f"The cell must have shape (chi, chi, k), not {self._cell.shape}.")
        chi = self._cell.shape[0]
        if self._left.shape != (chi,) or self._right.shape != (chi,):
            raise ValueError(
                f"The boundary vectors must have shape ({chi},), not {self._left.shape} and {self._right.shape}."
            )
        inner = hilbert_space_dimension**2 if self._transform_in is None else self._transform_in.shape[1]
        if self._cell.shape[2] != inner:
            raise ValueError(f"The cell has path index {self._cell.shape[2]}, expected {inner}.")

    def __len__(self) -> int:
        raise OverflowError("A uniform process tensor has no last step (max_step is inf).")

    def __bool__(self) -> bool:
        return True

    def _str_items(self) -> list:
        return [("dimension", self._hs_dim), ("dt", self._dt), ("bond dimension", self.bond_dimension)]

    @property
    def max_step(self) -> float:
        """A uniform process tensor never ends."""
        return math.inf

    @property
    def bond_dimension(self) -> int:
        """Bond dimension of the repeating cell."""
        return int(self._cell.shape[0])

    @property
    def cell(self) -> np.ndarray:
        """A copy of the repeating tensor ``T[p, f, a]``."""
        return self._cell.copy()

    @property
    def left_boundary(self) -> np.ndarray:
        """A copy of ``v_l``."""
        return self._left.copy()

    @property
    def right_boundary(self) -> np.ndarray:
        """A copy of ``v_r``."""
        return self._right.copy()

    def get_initial_tensor(self) -> None:
        """No initial tensor."""
        return None

    def get_raw_mpo_tensor(self, step: int) -> np.ndarray:
        """``v_l^T T`` (shape ``(1, chi, k)``) at step 0, ``T`` at every later step."""
        if check_step(step) == 0:
            return np.tensordot(self._left, self._cell, axes=1)[None]
        return self._cell

    def get_cap_tensor(self, step: int) -> np.ndarray:
        """``[1]`` at step 0 (``v_l . v_r``), ``v_r`` at every later step."""
        if check_step(step) == 0:
            return np.ones(1, dtype=config.NpDtype)
        return self._right.copy()

    def get_cap_tensors(self) -> List[np.ndarray]:
        """Not available: there is one cap per step and no last step."""
        raise OverflowError("A uniform process tensor has a cap for every step: use get_cap_tensor(step).")

    def get_bond_dimensions(self) -> np.ndarray:
        """The bond dimensions of the first step: ``[1, chi]`` (every later bond is ``chi``)."""
        return np.array([1, self.bond_dimension], dtype=int)

    def check_consistency(self) -> None:
        """Checked on construction: the cell, boundaries and transforms fit together."""

    def compute_caps(self) -> None:
        """Nothing to compute: the cap of every step is ``v_r``."""

    def export(self, filename: str, overwrite: bool = False) -> None:
        """Write to the HDF5 file ``filename`` (format ``UNIFORM_FILE_FORMAT``), atomically."""
        header = FileHeader(
            self.hilbert_space_dimension,
            self.dt,
            self.transform_in,
            self.transform_out,
            self.name,
            self.description,
        )
        write_uniform(filename, UniformContent(header, self._cell, self._left, self._right), overwrite)

    @classmethod
    def from_file(cls, filename: str) -> "TtiProcessTensor":
        """Read a uniform process tensor written by :meth:`export`."""
        content = read_uniform(filename)
        header = content.header
        return cls(
            header.hilbert_space_dimension,
            header.dt,  # type: ignore[arg-type]
            content.cell,
            content.left,
            content.right,
            header.transform_in,
            header.transform_out,
            header.name,
            header.description,
        )


def import_process_tensor(filename: str, process_tensor_type: Optional[str] = None) -> BaseProcessTensor:
    """Open the process tensor stored in ``filename``.

    Parameters
    ----------
    filename: str
        Path of an HDF5 process-tensor file.
    process_tensor_type: str
        ``'file'`` (default): a read-only :class:`FileProcessTensor` that reads tensors on demand;
        ``'simple'``: everything loaded into a :class:`SimpleProcessTensor` and the file closed.  A uniform
        process tensor (written by :meth:`TtiProcessTensor.export`) is always read into a
        :class:`TtiProcessTensor`.
    """
    kind = "file" if process_tensor_type is None else process_tensor_type
    if kind not in ("file", "simple"):
        raise ValueError("Argument 'process_tensor_type' must be 'file' or 'simple'.")
    if file_format(filename) == UNIFORM_FILE_FORMAT:
        return TtiProcessTensor.from_file(filename)
    pt_file = FileProcessTensor("read", filename)
    if kind == "file":
        return pt_file
    try:
        pt = SimpleProcessTensor(
            pt_file.hilbert_space_dimension,
            pt_file.dt,
            pt_file.transform_in,
            pt_file.transform_out,
            pt_file.name,
            pt_file.description,
        )
        pt.set_initial_tensor(pt_file.get_initial_tensor())
        for step in range(len(pt_file)):
            pt.set_mpo_tensor(step, pt_file.get_raw_mpo_tensor(step))
        for step in range(len(pt_file) + 1):
            cap = pt_file.get_cap_tensor(step)
            if cap is not None:
                pt.set_cap_tensor(step, cap)
    finally:
        pt_file.close()
    return pt
