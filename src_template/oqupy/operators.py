"""Spin operators, ladder operators and superoperators.

Convention (stated once for the package): a d x d density matrix ``rho`` is vectorised row-major,
``vec(rho) = rho.reshape(d * d)``, so ``vec(A @ rho @ B) = kron(A, B.T) @ vec(rho)``.  Two-site
superoperators act on ``kron(vec(rho_1), vec(rho_2))``.

Host code: every function returns a NumPy array in both packages (small constants users compare with NumPy).
Under ``jax.grad`` / ``jit`` / ``vmap`` compose traced Hamiltonians by arithmetic, ``theta * sigma("x")``.
"""

import numpy as np

from oqupy.config import NpDtype

__runs_on__ = "host"

SIGMA = {
    "id": np.array([[1, 0], [0, 1]], dtype=NpDtype),
    "x": np.array([[0, 1], [1, 0]], dtype=NpDtype),
    "y": np.array([[0, -1j], [1j, 0]], dtype=NpDtype),
    "z": np.array([[1, 0], [0, -1]], dtype=NpDtype),
    "+": np.array([[0, 1], [0, 0]], dtype=NpDtype),
    "-": np.array([[0, 0], [1, 0]], dtype=NpDtype),
}

SPIN_DM = {
    "up": np.array([[1, 0], [0, 0]], dtype=NpDtype),
    "down": np.array([[0, 0], [0, 1]], dtype=NpDtype),
    "z+": np.array([[1, 0], [0, 0]], dtype=NpDtype),
    "z-": np.array([[0, 0], [0, 1]], dtype=NpDtype),
    "x+": np.array([[0.5, 0.5], [0.5, 0.5]], dtype=NpDtype),
    "x-": np.array([[0.5, -0.5], [-0.5, 0.5]], dtype=NpDtype),
    "y+": np.array([[0.5, -0.5j], [0.5j, 0.5]], dtype=NpDtype),
    "y-": np.array([[0.5, 0.5j], [-0.5j, 0.5]], dtype=NpDtype),
    "mixed": np.array([[0.5, 0], [0, 0.5]], dtype=NpDtype),
}


def identity(n: int) -> np.ndarray:
    """The n x n identity matrix."""
    return np.identity(n, dtype=NpDtype)


def sigma(name: str) -> np.ndarray:
    """Pauli operator ``name`` in {'id', 'x', 'y', 'z', '+', '-'} (index 0 is spin up)."""
    return np.array(SIGMA[name], dtype=NpDtype)


def spin_dm(name: str) -> np.ndarray:
    """Spin-1/2 density matrix ``name`` in {'up', 'down', 'z+', 'z-', 'x+', 'x-', 'y+', 'y-', 'mixed'}."""
    return np.array(SPIN_DM[name], dtype=NpDtype)


def destroy(n: int) -> np.ndarray:
    """Annihilation operator truncated to n levels: sqrt(k) on the first superdiagonal."""
    op = np.zeros((n, n), dtype=NpDtype)
    rows = np.arange(n - 1)
    op[rows, rows + 1] = np.sqrt(rows + 1.0)
    return op


def create(n: int) -> np.ndarray:
    """Creation operator truncated to n levels, ``destroy(n).T``."""
    return destroy(n).T


def commutator(operator: np.ndarray) -> np.ndarray:
    """Superoperator of ``rho -> [operator, rho]``."""
    one = np.identity(operator.shape[0], dtype=NpDtype)
    return np.kron(operator, one) - np.kron(one, operator.T)


def acommutator(operator: np.ndarray) -> np.ndarray:
    """Superoperator of ``rho -> {operator, rho}``."""
    one = np.identity(operator.shape[0], dtype=NpDtype)
    return np.kron(operator, one) + np.kron(one, operator.T)


def left_super(operator: np.ndarray) -> np.ndarray:
    """Superoperator of ``rho -> operator @ rho``."""
    one = np.identity(operator.shape[0], dtype=NpDtype)
    return np.kron(operator, one)


def right_super(operator: np.ndarray) -> np.ndarray:
    """Superoperator of ``rho -> rho @ operator``."""
    one = np.identity(operator.shape[0], dtype=NpDtype)
    return np.kron(one, operator.T)


def left_right_super(left_operator: np.ndarray, right_operator: np.ndarray) -> np.ndarray:
    """Superoperator of ``rho -> left_operator @ rho @ right_operator``."""
    return np.kron(left_operator, right_operator.T)


def preparation(density_matrix: np.ndarray) -> np.ndarray:
    """Superoperator that discards its input and prepares ``density_matrix``."""
    dim = density_matrix.shape[0]
    return np.outer(density_matrix.reshape(dim * dim), np.identity(dim, dtype=NpDtype).reshape(dim * dim))


def cross_commutator(operator_1: np.ndarray, operator_2: np.ndarray) -> np.ndarray:
    """Two-site superoperator of ``rho -> [operator_1 (x) operator_2, rho]``."""
    return np.kron(left_super(operator_1), left_super(operator_2)) - np.kron(
        right_super(operator_1), right_super(operator_2)
    )


def cross_acommutator(operator_1: np.ndarray, operator_2: np.ndarray) -> np.ndarray:
    """Two-site superoperator of ``rho -> {operator_1 (x) operator_2, rho}``."""
    return np.kron(left_super(operator_1), left_super(operator_2)) + np.kron(
        right_super(operator_1), right_super(operator_2)
    )


def cross_left_right_super(
    operator_1_l: np.ndarray, operator_1_r: np.ndarray, operator_2_l: np.ndarray, operator_2_r: np.ndarray
) -> np.ndarray:
    """Two-site superoperator of ``rho -> (op_1_l (x) op_2_l) rho (op_1_r (x) op_2_r)``."""
    return np.kron(left_right_super(operator_1_l, operator_1_r), left_right_super(operator_2_l, operator_2_r))
