"""PT-TEBD: exact Lindblad evolution of a whole chain, Trotter orders, closed forms, process tensors, bad input."""

import numpy as np
import pytest
import scipy.linalg

UP = np.array([[1.0, 0.0], [0.0, 0.0]])
DOWN = np.array([[0.0, 0.0], [0.0, 1.0]])
SIGMA_MINUS = np.array([[0.0, 0.0], [1.0, 0.0]])  # index 0 is "up"
SX = np.array([[0.0, 1.0], [1.0, 0.0]])
SY = np.array([[0.0, -1j], [1j, 0.0]])
SZ = np.array([[1.0, 0.0], [0.0, -1.0]])


def embed(operators_by_site, dims):
    """Kronecker product over the chain with the identity where no operator is given."""
    result = np.ones((1, 1))
    for site, dim in enumerate(dims):
        result = np.kron(result, operators_by_site.get(site, np.identity(dim)))
    return result


def exact_liouvillian(dims, hamiltonian, jumps):
    """The whole chain's Liouvillian, row-major vectorisation: vec(A rho B) = kron(A, B^T) vec(rho)."""
    one = np.identity(int(np.prod(dims)))
    result = -1j * (np.kron(hamiltonian, one) - np.kron(one, hamiltonian.T))
    for rate, jump in jumps:
        decay = jump.conj().T @ jump
        result += rate * (
            np.kron(jump, jump.conj()) - 0.5 * np.kron(decay, one) - 0.5 * np.kron(one, decay.T)
        )
    return result


def reduced(state, dims, site):
    tensor = state.reshape(tuple(dims) * 2)
    n = len(dims)
    letters = "abcdefghij"
    ins = [letters[k] for k in range(n)] + [letters[k] if k != site else "z" for k in range(n)]
    return np.einsum("".join(ins) + "->" + letters[site] + "z", tensor)


def random_hermitian(rng, dim):
    matrix = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    return 0.5 * (matrix + matrix.conj().T)


def chain_case(oq, n_sites=3, seed=7):
    """A chain with random site and bond Hamiltonians, site dissipation and bond dissipation, both ways."""
    rng = np.random.default_rng(seed)
    dims = [2] * n_sites
    chain = oq.SystemChain(dims)
    hamiltonian = np.zeros((2**n_sites, 2**n_sites), dtype=complex)
    jumps = []
    for site in range(n_sites):
        h = random_hermitian(rng, 2)
        chain.add_site_hamiltonian(site, h)
        hamiltonian += embed({site: h}, dims)
    for site in range(n_sites - 1):
        h_l, h_r = random_hermitian(rng, 2), random_hermitian(rng, 2)
        chain.add_nn_hamiltonian(site, h_l, h_r)
        hamiltonian += embed({site: h_l, site + 1: h_r}, dims)
    chain.add_site_dissipation(0, SIGMA_MINUS, gamma=0.3)
    jumps.append((0.3, embed({0: SIGMA_MINUS}, dims)))
    chain.add_nn_dissipation(n_sites - 2, SX, SIGMA_MINUS.T, gamma=0.2)
    jumps.append((0.2, embed({n_sites - 2: SX, n_sites - 1: SIGMA_MINUS.T}, dims)))
    initial = [UP, 0.5 * (np.identity(2) + SX), DOWN][:n_sites] + [UP] * max(0, n_sites - 3)
    return dims, chain, initial, exact_liouvillian(dims, hamiltonian, jumps)


def exact_states(dims, initial, liouvillian, times):
    rho0 = embed(dict(enumerate(initial)), dims)
    size = rho0.shape[0]
    result = []
    for time in times:
        rho = (scipy.linalg.expm(liouvillian * time) @ rho0.reshape(-1)).reshape(size, size)
        result.append([reduced(rho, dims, site) for site in range(len(dims))])
    return np.array(result)  # (time, site, d, d)


def tebd_states(oq, chain, initial, dt, steps, order, epsrel=1e-12):
    mps = oq.AugmentedMPS(initial)
    parameters = oq.PtTebdParameters(dt=dt, order=order, epsrel=epsrel)
    sites = list(range(len(initial)))
    tebd = oq.PtTebd(mps, chain, [None] * len(initial), parameters, dynamics_sites=sites)
    results = tebd.compute(steps, progress_type="silent")
    states = np.array([np.asarray(results["dynamics"][site].states) for site in sites])
    return np.transpose(states, (1, 0, 2, 3)), results


def test_two_site_chain_is_exact(oq):
    """One bond: no Trotter error, PT-TEBD equals expm of the chain Liouvillian at every step."""
    dims, chain, initial, liouvillian = chain_case(oq, n_sites=2)
    got, results = tebd_states(oq, chain, initial, 0.2, 5, order=1)
    expected = exact_states(dims, initial, liouvillian, 0.2 * np.arange(6))
    np.testing.assert_allclose(results["time"], 0.2 * np.arange(6), atol=1e-14)
    # measured ~1e-14
    np.testing.assert_allclose(got, expected, atol=1e-11)
    np.testing.assert_allclose(results["norm"], 1.0, atol=1e-11)
    assert np.abs(expected[-1] - expected[0]).max() > 0.1


@pytest.mark.parametrize("order", [1, 2])
def test_three_site_chain_converges_at_trotter_order(oq, order):
    """Three sites: the Trotter error falls as dt**order and the states approach the exact ones."""
    dims, chain, initial, liouvillian = chain_case(oq)
    end = 0.8
    expected = exact_states(dims, initial, liouvillian, [end])[0]
    errors = []
    for steps in (8, 16, 32):
        got, _ = tebd_states(oq, chain, initial, end / steps, steps, order)
        errors.append(np.abs(got[-1] - expected).max())
    rates = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    # measured: order 1 rates 0.93, 0.97 (errors 7.5e-3 .. 2.0e-3); order 2 rates 2.000, 2.000 (4.5e-4 .. 2.8e-5)
    np.testing.assert_allclose(rates, order, atol=0.1 if order == 1 else 0.01)
    assert errors[-1] < (3e-3 if order == 1 else 4e-5)


def test_lindblad_decay_closed_form(oq):
    """docs/algorithms.md, "Lindblad decay on a chain (PT-TEBD)": site and bond dissipation without Hamiltonian; site 1 untouched."""
    chain = oq.SystemChain([2, 2, 2])
    chain.add_site_dissipation(0, SIGMA_MINUS)
    chain.add_nn_dissipation(1, np.identity(2), SIGMA_MINUS.T)
    mps = oq.AugmentedMPS([UP, DOWN, DOWN])
    tebd = oq.PtTebd(
        mps, chain, [None] * 3, oq.PtTebdParameters(dt=0.1, order=2, epsrel=1e-7), dynamics_sites=[0, 1, 2]
    )
    results = tebd.compute(10, progress_type="silent")
    e = np.exp(-1.0)
    final = {site: np.asarray(results["dynamics"][site].states[-1]) for site in range(3)}
    np.testing.assert_allclose(final[0], np.diag([e, 1 - e]), atol=1e-12)
    np.testing.assert_allclose(final[1], np.diag([0.0, 1.0]), atol=1e-12)
    np.testing.assert_allclose(final[2], np.diag([1 - e, e]), atol=1e-12)
    assert results["bond_dimensions"].shape == (11, 2)


def test_two_site_density_matrix_and_current_state(oq):
    """The reduced state of a pair of sites (not neighbours) against the exact one; single-site reads agree."""
    dims, chain, initial, liouvillian = chain_case(oq, n_sites=3, seed=3)
    tebd = oq.PtTebd(
        oq.AugmentedMPS(initial),
        chain,
        [None] * 3,
        oq.PtTebdParameters(dt=0.05, epsrel=1e-12),
        dynamics_sites=[(0, 2)],
    )
    results = tebd.compute(4, progress_type="silent")
    rho0 = embed(dict(enumerate(initial)), dims)
    rho = (scipy.linalg.expm(liouvillian * 0.2) @ rho0.reshape(-1)).reshape(8, 8)
    pair = np.einsum("abcdbf->acdf", rho.reshape(2, 2, 2, 2, 2, 2)).reshape(4, 4)
    got = np.asarray(results["dynamics"][(0, 2)].states[-1])
    # measured: 2e-5 (Trotter error at dt = 0.05)
    np.testing.assert_allclose(got, pair, atol=2e-4)
    np.testing.assert_allclose(got, np.asarray(tebd.get_current_density_matrix((0, 2))), atol=1e-14)
    site_0 = np.asarray(tebd.get_current_density_matrix(0))
    np.testing.assert_allclose(np.einsum("abcb->ac", got.reshape(2, 2, 2, 2)), site_0, atol=1e-12)
    assert tebd.step == 4 and tebd.time(4) == pytest.approx(0.2)
    mps = tebd.get_augmented_mps()
    assert len(mps.gammas) == 3 and len(mps.lambdas) == 2


def test_chain_control_flips_a_site(oq):
    """A pre-control at step 2 (sigma_x on site 1) acts before that step's read-out."""
    chain = oq.SystemChain([2, 2])
    flip = np.kron(SX, SX.T)
    control = oq.ChainControl([2, 2])
    control.add_single_site_control(flip, 1, 2)
    tebd = oq.PtTebd(
        oq.AugmentedMPS([UP, UP]),
        chain,
        [None, None],
        oq.PtTebdParameters(dt=0.1),
        chain_control=control,
        dynamics_sites=[1],
    )
    states = np.asarray(tebd.compute(3, progress_type="silent")["dynamics"][1].states)
    np.testing.assert_allclose(states[1], UP, atol=1e-12)
    np.testing.assert_allclose(states[2], DOWN, atol=1e-12)
    assert control.get_single_site_controls(1, post=False) is None
    assert control.get_single_site_controls(2, post=False)[0] is None


def test_single_site_with_process_tensor_equals_compute_dynamics(oq):
    """A decoupled chain: site 0 with a spin-boson process tensor reproduces compute_dynamics of that site."""
    op = oq.operators
    bath = oq.Bath(
        0.5 * op.sigma("z"),
        oq.PowerLawSD(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5),
    )
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-8, dkmax=3)
    pt = oq.PtTempo(bath, 0.0, 0.6, parameters).get_process_tensor(progress_type="silent")
    hamiltonian = 0.5 * op.sigma("x")
    system = oq.System(hamiltonian)
    expected = np.asarray(
        oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt, progress_type="silent").states
    )
    free = np.asarray(
        oq.compute_dynamics(system, op.spin_dm("up"), progress_type="silent", dt=0.1, num_steps=6).states
    )

    chain = oq.SystemChain([2, 2])
    chain.add_site_hamiltonian(0, hamiltonian)
    chain.add_site_hamiltonian(1, 0.7 * op.sigma("z"))
    tebd = oq.PtTebd(
        oq.AugmentedMPS([op.spin_dm("up"), op.spin_dm("x+")]),
        chain,
        [pt, None],
        oq.PtTebdParameters(dt=0.1, epsrel=1e-10),
        dynamics_sites=[0],
    )
    results = tebd.compute(6, progress_type="silent")
    got = np.asarray(results["dynamics"][0].states)
    assert got.shape == expected.shape == (7, 2, 2)
    # measured: 3e-11 (truncation); the bath matters: |with bath - without| ~ 0.1
    np.testing.assert_allclose(got, expected, atol=1e-8)
    assert np.abs(expected[-1] - free[-1]).max() > 0.02
    np.testing.assert_allclose(results["norm"], 1.0, atol=1e-8)
    assert 0 in results["pt_bond_dimensions"]


def test_bad_input(oq):
    op = oq.operators
    with pytest.raises(AssertionError):
        oq.SystemChain([])
    with pytest.raises(AssertionError):
        oq.SystemChain([2, 0])
    chain = oq.SystemChain([2, 3])
    with pytest.raises(AssertionError):
        chain.add_site_hamiltonian(2, op.sigma("x"))
    with pytest.raises(AssertionError):
        chain.add_site_hamiltonian(1, op.sigma("x"))  # wrong dimension
    with pytest.raises(AssertionError):
        chain.add_nn_hamiltonian(1, op.sigma("x"), np.identity(3))  # no bond (1, 2)
    with pytest.raises(AssertionError):
        chain.add_nn_dissipation(0, np.ones((2, 3)), np.identity(3))
    with pytest.raises(AssertionError):
        oq.SystemChain([2]).get_nn_full_liouvillians()
    with pytest.raises(AssertionError):
        oq.ChainControl([2, 2]).add_single_site_control(np.identity(4), 2, 0)
    with pytest.raises(AssertionError):
        oq.ChainControl([2, 2]).add_single_site_control(np.identity(3), 0, 0)
    with pytest.raises(AssertionError):
        oq.ChainControl([2, 2]).add_single_site_control(np.identity(4), 0, 1.0)
    with pytest.raises(ValueError):
        oq.AugmentedMPS([np.ones((1, 1, 1, 1, 1))])
    with pytest.raises(ValueError):
        oq.AugmentedMPS([UP, UP], [np.ones((1, 1, 1))])
    with pytest.raises(AssertionError):
        oq.AugmentedMPS([UP, UP], [np.array([-1.0])])
    with pytest.raises(AssertionError):
        oq.AugmentedMPS([UP, UP], [])
    with pytest.raises(AssertionError):
        oq.PtTebdParameters(dt="a")
    with pytest.raises(AssertionError):
        oq.PtTebdParameters(dt=0.1, epsrel=-1.0)
    mps, params = oq.AugmentedMPS([UP, UP]), oq.PtTebdParameters(dt=0.1)
    chain = oq.SystemChain([2, 2])
    with pytest.raises(AssertionError):
        oq.PtTebd(mps, chain, [None], params)
    with pytest.raises(AssertionError):
        oq.PtTebd(mps, chain, [None, None], params, start_time=0)
    with pytest.raises(AssertionError):
        oq.PtTebd(mps, chain, [None, "pt"], params)
    with pytest.raises(AssertionError):
        oq.PtTebd(mps, chain, [None, None], params).compute("end")
    with pytest.raises(NotImplementedError):
        oq.PtTebd(mps, chain, [None, None], oq.PtTebdParameters(dt=0.1, order=3)).compute(1)
    with pytest.raises(AssertionError):
        oq.mps_mpo.NnGate(0, (np.ones((4, 4, 2)), np.ones((3, 4, 4))))
    with pytest.raises(AssertionError):
        oq.mps_mpo.Gate([1, 0], [np.ones((4, 4, 1)), np.ones((1, 4, 4))])
    with pytest.raises(AssertionError):
        oq.mps_mpo.GateLayer(True, ["gate"])
