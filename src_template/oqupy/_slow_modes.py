r"""The slow modes of a transfer map, and its powers as an exact head followed by a modal tail.

A step's transfer map ``T`` (dimension ``M``, a few hundred) has a handful of slow modes (the steady state, the
system's slowest relaxations and oscillations) and a continuum of fast ones.  After ``K`` exact steps every
state lies in the slow modes' invariant subspace to rounding (the fast ones have decayed below ``SEAM_TOLERANCE``),
so ``T^k x`` is computed exactly (step by step) for ``k <= K`` and from the slow modes' eigendecomposition for
``k > K``.  The slow subspace is found from the powers of two random probes: once the last ``_WINDOW`` powers
of each span fewer than ``_WINDOW`` directions (singular values below ``RANK_TOLERANCE`` of the largest), they
span the subspace; its Rayleigh quotient ``H = Q^H T Q`` (checked invariant) is diagonalised.  Cost: ``K``
products of ``T`` with the block of both probes (``T`` is applied as a map, ``Apply``: the structured step of
:mod:`oqupy._transfer_map`, a quarter of a dense product's work for one bath) and small SVDs (singular values
only, until the rank has dropped), against ``O(M^3)`` for a dense eigendecomposition (``dense_modes``, the
fallback and ``method='dense'``), which it also beats on accuracy at long lags (it never raises an
ill-conditioned ``V^-1`` to a power of ``10^4``).

Host code in both packages (NumPy/SciPy on concrete maps).
"""

import warnings
from typing import Callable, List, NamedTuple, Optional, Tuple

import numpy as np
import scipy.linalg

from oqupy import config

__runs_on__ = "host"

__all__ = ["Apply", "SlowModes", "advance", "dense_modes", "slow_modes", "walk"]

Apply = Callable[[np.ndarray], np.ndarray]
"""``x -> T x`` on columns (``(M,)`` or ``(M, P)``): a dense matrix's product or a structured step."""

RANK_TOLERANCE = 1e-14
"""Singular values of the probes' window below this fraction of the largest are fast-mode remnants."""

INVARIANCE_TOLERANCE = 1e-12
"""Largest ``||T Q - Q H|| / max(1, ||H||)`` accepted for the slow subspace ``Q``."""

SEAM_TOLERANCE = 1e-12
"""A state is handed to the slow modes once its part outside them is below this fraction of its start's norm."""

CONDITION_LIMIT = 1e8
"""Largest condition number of the slow modes' eigenvectors (within the subspace) accepted."""

_PROBES = 2  # random probes: a steady state of multiplicity two is seen
_WINDOW = 32  # powers of each probe kept; the slow subspace may have up to _WINDOW modes
_EVERY = 16  # steps between rank checks
_SEED = 20261206


class SlowModes(NamedTuple):
    """Eigenvalues and right eigenvectors (columns) of ``T``'s slow modes, the coefficients of a state in them
    (``coordinates``), an orthonormal basis of their span (``None`` for a dense decomposition: every mode) and the
    number of exact steps ``head`` after which states are handed to them."""

    values: np.ndarray
    vectors: np.ndarray
    coordinates: Callable[[np.ndarray], np.ndarray]
    basis: Optional[np.ndarray]
    head: int


def dense_modes(matrix: np.ndarray) -> Tuple[SlowModes, SlowModes]:
    """Every mode of ``matrix`` (dense eigendecomposition ``T = V diag(lambda) V^-1``), for ``T`` and ``T^T``."""
    values, vectors = scipy.linalg.eig(matrix, check_finite=False)
    lu = scipy.linalg.lu_factor(vectors, check_finite=False)
    left = scipy.linalg.lu_solve(lu, np.identity(len(values), dtype=config.NpDtype), trans=1)  # V^-T
    right_modes = SlowModes(values, vectors, lambda x: scipy.linalg.lu_solve(lu, x), None, 0)
    left_modes = SlowModes(values, left, lambda x: vectors.T @ x, None, 0)
    return right_modes, left_modes


def slow_modes(apply: Apply, size: int, limit: int) -> Optional[SlowModes]:
    """The slow modes of ``T`` (``apply``: ``T`` on columns of length ``size``), or ``None`` where no slow
    subspace of at most ``_WINDOW`` modes separates from the rest within ``limit`` steps (then use
    :func:`dense_modes`).  The probes advance together, one product of ``T`` with a block per step."""
    rng = np.random.default_rng(_SEED)
    probes = rng.standard_normal((size, _PROBES)) + 1j * rng.standard_normal((size, _PROBES))
    window: List[np.ndarray] = []
    for step in range(1, limit + 1):
        probes = apply(probes)
        window = (window + [probes])[-_WINDOW:]
        if step < _WINDOW or step % _EVERY:
            continue
        powers = np.concatenate(window, axis=1)
        # the singular values alone (half the cost) until the rank has dropped, then the singular vectors too
        if _rank(np.linalg.svd(powers, compute_uv=False)) > _WINDOW:
            continue
        basis, singular, _ = np.linalg.svd(powers, full_matrices=False)
        rank = _rank(singular)
        if rank > _WINDOW:
            continue
        basis = basis[:, :rank]
        image = apply(basis)
        reduced = basis.conj().T @ image
        scale = max(1.0, float(np.linalg.norm(reduced)))
        if float(np.linalg.norm(image - basis @ reduced)) > INVARIANCE_TOLERANCE * scale:
            continue
        return _subspace_modes(basis, reduced, step)
    return None


def _rank(singular: np.ndarray) -> int:
    """Singular values above ``RANK_TOLERANCE`` of the largest."""
    return int(np.sum(singular > RANK_TOLERANCE * singular[0]))


def _subspace_modes(basis: np.ndarray, reduced: np.ndarray, head: int) -> Optional[SlowModes]:
    """The modes of ``T`` within the invariant subspace ``basis`` (``T basis = basis reduced``), or ``None`` if
    their eigenvectors are ill-conditioned or one grows (``|lambda| > 1``: not a process tensor's)."""
    values, within = np.linalg.eig(reduced)
    if np.linalg.cond(within) > CONDITION_LIMIT or np.max(np.abs(values)) > 1.0 + 1e-9:
        return None
    lu = scipy.linalg.lu_factor(within, check_finite=False)
    projector = basis.conj().T

    def coordinates(x: np.ndarray) -> np.ndarray:
        return scipy.linalg.lu_solve(lu, projector @ x, check_finite=False)

    return SlowModes(values, basis @ within, coordinates, basis, head)


def _settled(modes: SlowModes, x: np.ndarray, scale: float) -> bool:
    """``x`` lies in the slow modes' span to ``SEAM_TOLERANCE`` of ``scale``."""
    if modes.basis is None:
        return True
    outside = x - modes.basis @ (modes.basis.conj().T @ x)
    return float(np.linalg.norm(outside)) <= SEAM_TOLERANCE * scale


def walk(
    apply: Apply, modes: Optional[SlowModes], start: np.ndarray, top: float, row: Optional[np.ndarray]
) -> Tuple[List[np.ndarray], int, Optional[np.ndarray]]:
    """``T^k start`` (or ``row . T^k start``) for ``k = 0 .. k_end``, step by step, where ``k_end`` is ``top`` or
    the first ``k >= modes.head`` at which ``start``'s powers have settled into the slow modes; then also their
    coefficients there (``None`` if ``top`` came first).  ``UserWarning`` if they do not settle."""
    scale = float(np.linalg.norm(start))
    limit = 4 * (modes.head if modes is not None else 0) + 64
    records: List[np.ndarray] = []
    x = start
    k = 0
    while True:
        records.append(x if row is None else row @ x)
        if k >= top:
            return records, k, None
        if modes is not None and k >= modes.head:
            if _settled(modes, x, scale) or k >= limit:
                if k >= limit:
                    warnings.warn(
                        "A state did not settle into the transfer map's slow modes: use method='dense' or "
                        "'propagate'.",
                        UserWarning,
                        stacklevel=4,
                    )
                return records, k, modes.coordinates(x)
        x = apply(x)
        k += 1


def advance(
    apply: Apply,
    modes: Optional[SlowModes],
    columns: np.ndarray,
    gaps: np.ndarray,
    row: Optional[np.ndarray] = None,
) -> np.ndarray:
    """``T^g columns`` for every ``g`` in ``gaps`` (shape ``(M, P, G)``), or their read-out ``row . T^g columns``
    (``(P, G)``): exact steps up to the seam, the slow modes beyond (``modes=None``: exact steps throughout)."""
    unique, inverse = np.unique(gaps, return_inverse=True)
    records, seam, coefficients = walk(apply, modes, columns, float(unique[-1]), row)
    exact = unique[unique <= seam]
    parts = [np.stack([records[g] for g in exact], axis=-1)] if len(exact) else []
    if coefficients is not None and len(exact) < len(unique):
        assert modes is not None
        powers = np.power(modes.values[:, None], (unique[len(exact) :] - seam)[None, :])  # (m, G')
        if row is None:
            weighted = coefficients[:, :, None] * powers[:, None, :]  # (m, P, G')
            parts.append(np.tensordot(modes.vectors, weighted, axes=1))
        else:
            parts.append(((row @ modes.vectors)[:, None] * coefficients).T @ powers)
    return np.concatenate(parts, axis=-1)[..., inverse]
