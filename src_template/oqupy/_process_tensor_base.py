"""The common interface of process tensors, and the checks of what they store; runs on the host.

:class:`BaseProcessTensor` is re-exported by :mod:`oqupy.process_tensor`, which states the conventions
(leg order, transforms, caps) and holds the in-memory process tensors; :mod:`oqupy.process_tensor_file`
holds the HDF5 one.  Everything here is NumPy in every generated package.
"""

import math
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from oqupy import config
from oqupy.base_api import BaseAPIClass
from oqupy.util import check_dimension

__runs_on__ = "host"


def as_tensor(tensor: Any, name: str, copy: bool = True) -> np.ndarray:
    """``tensor`` as a complex128 array (a copy unless ``copy=False``); ``ValueError`` if not finite.

    Parameters
    ----------
    tensor: array_like
        The tensor to store.
    name: str
        What it is, for the error message (e.g. ``"MPO tensor of step 3"``).
    copy: bool
        Copy even if ``tensor`` already is a complex128 array.
    """
    array = np.array(tensor, dtype=config.NpDtype) if copy else np.asarray(tensor, dtype=config.NpDtype)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"The {name} contains NaN or inf.")
    return array


def check_step(step: Any) -> int:
    """``step`` as an int: ``TypeError`` unless it is an integer (not a bool), ``IndexError`` if negative."""
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise TypeError("Argument 'step' must be int.")
    if step < 0:
        raise IndexError(f"Step {step} is negative.")
    return int(step)


def _check_transform(transform: Any, dim2: int, name: str, inner_axis: int) -> Optional[np.ndarray]:
    """A copy of the transform matrix ``transform`` (None stays None) with ``dim2`` along ``1 - inner_axis``.

    ``inner_axis`` is the axis on the tensors' side: 1 for ``transform_in`` (d^2, k), 0 for
    ``transform_out`` (k, d^2).  ``AssertionError`` for a wrong shape, ``ValueError`` if not finite.
    """
    if transform is None:
        return None
    matrix = as_tensor(transform, name)
    assert matrix.ndim == 2, f"Argument '{name}' must be a matrix."
    outer_axis = 1 - inner_axis
    assert matrix.shape[outer_axis] == dim2, (
        f"Argument '{name}' must have {dim2} (the Liouville dimension) along axis {outer_axis}, "
        f"not shape {matrix.shape}."
    )
    return matrix


class BaseProcessTensor(BaseAPIClass):
    """Common interface of process tensors (abstract; conventions in :mod:`oqupy.process_tensor`).

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
        # what dynamics derived from the tensors, kept while they are unchanged (``oqupy_jax``: the tensors and
        # caps of the first n steps stacked, padded and on the device, under key n; see ``_dynamics_setup``)
        self._derived: Dict[int, Any] = {}

    def derived(self, key: int, make: Callable[[], Any]) -> Any:
        """What a computation derives from the tensors (``make()``), made on first use under ``key`` and kept until
        a tensor changes (``oqupy_jax``'s dynamics: the first ``key`` steps stacked, padded and on the device)."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def _tensors_changed(self) -> None:
        """Forget what was derived from the tensors; every writer calls this."""
        self._derived.clear()

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
        """Shape of the stored MPO tensor of ``step`` (``(1, 1)`` where there is none)."""
        tensor = self.get_raw_mpo_tensor(step)
        return (1, 1) if tensor is None else tensor.shape

    def get_cap_tensors(self) -> List[np.ndarray]:
        """All ``len(self) + 1`` caps ``c_0 ... c_N`` (see :mod:`oqupy.process_tensor`), stored or computed.

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
        """The caps computed from the MPO tensors, from ``c_N = [1]`` backwards."""
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

    def compute_caps(self) -> None:
        """Compute the caps of every step from the MPO tensors and store them (writable classes only)."""
        self.check_consistency()
        for step, cap in enumerate(self._caps_from_tensors()):
            self.set_cap_tensor(step, cap)

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
