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

All tensors are held as NumPy arrays on the host in both packages (they are data to store and read, not
device state); :func:`oqupy.compute_dynamics` moves what it needs to the device.

**[Jorgensen2019]** M. R. Jorgensen and F. A. Pollock, *Exploiting the causal tensor network structure of
quantum processes to efficiently simulate non-Markovian path integrals*, Phys. Rev. Lett. 123, 240602 (2019).
"""

import math
import os
import tempfile
from typing import Any, List, Optional

import numpy as np

from oqupy import config
from oqupy.base_api import BaseAPIClass
from oqupy.util import check_dimension

__runs_on__ = "host"

FILE_FORMAT = "oqupy-process-tensor"
FILE_VERSION = "1.0"


class ProcessTensorFileError(OSError):
    """A process-tensor file that cannot be used: interrupted while being written, truncated or malformed."""


def _as_tensor(tensor: Any, name: str, copy: bool = True) -> np.ndarray:
    array = np.array(tensor, dtype=config.NpDtype) if copy else np.asarray(tensor, dtype=config.NpDtype)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"The {name} contains NaN or inf.")
    return array


def _check_transform(transform: Any, dim2: int, name: str, inner_axis: int) -> Optional[np.ndarray]:
    if transform is None:
        return None
    matrix = _as_tensor(transform, name)
    assert matrix.ndim == 2, f"Argument '{name}' must be a matrix."
    outer_axis = 1 - inner_axis
    assert matrix.shape[outer_axis] == dim2, (
        f"Argument '{name}' must have {dim2} (the Liouville dimension) along axis {outer_axis}, "
        f"not shape {matrix.shape}."
    )
    return matrix


class BaseProcessTensor(BaseAPIClass):
    """Common interface of process tensors (abstract).

    Parameters
    ----------
    hilbert_space_dimension: int
        Dimension d of the system Hilbert space.
    dt: float
        Time step (``None``: no time grid, e.g. a trivial process tensor).
    transform_in: ndarray
        (d^2, k) matrix taking the system's Liouville vector into the tensors' input basis (``None``: identity).
    transform_out: ndarray
        (k, d^2) matrix taking the tensors' output basis back to the system (``None``: identity).
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
        super().__init__(name, description)
        self._hs_dim = check_dimension(hilbert_space_dimension, "hilbert_space_dimension")
        if dt is not None:
            dt = float(dt)
            if not math.isfinite(dt) or dt <= 0.0:
                raise ValueError("Argument 'dt' must be positive.")
        self._dt = dt
        dim2 = hilbert_space_dimension**2
        self._transform_in = _check_transform(transform_in, dim2, "transform_in", inner_axis=1)
        self._transform_out = _check_transform(transform_out, dim2, "transform_out", inner_axis=0)
        trace = np.identity(hilbert_space_dimension, dtype=config.NpDtype).reshape(dim2) / math.sqrt(
            hilbert_space_dimension
        )
        self._trace_in = trace if self._transform_in is None else trace @ self._transform_in
        self._trace_out = trace if self._transform_out is None else self._transform_out @ trace

    def _str_items(self) -> list:
        return [("dimension", self._hs_dim), ("dt", self._dt), ("length", len(self))]

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def hilbert_space_dimension(self) -> int:
        """Hilbert space dimension d of the system."""
        return self._hs_dim

    @property
    def dt(self) -> Optional[float]:
        """Time step."""
        return self._dt

    @property
    def max_step(self) -> float:
        """Number of steps the process tensor covers (``inf`` for a trivial one)."""
        return len(self)

    @property
    def transform_in(self) -> Optional[np.ndarray]:
        """(d^2, k) input transform, or None."""
        return None if self._transform_in is None else self._transform_in.copy()

    @property
    def transform_out(self) -> Optional[np.ndarray]:
        """(k, d^2) output transform, or None."""
        return None if self._transform_out is None else self._transform_out.copy()

    def set_initial_tensor(self, initial_tensor: Optional[np.ndarray] = None) -> None:
        """Store the initial tensor (not supported by this class)."""
        raise RuntimeError(f"{type(self).__name__} cannot be written to.")

    def set_mpo_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Store the MPO tensor of ``step`` (not supported by this class)."""
        raise RuntimeError(f"{type(self).__name__} cannot be written to.")

    def set_cap_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Store the cap of ``step`` (not supported by this class)."""
        raise RuntimeError(f"{type(self).__name__} cannot be written to.")

    def get_initial_tensor(self) -> Optional[np.ndarray]:
        """The initial tensor (None: the initial state is given separately)."""
        raise NotImplementedError

    def get_raw_mpo_tensor(self, step: int) -> Optional[np.ndarray]:
        """The MPO tensor of ``step`` as stored: rank 3 (delta between in and out) or 4, untransformed."""
        raise NotImplementedError

    def get_cap_tensor(self, step: int) -> Optional[np.ndarray]:
        """The cap closing the future bond before ``step`` (None if not computed)."""
        raise NotImplementedError

    def get_mpo_tensor(self, step: int, transformed: bool = True) -> Optional[np.ndarray]:
        """The rank-4 MPO tensor ``M[past, future, in, out]`` of ``step``, with the transforms if ``transformed``."""
        tensor = self.get_raw_mpo_tensor(step)
        if tensor is None:
            return None
        if tensor.ndim == 3:
            tensor = np.einsum("pfi,io->pfio", tensor, np.identity(tensor.shape[2], dtype=tensor.dtype))
        if transformed:
            if self._transform_in is not None:
                tensor = np.einsum("xi,pfio->pfxo", self._transform_in, tensor)
            if self._transform_out is not None:
                tensor = np.einsum("pfxo,oy->pfxy", tensor, self._transform_out)
        return tensor

    def get_bond_dimensions(self) -> Optional[np.ndarray]:
        """Bond dimensions: the past bond of every step and the future bond of the last one."""
        if len(self) == 0:
            return None
        shapes = [self._tensor_shape(step) for step in range(len(self))]
        return np.array([shape[0] for shape in shapes] + [shapes[-1][1]], dtype=int)

    def _tensor_shape(self, step: int) -> tuple:
        tensor = self.get_raw_mpo_tensor(step)
        return (1, 1) if tensor is None else tensor.shape

    def get_cap_tensors(self) -> List[np.ndarray]:
        """All ``len(self) + 1`` caps ``c_0 ... c_N`` (module docstring), stored or computed.

        The stored caps are returned when every one of them is there; otherwise all of them are
        computed from the MPO tensors.  Nothing is written.

        Returns
        -------
        caps: list(np.ndarray)
            ``caps[n]`` closes the future bond of step ``n - 1``; ``caps[len(self)]`` is ``[1]``.
        """
        caps = [self.get_cap_tensor(step) for step in range(len(self) + 1)]
        if any(cap is None for cap in caps):
            return self._caps_from_tensors()
        return [np.asarray(cap, dtype=config.NpDtype) for cap in caps]

    def _caps_from_tensors(self) -> List[np.ndarray]:
        cap = np.ones(1, dtype=config.NpDtype)
        caps = [cap]
        weights_3 = self._trace_in * self._trace_out
        for step in reversed(range(len(self))):
            tensor = self.get_raw_mpo_tensor(step)
            if tensor is None:
                cap = np.ones(1, dtype=config.NpDtype) * np.sum(cap)
            elif tensor.ndim == 3:
                cap = np.einsum("pfa,f,a->p", tensor, cap, weights_3)
            else:
                cap = np.einsum("pfio,f,i,o->p", tensor, cap, self._trace_in, self._trace_out)
            caps.append(cap)
        return caps[::-1]

    def check_consistency(self) -> None:
        """Raise ``ValueError`` if neighbouring bond dimensions or the system legs do not match."""
        inner_in = self._hs_dim**2 if self._transform_in is None else self._transform_in.shape[1]
        inner_out = self._hs_dim**2 if self._transform_out is None else self._transform_out.shape[0]
        previous = 1
        for step in range(len(self)):
            tensor = self.get_raw_mpo_tensor(step)
            if tensor is None:
                raise ValueError(f"Process tensor has no MPO tensor at step {step}.")
            if tensor.ndim not in (3, 4):
                raise ValueError(f"MPO tensor of step {step} has rank {tensor.ndim}, expected 3 or 4.")
            legs = (tensor.shape[2], tensor.shape[2]) if tensor.ndim == 3 else tensor.shape[2:]
            if legs != (inner_in, inner_out):
                raise ValueError(
                    f"MPO tensor of step {step} has system legs {legs}, expected {(inner_in, inner_out)}."
                )
            if tensor.shape[0] != previous:
                raise ValueError(
                    f"MPO tensor of step {step} has past bond {tensor.shape[0]}, but the previous future "
                    f"bond is {previous}."
                )
            previous = tensor.shape[1]
        if len(self) > 0 and previous != 1:
            raise ValueError(f"The last MPO tensor has future bond {previous}, expected 1.")


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
        self._initial_tensor = (
            None if initial_tensor is None else _as_tensor(initial_tensor, "initial tensor")
        )

    def get_initial_tensor(self) -> Optional[np.ndarray]:
        """A copy of the initial tensor, or None."""
        return None if self._initial_tensor is None else self._initial_tensor.copy()

    def set_mpo_tensor(self, step: int, tensor: Optional[np.ndarray] = None, *, copy: bool = True) -> None:
        """Store (a copy of) the rank-3 or rank-4 MPO tensor of ``step``; the caps become stale.

        ``copy=False`` keeps a complex128 NumPy array as it is (the caller gives up ownership).
        """
        step = _check_step(step)
        if tensor is not None:
            tensor = _as_tensor(tensor, f"MPO tensor of step {step}", copy)
            if tensor.ndim not in (3, 4):
                raise ValueError(f"An MPO tensor must have rank 3 or 4, not {tensor.ndim}.")
        while len(self._mpo_tensors) <= step:
            self._mpo_tensors.append(None)
        self._mpo_tensors[step] = tensor
        self._cap_tensors = []

    def get_raw_mpo_tensor(self, step: int) -> Optional[np.ndarray]:
        """The stored MPO tensor of ``step`` (rank 3 or 4, untransformed; not a copy: do not modify)."""
        step = _check_step(step)
        if step >= len(self._mpo_tensors):
            raise IndexError(f"Process tensor has only {len(self._mpo_tensors)} steps, not step {step}.")
        return self._mpo_tensors[step]

    def set_cap_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Store (a copy of) the cap of ``step``."""
        step = _check_step(step)
        while len(self._cap_tensors) <= step:
            self._cap_tensors.append(None)
        self._cap_tensors[step] = None if tensor is None else _as_tensor(tensor, f"cap of step {step}")

    def get_cap_tensor(self, step: int) -> Optional[np.ndarray]:
        """A copy of the cap of ``step``, or None if caps were not computed."""
        step = _check_step(step)
        if step > len(self._mpo_tensors):
            raise IndexError(f"Process tensor has caps for steps 0 ... {len(self._mpo_tensors)}, not {step}.")
        cap = self._cap_tensors[step] if step < len(self._cap_tensors) else None
        return None if cap is None else cap.copy()

    def compute_caps(self) -> None:
        """Compute and store the caps of every step (the future traced out)."""
        self.check_consistency()
        for step, cap in enumerate(self._caps_from_tensors()):
            self.set_cap_tensor(step, cap)

    def export(self, filename: str, overwrite: bool = False) -> None:
        """Write this process tensor (with its caps) to the HDF5 file ``filename``."""
        mode = "overwrite" if overwrite else "write"
        pt_file = FileProcessTensor(
            mode,
            filename,
            self._hs_dim,
            self._dt,
            self._transform_in,
            self._transform_out,
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


def _check_step(step: Any) -> int:
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise TypeError("Argument 'step' must be int.")
    if step < 0:
        raise IndexError(f"Step {step} is negative.")
    return int(step)


_NONE_MARK = np.array([np.nan], dtype=config.NpDtype)


class FileProcessTensor(BaseProcessTensor):
    """A process tensor stored in an HDF5 file (read, written step by step, or overwritten).

    Parameters
    ----------
    mode: str
        ``'read'`` an existing file, ``'write'`` a new file (an existing file is never replaced), or
        ``'overwrite'``.
    filename: str
        Path of the file; in the writing modes ``None`` makes a temporary file (removable with
        :meth:`remove`).
    hilbert_space_dimension, dt, transform_in, transform_out:
        As for :class:`SimpleProcessTensor` (writing modes only; read from the file otherwise).

    Notes
    -----
    Layout: datasets ``hs_dim``, ``dt`` (0 for none), ``transform_in`` / ``transform_out`` (``[0]`` for
    none), and for the initial, MPO and cap tensors a pair ``<kind>_tensors_data`` (each tensor flattened,
    variable-length complex128; ``[nan]`` for none) and ``<kind>_tensors_shape``.  Attributes hold the
    format, version, name, description and ``writing``, which is true from creation, and from any later
    write, until :meth:`flush` or :meth:`close`: a file whose writer was interrupted is refused on open
    with :class:`ProcessTensorFileError`.
    """

    def __init__(
        self,
        mode: str,
        filename: Optional[str] = None,
        hilbert_space_dimension: Optional[int] = None,
        dt: Optional[float] = None,
        transform_in: Optional[np.ndarray] = None,
        transform_out: Optional[np.ndarray] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        import h5py

        if mode not in ("read", "write", "overwrite"):
            raise ValueError("Argument 'mode' must be one of 'read', 'write', 'overwrite'.")
        self._file: Any = None
        self._writable = mode != "read"
        self._pending = False
        if mode == "read":
            assert filename is not None, "Reading a process tensor file needs a filename."
            self._filename = os.fspath(filename)
            self._removable = False
            self._open_for_reading(h5py)
            return
        dimension = check_dimension(hilbert_space_dimension, "hilbert_space_dimension")
        super().__init__(dimension, dt, transform_in, transform_out, name, description)
        if filename is None:
            handle, path = tempfile.mkstemp(prefix="pt_", suffix=".hdf5")
            os.close(handle)
            self._filename, self._removable, h5_mode = path, True, "w"
        else:
            self._filename, self._removable = os.fspath(filename), mode == "overwrite"
            h5_mode = "w" if mode == "overwrite" else "w-"
            if mode == "write" and os.path.exists(self._filename):
                raise FileExistsError(f"File '{self._filename}' exists; use mode='overwrite' to replace it.")
        self._file = h5py.File(self._filename, h5_mode)
        self._create_layout(h5py)

    # -- file layout ---------------------------------------------------------------------------------

    def _create_layout(self, h5py: Any) -> None:
        f = self._file
        f.attrs["format"] = FILE_FORMAT
        f.attrs["version"] = FILE_VERSION
        f.attrs["name"] = self.name
        f.attrs["description"] = self.description
        f.attrs["writing"] = True
        self._pending = True
        f.flush()
        f.create_dataset("hs_dim", data=np.array([self._hs_dim], dtype=np.int64))
        f.create_dataset("dt", data=np.array([0.0 if self._dt is None else self._dt], dtype=np.float64))
        for key, matrix in (("transform_in", self._transform_in), ("transform_out", self._transform_out)):
            f.create_dataset(key, data=np.array([0.0]) if matrix is None else matrix)
        data_type = h5py.vlen_dtype(np.dtype(config.NpDtype))
        shape_type = h5py.vlen_dtype(np.dtype(np.int64))
        for kind in ("initial", "mpo", "cap"):
            f.create_dataset(f"{kind}_tensors_data", (0,), dtype=data_type, maxshape=(None,))
            f.create_dataset(f"{kind}_tensors_shape", (0,), dtype=shape_type, maxshape=(None,))
        f.flush()

    def _open_for_reading(self, h5py: Any) -> None:
        path = self._filename
        if not os.path.exists(path):
            raise FileNotFoundError(f"No process tensor file '{path}'.")
        try:
            f = h5py.File(path, "r")
        except OSError as err:
            raise ProcessTensorFileError(
                f"'{path}' is not a readable HDF5 file (truncated or corrupt: was its writing interrupted?)."
            ) from err
        self._file = f
        try:
            if bool(f.attrs.get("writing", False)):
                raise ProcessTensorFileError(
                    f"'{path}' was not closed by its writer (the computation or export was interrupted); "
                    "its content is incomplete. Compute or export it again."
                )
            hs_dim = int(f["hs_dim"][0])
            dt = float(f["dt"][0])
            transforms = []
            for key in ("transform_in", "transform_out"):
                matrix = np.array(f[key])
                transforms.append(None if matrix.ndim < 2 else matrix)
            for kind in ("initial", "mpo", "cap"):
                if f[f"{kind}_tensors_data"].shape != f[f"{kind}_tensors_shape"].shape:
                    raise ProcessTensorFileError(f"'{path}': {kind} tensor data and shapes differ in length.")
            name = f.attrs.get("name", None)
            description = f.attrs.get("description", None)
        except ProcessTensorFileError:
            f.close()
            raise
        except (KeyError, ValueError, IndexError, TypeError, OSError) as err:
            f.close()
            raise ProcessTensorFileError(f"'{path}' is not a valid process tensor file: {err}") from err
        super().__init__(
            hs_dim,
            dt if dt > 0.0 else None,
            transforms[0],
            transforms[1],
            None if name is None else str(name),
            None if description is None else str(description),
        )

    # -- tensors -------------------------------------------------------------------------------------

    def _write(self, kind: str, index: int, tensor: Optional[np.ndarray]) -> None:
        if not self._writable or self._file is None:
            raise RuntimeError(f"Process tensor file '{self._filename}' is not open for writing.")
        if not self._pending:
            self._file.attrs["writing"] = True
            self._file.flush()
            self._pending = True
        data, shape = self._file[f"{kind}_tensors_data"], self._file[f"{kind}_tensors_shape"]
        if index >= data.shape[0]:
            for dataset in (data, shape):
                old = dataset.shape[0]
                dataset.resize((index + 1,))
                for position in range(old, index):
                    dataset[position] = _NONE_MARK if dataset is data else np.array([1], dtype=np.int64)
        if tensor is None:
            data[index], shape[index] = _NONE_MARK, np.array([1], dtype=np.int64)
        else:
            data[index] = tensor.reshape(-1)
            shape[index] = np.array(tensor.shape, dtype=np.int64)

    def _read(self, kind: str, index: int) -> Optional[np.ndarray]:
        if self._file is None:
            raise RuntimeError(f"Process tensor file '{self._filename}' is closed.")
        data, shape = self._file[f"{kind}_tensors_data"], self._file[f"{kind}_tensors_shape"]
        if index >= data.shape[0]:
            return None
        values = np.asarray(data[index], dtype=config.NpDtype)
        if values.shape == (1,) and np.isnan(values[0]):
            return None
        dims = tuple(int(n) for n in shape[index])
        if int(np.prod(dims)) != values.size:
            raise ProcessTensorFileError(
                f"'{self._filename}': {kind} tensor {index} has {values.size} values for shape {dims}."
            )
        return values.reshape(dims)

    def __len__(self) -> int:
        return 0 if self._file is None else int(self._file["mpo_tensors_data"].shape[0])

    def set_initial_tensor(self, initial_tensor: Optional[np.ndarray] = None) -> None:
        """Write the initial tensor (None: none)."""
        tensor = None if initial_tensor is None else _as_tensor(initial_tensor, "initial tensor")
        self._write("initial", 0, tensor)

    def get_initial_tensor(self) -> Optional[np.ndarray]:
        """The initial tensor, or None."""
        return self._read("initial", 0)

    def set_mpo_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Write the MPO tensor of ``step`` (rank 3 or 4)."""
        step = _check_step(step)
        if tensor is not None:
            tensor = _as_tensor(tensor, f"MPO tensor of step {step}")
            if tensor.ndim not in (3, 4):
                raise ValueError(f"An MPO tensor must have rank 3 or 4, not {tensor.ndim}.")
        self._write("mpo", step, tensor)
        for dataset in (self._file["cap_tensors_data"], self._file["cap_tensors_shape"]):
            dataset.resize((0,))  # the caps depend on every tensor: stale now

    def get_raw_mpo_tensor(self, step: int) -> Optional[np.ndarray]:
        """The stored MPO tensor of ``step`` (rank 3 or 4, untransformed)."""
        step = _check_step(step)
        if step >= len(self):
            raise IndexError(f"Process tensor has only {len(self)} steps, not step {step}.")
        return self._read("mpo", step)

    def set_cap_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Write the cap of ``step``."""
        step = _check_step(step)
        self._write("cap", step, None if tensor is None else _as_tensor(tensor, f"cap of step {step}"))

    def get_cap_tensor(self, step: int) -> Optional[np.ndarray]:
        """The cap of ``step``, or None if caps were not computed."""
        step = _check_step(step)
        if step > len(self):
            raise IndexError(f"Process tensor has caps for steps 0 ... {len(self)}, not {step}.")
        return self._read("cap", step)

    def compute_caps(self) -> None:
        """Compute the caps of every step and write them to the file."""
        self.check_consistency()
        for step, cap in enumerate(self._caps_from_tensors()):
            self.set_cap_tensor(step, cap)

    # -- file handling -------------------------------------------------------------------------------

    @property
    def filename(self) -> str:
        """Path of the HDF5 file."""
        return self._filename

    @BaseAPIClass.name.setter  # type: ignore[attr-defined]
    def name(self, new_name: Optional[str] = None) -> None:
        BaseAPIClass.name.fset(self, new_name)  # type: ignore[attr-defined]
        self._write_attribute("name", self.name)

    @BaseAPIClass.description.setter  # type: ignore[attr-defined]
    def description(self, new_description: Optional[str] = None) -> None:
        BaseAPIClass.description.fset(self, new_description)  # type: ignore[attr-defined]
        self._write_attribute("description", self.description)

    def _write_attribute(self, key: str, value: str) -> None:
        f = getattr(self, "_file", None)
        if f is not None and getattr(self, "_writable", False):
            f.attrs[key] = value

    def flush(self) -> None:
        """Write everything to disk and mark the file complete (the next write marks it incomplete again)."""
        if self._file is not None and self._writable:
            self._file.attrs["writing"] = False
            self._file.flush()
            self._pending = False

    def close(self) -> None:
        """Flush (mark the file complete) and close it; further reads or writes fail."""
        if self._file is None:
            return
        self.flush()
        self._file.close()
        self._file = None

    def remove(self) -> None:
        """Close and delete the file (only a temporary or overwritten file may be removed)."""
        self.close()
        if not self._removable:
            raise FileExistsError(f"Process tensor file '{self._filename}' cannot be removed.")
        os.remove(self._filename)

    def __enter__(self) -> "FileProcessTensor":
        return self

    def __exit__(self, exception_type: Any, *exc: Any) -> None:
        if exception_type is None:
            self.close()
        else:
            self.abandon()

    def abandon(self) -> None:
        """Close the file without marking it complete (after a failed write it stays refused on open)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def import_process_tensor(filename: str, process_tensor_type: Optional[str] = None) -> BaseProcessTensor:
    """Open the process tensor stored in ``filename``.

    Parameters
    ----------
    filename: str
        Path of an HDF5 process-tensor file.
    process_tensor_type: str
        ``'file'`` (default): a read-only :class:`FileProcessTensor` that reads tensors on demand;
        ``'simple'``: everything loaded into a :class:`SimpleProcessTensor` and the file closed.
    """
    kind = "file" if process_tensor_type is None else process_tensor_type
    if kind not in ("file", "simple"):
        raise ValueError("Argument 'process_tensor_type' must be 'file' or 'simple'.")
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
