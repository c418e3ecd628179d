"""The influence of a Gaussian bath on the path of the coupling operator, for TEMPO and PT-TEMPO.

Host code (NumPy in both packages): the influence exponents come from integrals of the bath correlation function
(``BaseCorrelations.influence_coefficients``), computed once per run; the host steps of TEMPO and PT-TEMPO
(``oqupy._tempo_step``, ``oqupy._pt_tempo_step``) receive the resulting matrices.  Conventions (``O-``, ``O+``,
``eta``) are stated in ``docs/tempo.md`` and in :mod:`oqupy.tempo`.
"""

from typing import Any, Dict, Optional, Tuple

import numpy as np

from oqupy import config, operators
from oqupy._checks import is_identity
from oqupy._tempo_parameters import TempoParameters
from oqupy._validation import first_nonfinite_step
from oqupy.bath import Bath
from oqupy.bath_correlations import BaseCorrelations

__runs_on__ = "host"

__all__ = [
    "Influences",
    "check_finite_coefficients",
    "eigenbasis_transforms",
    "influence_matrix",
    "line_influence",
    "self_influence",
]


def eigenbasis_transforms(bath: Bath) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    """A process tensor's ``(transform_in, transform_out)`` into and out of the coupling eigenbasis, in which the
    influences are diagonal; ``(None, None)`` when the coupling is already diagonal."""
    unitary = np.asarray(bath.unitary_transform, dtype=config.NpDtype)
    if is_identity(unitary):
        return None, None
    transform_in = np.asarray(operators.left_right_super(unitary.conj().T, unitary)).T
    transform_out = np.asarray(operators.left_right_super(unitary, unitary.conj().T)).T
    return transform_in, transform_out


def self_influence(eta: complex, comm: np.ndarray, acomm: np.ndarray) -> np.ndarray:
    """``I0[b] = exp(-O-_b (Re eta O-_b + i Im eta O+_b))`` for the step with itself."""
    return np.exp(-comm * (eta.real * comm + 1j * eta.imag * acomm))


def line_influence(
    eta: Any, comm_past: np.ndarray, acomm_past: np.ndarray, comm_current: np.ndarray
) -> np.ndarray:
    """``I[..., a, b] = exp(-(Re eta O-_a + i Im eta O+_a) O-_b)`` for every coefficient in ``eta`` (any shape)."""
    eta = np.asarray(eta)[..., None]
    past = eta.real * comm_past + 1j * eta.imag * acomm_past
    return np.exp(-past[..., :, None] * comm_current)


def influence_matrix(
    dk: int,
    parameters: TempoParameters,
    correlations: BaseCorrelations,
    coupling_acomm: np.ndarray,
    coupling_comm: np.ndarray,
    deg_positions: Optional[tuple] = None,
) -> Optional[np.ndarray]:
    """The influence of step distance ``dk``: a vector for ``dk = 0``, a matrix ``I[past, current]`` otherwise.

    ``dk < 0`` is the memory tail (``None`` without ``add_correlation_time``).  ``deg_positions``
    (north representatives, west representatives) selects rows and columns under ``unique``.
    """
    dt = parameters.dt
    limit = parameters.subdiv_limit or config.SUBDIV_LIMIT
    comm, acomm = np.asarray(coupling_comm), np.asarray(coupling_acomm)
    if dk == 0:
        return self_influence(correlations.influence_coefficients(dt, 0, subdiv_limit=limit)[0], comm, acomm)
    if dk > 0:
        eta = correlations.influence_coefficients(dt, dk, subdiv_limit=limit)[dk]
    else:
        if parameters.add_correlation_time is None or parameters.dkmax is None:
            return None
        tail = min(-dk * dt, dt + parameters.add_correlation_time)  # dk = dkmax - (step + 1)
        eta = correlations.tail_coefficient(dt, parameters.dkmax, tail, subdiv_limit=limit)
    rows, columns = (slice(None), slice(None)) if deg_positions is None else deg_positions
    return line_influence(eta, comm[rows], acomm[rows], comm[columns])


def check_finite_coefficients(eta: Any, dt: float, first: int = 0) -> None:
    """``ValueError`` naming the bath if an influence coefficient (``eta[k]``: step distance ``first + k``) is NaN
    or infinite: correlations that are not finite (a correlation function or spectral density that is NaN or
    infinite somewhere, or whose integrals diverge) would otherwise give NaN dynamics or an obscure SVD error."""
    bad = first_nonfinite_step(np.asarray(eta))
    if bad is not None:
        raise ValueError(
            f"The correlations of argument 'bath' are not finite: the influence coefficient of step distance "
            f"{first + bad} (dt = {dt}) is {np.asarray(eta)[bad]}. Check its correlation function or spectral "
            "density (NaN, infinite or divergent integrals)."
        )


class Influences:
    """All influence data of one run, computed on the host once (extended when the memory grows).

    With ``unique`` the path indices are reduced to the degeneracy classes of the coupling (one row / column
    per class).  With ``weighted_classes`` (and not ``unique``) they are reduced too, but each class carries the
    weight ``sqrt(size)`` in truncations (``north_weights``, ``west_weights``): a matrix whose rows or columns
    repeat ``m`` times has the singular values of the reduced one with that row / column scaled by
    ``sqrt(m)``, so the truncation, and the result, are those of the unreduced computation at the reduced cost.
    """

    def __init__(
        self, bath: Bath, parameters: TempoParameters, unique: bool, weighted_classes: bool = False
    ) -> None:
        self.parameters = parameters
        self.correlations = bath.correlations
        self.comm = bath.coupling_comm
        self.acomm = bath.coupling_acomm
        dim2 = self.comm.shape[0]
        if unique or weighted_classes:
            north, west = bath.north_degeneracy_map, bath.west_degeneracy_map
            self.north_rep = bath.north_degeneracy_representatives
            self.west_rep = bath.west_degeneracy_representatives
        else:
            north = west = np.arange(dim2)
            self.north_rep = self.west_rep = np.arange(dim2)
        self.north = (north[None, :] == np.arange(self.north_rep.shape[0])[:, None]).astype(config.NpDtype)
        self.west = (west[None, :] == np.arange(self.west_rep.shape[0])[:, None]).astype(config.NpDtype)
        # Truncation weights of the classes: sqrt(class size) stands for the class's repeated rows and columns
        # of the unreduced computation (same singular values), 1 where ``unique`` asks for one row per class.
        sizes_north, sizes_west = np.sum(self.north.real, axis=1), np.sum(self.west.real, axis=1)
        weighted = weighted_classes and not unique
        self.north_weights = np.sqrt(sizes_north) if weighted else np.ones_like(sizes_north)
        self.west_weights = np.sqrt(sizes_west) if weighted else np.ones_like(sizes_west)
        self.limit = parameters.subdiv_limit or config.SUBDIV_LIMIT
        self.stack = np.zeros((0, self.north_rep.shape[0], self.west_rep.shape[0]), dtype=config.NpDtype)
        self.self_influence = np.ones(dim2, dtype=config.NpDtype)
        self.tails: Dict[float, np.ndarray] = {}
        self.extend(0)

    def _matrix(self, eta: Any) -> np.ndarray:
        return line_influence(
            eta, self.comm[self.north_rep], self.acomm[self.north_rep], self.comm[self.west_rep]
        )

    def extend(self, memory: int) -> None:
        """Make the influences of step distances ``1 ... memory`` available."""
        if 0 < memory <= self.stack.shape[0]:
            return
        eta = self.correlations.influence_coefficients(
            self.parameters.dt, max(memory, 1), subdiv_limit=self.limit
        )
        check_finite_coefficients(eta, self.parameters.dt)
        self.self_influence = self_influence(eta[0], self.comm, self.acomm)
        self.stack = self._matrix(eta[1:])

    def get(self, dk: int, step: int) -> np.ndarray:
        """Influence of distance ``dk`` at ``step``; the oldest kept distance carries the tail if enabled."""
        dkmax, extra = self.parameters.dkmax, self.parameters.add_correlation_time
        if extra is not None and dkmax is not None and dk == dkmax:
            # the oldest kept time stands for itself and every earlier, already summed time:
            # lags dkmax ... step, i.e. a rectangle of length (step + 1 - dkmax) dt (capped)
            dt = self.parameters.dt
            tail = min((step + 1 - dkmax) * dt, dt + extra)
            key = round(tail, 12)
            if key not in self.tails:
                eta = self.correlations.tail_coefficient(dt, dkmax, tail, subdiv_limit=self.limit)
                check_finite_coefficients(np.atleast_1d(eta), dt, dkmax)
                self.tails[key] = self._matrix(eta)
            return self.tails[key]
        return self.stack[dk - 1]
