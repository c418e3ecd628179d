"""TwoTimeBathCorrelations: bath-mode occupations and two-time correlations from the system's correlations.

Closed forms of the independent-boson model (docs/algorithms.md, "Independent-boson bath dynamics": H = sigma_z coupled through sigma_z, whose
ordered correlations are exactly 1), the cell integrals against quadrature, the commutator <b b^dag> - <b^dag b> = 1
for correlations with an imaginary part, OQuPy 0.5's numbers on a spin-boson model (when ``OQUPY05_PYTHON`` names
its interpreter), and bad input.
"""

import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

T_BATH = 2.0
DT = 0.1
STEPS = 20


def trivial_process_tensor(oq, steps=STEPS, dt=DT):
    """A process tensor without a bath (bond dimension 1, every influence 1)."""
    pt = oq.SimpleProcessTensor(2, dt)
    for step in range(steps):
        pt.set_mpo_tensor(step, np.ones((1, 1, 4)))
    return pt


def independent_boson(oq, system_correlations=None):
    sd = oq.PowerLawSD(alpha=0.1, zeta=1.0, cutoff=10.0, cutoff_type="exponential", temperature=T_BATH)
    sz = oq.operators.sigma("z")
    system, bath = oq.System(sz), oq.Bath(sz, sd)
    state = oq.operators.spin_dm("up")
    correlations = oq.bath_dynamics.TwoTimeBathCorrelations(
        system, bath, trivial_process_tensor(oq), initial_state=state, system_correlations=system_correlations
    )
    return correlations, sd, system, bath, state


def thermal(freq, temperature=T_BATH):
    return 1.0 / np.expm1(freq / temperature) if temperature > 0 else 0.0


def exact_occupation(times, freq, coupling_squared, temperature):
    return coupling_squared / freq**2 * (2 - 2 * np.cos(freq * times)) + thermal(freq, temperature)


def exact_correlation(time_1, time_2, freq_1, freq_2, dagg, g_1, g_2):
    """<b_2^(d0)(t_2) b_1^(d1)(t_1)> for S(t) = 1: the displaced thermal modes, <b^dag b> = n, <b b^dag> = n + 1."""
    phase_1 = np.exp(1j * (2 * dagg[1] - 1) * freq_1 * time_1)
    phase_2 = np.exp(1j * (2 * dagg[0] - 1) * freq_2 * time_2)
    initial = thermal(freq_1) + dagg[1] if freq_1 == freq_2 and dagg in ((0, 1), (1, 0)) else 0.0
    displaced = (phase_1 * phase_2 - phase_1 - phase_2 + 1) * g_1 * g_2 / (freq_1 * freq_2)
    return initial * phase_1 * phase_2 + displaced


def test_independent_boson_closed_forms(oq):
    correlations, sd, system, bath, state = independent_boson(oq, np.ones((STEPS, STEPS)))
    assert correlations.system is system and correlations.bath is bath
    np.testing.assert_array_equal(correlations.initial_state, state)

    times, nan_occupation = correlations.occupation(0)
    assert len(times) == STEPS + 1 and np.all(np.isnan(nan_occupation))
    assert np.isnan(correlations.correlation(0.0, 1.0))

    freq, freq_2 = 1.0, 3.0
    j_1, j_2 = float(sd.spectral_density(freq)), float(sd.spectral_density(freq_2))
    times, occupation = correlations.occupation(freq)
    np.testing.assert_allclose(times, DT * np.arange(STEPS + 1), atol=1e-14)
    np.testing.assert_allclose(occupation, exact_occupation(times, freq, j_1, T_BATH), rtol=0, atol=1e-12)
    _, change = correlations.occupation(freq, change_only=True)
    np.testing.assert_allclose(change, exact_occupation(times, freq, j_1, 0.0), rtol=0, atol=1e-12)
    _, band = correlations.occupation(freq, dw=0.25, change_only=True)
    np.testing.assert_allclose(band, 0.25 * change, rtol=0, atol=1e-14)
    assert occupation[-1] == pytest.approx(
        correlations.correlation(freq, times[-1], dagg=(0, 1)) - 1, abs=1e-12
    )

    start = 10
    for dagg in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        sign_0, sign_1 = 2 * dagg[0] - 1, 2 * dagg[1] - 1
        for other, j_other in [(freq_2, j_2), (freq, j_1)]:
            values = [
                correlations.correlation(freq, times[start], other, t, dagg=dagg) for t in times[start:]
            ]
            pictured = [
                correlations.correlation(freq, times[start], other, t, dagg=dagg, interaction_picture=True)
                for t in times[start:]
            ]
            exact = np.array(
                [
                    exact_correlation(times[start], t, freq, other, dagg, j_1**0.5, j_other**0.5)
                    for t in times[start:]
                ]
            )
            np.testing.assert_allclose(values, exact, rtol=0, atol=1e-12)
            free = np.exp(-1j * (sign_0 * other * times[start:] + sign_1 * freq * times[start]))
            np.testing.assert_allclose(pictured, exact * free, rtol=0, atol=1e-12)
    # change_only drops the initial n + d of the same mode only
    same = correlations.correlation(freq, 1.0, dagg=(0, 1)) - correlations.correlation(
        freq, 1.0, dagg=(0, 1), change_only=True
    )
    assert same == pytest.approx(thermal(freq) + 1, abs=1e-12)


def test_generated_system_correlations(oq):
    """Through compute_correlations: <sigma_z(t') sigma_z(t)> = 1, computed in two extensions of the grid."""
    correlations, sd, *_ = independent_boson(oq)
    correlations.generate_system_correlations(1.0, progress_type="silent")
    first = correlations._system_correlations
    assert first.shape == (10, 10)
    np.testing.assert_allclose(first[np.triu_indices(10)], 1.0, atol=1e-12)
    assert np.all(np.isnan(first[np.tril_indices(10, -1)]))
    times, occupation = correlations.occupation(2.0, progress_type="silent")
    assert correlations._system_correlations.shape == (STEPS, STEPS)
    np.testing.assert_array_equal(correlations._system_correlations[:10, :10], first)
    j = float(sd.spectral_density(2.0))
    np.testing.assert_allclose(occupation, exact_occupation(times, 2.0, j, T_BATH), rtol=0, atol=1e-12)


def test_emission_of_an_excited_spin_at_second_order(oq):
    """Complex system correlations: a bare spin H = sigma_z/2 (no bath in the process tensor), S = sigma_x/2,
    starting excited, so <S(s') S(s)> = exp(i (s' - s)) / 4.  The formula is then second-order perturbation
    theory: Delta n(w, t) = J/4 [(n + 1) F(w - 1) - n F(w + 1)], F(x) = (2 - 2 cos x t) / x^2 (emission with
    stimulated part, and the counter-rotating absorption).  Steps hold C constant: second order in dt."""
    sd = oq.PowerLawSD(alpha=0.1, zeta=1.0, cutoff=5.0, cutoff_type="exponential", temperature=1.0)
    op = oq.operators
    correlations = oq.bath_dynamics.TwoTimeBathCorrelations(
        oq.System(0.5 * op.sigma("z")),
        oq.Bath(0.5 * op.sigma("x"), sd),
        trivial_process_tensor(oq),
        initial_state=op.spin_dm("up"),
    )
    for freq in (0.5, 1.0, 1.7):
        times, change = correlations.occupation(freq, change_only=True, progress_type="silent")
        n = thermal(freq, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lines = [
                np.where(x == 0, times**2, (2 - 2 * np.cos(x * times)) / x**2) for x in (freq - 1, freq + 1)
            ]
        exact = float(sd.spectral_density(freq)) / 4 * ((n + 1) * lines[0] - n * lines[1])
        np.testing.assert_allclose(change, exact, rtol=0, atol=3e-3 * np.abs(exact).max())
        # <b b^dag> changes by the same amount
        anti = correlations.correlation(freq, times[-1], dagg=(0, 1), change_only=True)
        assert anti == pytest.approx(change[-1], abs=1e-12)


def test_equal_time_modes_commute(oq):
    """<b_2(t) b_1^dag(t)> = <b_1^dag(t) b_2(t)> for two bands at equal times, for any system correlations."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=(STEPS, STEPS)) + 1j * rng.normal(size=(STEPS, STEPS))
    correlations, *_ = independent_boson(oq, values)
    for time in (0.7, 2.0):
        left = correlations.correlation(1.2, time, 2.1, time, dw=(0.4, 0.9), dagg=(0, 1))
        right = correlations.correlation(2.1, time, 1.2, time, dw=(0.9, 0.4), dagg=(1, 0))
        assert abs(left) > 1e-3 and left == pytest.approx(right, abs=1e-12)


def test_cell_integrals_against_quadrature(oq):
    """Squares above the diagonal, triangles on it, including the resonant a + b = 0 and zero rates."""
    size, dt, points = 3, 0.3, 400
    grid = (np.arange(points) + 0.5) * dt / points
    for rate_late, rate_early in [(-1j, 2j), (-1.5j, 1.5j), (0.0, 1j), (1j, 0.0), (0.0, 0.0)]:
        integrals = oq.bath_dynamics.cell_integrals(rate_late, rate_early, dt, size)
        for i in range(size):
            for j in range(size):
                late = j * dt + grid[:, None]
                early = i * dt + grid[None, :]
                weight = (early < late) + 0.5 * (early == late)  # midpoint rule, half on the diagonal
                reference = (np.exp(rate_late * late + rate_early * early) * weight).sum() * (
                    dt / points
                ) ** 2
                assert integrals[i, j] == pytest.approx(reference, abs=1e-7)


def test_commutator_with_complex_system_correlations(oq):
    """<b b^dag> - <b^dag b> = 1 at equal times and bands for any ordered correlations, also complex ones."""
    rng = np.random.default_rng(7)
    values = rng.normal(size=(STEPS, STEPS)) + 1j * rng.normal(size=(STEPS, STEPS))
    correlations, *_ = independent_boson(oq, values)
    for time in (0.5, 1.3, 2.0):
        difference = correlations.correlation(1.7, time, dagg=(0, 1)) - correlations.correlation(
            1.7, time, dagg=(1, 0)
        )
        assert difference == pytest.approx(1.0, abs=1e-12)
        _, occupation = correlations.occupation(1.7)
        step = int(round(time / DT))
        assert occupation[step] == pytest.approx(
            correlations.correlation(1.7, time, dagg=(1, 0)).real, abs=1e-12
        )


OQUPY05_SCRIPT = textwrap.dedent(
    """
    import json, numpy as np, oqupy
    from oqupy.bath_dynamics import TwoTimeBathCorrelations
    sd = oqupy.PowerLawSD(alpha=0.2, zeta=1.0, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    system = oqupy.System(0.5 * oqupy.operators.sigma("x"))
    bath = oqupy.Bath(0.5 * oqupy.operators.sigma("z"), sd)
    pt = oqupy.PtTempo(bath, 0.0, 1.0, oqupy.TempoParameters(0.1, 1e-7, None)).get_process_tensor(
        progress_type="silent")
    corr = TwoTimeBathCorrelations(system, bath, pt, initial_state=oqupy.operators.spin_dm("up"))
    result = {"occupation": corr.occupation(1.0, progress_type="silent")[1].tolist(),
              "band": corr.occupation(2.0, dw=0.5, change_only=True)[1].tolist()}
    for dagg in [(0, 0), (1, 0), (1, 1)]:
        for args in [(1.0, 0.4, 2.0, 0.9), (1.5, 0.3, 1.5, 1.0)]:
            value = corr.correlation(*args, dw=(0.3, 0.7), dagg=dagg)
            result[str(dagg) + str(args)] = [value.real, value.imag]
    matrix = np.nan_to_num(corr._system_correlations)
    result["system"] = [matrix.real.tolist(), matrix.imag.tolist()]
    print(json.dumps(result))
    """
)


@pytest.mark.skipif(
    not os.environ.get("OQUPY05_PYTHON"), reason="set OQUPY05_PYTHON to an OQuPy 0.5 interpreter"
)
def test_agrees_with_oqupy_05(oq):
    """Same system correlations: OQuPy 0.5's numbers to 1e-12 (its <b b^dag> differs, docs/bath_dynamics.md);
    our own process tensor and correlations: to the PT-TEMPO precision."""
    run = subprocess.run(
        [os.environ["OQUPY05_PYTHON"], "-c", OQUPY05_SCRIPT], capture_output=True, text=True, check=True
    )
    reference = json.loads(run.stdout)
    system_correlations = np.array(reference["system"][0]) + 1j * np.array(reference["system"][1])
    assert np.abs(system_correlations.imag).max() > 1e-3
    op = oq.operators
    sd = oq.PowerLawSD(alpha=0.2, zeta=1.0, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    system, bath = oq.System(0.5 * op.sigma("x")), oq.Bath(0.5 * op.sigma("z"), sd)
    pt = oq.PtTempo(bath, 0.0, 1.0, oq.TempoParameters(0.1, 1e-7, None)).get_process_tensor(
        progress_type="silent"
    )
    given = oq.bath_dynamics.TwoTimeBathCorrelations(
        system, bath, pt, initial_state=op.spin_dm("up"), system_correlations=system_correlations
    )
    ours = oq.bath_dynamics.TwoTimeBathCorrelations(system, bath, pt, initial_state=op.spin_dm("up"))
    for correlations, atol in [(given, 1e-12), (ours, 1e-6)]:
        _, occupation = correlations.occupation(1.0, progress_type="silent")
        np.testing.assert_allclose(occupation, reference["occupation"], rtol=0, atol=atol)
        _, band = correlations.occupation(2.0, dw=0.5, change_only=True)
        np.testing.assert_allclose(band, reference["band"], rtol=0, atol=atol)
        for dagg in [(0, 0), (1, 0), (1, 1)]:
            for args in [(1.0, 0.4, 2.0, 0.9), (1.5, 0.3, 1.5, 1.0)]:
                value = correlations.correlation(*args, dw=(0.3, 0.7), dagg=dagg)
                expected = complex(*reference[str(dagg) + str(args)])
                assert value == pytest.approx(expected, abs=atol)


def test_bad_input(oq):
    correlations, sd, system, bath, state = independent_boson(oq, np.ones((STEPS, STEPS)))
    pt = trivial_process_tensor(oq)
    TwoTime = oq.bath_dynamics.TwoTimeBathCorrelations
    assert oq.TwoTimeBathCorrelations is TwoTime
    with pytest.raises(AssertionError):
        TwoTime(system, bath, pt)  # no initial state anywhere
    pt_with_state = trivial_process_tensor(oq)
    pt_with_state.set_initial_tensor(np.array([1.0, 0.0, 0.0, 0.0]))
    with pytest.raises(AssertionError):
        TwoTime(system, bath, pt_with_state, initial_state=state)  # two initial states
    assert TwoTime(system, bath, pt_with_state).initial_state is None
    for args in [("system", bath, pt), (system, "bath", pt), (system, bath, "pt")]:
        with pytest.raises(AssertionError):
            TwoTime(*args, initial_state=state)
    with pytest.raises(AssertionError):
        TwoTime(system, bath, pt, initial_state=state, system_correlations=np.ones(3))
    no_spectral_density = oq.Bath(oq.operators.sigma("z"), oq.CustomCorrelations(lambda tau: np.exp(-tau)))
    with pytest.raises(AssertionError):
        TwoTime(system, no_spectral_density, pt, initial_state=state)
    with pytest.raises(AssertionError):
        TwoTime(system, bath, pt, initial_state=state, name=3)
    with pytest.raises(TypeError):
        correlations.occupation("one")
    with pytest.raises(TypeError):
        correlations.correlation(1.0, "later")
    for dagg in [(2, 0), (1,), 1, "10"]:
        with pytest.raises(AssertionError):
            correlations.correlation(1.0, 1.0, dagg=dagg)
    with pytest.raises(AssertionError):
        correlations.correlation(1.0, 1.0, dw=1.0)
    with pytest.raises(ValueError):
        correlations.correlation(1.0, 1.5, 1.0, 1.0)  # time_1 after time_2
    with pytest.raises(ValueError):
        correlations.correlation(1.0, -0.5)
    with pytest.raises(IndexError):
        correlations.correlation(1.0, 0.5, 1.0, 2.5)  # past the process tensor
    with pytest.raises(IndexError):
        correlations.generate_system_correlations(3.0)
