"""Gates and augmented matrix product states for PT-TEBD (:mod:`oqupy.pt_tebd`), as plain arrays.

Leg conventions (``P = d^2`` is a site's vectorised density matrix, row-major as in :mod:`oqupy.system`):

- a one-site gate is a matrix ``(out, in)``; a two-site gate is the pair ``(out_l, in_l, bond)``,
  ``(bond, out_r, in_r)`` (:func:`compute_nn_gate`; OQuPy 0.5's docstring names the first two legs the other
  way round, its code uses this order);
- an augmented MPS (Fux et al. 2023, supplemental material) has one tensor ``Gamma[L, P, A, R]`` per site
  (left bond, physical leg, process-tensor leg ``A``, right bond) and positive weights ``lambda`` on the bonds
  between neighbouring sites.

Gates are computed once per run on the host (``expm`` and an SVD): NumPy in every generated package.  Their
truncation is the relative-Frobenius criterion of :func:`oqupy._mps.truncation_rank`.
"""

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import scipy.linalg

from oqupy._mps import truncation_rank
from oqupy.base_api import BaseAPIClass
from oqupy.config import NpDtype

__runs_on__ = "host"

__all__ = [
    "AugmentedMPS",
    "Gate",
    "GateLayer",
    "NnGate",
    "SiteGate",
    "TebdPropagator",
    "compute_nn_gate",
    "compute_tebd_propagator",
    "compute_trotter_layers",
]


class Gate:
    """An n-site gate in MPO form.

    Leg orders (``L``, ``R``: bonds between the gate's tensors): one site ``(out, in)``; two sites
    ``(out, in, R)``, ``(L, out, in)``; more sites add ``(L, out, in, R)`` tensors in between.

    Parameters
    ----------
    sites: list(int)
        The sites the gate acts on, strictly increasing.
    tensors: list(ndarray)
        One tensor per site.
    """

    def __init__(self, sites: List[int], tensors: List[np.ndarray]) -> None:
        assert isinstance(sites, (list, tuple)) and len(sites) >= 1, (
            "Argument 'sites' must be a non-empty list."
        )
        for site in sites:
            assert isinstance(site, int) and not isinstance(site, bool), "Every site must be an int."
        for site_l, site_r in zip(sites[:-1], sites[1:]):
            assert site_l < site_r, "The sites of a gate must be strictly increasing."
        assert len(tensors) == len(sites), "A gate needs one tensor per site."
        arrays = [np.array(tensor, dtype=NpDtype) for tensor in tensors]
        last = len(arrays) - 1
        for index, array in enumerate(arrays):
            rank = 4 - (index == 0) - (index == last)
            assert array.ndim == rank, f"Tensor {index} of the gate must have rank {rank}, not {array.ndim}."
        for left, right in zip(arrays[:-1], arrays[1:]):
            assert left.shape[-1] == right.shape[0], "The bonds of neighbouring gate tensors must agree."
        self._sites = list(sites)
        self._tensors = arrays

    def __len__(self) -> int:
        return len(self._sites)

    @property
    def span(self) -> int:
        """Distance between the first and the last site."""
        return self._sites[-1] - self._sites[0]

    @property
    def sites(self) -> List[int]:
        """The sites the gate acts on."""
        return self._sites

    @property
    def tensors(self) -> List[np.ndarray]:
        """The gate's MPO tensors."""
        return self._tensors


class SiteGate(Gate):
    """A one-site gate: the superoperator ``tensor`` (``(out, in)``) on ``site``."""

    def __init__(self, site: int, tensor: np.ndarray) -> None:
        super().__init__([site], [tensor])


class NnGate(Gate):
    """A gate on the neighbours ``(site, site + 1)``: ``tensors = (left (out, in, bond), right (bond, out, in))``."""

    def __init__(self, site: int, tensors: Tuple[np.ndarray, np.ndarray]) -> None:
        assert isinstance(site, int) and not isinstance(site, bool), "Argument 'site' must be an int."
        super().__init__([site, site + 1], [tensors[0], tensors[1]])


class GateLayer:
    """Gates applied together; ``parallel`` says that they act on disjoint sites."""

    def __init__(self, parallel: bool, gates: List[Gate]) -> None:
        assert isinstance(parallel, bool), "Argument 'parallel' must be a bool."
        assert isinstance(gates, list), "Argument 'gates' must be a list."
        for gate in gates:
            assert isinstance(gate, Gate), "Every gate must be a Gate."
        self._parallel = parallel
        self._gates = gates

    @property
    def parallel(self) -> bool:
        """Whether the gates act on disjoint sites."""
        return self._parallel

    @property
    def gates(self) -> List[Gate]:
        """The gates of the layer."""
        return self._gates


class TebdPropagator:
    """One time step of TEBD: gate layers applied in order."""

    def __init__(self, gate_layers: List[GateLayer]) -> None:
        self._gate_layers = list(gate_layers)

    @property
    def gate_layers(self) -> List[GateLayer]:
        """The gate layers, in the order they are applied."""
        return self._gate_layers


def compute_nn_gate(
    liouvillian: np.ndarray, site: int, hs_dim_l: int, hs_dim_r: int, dt: float, epsrel: float
) -> NnGate:
    """The gate ``expm(dt L)`` of a two-site Liouvillian, split by a truncated SVD into an :class:`NnGate`.

    The propagator ``U[(o_l, o_r), (i_l, i_r)]`` is regrouped as a matrix ``[(o_l, i_l), (o_r, i_r)]`` and
    split, each side taking the square root of the kept singular values.

    Parameters
    ----------
    liouvillian: ndarray
        Two-site Liouvillian, ``(d_l^2 d_r^2)`` square.
    site: int
        The left site.
    hs_dim_l, hs_dim_r: int
        Hilbert space dimensions of the two sites.
    dt: float
        Time step of the gate.
    epsrel: float
        Relative truncation tolerance of the split.
    """
    size_l, size_r = int(hs_dim_l) ** 2, int(hs_dim_r) ** 2
    propagator = scipy.linalg.expm(dt * np.asarray(liouvillian, dtype=NpDtype))
    regrouped = propagator.reshape(size_l, size_r, size_l, size_r).transpose(0, 2, 1, 3)
    left, values, right = np.linalg.svd(
        regrouped.reshape(size_l * size_l, size_r * size_r), full_matrices=False
    )
    rank = truncation_rank(values, epsrel)
    roots = np.sqrt(values[:rank])
    tensor_l = (left[:, :rank] * roots).reshape(size_l, size_l, rank)
    tensor_r = (roots[:, None] * right[:rank]).reshape(rank, size_r, size_r)
    return NnGate(site, (tensor_l, tensor_r))


def compute_trotter_layers(
    nn_full_liouvillians: List[np.ndarray], hs_dims: Sequence[int], dt: float, epsrel: float
) -> List[GateLayer]:
    """The two Trotter layers ``[even, odd]``: the gates of the bonds whose left site is even, and odd."""
    gates: List[Gate] = [
        compute_nn_gate(liouvillian, bond, int(hs_dims[bond]), int(hs_dims[bond + 1]), dt, epsrel)
        for bond, liouvillian in enumerate(nn_full_liouvillians)
    ]
    return [GateLayer(True, gates[0::2]), GateLayer(True, gates[1::2])]


def compute_tebd_propagator(system_chain: Any, time_step: float, epsrel: float, order: int) -> TebdPropagator:
    """The TEBD propagator of ``system_chain`` over ``time_step``.

    Order 1: layers ``[even, odd]`` over ``time_step``; order 2 (Strang): ``[even, odd, odd, even]`` over
    ``time_step / 2`` each.  Other orders raise ``NotImplementedError``.
    """
    liouvillians = system_chain.get_nn_full_liouvillians()
    if order == 1:
        even, odd = compute_trotter_layers(liouvillians, system_chain.hs_dims, time_step, epsrel)
        return TebdPropagator([even, odd])
    if order == 2:
        even, odd = compute_trotter_layers(liouvillians, system_chain.hs_dims, time_step / 2.0, epsrel)
        return TebdPropagator([even, odd, odd, even])
    raise NotImplementedError(f"Trotter layers of order {order} are not implemented (orders 1 and 2 are).")


class AugmentedMPS(BaseAPIClass):
    """An augmented matrix product state: tensors ``Gamma[L, P, A, R]`` and bond weights ``lambda``.

    A site's input ``gamma`` is completed with legs of dimension 1 according to its rank:

    * 1: a vectorised density matrix of a product state, ``(P,)``;
    * 2: a density matrix ``(d, d)``;
    * 3: a canonical MPS tensor ``(L, P, R)``;
    * 4: an augmented tensor ``(L, P, R, A)`` (OQuPy 0.5's input order; stored as ``(L, P, A, R)``).

    Other ranks raise ``ValueError``.  A weight may be None (ones), a vector, or a diagonal matrix; all
    entries must be positive.

    Parameters
    ----------
    gammas: list(ndarray)
        One tensor per site.
    lambdas: list(ndarray)
        One weight per bond (``len(gammas) - 1``), or None (all ones).
    name, description: str
        Optional name and description.
    """

    def __init__(
        self,
        gammas: List[np.ndarray],
        lambdas: Optional[List[Optional[np.ndarray]]] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        assert isinstance(gammas, (list, tuple)) and len(gammas) > 0, (
            "Argument 'gammas' must be a non-empty list."
        )
        tensors = [_augmented_tensor(gamma) for gamma in gammas]
        bonds = []
        for left, right in zip(tensors[:-1], tensors[1:]):
            assert left.shape[3] == right.shape[0], "The bonds of neighbouring tensors must agree."
            bonds.append(left.shape[3])
        if lambdas is None:
            lambdas = [None] * len(bonds)
        assert len(lambdas) == len(bonds), "Argument 'lambdas' needs one entry per bond (len(gammas) - 1)."
        self._gammas = tensors
        self._lambdas = [_bond_weights(weights, bond) for weights, bond in zip(lambdas, bonds)]

    def __len__(self) -> int:
        return len(self._gammas)

    @property
    def gammas(self) -> List[np.ndarray]:
        """The site tensors ``Gamma[L, P, A, R]``."""
        return self._gammas

    @property
    def lambdas(self) -> List[np.ndarray]:
        """The bond weights (vectors)."""
        return self._lambdas


def _augmented_tensor(gamma: Any) -> np.ndarray:
    """A site's input tensor as ``Gamma[L, P, A, R]``."""
    tensor = np.array(gamma, dtype=NpDtype)
    if tensor.ndim == 4:
        return np.ascontiguousarray(np.swapaxes(tensor, 2, 3))
    if tensor.ndim == 3:
        return tensor.reshape(tensor.shape[0], tensor.shape[1], 1, tensor.shape[2])
    if tensor.ndim == 2:
        return tensor.reshape(1, tensor.size, 1, 1)
    if tensor.ndim == 1:
        return tensor.reshape(1, tensor.size, 1, 1)
    raise ValueError(f"A gamma tensor must have rank 1 to 4, not {tensor.ndim}.")


def _bond_weights(weights: Any, bond: int) -> np.ndarray:
    """A bond's weights as a positive vector of length ``bond``."""
    if weights is None:
        return np.ones(bond, dtype=NpDtype)
    vector = np.array(weights, dtype=NpDtype)
    if vector.ndim == 2:
        assert np.all(vector == np.diag(np.diagonal(vector))), "A lambda matrix must be diagonal."
        vector = np.diagonal(vector).copy()
    elif vector.ndim != 1:
        raise ValueError(f"A lambda must be a vector or a diagonal matrix, not of rank {vector.ndim}.")
    assert np.all(vector.real > 0.0) and np.all(vector.imag == 0.0), "All lambda values must be positive."
    assert len(vector) == bond, f"A lambda of this bond must have {bond} values."
    return vector
