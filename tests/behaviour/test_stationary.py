"""Stationary correlations, spectra and multi-time correlations through uniform process tensors: the late-time
limit of compute_correlations, the independent-boson closed form, the golden-rule line width, sum rules, bad input."""

import functools
import warnings

import numpy as np
import pytest

pytestmark = pytest.mark.device  # run on accelerators by benchmarks/device_check.sh


def uniform_pt(oq, coupling, sd_args, unique=False, **parameters):
    bath = oq.Bath(coupling, oq.PowerLawSD(**sd_args))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short memories warn (tested in test_tti_pt_tempo)
        return oq.TtiPtTempo(bath, 0.0, oq.TempoParameters(**parameters), unique=unique).get_process_tensor(
            progress_type="silent"
        )


CANONICAL = dict(alpha=0.25, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.2)
SMALL = dict(alpha=0.1, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)


def small_case(oq):
    """A cheap case with a unique steady state: biased spin, dt 0.1, memory 1.0 (transfer map of dimension ~100)."""
    op = oq.operators
    pt = uniform_pt(oq, 0.5 * op.sigma("z"), SMALL, dt=0.1, dkmax=10, epsrel=1e-6)
    return oq.System(0.5 * op.sigma("x") + 0.3 * op.sigma("z")), pt


def test_stationary_correlations_equal_compute_correlations_at_late_times(oq):
    """Canonical spin-boson case: the stationary C(tau) = <B(t + tau) A(t)> is compute_correlations at a late t
    (the same uniform PT, relaxed from spin up for 1200 steps: the slowest mode has decayed to 3e-9), both time
    orders, for sigma_x sigma_x and sigma^+ sigma^- (measured 7e-11); 'propagate' equals 'eig'."""
    op = oq.operators
    pt = uniform_pt(oq, 0.5 * op.sigma("z"), CANONICAL, unique=True, dt=0.05, dkmax=40, epsrel=1e-6)
    system = oq.System(0.5 * op.sigma("x"))
    late, lags = 1200, 40
    for a, b in ((op.sigma("x"), op.sigma("x")), (op.sigma("-"), op.sigma("+"))):
        tau, corr = oq.compute_stationary_correlations(system, pt, a, b, lags, time_order="full")
        np.testing.assert_allclose(tau, 0.05 * np.arange(-lags, lags + 1), rtol=0, atol=1e-12)
        _, ordered = oq.compute_correlations(
            system, pt, a, b, late, slice(late, late + lags + 1), initial_state=op.spin_dm("up")
        )
        _, anti = oq.compute_correlations(
            system,
            pt,
            a,
            b,
            slice(late, late + lags + 1),
            late,
            time_order="anti",
            initial_state=op.spin_dm("up"),
        )
        np.testing.assert_allclose(corr[lags:], ordered[0], rtol=0, atol=1e-8)
        np.testing.assert_allclose(corr[: lags + 1], anti[::-1, 0], rtol=0, atol=1e-8)
        if b is op.sigma("x") or np.allclose(b, op.sigma("x")):
            assert abs(corr[lags] - 1.0) < 1e-10  # <sigma_x^2> = 1
            _, stepped = oq.compute_stationary_correlations(system, pt, a, b, lags, method="propagate")
            np.testing.assert_allclose(stepped, corr[lags:], rtol=0, atol=1e-10)


@functools.lru_cache(maxsize=None)
def independent_boson_exact(num_steps):
    """exp(-eta(t)) of the ohmic bath below at t = k dt (eta from the bath's own 2-D integral of C(tau))."""
    import oqupy_numpy

    sd = oqupy_numpy.PowerLawSD(**IBM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quad's round-off warnings at long times
        eta = [
            sd.correlation_2d_integral(delta=0.05 * k, time_1=0.0, shape="upper-triangle")
            for k in range(num_steps)
        ]
    return np.exp(-np.array(eta))


IBM = dict(alpha=0.05, zeta=1, cutoff=10.0, cutoff_type="exponential", temperature=2.0)


def test_independent_boson_correlation_and_spectrum_against_the_closed_form(oq):
    """Pure dephasing, coupling |up><up|, relaxed in spin down (the bath stays in equilibrium):
    <sigma^-(tau) sigma^+(0)> = exp(-eta(tau) - i (eps + shift) tau) for a splitting eps + shift in H (eta holds
    the polaron shift: the line is at -eps), and its spectrum.
    Measured: correlation 9.8e-4 (the memory, 2.0, truncates the polaron shift), spectrum 9.6e-3 at the peak
    (3.39: 2.8e-3 relative); spectrum against the trapezoidal transform of our own correlation 2e-5; the sum rule
    to 1e-14."""
    op = oq.operators
    eps, shift, steps = 5.0, 2 * IBM["alpha"] * IBM["cutoff"], 400
    system = oq.System(0.5 * (eps + shift) * op.sigma("z"))
    pt = uniform_pt(oq, op.spin_dm("z+"), IBM, unique=True, dt=0.05, epsrel=1e-6, dkmax=40)
    down = op.spin_dm("z-")
    with pytest.raises(ValueError, match="not unique.*initial_state"):
        oq.compute_stationary_correlations(system, pt, op.sigma("+"), op.sigma("-"), 10)
    tau, corr = oq.compute_stationary_correlations(
        system, pt, op.sigma("+"), op.sigma("-"), steps - 1, time_order="full", initial_state=down
    )
    t = 0.05 * np.arange(steps)
    exact = independent_boson_exact(steps) * np.exp(-1j * (eps + shift) * t)  # Im eta holds -shift t
    assert np.abs(corr[steps - 1 :] - exact).max() < 2e-3
    assert np.abs(corr[: steps - 1][::-1] - np.conj(exact[1:])).max() < 2e-3  # C(-tau) = C(tau)^*
    omega = np.linspace(-12.0, 2.0, 15)
    _, spectrum = oq.compute_spectrum(
        system, pt, op.sigma("+"), op.sigma("-"), omega=omega, initial_state=down
    )
    assert spectrum.dtype.kind == "f"
    phases = np.exp(-1j * np.outer(omega, tau))
    exact_full = np.concatenate([np.conj(exact[:0:-1]), exact])
    reference = 0.05 * (phases @ exact_full).real
    ours = 0.05 * (phases @ corr).real
    assert np.abs(spectrum - reference).max() < 1.5e-2
    assert abs(spectrum[7] - reference[7]) / reference[7] < 5e-3  # the line, at -eps
    assert np.abs(spectrum - ours).max() < 1e-4
    omega, spectrum, lines = oq.compute_spectrum(
        system, pt, op.sigma("+"), op.sigma("-"), initial_state=down, return_lines=True
    )
    assert abs(np.sum(spectrum) * (omega[1] - omega[0]) / (2 * np.pi) - 1.0) < 1e-3  # <sigma^- sigma^+> = 1
    assert len(lines.frequencies) == 0  # <sigma^+> = 0: no coherent part


def test_weak_coupling_emission_line_has_the_golden_rule_width(oq):
    """H = eps sigma_z / 2, coupling sigma_x / 2, alpha 0.01, T = 1: the emission line <sigma^+(tau) sigma^-(0)>
    is a Lorentzian of full width Gamma_1 = (pi / 2) J(eps) coth(eps / 2T) (measured 0.0677 against 0.0675),
    near +eps (the Lamb shift: -0.009), and holds the excited population (the sum rule on the default grid:
    1.8e-4, the grid's spacing, 0.031, against the line's width)."""
    op = oq.operators
    alpha, cutoff, temperature, eps = 0.01, 10.0, 1.0, 2.0
    sd_args = dict(alpha=alpha, zeta=1, cutoff=cutoff, cutoff_type="exponential", temperature=temperature)
    pt = uniform_pt(oq, 0.5 * op.sigma("x"), sd_args, dt=0.05, dkmax=40, epsrel=1e-7)
    system = oq.System(0.5 * eps * op.sigma("z"))
    golden_rule = np.pi / 2 * 2 * alpha * eps * np.exp(-eps / cutoff) / np.tanh(eps / (2 * temperature))
    omega = np.linspace(eps - 0.6, eps + 0.6, 1201)
    omega, spectrum = oq.compute_spectrum(system, pt, op.sigma("-"), op.sigma("+"), omega=omega)
    peak = int(np.argmax(spectrum))
    half = spectrum[peak] / 2
    rising = np.flatnonzero((spectrum[:-1] < half) & (spectrum[1:] >= half))[0]
    falling = np.flatnonzero((spectrum[:-1] >= half) & (spectrum[1:] < half))[-1]

    def crossing(i):
        return omega[i] + (half - spectrum[i]) * (omega[i + 1] - omega[i]) / (spectrum[i + 1] - spectrum[i])

    width = crossing(falling) - crossing(rising)
    assert abs(width / golden_rule - 1) < 0.03
    assert abs(omega[peak] - eps) < 0.02
    rho = np.asarray(oq.compute_steady_state(system, pt))
    full_omega, full = oq.compute_spectrum(system, pt, op.sigma("-"), op.sigma("+"))
    weight = np.sum(full) * (full_omega[1] - full_omega[0]) / (2 * np.pi)
    assert abs(weight - rho[0, 0].real) < 1e-3  # <sigma^+ sigma^-> - |<sigma^+>|^2; <sigma^+> = 0 here


def test_spectrum_subtracts_the_coherent_part_and_obeys_the_sum_rule(oq):
    """sigma_x sigma_x of a biased spin: C(tau) -> <sigma_x>^2 != 0 is returned as a line at omega = 0, and the
    continuum integrates to <sigma_x^2> - <sigma_x>^2 (measured: 9e-12; the line's weight 4e-14)."""
    op = oq.operators
    system, pt = small_case(oq)
    rho = np.asarray(oq.compute_steady_state(system, pt))
    mean = np.trace(op.sigma("x") @ rho)
    assert abs(mean) > 0.05
    omega, spectrum, lines = oq.compute_spectrum(
        system, pt, op.sigma("x"), op.sigma("x"), num_points=1024, return_lines=True
    )
    assert len(omega) == 1024 and abs(omega[0] + np.pi / 0.1) < 1e-12
    assert len(lines.frequencies) == 1 and abs(lines.frequencies[0]) < 1e-9
    assert abs(lines.weights[0] - mean**2) < 1e-8
    assert abs(np.sum(spectrum) * (omega[1] - omega[0]) / (2 * np.pi) - (1 - mean.real**2)) < 1e-3
    _, corr = oq.compute_stationary_correlations(system, pt, op.sigma("x"), op.sigma("x"), 1000)
    assert abs(corr[-1] - mean**2) < 1e-9  # decays to <B><A> (slowest mode: 45 steps; measured 4e-11)


def test_multitime_correlations(oq):
    """n = 2 equals compute_stationary_correlations; n = 3 equals compute_correlations_nt at late times (the
    same uniform PT, relaxed for 1000 steps: 2e-10 of the slowest mode, 45 steps, left), with a 'right' one."""
    op = oq.operators
    system, pt = small_case(oq)
    gaps = [0, 3, 7]
    _, by_steps = oq.compute_stationary_multitime_correlations(
        system, pt, [op.sigma("-"), op.sigma("+")], ["left", "left"], [gaps], method="propagate"
    )
    delays, two = oq.compute_stationary_multitime_correlations(
        system, pt, [op.sigma("-"), op.sigma("+")], ["left", "left"], [gaps]
    )
    _, reference = oq.compute_stationary_correlations(system, pt, op.sigma("-"), op.sigma("+"), 7)
    np.testing.assert_allclose(delays[0], 0.1 * np.array(gaps), rtol=0, atol=1e-12)
    np.testing.assert_allclose(two, reference[gaps], rtol=0, atol=1e-10)
    np.testing.assert_allclose(by_steps, two, rtol=0, atol=1e-10)
    operators = [op.sigma("+"), op.sigma("x"), op.sigma("-")]
    orders = ["left", "right", "left"]
    first, second = [0, 2, 5], [1, 4]
    _, three = oq.compute_stationary_multitime_correlations(system, pt, operators, orders, [first, second])
    assert three.shape == (3, 2)
    late = 1000
    for i, g1 in enumerate(first):
        _, expected = oq.compute_correlations_nt(
            system,
            pt,
            operators,
            [late, late + g1, [late + g1 + g2 for g2 in second]],
            orders,
            initial_state=op.spin_dm("up"),
        )
        np.testing.assert_allclose(three[i], expected[0, 0], rtol=0, atol=1e-8)
    _, stepped = oq.compute_stationary_multitime_correlations(
        system, pt, operators, orders, [first, second], method="propagate"
    )
    np.testing.assert_allclose(stepped, three, rtol=0, atol=1e-10)


def test_slow_modes_equal_the_dense_eigendecomposition_and_propagation(oq, monkeypatch):
    """The default 'eig': exact steps until the state settles into the transfer map's slow modes, then those
    modes; against the dense eigendecomposition ('dense', also the fallback where no slow modes separate) and
    step-by-step propagation, over 3000 lags, a spectrum and multi-time gaps beyond the head (both sides)."""
    op = oq.operators
    system, pt = small_case(oq)
    transfer = oq._transfer_map.transfer_map(system, pt, None)
    matrix = np.asarray(transfer.step(np.identity(int(np.prod(transfer.shape)), dtype=complex))).T
    modes = oq._slow_modes.slow_modes(lambda x: matrix @ x, len(matrix), 1000)
    assert modes is not None and 0 < modes.head < 3000 and len(modes.values) < 10
    a, b = op.sigma("-"), op.sigma("+")
    results = {
        method: oq.compute_stationary_correlations(system, pt, a, b, 3000, "full", method=method)[1]
        for method in ("eig", "dense", "propagate")
    }
    np.testing.assert_allclose(results["eig"], results["propagate"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(results["dense"], results["propagate"], rtol=0, atol=1e-8)
    omega = np.linspace(-3.0, 3.0, 61)
    spectra = {
        method: oq.compute_spectrum(system, pt, a, b, omega=omega, method=method)[1]
        for method in ("eig", "dense", "solve")
    }
    np.testing.assert_allclose(spectra["eig"], spectra["dense"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(spectra["eig"], spectra["solve"], rtol=0, atol=1e-10)
    operators = [op.sigma("-"), op.sigma("+"), op.sigma("x"), op.sigma("+")]
    orders = ["right", "left", "right", "left"]
    gaps = [[0, 3, 250, 900], [1, 400], [0, 7, 300, 1200]]
    multi = {
        method: oq.compute_stationary_multitime_correlations(
            system, pt, operators, orders, gaps, method=method
        )[1]
        for method in ("eig", "dense", "propagate")
    }
    np.testing.assert_allclose(multi["eig"], multi["propagate"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(multi["dense"], multi["propagate"], rtol=0, atol=1e-8)
    monkeypatch.setattr(oq.stationary, "slow_modes", lambda apply, size, limit: None)  # the fallback
    _, fallback = oq.compute_stationary_correlations(system, pt, a, b, 3000, "full")
    np.testing.assert_array_equal(fallback, results["dense"])


def test_two_dimensional_pathway_from_the_solved_steady_state_equals_the_modes(oq, monkeypatch):
    """A third-order pathway on a 40 x 40 (t1, t3) grid at two waiting times.  With every gap within EXACT_STEPS
    the default ('eig') solves for the steady state and steps every power exactly (the slow modes are never
    sought); against the route through the slow modes (the same steady state, selected by an initial state), the
    dense eigendecomposition and step-by-step propagation (measured: 2e-14, 1.5e-12, 3e-15)."""
    op = oq.operators
    system, pt = small_case(oq)
    operators = [op.sigma("-"), op.sigma("+"), op.sigma("-"), op.sigma("+")]
    orders = ["right", "left", "left", "left"]
    grid = np.arange(40)

    def unused(*args):
        raise AssertionError("the slow modes were sought")

    for waiting in (0, 6):
        gaps = [grid, waiting, grid]
        with monkeypatch.context() as patch:
            patch.setattr(oq.stationary, "slow_modes", unused)
            delays, solved = oq.compute_stationary_multitime_correlations(system, pt, operators, orders, gaps)
        assert solved.shape == (40, 1, 40)
        np.testing.assert_allclose(delays[0], 0.1 * grid, rtol=0, atol=1e-12)
        _, modes = oq.compute_stationary_multitime_correlations(
            system, pt, operators, orders, gaps, initial_state=op.spin_dm("up")
        )
        _, dense = oq.compute_stationary_multitime_correlations(
            system, pt, operators, orders, gaps, method="dense"
        )
        _, stepped = oq.compute_stationary_multitime_correlations(
            system, pt, operators, orders, gaps, method="propagate"
        )
        assert np.abs(solved).max() > 1e-2
        np.testing.assert_allclose(solved, modes, rtol=0, atol=1e-10)
        np.testing.assert_allclose(solved, dense, rtol=0, atol=1e-10)
        np.testing.assert_allclose(solved, stepped, rtol=0, atol=1e-10)


def test_transposed_step_with_two_environments(oq):
    """The structured step and its transpose (read-out rows through the map) against the dense map, with two
    uniform process tensors (bond legs and the link between them)."""
    op = oq.operators
    system, pt = small_case(oq)
    other = uniform_pt(oq, 0.5 * op.sigma("x"), SMALL, dt=0.1, dkmax=4, epsrel=1e-5)
    transfer = oq._transfer_map.transfer_map(system, [pt, other], None)
    assert len(transfer.shape) == 3
    size = int(np.prod(transfer.shape))
    matrix = np.asarray(oq._transfer_map.dense_matrix(transfer))
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((3, size)) + 1j * rng.standard_normal((3, size))
    scale = np.abs(matrix).max()
    np.testing.assert_allclose(transfer.step(rows), rows @ matrix.T, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(transfer.back(rows), rows @ matrix, rtol=0, atol=1e-13 * scale)


def test_real_basis_steady_state_and_powers_equal_the_complex_ones(oq, monkeypatch):
    """Where the map is real in the swap's real basis (a real cell, a Hermiticity-preserving step) the steady state
    is solved there and the exact powers can run there (``REAL_POWERS``: ``oqupy_jax``'s choice): both equal the
    complex forms (one bath; several keep the complex step); a complex bond gauge has no real form and takes the complex path
    with the same results (measured: 1e-15 to 3e-14)."""
    op = oq.operators
    maps = oq._transfer_map
    system, pt = small_case(oq)
    other = uniform_pt(oq, 0.5 * op.sigma("x"), SMALL, dt=0.1, dkmax=4, epsrel=1e-5)
    transfer = maps.transfer_map(system, pt, None)
    assert transfer.real is not None
    complex_only = transfer._replace(real=None)
    state = maps.unique_state(transfer, 1e-6, 1e-7)
    expected = maps.unique_state(complex_only, 1e-6, 1e-7)
    assert state is not None and expected is not None
    np.testing.assert_allclose(state, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    rng = np.random.default_rng(3)
    size = int(np.prod(transfer.shape))
    rows = rng.standard_normal((2, size)) + 1j * rng.standard_normal((2, size))
    for backward, step in ((False, transfer.step), (True, transfer.back)):
        powers = maps.real_steps(transfer, rows, 7, backward)
        assert powers.shape == (8, 2, size)
        current = rows
        for power in powers:
            np.testing.assert_allclose(power, current, rtol=0, atol=1e-12 * np.abs(current).max())
            current = step(current)
    assert maps.transfer_map(system, [pt, other], None).real is None  # several baths: the complex step
    operators = [op.sigma("-"), op.sigma("+"), op.sigma("-"), op.sigma("+")]
    orders = ["right", "left", "left", "left"]
    grid = np.arange(25)
    results = {}
    for real_powers in (False, True):
        monkeypatch.setattr(oq._transfer_map, "REAL_POWERS", real_powers)
        _, plane = oq.compute_stationary_multitime_correlations(
            system, pt, operators, orders, [grid, 6, grid]
        )
        _, corr = oq.compute_stationary_correlations(system, pt, op.sigma("x"), op.sigma("x"), 30, "full")
        results[real_powers] = (np.asarray(plane), np.asarray(corr))
    for real, complex_form in zip(results[True], results[False]):
        assert np.abs(complex_form).max() > 1e-2
        np.testing.assert_allclose(real, complex_form, rtol=0, atol=1e-12)
    # the same process tensor in a complex bond gauge: no real form, the complex path, the same correlations
    phases = np.exp(1j * np.linspace(0.0, 2.0, pt.bond_dimension))
    gauged = oq.TtiProcessTensor(
        pt.hilbert_space_dimension,
        pt.dt,
        np.asarray(pt.cell) * phases.conj()[:, None, None] * phases[None, :, None],
        np.asarray(pt.left_boundary) * phases,
        np.asarray(pt.right_boundary) * phases.conj(),
        pt.transform_in,
        pt.transform_out,
    )
    assert maps.transfer_map(system, gauged, None).real is None
    monkeypatch.setattr(oq._transfer_map, "REAL_POWERS", True)
    _, plane = oq.compute_stationary_multitime_correlations(
        system, gauged, operators, orders, [grid, 6, grid]
    )
    np.testing.assert_allclose(plane, results[True][0], rtol=0, atol=1e-12)


def test_a_map_without_eigenvalue_one_is_refused_on_both_routes(oq):
    """A step that loses trace (every step scaled by 0.999): the short route (a solved steady state, gaps within
    EXACT_STEPS) finds no fixed point and leaves it to the modes, which name the problem; so does the long one."""
    system, pt = small_case(oq)
    transfer = oq._transfer_map.transfer_map(system, pt, None)
    lossy = transfer._replace(
        step=lambda rows: 0.999 * transfer.step(rows), matrix=lambda: 0.999 * transfer.matrix()
    )
    for top in (10, None):
        with pytest.raises(ValueError, match="no eigenvalue 1"):
            oq.stationary._stationary(lossy, None, top=top)


def test_bad_input(oq):
    op = oq.operators
    system, pt = small_case(oq)
    sx = op.sigma("x")
    finite = oq.PtTempo(
        oq.Bath(0.5 * op.sigma("z"), oq.PowerLawSD(**SMALL)),
        0.0,
        0.3,
        oq.TempoParameters(dt=0.1, dkmax=3, epsrel=1e-5),
    ).get_process_tensor(progress_type="silent")
    with pytest.raises(TypeError, match="process_tensor.*uniform"):
        oq.compute_stationary_correlations(system, finite, sx, sx, 5)
    dependent = oq.TimeDependentSystem(lambda t: 0.5 * sx)
    with pytest.raises(TypeError, match="system.*time-independent"):
        oq.compute_stationary_correlations(dependent, pt, sx, sx, 5)
    with pytest.raises(ValueError, match="operator_b.*shape"):
        oq.compute_stationary_correlations(system, pt, sx, np.identity(3), 5)
    with pytest.raises(ValueError, match="operator_a.*shape"):
        oq.compute_spectrum(system, pt, np.identity(3), sx)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="num_steps.*positive"):
            oq.compute_stationary_correlations(system, pt, sx, sx, bad)
    with pytest.raises(TypeError, match="num_steps"):
        oq.compute_stationary_correlations(system, pt, sx, sx, 2.5)
    with pytest.raises(ValueError, match="time_order"):
        oq.compute_stationary_correlations(system, pt, sx, sx, 5, time_order="later")
    with pytest.raises(ValueError, match="method"):
        oq.compute_stationary_correlations(system, pt, sx, sx, 5, method="fft")
    with pytest.raises(ValueError, match="initial_state.*shape"):
        oq.compute_stationary_correlations(system, pt, sx, sx, 5, initial_state=np.identity(3) / 3)
    with pytest.raises(ValueError, match="gaps"):
        oq.compute_stationary_multitime_correlations(system, pt, [sx, sx, sx], ["left"] * 3, [[1]])
    with pytest.raises(ValueError, match="gaps.*non-negative"):
        oq.compute_stationary_multitime_correlations(system, pt, [sx, sx], ["left"] * 2, [[-1]])
    with pytest.raises(ValueError, match="ops_order"):
        oq.compute_stationary_multitime_correlations(system, pt, [sx, sx], ["left", "up"], [[1]])
    with pytest.raises(ValueError, match=r"operators\[1\].*shape"):
        oq.compute_stationary_multitime_correlations(system, pt, [sx, np.identity(3)], ["left"] * 2, [[1]])


def test_spectrum_by_linear_solves_equals_the_eigendecomposition(oq):
    """method='solve' (what runs under jax.grad) against 'eig', for Hermitian and non-Hermitian pairs (3e-13)."""
    op = oq.operators
    system, pt = small_case(oq)
    omega = [-1.0, 0.0, 0.3, 1.2]
    for a, b in (
        (op.sigma("x"), op.sigma("x")),
        (op.sigma("-"), op.sigma("+")),
        (op.sigma("z"), op.sigma("x")),
    ):
        _, by_eig = oq.compute_spectrum(system, pt, a, b, omega=omega)
        _, by_solve = oq.compute_spectrum(system, pt, a, b, omega=omega, method="solve")
        assert type(by_solve) is np.ndarray and by_solve.dtype == by_eig.dtype
        np.testing.assert_allclose(by_solve, by_eig, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="method"):
        oq.compute_spectrum(system, pt, op.sigma("x"), op.sigma("x"), method="fft")
    with pytest.raises(ValueError, match="solve.*initial_state"):
        oq.compute_spectrum(
            system, pt, op.sigma("x"), op.sigma("x"), method="solve", initial_state=op.spin_dm("up")
        )


def test_jax_grad_of_a_line_height_equals_finite_differences(oq):
    """oqupy_jax: d S(omega_0) / d epsilon through the system's Hamiltonian (the absorption line of the small case,
    near its peak) by jax.grad against a central difference (measured: 2e-9 relative)."""
    if oq.__name__ != "oqupy_jax":
        pytest.skip("jax.grad through compute_spectrum is oqupy_jax's")
    import jax
    import jax.numpy as jnp

    op = oq.operators
    _, pt = small_case(oq)
    omega = [-1.1]

    def height(eps):
        system = oq.System(0.5 * op.sigma("x") + eps * jnp.asarray(op.sigma("z")))
        return oq.compute_spectrum(system, pt, op.sigma("+"), op.sigma("-"), omega=omega)[1][0]

    gradient = float(jax.grad(height)(0.3))
    step = 1e-5
    difference = (float(height(0.3 + step)) - float(height(0.3 - step))) / (2 * step)
    assert abs(difference) > 0.1
    assert abs(gradient - difference) < 1e-6 * abs(difference) + 1e-8


def test_jax_grad_and_vmap_through_correlations_and_multitime(oq):
    """oqupy_jax: with a traced system the steady state is solved for and the lags are scanned; jax.grad of a
    stationary correlation and of a 3-time correlation against central differences, jax.vmap over biases against
    a loop (measured: 3e-10 and 3e-8 relative, the difference quotient's own error; 6e-14)."""
    if oq.__name__ != "oqupy_jax":
        pytest.skip("jax.grad through stationary correlations is oqupy_jax's")
    import jax
    import jax.numpy as jnp

    op = oq.operators
    _, pt = small_case(oq)

    def system_of(eps):
        return oq.System(0.5 * op.sigma("x") + eps * jnp.asarray(op.sigma("z")))

    def correlation(eps):
        _, corr = oq.compute_stationary_correlations(system_of(eps), pt, op.sigma("-"), op.sigma("+"), 12)
        return jnp.real(corr[12])

    def three_time(eps):
        operators = [op.sigma("+"), op.sigma("x"), op.sigma("-")]
        _, corr = oq.compute_stationary_multitime_correlations(
            system_of(eps), pt, operators, ["left", "right", "left"], [[2, 5], [4]]
        )
        return jnp.imag(corr[1, 0])

    _, concrete = oq.compute_stationary_correlations(
        oq.System(0.5 * op.sigma("x") + 0.3 * op.sigma("z")), pt, op.sigma("-"), op.sigma("+"), 12
    )
    assert abs(float(correlation(0.3)) - concrete[12].real) < 1e-10
    step = 1e-5
    for function in (correlation, three_time):
        gradient = float(jax.grad(function)(0.3))
        difference = (float(function(0.3 + step)) - float(function(0.3 - step))) / (2 * step)
        assert abs(difference) > 1e-3
        assert abs(gradient - difference) < 1e-6 * abs(difference) + 1e-9
    biases = jnp.array([0.1, 0.3, 0.5])
    mapped = np.asarray(jax.vmap(correlation)(biases))
    np.testing.assert_allclose(mapped, [float(correlation(x)) for x in biases], rtol=0, atol=1e-12)
