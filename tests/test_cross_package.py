"""The two generated packages agree on the same inputs, and the JAX package is genuinely JAX."""

import importlib
import inspect
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.device  # run on accelerators by benchmarks/device_check.sh

onp = importlib.import_module("oqupy_numpy")
ojax = importlib.import_module("oqupy_jax")
jax = importlib.import_module("jax")


def test_numpy_package_imports_without_jax():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, *args):\n"
        "        if name == 'jax' or name.startswith('jax.'):\n"
        "            raise ImportError('jax is blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import oqupy_numpy\n"
        "import oqupy_numpy.util, oqupy_numpy.operators\n"
        "assert 'jax' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_jax_package_is_64_bit_and_keeps_the_array_boundary():
    # concrete results and host constants are NumPy arrays; device kernels return JAX arrays
    assert jax.config.jax_enable_x64
    x = ojax.operators.sigma("x")
    assert type(x) is np.ndarray and x.dtype == np.complex128
    delta = ojax.util.create_delta(np.ones((2, 3)), [0, 1, 1])
    assert isinstance(delta, jax.Array)


SLICE = [
    ("sigma", lambda p: p.operators.sigma("y")),
    ("destroy", lambda p: p.operators.destroy(5)),
    ("cross", lambda p: p.operators.cross_left_right_super(*(p.operators.sigma(k) for k in "xyz+"))),
    ("preparation", lambda p: p.operators.preparation(p.operators.spin_dm("y+"))),
    ("delta", lambda p: p.util.create_delta(np.arange(24.0).reshape(2, 3, 4) + 1j, [0, 1, 2, 2])),
    ("singleton", lambda p: p.util.add_singleton(np.arange(6.0).reshape(2, 3), 1)),
    (
        "dynamics",
        lambda p: p.Dynamics([0.0, 0.1], [p.operators.spin_dm("up"), p.operators.spin_dm("x+")]).expectations(
            p.operators.sigma("x")
        )[1],
    ),
]


@pytest.mark.parametrize(("name", "scenario"), SLICE, ids=[s[0] for s in SLICE])
def test_packages_agree(name, scenario):
    a, b = np.asarray(scenario(onp)), np.asarray(scenario(ojax))
    assert a.shape == b.shape and b.dtype == a.dtype
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


#: Example arguments for every jitted kernel of oqupy_jax (a new kernel without an entry fails the test below).
KERNEL_ARGUMENTS = {
    "oqupy_jax._tensors.embed_delta": lambda: ((np.ones((2, 3)),), {"index_scrambling": (1, 0, 0, 1)}),
    "oqupy_jax._mps.svd": lambda: ((np.arange(12.0).reshape(4, 3) ** 2 + 1j * np.eye(4, 3),), {}),
    "oqupy_jax._mps.kept_rank": lambda: ((np.array([3.0, 2.0, 2.0 * (1 - 1e-12), 1e-9]), 1e-6), {}),
    "oqupy_jax._chain_mps.apply_site_operator": lambda: (
        (np.ones((2, 4, 3, 5)), np.arange(16.0).reshape(4, 4)),
        {},
    ),
    "oqupy_jax._chain_mps.absorb_process_tensor": lambda: (
        (np.ones((2, 4, 3, 5)), np.ones((3, 6, 4, 4)) + 1j),
        {},
    ),
    "oqupy_jax._chain_mps.apply_nn_gate": lambda: _nn_gate_arguments((4, 2, 2)),
    "oqupy_jax._chain_mps.trace_site": lambda: (
        (np.ones((2, 4, 3, 5)), np.arange(3.0) + 1j, np.array([1.0, 0.0, 0.0, 1.0])),
        {},
    ),
    "oqupy_jax._chain_mps._grow_left": lambda: ((np.ones(2), np.ones((2, 3)) + 1j, np.arange(3.0)), {}),
    "oqupy_jax._chain_mps._grow_right": lambda: ((np.ones(3), np.ones((2, 3)) + 1j, np.arange(2.0)), {}),
    "oqupy_jax._propagation.read_out_batch": lambda: ((np.ones((3, 2, 4)), (np.ones(2),)), {}),
    "oqupy_jax._propagation.propagate_batch": lambda: (
        (
            np.ones((2, 2, 4)) + 0.5j,
            (),
            (None,),
            ojax._propagation.Step(
                np.stack([np.stack([np.eye(4), 2 * np.eye(4), np.eye(4)[::-1]])] * 2) + 0j,
                np.stack([np.stack([np.eye(4)] * 3)] * 2) + 0j,
                (np.arange(3 * 4 * 2 * 2.0).reshape(3, 4, 2, 2) + 1j,),  # [step, x, p, f]
                (np.ones((3, 2)) + 0j,),
                np.arange(3),
            ),
        ),
        {},
    ),
    "oqupy_jax._real_powers.real_powers": lambda: (
        (
            np.arange(4 * 2 * 3.0).reshape(4, 2, 3) / 10.0,  # [x, n, chi]
            ojax._real_powers.RealStep(
                np.arange(5 * 4.0).reshape(5, 4) / 20.0,  # gather [K, x]
                np.arange(5 * 3 * 3.0).reshape(5, 3, 3) / 45.0 - 0.3,  # blocks [K, p, f]
                np.arange(4 * 5.0).reshape(4, 5)[::-1] / 20.0,  # scatter [x, K]
            ),
            3,
        ),
        {},
    ),
    "oqupy_jax._propagation.propagate": lambda: (
        (
            np.ones((2, 4)) + 0.5j,
            (),
            (None,),
            ojax._propagation.Step(
                np.stack([np.eye(4), 2 * np.eye(4), np.eye(4)[::-1]]) + 0j,
                np.stack([np.eye(4)] * 3) + 0j,
                (np.arange(3 * 4 * 2 * 2.0).reshape(3, 4, 2, 2) + 1j,),  # [step, x, p, f]
                (np.ones((3, 2)) + 0j,),
                np.arange(3),
            ),
        ),
        {},
    ),
}


#: Kernels whose NumPy form takes exact shapes (lists, no padding): its arguments, and the outputs compared.
NUMPY_FORMS = {
    # the new middle weights and the three ranks (the tensors hold SVD phases, which LAPACK builds may choose apart)
    "oqupy_jax._chain_mps.apply_nn_gate": (
        lambda: _nn_gate_arguments((onp._chain_mps.UNBOUNDED,) * 3),
        (1, 3),
    ),
}


def _nn_gate_arguments(capacities):
    """A gate on two sites with bond 2 between them (left site with a process-tensor leg of 2); ranks (4, 2, 1), so
    capacities (4, 2, 2) mask a triplet of the right split."""
    rng = np.random.default_rng(3)
    gamma_l = rng.normal(size=(1, 4, 2, 2)) + 1j * rng.normal(size=(1, 4, 2, 2))
    gamma_r = rng.normal(size=(2, 4, 1, 1)) + 1j * rng.normal(size=(2, 4, 1, 1))
    gate_l, gate_r = rng.normal(size=(4, 4, 3)), rng.normal(size=(3, 4, 4)) + 0.5j
    lambdas = (np.ones(1), np.array([1.0, 0.5]), np.ones(1))
    return (lambdas, gamma_l, gamma_r, gate_l, gate_r, 1e-12), {"capacities": capacities}


# kernels whose outputs are defined only up to a gauge: compared through what the gauge leaves unchanged
GAUGE_FREE = {
    # singular vectors up to a phase each (LAPACK builds choose apart): values, moduli and the product
    "oqupy_jax._mps.svd": lambda u, s, vh: (s, np.abs(u), np.abs(vh), (np.asarray(u) * s) @ vh),
}


def jitted_kernels():
    import pkgutil

    found = {}
    for info in pkgutil.walk_packages(ojax.__path__, "oqupy_jax."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                hasattr(obj, "lower")
                and hasattr(obj, "trace")
                and getattr(obj, "__module__", "") == info.name
            ):
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_kernel_has_trace_arguments():
    kernels = jitted_kernels()
    assert kernels, "no jitted kernels found in oqupy_jax"
    assert sorted(kernels) == sorted(KERNEL_ARGUMENTS)


@pytest.mark.parametrize("qualified", sorted(KERNEL_ARGUMENTS))
def test_kernel_traces_under_jit(qualified):
    kernel = jitted_kernels()[qualified]
    args, kwargs = KERNEL_ARGUMENTS[qualified]()
    traced = kernel.trace(*args, **kwargs)
    assert traced.jaxpr is not None
    compiled = kernel.lower(*args, **kwargs).compile()
    assert compiled is not None
    module_name, _, function = qualified.rpartition(".")
    numpy_version = getattr(
        importlib.import_module(module_name.replace("oqupy_jax", "oqupy_numpy")), function
    )
    assert not hasattr(numpy_version, "lower") and inspect.isfunction(numpy_version)
    got, expected = kernel(*args, **kwargs), None
    if qualified in NUMPY_FORMS:
        numpy_arguments, compared = NUMPY_FORMS[qualified]
        numpy_args, numpy_kwargs = numpy_arguments()
        expected = numpy_version(*numpy_args, **numpy_kwargs)
        got, expected = [got[k] for k in compared], [expected[k] for k in compared]
    else:
        expected = numpy_version(*args, **kwargs)
    if qualified in GAUGE_FREE:
        got, expected = GAUGE_FREE[qualified](*got), GAUGE_FREE[qualified](*expected)
    outputs = zip(jax.tree.leaves(got), jax.tree.leaves(expected))
    for got, expected in outputs:
        np.testing.assert_allclose(np.asarray(got), expected, atol=1e-12)


def tempo_states(pkg, hamiltonian, coupling, state, sd_args, end, unique=False, **parameters):
    op = pkg.operators
    sd = pkg.PowerLawSD(**sd_args)
    tempo = pkg.Tempo(
        pkg.System(hamiltonian(op)),
        pkg.Bath(coupling(op), sd),
        pkg.TempoParameters(**parameters),
        state(op),
        0.0,
        unique,
    )
    return np.asarray(tempo.compute(end, progress_type="silent").states)


OHMIC = dict(alpha=0.3, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.0)
TEMPO_SCENARIOS = {
    "spin-boson": dict(
        hamiltonian=lambda op: 0.5 * op.sigma("x"),
        coupling=lambda op: 0.5 * op.sigma("z"),
        state=lambda op: op.spin_dm("up"),
        sd_args=OHMIC,
        end=2.0,
        dt=0.1,
        epsrel=1e-4,
        tcut=0.5,
    ),
    "dephasing-tail": dict(
        hamiltonian=lambda op: 0 * op.sigma("x"),
        coupling=lambda op: 0.5 * op.sigma("z"),
        state=lambda op: op.spin_dm("y+"),
        sd_args={**OHMIC, "zeta": 3},
        end=4.0,
        dt=0.4,
        epsrel=1e-5,
        dkmax=2,
        add_correlation_time=np.inf,
    ),
    "rotated-thermal-unique": dict(
        hamiltonian=lambda op: 0.5 * op.sigma("z"),
        coupling=lambda op: 0.5 * op.sigma("x"),
        state=lambda op: op.spin_dm("x+"),
        sd_args={**OHMIC, "temperature": 0.8},
        end=1.5,
        dt=0.1,
        epsrel=1e-5,
        dkmax=6,
        add_correlation_time=2.0,
        unique=True,
    ),
}


@pytest.mark.parametrize("name", sorted(TEMPO_SCENARIOS))
def test_tempo_packages_agree(name):
    scenario = TEMPO_SCENARIOS[name]
    a, b = tempo_states(onp, **scenario), tempo_states(ojax, **scenario)
    assert a.shape == b.shape and a.dtype == b.dtype == np.complex128
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-10)


def pt_dynamics(pkg, coupling, unique, **parameters):
    op = pkg.operators
    bath = pkg.Bath(coupling(op), pkg.PowerLawSD(**{**OHMIC, "temperature": 0.5}))
    pt = pkg.PtTempo(bath, 0.0, 1.0, pkg.TempoParameters(**parameters), unique=unique).get_process_tensor(
        progress_type="silent"
    )
    system = pkg.System(0.5 * op.sigma("x") + 0.2 * op.sigma("z"))
    dynamics = pkg.compute_dynamics(system, op.spin_dm("up"), process_tensor=[pt, pt], progress_type="silent")
    tensors = [np.asarray(pt.get_raw_mpo_tensor(step)) for step in range(len(pt))]
    return tensors, np.asarray(dynamics.states)


PT_SCENARIOS = {
    "diagonal-tail": dict(
        coupling=lambda op: 0.5 * op.sigma("z"),
        unique=False,
        dt=0.1,
        epsrel=1e-6,
        dkmax=3,
        add_correlation_time=1.0,
    ),
    "rotated-unique": dict(
        coupling=lambda op: 0.5 * op.sigma("x"), unique=True, dt=0.1, epsrel=1e-6, dkmax=4
    ),
}


@pytest.mark.parametrize("name", sorted(PT_SCENARIOS))
def test_process_tensors_and_their_dynamics_agree(name):
    """Same bond dimensions (JAX padding trimmed on export), same dynamics through two environments."""
    tensors_np, states_np = pt_dynamics(onp, **PT_SCENARIOS[name])
    tensors_jax, states_jax = pt_dynamics(ojax, **PT_SCENARIOS[name])
    assert [t.shape for t in tensors_np] == [t.shape for t in tensors_jax]
    assert max(t.shape[1] for t in tensors_np) > 2
    np.testing.assert_allclose(states_jax, states_np, rtol=0, atol=1e-10)


def _uniform_dynamics(package, tmp_path=None, reader=None):
    op = package.operators
    bath = package.Bath(0.5 * op.sigma("x"), package.PowerLawSD(0.3, 1, 5.0, "exponential", temperature=0.5))
    pt = package.TtiPtTempo(bath, 0.0, package.TempoParameters(dt=0.1, epsrel=1e-7, dkmax=5), unique=True)
    pt = pt.get_process_tensor(progress_type="silent")
    if tmp_path is not None:
        pt.export(str(tmp_path / "uniform.hdf5"))
        package, op = reader, reader.operators
        pt = package.import_process_tensor(str(tmp_path / "uniform.hdf5"))
    system = package.System(0.5 * op.sigma("x") + 0.3 * op.sigma("z"))
    dynamics = package.compute_dynamics(
        system, op.spin_dm("up"), num_steps=70, process_tensor=pt, progress_type="silent"
    )
    steady = package.compute_steady_state(system, pt)
    return np.asarray(dynamics.states), np.asarray(steady)


def test_uniform_process_tensor_dynamics_and_steady_state_agree():
    """The uniform build is host NumPy in both packages; the dynamics through it run in each package's scan (three
    chunks: 64 + 4 + 2 steps)."""
    (states_np, steady_np), (states_jax, steady_jax) = _uniform_dynamics(onp), _uniform_dynamics(ojax)
    np.testing.assert_allclose(states_jax, states_np, rtol=0, atol=1e-12)
    np.testing.assert_allclose(steady_jax, steady_np, rtol=0, atol=1e-12)
    assert np.abs(states_np[-1] - states_np[0]).max() > 0.1


def test_uniform_file_written_by_one_package_is_read_by_the_other(tmp_path):
    expected, _ = _uniform_dynamics(onp)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    np.testing.assert_allclose(_uniform_dynamics(onp, tmp_path / "a", ojax)[0], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_uniform_dynamics(ojax, tmp_path / "b", onp)[0], expected, rtol=0, atol=1e-12)


def _stationary(package):
    op = package.operators
    sd = package.PowerLawSD(alpha=0.1, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    pt = package.TtiPtTempo(
        package.Bath(0.5 * op.sigma("z"), sd), 0.0, package.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=10)
    ).get_process_tensor(progress_type="silent")
    system = package.System(0.5 * op.sigma("x") + 0.3 * op.sigma("z"))
    _, corr = package.compute_stationary_correlations(system, pt, op.sigma("-"), op.sigma("+"), 50, "full")
    _, spectrum = package.compute_spectrum(system, pt, op.sigma("-"), op.sigma("+"), num_points=256)
    _, solved = package.compute_spectrum(
        system, pt, op.sigma("-"), op.sigma("+"), omega=[0.5], method="solve"
    )
    _, three = package.compute_stationary_multitime_correlations(
        system, pt, [op.sigma("x")] * 3, ["left", "right", "left"], [[0, 3], [2, 5]]
    )
    pathway = [op.sigma("-"), op.sigma("+"), op.sigma("-"), op.sigma("+")]
    orders = ["right", "left", "left", "left"]
    grid = np.arange(30)
    _, plane = package.compute_stationary_multitime_correlations(system, pt, pathway, orders, [grid, 3, grid])
    _, late = package.compute_stationary_multitime_correlations(  # beyond EXACT_STEPS: the slow modes
        system, pt, pathway, orders, [[0, 300], [0], [2, 400]]
    )
    return corr, spectrum, solved, three, plane, late


def test_stationary_correlations_and_spectra_agree():
    """Host code in both packages (the uniform build and the eigendecomposition): equal to rounding."""
    for np_result, jax_result in zip(_stationary(onp), _stationary(ojax)):
        np.testing.assert_allclose(np.asarray(jax_result), np.asarray(np_result), rtol=0, atol=1e-10)


def _gibbs_history(package, hamiltonian, coupling, n_steps, epsrel):
    sd = package.PowerLawSD(alpha=0.15, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=0.7)
    tempo = package.GibbsTempo(
        package.System(hamiltonian), package.Bath(coupling, sd), package.GibbsParameters(n_steps, epsrel)
    )
    tempo.compute(progress_type="silent")
    return np.asarray(tempo.get_dynamics().states), np.asarray(tempo.get_state()), tempo.max_bond_dimension


def test_gibbs_tempo_packages_agree():
    """Spin 1, a complex rotation W of a commuting pair (H diagonal, coupling S = diag(1, 1, -1/2) with a
    degenerate pair): both packages give W exp(-beta (H - lambda S^2)) W^dagger / Z (lambda = 2 alpha cutoff) and
    agree on the whole imaginary-time history; then a non-commuting pair whose bonds outgrow the first capacity."""
    rotation = np.linalg.qr(np.arange(9.0).reshape(3, 3) + 1j * np.eye(3) + np.diag([1.0, 3.0, 2.0]))[0]
    energies, values = np.array([0.3, -0.4, 0.9]), np.array([1.0, 1.0, -0.5])
    hamiltonian = rotation @ np.diag(energies) @ rotation.conj().T
    coupling = rotation @ np.diag(values) @ rotation.conj().T
    history_np, state_np, _ = _gibbs_history(onp, hamiltonian, coupling, 16, 1e-11)
    history_jax, state_jax, _ = _gibbs_history(ojax, hamiltonian, coupling, 16, 1e-11)
    np.testing.assert_allclose(history_jax, history_np, rtol=0, atol=1e-10)
    weights = np.exp(-(energies - 2 * 0.15 * 4.0 * values**2) / 0.7)
    exact = rotation @ np.diag(weights / weights.sum()) @ rotation.conj().T
    np.testing.assert_allclose(state_np, exact, atol=1e-10)
    np.testing.assert_allclose(state_jax, exact, atol=1e-10)

    hamiltonian = 0.8 * np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]) / np.sqrt(2) + np.diag(energies)
    history_np, _, bond_np = _gibbs_history(onp, hamiltonian, np.diag(values), 12, 1e-6)
    history_jax, _, bond_jax = _gibbs_history(ojax, hamiltonian, np.diag(values), 12, 1e-6)
    assert bond_np == bond_jax > 12
    np.testing.assert_allclose(history_jax, history_np, rtol=0, atol=1e-10)


def _mean_field_dynamics(pkg):
    """Two emitters in a lossy cavity: MeanFieldTempo and compute_dynamics_with_field through a process tensor."""
    op = pkg.operators
    sz, sp, sm = (np.asarray(op.sigma(n)) for n in "z+-")

    def system(omega):
        return pkg.TimeDependentSystemWithField(
            lambda t, a: 0.5 * omega * sz + 0.2 * (a * sp + np.conj(a) * sm),
            gammas=[lambda t: 0.05],
            lindblad_operators=[lambda t: sm],
        )

    def eom(t, states, a):
        return -(0.3j + 0.25) * a - 0.2j * (np.trace(sm @ states[0]) + np.trace(sm @ states[1])) / 2

    mfs = pkg.MeanFieldSystem([system(0.0), system(0.4)], field_eom=eom)
    sd = pkg.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, cutoff_type="gaussian", temperature=0.2)
    baths = [pkg.Bath(0.5 * op.sigma("z"), sd), pkg.Bath(0.5 * op.sigma("x"), sd)]
    parameters = pkg.TempoParameters(dt=0.2, epsrel=1e-7, dkmax=3)
    initial = [op.spin_dm("x+"), op.spin_dm("up")]
    tempo = pkg.MeanFieldTempo(mfs, baths, parameters, initial, 1.0 + 0.5j).compute(
        1.2, progress_type="silent"
    )
    pts = [pkg.pt_tempo_compute(bath, 0.0, 1.2, parameters, progress_type="silent") for bath in baths]
    with_pt = pkg.compute_dynamics_with_field(
        mfs, 1.0 + 0.5j, pts, initial_state_list=initial, progress_type="silent"
    )
    return [
        np.stack([np.asarray(d.states) for d in dynamics.system_dynamics]) for dynamics in (tempo, with_pt)
    ] + [np.asarray(tempo.fields), np.asarray(with_pt.fields)]


def test_mean_field_packages_agree():
    for got, expected in zip(_mean_field_dynamics(ojax), _mean_field_dynamics(onp)):
        assert got.dtype == expected.dtype == np.complex128
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


def test_adjoint_gradients_agree():
    sx, sz = np.array([[0, 1], [1, 0]], dtype=complex), np.array([[1, 0], [0, -1]], dtype=complex)
    theta = 0.5 + np.random.default_rng(5).normal(size=(8, 2))
    results = []
    for package in (onp, ojax):
        baths = [
            package.Bath(0.5 * sz, package.PowerLawSD(0.2, 1, 5.0, "exponential", temperature=0.5)),
            package.Bath(
                0.5 * (sx + sz) / np.sqrt(2), package.PowerLawSD(0.1, 1, 3.0, "gaussian", temperature=0.2)
            ),
        ]
        parameters = package.TempoParameters(dt=0.1, epsrel=1e-6, tcut=None)
        pts = [package.pt_tempo_compute(bath, 0.0, 0.4, parameters, progress_type="silent") for bath in baths]
        system = package.ParameterizedSystem(lambda hx, hz: 0.5 * hx * sx + 0.5 * hz * sz)
        result = package.state_gradient(
            system, np.diag([1.0, 0.0]), 0.5 * np.ones((2, 2)), pts, theta, progress_type="silent"
        )
        results.append(result)
    np.testing.assert_allclose(results[1]["gradient"], results[0]["gradient"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(
        results[1]["dynamics"].states, results[0]["dynamics"].states, rtol=0, atol=1e-10
    )


def _bath_dynamics(pkg):
    """Spin-boson with a sigma_x Hamiltonian: complex system correlations from a real process tensor."""
    op = pkg.operators
    bath = pkg.Bath(0.5 * op.sigma("z"), pkg.PowerLawSD(**{**OHMIC, "alpha": 0.2, "temperature": 0.5}))
    parameters = pkg.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=3, add_correlation_time=1.0)
    pt = pkg.PtTempo(bath, 0.0, 1.0, parameters).get_process_tensor(progress_type="silent")
    correlations = pkg.TwoTimeBathCorrelations(
        pkg.System(0.5 * op.sigma("x") + 0.2 * op.sigma("z")), bath, pt, initial_state=op.spin_dm("up")
    )
    _, occupation = correlations.occupation(1.5, progress_type="silent")
    values = [
        correlations.correlation(1.0, 0.4, freq_2, 0.9, dw=(0.5, 0.5), dagg=dagg, interaction_picture=picture)
        for dagg in [(0, 0), (0, 1), (1, 0), (1, 1)]
        for freq_2 in (1.0, 2.5)
        for picture in (False, True)
    ]
    return occupation, np.array(values), np.nan_to_num(correlations._system_correlations)


def test_bath_dynamics_packages_agree():
    occupation_np, values_np, system_np = _bath_dynamics(onp)
    occupation_jax, values_jax, system_jax = _bath_dynamics(ojax)
    assert type(occupation_jax) is np.ndarray and np.abs(system_np.imag).max() > 1e-3
    np.testing.assert_allclose(system_jax, system_np, rtol=0, atol=1e-10)
    np.testing.assert_allclose(occupation_jax, occupation_np, rtol=0, atol=1e-10)
    np.testing.assert_allclose(values_jax, values_np, rtol=0, atol=1e-10)


def _shared_process_tensor():
    """One spin-boson process tensor built by oqupy_numpy (its tensors are handed to both packages)."""
    op = onp.operators
    sd = onp.PowerLawSD(alpha=0.2, zeta=1, cutoff=3.0, cutoff_type="exponential", temperature=0.5)
    parameters = onp.TempoParameters(dt=0.1, epsrel=1e-7, dkmax=3)
    pt = onp.PtTempo(onp.Bath(0.5 * op.sigma("z"), sd), 0.0, 0.5, parameters).get_process_tensor(
        progress_type="silent"
    )
    return [pt.get_mpo_tensor(step) for step in range(len(pt))]


def _pt_tebd_chain(package, tensors):
    """Three coupled sites (XYZ bonds, a field, decay on the last site), environments on sites 0 and 1."""
    op = package.operators
    pt = package.SimpleProcessTensor(2, 0.1)
    for step, tensor in enumerate(tensors):
        pt.set_mpo_tensor(step, tensor)
    chain = package.SystemChain([2, 2, 2])
    for site in range(3):
        chain.add_site_hamiltonian(site, 0.5 * (site + 1) * op.sigma("x"))
    for site in range(2):
        for name, strength in zip("xyz", (1.3, 0.7, 1.2)):
            chain.add_nn_hamiltonian(site, 0.5 * strength * op.sigma(name), 0.5 * op.sigma(name))
    chain.add_site_dissipation(2, op.sigma("-"), gamma=0.2)
    tebd = package.PtTebd(
        package.AugmentedMPS([op.spin_dm("z-"), op.spin_dm("z+"), op.spin_dm("x+")]),
        chain,
        [pt, pt, None],
        package.PtTebdParameters(dt=0.1, epsrel=1e-8),
        dynamics_sites=[0, 1, 2, (0, 1)],
    )
    results = tebd.compute(5, progress_type="silent")
    states = [np.asarray(results["dynamics"][key].states) for key in (0, 1, 2)]
    return states, np.asarray(results["dynamics"][(0, 1)].states), results["norm"], results["bond_dimensions"]


def test_pt_tebd_packages_agree():
    """The augmented MPS of a coupled chain with two environments (the same process tensor handed to both
    packages): same states, norms and bond dimensions."""
    tensors = _shared_process_tensor()
    (states_np, pair_np, norm_np, bonds_np), (states_jax, pair_jax, norm_jax, bonds_jax) = (
        _pt_tebd_chain(onp, tensors),
        _pt_tebd_chain(ojax, tensors),
    )
    np.testing.assert_array_equal(bonds_jax, bonds_np)
    # above oqupy_jax's first bond capacity (16): a step overflows it and is computed again with larger ones
    assert bonds_np.max() > 16
    for got, expected in zip(states_jax, states_np):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pair_jax, pair_np, rtol=0, atol=1e-10)
    np.testing.assert_allclose(norm_jax, norm_np, rtol=0, atol=1e-10)
    assert np.abs(states_np[0][-1] - states_np[0][0]).max() > 0.1


def test_tempo_runs_on_the_host_in_oqupy_jax():
    """TEMPO's steps are host code in both packages (`_tempo_step.py`): a TEMPO run of oqupy_jax compiles no XLA
    program, its network holds NumPy arrays, and it gives oqupy_numpy's numbers exactly."""
    compiles = []

    def record(event, duration, **_):
        if event.endswith("backend_compile_duration"):
            compiles.append(event)

    jax.monitoring.register_event_duration_secs_listener(record)
    op = ojax.operators
    sd = ojax.PowerLawSD(**{**OHMIC, "temperature": 0.8})
    tempo = ojax.Tempo(
        ojax.System(0.5 * op.sigma("x")),
        ojax.Bath(0.5 * op.sigma("z"), sd),
        ojax.TempoParameters(dt=0.1, epsrel=1e-5, dkmax=4, add_correlation_time=1.0),
        op.spin_dm("up"),
        0.0,
    )
    tempo.compute(1.0, progress_type="silent")
    network = tempo._network
    assert len(network._past) == 4 and network.max_bond > 2
    assert all(type(site) is np.ndarray for site in [*network._past, network._current])
    scenario = TEMPO_SCENARIOS["rotated-thermal-unique"]
    assert np.array_equal(tempo_states(ojax, **scenario), tempo_states(onp, **scenario))
    assert not compiles
