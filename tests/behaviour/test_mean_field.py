"""Mean-field TEMPO and dynamics with a field: closed forms, independent TEMPO runs, resumability, process
tensors against TEMPO, OQuPy's exception types, and (with ``OQUPY05_PYTHON`` set) OQuPy 0.5's numbers."""

import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

DT = 0.2
MEMORY = dict(
    epsrel=1e-7, dkmax=4
)  # one ring length and truncation for every run: oqupy_jax compiles its step once per capacity
OMEGA_C, KAPPA, G = 0.3, 0.25, 0.4


def sd(oq):
    return oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, cutoff_type="gaussian", temperature=0.2)


def cavity(oq, coupling=G, omegas=(0.0,)):
    """Two-level systems (splittings ``omegas``) coupled to a lossy cavity field a (the tutorial's model)."""
    op = oq.operators
    sz, sp, sm = (np.asarray(op.sigma(n)) for n in "z+-")

    def system(omega):
        def hamiltonian(t, a):
            return 0.5 * omega * sz + 0.5 * coupling * (a * sp + np.conj(a) * sm)

        return oq.TimeDependentSystemWithField(
            hamiltonian, gammas=[lambda t: 0.05], lindblad_operators=[lambda t: sm]
        )

    def field_eom(t, states, a):
        return -(1j * OMEGA_C + KAPPA) * a - 0.5j * G * sum(np.trace(sm @ rho) for rho in states) / len(
            states
        )

    return oq.MeanFieldSystem([system(omega) for omega in omegas], field_eom=field_eom)


def states_of(dynamics):
    return np.stack([np.asarray(d.states) for d in dynamics.system_dynamics])


def test_zero_light_matter_coupling_reduces_to_independent_tempo_runs(oq):
    """With H independent of the field, each system follows its own TEMPO run; the field follows Heun's rule
    with the recorded states."""
    op = oq.operators
    omegas = (0.5, 1.1)
    mfs = cavity(oq, coupling=0.0, omegas=omegas)
    parameters = oq.TempoParameters(dt=DT, **MEMORY)
    baths = [oq.Bath(0.5 * op.sigma("z"), sd(oq)), oq.Bath(0.5 * op.sigma("x"), sd(oq))]
    initial = [op.spin_dm("x+"), op.spin_dm("up")]
    mft = oq.MeanFieldTempo(mfs, baths, parameters, initial, initial_field=0.5 + 0.2j)
    dynamics = mft.compute(1.6, progress_type="silent")
    states = states_of(dynamics)
    assert states.shape == (2, 9, 2, 2)
    for omega, bath, rho0, got in zip(omegas, baths, initial, states):
        system = oq.System(0.5 * omega * op.sigma("z"), gammas=[0.05], lindblad_operators=[op.sigma("-")])
        expected = oq.Tempo(system, bath, parameters, rho0, 0.0).compute(1.6, progress_type="silent")
        np.testing.assert_allclose(got, np.asarray(expected.states), rtol=0, atol=1e-10)
    per_system = dynamics.expectations(op.sigma("z"), real=True)
    np.testing.assert_allclose(
        per_system[1][1], np.real(np.trace(np.asarray(op.sigma("z")) @ states[1], axis1=1, axis2=2))
    )
    times, fields = dynamics.field_expectations()
    eom = mfs.field_eom
    for n in range(len(times) - 1):
        now, after = list(states[:, n]), list(states[:, n + 1])
        slope = eom(times[n], now, fields[n])
        heun = fields[n] + DT / 2 * (slope + eom(times[n] + DT, after, fields[n] + DT * slope))
        assert abs(fields[n + 1] - heun) < 1e-12


def decay_only(oq):
    """A field that ignores the systems: da/dt = (-i w - k) a, i.e. a(t) = a0 exp((-i w - k) t)."""
    system = oq.TimeDependentSystemWithField(
        lambda t, a: 0.5 * np.abs(a) * np.asarray(oq.operators.sigma("x"))
    )
    return oq.MeanFieldSystem([system], field_eom=lambda t, states, a: (-1j * OMEGA_C - KAPPA) * a)


def test_field_without_feedback_is_heun_of_the_analytic_field(oq):
    a0, rate, end = 1.0 + 0.5j, -1j * OMEGA_C - KAPPA, 4.0
    errors = []
    for dt in (0.4, 0.2, 0.1):
        dynamics = oq.compute_dynamics_with_field(
            decay_only(oq),
            a0,
            dt=dt,
            num_steps=round(end / dt),
            initial_state_list=[oq.operators.spin_dm("up")],
            progress_type="silent",
        )
        times, fields = dynamics.field_expectations()
        z = rate * dt
        np.testing.assert_allclose(fields, a0 * (1 + z + z**2 / 2) ** np.arange(len(times)), rtol=1e-12)
        errors.append(abs(fields[-1] - a0 * np.exp(rate * end)))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2.0) < 0.1), orders  # Heun: second order in dt
    assert errors[-1] < 1e-3
    # MeanFieldTempo advances the field the same way
    op = oq.operators
    mft = oq.MeanFieldTempo(
        decay_only(oq),
        [oq.Bath(0.5 * op.sigma("z"), sd(oq))],
        oq.TempoParameters(dt=DT, **MEMORY),
        [op.spin_dm("up")],
        a0,
    )
    times, fields = mft.compute(1.6, progress_type="silent").field_expectations()
    z = rate * DT
    np.testing.assert_allclose(fields, a0 * (1 + z + z**2 / 2) ** np.arange(len(times)), rtol=1e-12)


def mean_field_tempo(oq, **parameters):
    op = oq.operators
    mfs = cavity(oq, omegas=(0.0, 0.3))
    baths = [oq.Bath(0.5 * op.sigma("z"), sd(oq))] * 2
    return oq.MeanFieldTempo(
        mfs, baths, oq.TempoParameters(dt=DT, **parameters), [op.spin_dm("x+"), op.spin_dm("up")], 1.0 + 0.5j
    )


def test_mean_field_tempo_is_resumable(oq):
    whole = mean_field_tempo(oq, **MEMORY).compute(1.6, progress_type="silent")
    resumed = mean_field_tempo(oq, **MEMORY)
    first = resumed.compute(0.6, progress_type="silent")
    assert len(first) == 4  # the memory (4 steps) grows in the second call
    again = resumed.compute(1.6, progress_type="silent")
    assert again is resumed.get_dynamics() and len(again) == 9
    np.testing.assert_allclose(again.times, whole.times, rtol=0, atol=1e-14)
    np.testing.assert_allclose(states_of(again), states_of(whole), rtol=0, atol=1e-10)
    np.testing.assert_allclose(again.fields, whole.fields, rtol=0, atol=1e-10)
    assert abs(whole.fields[-1] - whole.fields[0]) > 0.1  # the field moves


def test_dynamics_with_field_from_process_tensors_equals_mean_field_tempo(oq):
    """Same bath and parameters: the process-tensor route agrees with TEMPO to the truncation level."""
    op = oq.operators
    tempo = mean_field_tempo(oq, **MEMORY).compute(1.6, progress_type="silent")
    bath = oq.Bath(0.5 * op.sigma("z"), sd(oq))
    pt = oq.pt_tempo_compute(bath, 0.0, 1.6, oq.TempoParameters(dt=DT, **MEMORY), progress_type="silent")
    mfs = cavity(oq, omegas=(0.0, 0.3))
    initial = [op.spin_dm("x+"), op.spin_dm("up")]
    with_pt = oq.compute_dynamics_with_field(
        mfs, 1.0 + 0.5j, [pt, [pt]], initial_state_list=initial, progress_type="silent"
    )
    np.testing.assert_allclose(with_pt.times, tempo.times, atol=1e-12)
    np.testing.assert_allclose(states_of(with_pt), states_of(tempo), rtol=0, atol=1e-6)
    np.testing.assert_allclose(with_pt.fields, tempo.fields, rtol=0, atol=1e-6)
    # without the bath the states differ by far more than that
    free = oq.compute_dynamics_with_field(
        mfs, 1.0 + 0.5j, dt=DT, num_steps=8, initial_state_list=initial, progress_type="silent"
    )
    assert np.max(np.abs(states_of(free) - states_of(tempo))) > 1e-3
    final = oq.compute_dynamics_with_field(
        mfs, 1.0 + 0.5j, [pt, pt], initial_state_list=initial, record_all=False, progress_type="silent"
    )
    assert len(final) == 1 and final.times[0] == pytest.approx(1.6)
    np.testing.assert_allclose(states_of(final)[:, 0], states_of(with_pt)[:, -1], atol=1e-12)


def test_field_dependent_propagators_follow_the_linearised_field(oq):
    """Midpoint mode: expm(L(t + dt/4, a + da dt/4) dt/2) and expm(L(t + 3dt/4, a + 3 da dt/4) dt/2); integrated
    mode: expm of the integral of L over each half step (here L is not linear in t: H depends on |a(t)|)."""
    import scipy.linalg

    system = decay_only(oq).system_list[0]
    a, da, t = 0.3 + 0.1j, -0.2 + 1.4j, 0.6
    first, second = system.get_propagators(0.2, 0.2, None)(2, a, da)
    np.testing.assert_allclose(
        first, scipy.linalg.expm(system.liouvillian(t, t + 0.05, a, da) * 0.1), atol=1e-13
    )
    np.testing.assert_allclose(
        second, scipy.linalg.expm(system.liouvillian(t, t + 0.15, a, da) * 0.1), atol=1e-13
    )
    nodes, weights = np.polynomial.legendre.leggauss(30)
    integral = sum(
        w * system.liouvillian(t, t + 0.05 * (1 + x), a, da) * 0.05 for x, w in zip(nodes, weights)
    )
    integrated = system.get_propagators(0.2, 0.2, 256, 1e-12)(2, a, da)
    np.testing.assert_allclose(integrated[0], scipy.linalg.expm(integral), atol=1e-11)
    assert np.max(np.abs(integrated[0] - first)) > 1e-6  # the integral is not the midpoint sample


def test_bad_input_raises_oqupys_types(oq):
    op = oq.operators
    mfs = cavity(oq)
    system = mfs.system_list[0]
    with pytest.raises(TypeError):
        system.liouvillian("a", 1.0, 1.0, 0.0)
    with pytest.raises(TypeError):
        system.liouvillian(0.0, 1.0, "field", 0.0)
    with pytest.raises(TypeError):
        system.liouvillian(0.0, 1.0, 1.0, [1, 2])
    with pytest.raises(AssertionError):
        system.liouvillian(1.0, 0.5, 1.0, 0.0)
    # as in OQuPy, a Hamiltonian need not be Hermitian at the complex probe field (1 + 1j)
    assert oq.TimeDependentSystemWithField(lambda t, a: 0.2j * a * np.asarray(op.sigma("y"))).dimension == 2
    with pytest.raises(AssertionError):
        oq.TimeDependentSystemWithField(np.eye(2))
    with pytest.raises(AssertionError):
        oq.TimeDependentSystemWithField(lambda t, a: np.ones((2, 3)))
    with pytest.raises(AssertionError):
        oq.MeanFieldSystem(system, field_eom=lambda t, states, a: a)
    with pytest.raises(AssertionError):
        oq.MeanFieldSystem([], field_eom=lambda t, states, a: a)
    with pytest.raises(AssertionError):
        oq.MeanFieldSystem([oq.System(op.sigma("z"))], field_eom=lambda t, states, a: a)
    with pytest.raises(AssertionError):
        oq.MeanFieldSystem([system], field_eom=lambda t, states, a: states[1])
    with pytest.raises(AssertionError):
        oq.MeanFieldSystem([system], field_eom=lambda t, states, a: np.ones(3))
    bath, parameters, rho = (
        oq.Bath(0.5 * op.sigma("z"), sd(oq)),
        oq.TempoParameters(dt=DT, epsrel=1e-6),
        op.spin_dm("up"),
    )
    with pytest.raises(AssertionError):
        oq.MeanFieldTempo(system, [bath], parameters, [rho], 1.0)
    with pytest.raises(AssertionError):
        oq.MeanFieldTempo(mfs, [bath, bath], parameters, [rho], 1.0)
    with pytest.raises(AssertionError):
        oq.MeanFieldTempo(mfs, [sd(oq)], parameters, [rho], 1.0)
    with pytest.raises(AssertionError):
        oq.MeanFieldTempo(mfs, [bath], {"dt": DT}, [rho], 1.0)
    with pytest.raises(TypeError):
        oq.MeanFieldTempo(mfs, [bath], parameters, [rho], "field")
    with pytest.raises(TypeError):
        oq.MeanFieldTempo(mfs, [bath], parameters, [rho], 1.0, start_time="zero")
    with pytest.raises(TypeError):
        oq.MeanFieldTempo(mfs, [bath], parameters, [rho], 1.0).compute("end")
    with pytest.raises(AssertionError):
        oq.compute_dynamics_with_field(system, 1.0, dt=DT, num_steps=2, initial_state_list=[rho])
    with pytest.raises(AssertionError):
        oq.compute_dynamics_with_field(mfs, 1.0, dt=DT, num_steps=2, initial_state_list=[rho, rho])
    with pytest.raises(TypeError):
        oq.compute_dynamics_with_field(mfs, "field", dt=DT, num_steps=2, initial_state_list=[rho])
    with pytest.raises(ValueError):
        oq.compute_dynamics_with_field(mfs, 1.0, num_steps=2, initial_state_list=[rho])
    dynamics = oq.MeanFieldDynamics()
    assert dynamics.field_expectations() == (None, None)
    dynamics.add(0.0, [rho], 1.0)
    with pytest.raises(AssertionError):
        dynamics.add(0.1, [rho, rho], 1.0)
    with pytest.raises(AssertionError):
        dynamics.add(0.1, [rho], "field")
    with pytest.raises(AssertionError):
        oq.MeanFieldDynamics(times=[0.0], system_states_list=[[rho]], fields=[])


OQUPY_SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import numpy as np
    import oqupy
    warnings.simplefilter("ignore")
    sz, sp, sm = (oqupy.operators.sigma(n) for n in "z+-")
    def system(omega):
        return oqupy.TimeDependentSystemWithField(
            lambda t, a: 0.5 * omega * sz + 0.5 * 0.4 * (a * sp + np.conj(a) * sm),
            gammas=[lambda t: 0.05], lindblad_operators=[lambda t: sm])
    def eom(t, states, a):
        return -(0.3j + 0.25) * a - 0.2j * sum(np.trace(sm @ rho) for rho in states) / len(states)
    mfs = oqupy.MeanFieldSystem([system(0.0), system(0.3)], field_eom=eom)
    sd = oqupy.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, cutoff_type="gaussian", temperature=0.2)
    bath = oqupy.Bath(0.5 * sz, sd)
    parameters = oqupy.TempoParameters(dt=0.2, epsrel=1e-7, dkmax=4)
    initial = [oqupy.operators.spin_dm("x+"), oqupy.operators.spin_dm("up")]
    dyn = oqupy.MeanFieldTempo(mfs, [bath, bath], parameters, initial, 1.0 + 0.5j).compute(2.0, progress_type="silent")
    states = np.stack([d.states for d in dyn.system_dynamics])
    json.dump({"fields": [[f.real, f.imag] for f in dyn.fields], "states": [states.real.tolist(), states.imag.tolist()]},
              sys.stdout)
    """
)


@pytest.mark.skipif(
    not os.environ.get("OQUPY05_PYTHON"), reason="set OQUPY05_PYTHON to an OQuPy 0.5 interpreter"
)
def test_mean_field_tempo_agrees_with_oqupy_05(oq):
    result = subprocess.run(
        [os.environ["OQUPY05_PYTHON"], "-c", OQUPY_SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    reference = json.loads(result.stdout)
    fields = np.array(reference["fields"]) @ np.array([1.0, 1.0j])
    states = np.array(reference["states"][0]) + 1j * np.array(reference["states"][1])
    dynamics = mean_field_tempo(oq, **MEMORY).compute(2.0, progress_type="silent")
    # measured: fields 1e-11, states 1e-9 (the SVD truncations at epsrel 1e-7 differ in detail)
    np.testing.assert_allclose(dynamics.fields, fields, rtol=0, atol=1e-9)
    np.testing.assert_allclose(states_of(dynamics), states, rtol=0, atol=1e-8)
