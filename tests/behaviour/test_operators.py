"""Operators and superoperators against their definitions (row-major vectorisation)."""

import numpy as np
import pytest

RNG = np.random.default_rng(7)


def random_matrix(d):
    return RNG.normal(size=(d, d)) + 1j * RNG.normal(size=(d, d))


def vec(x):
    return np.asarray(x).reshape(-1)


def test_pauli_algebra(oq):
    op = oq.operators
    x, y, z = (np.asarray(op.sigma(k)) for k in "xyz")
    np.testing.assert_allclose(x @ y, 1j * z, atol=1e-15)
    np.testing.assert_allclose(np.asarray(op.sigma("+")) + np.asarray(op.sigma("-")), x)
    assert np.asarray(op.sigma("z")).dtype == np.complex128
    for name in ["up", "down", "z+", "z-", "x+", "x-", "y+", "y-", "mixed"]:
        rho = np.asarray(op.spin_dm(name))
        assert abs(np.trace(rho) - 1) < 1e-15 and np.allclose(rho, rho.conj().T)
    np.testing.assert_allclose(np.asarray(op.spin_dm("y+")) @ y, np.asarray(op.spin_dm("y+")))
    with pytest.raises(KeyError):
        op.sigma("w")


def test_ladder_operators(oq):
    op = oq.operators
    a, ad = np.asarray(op.destroy(4)), np.asarray(op.create(4))
    np.testing.assert_allclose(np.diag(ad @ a), [0, 1, 2, 3], atol=1e-14)
    comm = a @ ad - ad @ a
    np.testing.assert_allclose(np.diag(comm)[:3], [1, 1, 1], atol=1e-14)
    np.testing.assert_allclose(np.asarray(op.identity(3)), np.eye(3))


@pytest.mark.parametrize("d", [2, 3])
def test_superoperators_match_their_maps(oq, d):
    op = oq.operators
    a, b, rho = random_matrix(d), random_matrix(d), random_matrix(d)
    cases = [
        (op.commutator(a), a @ rho - rho @ a),
        (op.acommutator(a), a @ rho + rho @ a),
        (op.left_super(a), a @ rho),
        (op.right_super(b), rho @ b),
        (op.left_right_super(a, b), a @ rho @ b),
    ]
    for sup, expected in cases:
        np.testing.assert_allclose(np.asarray(sup) @ vec(rho), vec(expected), atol=1e-12)
    prep = np.asarray(op.preparation(rho))
    sigma = random_matrix(d)
    np.testing.assert_allclose(prep @ vec(sigma), np.trace(sigma) * vec(rho), atol=1e-12)


def test_cross_superoperators_act_on_kron_of_vectorisations(oq):
    op = oq.operators
    a1, a2, b1, b2 = (random_matrix(2) for _ in range(4))
    r1, r2 = random_matrix(2), random_matrix(2)
    joint = np.kron(vec(r1), vec(r2))
    expected = np.kron(vec(a1 @ r1 @ b1), vec(a2 @ r2 @ b2))
    np.testing.assert_allclose(
        np.asarray(op.cross_left_right_super(a1, b1, a2, b2)) @ joint, expected, atol=1e-12
    )
    comm = np.kron(vec(a1 @ r1), vec(a2 @ r2)) - np.kron(vec(r1 @ a1), vec(r2 @ a2))
    np.testing.assert_allclose(np.asarray(op.cross_commutator(a1, a2)) @ joint, comm, atol=1e-12)
    acomm = np.kron(vec(a1 @ r1), vec(a2 @ r2)) + np.kron(vec(r1 @ a1), vec(r2 @ a2))
    np.testing.assert_allclose(np.asarray(op.cross_acommutator(a1, a2)) @ joint, acomm, atol=1e-12)
