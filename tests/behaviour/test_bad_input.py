"""Bad input gets a clear error naming the argument, before any work (or, for a system that stops being finite
part-way, after the work that was possible, which is kept).  One test per class of bad input, in both packages."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NAN, INF = float("nan"), float("inf")


def spin_boson(oq, alpha=0.1):
    op = oq.operators
    sd = oq.PowerLawSD(alpha=alpha, zeta=1.0, cutoff=5.0, cutoff_type="exponential", temperature=0.0)
    return oq.System(0.5 * op.sigma("x")), oq.Bath(0.5 * op.sigma("z"), sd), op.spin_dm("z+")


def params(oq, **changes):
    return oq.TempoParameters(**{"dt": 0.1, "epsrel": 1e-7, "dkmax": 4, **changes})


def states(dynamics):
    return np.asarray(dynamics.states)


# -- 1. dkmax = 0 in TEMPO: the Markovian limit, as in OQuPy ---------------------------------------------------


def test_tempo_with_dkmax_zero_is_the_markovian_limit_of_pt_tempo(oq):
    """TEMPO's own path for dkmax = 0 agrees with the process tensor of PT-TEMPO's general path (dkmax = 0)."""
    system, bath, rho = spin_boson(oq, alpha=0.2)
    tempo = oq.tempo_compute(system, bath, rho, 0.0, 1.0, params(oq, dkmax=0), progress_type="silent")
    pt = oq.pt_tempo_compute(bath, 0.0, 1.0, params(oq, dkmax=0), progress_type="silent")
    reference = oq.compute_dynamics(system, rho, process_tensor=pt, progress_type="silent")
    assert len(tempo.times) == 11
    np.testing.assert_allclose(states(tempo), states(reference), atol=1e-12)


def test_tempo_with_dkmax_zero_dephases_geometrically(oq):
    """H = 0: with no memory each step multiplies the coherence by the same self-influence factor (< 1)."""
    op = oq.operators
    _, bath, _ = spin_boson(oq, alpha=0.2)
    system = oq.System(0.0 * op.sigma("z"))
    dyn = oq.tempo_compute(
        system, bath, op.spin_dm("x+"), 0.0, 1.0, params(oq, dkmax=0), progress_type="silent"
    )
    coherence = states(dyn)[:, 0, 1]
    ratios = coherence[1:] / coherence[:-1]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-12)
    assert 0.5 < abs(ratios[0]) < 1.0 - 1e-3
    np.testing.assert_allclose(states(dyn)[:, 0, 0], 0.5, atol=1e-14)  # populations untouched


# -- 2. a system that becomes NaN or infinite part-way --------------------------------------------------------


def broken_system(oq, bad):
    op = oq.operators

    def hamiltonian(t):
        return 0.5 * op.sigma("x") + (bad if t > 0.25 else 0.0) * op.sigma("z")

    return oq.TimeDependentSystem(hamiltonian)


@pytest.mark.parametrize("bad", [NAN, INF])
def test_tempo_names_the_time_of_a_nonfinite_hamiltonian_and_keeps_the_steps_before(oq, bad):
    _, bath, rho = spin_boson(oq)
    clean = oq.tempo_compute(broken_system(oq, 1.0), bath, rho, 0.0, 0.5, params(oq), progress_type="silent")
    tempo = oq.Tempo(broken_system(oq, bad), bath, params(oq), rho, 0.0)
    with pytest.raises(ValueError, match=r"t = 0\.2 to t = 0\.3.*Hamiltonian"):
        tempo.compute(0.5, progress_type="silent")
    kept = tempo.get_dynamics()
    np.testing.assert_allclose(kept.times, [0.0, 0.1, 0.2], atol=1e-14)
    np.testing.assert_allclose(states(kept), states(clean)[:3], atol=1e-13)
    with pytest.raises(ValueError, match=r"t = 0\.2") as error:
        oq.tempo_compute(broken_system(oq, bad), bath, rho, 0.0, 0.5, params(oq), progress_type="silent")
    np.testing.assert_allclose(states(error.value.dynamics), states(clean)[:3], atol=1e-13)


@pytest.mark.parametrize("bad", [NAN, INF])
def test_compute_dynamics_names_the_time_of_a_nonfinite_hamiltonian_and_keeps_the_steps_before(oq, bad):
    _, bath, rho = spin_boson(oq)
    pt = oq.pt_tempo_compute(bath, 0.0, 0.5, params(oq), progress_type="silent")
    for environment in (pt, None):
        options = dict(process_tensor=pt) if environment is not None else dict(dt=0.1, num_steps=5)
        clean = oq.compute_dynamics(broken_system(oq, 1.0), rho, progress_type="silent", **options)
        with pytest.raises(ValueError, match=r"t = 0\.2 to t = 0\.3.*Hamiltonian") as error:
            oq.compute_dynamics(broken_system(oq, bad), rho, progress_type="silent", **options)
        np.testing.assert_allclose(error.value.dynamics.times, [0.0, 0.1, 0.2], atol=1e-14)
        np.testing.assert_allclose(states(error.value.dynamics), states(clean)[:3], atol=1e-13)


@pytest.mark.parametrize("bad", [NAN, INF])
def test_compute_dynamics_batch_names_the_system_and_time_before_any_step(oq, bad):
    _, _, rho = spin_boson(oq)
    systems = [broken_system(oq, 1.0), broken_system(oq, bad), broken_system(oq, 1.0)]
    with pytest.raises(
        ValueError, match=r"t = 0\.2 to t = 0\.3.*system 1 of 'systems'.*No dynamics"
    ) as error:
        oq.compute_dynamics_batch(systems, rho, dt=0.1, num_steps=5, progress_type="silent")
    assert error.value.dynamics is None
    times, clean = oq.compute_dynamics_batch(systems[::2], rho, dt=0.1, num_steps=5, progress_type="silent")
    assert np.all(np.isfinite(np.asarray(clean))) and len(times) == 6


def test_dynamics_with_field_names_the_system_and_time_of_a_nonfinite_step_and_keeps_the_steps_before(oq):
    """A field that becomes infinite at t = 0.2 makes the next step's propagator NaN: refused, earlier steps kept."""
    op = oq.operators
    sz, sx = (np.asarray(op.sigma(n)) for n in "zx")

    def hamiltonian(t, a):
        return 0.5 * sz + 0.1 * a.real * sx

    def field_eom(t, states, a):
        return 0.0 if t < 0.15 else INF

    mfs = oq.MeanFieldSystem([oq.TimeDependentSystemWithField(hamiltonian)], field_eom=field_eom)
    with pytest.raises(ValueError, match=r"t = 0\.2 to t = 0\.3.*system 0 of 'mean_field_system'") as error:
        oq.compute_dynamics_with_field(
            mfs, 1.0, dt=0.1, num_steps=5, initial_state_list=[op.spin_dm("up")], progress_type="silent"
        )
    np.testing.assert_allclose(error.value.dynamics.times, [0.0, 0.1, 0.2], atol=1e-14)


# -- 3. time windows that run backwards -----------------------------------------------------------------------


def test_a_time_window_that_runs_backwards_is_refused(oq):
    system, bath, rho = spin_boson(oq)
    with pytest.raises(ValueError, match="'end_time'.*'start_time'"):
        oq.tempo_compute(system, bath, rho, 1.0, 0.5, params(oq))
    tempo = oq.Tempo(system, bath, params(oq), rho, 1.0)
    with pytest.raises(ValueError, match="'end_time'"):
        tempo.compute(0.5)
    with pytest.raises(AssertionError, match="'start_time'.*'end_time'"):  # OQuPy's type at PtTempo
        oq.pt_tempo_compute(bath, 1.0, 0.5, params(oq))
    with pytest.raises(ValueError, match="start time"):
        oq.guess_tempo_parameters(bath, 1.0, 0.5)
    pt = oq.pt_tempo_compute(bath, 0.0, 0.3, params(oq, dkmax=2), progress_type="silent")
    with pytest.raises(ValueError, match="'num_steps'.*-1"):
        oq.compute_dynamics(system, rho, process_tensor=pt, num_steps=-1)


# -- 4. unphysical spectral densities ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "alpha, zeta, name",
    [(0.1, -1.0, "zeta"), (0.1, 0.0, "zeta"), (0.1, NAN, "zeta"), (-0.1, 1.0, "alpha"), (NAN, 1.0, "alpha")],
)
def test_unphysical_power_laws_are_refused(oq, alpha, zeta, name):
    with pytest.raises(ValueError, match=f"'{name}'"):
        oq.PowerLawSD(alpha=alpha, zeta=zeta, cutoff=1.0)


def test_a_negative_spectral_density_is_refused(oq):
    with pytest.raises(ValueError, match="non-negative"):
        oq.CustomSD(lambda w: -w, cutoff=1.0)
    oq.PowerLawSD(alpha=0.0, zeta=0.5, cutoff=1.0)  # no coupling and sub-Ohmic are fine


# -- 5. NaN or infinite times, bad dt and epsrel --------------------------------------------------------------


@pytest.mark.parametrize("end", [NAN, INF, -INF])
def test_end_time_must_be_finite(oq, end):
    system, bath, rho = spin_boson(oq)
    with pytest.raises(ValueError, match="'end_time' must be a finite number"):
        oq.tempo_compute(system, bath, rho, 0.0, end, params(oq))
    with pytest.raises(ValueError, match="'end_time' must be a finite number"):
        oq.Tempo(system, bath, params(oq), rho, 0.0).compute(end)
    with pytest.raises(ValueError, match="'end_time' must be a finite number"):
        oq.pt_tempo_compute(bath, 0.0, end, params(oq))
    with pytest.raises(ValueError, match="'start_time' must be a finite number"):
        oq.tempo_compute(system, bath, rho, end, 1.0, params(oq))
    with pytest.raises(ValueError, match="'start_time' must be a finite number"):
        oq.compute_dynamics(system, rho, dt=0.1, num_steps=2, start_time=end)


@pytest.mark.parametrize("dt", [NAN, 0.0, -0.1, INF])
def test_dt_must_be_positive_and_finite(oq, dt):
    system, _, rho = spin_boson(oq)
    with pytest.raises(ValueError, match=r"'dt' must be a positive finite number \(got"):
        params(oq, dt=dt)
    with pytest.raises(ValueError, match=r"'dt' must be a positive finite number \(got"):
        oq.compute_dynamics(system, rho, dt=dt, num_steps=2)


@pytest.mark.parametrize("epsrel", [NAN, 0.0, -1e-3, 1.0, 1.5, INF])
def test_epsrel_must_lie_between_zero_and_one(oq, epsrel):
    with pytest.raises(ValueError, match=r"'epsrel' must lie in the open interval \(0, 1\)"):
        params(oq, epsrel=epsrel)
    with pytest.raises(ValueError, match=r"'epsrel' must lie in the open interval \(0, 1\)"):
        oq.GibbsParameters(n_steps=10, epsrel=epsrel)
    with pytest.raises(AssertionError, match="'epsrel'"):  # OQuPy's type at PtTebdParameters
        oq.PtTebdParameters(dt=0.1, epsrel=epsrel)


@pytest.mark.parametrize("tcut", [NAN, INF, -1.0])
def test_tcut_must_be_finite_and_non_negative(oq, tcut):
    with pytest.raises(ValueError, match="'tcut' must be a non-negative finite number"):
        oq.TempoParameters(dt=0.1, epsrel=1e-6, tcut=tcut)


# -- issue 30: a memory longer than the run, correlations that are not finite ----------------------------------


def test_a_memory_longer_than_the_run_warns_and_is_the_full_memory(oq):
    """OQuPy 0.5 accepts it silently (full memory): a warning, not an error, with the full-memory result."""
    system, bath, rho = spin_boson(oq, alpha=0.2)
    with pytest.warns(UserWarning, match="memory cut-off.*longer than the run"):
        long = oq.tempo_compute(system, bath, rho, 0.0, 0.4, params(oq, dkmax=9), progress_type="silent")
    with pytest.warns(UserWarning, match="memory cut-off.*longer than the run"):
        pt = oq.pt_tempo_compute(bath, 0.0, 0.4, params(oq, dkmax=None, tcut=1.0), progress_type="silent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a cut-off equal to the run does not warn
        full = oq.tempo_compute(system, bath, rho, 0.0, 0.4, params(oq, dkmax=4), progress_type="silent")
    np.testing.assert_allclose(states(long), states(full), atol=1e-12)
    through_pt = oq.compute_dynamics(system, rho, process_tensor=pt, progress_type="silent")
    np.testing.assert_allclose(states(through_pt), states(full), atol=1e-6)


def test_correlations_that_are_not_finite_are_refused_before_the_run(oq):
    op = oq.operators
    system, _, rho = spin_boson(oq)
    bath = oq.Bath(0.5 * op.sigma("z"), oq.CustomCorrelations(lambda t: NAN if t < 0.5 else 1.0))
    with pytest.raises(ValueError, match="correlations of argument 'bath' are not finite"):
        oq.tempo_compute(system, bath, rho, 0.0, 0.3, params(oq, dkmax=2))
    with pytest.raises(ValueError, match="correlations of argument 'bath' are not finite"):
        oq.pt_tempo_compute(bath, 0.0, 0.3, params(oq, dkmax=2))


# -- 6. the survey: any float into the public constructors gives a value or a clear error ----------------------

floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, 1e-300]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dt=floats, epsrel=floats, tcut=st.one_of(st.none(), floats))
def test_tempo_parameters_accept_exactly_the_valid_floats(oq, dt, epsrel, tcut):
    valid = (
        math.isfinite(dt)
        and dt > 0
        and 0 < epsrel < 1
        and (tcut is None or (math.isfinite(tcut) and tcut >= 0))
    )
    try:
        parameters = oq.TempoParameters(dt=dt, epsrel=epsrel, tcut=tcut)
    except ValueError as error:
        assert any(f"'{name}'" in str(error) for name in ("dt", "epsrel", "tcut")), error
        assert not valid or "too long" in str(error)  # tcut / dt beyond the floats: 1e300 / 1e-300
        return
    assert valid
    assert parameters.dt == dt and parameters.epsrel == epsrel


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(alpha=floats, zeta=floats, cutoff=floats, temperature=floats)
def test_power_law_accepts_exactly_the_physical_floats(oq, alpha, zeta, cutoff, temperature):
    try:
        sd = oq.PowerLawSD(alpha=alpha, zeta=zeta, cutoff=cutoff, temperature=temperature)
    except (ValueError, AssertionError) as error:
        text = str(error).lower()
        assert any(name in text for name in ("alpha", "zeta", "cutoff", "temperature", "spectral density")), (
            error
        )
        return
    assert alpha >= 0 and zeta > 0 and cutoff > 0 and 0 <= temperature < INF
    assert math.isfinite(float(sd.spectral_density(0.5 * cutoff)))


def test_the_other_entry_points_with_a_time_refuse_nan_and_backwards_times(oq):
    """Found by the survey: mean-field TEMPO, bath dynamics, the initial field, PT-TEBD's time step."""
    op = oq.operators
    _, bath, rho = spin_boson(oq)
    system = oq.TimeDependentSystemWithField(lambda t, field: 0.5 * op.sigma("x") + 0 * field)
    mean_field = oq.MeanFieldSystem([system], field_eom=lambda t, states, field: 0j)
    with pytest.raises(ValueError, match="'end_time' must be a finite number"):
        oq.MeanFieldTempo(mean_field, [bath], params(oq, dkmax=2), [rho], 0j, 0.0).compute(NAN)
    with pytest.raises(ValueError, match="'end_time'.*'start_time'"):
        oq.MeanFieldTempo(mean_field, [bath], params(oq, dkmax=2), [rho], 0j, 1.0).compute(0.5)
    with pytest.raises(ValueError, match="'initial_field' must be a finite number"):
        oq.MeanFieldTempo(mean_field, [bath], params(oq, dkmax=2), [rho], complex(NAN, 0), 0.0)
    pt = oq.pt_tempo_compute(bath, 0.0, 0.3, params(oq, dkmax=2), progress_type="silent")
    with pytest.raises(ValueError, match="'initial_field' must be a finite number"):
        oq.compute_dynamics_with_field(mean_field, complex(0, INF), [pt], initial_state_list=[rho])
    correlations = oq.TwoTimeBathCorrelations(oq.System(0.5 * op.sigma("x")), bath, pt, initial_state=rho)
    with pytest.raises(ValueError, match="'final_time' must be a finite number"):
        correlations.generate_system_correlations(NAN)
    with pytest.raises(AssertionError, match="'dt' must be bigger than 0 and finite"):
        oq.PtTebdParameters(dt=INF)
