"""The HDF5 file format of process tensors: :class:`FileProcessTensor` and its layout; runs on the host.

The layout is OQuPy 0.5's, so that each library reads the other's files.  A file holds the datasets
``hs_dim``, ``dt`` and ``transform_in`` / ``transform_out`` (``[nan]`` for none) and, for each kind of tensor,
a pair of datasets: ``initial_tensor_data`` / ``initial_tensor_shape`` (one entry), ``mpo_tensors_data`` /
``mpo_tensors_shape`` and ``cap_tensors_data`` / ``cap_tensors_shape`` (one entry per step): each tensor
flattened (variable-length complex128; ``[nan]`` for none) and its shape.  Its attributes hold
``oqupy_version`` (the OQuPy version whose layout the file follows, ``"0.5.0"``), ``name``, ``description``, our
``format`` and ``version``, and the crash-safety flag ``writing``: true from creation, and from any later write,
until the writer flushes or closes the file.  A file of ours whose writer was interrupted is therefore refused
on open with :class:`ProcessTensorFileError`.

Files written by OQuPy itself carry ``oqupy_version`` but no ``format``; OQuPy never clears their ``writing``
flag (it tests ``flag is True`` on a NumPy bool), so for these legacy files the flag says nothing and is
ignored.  Files written by earlier versions of this package (``initial_tensors_*``, ``0`` for no ``dt``,
``[0]`` for no transform) are still read.

The names here are re-exported by :mod:`oqupy.process_tensor` (the tensor conventions are stated there).
Everything is NumPy and h5py in every generated package.
"""

import os
import tempfile
from typing import Any, NamedTuple, Optional

import numpy as np

from oqupy import config
from oqupy._process_tensor_base import BaseProcessTensor, as_tensor, check_step
from oqupy.base_api import BaseAPIClass
from oqupy.util import check_dimension

__runs_on__ = "host"

FILE_FORMAT = "oqupy-process-tensor"
FILE_VERSION = "1.1"
OQUPY_FILE_VERSION = "0.5.0"
"""The ``oqupy_version`` attribute written: OQuPy 0.5 reads the file without a version warning."""
UNIFORM_FILE_FORMAT = "oqupy-uniform-process-tensor"
"""The format of a file holding a uniform process tensor (datasets ``cell``, ``left``, ``right``)."""

TENSOR_KINDS = ("initial", "mpo", "cap")
"""The kinds of tensors a file stores, each in a pair of datasets."""

_NONE_MARK = np.array([np.nan], dtype=config.NpDtype)
"""Stored in place of a missing tensor (with the shape ``[1]``), a missing transform or (real) a missing ``dt``."""


class ProcessTensorFileError(OSError):
    """A process-tensor file that cannot be used: interrupted while being written, truncated or malformed."""


class FileHeader(NamedTuple):
    """What a process-tensor file stores besides its tensors."""

    hilbert_space_dimension: int
    dt: Optional[float]
    transform_in: Optional[np.ndarray]
    transform_out: Optional[np.ndarray]
    name: Optional[str]
    description: Optional[str]


class TensorDatasets(NamedTuple):
    """The two datasets of one kind of tensor, indexed by step."""

    data: Any  # h5py dataset: each tensor flattened (variable length)
    shape: Any  # h5py dataset: each tensor's shape (variable length)


def _stem(h5file: Any, kind: str) -> str:
    """The name stem of the datasets of ``kind``: OQuPy's ``initial_tensor``, or this package's former
    ``initial_tensors`` in a file that has that one."""
    if kind == "initial" and "initial_tensor_data" not in h5file and "initial_tensors_data" in h5file:
        return "initial_tensors"
    return "initial_tensor" if kind == "initial" else f"{kind}_tensors"


def tensor_datasets(h5file: Any, kind: str) -> TensorDatasets:
    """The datasets of the tensors of ``kind`` (one of ``TENSOR_KINDS``) in the open ``h5file``."""
    stem = _stem(h5file, kind)
    return TensorDatasets(h5file[f"{stem}_data"], h5file[f"{stem}_shape"])


def is_oqupy_legacy(h5file: Any) -> bool:
    """Whether ``h5file`` was written by OQuPy itself (an ``oqupy_version`` attribute and no ``format``)."""
    return "oqupy_version" in h5file.attrs and "format" not in h5file.attrs


def set_writing(h5file: Any, writing: bool) -> None:
    """Set the crash-safety flag ``writing`` of ``h5file`` and flush it."""
    h5file.attrs["writing"] = writing
    h5file.flush()


def create_layout(h5file: Any, h5py: Any, header: FileHeader) -> None:
    """Write the header and the empty tensor datasets of a new file, flagged as being written."""
    h5file.attrs["oqupy_version"] = OQUPY_FILE_VERSION
    h5file.attrs["format"] = FILE_FORMAT
    h5file.attrs["version"] = FILE_VERSION
    h5file.attrs["name"] = header.name
    h5file.attrs["description"] = header.description
    set_writing(h5file, True)
    h5file.create_dataset("hs_dim", data=np.array([header.hilbert_space_dimension], dtype=np.int64))
    h5file.create_dataset("dt", data=np.array([np.nan if header.dt is None else header.dt], dtype=np.float64))
    for key, matrix in (("transform_in", header.transform_in), ("transform_out", header.transform_out)):
        h5file.create_dataset(
            key, data=_NONE_MARK if matrix is None else np.asarray(matrix, dtype=config.NpDtype)
        )
    data_type = h5py.vlen_dtype(np.dtype(config.NpDtype))
    shape_type = h5py.vlen_dtype(np.dtype(np.int64))
    for kind in TENSOR_KINDS:
        stem = _stem(h5file, kind)
        h5file.create_dataset(f"{stem}_data", (0,), dtype=data_type, maxshape=(None,))
        h5file.create_dataset(f"{stem}_shape", (0,), dtype=shape_type, maxshape=(None,))
    write_tensor(h5file, "initial", 0, None)  # OQuPy expects the entry, even for no initial tensor
    h5file.flush()


def _stored_matrix(dataset: Any) -> Optional[np.ndarray]:
    """A stored transform matrix; a placeholder of one value (``[nan]``, formerly ``[0]``) means none."""
    matrix = np.array(dataset)
    return None if matrix.ndim < 2 else matrix


def read_header(h5file: Any, path: str) -> FileHeader:
    """The header of the open ``h5file`` (from ``path``); ``ProcessTensorFileError`` if it is unusable.

    Refused: a file of ours still flagged as being written (the flag of a file written by OQuPy is ignored,
    see the module docstring), missing or malformed datasets, and tensor data and shape datasets of different
    lengths.
    """
    try:
        if h5file.attrs.get("format", FILE_FORMAT) == UNIFORM_FILE_FORMAT:
            raise ProcessTensorFileError(
                f"'{path}' holds a uniform process tensor: open it with oqupy.import_process_tensor."
            )
        if bool(h5file.attrs.get("writing", False)) and not is_oqupy_legacy(h5file):
            raise ProcessTensorFileError(
                f"'{path}' was not closed by its writer (the computation or export was interrupted); "
                "its content is incomplete. Compute or export it again."
            )
        hs_dim = int(h5file["hs_dim"][0])
        dt = float(h5file["dt"][0])
        transform_in = _stored_matrix(h5file["transform_in"])
        transform_out = _stored_matrix(h5file["transform_out"])
        for kind in TENSOR_KINDS:
            datasets = tensor_datasets(h5file, kind)
            if datasets.data.shape != datasets.shape.shape:
                raise ProcessTensorFileError(f"'{path}': {kind} tensor data and shapes differ in length.")
        name = h5file.attrs.get("name", None)
        description = h5file.attrs.get("description", None)
    except ProcessTensorFileError:
        raise
    except (KeyError, ValueError, IndexError, TypeError, OSError) as err:
        raise ProcessTensorFileError(f"'{path}' is not a valid process tensor file: {err}") from err
    return FileHeader(
        hs_dim,
        dt if dt > 0.0 else None,  # nan (or 0 in our earlier files): none
        transform_in,
        transform_out,
        None if name is None else str(name),
        None if description is None else str(description),
    )


def write_tensor(h5file: Any, kind: str, index: int, tensor: Optional[np.ndarray]) -> None:
    """Store ``tensor`` (None: none) as tensor ``index`` of ``kind``, growing the datasets as needed."""
    datasets = tensor_datasets(h5file, kind)
    if index >= datasets.data.shape[0]:
        for dataset in datasets:
            old = dataset.shape[0]
            dataset.resize((index + 1,))
            for position in range(old, index):
                dataset[position] = _NONE_MARK if dataset is datasets.data else np.array([1], dtype=np.int64)
    if tensor is None:
        datasets.data[index], datasets.shape[index] = _NONE_MARK, np.array([1], dtype=np.int64)
    else:
        datasets.data[index] = tensor.reshape(-1)
        datasets.shape[index] = np.array(tensor.shape, dtype=np.int64)


def read_tensor(h5file: Any, kind: str, index: int, path: str) -> Optional[np.ndarray]:
    """Tensor ``index`` of ``kind`` (None if missing); ``ProcessTensorFileError`` if its size is wrong."""
    datasets = tensor_datasets(h5file, kind)
    if index >= datasets.data.shape[0]:
        return None
    values = np.asarray(datasets.data[index], dtype=config.NpDtype)
    if values.shape == (1,) and np.isnan(values[0]):
        return None
    dims = tuple(int(n) for n in datasets.shape[index])
    if int(np.prod(dims)) != values.size:
        raise ProcessTensorFileError(
            f"'{path}': {kind} tensor {index} has {values.size} values for shape {dims}."
        )
    return values.reshape(dims)


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
    The layout and the crash-safety flag are described in :mod:`oqupy.process_tensor_file`: a file whose
    writer was interrupted before :meth:`flush` or :meth:`close` is refused on open with
    :class:`ProcessTensorFileError`.
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
        header = FileHeader(
            self.hilbert_space_dimension,
            self.dt,
            self.transform_in,
            self.transform_out,
            self.name,
            self.description,
        )
        create_layout(self._file, h5py, header)
        self._pending = True

    def _open_for_reading(self, h5py: Any) -> None:
        """Open the file, check it and initialise the base class from its header."""
        path = self._filename
        if not os.path.exists(path):
            raise FileNotFoundError(f"No process tensor file '{path}'.")
        try:
            self._file = h5py.File(path, "r")
        except OSError as err:
            raise ProcessTensorFileError(
                f"'{path}' is not a readable HDF5 file (truncated or corrupt: was its writing interrupted?)."
            ) from err
        try:
            header = read_header(self._file, path)
        except ProcessTensorFileError:
            self._file.close()
            raise
        super().__init__(
            header.hilbert_space_dimension,
            header.dt,
            header.transform_in,
            header.transform_out,
            header.name,
            header.description,
        )

    # -- tensors -------------------------------------------------------------------------------------

    def _write(self, kind: str, index: int, tensor: Optional[np.ndarray]) -> None:
        """Write one tensor, flagging the file as being written first (until the next flush)."""
        if not self._writable or self._file is None:
            raise RuntimeError(f"Process tensor file '{self._filename}' is not open for writing.")
        if not self._pending:
            set_writing(self._file, True)
            self._pending = True
        write_tensor(self._file, kind, index, tensor)
        self._tensors_changed()

    def _read(self, kind: str, index: int) -> Optional[np.ndarray]:
        """Read one tensor (None if missing); ``RuntimeError`` once the file is closed."""
        if self._file is None:
            raise RuntimeError(f"Process tensor file '{self._filename}' is closed.")
        return read_tensor(self._file, kind, index, self._filename)

    def __len__(self) -> int:
        return 0 if self._file is None else int(tensor_datasets(self._file, "mpo").data.shape[0])

    def set_initial_tensor(self, initial_tensor: Optional[np.ndarray] = None) -> None:
        """Write the initial tensor (None: none)."""
        tensor = None if initial_tensor is None else as_tensor(initial_tensor, "initial tensor")
        self._write("initial", 0, tensor)

    def get_initial_tensor(self) -> Optional[np.ndarray]:
        """The initial tensor, or None."""
        return self._read("initial", 0)

    def set_mpo_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Write the MPO tensor of ``step`` (rank 3 or 4); the stored caps are removed (stale now)."""
        step = check_step(step)
        if tensor is not None:
            tensor = as_tensor(tensor, f"MPO tensor of step {step}")
            if tensor.ndim not in (3, 4):
                raise ValueError(f"An MPO tensor must have rank 3 or 4, not {tensor.ndim}.")
        self._write("mpo", step, tensor)
        for dataset in tensor_datasets(self._file, "cap"):
            dataset.resize((0,))

    def get_raw_mpo_tensor(self, step: int) -> Optional[np.ndarray]:
        """The stored MPO tensor of ``step`` (rank 3 or 4, untransformed)."""
        step = check_step(step)
        if step >= len(self):
            raise IndexError(f"Process tensor has only {len(self)} steps, not step {step}.")
        return self._read("mpo", step)

    def set_cap_tensor(self, step: int, tensor: Optional[np.ndarray] = None) -> None:
        """Write the cap of ``step``."""
        step = check_step(step)
        self._write("cap", step, None if tensor is None else as_tensor(tensor, f"cap of step {step}"))

    def get_cap_tensor(self, step: int) -> Optional[np.ndarray]:
        """The cap of ``step``, or None if caps were not computed."""
        step = check_step(step)
        if step > len(self):
            raise IndexError(f"Process tensor has caps for steps 0 ... {len(self)}, not {step}.")
        return self._read("cap", step)

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
        """Keep the file's copy of ``name`` / ``description`` current (writing modes only)."""
        f = getattr(self, "_file", None)
        if f is not None and getattr(self, "_writable", False):
            f.attrs[key] = value

    def flush(self) -> None:
        """Write everything to disk and mark the file complete (the next write marks it incomplete again)."""
        if self._file is not None and self._writable:
            set_writing(self._file, False)
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


# -- uniform process tensors --------------------------------------------------------------------------


class UniformContent(NamedTuple):
    """What a uniform process-tensor file stores: the header and the repeating cell with its boundaries."""

    header: FileHeader
    cell: np.ndarray  # T[p, f, a]
    left: np.ndarray
    right: np.ndarray


def file_format(filename: str) -> str:
    """The ``format`` attribute of the HDF5 file ``filename`` (``FILE_FORMAT`` if it has none)."""
    import h5py

    path = os.fspath(filename)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No process tensor file '{path}'.")
    try:
        with h5py.File(path, "r") as h5file:
            return str(h5file.attrs.get("format", FILE_FORMAT))
    except OSError as err:
        raise ProcessTensorFileError(
            f"'{path}' is not a readable HDF5 file (truncated or corrupt: was its writing interrupted?)."
        ) from err


def write_uniform(filename: str, content: UniformContent, overwrite: bool) -> None:
    """Write a uniform process tensor to ``filename`` atomically (a temporary file renamed when complete)."""
    import h5py

    path = os.fspath(filename)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"File '{path}' exists; use overwrite=True to replace it.")
    handle, partial = tempfile.mkstemp(prefix=".partial_", suffix=".hdf5", dir=os.path.dirname(path) or ".")
    os.close(handle)
    try:
        with h5py.File(partial, "w") as h5file:
            create_layout(h5file, h5py, content.header)
            h5file.attrs["format"] = UNIFORM_FILE_FORMAT
            for key in ("cell", "left", "right"):
                h5file.create_dataset(key, data=getattr(content, key))
            set_writing(h5file, False)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise


def read_uniform(filename: str) -> UniformContent:
    """Read a uniform process-tensor file; ``ProcessTensorFileError`` if it is not one or is malformed."""
    import h5py

    path = os.fspath(filename)
    if file_format(path) != UNIFORM_FILE_FORMAT:
        raise ProcessTensorFileError(f"'{path}' does not hold a uniform process tensor.")
    with h5py.File(path, "r") as h5file:
        try:
            if bool(h5file.attrs.get("writing", False)):
                raise ProcessTensorFileError(
                    f"'{path}' was not closed by its writer; its content is incomplete."
                )
            hs_dim = int(h5file["hs_dim"][0])
            dt = float(h5file["dt"][0])
            name, description = h5file.attrs.get("name", None), h5file.attrs.get("description", None)
            header = FileHeader(
                hs_dim,
                dt if dt > 0.0 else None,
                _stored_matrix(h5file["transform_in"]),
                _stored_matrix(h5file["transform_out"]),
                None if name is None else str(name),
                None if description is None else str(description),
            )
            cell, left, right = (
                np.asarray(h5file[key], dtype=config.NpDtype) for key in ("cell", "left", "right")
            )
        except ProcessTensorFileError:
            raise
        except (KeyError, ValueError, IndexError, TypeError, OSError) as err:
            raise ProcessTensorFileError(
                f"'{path}' is not a valid uniform process tensor file: {err}"
            ) from err
    if cell.ndim != 3 or left.shape != (cell.shape[0],) or right.shape != (cell.shape[1],):
        raise ProcessTensorFileError(
            f"'{path}': cell {cell.shape}, left {left.shape} and right {right.shape} do not fit together."
        )
    return UniformContent(header, cell, left, right)
