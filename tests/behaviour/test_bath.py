"""Behaviour of ``bath.Bath``: validation, diagonalisation and degeneracy maps."""

import importlib

import numpy as np
import pytest
from conftest import to_numpy


def modules(oq):
    """The ``bath`` and ``bath_correlations`` submodules of the package under test."""
    bath = importlib.import_module(oq.__name__ + ".bath")
    correlations = importlib.import_module(oq.__name__ + ".bath_correlations")
    return bath, correlations


def ohmic(bc):
    return bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=0.5, name="ohmic")


SIGMA_X = np.array([[0, 1], [1, 0]], dtype=complex)
SIGMA_Y = np.array([[0, -1j], [1j, 0]], dtype=complex)
SIGMA_Z = np.array([[1, 0], [0, -1]], dtype=complex)
UP = np.array([[1, 0], [0, 0]], dtype=complex)


def test_half_sigma_z_degeneracy(oq):
    bath_module, bc = modules(oq)
    bath = bath_module.Bath(0.5 * SIGMA_Z, ohmic(bc))
    assert bath.dimension == 2
    np.testing.assert_array_equal(to_numpy(bath.unitary_transform), np.identity(2))
    np.testing.assert_allclose(to_numpy(bath.coupling_operator), 0.5 * SIGMA_Z)
    comm, acomm = to_numpy(bath.coupling_comm), to_numpy(bath.coupling_acomm)
    assert comm.dtype == np.complex128
    np.testing.assert_allclose(comm, [0, 1, -1, 0])
    np.testing.assert_allclose(acomm, [1, 0, 0, -1])
    north, west = to_numpy(bath.north_degeneracy_map), to_numpy(bath.west_degeneracy_map)
    assert north.shape == (4,) and west.shape == (4,)
    np.testing.assert_array_equal(north, [2, 3, 0, 1])
    np.testing.assert_array_equal(west, [1, 2, 0, 1])
    assert bath.north_degeneracy_dimension == 4
    assert bath.west_degeneracy_dimension == 3
    np.testing.assert_array_equal(to_numpy(bath.west_degeneracy_representatives), [2, 0, 1])
    np.testing.assert_array_equal(to_numpy(bath.north_degeneracy_representatives), [2, 3, 0, 1])


def test_up_projector_degeneracy(oq):
    bath_module, bc = modules(oq)
    bath = bath_module.Bath(UP, ohmic(bc))
    np.testing.assert_allclose(to_numpy(bath.coupling_comm), [0, 1, -1, 0])
    np.testing.assert_allclose(to_numpy(bath.coupling_acomm), [2, 1, 1, 0])
    north, west = to_numpy(bath.north_degeneracy_map), to_numpy(bath.west_degeneracy_map)
    np.testing.assert_array_equal(north, [2, 3, 0, 1])
    np.testing.assert_array_equal(west, [1, 2, 0, 1])
    assert len(np.unique(north)) == 4 and len(np.unique(west)) == 3


def test_representatives_are_first_occurrences(oq):
    bath_module, bc = modules(oq)
    operator = np.diag([1.0, 0.0, 1.0 + 1e-14, -2.0])  # levels 0 and 2 degenerate within the rounding
    bath = bath_module.Bath(operator, ohmic(bc))
    for name in ("north", "west"):
        mapping = to_numpy(getattr(bath, f"{name}_degeneracy_map"))
        reps = to_numpy(getattr(bath, f"{name}_degeneracy_representatives"))
        assert mapping.shape == (16,)
        np.testing.assert_array_equal(mapping[reps], np.arange(len(reps)))
        for label, rep in enumerate(reps):
            assert rep == np.flatnonzero(mapping == label)[0]
    # (i, j) = (0, 0), (0, 2), (2, 0), (2, 2) share O^- = 0 and O^+ = 2
    north = to_numpy(bath.north_degeneracy_map)
    assert north[0] == north[2] == north[8] == north[10]
    assert bath.north_degeneracy_dimension == len(set(north.tolist())) < 16


@pytest.mark.parametrize(
    "operator", [SIGMA_X, 0.5 * SIGMA_Y, np.array([[1.0, 0.3 - 0.2j], [0.3 + 0.2j, -0.5]])]
)
def test_non_diagonal_coupling(oq, operator):
    bath_module, bc = modules(oq)
    bath = bath_module.Bath(operator, ohmic(bc))
    unitary = to_numpy(bath.unitary_transform)
    diagonal = to_numpy(bath.coupling_operator)
    np.testing.assert_allclose(unitary @ unitary.conj().T, np.identity(2), atol=1e-12)
    np.testing.assert_allclose(diagonal, np.diag(np.diagonal(diagonal)), atol=0)
    np.testing.assert_allclose(unitary @ diagonal @ unitary.conj().T, operator, atol=1e-12)
    np.testing.assert_allclose(np.sort(np.diagonal(diagonal).real), np.linalg.eigvalsh(operator), atol=1e-12)
    s = np.diagonal(diagonal)
    np.testing.assert_allclose(to_numpy(bath.coupling_comm), (s[:, None] - s[None, :]).ravel(), atol=1e-14)
    np.testing.assert_allclose(to_numpy(bath.coupling_acomm), (s[:, None] + s[None, :]).ravel(), atol=1e-14)


def test_degenerate_non_diagonal_coupling(oq):
    # a degenerate spectrum that eig (unlike eigh) may return with non-orthogonal eigenvectors
    bath_module, bc = modules(oq)
    rotation = np.linalg.qr(np.array([[1, 2, 0], [0, 1, 3], [1, 0, 1]], dtype=complex))[0]
    operator = rotation @ np.diag([1.0, 1.0, -1.0]) @ rotation.conj().T
    bath = bath_module.Bath(operator, ohmic(bc))
    unitary, diagonal = to_numpy(bath.unitary_transform), to_numpy(bath.coupling_operator)
    np.testing.assert_allclose(unitary @ diagonal @ unitary.conj().T, operator, atol=1e-12)
    assert bath.dimension == 3
    assert bath.west_degeneracy_dimension == 3  # O^- in {-2, 0, 2}


def test_properties_are_copies(oq):
    bath_module, bc = modules(oq)
    operator = 0.5 * SIGMA_X
    correlations = ohmic(bc)
    bath = bath_module.Bath(operator, correlations, name="b", description="d")
    operator[0, 1] = 7.0
    np.testing.assert_allclose(
        to_numpy(bath.unitary_transform)
        @ to_numpy(bath.coupling_operator)
        @ to_numpy(bath.unitary_transform).conj().T,
        0.5 * SIGMA_X,
        atol=1e-12,
    )
    for name in (
        "coupling_operator",
        "unitary_transform",
        "coupling_comm",
        "coupling_acomm",
        "north_degeneracy_map",
        "west_degeneracy_map",
        "north_degeneracy_representatives",
        "west_degeneracy_representatives",
    ):
        first = getattr(bath, name)
        assert first is not getattr(bath, name)
    stored = bath.correlations
    assert isinstance(stored, bc.PowerLawSD) and stored is not correlations
    stored.temperature = 3.0
    assert bath.correlations.temperature == 0.5
    correlations.alpha = 1.0
    assert bath.correlations.alpha == 0.1
    assert bath.correlations.eta_function(1.0) == ohmic(bc).eta_function(1.0)
    assert bath.name == "b" and bath.description == "d"
    assert "ohmic" in str(bath) and "dimension" in str(bath)


def test_bad_input(oq):
    bath_module, bc = modules(oq)
    correlations = ohmic(bc)
    with pytest.raises(AssertionError):
        bath_module.Bath("not an operator", correlations)
    with pytest.raises(AssertionError):
        bath_module.Bath(np.array([1.0, 2.0]), correlations)
    with pytest.raises(AssertionError):
        bath_module.Bath(np.ones((2, 3)), correlations)
    with pytest.raises(AssertionError):
        bath_module.Bath(np.ones((2, 2, 2)), correlations)
    with pytest.raises(AssertionError):
        bath_module.Bath(np.array([[0.0, 1.0], [0.0, 0.0]]), correlations)
    with pytest.raises(AssertionError):
        bath_module.Bath(np.array([[1j, 0.0], [0.0, 1.0]]), correlations)
    with pytest.raises(AssertionError):
        bath_module.Bath(0.5 * SIGMA_Z, "correlations")
    with pytest.raises(AssertionError):
        bath_module.Bath(0.5 * SIGMA_Z, correlations, name=3)
