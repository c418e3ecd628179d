"""Process tensor time-evolving block decimation (PT-TEBD; Fux, Kilda, Lovett and Keeling, PRL 130, 2023).

A chain of systems (:class:`oqupy.system.SystemChain`) with nearest-neighbour couplings, each site with its
own environment given as a process tensor, is propagated as an augmented MPS (:class:`oqupy.mps_mpo.
AugmentedMPS`).  A step of length ``dt``: the post-controls of the step; the TEBD propagator over ``dt/2``;
the process tensors' MPO tensors of the step contracted into the sites; the TEBD propagator over ``dt/2``
again; the pre-controls of the new step; the read-out (trace, bond dimensions, reduced states).  Order 1 or
2 Trotter layers (:func:`oqupy.mps_mpo.compute_tebd_propagator`) and the relative-Frobenius truncation with
``epsrel`` at every SVD.

The driver runs on the host; the tensor work is :mod:`oqupy._chain_mps` (in ``oqupy_jax`` one compiled kernel
per two-site gate, truncation decided on the device, bonds stored with per-run capacities that grow when a step
overflows them; the step is then repeated).  ``backend_config`` is accepted for OQuPy compatibility and ignored: OQuPy's
``'parallel'`` option (gate layers in a process or thread pool) has no effect here, the gates of a layer run
one after the other.  Results (states, norms) are NumPy in both packages.
"""

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from oqupy._chain_mps import (
    MIN_PADDED,
    absorb_process_tensor,
    apply_nn_gate,
    apply_site_operator,
    capacity,
    environments,
    padded,
    reduced_vector,
    trace_site,
)
from oqupy._mps import stored
from oqupy._process_tensor_base import BaseProcessTensor
from oqupy._system_chain import SystemChain
from oqupy._validation import as_float
from oqupy.base_api import BaseAPIClass
from oqupy.config import PT_TEBD_DEFAULT_EPSREL, PT_TEBD_DEFAULT_ORDER, NpDtype
from oqupy.control import ChainControl
from oqupy.dynamics import Dynamics
from oqupy.mps_mpo import AugmentedMPS, TebdPropagator, compute_tebd_propagator
from oqupy.util import get_progress

__runs_on__ = "host"

__all__ = ["PtTebdParameters", "PtTebd"]


def _positive_float(value: Any, name: str) -> float:
    number = as_float(value, name, AssertionError, f"Argument '{name}' must be a float.")
    assert 0.0 < number < float("inf"), f"Argument '{name}' must be bigger than 0 and finite (got {number})."
    return number


class PtTebdParameters(BaseAPIClass):
    """Parameters of a PT-TEBD computation (every property can be set; deleting resets the default).

    Parameters
    ----------
    dt: float
        Time step; small enough for the Trotter splitting between the chain and its environments and to
        sample the environments' correlations.
    epsrel: float
        Relative truncation tolerance of every SVD (default ``config.PT_TEBD_DEFAULT_EPSREL``).
    order: int
        Trotter order of the TEBD propagator, 1 or 2 (default 2; other orders fail in ``PtTebd.compute``).
    name, description: str
        Optional name and description.
    """

    def __init__(
        self,
        dt: float,
        epsrel: float = PT_TEBD_DEFAULT_EPSREL,
        order: int = PT_TEBD_DEFAULT_ORDER,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        self.dt = dt
        self.order = order
        self.epsrel = epsrel

    def _str_items(self) -> list:
        return [("dt", self._dt), ("order", self._order), ("epsrel", self._epsrel)]

    @property
    def dt(self) -> float:
        """Time step."""
        return self._dt

    @dt.setter
    def dt(self, new_dt: float) -> None:
        self._dt = _positive_float(new_dt, "dt")

    @property
    def order(self) -> int:
        """Trotter order."""
        return self._order

    @order.setter
    def order(self, new_order: int) -> None:
        try:
            order = int(new_order)
        except Exception as err:
            raise AssertionError("Argument 'order' must be an integer.") from err
        assert order > 0, "Argument 'order' must be an integer bigger than 0."
        self._order = order

    @order.deleter
    def order(self) -> None:
        self._order = PT_TEBD_DEFAULT_ORDER

    @property
    def epsrel(self) -> float:
        """Relative truncation tolerance."""
        return self._epsrel

    @epsrel.setter
    def epsrel(self, new_epsrel: float) -> None:
        self._epsrel = _positive_float(new_epsrel, "epsrel")
        assert self._epsrel < 1.0, (
            f"Argument 'epsrel' must lie in the open interval (0, 1) (got {self._epsrel})."
        )

    @epsrel.deleter
    def epsrel(self) -> None:
        self._epsrel = PT_TEBD_DEFAULT_EPSREL


class PtTebd(BaseAPIClass):
    """PT-TEBD: a chain of systems, each with its own environment as a process tensor.

    Parameters
    ----------
    initial_augmented_mps: AugmentedMPS
        The initial state of the chain.
    system_chain: SystemChain
        The chain's site and bond Liouvillians (at least two sites).
    process_tensors: list
        One process tensor per site (any :class:`oqupy.process_tensor.BaseProcessTensor`: finite, from a
        file, or uniform), or None for a site without environment.  A finite process tensor of length ``N``
        allows ``N`` steps.
    parameters: PtTebdParameters
        Time step, truncation tolerance and Trotter order.
    chain_control: ChainControl
        Optional single-site controls.
    start_time: float
        Time of ``start_step``.
    start_step: int
        The first step (the process tensors are read from their step ``start_step``).
    dynamics_sites: list
        Sites (int) or sorted tuples of sites whose reduced density matrices are recorded at every step.
    backend_config: dict
        Accepted for OQuPy compatibility and ignored (see the module docstring).
    """

    def __init__(
        self,
        initial_augmented_mps: AugmentedMPS,
        system_chain: SystemChain,
        process_tensors: List[Optional[BaseProcessTensor]],
        parameters: PtTebdParameters,
        chain_control: Optional[ChainControl] = None,
        start_time: float = 0.0,
        start_step: int = 0,
        dynamics_sites: Optional[List[Union[int, tuple]]] = None,
        backend_config: Optional[Dict] = None,
    ) -> None:
        super().__init__()
        assert isinstance(initial_augmented_mps, AugmentedMPS), (
            "Argument 'initial_augmented_mps' must be an AugmentedMPS."
        )
        assert isinstance(system_chain, SystemChain), "Argument 'system_chain' must be a SystemChain."
        assert len(initial_augmented_mps) == len(system_chain), (
            "The MPS and the chain must have the same length."
        )
        for site, (gamma, dim) in enumerate(zip(initial_augmented_mps.gammas, system_chain.hs_dims)):
            assert gamma.shape[1] == dim**2, (
                f"The tensor of site {site} does not fit the Hilbert space dimension {dim}."
            )
        assert isinstance(process_tensors, list), "Argument 'process_tensors' must be a list."
        assert len(process_tensors) == len(system_chain), (
            "Argument 'process_tensors' needs one entry per site."
        )
        for site, process_tensor in enumerate(process_tensors):
            if process_tensor is not None:
                assert isinstance(process_tensor, BaseProcessTensor), (
                    f"Process tensor {site} has the wrong type."
                )
                assert process_tensor.hilbert_space_dimension == system_chain.hs_dims[site], (
                    f"Process tensor {site} does not fit the Hilbert space dimension of its site."
                )
        assert isinstance(parameters, PtTebdParameters), "Argument 'parameters' must be PtTebdParameters."
        assert isinstance(start_time, float), "Argument 'start_time' must be a float."
        assert isinstance(start_step, int) and not isinstance(start_step, bool), (
            "Argument 'start_step' must be an int."
        )
        assert backend_config is None or isinstance(backend_config, dict), (
            "Argument 'backend_config' must be a dict."
        )
        self._initial_mps = initial_augmented_mps
        self._chain = system_chain
        self._process_tensors = list(process_tensors)
        self._caps: Dict[int, List[np.ndarray]] = {}
        self._parameters = parameters
        self._start_time = start_time
        self._start_step = start_step
        self._backend_config = {} if backend_config is None else dict(backend_config)
        self._dynamics_sites = _check_dynamics_sites(dynamics_sites, len(system_chain))
        self.chain_control = chain_control
        self._propagator: Optional[TebdPropagator] = None
        self._gammas: List[Any] = []
        self._pt_legs: List[int] = []
        self._lambdas: List[Any] = []
        self._capacities: List[Tuple[int, int, int]] = []
        self._results: Dict[str, Any] = {}
        self._step: Optional[int] = None
        self._traces: Optional[tuple] = None

    @property
    def step(self) -> Optional[int]:
        """The current step (None before :meth:`initialize`)."""
        return self._step

    def time(self, step: int) -> float:
        """The time of ``step``."""
        return self._start_time + self._parameters.dt * (step - self._start_step)

    @property
    def chain_control(self) -> ChainControl:
        """The single-site controls (set None or delete to remove them)."""
        return self._chain_control

    @chain_control.setter
    def chain_control(self, chain_control: Optional[ChainControl]) -> None:
        if chain_control is None:
            del self.chain_control
        else:
            assert isinstance(chain_control, ChainControl), "Argument 'chain_control' must be a ChainControl."
            assert list(chain_control.hs_dims) == list(self._chain.hs_dims), (
                "The controls do not fit the chain."
            )
            self._chain_control = chain_control

    @chain_control.deleter
    def chain_control(self) -> None:
        self._chain_control = ChainControl(list(self._chain.hs_dims))

    def initialize(self) -> None:
        """Compute the gates, load the initial state, apply the pre-controls of the first step and record it."""
        self._step = self._start_step
        self._propagator = compute_tebd_propagator(
            self._chain, self._parameters.dt / 2.0, self._parameters.epsrel, self._parameters.order
        )
        gammas, lambdas = self._initial_mps.gammas, self._initial_mps.lambdas
        # the weights as real vectors (AugmentedMPS checks them real and positive), as the gates return them
        ends = (np.ones(gammas[0].shape[0]), np.ones(gammas[-1].shape[3]))
        self._gammas = list(gammas)
        self._pt_legs = [gamma.shape[2] for gamma in gammas]
        self._lambdas = [ends[0]] + [np.real(weights) for weights in lambdas] + [ends[1]]
        for site, process_tensor in enumerate(self._process_tensors):
            if process_tensor is not None:
                gamma = self._gammas[site]
                self._gammas[site] = _pad(
                    gamma, gamma.shape[:2] + (padded(gamma.shape[2]),) + gamma.shape[3:]
                )
        # per bond: capacities of the bond and of the bonds its gates split off the left and the right site
        self._capacities = [
            (capacity(weights.shape[0]), capacity(1), capacity(1)) for weights in self._lambdas
        ]
        self._pad_bonds()
        pt_bonds = {}
        for site, process_tensor in enumerate(self._process_tensors):
            if process_tensor is not None:
                pt_bonds[site] = process_tensor.get_bond_dimensions()
        self._results = {
            "time": [],
            "norm": [],
            "bond_dimensions": [],
            "dynamics": {sites: Dynamics(name=f"site{sites}") for sites in self._dynamics_sites},
            "pt_bond_dimensions": pt_bonds,
        }
        self._apply_controls(self._step, post=False)
        self._record()

    def compute(self, end_step: int, progress_type: Optional[str] = None) -> Dict:
        """Propagate up to step ``end_step`` and return :meth:`get_results`.

        ``progress_type``: ``'silent'``, ``'simple'`` or ``'bar'`` (None: the default).
        """
        try:
            last = int(end_step)
        except Exception as err:
            raise AssertionError("Argument 'end_step' must be an integer.") from err
        if self._step is None:
            self.initialize()
        assert self._step is not None
        first = self._step
        progress = get_progress(progress_type)
        with progress(max(0, last - first), "--> PT-TEBD computation") as bar:
            while self._step < last:
                self.compute_step()
                bar.update(self._step - first)
            bar.update(self._step - first)
        return self.get_results()

    def compute_step(self) -> None:
        """Advance by one time step (see the module docstring)."""
        if self._step is None:
            self.initialize()
        assert self._step is not None
        saved = (self._step, list(self._gammas), list(self._lambdas))
        needed = self._advance()
        while any(
            rank > limit
            for bond, ranks in needed.items()
            for rank, limit in zip(ranks, self._capacities[bond])
        ):
            # oqupy_jax only: a rank outgrew its capacity; the step again from its start with larger ones.  The
            # ranks of a truncated attempt understate the later gates' ranks: a quarter more than was seen.
            self._step, self._gammas, self._lambdas = saved[0], list(saved[1]), list(saved[2])
            for bond, ranks in needed.items():
                middle, left, right = (
                    max(old, capacity(rank + rank // 4)) for old, rank in zip(self._capacities[bond], ranks)
                )
                self._capacities[bond] = (middle, left, right)
            self._pad_bonds()
            needed = self._advance()
        self._apply_controls(self._step, post=False)
        self._record()

    def _advance(self) -> Dict[int, Tuple[int, int, int]]:
        """The step up to its pre-controls; returns the largest ranks the gates of each bond needed."""
        assert self._step is not None
        self._apply_controls(self._step, post=True)
        self._step += 1
        ranks: List[Tuple[int, Any]] = []
        self._apply_layers(ranks)
        for site, process_tensor in enumerate(self._process_tensors):
            if process_tensor is None:
                continue
            mpo = process_tensor.get_mpo_tensor(self._step - 1)
            if mpo is not None:
                self._pt_legs[site] = mpo.shape[1]
                legs = (
                    self._gammas[site].shape[2],
                    padded(mpo.shape[1], max(MIN_PADDED, self._gammas[site].shape[2])),
                )
                self._gammas[site] = absorb_process_tensor(
                    self._gammas[site], _pad(mpo, legs + mpo.shape[2:])
                )
        self._apply_layers(ranks)
        # one transfer per step: the ranks of every gate
        values = np.asarray(np.stack([pair[1] for pair in ranks]))
        needed: Dict[int, Tuple[int, int, int]] = {}
        for (bond, _), gate_ranks in zip(ranks, values.tolist()):
            middle, left, right = (
                max(known, int(rank)) for known, rank in zip(needed.get(bond, (0, 0, 0)), gate_ranks)
            )
            needed[bond] = (middle, left, right)
        return needed

    def _apply_layers(self, ranks: List[Tuple[int, Any]]) -> None:
        """The gate layers; appends ``(bond, ranks of the gate)`` for each gate to ``ranks``."""
        assert self._propagator is not None
        for layer in self._propagator.gate_layers:
            for gate in layer.gates:
                left = gate.sites[0]
                new_l, new_m, new_r, gate_ranks = apply_nn_gate(
                    (self._lambdas[left], self._lambdas[left + 1], self._lambdas[left + 2]),
                    self._gammas[left],
                    self._gammas[left + 1],
                    gate.tensors[0],
                    gate.tensors[1],
                    self._parameters.epsrel,
                    self._capacities[left + 1],
                )
                self._gammas[left], self._lambdas[left + 1], self._gammas[left + 1] = new_l, new_m, new_r
                ranks.append((left + 1, gate_ranks))
        self._traces = None

    def _pad_bonds(self) -> None:
        """``oqupy_jax``: each inner bond of the chain padded to its capacity (exact in ``oqupy_numpy``)."""
        last = len(self._gammas) - 1
        for site, gamma in enumerate(self._gammas):
            left = gamma.shape[0] if site == 0 else stored(gamma.shape[0], self._capacities[site][0])
            right = gamma.shape[3] if site == last else stored(gamma.shape[3], self._capacities[site + 1][0])
            self._gammas[site] = _pad(gamma, (left, gamma.shape[1], gamma.shape[2], right))
        for bond in range(1, last + 1):
            weights = self._lambdas[bond]
            self._lambdas[bond] = _pad(weights, (stored(weights.shape[0], self._capacities[bond][0]),))
        self._traces = None

    def _apply_controls(self, step: int, post: bool) -> None:
        controls = self._chain_control.get_single_site_controls(step, post)
        if controls is None:
            return
        for site, control in enumerate(controls):
            if control is not None:
                self._gammas[site] = apply_site_operator(self._gammas[site], control)
        self._traces = None

    def _cap(self, site: int, step: int) -> np.ndarray:
        """The cap closing the process-tensor leg of ``site`` at ``step`` (``[1]`` without environment)."""
        process_tensor = self._process_tensors[site]
        if process_tensor is None:
            return np.ones(1, dtype=NpDtype)
        cap = process_tensor.get_cap_tensor(step)
        if cap is None:
            if site not in self._caps:
                self._caps[site] = process_tensor.get_cap_tensors()
            cap = self._caps[site][step]
        return _pad(np.asarray(cap, dtype=NpDtype), (self._gammas[site].shape[2],))

    def _compute_traces(self) -> tuple:
        """Bath-traced and fully traced sites and the environments of the current state (cached)."""
        if self._traces is None:
            assert self._step is not None
            pairs = [
                trace_site(gamma, self._cap(site, self._step), _identity_vector(int(dim)))
                for site, (gamma, dim) in enumerate(zip(self._gammas, self._chain.hs_dims))
            ]
            traced, transfers = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
            left, right = environments(transfers, self._lambdas)
            self._traces = (traced, transfers, left, right)
        return self._traces

    def _density_matrix(self, sites: List[int]) -> np.ndarray:
        traced, transfers, left, right = self._compute_traces()
        vector = reduced_vector(sites, traced, transfers, self._lambdas, left[sites[0]], right[sites[-1]])
        dims = [int(self._chain.hs_dims[site]) for site in sites]
        size = int(np.prod(dims))
        tensor = np.asarray(vector).reshape([dim for dim in dims for _ in range(2)])
        order = list(range(0, 2 * len(dims), 2)) + list(range(1, 2 * len(dims), 2))
        return np.transpose(tensor, order).reshape(size, size)

    def _record(self) -> None:
        assert self._step is not None
        _, _, left, _ = self._compute_traces()
        time = self.time(self._step)
        self._results["time"].append(time)
        self._results["norm"].append(complex(np.sum(np.asarray(left[-1]))))
        self._results["bond_dimensions"].append(np.array(self._bond_dimensions(), dtype=int))
        for sites, dynamics in self._results["dynamics"].items():
            dynamics.add(time, self._density_matrix(_site_list(sites)))

    def _bond_dimensions(self) -> List[int]:
        """The bond dimensions between neighbouring sites (padding in ``oqupy_jax`` not counted)."""
        return [int(np.count_nonzero(np.asarray(weights))) for weights in self._lambdas[1:-1]]

    def get_augmented_mps(self) -> AugmentedMPS:
        """The current state as a new :class:`AugmentedMPS` (the initial one before :meth:`initialize`)."""
        if self._step is None:
            return self._initial_mps
        bonds = [self._gammas[0].shape[0]] + self._bond_dimensions() + [self._gammas[-1].shape[3]]
        gammas = [
            np.swapaxes(np.asarray(gamma)[: bonds[site], :, : self._pt_legs[site], : bonds[site + 1]], 2, 3)
            for site, gamma in enumerate(self._gammas)
        ]
        lambdas: List[Optional[np.ndarray]] = [
            np.asarray(weights)[:bond] for weights, bond in zip(self._lambdas[1:-1], bonds[1:-1])
        ]
        return AugmentedMPS(gammas, lambdas)

    def get_results(self) -> Dict:
        """``time``, ``norm`` (trace of the chain), ``bond_dimensions`` (per step), ``dynamics`` (sites ->
        :class:`oqupy.Dynamics`) and ``pt_bond_dimensions`` (site -> the process tensor's bond dimensions)."""
        return {
            "time": np.array(self._results.get("time", [])),
            "norm": np.array(self._results.get("norm", [])),
            "bond_dimensions": np.array(self._results.get("bond_dimensions", [])),
            "dynamics": self._results.get("dynamics", {}),
            "pt_bond_dimensions": self._results.get("pt_bond_dimensions", {}),
        }

    def get_current_density_matrix(self, sites: Union[int, tuple]) -> np.ndarray:
        """The reduced density matrix of a site or a sorted tuple of sites at the current step."""
        assert self._step is not None, "Nothing computed yet: call initialize() or compute() first."
        return self._density_matrix(_site_list(_check_sites(sites, len(self._chain))))


def _identity_vector(dim: int) -> np.ndarray:
    """``vec(1)`` of a ``dim``-dimensional site: the trace as a vector."""
    return np.identity(dim, dtype=NpDtype).reshape(dim * dim)


def _pad(tensor: np.ndarray, shape: tuple) -> np.ndarray:
    """``tensor`` padded with zeros at the end of each leg up to ``shape`` (``oqupy_jax``'s padding)."""
    if tuple(tensor.shape) == tuple(shape):
        return tensor
    return np.pad(tensor, [(0, size - length) for size, length in zip(shape, tensor.shape)])


def _site_list(sites: Union[int, tuple]) -> List[int]:
    return [sites] if isinstance(sites, int) else list(sites)


def _check_sites(sites: Any, number: int) -> Union[int, tuple]:
    """A site or a strictly increasing tuple of sites of a chain of ``number`` sites (AssertionError if not)."""
    if isinstance(sites, int) and not isinstance(sites, bool):
        assert 0 <= sites < number, f"Site {sites} out of range."
        return sites
    assert isinstance(sites, tuple) and len(sites) >= 1, "Sites must be an int or a tuple of ints."
    for site in sites:
        assert isinstance(site, int) and 0 <= site < number, f"Site {site} out of range."
    assert list(sites) == sorted(set(sites)), "A tuple of sites must be strictly increasing."
    return sites


def _check_dynamics_sites(dynamics_sites: Any, number: int) -> List[Union[int, tuple]]:
    if dynamics_sites is None:
        return []
    assert isinstance(dynamics_sites, list), "Argument 'dynamics_sites' must be a list."
    return [_check_sites(sites, number) for sites in dynamics_sites]
