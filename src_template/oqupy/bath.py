r"""The bath: a system coupling operator and the bath auto-correlations.

Convention: the interaction is :math:`H_I = S \otimes F` with a Hermitian system operator
:math:`S = U D U^\dagger`, :math:`D = \mathrm{diag}(s)`.  Influence tensors only depend on, for the
row-major Liouville index :math:`a = (i, j) \mapsto i d + j` in the eigenbasis of :math:`S`,

.. math::

    O^-_a = s_i - s_j \quad (\text{``coupling_comm''}), \qquad O^+_a = s_i + s_j \quad (\text{``coupling_acomm''}).

Degeneracy maps (used with ``unique=True``) assign each Liouville index the class of equal
:math:`(O^-, O^+)` pairs ("north") or equal :math:`O^-` values ("west"), after rounding to
``config.DEFAULT_TOLERANCE_DEGENERACY`` decimals; class labels follow the sorted order of
``np.unique(..., axis=0)`` and each class is represented by its first Liouville index.

As upstream, ``Bath.coupling_operator`` returns the diagonalised :math:`D`, not the operator passed
in; the input is ``unitary_transform @ coupling_operator @ unitary_transform.conj().T``.  All
properties return copies (nothing is marked read-only).  Runs on the host: NumPy in every generated
package.
"""

from copy import copy
from typing import NamedTuple, Optional, Tuple

import numpy as np

from oqupy.base_api import BaseAPIClass
from oqupy.bath_correlations import BaseCorrelations
from oqupy.config import DEFAULT_TOLERANCE_DEGENERACY, NpDtype

__runs_on__ = "host"


class Degeneracy(NamedTuple):
    """Classes of equal rows (see the module docstring)."""

    class_map: np.ndarray  # integer class label of each row (flattened ``return_inverse``)
    representatives: np.ndarray  # for each class label, the index of its first row


def _row_degeneracy(columns: Tuple[np.ndarray, ...]) -> Degeneracy:
    """The classes of equal rows of ``np.stack(columns, axis=1)``.

    Values are rounded to ``DEFAULT_TOLERANCE_DEGENERACY`` decimals (``-0.0`` folded into ``0.0``).
    """
    rows = np.stack([np.real(np.asarray(column)) for column in columns], axis=1)
    rows = np.round(rows, decimals=DEFAULT_TOLERANCE_DEGENERACY) + 0.0
    _, first_index, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return Degeneracy(np.asarray(inverse).reshape(-1), np.asarray(first_index).reshape(-1))


class Bath(BaseAPIClass):
    """A bath coupled to the system through a Hermitian operator, with given auto-correlations.

    Parameters
    ----------
    coupling_operator: np.ndarray
        The (Hermitian, square) system operator :math:`S` to which the bath couples.
    correlations: BaseCorrelations
        The bath auto-correlations (stored as a shallow copy).
    name: str
        An optional name for the bath.
    description: str
        An optional description of the bath.
    """

    def __init__(
        self,
        coupling_operator: np.ndarray,
        correlations: BaseCorrelations,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        try:
            operator = np.array(coupling_operator, dtype=NpDtype)
        except Exception as err:
            raise AssertionError("Coupling operator must be a numpy array (convertible to complex).") from err
        assert operator.ndim == 2, f"Coupling operator must be a matrix (but has shape {operator.shape})."
        assert operator.shape[0] == operator.shape[1], (
            f"Coupling operator must be a square matrix (but has shape {operator.shape})."
        )
        assert operator.shape[0] >= 1, "Coupling operator must not be empty."
        assert np.all(np.isfinite(operator)), "Coupling operator must have finite entries."
        assert np.allclose(operator.conj().T, operator), "Coupling operator must be a hermitian matrix."
        assert isinstance(correlations, BaseCorrelations), (
            "Correlations must be an instance of a subclass of BaseCorrelations."
        )
        dimension = operator.shape[0]

        if np.allclose(np.diag(np.diagonal(operator)), operator):
            eigenvalues = np.real(np.diagonal(operator))
            unitary = np.identity(dimension, dtype=NpDtype)
        else:
            hermitian = 0.5 * (operator + operator.conj().T)
            eigenvalues, eigenvectors = np.linalg.eigh(hermitian)
            unitary = np.asarray(eigenvectors, dtype=NpDtype)
        diagonal = np.diag(eigenvalues).astype(NpDtype)
        assert np.allclose(unitary @ diagonal @ unitary.conj().T, operator), (
            "Diagonalisation of the coupling operator failed (U D U^dagger != operator)."
        )

        self._dimension = int(dimension)
        self._coupling_operator = diagonal
        self._unitary = unitary
        values = np.real(eigenvalues).astype(np.float64)
        self._coupling_comm = (values[:, None] - values[None, :]).reshape(-1).astype(NpDtype)
        self._coupling_acomm = (values[:, None] + values[None, :]).reshape(-1).astype(NpDtype)
        self._north = _row_degeneracy((self._coupling_comm, self._coupling_acomm))
        self._west = _row_degeneracy((self._coupling_comm,))
        self._correlations = copy(correlations)
        super().__init__(name, description)

    def _str_items(self) -> list:
        return [("dimension", self.dimension), ("correlations", self._correlations.name)]

    @property
    def coupling_operator(self) -> np.ndarray:
        """The diagonalised coupling operator :math:`D` (not the operator passed in; a copy)."""
        return self._coupling_operator.copy()

    @property
    def unitary_transform(self) -> np.ndarray:
        """The unitary :math:`U` with ``operator = U @ D @ U.conj().T`` (identity if already diagonal)."""
        return self._unitary.copy()

    @property
    def dimension(self) -> int:
        """Hilbert-space dimension of the coupling operator."""
        return self._dimension

    @property
    def correlations(self) -> BaseCorrelations:
        """The bath auto-correlations (a shallow copy)."""
        return copy(self._correlations)

    @property
    def coupling_comm(self) -> np.ndarray:
        r"""Diagonal of the commutator superoperator of :math:`D`: :math:`O^-_{(i,j)} = s_i - s_j` (length d²)."""
        return self._coupling_comm.copy()

    @property
    def coupling_acomm(self) -> np.ndarray:
        r"""Diagonal of the anticommutator superoperator of :math:`D`: :math:`O^+_{(i,j)} = s_i + s_j` (length d²)."""
        return self._coupling_acomm.copy()

    @property
    def north_degeneracy_map(self) -> np.ndarray:
        r"""Class label of each Liouville index by equal :math:`(O^-, O^+)` (length d², labels 0, 1, ...)."""
        return self._north.class_map.copy()

    @property
    def west_degeneracy_map(self) -> np.ndarray:
        r"""Class label of each Liouville index by equal :math:`O^-` (length d², labels 0, 1, ...)."""
        return self._west.class_map.copy()

    @property
    def north_degeneracy_representatives(self) -> np.ndarray:
        """First Liouville index of each north class (``north_degeneracy_map[rep[c]] == c``)."""
        return self._north.representatives.copy()

    @property
    def west_degeneracy_representatives(self) -> np.ndarray:
        """First Liouville index of each west class (``west_degeneracy_map[rep[c]] == c``)."""
        return self._west.representatives.copy()

    @property
    def north_degeneracy_dimension(self) -> int:
        """Number of north classes (the reduced north-south leg dimension)."""
        return int(self._north.representatives.size)

    @property
    def west_degeneracy_dimension(self) -> int:
        """Number of west classes (the reduced west-east leg dimension)."""
        return int(self._west.representatives.size)
