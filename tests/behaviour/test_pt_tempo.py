"""PT-TEMPO, compute_dynamics, Control and correlations: closed forms, TEMPO equivalence, additivity, bad input."""

import numpy as np
import pytest
import scipy.linalg

OHMIC = dict(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)


def states(dynamics):
    return np.asarray(dynamics.states)


def build_pt(oq, coupling, sd_args, end, unique=False, **parameters):
    bath = oq.Bath(coupling, oq.PowerLawSD(**sd_args))
    pt_tempo = oq.PtTempo(bath, 0.0, end, oq.TempoParameters(**parameters), unique=unique)
    return pt_tempo.get_process_tensor(progress_type="silent")


def tempo_states(oq, system, coupling, sd_args, state, end, unique=False, **parameters):
    bath = oq.Bath(coupling, oq.PowerLawSD(**sd_args))
    tempo = oq.Tempo(system, bath, oq.TempoParameters(**parameters), state, 0.0, unique)
    return states(tempo.compute(end, progress_type="silent"))


EQUIVALENCE = {
    "diagonal-tail": dict(coupling="z", unique=False, dkmax=4, add_correlation_time=0.5),
    "rotated-unique-full-memory": dict(coupling="x", unique=True, dkmax=None, add_correlation_time=None),
}


@pytest.mark.device
@pytest.mark.parametrize("name", sorted(EQUIVALENCE))
def test_pt_tempo_dynamics_equals_tempo(oq, name):
    """Same bath and parameters: PT-TEMPO + compute_dynamics reproduces TEMPO to the truncation tolerance."""
    case = EQUIVALENCE[name]
    op = oq.operators
    system = oq.System(0.5 * op.sigma("x") + 0.3 * op.sigma("z"))
    coupling = 0.5 * op.sigma(case["coupling"])
    parameters = dict(
        dt=0.1, epsrel=1e-9, dkmax=case["dkmax"], add_correlation_time=case["add_correlation_time"]
    )
    expected = tempo_states(oq, system, coupling, OHMIC, op.spin_dm("up"), 1.0, case["unique"], **parameters)
    pt = build_pt(oq, coupling, OHMIC, 1.0, case["unique"], **parameters)
    assert len(pt) == 10 and pt.dt == 0.1
    got = states(oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt, progress_type="silent"))
    assert got.shape == expected.shape == (11, 2, 2)
    # measured: 1e-9 .. 9e-9 (the truncation at epsrel 1e-9); the coupling matters (|rho(1) - rho(0)| ~ 0.3)
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-8)
    assert np.abs(expected[-1] - expected[0]).max() > 0.1


def test_pt_tempo_converges_to_tempo_with_epsrel(oq):
    op = oq.operators
    system = oq.System(0.5 * op.sigma("x"))
    coupling = 0.5 * op.sigma("z")
    errors = []
    for epsrel in (1e-4, 1e-6, 1e-8):
        parameters = dict(dt=0.1, epsrel=epsrel, dkmax=5)
        reference = tempo_states(
            oq, system, coupling, OHMIC, op.spin_dm("up"), 1.0, **{**parameters, "epsrel": 1e-11}
        )
        pt = build_pt(oq, coupling, OHMIC, 1.0, **parameters)
        got = states(oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt, progress_type="silent"))
        errors.append(np.abs(got - reference).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-6


def test_one_process_tensor_serves_several_hamiltonians(oq):
    op = oq.operators
    coupling = 0.5 * op.sigma("z")
    parameters = dict(dt=0.1, epsrel=1e-9, dkmax=5)
    pt = build_pt(oq, coupling, OHMIC, 1.0, **parameters)
    finals = []
    for field in (0.2, 1.0, 2.0):
        system = oq.System(0.5 * field * op.sigma("x"))
        got = states(oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt, progress_type="silent"))
        expected = tempo_states(oq, system, coupling, OHMIC, op.spin_dm("up"), 1.0, **parameters)
        np.testing.assert_allclose(got, expected, rtol=0, atol=5e-8)
        finals.append(got[-1])
    assert np.abs(finals[0] - finals[2]).max() > 0.1


def test_two_baths_at_half_coupling_equal_one_bath(oq):
    """eta is linear in alpha and both baths couple through 1/2 sigma_z: F(alpha/2)^2 = F(alpha)."""
    op = oq.operators
    sd_args = dict(zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.2)
    parameters = dict(dt=0.1, dkmax=5, epsrel=1e-8)
    coupling = 0.5 * op.sigma("z")
    half = build_pt(oq, coupling, {**sd_args, "alpha": 0.05}, 1.0, **parameters)
    full = build_pt(oq, coupling, {**sd_args, "alpha": 0.1}, 1.0, **parameters)
    system = oq.System(op.sigma("x"))
    two = states(
        oq.compute_dynamics(system, op.spin_dm("z+"), process_tensor=[half, half], progress_type="silent")
    )
    one = states(oq.compute_dynamics(system, op.spin_dm("z+"), process_tensor=full, progress_type="silent"))
    single = states(
        oq.compute_dynamics(system, op.spin_dm("z+"), process_tensor=half, progress_type="silent")
    )
    np.testing.assert_allclose(two, one, rtol=0, atol=1e-6)
    assert np.abs(single - one).max() > 1e-3  # one bath at alpha/2 is visibly different
    with_trivial = oq.compute_dynamics(
        system, op.spin_dm("z+"), process_tensor=[oq.TrivialProcessTensor(2), full], progress_type="silent"
    )
    np.testing.assert_allclose(states(with_trivial), one, rtol=0, atol=1e-13)


def test_pure_dephasing_with_tail_is_exact(oq):
    """Super-Ohmic dephasing, dkmax = 2 with the whole tail: y(t) = exp(-Re eta(t)) at every step."""
    op = oq.operators
    sd_args = dict(alpha=0.3, zeta=3, cutoff=5.0, cutoff_type="exponential", temperature=0.0)
    pt = build_pt(
        oq, 0.5 * op.sigma("z"), sd_args, 10.0, dt=0.4, dkmax=2, epsrel=1e-5, add_correlation_time=np.inf
    )
    dynamics = oq.compute_dynamics(
        oq.System(0 * op.sigma("x")), op.spin_dm("y+"), process_tensor=pt, progress_type="silent"
    )
    times, sy = dynamics.expectations(op.sigma("y"), real=True)
    x = (5.0 * np.asarray(times)) ** 2
    exact = np.exp(-2 * 0.3 * (1 + (x - 1) / (x + 1) ** 2))
    np.testing.assert_allclose(np.asarray(sy), exact, rtol=0, atol=1e-4)
    assert abs(float(np.asarray(sy)[-1]) - 0.548680) < 1e-4


def test_independent_boson_two_time_correlation(oq):
    """<sigma_x(t) sigma_x(0)> for coupling |up><up| equals exp(-eta(t) - i (eps + lambda) t)."""
    op = oq.operators
    alpha, cutoff, temperature, eps = 0.1, 3.0, 1.309, 5.0
    shift = 2 * alpha * cutoff
    sd = oq.PowerLawSD(alpha=alpha, zeta=1, cutoff=cutoff, cutoff_type="exponential", temperature=temperature)
    errors = []
    for epsrel in (1e-6, 1e-8):
        pt = oq.PtTempo(
            oq.Bath(op.spin_dm("z+"), sd), 0.0, 1.0, oq.TempoParameters(dt=0.05, epsrel=epsrel, dkmax=500)
        ).get_process_tensor(progress_type="silent")
        system = oq.System(0.5 * (eps + shift) * op.sigma("z"))
        times, corr = oq.compute_correlations_nt(
            system,
            pt,
            [op.sigma("x"), op.sigma("x")],
            [0.0, (0.0, 1.0)],
            ["left", "left"],
            initial_state=op.spin_dm("z-"),
            progress_type="silent",
        )
        t = np.asarray(times[1])
        assert corr.shape == (1, 21) and np.allclose(t, 0.05 * np.arange(21))
        eta = np.array([sd.correlation_2d_integral(delta=s, time_1=0.0, shape="upper-triangle") for s in t])
        exact = np.exp(-eta - 1j * (eps + shift) * t)
        errors.append(np.abs(corr[0] - exact).max())
    # measured: 7.5e-4 at epsrel 1e-6, 1.4e-5 at 1e-8 (process-tensor truncation; the phase is exact)
    assert errors[1] < 5e-5 and errors[0] > errors[1]


def test_correlation_orders_against_unitary_closed_form(oq):
    """No coupling: <B(t_b) A(t_a)> from Heisenberg operators, for 'ordered', 'anti' and 'full'."""
    op = oq.operators
    hamiltonian = np.asarray(0.7 * op.sigma("x") + 0.2 * op.sigma("z"))
    sd_args = dict(alpha=0.0, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.0)
    pt = build_pt(oq, 0.5 * op.sigma("z"), sd_args, 0.6, dt=0.1, dkmax=3, epsrel=1e-10)
    rho0 = np.asarray(op.spin_dm("x+"))
    a, b = np.asarray(op.sigma("y")), np.asarray(op.sigma("z"))

    def heisenberg(operator, t):
        u = scipy.linalg.expm(-1j * hamiltonian * t)
        return u.conj().T @ operator @ u

    grid = 0.1 * np.arange(7)
    exact = np.array([[np.trace(heisenberg(b, tb) @ heisenberg(a, ta) @ rho0) for tb in grid] for ta in grid])
    system = oq.System(hamiltonian)
    common = dict(initial_state=op.spin_dm("x+"), progress_type="silent")
    _, ordered = oq.compute_correlations(system, pt, a, b, slice(None), slice(None), "ordered", **common)
    _, anti = oq.compute_correlations(system, pt, a, b, slice(None), slice(None), "anti", **common)
    times, full = oq.compute_correlations(system, pt, a, b, slice(None), slice(None), "full", **common)
    upper = np.triu(np.ones((7, 7), dtype=bool))
    np.testing.assert_allclose(ordered[upper], exact[upper], atol=1e-12)
    assert np.all(np.isnan(ordered[~upper]))
    np.testing.assert_allclose(anti[upper.T], exact[upper.T], atol=1e-12)
    assert np.all(np.isnan(anti[~upper.T]))
    np.testing.assert_allclose(full, exact, atol=1e-12)
    np.testing.assert_allclose(times[0], grid)


def test_four_time_correlation_at_zero_is_one(oq):
    op = oq.operators
    pt = build_pt(oq, 0.5 * op.sigma("z"), OHMIC, 1.0, dt=0.1, dkmax=5, epsrel=1e-6)
    _, corr = oq.compute_correlations_nt(
        oq.System(2.5 * op.sigma("x")),
        pt,
        [op.sigma("x")] * 4,
        [0, 0, 0, 0],
        ["left"] * 4,
        initial_state=op.spin_dm("up"),
        progress_type="silent",
    )
    assert corr.shape == (1, 1, 1, 1)
    assert abs(corr[0, 0, 0, 0] - 1.0) < 1e-12  # the process tensor is normalised: cap_0 = 1


def test_correlation_time_errors(oq):
    op = oq.operators
    pt = build_pt(oq, 0.5 * op.sigma("z"), OHMIC, 0.3, dt=0.1, dkmax=2, epsrel=1e-6)
    system = oq.System(op.sigma("x"))
    x = op.sigma("x")
    with pytest.raises(IndexError):
        oq.compute_correlations(
            system, pt, x, x, 0, 9, initial_state=op.spin_dm("up"), progress_type="silent"
        )
    with pytest.raises(TypeError):
        oq.compute_correlations(
            system, pt, x, x, "now", 1, initial_state=op.spin_dm("up"), progress_type="silent"
        )
    with pytest.raises(AssertionError):
        oq.compute_correlations_nt(system, pt, [x, x], [0], ["left", "left"], initial_state=op.spin_dm("up"))


# -- compute_dynamics without environment, controls ---------------------------------------------------------


def lindblad_states(hamiltonian, gamma, jump, rho0, dt, num_steps):
    dim = hamiltonian.shape[0]
    one = np.identity(dim)
    liouvillian = -1j * (np.kron(hamiltonian, one) - np.kron(one, hamiltonian.T))
    liouvillian += gamma * (
        np.kron(jump, jump.conj())
        - 0.5 * (np.kron(jump.conj().T @ jump, one) + np.kron(one, (jump.conj().T @ jump).T))
    )
    step = scipy.linalg.expm(liouvillian * dt)
    vector, result = rho0.reshape(-1), []
    for _ in range(num_steps + 1):
        result.append(vector.reshape(dim, dim))
        vector = step @ vector
    return np.array(result)


def test_no_environment_is_the_lindblad_evolution(oq):
    op = oq.operators
    hamiltonian, jump = np.asarray(0.8 * op.sigma("x")), np.asarray(op.sigma("-"))
    system = oq.System(hamiltonian, gammas=[0.3], lindblad_operators=[jump])
    got = oq.compute_dynamics(
        system, op.spin_dm("up"), dt=0.1, num_steps=12, start_time=1.0, progress_type="silent"
    )
    expected = lindblad_states(hamiltonian, 0.3, jump, np.asarray(op.spin_dm("up")), 0.1, 12)
    np.testing.assert_allclose(states(got), expected, atol=1e-12)
    np.testing.assert_allclose(np.asarray(got.times), 1.0 + 0.1 * np.arange(13), atol=1e-14)
    final = oq.compute_dynamics(
        system,
        op.spin_dm("up"),
        dt=0.1,
        num_steps=12,
        start_time=1.0,
        record_all=False,
        progress_type="silent",
    )
    assert len(final) == 1 and abs(float(np.asarray(final.times)[0]) - 2.2) < 1e-12
    np.testing.assert_allclose(states(final)[0], expected[-1], atol=1e-12)


def test_control_pre_and_post(oq):
    """A sigma_x flip at step 2: a pre control shows in the state of step 2, a post control only from step 3."""
    op = oq.operators
    system = oq.System(0.0 * op.sigma("z"), gammas=[0.2], lindblad_operators=[op.sigma("z")])
    flip = op.left_right_super(op.sigma("x"), op.sigma("x"))
    up = np.asarray(op.spin_dm("up"))
    for post, first_flipped in ((False, 2), (True, 3)):
        control = oq.Control(2)
        control.add_single(2, flip, post=post)
        got = states(
            oq.compute_dynamics(
                system, op.spin_dm("up"), dt=0.1, num_steps=5, control=control, progress_type="silent"
            )
        )
        populations = got[:, 0, 0].real
        assert np.allclose(populations[:first_flipped], 1.0) and np.allclose(populations[first_flipped:], 0.0)
        assert np.allclose(got[0], up)
    by_time = oq.Control(2)
    by_time.add_single(0.2, flip)
    via_time = states(
        oq.compute_dynamics(
            system, op.spin_dm("up"), dt=0.1, num_steps=5, control=by_time, progress_type="silent"
        )
    )
    assert np.allclose(via_time[:, 0, 0].real, [1, 1, 0, 0, 0, 0])
    with pytest.raises(TypeError):
        by_time.add_single("soon", flip)
    with pytest.raises(NotImplementedError):
        by_time.add_continuous(lambda t: flip)


# -- bad input ----------------------------------------------------------------------------------------------


@pytest.fixture
def small_pt(oq):
    return build_pt(oq, 0.5 * oq.operators.sigma("z"), OHMIC, 0.3, dt=0.1, dkmax=2, epsrel=1e-6)


def test_compute_dynamics_bad_input(oq, small_pt):
    op = oq.operators
    system = oq.System(op.sigma("x"))
    up = op.spin_dm("up")
    other_dt = build_pt(oq, 0.5 * op.sigma("z"), OHMIC, 0.4, dt=0.2, dkmax=2, epsrel=1e-6)
    qutrit = oq.SimpleProcessTensor(3, 0.1)
    with_initial = oq.SimpleProcessTensor(2, 0.1)
    with_initial.set_initial_tensor(np.ones((4, 1)))
    with_initial.set_mpo_tensor(0, np.ones((1, 1, 4)))
    with pytest.raises(ValueError, match="time step"):
        oq.compute_dynamics(system, up, process_tensor=[small_pt, other_dt])
    with pytest.raises(ValueError, match="time step"):
        oq.compute_dynamics(system, up, dt=0.05, process_tensor=small_pt)
    with pytest.raises(ValueError, match="dimension"):
        oq.compute_dynamics(system, up, process_tensor=[small_pt, qutrit])
    with pytest.raises(ValueError, match="dimension"):
        oq.compute_dynamics(
            oq.System(np.diag([1.0, 0.0, -1.0])), np.diag([1.0, 0, 0]), process_tensor=small_pt
        )
    with pytest.raises(ValueError, match="shortest"):
        oq.compute_dynamics(system, up, num_steps=4, process_tensor=small_pt)
    with pytest.raises(NotImplementedError):
        oq.compute_dynamics(system, up, process_tensor=with_initial)
    with pytest.raises(ValueError, match="initial state"):
        oq.compute_dynamics(system, None, process_tensor=small_pt)
    with pytest.raises(TypeError):
        oq.compute_dynamics(system, [[1, 0], [0, 0]], process_tensor=small_pt)
    with pytest.raises(ValueError):
        oq.compute_dynamics(system, np.identity(3) / 3, process_tensor=small_pt)  # wrong dimension
    with pytest.raises(ValueError):
        oq.compute_dynamics(system, np.full((2, 2), np.inf), process_tensor=small_pt)
    with pytest.raises(TypeError):
        oq.compute_dynamics(system, up, process_tensor=small_pt, control="flip")
    with pytest.raises(TypeError):
        oq.compute_dynamics("system", up, process_tensor=small_pt)
    with pytest.raises(ValueError, match="time step"):
        oq.compute_dynamics(system, up, num_steps=3)
    with pytest.raises(ValueError, match="num_steps"):
        oq.compute_dynamics(system, up, dt=0.1, process_tensor=oq.TrivialProcessTensor(2))
    with pytest.raises(TypeError):
        oq.compute_dynamics(system, up, process_tensor="pt.hdf5")


def test_malformed_process_tensor_is_refused(oq):
    op = oq.operators
    broken = oq.SimpleProcessTensor(2, 0.1)
    broken.set_mpo_tensor(0, np.ones((1, 3, 4)))
    broken.set_mpo_tensor(1, np.ones((2, 1, 4)))
    with pytest.raises(ValueError, match="past bond"):
        oq.compute_dynamics(oq.System(op.sigma("x")), op.spin_dm("up"), process_tensor=broken)
    with pytest.raises(ValueError, match="NaN"):
        broken.set_mpo_tensor(0, np.full((1, 1, 4), np.nan))


def test_pt_tempo_bad_input(oq):
    op = oq.operators
    bath = oq.Bath(0.5 * op.sigma("z"), oq.PowerLawSD(**OHMIC))
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=3)
    with pytest.raises(AssertionError):
        oq.PtTempo("bath", 0.0, 1.0, parameters)
    with pytest.raises(AssertionError):
        oq.PtTempo(bath, "start", 1.0, parameters)
    with pytest.raises(AssertionError):
        oq.PtTempo(bath, 0.0, 0.15, parameters)  # one step
    with pytest.raises(AssertionError):
        oq.PtTempo(bath, 0.0, 1.0, {"dt": 0.1})
    with pytest.raises(AssertionError):
        oq.PtTempo(bath, 0.0, 1.0, parameters, unique="yes")


def test_pt_tempo_progress_names_its_phases(oq, capsys):
    bath = oq.Bath(0.5 * oq.operators.sigma("z"), oq.PowerLawSD(**OHMIC))
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=3)
    pt_tempo = oq.PtTempo(bath, 0.0, 0.6, parameters)
    pt_tempo.compute(progress_type="simple")
    printed = capsys.readouterr().err.splitlines()
    titles = [line for line in printed if line.startswith("--> PT-TEMPO")]
    assert [title.split(":")[0] for title in titles] == [
        f"--> PT-TEMPO computation [{phase}/3]" for phase in (1, 2, 3)
    ]
    assert "bath influences (3 lags)" in titles[0] and "time steps" in titles[1] and "assembling" in titles[2]
    bond = pt_tempo.max_bond_dimension
    assert bond > 1 and any(line.endswith(f"(bond {bond})") for line in printed if "Elapsed" in line)
    with oq.util.get_progress("bar")(2, title="loop") as bar:
        bar.update(1)
        bar.set_status(bond=7)
        bar.update(2)
    assert bar.status == {"bond": 7} and "bond 7" in capsys.readouterr().err


def test_pt_tempo_compute_guesses_parameters_with_warning(oq):
    op = oq.operators
    bath = oq.Bath(
        0.5 * op.sigma("z"), oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=1.0, cutoff_type="exponential")
    )
    with pytest.warns(UserWarning, match="Estimating"):
        pt = oq.pt_tempo_compute(bath, 0.0, 1.0, tolerance=0.05, progress_type="silent")
    assert len(pt) >= 2 and pt.dt is not None
    trace = np.trace(
        states(
            oq.compute_dynamics(
                oq.System(op.sigma("x")), op.spin_dm("up"), process_tensor=pt, progress_type="silent"
            )
        ),
        axis1=1,
        axis2=2,
    )
    np.testing.assert_allclose(trace, 1.0, atol=1e-3)


@pytest.mark.device
def test_batch_equals_one_call_per_system(oq):
    """compute_dynamics_batch (vmap in oqupy_jax, a loop in oqupy_numpy) gives each system's own dynamics."""
    op = oq.operators
    pt = build_pt(oq, 0.5 * op.sigma("z"), OHMIC, 0.8, dt=0.1, dkmax=3, epsrel=1e-7)
    systems = [oq.System(0.5 * omega * op.sigma("x")) for omega in (0.3, 1.0, 2.5)]
    states0 = [op.spin_dm("up"), op.spin_dm("x+"), op.spin_dm("y-")]
    control = oq.Control(2)
    control.add_single(3, op.left_right_super(op.sigma("x"), op.sigma("x")))
    times, batch = oq.compute_dynamics_batch(
        systems, states0, process_tensor=[pt, pt], control=control, progress_type="silent"
    )
    assert np.asarray(batch).shape == (3, 9, 2, 2)
    np.testing.assert_allclose(np.asarray(times), 0.1 * np.arange(9), atol=1e-14)
    for system, state, got in zip(systems, states0, np.asarray(batch)):
        single = oq.compute_dynamics(
            system, state, process_tensor=[pt, pt], control=control, progress_type="silent"
        )
        np.testing.assert_allclose(got, states(single), rtol=0, atol=1e-13)
    assert np.abs(np.asarray(batch)[0] - np.asarray(batch)[2]).max() > 0.1
    # constant systems share one batched expm; a time-dependent one sends the batch through each system's stacks
    damped = oq.System(0.5 * op.sigma("x"), gammas=[0.2], lindblad_operators=[op.sigma("-")])
    driven = oq.TimeDependentSystem(lambda t: 0.5 * np.cos(t) * op.sigma("x"))
    for mixed in ([damped, systems[1]], [damped, driven]):
        _, got = oq.compute_dynamics_batch(mixed, op.spin_dm("up"), process_tensor=pt, progress_type="silent")
        for system, one in zip(mixed, np.asarray(got)):
            single = oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt, progress_type="silent")
            np.testing.assert_allclose(one, states(single), rtol=0, atol=1e-13)
    last_times, last = oq.compute_dynamics_batch(
        systems, op.spin_dm("up"), process_tensor=pt, record_all=False, progress_type="silent"
    )
    assert np.asarray(last).shape == (3, 1, 2, 2) and abs(float(np.asarray(last_times)[0]) - 0.8) < 1e-12
    with pytest.raises(ValueError, match="dimension"):
        oq.compute_dynamics_batch(
            [systems[0], oq.System(np.diag([1.0, 0.0, -1.0]))], op.spin_dm("up"), process_tensor=pt
        )


def _influence_functional(
    oq, bath, parameters, steps, unique, weighted, real=False, sketched=False, paired=False
):
    """F(a_0 ... a_{N-1}) of a PT-TEMPO build through the host step, the kept ranks and the step tensors' dtype
    (every split a full SVD unless ``sketched``; two times per zip-up wherever two remain if ``paired``)."""
    influences = oq._influences.Influences(bath, parameters, unique, weighted_classes=weighted, real=real)
    influences.extend(steps)
    legs, sites, ranks = [], [], []
    sketches = oq._pt_tempo_step.sketch_generator() if sketched else None
    dkmax = parameters.dkmax

    def lines_of(step):
        last = steps - 1 if dkmax is None else min(step + dkmax, steps - 1)
        return [influences.line(lag, step + lag) for lag in range(1, last - step + 1)]

    step = 0
    while step < steps:
        lines = lines_of(step)
        if paired and step + 1 < steps:
            following = lines_of(step + 1)
            pairs = [
                influences.pair_line(lag, step + lag, lag > len(lines))
                for lag in range(2, len(following) + 2)
            ]
            pair, legs, rank = oq._pt_tempo_step.step_pair(
                legs, len(following) + 2, lines[0], pairs, influences.network, parameters.epsrel, sketches
            )
            sites.extend(pair)
        else:
            site, legs, rank = oq._pt_tempo_step.step(
                legs, len(lines) + 1, lines, influences.network, parameters.epsrel, sketches
            )
            sites.append(site)
        ranks.append(rank)
        step = len(sites)
    functional = sites[0]
    for site in sites[1:]:
        functional = np.tensordot(functional, site, axes=(-1, 0))
    return np.asarray(functional).reshape(-1), ranks, influences.lines.dtype


def test_pt_tempo_class_reduction_keeps_the_unreduced_truncation(oq):
    """``unique=False`` is computed on the coupling's classes, weighted by sqrt(class size): the same
    truncations, so the same influence functional, as on the full path indices; ``unique=True`` differs."""
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    bath = oq.Bath(0.5 * op.sigma("z"), sd)  # west classes: 3 of the 4 path indices
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-6)
    full, full_ranks, _ = _influence_functional(oq, bath, parameters, 6, unique=False, weighted=False)
    weighted, weighted_ranks, _ = _influence_functional(oq, bath, parameters, 6, unique=False, weighted=True)
    unique, _, _ = _influence_functional(oq, bath, parameters, 6, unique=True, weighted=True)
    scale = np.abs(full).max()
    assert full.shape == (4**6,) and weighted_ranks == full_ranks and max(full_ranks) >= 9
    # measured: 2e-14 (rounding) against 2e-6 for the unweighted classes of unique=True (other truncations)
    assert np.abs(weighted - full).max() < 1e-11 * scale
    assert np.abs(unique - full).max() > 1e-8 * scale


REAL_BASIS_CASES = {
    # name: (spectral density, coupling, steps); ohmic and sub-/super-ohmic, both cutoffs, low and high
    # temperature, weak and strong coupling, diagonal and non-diagonal couplings, a spin 1 and a 3-level system
    "ohmic-exp-warm-sz": (
        dict(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5),
        "z",
        6,
    ),
    "subohmic-gauss-cold-sx": (
        dict(alpha=0.1, zeta=0.5, cutoff=3.0, cutoff_type="gaussian", temperature=0.05),
        "x",
        6,
    ),
    "superohmic-weak-hot-sz": (
        dict(alpha=0.01, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=5.0),
        "z",
        6,
    ),
    "strong-zero-temperature-sy": (dict(alpha=0.8, zeta=1, cutoff=2.0, cutoff_type="exponential"), "y", 6),
    "spin-1": (dict(alpha=0.2, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=1.0), "spin-1", 4),
    "three-level": (
        dict(alpha=0.2, zeta=1, cutoff=4.0, cutoff_type="gaussian", temperature=0.3),
        "3-level",
        4,
    ),
}


@pytest.mark.parametrize("case", sorted(REAL_BASIS_CASES))
def test_pt_tempo_real_basis_is_the_complex_computation(oq, case):
    """PT-TEMPO builds in the real basis of the swap (i, j) <-> (j, i) (``Influences(real=True)``): every step
    tensor is real there, and the influence functional and the kept ranks are those of the complex computation
    in the coupling's basis, bath by bath (a unitary change of basis on each index keeps every singular value)."""
    op = oq.operators
    spectral, name, steps = REAL_BASIS_CASES[case]
    couplings = {
        "spin-1": np.diag([1.0, 0.0, -1.0]),
        "3-level": np.array([[0.3, 0.5, 0.0], [0.5, -0.2, 0.4j], [0.0, -0.4j, 1.1]]),
    }
    coupling = couplings.get(name)
    bath = oq.Bath(op.sigma(name) if coupling is None else coupling, oq.PowerLawSD(**spectral))
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-7)
    exact, exact_ranks, exact_dtype = _influence_functional(
        oq, bath, parameters, steps, False, True, real=False
    )
    real, real_ranks, real_dtype = _influence_functional(oq, bath, parameters, steps, False, True, real=True)
    assert exact_dtype == np.complex128 and real_dtype == np.float64
    assert real_ranks == exact_ranks and max(exact_ranks) >= 4
    scale = np.abs(exact).max()
    # measured: 1e-14 .. 3e-14 (rounding); the truncation itself is at 1e-7
    assert np.abs(real - exact).max() < 1e-11 * scale


PAIR_CASES = {
    # name: (coupling, steps, TempoParameters arguments beyond dt and epsrel)
    "full-memory-sz": ("z", 7, {}),
    "memory-cut-sx": ("x", 8, {"tcut": 0.3}),
    "memory-one-step-sz": ("z", 6, {"tcut": 0.1}),
    "memory-tail-sz": ("z", 7, {"tcut": 0.2, "add_correlation_time": 0.3}),
}


@pytest.mark.parametrize("case", sorted(PAIR_CASES))
def test_pt_tempo_step_pair_is_two_steps(oq, case):
    """``_pt_tempo_step.step_pair`` (one zip-up for the lines of two times) builds the influence functional of
    two ``step`` calls, with the full memory, a memory cut-off and a memory tail, over an odd number of steps
    (the last one single): equal to rounding at epsrel 1e-12, and equally truncated at 1e-6."""
    op = oq.operators
    name, steps, extra = PAIR_CASES[case]
    sd = oq.PowerLawSD(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    bath = oq.Bath(op.sigma(name), sd)
    exact = oq.TempoParameters(dt=0.1, epsrel=1e-12, **extra)
    single, _, _ = _influence_functional(oq, bath, exact, steps, False, True, real=True)
    paired, ranks, _ = _influence_functional(oq, bath, exact, steps, False, True, real=True, paired=True)
    scale = np.abs(single).max()
    assert len(ranks) == (steps + 1) // 2 and max(ranks) >= 3  # pairs were taken, and bonds grew
    # measured: 1e-14 .. 3e-14 of the largest value (rounding)
    assert np.abs(paired - single).max() < 1e-11 * scale
    loose = oq.TempoParameters(dt=0.1, epsrel=1e-6, **extra)
    single, _, _ = _influence_functional(oq, bath, loose, steps, False, True, real=True)
    paired, _, _ = _influence_functional(oq, bath, loose, steps, False, True, real=True, paired=True)
    # measured: 1e-14 .. 2e-6 (other truncations at the 1e-6 level)
    assert np.abs(paired - single).max() < 1e-5 * scale


def test_pt_tempo_pairs_only_where_they_pay(oq):
    """``_pt_tempo_step.pair_pays``: pairs at open bonds up to ``PAIR_MAX_BOND`` and at most ``PAIR_MAX_NORTH``
    north classes (``sigma_z``: 4); never for a spin 1 (9 north classes: matrices 9 times taller), nor past
    the bond limit (measured slower there, docs/benchmarks.md)."""
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=1.0)
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-7)
    step_module = oq._pt_tempo_step
    limit = step_module.PAIR_MAX_BOND

    def network(coupling):
        influences = oq._influences.Influences(oq.Bath(coupling, sd), parameters, False, True, real=True)
        return influences.network

    spin_half, spin_one = network(oq.operators.sigma("z")), network(np.diag([1.0, 0.0, -1.0]))
    assert spin_half.north_weights.shape[0] == 4 and spin_one.north_weights.shape[0] == 9

    def legs(bond):
        return [np.ones((1, 3, bond)), np.ones((bond, 3, 1))]

    assert step_module.pair_pays([], spin_half) and step_module.pair_pays(legs(limit), spin_half)
    assert not step_module.pair_pays(legs(limit + 1), spin_half)
    assert not step_module.pair_pays([], spin_one)


def test_pt_tempo_pairs_keep_the_dynamics(oq, monkeypatch):
    """``PtTempo`` zips two times at once where ``pair_pays`` (small bonds), composing and reusing the pair lines
    (also those with the memory tail): its dynamics are those of single steps to rounding at epsrel 1e-12."""
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    bath = oq.Bath(op.sigma("z"), sd)
    parameters = oq.TempoParameters(dt=0.1, tcut=0.4, epsrel=1e-12, add_correlation_time=0.5)
    system = oq.System(0.5 * op.sigma("x"))
    step_module = oq._pt_tempo_step
    pairs = []
    step_pair = step_module.step_pair

    def counting_pairs(*arguments):
        pairs.append(arguments[1])
        return step_pair(*arguments)

    monkeypatch.setattr(step_module, "step_pair", counting_pairs)

    def states():
        pt = oq.pt_tempo_compute(bath, 0.0, 1.1, parameters, progress_type="silent")
        dynamics = oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt, progress_type="silent")
        return np.asarray(dynamics.states)

    paired = states()
    assert len(pairs) >= 3  # pairs while the bonds are small, then single steps
    monkeypatch.setattr(step_module, "PAIR_MAX_BOND", 0)
    pairs.clear()
    single = states()
    assert not pairs
    # measured: 6e-15 (rounding)
    np.testing.assert_allclose(paired, single, rtol=0, atol=1e-11)


def test_lapack_svd_and_truncation_rank(oq):
    """``_mps.lapack_svd`` (LAPACK's ``gesdd`` directly, a wide matrix through its transpose) is a thin SVD of
    real and complex, tall and wide matrices, with NumPy's singular values; ``truncation_rank`` is the smallest
    rank whose discarded norm, with the residual, is at most ``epsrel * s_0``, extended over a degenerate
    multiplet."""
    mps = oq._mps
    rng = np.random.default_rng(3)
    for shape in ((40, 30), (23, 39), (1, 5), (6, 1)):
        for dtype in (np.float64, np.complex128):
            matrix = rng.standard_normal(shape).astype(dtype)
            if dtype == np.complex128:
                matrix = matrix + 1j * rng.standard_normal(shape)
            left, values, right = mps.lapack_svd(matrix)
            size = min(shape)
            assert (
                left.shape == (shape[0], size) and values.shape == (size,) and right.shape == (size, shape[1])
            )
            np.testing.assert_allclose((left * values) @ right, matrix, rtol=0, atol=1e-13)
            np.testing.assert_allclose(left.conj().T @ left, np.eye(size), atol=1e-13)
            np.testing.assert_allclose(right @ right.conj().T, np.eye(size), atol=1e-13)
            np.testing.assert_allclose(values, np.linalg.svd(matrix, compute_uv=False), rtol=1e-13)

    def by_definition(values, epsrel, residual):
        for rank in range(1, values.size + 1):
            if np.sqrt(np.sum(values[rank:] ** 2) + residual**2) <= epsrel * values[0]:
                break
        while rank < values.size and values[rank] >= values[rank - 1] * (1.0 - mps.DEGENERACY_RTOL):
            rank += 1
        return rank

    for _ in range(300):
        values = np.sort(10.0 ** rng.uniform(-14, 0, rng.integers(1, 40)))[::-1]
        residual = float(rng.choice([0.0, 1e-12, 3e-10]))
        assert mps.truncation_rank(values, 1e-9, residual) == by_definition(values, 1e-9, residual)
    # a multiplet is kept whole; a residual above the bound keeps everything
    assert mps.truncation_rank(np.array([1.0, 0.5, 0.5, 0.5, 1e-12]), 0.6) == 4
    assert mps.truncation_rank(np.array([1.0, 1e-3, 1e-12]), 1e-9, residual=2e-9) == 3


def test_sketched_split_bounds_its_truncation_error(oq):
    """``_pt_tempo_step.sketched_split`` counts the residual outside its sketch as discarded: the split's error
    stays below ``epsrel * s_0`` like a full SVD's, its rank is the SVD's or one more, and a sketch far too narrow for the
    matrix falls back to the full SVD."""
    mps = oq._mps
    rng = np.random.default_rng(7)
    left, _ = np.linalg.qr(rng.standard_normal((120, 90)))
    right, _ = np.linalg.qr(rng.standard_normal((90, 90)))
    matrix = (left * 10.0 ** (-np.arange(90) / 3.0)) @ right.T
    epsrel = 1e-9
    exact = mps.split(matrix, epsrel)[2]
    for expected in (exact - 3, exact, exact + 4, 2):
        sketched = oq._pt_tempo_step.sketched_split
        factor, rest, rank = sketched(matrix, epsrel, expected, np.random.default_rng(0))
        assert np.linalg.norm(matrix - factor @ rest) <= epsrel * 1.0 * (1 + 1e-6)
        assert exact <= rank <= exact + 1
        np.testing.assert_allclose(factor.T @ factor, np.eye(rank), atol=1e-12)  # the isometry on the left
    assert exact >= 25  # (27): a sketch of 12 columns cannot hold it and falls back


def test_pt_tempo_sketched_splits_converge_like_full_svds(oq, monkeypatch):
    """``PtTempo`` sketches its larger zip-up splits, only orthogonalises the legs in its sweep and, at small
    bonds, zips the lines of two times at once (``method="fast"``, the default): against the reference construction (complex, full SVDs everywhere),
    <sigma_z>(t) is as accurate (the truncations differ, so the two differ by less than the reference's error),
    and both converge in epsrel to the same limit; an unknown method is a ValueError."""
    op = oq.operators
    step_module = oq._pt_tempo_step
    sketched_calls = []
    sketched_split = step_module.sketched_split

    def counting(matrix, epsrel, expected, sketches, weights_left=False):
        if expected + step_module.SKETCH_OVERSAMPLING <= step_module.SKETCH_FRACTION * min(matrix.shape):
            sketched_calls.append(matrix.shape)
        return sketched_split(matrix, epsrel, expected, sketches, weights_left)

    monkeypatch.setattr(step_module, "sketched_split", counting)
    orthogonalised = []
    isometric_split = step_module.isometric_split

    def counting_legs(matrix):
        orthogonalised.append(matrix.shape)
        return isometric_split(matrix)

    monkeypatch.setattr(step_module, "isometric_split", counting_legs)
    pairs = []
    step_pair = step_module.step_pair

    def counting_pairs(*arguments):
        pairs.append(len(arguments[0]))
        return step_pair(*arguments)

    monkeypatch.setattr(step_module, "step_pair", counting_pairs)
    bath = oq.Bath(
        op.sigma("z"), oq.PowerLawSD(alpha=0.05, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=0.5)
    )
    generator = step_module.sketch_generator

    def sz(epsrel, sketched):
        monkeypatch.setattr(step_module, "sketch_generator", generator if sketched else lambda: None)
        parameters = oq.TempoParameters(dt=0.05, epsrel=epsrel)
        pt = oq.pt_tempo_compute(bath, 0.0, 1.0, parameters, progress_type="silent")
        dynamics = oq.compute_dynamics(
            oq.System(0.5 * op.sigma("x")), op.spin_dm("up"), process_tensor=pt, progress_type="silent"
        )
        return np.asarray(dynamics.expectations(op.sigma("z"), real=True)[1])

    reference = sz(1e-11, False)
    errors = {}
    for epsrel in (1e-7, 1e-9):
        sketched_calls.clear()
        orthogonalised.clear()
        pairs.clear()
        sketched = sz(epsrel, True)
        # the sketch, the sweep without truncation and two times per zip-up (small bonds) were used
        assert sketched_calls and orthogonalised and len(pairs) >= 8
        orthogonalised.clear()
        pairs.clear()
        full = sz(epsrel, False)
        assert not orthogonalised and not pairs  # the reference: one time per zip-up, every bond by SVD
        errors[epsrel] = np.abs(full - reference).max()
        # measured: errors 1.2e-6 / 8.9e-8 (fast, with pairs) and 1.5e-6 / 1.5e-7 (reference), 4.5e-7 / 6.4e-8 apart
        assert np.abs(sketched - reference).max() < 1.2 * errors[epsrel]
        assert np.abs(sketched - full).max() < errors[epsrel]
    assert errors[1e-9] < 0.3 * errors[1e-7]
    with pytest.raises(ValueError, match="method"):
        oq.PtTempo(bath, 0.0, 1.0, oq.TempoParameters(dt=0.05, epsrel=1e-7), method="exact")
