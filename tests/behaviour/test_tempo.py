"""TEMPO against closed forms, an exact path sum, Markovian limits, symmetries and convergence."""

import warnings

import numpy as np
import pytest
import scipy.linalg


def bloch(oq, dynamics):
    op = oq.operators
    return np.stack([np.asarray(dynamics.expectations(op.sigma(k), real=True)[1]) for k in "xyz"], axis=1)


def run(oq, hamiltonian, coupling, state, sd, end, **parameters):
    options = dict(parameters)
    unique = options.pop("unique", False)
    tempo = oq.Tempo(
        oq.System(hamiltonian), oq.Bath(coupling, sd), oq.TempoParameters(**options), state, 0.0, unique
    )
    return tempo, tempo.compute(end, progress_type="silent")


def test_super_ohmic_pure_dephasing_matches_closed_form(oq):
    """H = 0, coupling sz/2: coherence decays as exp(-Phi(t)), Phi = 2a[1 + (x-1)/(x+1)^2], x = (wc t)^2.

    With dkmax = 2 and an infinite correlation time folded into the tail the result is exact at every step.
    """
    op = oq.operators
    alpha, cutoff = 0.3, 5.0
    sd = oq.PowerLawSD(alpha=alpha, zeta=3, cutoff=cutoff, cutoff_type="exponential", temperature=0.0)
    _, dyn = run(
        oq,
        0 * op.sigma("z"),
        0.5 * op.sigma("z"),
        op.spin_dm("y+"),
        sd,
        10.0,
        dt=0.4,
        epsrel=1e-5,
        dkmax=2,
        add_correlation_time=np.inf,
    )
    times, sy = dyn.expectations(op.sigma("y"), real=True)
    x = (cutoff * np.asarray(times)) ** 2
    phi = 2 * alpha * (1 + (x - 1) / (x + 1) ** 2)
    np.testing.assert_allclose(np.asarray(sy), np.exp(-phi), atol=2e-6)
    assert abs(float(np.asarray(sy)[-1]) - 0.548680) < 1e-5


def test_ohmic_dephasing_full_memory_at_finite_temperature(oq):
    """Full memory, Ohmic bath at T > 0: the coherence is exp(-Re eta(t)) with eta in closed form (log-Gamma)."""
    from scipy.special import loggamma

    op = oq.operators
    alpha, wc, temperature = 0.1, 2.0, 0.5
    sd = oq.PowerLawSD(alpha=alpha, zeta=1, cutoff=wc, cutoff_type="exponential", temperature=temperature)
    _, dyn = run(oq, 0 * op.sigma("z"), 0.5 * op.sigma("z"), op.spin_dm("x+"), sd, 3.0, dt=0.25, epsrel=1e-6)
    times, sx = dyn.expectations(op.sigma("x"), real=True)
    t = np.asarray(times)
    a = 1 + temperature / wc
    eta = 2 * alpha * (np.log(1 + 1j * wc * t) - 1j * wc * t)
    eta = eta + 2 * alpha * (
        2 * loggamma(a) - loggamma(a + 1j * temperature * t) - loggamma(a - 1j * temperature * t)
    )
    np.testing.assert_allclose(np.asarray(sx), np.exp(-eta.real), atol=1e-6)


def exact_path_sum(oq, hamiltonian, coupling, sd, state, dt, steps):
    """Reference: the discretised influence functional summed over every path (no MPS, no truncation)."""
    op = oq.operators
    values, unitary = np.linalg.eigh(np.asarray(coupling))
    minus = (values[:, None] - values[None, :]).ravel()
    plus = (values[:, None] + values[None, :]).ravel()
    eta = np.asarray(sd.influence_coefficients(dt, steps))
    half = scipy.linalg.expm(-1j * np.asarray(op.commutator(hamiltonian)) * dt / 2)
    to_eig = np.asarray(op.left_right_super(unitary.conj().T, unitary)) @ half
    from_eig = half @ np.asarray(op.left_right_super(unitary, unitary.conj().T))
    dim2 = minus.size
    paths = {(): np.asarray(state).reshape(-1).astype(complex)}
    results = []
    for n in range(steps):
        grown = {}
        for path, vector in paths.items():
            rotated = to_eig @ vector
            for b in range(dim2):
                weight = rotated[b] * np.exp(
                    -minus[b] * (eta[0].real * minus[b] + 1j * eta[0].imag * plus[b])
                )
                for dk in range(1, n + 1):
                    a = path[n - dk]
                    weight *= np.exp(-(eta[dk].real * minus[a] + 1j * eta[dk].imag * plus[a]) * minus[b])
                grown[path + (b,)] = from_eig[:, b] * weight
        paths = grown
        results.append(sum(paths.values()).reshape(len(values), len(values)))
    return np.array(results)


def test_matches_exact_path_sum_with_rotated_coupling(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=3.0, cutoff_type="gaussian", temperature=0.3)
    hamiltonian, coupling = (
        0.7 * op.sigma("z") + 0.2 * op.sigma("x"),
        0.5 * op.sigma("x") + 0.3 * op.sigma("y"),
    )
    _, dyn = run(oq, hamiltonian, coupling, op.spin_dm("up"), sd, 0.5, dt=0.1, epsrel=1e-13)
    reference = exact_path_sum(oq, hamiltonian, coupling, sd, op.spin_dm("up"), 0.1, 5)
    np.testing.assert_allclose(np.asarray(dyn.states)[1:], reference, atol=1e-12)


def test_zero_coupling_gives_lindblad_dynamics(oq):
    op = oq.operators
    gamma = 0.4
    system = oq.System(0.8 * op.sigma("x"), gammas=[gamma], lindblad_operators=[op.sigma("-")])
    sd = oq.PowerLawSD(alpha=0.0, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.0)
    tempo = oq.Tempo(
        system,
        oq.Bath(0.5 * op.sigma("z"), sd),
        oq.TempoParameters(dt=0.1, epsrel=1e-8, dkmax=3),
        op.spin_dm("up"),
        0.0,
    )
    dyn = tempo.compute(2.0, progress_type="silent")
    liouvillian = np.asarray(system.liouvillian())
    expected = [
        scipy.linalg.expm(liouvillian * t) @ np.asarray(op.spin_dm("up")).reshape(4) for t in dyn.times
    ]
    np.testing.assert_allclose(np.asarray(dyn.states).reshape(-1, 4), np.array(expected), atol=1e-12)


def test_cyclic_rotation_permutes_bloch_trajectories(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.0)
    triples = [("x", "z", "y+"), ("y", "x", "z+"), ("z", "y", "x+")]
    trajectories = []
    for h, c, s in triples:
        _, dyn = run(
            oq,
            0.5 * op.sigma(h),
            0.5 * op.sigma(c),
            op.spin_dm(s),
            sd,
            1.0,
            dt=0.1,
            epsrel=1e-5,
            dkmax=5,
            add_correlation_time=8.0,
        )
        trajectories.append(bloch(oq, dyn))
    first, second, third = trajectories
    # (x, y, z) of the first problem is (y, z, x) of the second and (z, x, y) of the third
    np.testing.assert_allclose(first, second[:, [1, 2, 0]], atol=1e-5)
    np.testing.assert_allclose(first, third[:, [2, 0, 1]], atol=1e-5)
    assert np.ptp(first[:, 2]) > 0.1  # the dynamics is not trivial


def test_resumed_computation_is_identical(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=1.0, cutoff_type="exponential", temperature=0.0)

    def make():
        parameters = oq.TempoParameters(dt=0.1, epsrel=1e-4, tcut=1.0)
        return oq.Tempo(
            oq.System(0.5 * op.sigma("x")),
            oq.Bath(0.5 * op.sigma("z"), sd),
            parameters,
            op.spin_dm("up"),
            0.0,
        )

    split = make()
    split.compute(0.2, progress_type="silent")
    resumed = split.compute(0.4, progress_type="silent")
    whole = make().compute(0.4, progress_type="silent")
    np.testing.assert_array_equal(np.asarray(resumed.times), np.asarray(whole.times))
    np.testing.assert_array_equal(np.asarray(resumed.states), np.asarray(whole.states))
    assert len(whole) == 5


def test_repeated_runs_are_bit_identical(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    first = run(
        oq, 0.5 * op.sigma("x"), 0.5 * op.sigma("z"), op.spin_dm("up"), sd, 1.5, dt=0.1, epsrel=1e-4, tcut=0.5
    )
    second = run(
        oq, 0.5 * op.sigma("x"), 0.5 * op.sigma("z"), op.spin_dm("up"), sd, 1.5, dt=0.1, epsrel=1e-4, tcut=0.5
    )
    np.testing.assert_array_equal(np.asarray(first[1].states), np.asarray(second[1].states))


@pytest.mark.parametrize("coupling", ["z", "x+z", "qutrit"])
def test_unique_equals_not_unique(oq, coupling):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=0.2)
    if coupling == "qutrit":
        hamiltonian = np.asarray(op.destroy(3) + op.create(3), dtype=complex)
        coupling_op, state = (
            np.diag([1.0, 0.0, 1.0]).astype(complex),
            np.diag([1.0, 0.0, 0.0]).astype(complex),
        )
    else:
        hamiltonian, state = 0.5 * op.sigma("x"), op.spin_dm("up")
        coupling_op = 0.5 * op.sigma("z") if coupling == "z" else 0.5 * (op.sigma("x") + op.sigma("z"))
    states = [
        np.asarray(
            run(
                oq,
                hamiltonian,
                coupling_op,
                state,
                sd,
                1.0,
                dt=0.1,
                epsrel=1e-12,
                dkmax=4,
                add_correlation_time=1.0,
                unique=u,
            )[1].states
        )
        for u in (False, True)
    ]
    np.testing.assert_allclose(states[1], states[0], atol=1e-10)


def test_converges_in_epsrel_dt_and_memory(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=3.0, cutoff_type="exponential", temperature=0.0)
    args = (0.5 * op.sigma("x"), 0.5 * op.sigma("z"), op.spin_dm("up"), sd, 1.2)

    def trajectory(**parameters):
        dyn = run(oq, *args, **parameters)[1]
        return np.asarray(dyn.expectations(op.sigma("z"), real=True)[1])

    reference = trajectory(dt=0.1, epsrel=1e-10, tcut=1.2)
    errors = [
        np.abs(trajectory(dt=0.1, epsrel=eps, tcut=1.2) - reference).max() for eps in (1e-2, 1e-4, 1e-7)
    ]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-5
    memory = [np.abs(trajectory(dt=0.1, epsrel=1e-10, tcut=t) - reference).max() for t in (0.1, 0.3, 0.6)]
    assert memory[0] > memory[1] > memory[2]
    fine = trajectory(dt=0.025, epsrel=1e-9)[-1]
    steps = [abs(trajectory(dt=dt, epsrel=1e-9)[-1] - fine) for dt in (0.2, 0.1, 0.05)]
    assert steps[0] > steps[1] > steps[2]


def test_time_dependent_system(oq):
    """A TimeDependentSystem with a constant Hamiltonian equals the System run."""
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=3.0, cutoff_type="exponential", temperature=0.0)
    hamiltonian = np.asarray(0.5 * op.sigma("x"))
    bath, parameters = oq.Bath(0.5 * op.sigma("z"), sd), oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=3)
    constant = oq.Tempo(oq.System(hamiltonian), bath, parameters, op.spin_dm("up"), 0.0).compute(
        0.5, "silent"
    )
    driven = oq.Tempo(oq.TimeDependentSystem(lambda t: hamiltonian), bath, parameters, op.spin_dm("up"), 0.0)
    np.testing.assert_allclose(
        np.asarray(driven.compute(0.5, "silent").states), np.asarray(constant.states), atol=1e-10
    )


def test_parameters_validation_and_read_only(oq):
    p = oq.TempoParameters(dt=0.1, epsrel=1e-4, tcut=0.3)
    assert p.dkmax == 3 and p.tcut == 0.3
    assert oq.TempoParameters(dt=0.1, epsrel=1e-4, dkmax=4).tcut == pytest.approx(0.4)
    assert oq.TempoParameters(dt=0.1, epsrel=1e-4).dkmax is None
    with pytest.raises(AttributeError):
        p.dt = 0.2
    with pytest.raises(AttributeError):
        del p.epsrel
    cases = [
        (TypeError, dict(dt="fast", epsrel=1e-4)),
        (ValueError, dict(dt=-0.1, epsrel=1e-4)),
        (ValueError, dict(dt=0.1, epsrel=0.0)),
        (AssertionError, dict(dt=0.1, epsrel=1e-4, tcut=1.0, dkmax=10)),
        (TypeError, dict(dt=0.1, epsrel=1e-4, dkmax=2.0)),
        (ValueError, dict(dt=0.1, epsrel=1e-4, dkmax=-1)),
        (ValueError, dict(dt=0.1, epsrel=1e-4, tcut=-1.0)),
        (ValueError, dict(dt=0.1, epsrel=1e-4, add_correlation_time=-1.0)),
        (ValueError, dict(dt=0.1, epsrel=1e-4, liouvillian_epsrel=0.0)),
    ]
    for error, kwargs in cases:
        with pytest.raises(error):
            oq.TempoParameters(**kwargs)


def test_bad_input_raises_clear_errors(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=1.0, cutoff_type="exponential", temperature=0.0)
    system, bath = oq.System(0.5 * op.sigma("x")), oq.Bath(0.5 * op.sigma("z"), sd)
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-4, dkmax=2)
    good = dict(
        system=system, bath=bath, parameters=parameters, initial_state=op.spin_dm("up"), start_time=0.0
    )
    qutrit_bath = oq.Bath(np.diag([1.0, 0.0, -1.0]), sd)
    cases = [
        (TypeError, dict(system="not a system")),
        (AssertionError, dict(bath="not a bath")),
        (AssertionError, dict(parameters={"dt": 0.1})),
        (TypeError, dict(initial_state=[[1, 0], [0, 0]])),
        (ValueError, dict(initial_state=np.eye(3) / 3)),
        (ValueError, dict(initial_state=np.array([[np.nan, 0], [0, 1.0]]))),
        (TypeError, dict(start_time="now")),
        (ValueError, dict(bath=qutrit_bath)),
    ]
    for error, change in cases:
        with pytest.raises(error) as info:
            oq.Tempo(**{**good, **change})
        assert str(info.value)
    with pytest.raises(AssertionError):
        oq.Tempo(**good, unique="yes")
    with pytest.raises(TypeError):
        oq.Tempo(**good).compute("later")
    with pytest.raises(AssertionError):
        oq.Bath(np.array([[0, 1], [0, 0]]), sd)  # not Hermitian


def test_any_matrix_is_an_initial_state_and_evolves_linearly(oq):
    """As in OQuPy 0.5, the initial state need not be a density matrix (for instance ``B @ rho`` for a two-time
    correlation): the reduced dynamics are a linear map, so a combination of initial matrices evolves into the same
    combination of their evolutions."""
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=3.0, cutoff_type="exponential", temperature=0.5)
    args = (0.5 * op.sigma("x"), 0.5 * op.sigma("z"))
    options = dict(dt=0.1, epsrel=1e-9, dkmax=4)
    first, second = op.spin_dm("up"), np.array([[0.0, 1.0], [0.0, 0.0]])  # the second is not Hermitian
    combination = first + 2.0j * second  # trace 1, neither Hermitian nor positive
    evolved = [np.asarray(run(oq, *args, state, sd, 0.5, **options)[1].states) for state in (first, second)]
    _, combined = run(oq, *args, combination, sd, 0.5, **options)
    np.testing.assert_allclose(np.asarray(combined.states), evolved[0] + 2.0j * evolved[1], atol=1e-6)
    assert np.abs(evolved[1][-1]).max() > 0.05  # the non-Hermitian start did evolve


def test_step_count_is_robust_to_rounding(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=1.0, cutoff_type="exponential", temperature=0.0)
    _, dyn = run(
        oq, 0.5 * op.sigma("x"), 0.5 * op.sigma("z"), op.spin_dm("up"), sd, 0.3, dt=0.1, epsrel=1e-4, dkmax=2
    )
    assert len(dyn) == 4 and np.asarray(dyn.times)[-1] == pytest.approx(0.3)


def test_guessed_parameters_warn_and_run(oq):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=0.0)
    bath, system = oq.Bath(0.5 * op.sigma("z"), sd), oq.System(0.5 * op.sigma("x"))
    with pytest.warns(UserWarning, match="No guarantee"):
        parameters = oq.guess_tempo_parameters(bath, 0.0, 2.0, system, tolerance=0.01)
    assert 0 < parameters.dt <= 1.0 and parameters.dkmax >= 1 and 0 < parameters.epsrel < 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dyn = oq.tempo_compute(
            system, bath, op.spin_dm("up"), 0.0, 0.5, tolerance=0.05, progress_type="silent"
        )
    assert len(dyn) >= 2
    with pytest.raises(ValueError):
        oq.guess_tempo_parameters(bath, 1.0, 0.5)
    with pytest.raises(AssertionError):
        oq.tempo_compute(system, bath, op.spin_dm("up"), 0.0, 0.5, tolerance=None)


def test_progress_bar_reports(oq, capsys):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=1.0, cutoff_type="exponential", temperature=0.0)
    tempo = oq.Tempo(
        oq.System(0.5 * op.sigma("x")),
        oq.Bath(0.5 * op.sigma("z"), sd),
        oq.TempoParameters(dt=0.1, epsrel=1e-4, dkmax=2),
        op.spin_dm("up"),
        0.0,
    )
    tempo.compute(0.3, progress_type="bar")
    assert "TEMPO" in capsys.readouterr().err


def test_svd_falls_back_to_gesvd_when_gesdd_fails(oq, monkeypatch):
    """``_mps.lapack_svd`` (NumPy's ``svd`` inside kernels of ``oqupy_numpy``) retries with ``gesvd`` when
    ``gesdd`` reports no convergence (``info > 0``) instead of returning its output."""
    if oq.__name__ != "oqupy_numpy":
        pytest.skip("the gesdd -> gesvd retry is NumPy-only (JAX's SVD does not raise)")
    mps = __import__(f"{oq.__name__}._mps", fromlist=["svd"])
    calls = []

    def failing_gesdd(a, **kwargs):
        calls.append(a.shape)
        size = min(a.shape)
        return np.zeros((a.shape[0], size)), np.zeros(size), np.zeros((size, a.shape[1])), 1

    monkeypatch.setattr(scipy.linalg.lapack, "dgesdd", failing_gesdd)
    for shape in ((6, 4), (4, 6)):
        matrix = np.random.default_rng(3).normal(size=shape)
        left, values, right = mps.svd(matrix)
        np.testing.assert_allclose((left * values) @ right, matrix, atol=1e-13)
    assert calls == [(6, 4), (6, 4)]  # the wide matrix went to gesdd as its transpose


def test_dynamics_named_and_printed_as_oqupy05(oq):
    """Results carry OQuPy 0.5's metadata: unnamed, described by the computation that made them; ``print`` lists
    the number of time steps and the time span (as the tutorials show)."""
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, cutoff_type="exponential")
    bath = oq.Bath(0.5 * op.sigma("z"), sd)
    parameters = oq.TempoParameters(dt=0.1, dkmax=2, epsrel=1e-6)
    tempo = oq.Tempo(oq.System(op.sigma("x")), bath, parameters, op.spin_dm("z+"), 0.0, name="my tempo")
    dynamics = tempo.compute(0.2, progress_type="silent")
    assert dynamics.name == "__unnamed__" and dynamics.description == "computed from 'my tempo' tempo"
    assert str(dynamics).endswith(
        "Dynamics object: __unnamed__\n computed from 'my tempo' tempo\n"
        "  length        = 3 timesteps \n  min time      = 0.0 \n  max time      = 0.2 \n"
    )
    assert str(oq.Dynamics()).endswith("  length        = 0 timesteps \n")
    pt = oq.pt_tempo_compute(bath, 0.0, 0.2, parameters, progress_type="silent", description="my pt")
    assert pt.name == "__unnamed__" and pt.description == "my pt"
    from_pt = oq.compute_dynamics(
        oq.System(op.sigma("x")), op.spin_dm("z+"), process_tensor=pt, progress_type="silent"
    )
    assert from_pt.name == "__unnamed__" and from_pt.description == "__no_description__"
