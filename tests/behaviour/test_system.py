"""Behaviour of ``system``: Liouvillian convention, propagators, stacks and input validation."""

import importlib

import numpy as np
import pytest
import scipy.linalg

SIGMA_X = np.array([[0, 1], [1, 0]], dtype=complex)
SIGMA_Y = np.array([[0, -1j], [1j, 0]], dtype=complex)
SIGMA_Z = np.array([[1, 0], [0, -1]], dtype=complex)
SIGMA_MINUS = np.array([[0, 0], [1, 0]], dtype=complex)  # lowers index 0 (up) to index 1 (down)


@pytest.fixture
def sy(oq):
    return importlib.import_module(oq.__name__ + ".system")


def random_matrix(rng, dim):
    return rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))


def random_hermitian(rng, dim):
    m = random_matrix(rng, dim)
    return 0.5 * (m + m.conj().T)


def lindblad_rhs(h, gammas, ops, rho):
    out = -1j * (h @ rho - rho @ h)
    for gamma, a in zip(gammas, ops):
        ad = a.conj().T
        out = out + gamma * (a @ rho @ ad - 0.5 * (ad @ a @ rho + rho @ ad @ a))
    return out


def evolve(propagators, rho, num_steps):
    """Apply prop_2 @ prop_1 of steps 0..num_steps-1 to vec(rho) (no bath)."""
    dim = rho.shape[0]
    vec = rho.reshape(dim * dim)
    for step in range(num_steps):
        prop_1, prop_2 = propagators(step)
        vec = np.asarray(prop_2) @ (np.asarray(prop_1) @ vec)
    return vec.reshape(dim, dim)


def td_example(sy):
    """A driven, dissipative two-level system with time-dependent rate and jump operator."""

    def h(t):
        return np.cos(2.0 * t) * SIGMA_X + 0.5 * t * SIGMA_Z

    def gamma(t):
        return 0.3 + 0.2 * np.sin(t)

    def op(t):
        return SIGMA_MINUS + 0.3 * np.exp(1j * t) * SIGMA_Z

    return sy.TimeDependentSystem(h, gammas=[gamma], lindblad_operators=[op]), h, gamma, op


# -- Liouvillian convention -------------------------------------------------------


def test_liouvillian_vec_convention(sy):
    rng = np.random.default_rng(7)
    dim = 3
    h = random_hermitian(rng, dim)
    ops = [random_matrix(rng, dim), random_matrix(rng, dim)]
    gammas = [0.7, 0.2]
    rho = random_matrix(rng, dim)
    system = sy.System(h, gammas=gammas, lindblad_operators=ops)
    liouvillian = np.asarray(system.liouvillian())
    assert liouvillian.shape == (dim * dim, dim * dim)
    assert liouvillian.dtype == np.complex128
    expected = lindblad_rhs(h, gammas, ops, rho).reshape(dim * dim)
    np.testing.assert_allclose(liouvillian @ rho.reshape(dim * dim), expected, atol=1e-12)


def test_time_dependent_liouvillian_vec_convention(sy):
    system, h, gamma, op = td_example(sy)
    rho = random_matrix(np.random.default_rng(3), 2)
    for t in (0.0, 0.37, 2.5):
        expected = lindblad_rhs(h(t), [gamma(t)], [op(t)], rho).reshape(4)
        np.testing.assert_allclose(np.asarray(system.liouvillian(t)) @ rho.reshape(4), expected, atol=1e-12)


# -- System propagators ---------------------------------------------------------------


def test_zero_coupling_unitary_evolution(sy):
    rng = np.random.default_rng(11)
    h = random_hermitian(rng, 3)
    psi = rng.normal(size=3) + 1j * rng.normal(size=3)
    psi /= np.linalg.norm(psi)
    rho = np.outer(psi, psi.conj())
    dt, num_steps = 0.05, 40
    system = sy.System(h)
    u = scipy.linalg.expm(-1j * h * dt * num_steps)
    result = evolve(system.get_propagators(dt), rho, num_steps)
    np.testing.assert_allclose(result, u @ rho @ u.conj().T, atol=1e-11)


def test_unitary_propagators(sy):
    h = 0.8 * SIGMA_X + 0.3 * SIGMA_Z
    system = sy.System(h)
    prop_1, prop_2 = system.get_unitary_propagators(0.2)(5)
    np.testing.assert_allclose(prop_1, scipy.linalg.expm(-1j * h * 0.1), atol=1e-13)
    np.testing.assert_allclose(prop_2, prop_1, atol=0)
    # imaginary time step dt = -i * dbeta (GibbsTEMPO)
    prop_1, _ = system.get_unitary_propagators(-1j * 0.4)(0)
    np.testing.assert_allclose(prop_1, scipy.linalg.expm(-h * 0.2), atol=1e-13)


def test_half_step_convention(sy):
    system = sy.System(0.5 * SIGMA_X, gammas=[0.1], lindblad_operators=[SIGMA_MINUS])
    prop_1, prop_2 = system.get_propagators(0.3, start_time=1.0)(7)
    expected = scipy.linalg.expm(np.asarray(system.liouvillian()) * 0.15)
    np.testing.assert_allclose(prop_1, expected, atol=1e-13)
    np.testing.assert_allclose(prop_2, expected, atol=1e-13)


@pytest.mark.parametrize("omega", [0.0, 1.3])
def test_lindblad_decay(sy, oq, omega):
    gamma = 0.4
    system = sy.System(0.5 * omega * SIGMA_Z, gammas=[gamma], lindblad_operators=[SIGMA_MINUS])
    dt, num_steps = 0.1, 25
    t = dt * num_steps
    propagators = system.get_propagators(dt)
    operators = importlib.import_module(oq.__name__ + ".operators")
    excited = evolve(propagators, np.asarray(operators.spin_dm("up")), num_steps)
    np.testing.assert_allclose(excited[0, 0].real, np.exp(-gamma * t), atol=1e-12)
    np.testing.assert_allclose(excited[1, 1].real, 1.0 - np.exp(-gamma * t), atol=1e-12)
    superposition = evolve(propagators, np.asarray(operators.spin_dm("x+")), num_steps)
    np.testing.assert_allclose(superposition[0, 0].real, 0.5 * np.exp(-gamma * t), atol=1e-12)
    np.testing.assert_allclose(
        superposition[0, 1], 0.5 * np.exp(-1j * omega * t - 0.5 * gamma * t), atol=1e-12
    )
    np.testing.assert_allclose(np.trace(superposition), 1.0, atol=1e-12)


# -- time-dependent propagators --------------------------------------------------------


def test_midpoint_samples(sy):
    system, *_ = td_example(sy)
    dt, start = 0.2, 0.5
    prop_1, prop_2 = system.get_propagators(dt, start_time=start)(3)
    t = start + 3 * dt
    np.testing.assert_allclose(prop_1, scipy.linalg.expm(system.liouvillian(t + dt / 4) * dt / 2), atol=1e-13)
    np.testing.assert_allclose(
        prop_2, scipy.linalg.expm(system.liouvillian(t + 3 * dt / 4) * dt / 2), atol=1e-13
    )


def test_quad_vec_integrates_liouvillian(sy):
    # L(t) = -i * cos(t) * commutator(sigma_x): the half-step integrals are known exactly
    system = sy.TimeDependentSystem(lambda t: np.cos(t) * SIGMA_X)
    dt, start = 0.4, 0.3
    prop_1, prop_2 = system.get_propagators(dt, start_time=start, subdiv_limit=64, epsrel=1e-12)(2)
    t = start + 2 * dt
    liouvillian_x = np.asarray(sy.System(SIGMA_X).liouvillian())  # -i commutator(sigma_x)
    first = (np.sin(t + dt / 2) - np.sin(t)) * liouvillian_x
    second = (np.sin(t + dt) - np.sin(t + dt / 2)) * liouvillian_x
    np.testing.assert_allclose(prop_1, scipy.linalg.expm(first), atol=1e-11)
    np.testing.assert_allclose(prop_2, scipy.linalg.expm(second), atol=1e-11)


def test_midpoint_and_quad_vec_converge(sy):
    system, *_ = td_example(sy)
    rho = np.array([[0.7, 0.2 - 0.1j], [0.2 + 0.1j, 0.3]])
    total_time = 1.2
    errors = []
    for num_steps in (6, 12, 24):
        dt = total_time / num_steps
        midpoint = evolve(system.get_propagators(dt, 0.1), rho, num_steps)
        integrated = evolve(system.get_propagators(dt, 0.1, subdiv_limit=64, epsrel=1e-10), rho, num_steps)
        errors.append(np.max(np.abs(midpoint - integrated)))
    assert errors[0] < 1e-2
    assert errors[1] < errors[0] / 3.0
    assert errors[2] < errors[1] / 3.0


@pytest.mark.parametrize("subdiv_limit", [None, 32])
def test_constant_time_dependent_system_equals_system(sy, subdiv_limit):
    rng = np.random.default_rng(5)
    h = random_hermitian(rng, 2)
    a = random_matrix(rng, 2)
    system = sy.System(h, gammas=[0.3], lindblad_operators=[a])
    td_system = sy.TimeDependentSystem(lambda t: h, gammas=[lambda t: 0.3], lindblad_operators=[lambda t: a])
    assert td_system.dimension == system.dimension == 2
    np.testing.assert_allclose(td_system.liouvillian(1.7), system.liouvillian(), atol=1e-14)
    propagators = system.get_propagators(0.1)
    td_propagators = td_system.get_propagators(0.1, 0.0, subdiv_limit)
    for step in (0, 4):
        for prop, td_prop in zip(propagators(step), td_propagators(step)):
            np.testing.assert_allclose(td_prop, prop, atol=1e-12)


# -- propagator stacks ---------------------------------------------------------------------


def check_stack(system, dt, start_time, num_steps, subdiv_limit=None, epsrel=None):
    kwargs = {} if epsrel is None else {"epsrel": epsrel}
    prop_1, prop_2 = system.get_propagator_stack(dt, start_time, num_steps, subdiv_limit, **kwargs)
    dim = system.dimension**2
    for stack in (prop_1, prop_2):
        assert isinstance(stack, np.ndarray)
        assert stack.shape == (num_steps, dim, dim)
        assert stack.dtype == np.complex128
    propagators = system.get_propagators(dt, start_time, subdiv_limit, **kwargs)
    for step in range(num_steps):
        first, second = propagators(step)
        np.testing.assert_allclose(prop_1[step], first, atol=1e-13)
        np.testing.assert_allclose(prop_2[step], second, atol=1e-13)


def test_stack_system(sy):
    system = sy.System(0.5 * SIGMA_X + SIGMA_Z, gammas=[0.2], lindblad_operators=[SIGMA_MINUS])
    check_stack(system, 0.1, 0.3, 5)
    prop_1, prop_2 = system.get_propagator_stack(0.1, 0.0, 3)
    prop_1[0, 0, 0] = 42.0  # fresh, independent, writable arrays
    assert prop_2[0, 0, 0] != 42.0 and prop_1[1, 0, 0] != 42.0


def test_stack_time_dependent_midpoint(sy):
    system, *_ = td_example(sy)
    check_stack(system, 0.15, 0.2, 7)


def test_stack_time_dependent_quad_vec(sy):
    system, *_ = td_example(sy)
    check_stack(system, 0.15, 0.2, 3, subdiv_limit=16, epsrel=1e-9)


def test_stack_base_system_default(sy):
    class Constant(sy.BaseSystem):
        def get_propagators(self, dt, start_time=0.0, subdiv_limit=None, epsrel=1e-8):
            return lambda step: (np.eye(4) * (step + 1), np.eye(4) * (step + 2))

    prop_1, prop_2 = Constant(2).get_propagator_stack(0.1, 0.0, 3)
    np.testing.assert_allclose(prop_1[2], 3 * np.eye(4))
    np.testing.assert_allclose(prop_2[0], 2 * np.eye(4))


@pytest.mark.parametrize("which", ["system", "td"])
def test_stack_empty(sy, which):
    system = sy.System(SIGMA_Z) if which == "system" else td_example(sy)[0]
    prop_1, prop_2 = system.get_propagator_stack(0.1, 0.0, 0)
    assert prop_1.shape == prop_2.shape == (0, 4, 4)


@pytest.mark.parametrize("num_steps, error", [(-1, ValueError), (2.5, ValueError), ("x", TypeError)])
def test_stack_bad_num_steps(sy, num_steps, error):
    with pytest.raises(error):
        sy.System(SIGMA_Z).get_propagator_stack(0.1, 0.0, num_steps)


# -- properties and copies -----------------------------------------------------------------------


def test_system_properties_are_copies(sy):
    h = SIGMA_X.copy()
    a = SIGMA_MINUS.copy()
    system = sy.System(h, gammas=[0.5], lindblad_operators=[a], name="qubit", description="a test")
    h[0, 1] = 7.0
    a[1, 0] = 7.0
    np.testing.assert_allclose(system.hamiltonian, SIGMA_X)
    np.testing.assert_allclose(system.lindblad_operators[0], SIGMA_MINUS)
    system.hamiltonian[0, 0] = 3.0
    system.lindblad_operators[0][0, 0] = 3.0
    system.gammas.append(1.0)
    system.liouvillian()[0, 0] = 3.0
    np.testing.assert_allclose(system.hamiltonian, SIGMA_X)
    np.testing.assert_allclose(system.lindblad_operators[0], SIGMA_MINUS)
    assert system.gammas == [0.5]
    assert system.liouvillian()[0, 0] != 3.0
    assert system.dimension == 2
    assert system.name == "qubit" and "qubit" in str(system)


def test_system_accepts_lists(sy):
    system = sy.System([[1.0, 0.5], [0.5, -1.0]], gammas=(1,), lindblad_operators=[[[0, 0], [1, 0]]])
    assert system.hamiltonian.dtype == np.complex128
    assert system.gammas == [1.0]


def test_time_dependent_properties_are_vectorised(sy):
    # real output at t=0 and complex output later must not lose the imaginary part
    system = sy.TimeDependentSystem(
        lambda t: np.array([[0.0, 1j * t], [-1j * t, 0.0]]),
        gammas=[lambda t: 1.0 + t],
        lindblad_operators=[lambda t: np.array([[0, 1j * t], [0, 0]])],
    )
    times = np.array([0.0, 0.5, 1.0])
    h = np.asarray(system.hamiltonian(times))
    assert h.shape == (3, 2, 2)
    np.testing.assert_allclose(h[2, 0, 1], 1j)
    np.testing.assert_allclose(system.gammas[0](times), [1.0, 1.5, 2.0])
    np.testing.assert_allclose(np.asarray(system.lindblad_operators[0](times))[1, 0, 1], 0.5j)
    assert system.gammas is not system.gammas


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"hamiltonian": "not a matrix"},
        {"hamiltonian": np.ones(3)},
        {"hamiltonian": np.ones((2, 3))},
        {"hamiltonian": [[1, 2], [3]]},
        {"hamiltonian": lambda t: SIGMA_X},
        {"hamiltonian": np.array([[0, 1], [0, 0]])},
        {"hamiltonian": np.array([[np.nan, 0], [0, 0]])},
        {"hamiltonian": np.array([[np.inf, 0], [0, 0]])},
        {"hamiltonian": SIGMA_X, "gammas": [0.1], "lindblad_operators": []},
        {"hamiltonian": SIGMA_X, "gammas": [0.1]},
        {"hamiltonian": SIGMA_X, "gammas": [0.1], "lindblad_operators": [np.eye(3)]},
        {"hamiltonian": SIGMA_X, "gammas": [0.1], "lindblad_operators": [np.ones(2)]},
        {"hamiltonian": SIGMA_X, "gammas": ["x"], "lindblad_operators": [SIGMA_MINUS]},
        {"hamiltonian": SIGMA_X, "gammas": [1j], "lindblad_operators": [SIGMA_MINUS]},
        {"hamiltonian": SIGMA_X, "gammas": [np.nan], "lindblad_operators": [SIGMA_MINUS]},
        {"hamiltonian": SIGMA_X, "gammas": 0.1, "lindblad_operators": SIGMA_MINUS},
        {"hamiltonian": SIGMA_X, "gammas": [0.1], "lindblad_operators": [np.full((2, 2), np.inf)]},
    ],
)
def test_system_bad_input(sy, kwargs):
    with pytest.raises(AssertionError):
        sy.System(**kwargs)


def test_non_hermitian_message_names_hamiltonian(sy):
    with pytest.raises(AssertionError, match="hamiltonian"):
        sy.System(np.array([[0, 1], [0, 0]]))
    with pytest.raises(AssertionError, match="hamiltonian"):
        sy.TimeDependentSystem(lambda t: np.array([[0, 1], [0, 0]]))


def raises_at_zero(t):
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"hamiltonian": SIGMA_X},
        {"hamiltonian": raises_at_zero},
        {"hamiltonian": lambda: SIGMA_X},
        {"hamiltonian": lambda t: np.ones(2)},
        {"hamiltonian": lambda t: np.ones((2, 3))},
        {"hamiltonian": lambda t: np.array([[0, 1], [0, 0]])},
        {"hamiltonian": lambda t: np.full((2, 2), np.nan)},
        {"hamiltonian": lambda t: SIGMA_X, "gammas": [lambda t: 0.1], "lindblad_operators": []},
        {"hamiltonian": lambda t: SIGMA_X, "gammas": [0.1], "lindblad_operators": [lambda t: SIGMA_MINUS]},
        {"hamiltonian": lambda t: SIGMA_X, "gammas": [lambda t: 0.1], "lindblad_operators": [SIGMA_MINUS]},
        {
            "hamiltonian": lambda t: SIGMA_X,
            "gammas": [raises_at_zero],
            "lindblad_operators": [lambda t: SIGMA_MINUS],
        },
        {"hamiltonian": lambda t: SIGMA_X, "gammas": [lambda t: 0.1], "lindblad_operators": [raises_at_zero]},
        {
            "hamiltonian": lambda t: SIGMA_X,
            "gammas": [lambda t: "x"],
            "lindblad_operators": [lambda t: SIGMA_MINUS],
        },
        {
            "hamiltonian": lambda t: SIGMA_X,
            "gammas": [lambda t: np.inf],
            "lindblad_operators": [lambda t: SIGMA_MINUS],
        },
        {
            "hamiltonian": lambda t: SIGMA_X,
            "gammas": [lambda t: 0.1],
            "lindblad_operators": [lambda t: np.eye(3)],
        },
    ],
)
def test_time_dependent_system_bad_input(sy, kwargs):
    with pytest.raises(AssertionError):
        sy.TimeDependentSystem(**kwargs)


def test_base_system(sy):
    base = sy.BaseSystem(3, name="base")
    assert base.dimension == 3 and base.name == "base"
    with pytest.raises(NotImplementedError):
        base.liouvillian()
    with pytest.raises(NotImplementedError):
        base.get_propagators(0.1)
    for bad in (0, 2.0, "2"):
        with pytest.raises(AssertionError):
            sy.BaseSystem(bad)
