"""Uniform (time-translation-invariant) process tensors: finite PT-TEMPO equivalence, closed forms, steady states,
files and bad input."""

import warnings

import numpy as np
import pytest

pytestmark = pytest.mark.device  # run on accelerators by benchmarks/device_check.sh

OHMIC = dict(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)


def states(dynamics):
    return np.asarray(dynamics.states)


def uniform_pt(oq, coupling, sd_args=OHMIC, unique=False, **parameters):
    bath = oq.Bath(coupling, oq.PowerLawSD(**sd_args))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short memories warn (tested below)
        return oq.TtiPtTempo(bath, 0.0, oq.TempoParameters(**parameters), unique=unique).get_process_tensor(
            progress_type="silent"
        )


def finite_pt(oq, coupling, end, sd_args=OHMIC, unique=False, **parameters):
    bath = oq.Bath(coupling, oq.PowerLawSD(**sd_args))
    pt_tempo = oq.PtTempo(bath, 0.0, end, oq.TempoParameters(**parameters), unique=unique)
    return pt_tempo.get_process_tensor(progress_type="silent")


SYSTEM_H = (("x", 0.5), ("z", 0.3))


def system_of(oq):
    op = oq.operators
    return oq.System(sum(c * op.sigma(axis) for axis, c in SYSTEM_H))


EQUIVALENCE = {
    "diagonal": dict(coupling="z", unique=False),
    "rotated-unique": dict(coupling="x", unique=True),
}


@pytest.mark.parametrize("name", sorted(EQUIVALENCE))
def test_uniform_equals_finite_pt_tempo_on_its_steps(oq, name):
    """Same dt, dkmax and epsrel: the uniform PT reproduces PT-TEMPO's dynamics to the truncation level."""
    case = EQUIVALENCE[name]
    op = oq.operators
    coupling = 0.5 * op.sigma(case["coupling"])
    system = system_of(oq)
    parameters = dict(dt=0.1, epsrel=1e-8, dkmax=6)
    finite = finite_pt(oq, coupling, 2.0, unique=case["unique"], **parameters)
    uniform = uniform_pt(oq, coupling, unique=case["unique"], **parameters)
    expected = states(
        oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=finite, progress_type="silent")
    )
    got = states(
        oq.compute_dynamics(
            system, op.spin_dm("up"), num_steps=20, process_tensor=uniform, progress_type="silent"
        )
    )
    assert got.shape == expected.shape == (21, 2, 2)
    # measured: 1.5e-7 (diagonal) and 1.2e-7 (rotated), the truncation at epsrel 1e-8
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-7)
    assert np.abs(expected[-1] - expected[0]).max() > 0.1  # the bath and the system matter


def test_uniform_with_tail_equals_finite_until_the_tail_acts(oq):
    """With add_correlation_time the two agree on the first dkmax steps; later the finite tail is shorter for the
    first add_correlation_time / dt lines (no earlier history), the uniform one is stationary."""
    op = oq.operators
    coupling = 0.5 * op.sigma("z")
    parameters = dict(dt=0.1, epsrel=1e-8, dkmax=4, add_correlation_time=0.5)
    finite = finite_pt(oq, coupling, 1.2, **parameters)
    uniform = uniform_pt(oq, coupling, **parameters)
    system = system_of(oq)
    expected = states(
        oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=finite, progress_type="silent")
    )
    got = states(
        oq.compute_dynamics(
            system, op.spin_dm("up"), num_steps=12, process_tensor=uniform, progress_type="silent"
        )
    )
    difference = np.abs(got - expected).max(axis=(1, 2))
    # measured: < 1e-8 up to step 4, then up to 8e-3 (the tails differ by up to 0.5 in length there)
    assert difference[:5].max() < 1e-7
    assert 1e-4 < difference[5:].max() < 2e-2


def test_super_ohmic_pure_dephasing_against_closed_form(oq):
    """H = 0, coupling sigma_z / 2: y(t) = exp(-Re eta(t)), within and far beyond the memory (dkmax = 25, t = 24)."""
    op = oq.operators
    sd_args = dict(alpha=0.3, zeta=3, cutoff=5.0, cutoff_type="exponential", temperature=0.0)
    pt = uniform_pt(oq, 0.5 * op.sigma("z"), sd_args, dt=0.4, dkmax=25, epsrel=1e-7)
    dynamics = oq.compute_dynamics(
        oq.System(0 * op.sigma("x")),
        op.spin_dm("y+"),
        num_steps=60,
        process_tensor=pt,
        progress_type="silent",
    )
    times, sy = dynamics.expectations(op.sigma("y"), real=True)
    x = (5.0 * np.asarray(times)) ** 2
    exact = np.exp(-2 * 0.3 * (1 + (x - 1) / (x + 1) ** 2))
    # measured: 2e-5 up to t = 10 (= the memory; the truncation), then the lags beyond it are missing: 1.1e-4
    # at t = 24
    np.testing.assert_allclose(np.asarray(sy)[:26], exact[:26], rtol=0, atol=5e-5)
    np.testing.assert_allclose(np.asarray(sy), exact, rtol=0, atol=2e-4)
    assert abs(float(np.asarray(sy)[25]) - 0.548680) < 5e-5  # t = 10


def test_independent_boson_correlation_at_long_lags_converges_in_memory(oq):
    """<sigma_x(t) sigma_x(0)> for coupling |up><up| equals exp(-eta(t) - i (eps + lambda) t), to t = 2.5 memories."""
    op = oq.operators
    alpha, cutoff, temperature, eps = 0.05, 10.0, 2.0, 5.0
    shift = 2 * alpha * cutoff
    sd_args = dict(alpha=alpha, zeta=1, cutoff=cutoff, cutoff_type="exponential", temperature=temperature)
    sd = oq.PowerLawSD(**sd_args)
    system = oq.System(0.5 * (eps + shift) * op.sigma("z"))
    errors = []
    for dkmax in (20, 40):
        pt = uniform_pt(oq, op.spin_dm("z+"), sd_args, unique=True, dt=0.05, epsrel=1e-6, dkmax=dkmax)
        times, corr = oq.compute_correlations_nt(
            system,
            pt,
            [op.sigma("x"), op.sigma("x")],
            [0.0, (0.0, 5.0)],
            ["left", "left"],
            initial_state=op.spin_dm("z-"),
            progress_type="silent",
        )
        t = np.asarray(times[1])
        assert corr.shape == (1, 101) and np.allclose(t, 0.05 * np.arange(101))
        eta = np.array([sd.correlation_2d_integral(delta=s, time_1=0.0, shape="upper-triangle") for s in t])
        exact = np.exp(-eta - 1j * (eps + shift) * t)
        errors.append(np.abs(corr[0] - exact).max())
    # measured: 6.0e-3 with a memory of 1.0, 9.8e-4 with 2.0 (the polaron shift beyond the memory is lost)
    assert errors[1] < 2e-3 and errors[0] > 3 * errors[1]


def test_long_time_dynamics_converge_to_the_steady_state_and_keep_the_trace(oq):
    op = oq.operators
    pt = uniform_pt(oq, 0.5 * op.sigma("z"), dt=0.1, epsrel=1e-7, dkmax=6)
    system = system_of(oq)
    rhos = states(
        oq.compute_dynamics(
            system, op.spin_dm("up"), num_steps=400, process_tensor=pt, progress_type="silent"
        )
    )
    steady = np.asarray(oq.compute_steady_state(system, pt))
    # measured: 2e-6 at t = 40 (still relaxing: the last 100 steps move it by 5e-7); trace kept to 1e-12
    assert np.abs(rhos[-1] - steady).max() < 2e-5
    assert np.abs(rhos[0] - steady).max() > 0.1
    assert np.abs(np.trace(rhos, axis1=1, axis2=2) - 1).max() < 1e-10
    np.testing.assert_allclose(steady, steady.conj().T, atol=1e-14)
    assert abs(np.trace(steady) - 1) < 1e-14


def test_steady_state_approaches_the_gibbs_state_at_weak_coupling(oq):
    """T > 0, alpha -> 0: the steady state tends to exp(-H/T)/Z, with an error that shrinks with alpha."""
    op = oq.operators
    temperature = 1.0
    hamiltonian = np.asarray(0.5 * op.sigma("x") + 0.3 * op.sigma("z"))
    values, vectors = np.linalg.eigh(hamiltonian)
    gibbs = (vectors * np.exp(-values / temperature)) @ vectors.conj().T
    gibbs /= np.trace(gibbs)
    errors = []
    for alpha in (0.04, 0.01):
        sd_args = dict(alpha=alpha, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=temperature)
        pt = uniform_pt(oq, 0.5 * op.sigma("z"), sd_args, dt=0.1, epsrel=1e-6, dkmax=40)
        errors.append(np.abs(np.asarray(oq.compute_steady_state(oq.System(hamiltonian), pt)) - gibbs).max())
    # measured: 9.2e-3 at alpha 0.04, 1.0e-3 at 0.01 (the mean-force correction, first order in alpha, over a
    # floor from the memory cut-off: with a memory of 1.5 instead of 4 the floor is 1.2e-2 at any alpha)
    assert errors[1] < 2e-3 and errors[0] > 4 * errors[1]


def test_batch_and_mixed_environments(oq):
    """compute_dynamics_batch with a uniform PT equals single runs; a uniform and a finite bath at alpha/2 each
    reproduce one finite bath at alpha (eta is linear in alpha)."""
    op = oq.operators
    coupling = 0.5 * op.sigma("z")
    half = dict(OHMIC, alpha=0.15)
    parameters = dict(dt=0.1, epsrel=1e-9, dkmax=5)
    uniform_half = uniform_pt(oq, coupling, half, **parameters)
    systems = [oq.System(w * op.sigma("x")) for w in (0.3, 0.7)]
    times, batch = oq.compute_dynamics_batch(
        systems, op.spin_dm("up"), num_steps=12, process_tensor=uniform_half, progress_type="silent"
    )
    for k, system in enumerate(systems):
        single = states(
            oq.compute_dynamics(
                system, op.spin_dm("up"), num_steps=12, process_tensor=uniform_half, progress_type="silent"
            )
        )
        np.testing.assert_allclose(np.asarray(batch)[k], single, rtol=0, atol=1e-12)
    finite_half = finite_pt(oq, coupling, 1.2, half, **parameters)
    finite_full = finite_pt(oq, coupling, 1.2, OHMIC, **parameters)
    mixed = states(
        oq.compute_dynamics(
            systems[1], op.spin_dm("up"), process_tensor=[uniform_half, finite_half], progress_type="silent"
        )
    )
    one = states(
        oq.compute_dynamics(systems[1], op.spin_dm("up"), process_tensor=finite_full, progress_type="silent")
    )
    np.testing.assert_allclose(mixed, one, rtol=0, atol=1e-6)


def test_process_tensor_interface(oq):
    op = oq.operators
    pt = uniform_pt(oq, 0.5 * op.sigma("x"), dt=0.1, epsrel=1e-6, dkmax=3)
    chi = pt.bond_dimension
    assert isinstance(pt, oq.process_tensor.BaseProcessTensor) and pt.max_step == float("inf")
    with pytest.raises(OverflowError):
        len(pt)
    first, later = pt.get_mpo_tensor(0), pt.get_mpo_tensor(7)
    assert first.shape == (1, chi, 4, 4) and later.shape == (chi, chi, 4, 4)
    np.testing.assert_array_equal(pt.get_raw_mpo_tensor(3), pt.get_raw_mpo_tensor(9))
    np.testing.assert_allclose(pt.get_cap_tensor(0), [1.0])
    np.testing.assert_array_equal(pt.get_cap_tensor(5), pt.right_boundary)
    assert pt.transform_in is not None  # sigma_x coupling: the tensors live in its eigenbasis
    np.testing.assert_allclose(pt.left_boundary @ pt.right_boundary, 1.0, atol=1e-12)
    assert "bond dimension" in str(pt)


def test_uniform_file_round_trip_is_bitwise_and_refused_where_it_must_be(oq, tmp_path):
    op = oq.operators
    pt = uniform_pt(oq, 0.5 * op.sigma("x"), dt=0.1, epsrel=1e-6, dkmax=3)
    path = tmp_path / "uniform.hdf5"
    pt.export(str(path))
    back = oq.import_process_tensor(str(path))
    assert isinstance(back, oq.TtiProcessTensor)
    for name in ("cell", "left_boundary", "right_boundary", "transform_in", "transform_out"):
        np.testing.assert_array_equal(getattr(back, name), getattr(pt, name))
    assert back.dt == pt.dt and back.description == pt.description
    with pytest.raises(FileExistsError):
        pt.export(str(path))
    pt.export(str(path), overwrite=True)
    with pytest.raises(oq.process_tensor.ProcessTensorFileError):
        oq.FileProcessTensor("read", str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["uniform.hdf5"]  # no partial file left


def test_interrupted_uniform_export_leaves_nothing(oq, tmp_path, monkeypatch):
    op = oq.operators
    pt = uniform_pt(oq, 0.5 * op.sigma("z"), dt=0.1, epsrel=1e-6, dkmax=3)
    import h5py

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(h5py.Group, "create_dataset", broken)
    with pytest.raises(KeyboardInterrupt):
        pt.export(str(tmp_path / "cut.hdf5"))
    assert list(tmp_path.iterdir()) == []


def test_bad_input(oq):
    op = oq.operators
    bath = oq.Bath(0.5 * op.sigma("z"), oq.PowerLawSD(**OHMIC))
    with pytest.raises(ValueError, match="finite memory"):
        oq.TtiPtTempo(bath, 0.0, oq.TempoParameters(dt=0.1, epsrel=1e-6))
    with pytest.raises(AssertionError):
        oq.TtiPtTempo("bath", 0.0, oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=3))
    pt = uniform_pt(oq, 0.5 * op.sigma("z"), dt=0.1, epsrel=1e-6, dkmax=3)
    system = system_of(oq)
    with pytest.raises(ValueError, match="num_steps"):
        oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt)
    finite = finite_pt(oq, 0.5 * op.sigma("z"), 0.3, dt=0.1, epsrel=1e-6, dkmax=3)
    with pytest.raises(TypeError):
        oq.compute_steady_state(system, finite)
    with pytest.raises(ValueError):
        oq.compute_steady_state(oq.System(np.identity(3)), pt)


def test_short_memory_warns_and_long_memory_does_not(oq):
    op = oq.operators
    bath = oq.Bath(0.5 * op.sigma("z"), oq.PowerLawSD(**OHMIC))
    with pytest.warns(UserWarning, match="too short"):
        oq.TtiPtTempo(bath, 0.0, oq.TempoParameters(dt=0.1, epsrel=1e-8, dkmax=2)).compute(
            progress_type="silent"
        )
    tti = oq.TtiPtTempo(bath, 0.0, oq.TempoParameters(dt=0.1, epsrel=1e-4, dkmax=10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tti.compute(progress_type="silent")
    assert len(tti.bond_dimensions) == 10
    assert 0.0 < tti.discarded_weight < 1e-4
    assert tti.max_bond_dimension == max(tti.bond_dimensions)


def test_time_dependent_system_and_control_through_a_uniform_pt(oq):
    """A driven system and a control operation see the uniform PT as they see the finite one."""
    op = oq.operators
    coupling = 0.5 * op.sigma("z")
    parameters = dict(dt=0.1, epsrel=1e-8, dkmax=4)
    finite = finite_pt(oq, coupling, 1.0, **parameters)
    uniform = uniform_pt(oq, coupling, **parameters)
    sx, sz = np.asarray(op.sigma("x")), np.asarray(op.sigma("z"))
    system = oq.TimeDependentSystem(lambda t: 0.5 * np.cos(2.0 * t) * sx + 0.3 * sz)
    control = oq.Control(2)
    control.add_single(3, oq.operators.left_right_super(sx, sx), post=True)
    common = dict(control=control, progress_type="silent")
    expected = states(oq.compute_dynamics(system, op.spin_dm("up"), process_tensor=finite, **common))
    got = states(
        oq.compute_dynamics(system, op.spin_dm("up"), num_steps=10, process_tensor=uniform, **common)
    )
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-7)
    assert np.abs(expected[4] - expected[3]).max() > 0.3  # the flip acted


SPIN_1_X = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]) / np.sqrt(2)

REAL_BASIS_BATHS = {
    # coupling, unique, system Hamiltonian
    "diagonal": (lambda op: 0.5 * op.sigma("z"), False, lambda op: 0.5 * op.sigma("x") + 0.3 * op.sigma("z")),
    "rotated-unique": (
        lambda op: 0.5 * op.sigma("x"),
        True,
        lambda op: 0.5 * op.sigma("x") + 0.3 * op.sigma("z"),
    ),
    "non-diagonal": (
        lambda op: 0.3 * op.sigma("x") + 0.4 * op.sigma("z"),
        False,
        lambda op: 0.5 * op.sigma("y") + 0.2 * op.sigma("z"),
    ),
    "spin-1": (lambda op: SPIN_1_X, True, lambda op: np.diag([1.0, 0.0, -1.0]) + 0.5 * SPIN_1_X),
}


def complex_gauge(oq, pt, seed=3):
    """The same uniform process tensor in a random complex gauge of its bond: the same physics, no real form."""
    rng = np.random.default_rng(seed)
    chi = pt.bond_dimension
    gauge, _ = np.linalg.qr(rng.normal(size=(chi, chi)) + 1j * rng.normal(size=(chi, chi)))
    cell = np.einsum("pq,qfa,fg->pga", gauge.conj().T, pt.cell, gauge)
    return oq.TtiProcessTensor(
        pt.hilbert_space_dimension,
        pt.dt,
        cell,
        pt.left_boundary @ gauge,
        gauge.conj().T @ pt.right_boundary,
        pt.transform_in,
        pt.transform_out,
    )


def real_form(oq, pt):
    import importlib

    return importlib.import_module(f"{oq.__name__}._dynamics_setup").real_uniform(pt)


@pytest.mark.parametrize("name", sorted(REAL_BASIS_BATHS))
def test_uniform_cell_is_real_in_the_swap_basis_and_its_real_loop_equals_the_complex_one(oq, name):
    """TtiPtTempo builds in the real basis of (i, j) -> (j, i): its cell is real there, and the dynamics of a
    Hermitian system through it (the real step loop) equal those through the same process tensor in a complex
    gauge (the complex loop) to rounding, for a Hamiltonian, a Lindbladian and a batch."""
    coupling, unique, hamiltonian = REAL_BASIS_BATHS[name]
    op = oq.operators
    pt = uniform_pt(oq, coupling(op), unique=unique, dt=0.1, epsrel=1e-6, dkmax=3 if name == "spin-1" else 4)
    gauged = complex_gauge(oq, pt)
    assert real_form(oq, pt) is not None and real_form(oq, gauged) is None
    dim = pt.hilbert_space_dimension
    rho = np.zeros((dim, dim), dtype=complex)
    rho[0, 0] = 1.0
    lindblad = np.triu(np.ones((dim, dim)), 1)
    systems = [
        oq.System(hamiltonian(op)),
        oq.System(hamiltonian(op), gammas=[0.1], lindblad_operators=[lindblad]),
    ]
    for system in systems:
        got, expected = (
            states(oq.compute_dynamics(system, rho, num_steps=60, process_tensor=p, progress_type="silent"))
            for p in (pt, gauged)
        )
        # measured: 2e-15 to 4e-15
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        assert np.abs(got[-1] - got[0]).max() > 0.1
    _, batch = oq.compute_dynamics_batch(
        systems, rho, num_steps=20, process_tensor=pt, progress_type="silent"
    )
    _, batch_gauged = oq.compute_dynamics_batch(
        systems, rho, num_steps=20, process_tensor=gauged, progress_type="silent"
    )
    np.testing.assert_allclose(np.asarray(batch), np.asarray(batch_gauged), rtol=0, atol=1e-12)


def test_non_hermitian_steps_take_the_complex_loop_with_the_same_result(oq):
    """A non-Hermitian initial state and a control that breaks Hermiticity (as in correlation functions) make the
    step complex in the real basis: the complex loop runs (real_inputs gives None) and equals the gauged run."""
    import importlib

    setup = importlib.import_module(f"{oq.__name__}._dynamics_setup")
    op = oq.operators
    pt = uniform_pt(oq, 0.5 * op.sigma("z"), dt=0.1, epsrel=1e-7, dkmax=5)
    gauged = complex_gauge(oq, pt)
    hermitian = oq.System(0.5 * op.sigma("x"))
    control = oq.Control(2)
    control.add_single(3, oq.operators.left_super(np.asarray(op.sigma("+"))), post=True)
    cases = [
        (hermitian, np.asarray(op.sigma("+")), None),
        (hermitian, op.spin_dm("up"), control),
    ]
    for system, rho, ctrl in cases:
        environments = [setup.environment(pt, 8)]
        prop_1, prop_2 = setup.propagators(system, 0.1, 0.0, 8, None, 1e-7)
        controls = setup.controls(ctrl, 8, 4, 0.1, 0.0)
        matrices = setup.step_matrices(environments, controls, prop_1, prop_2)
        vector = np.asarray(rho, dtype=complex).reshape(4) @ controls.pre[0].T
        assert setup.real_inputs(environments, matrices, vector) is None
        got, expected = (
            states(
                oq.compute_dynamics(
                    system, rho, num_steps=8, process_tensor=p, control=ctrl, progress_type="silent"
                )
            )
            for p in (pt, gauged)
        )
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    environments = [setup.environment(pt, 8)]
    prop_1, prop_2 = setup.propagators(hermitian, 0.1, 0.0, 8, None, 1e-7)
    controls = setup.controls(None, 8, 4, 0.1, 0.0)
    matrices = setup.step_matrices(environments, controls, prop_1, prop_2)
    vector = np.asarray(op.spin_dm("up"), dtype=complex).reshape(4)
    assert setup.real_inputs(environments, matrices, vector) is not None


def test_spin_1_non_diagonal_coupling_equals_finite_pt_tempo(oq):
    """Spin 1, coupling S_x (its eigenbasis transforms leave trace weights of 1e-17 where a path index is not
    traced): the uniform process tensor reproduces PT-TEMPO's dynamics to the truncation level."""
    parameters = dict(dt=0.1, epsrel=1e-7, dkmax=4)
    system = oq.System(np.diag([1.0, 0.0, -1.0]) + 0.5 * SPIN_1_X)
    rho = np.diag([1.0, 0.0, 0.0]).astype(complex)
    finite = finite_pt(oq, SPIN_1_X, 1.5, unique=True, **parameters)
    uniform = uniform_pt(oq, SPIN_1_X, unique=True, **parameters)
    expected = states(oq.compute_dynamics(system, rho, process_tensor=finite, progress_type="silent"))
    got = states(
        oq.compute_dynamics(system, rho, num_steps=15, process_tensor=uniform, progress_type="silent")
    )
    # measured: 1.2e-6 (0.53 before the trace weights' rounding was taken as zero)
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-6)
    assert np.abs(expected[-1] - expected[0]).max() > 0.1
