"""The influence of a Gaussian bath on the path of the coupling operator, for TEMPO and PT-TEMPO.

Host code (NumPy in both packages): the influence exponents come from integrals of the bath correlation function
(``BaseCorrelations.influence_coefficients``), computed once per run; the host steps of TEMPO and PT-TEMPO
(``oqupy._tempo_step``, ``oqupy._pt_tempo_step``) receive the resulting matrices.  Conventions (``O-``, ``O+``,
``eta``) are stated in ``docs/tempo.md`` and in :mod:`oqupy.tempo`.
"""

from typing import Any, Dict, NamedTuple, Optional, Tuple

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
    "StepNetwork",
    "check_finite_coefficients",
    "conjugation_basis",
    "eigenbasis_transforms",
    "influence_matrix",
    "line_influence",
    "path_swap",
    "real_tensor",
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


def path_swap(dimension: int) -> np.ndarray:
    """The swap ``(i, j) -> (j, i)`` of the path (Liouville) index ``i d + j`` of a ``d``-level system."""
    path = np.arange(dimension * dimension)
    return (path % dimension) * dimension + path // dimension


def real_tensor(tensor: np.ndarray) -> np.ndarray:
    """A tensor made of real quantities in a conjugation basis, as a real array (its imaginary part is rounding,
    at most ``REAL_TOLERANCE`` of its largest entry)."""
    assert np.abs(tensor.imag).max() <= REAL_TOLERANCE * max(float(np.abs(tensor).max()), 1e-300), (
        "A tensor is not real in the conjugation basis of the coupling's classes."
    )
    return np.ascontiguousarray(tensor.real)


def conjugation_basis(swap: np.ndarray) -> np.ndarray:
    """The unitary ``R`` that makes ``R @ x`` real for every ``x`` with ``x[swap] == conj(x)``.

    ``swap`` is an involution of the indices (here: ``(i, j) -> (j, i)`` of the path index, or its action on the
    classes).  A pair ``a < b = swap[a]`` becomes ``((x_a + x_b) / sqrt 2, (x_a - x_b) / (i sqrt 2))`` in places
    ``a`` and ``b`` (``sqrt 2 Re x_a`` and ``sqrt 2 Im x_a`` for such ``x``); a fixed index stays.  An operator
    ``A`` that commutes with ``x -> conj(x[swap])`` (a Hermiticity-preserving map, in Liouville terms) is real in
    this basis: ``R A R^dagger``.
    """
    size = swap.shape[0]
    basis = np.zeros((size, size), dtype=config.NpDtype)
    for index in range(size):
        partner = int(swap[index])
        if partner == index:
            basis[index, index] = 1.0
        elif index < partner:
            basis[index, index] = basis[index, partner] = np.sqrt(0.5)
            basis[partner, index] = -1j * np.sqrt(0.5)
            basis[partner, partner] = 1j * np.sqrt(0.5)
    return basis


class StepNetwork(NamedTuple):
    """The fixed tensors of a PT-TEMPO step (:func:`oqupy._pt_tempo_step.step`), in the basis it computes in.

    The line of a lag acts on ``(west class w, north class c)`` as the matrix ``line[(C, W), (w, c)]``
    (:meth:`Influences.line`).  In the coupling's own basis every tensor is diagonal in the classes and complex;
    in the real basis of :func:`conjugation_basis` every tensor is real (see :class:`Influences`).
    """

    start_leg: np.ndarray  # [w]: a time that enters the memory, before any influence
    start_carry: np.ndarray  # [c]: the line of the current time, before any influence
    close: np.ndarray  # close[a, w, c]: from the classes to the path index a, with I0
    to_path: np.ndarray  # to_path[a, b]: the finished site back to the path index of the coupling eigenbasis
    north_weights: np.ndarray  # truncation weights of the north classes (see Influences)
    west_weights: np.ndarray  # ... and of the west classes


REAL_TOLERANCE = 1e-12
"""Largest imaginary part (relative) of a step tensor in the real basis that is taken as rounding."""


def compose_lines(first: Optional[np.ndarray], second: np.ndarray, num_north: int) -> np.ndarray:
    """Two lines on one leg as one matrix ``pair[(c, d, W), (w, c0, d0)]``: ``first[(c, V), (w, c0)]`` (``None``:
    the identity, a class that passes the leg) and then ``second[(d, W), (V, d0)]``, one after the other on the
    leg's west class (:func:`oqupy._pt_tempo_step.step_pair`)."""
    size = second.shape[0]
    num_west = size // num_north
    if first is None:
        before = np.eye(num_north)[:, None, None, :] * np.eye(num_west)[None, :, :, None]
    else:
        before = first.reshape(num_north, num_west, num_west, num_north)
    after = second.reshape(num_north, num_west, num_west, num_north)
    return np.einsum("cVwx,dWVy->cdWwxy", before, after).reshape(num_north * size, size * num_north)


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

    With ``real`` the PT-TEMPO step tensors (:attr:`network`, :meth:`line`) are given in the basis of
    :func:`conjugation_basis` for ``(i, j) -> (j, i)``: every influence satisfies
    ``I[swap c, swap w] = conj(I[c, w])`` (``O-`` changes sign, ``O+`` does not), so every tensor of the build is
    real there, and its SVDs cost real arithmetic (about half the time of complex ones).  The singular values,
    so the truncations, are those of the complex computation (a unitary change of basis on each index).  If
    the classes do not map onto each other under the swap (near-degenerate eigenvalues rounded into one class),
    the tensors stay complex in the coupling's basis.
    """

    def __init__(
        self,
        bath: Bath,
        parameters: TempoParameters,
        unique: bool,
        weighted_classes: bool = False,
        real: bool = False,
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
        # the conjugation bases of the path index, the north and the west classes (None: the tensors are
        # complex, in the coupling's basis: ``real`` not asked for, or the classes do not map onto each other)
        self.real_bases = self._real_bases(bath.dimension, north, west) if real else None
        self.tail_lines: Dict[float, np.ndarray] = {}
        self.pair_lines: Dict[tuple, np.ndarray] = {}  # pair_line's matrices, by the keys of their two lines
        self.extend(0)

    def _real_bases(
        self, dimension: int, north: np.ndarray, west: np.ndarray
    ) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``conjugation_basis`` of the path index, the north and the west classes (None: no such basis)."""
        swap_path = path_swap(dimension)
        swap_north, swap_west = north[swap_path[self.north_rep]], west[swap_path[self.west_rep]]
        if not (
            np.array_equal(north[swap_path], swap_north[north])
            and np.array_equal(west[swap_path], swap_west[west])
        ):
            return None
        return conjugation_basis(swap_path), conjugation_basis(swap_north), conjugation_basis(swap_west)

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
        self.lines = self._line_operators(self.stack)
        self.pair_lines = {}
        self.network = self._network()

    def _line_operators(self, influences: np.ndarray) -> np.ndarray:
        """``I[..., c, w]`` as the step's matrices ``line[..., (C, W), (w, c)]`` (diagonal unless real)."""
        num_north, num_west = influences.shape[-2:]
        if self.real_bases is None:
            diagonal = np.eye(num_north)[:, None, None, :] * np.eye(num_west)[None, :, :, None]
            operator = np.swapaxes(influences, -1, -2)[..., None, None, :, :] * diagonal
        else:
            _, north, west = self.real_bases
            operator = real_tensor(
                np.einsum(
                    "Cc,Ww,...cw,Vw,Dc->...CWVD",
                    north,
                    west,
                    influences,
                    west.conj(),
                    north.conj(),
                    optimize=True,
                )
            )
        size = num_north * num_west
        return np.ascontiguousarray(operator.reshape(*influences.shape[:-2], size, size))

    def _network(self) -> StepNetwork:
        close = np.einsum("wa,ca,a->awc", self.west, self.north, self.self_influence)
        start_leg = np.ones(self.west.shape[0], dtype=config.NpDtype)
        start_carry = np.ones(self.north.shape[0], dtype=config.NpDtype)
        to_path = np.eye(self.west.shape[1], dtype=config.NpDtype)
        if self.real_bases is not None:
            path, north, west = self.real_bases
            start_leg, start_carry = real_tensor(west @ start_leg), real_tensor(north @ start_carry)
            close = real_tensor(
                np.einsum("Aa,awc,Ww,Cc->AWC", path, close, west.conj(), north.conj(), optimize=True)
            )
            to_path = path.conj().T
        return StepNetwork(start_leg, start_carry, close, to_path, self.north_weights, self.west_weights)

    def line(self, dk: int, step: int) -> np.ndarray:
        """The influence of :meth:`get` as the step's matrix ``line[(C, W), (w, c)]`` (:class:`StepNetwork`)."""
        key = self._tail_key(dk, step)
        if key is None:
            return self.lines[dk - 1]
        if key not in self.tail_lines:
            self.tail_lines[key] = self._line_operators(self.get(dk, step))
        return self.tail_lines[key]

    def pair_line(self, dk: int, step: int, passes: bool = False) -> np.ndarray:
        """The lines of times ``step - dk`` and ``step - dk + 1`` on the leg of ``step``, :meth:`line`
        ``(dk, step)`` (the identity if ``passes``: beyond the earlier time's memory) and then ``line(dk - 1,
        step)``, as one matrix (:func:`compose_lines`, for :func:`oqupy._pt_tempo_step.step_pair`).  Composed once
        per pair of line matrices: for a stationary bath the same at every step."""
        key = (None if passes else (dk, self._tail_key(dk, step)), dk - 1, self._tail_key(dk - 1, step))
        if key not in self.pair_lines:
            first = None if passes else self.line(dk, step)
            self.pair_lines[key] = compose_lines(first, self.line(dk - 1, step), self.north.shape[0])
        return self.pair_lines[key]

    def _tail_key(self, dk: int, step: int) -> Optional[float]:
        """The tail's length (rounded) if distance ``dk`` at ``step`` carries the memory tail, else None.

        The oldest kept time stands for itself and every earlier, already summed time: lags
        ``dkmax ... step``, a rectangle of length ``(step + 1 - dkmax) dt``, capped at ``dt + add_correlation_time``.
        """
        dkmax, extra = self.parameters.dkmax, self.parameters.add_correlation_time
        if extra is None or dkmax is None or dk != dkmax:
            return None
        return round(min((step + 1 - dkmax) * self.parameters.dt, self.parameters.dt + extra), 12)

    def get(self, dk: int, step: int) -> np.ndarray:
        """Influence ``I[c, w]`` of distance ``dk`` at ``step``; the oldest kept distance carries the tail if enabled."""
        key = self._tail_key(dk, step)
        if key is None:
            return self.stack[dk - 1]
        if key not in self.tails:
            dt, dkmax = self.parameters.dt, self.parameters.dkmax
            assert dkmax is not None  # a tail needs a memory cut-off (_tail_key)
            eta = self.correlations.tail_coefficient(dt, dkmax, key, subdiv_limit=self.limit)
            check_finite_coefficients(np.atleast_1d(eta), dt, dkmax)
            self.tails[key] = self._matrix(eta)
        return self.tails[key]
