"""``SystemChain``: a one-dimensional chain of systems with nearest-neighbour terms, for PT-TEBD.

Site ``n`` has Hilbert space dimension ``d_n``; its density matrix is vectorised row-major (see
:mod:`oqupy.system`), and two neighbouring sites ``(n, n+1)`` are vectorised as the row-major vector of the
tensor ``rho[a, a', b, b']`` with ``a, a'`` on site ``n``, i.e. the Kronecker product of the two site vectors:
a two-site superoperator is ``kron(S_n, S_{n+1})`` for a product ``S_n (x) S_{n+1}``
(:func:`oqupy.operators.cross_left_right_super`).  Runs on the host: NumPy in every generated package.
"""

from typing import Any, List, Optional

import numpy as np

from oqupy import operators
from oqupy._system_base import build_liouvillian, check_matrix
from oqupy._validation import as_float
from oqupy.base_api import BaseAPIClass
from oqupy.config import NpDtype

__runs_on__ = "host"


def check_hs_dims(hilbert_space_dimensions: Any) -> np.ndarray:
    """The Hilbert space dimensions of a chain as a read-only integer vector (AssertionError if invalid)."""
    try:
        dims = np.array(hilbert_space_dimensions, dtype=int)
    except Exception as err:
        raise AssertionError("'hilbert_space_dimensions' must be a list of positive integers.") from err
    assert dims.ndim == 1 and dims.size >= 1, "'hilbert_space_dimensions' must be a non-empty list."
    assert np.all(dims > 0), "Every Hilbert space dimension must be positive."
    dims.setflags(write=False)
    return dims


def check_site(site: Any, number: int) -> int:
    """``site`` as an index into ``number`` items (AssertionError unless a Python int in range)."""
    assert isinstance(site, int) and not isinstance(site, bool), "A site index must be an int."
    assert 0 <= site < number, f"Site index {site} out of range 0..{number - 1}."
    return site


class SystemChain(BaseAPIClass):
    r"""A chain of systems with on-site and nearest-neighbour Liouvillians (hbar = 1).

    The chain's generator is ``L = sum_n L_n + sum_n L_{n,n+1}``: site terms ``L_n`` (Hamiltonians,
    Lindblad dissipators or any superoperator, accumulated by the ``add_site_*`` methods) and bond terms
    ``L_{n,n+1}`` on the two-site space (``add_nn_*``).  All terms accumulate.

    Parameters
    ----------
    hilbert_space_dimensions: list(int)
        Hilbert space dimension of every site (at least one site).
    name, description: str
        Optional name and description.
    """

    def __init__(
        self,
        hilbert_space_dimensions: List[int],
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        self._hs_dims = check_hs_dims(hilbert_space_dimensions)
        self._site_liouvillians = [np.zeros((d**2, d**2), dtype=NpDtype) for d in self._hs_dims]
        self._nn_liouvillians = [
            np.zeros((dl**2 * dr**2, dl**2 * dr**2), dtype=NpDtype)
            for dl, dr in zip(self._hs_dims[:-1], self._hs_dims[1:])
        ]

    def __len__(self) -> int:
        return len(self._hs_dims)

    def _str_items(self) -> list:
        return [("hs_dims", list(self._hs_dims))]

    @property
    def hs_dims(self) -> np.ndarray:
        """Hilbert space dimension of every site."""
        return self._hs_dims

    @property
    def site_liouvillians(self) -> List[np.ndarray]:
        """The accumulated single-site Liouvillians (``d_n^2 x d_n^2``)."""
        return [liouvillian.copy() for liouvillian in self._site_liouvillians]

    @property
    def nn_liouvillians(self) -> List[np.ndarray]:
        """The accumulated bond Liouvillians (``d_n^2 d_{n+1}^2`` square), one per bond."""
        return [liouvillian.copy() for liouvillian in self._nn_liouvillians]

    def _site_operator(self, site: Any, operator: Any, name: str) -> np.ndarray:
        index = check_site(site, len(self))
        dim = int(self._hs_dims[index])
        return check_matrix(operator, name, (dim, dim))

    def _bond_operators(self, site: Any, operator_l: Any, operator_r: Any, name: str) -> tuple:
        index = check_site(site, len(self) - 1)
        dim_l, dim_r = int(self._hs_dims[index]), int(self._hs_dims[index + 1])
        return check_matrix(operator_l, f"{name}_l", (dim_l, dim_l)), check_matrix(
            operator_r, f"{name}_r", (dim_r, dim_r)
        )

    def add_site_hamiltonian(self, site: int, hamiltonian: np.ndarray) -> None:
        """Add ``-i [H, rho_n]`` to site ``site``."""
        operator = self._site_operator(site, hamiltonian, "hamiltonian")
        self._site_liouvillians[site] = self._site_liouvillians[site] + build_liouvillian(operator, [], [])

    def add_site_liouvillian(self, site: int, liouvillian: np.ndarray) -> None:
        """Add a superoperator (``d_n^2 x d_n^2``) to site ``site``."""
        index = check_site(site, len(self))
        dim2 = int(self._hs_dims[index]) ** 2
        self._site_liouvillians[index] = self._site_liouvillians[index] + check_matrix(
            liouvillian, "liouvillian", (dim2, dim2)
        )

    def add_site_dissipation(self, site: int, lindblad_operator: np.ndarray, gamma: float = 1.0) -> None:
        """Add ``gamma (A rho A^dagger - {A^dagger A, rho} / 2)`` to site ``site``."""
        operator = self._site_operator(site, lindblad_operator, "lindblad_operator")
        term = build_liouvillian(np.zeros_like(operator), [_check_rate(gamma)], [operator])
        self._site_liouvillians[site] = self._site_liouvillians[site] + term

    def add_nn_hamiltonian(self, site: int, hamiltonian_l: np.ndarray, hamiltonian_r: np.ndarray) -> None:
        """Add ``-i [H_l (x) H_r, rho_{n,n+1}]`` to the bond ``(site, site + 1)``."""
        op_l, op_r = self._bond_operators(site, hamiltonian_l, hamiltonian_r, "hamiltonian")
        self._nn_liouvillians[site] = self._nn_liouvillians[site] - 1j * operators.cross_commutator(
            op_l, op_r
        )

    def add_nn_liouvillian(self, site: int, liouvillian_l_r: np.ndarray) -> None:
        """Add a two-site superoperator to the bond ``(site, site + 1)``."""
        index = check_site(site, len(self) - 1)
        size = self._nn_liouvillians[index].shape
        self._nn_liouvillians[index] = self._nn_liouvillians[index] + check_matrix(
            liouvillian_l_r, "liouvillian_l_r", size
        )

    def add_nn_dissipation(
        self, site: int, lindblad_operator_l: np.ndarray, lindblad_operator_r: np.ndarray, gamma: float = 1.0
    ) -> None:
        """Add the dissipator of the jump operator ``A = A_l (x) A_r`` (rate ``gamma``) to the bond ``(site, site + 1)``."""
        op_l, op_r = self._bond_operators(site, lindblad_operator_l, lindblad_operator_r, "lindblad_operator")
        rate = _check_rate(gamma)
        dag_l, dag_r = op_l.conj().T, op_r.conj().T
        jump = operators.cross_left_right_super(op_l, dag_l, op_r, dag_r)
        decay = operators.cross_acommutator(dag_l @ op_l, dag_r @ op_r)
        self._nn_liouvillians[site] = self._nn_liouvillians[site] + rate * (jump - 0.5 * decay)

    def get_nn_full_liouvillians(self) -> List[np.ndarray]:
        """One Liouvillian per bond with the site terms folded in.

        A site shared by two bonds contributes half of its Liouvillian to each; the two end sites contribute
        fully to their only bond, so the bond Liouvillians sum to the chain's generator.
        """
        assert len(self) >= 2, "A chain needs at least two sites to have nearest-neighbour Liouvillians."
        result = []
        last = len(self) - 2
        for bond, nn_liouvillian in enumerate(self._nn_liouvillians):
            weight_l = 1.0 if bond == 0 else 0.5
            weight_r = 1.0 if bond == last else 0.5
            one_l = np.identity(int(self._hs_dims[bond]) ** 2, dtype=NpDtype)
            one_r = np.identity(int(self._hs_dims[bond + 1]) ** 2, dtype=NpDtype)
            result.append(
                weight_l * np.kron(self._site_liouvillians[bond], one_r)
                + weight_r * np.kron(one_l, self._site_liouvillians[bond + 1])
                + nn_liouvillian
            )
        return result


def _check_rate(gamma: Any) -> float:
    """A rate as a float (AssertionError if it is not a real number)."""
    return as_float(gamma, "gamma", AssertionError, "Argument 'gamma' must be a real number.")
