"""Behaviour of ``bath_correlations``: closed forms, identities, caching and input validation."""

import copy
import importlib
import warnings

import numpy as np
import pytest
from conftest import to_numpy
from scipy.special import loggamma


def bc_module(oq):
    """The ``bath_correlations`` submodule of the package under test."""
    return importlib.import_module(oq.__name__ + ".bath_correlations")


def ohmic_eta(alpha, cutoff, temperature, tau):
    """Closed-form eta of J = 2 alpha w exp(-w/wc) (docs/algorithms.md, "η of the Ohmic bath with an exponential cutoff")."""
    tau = np.asarray(tau, dtype=float)
    eta = 2 * alpha * (np.log(1 + 1j * cutoff * tau) - 1j * cutoff * tau)
    if temperature > 0:
        x = 1 + temperature / cutoff
        eta = eta + 2 * alpha * (
            2 * loggamma(x) - loggamma(x + 1j * temperature * tau) - loggamma(x - 1j * temperature * tau)
        )
    return eta


def super_ohmic_eta(alpha, cutoff, tau):
    """Closed-form T = 0 eta of J = 2 alpha w^3 wc^-2 exp(-w/wc)."""
    y = cutoff * np.asarray(tau, dtype=float)
    return 2 * alpha * (1 - 1 / (1 + 1j * y) ** 2 - 2j * y)


def rectangle(eta, t1, t2, delta):
    return eta(t2) - eta(t1) - eta(t2 - delta) + eta(t1 - delta)


# -- closed forms -------------------------------------------------------------------


@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_ohmic_eta_closed_form(oq, temperature):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, cutoff_type="exponential", temperature=temperature)
    taus = np.array([[0.05, 0.3, 1.0], [2.5, 6.0, 15.0]])
    values = to_numpy(sd.eta_function(taus))
    assert values.shape == taus.shape and values.dtype == np.complex128
    np.testing.assert_allclose(values, ohmic_eta(0.1, 2.0, temperature, taus), rtol=1e-7, atol=1e-8)
    scalar = sd.eta_function(1.0)
    assert isinstance(scalar, complex)
    assert scalar == pytest.approx(complex(ohmic_eta(0.1, 2.0, temperature, 1.0)), rel=1e-7)


def test_super_ohmic_dephasing_exponent(oq):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.3, zeta=3, cutoff=5, cutoff_type="exponential", temperature=0)
    eta = sd.eta_function(10.0)
    assert eta.real == pytest.approx(0.600240, abs=5e-7)
    assert np.exp(-eta.real) == pytest.approx(0.548680, abs=5e-7)
    taus = np.array([0.4, 1.2, 4.0, 10.0])
    np.testing.assert_allclose(to_numpy(sd.eta_function(taus)), super_ohmic_eta(0.3, 5.0, taus), rtol=1e-7)


def test_eta_at_zero_and_symmetry(oq):
    bc = bc_module(oq)
    sd = bc.CustomSD(lambda w: 0.1 * w**2, cutoff=2.0, temperature=2.0)
    assert sd.eta_function(0.0) == 0
    assert sd.eta_function(0.0, matsubara=True) == 0
    # eta(-t) = conj(eta(t)) in real time (C(-t) = conj C(t))
    assert sd.eta_function(-0.8) == pytest.approx(np.conj(sd.eta_function(0.8)), rel=1e-10)


def test_eta_second_derivative_is_correlation(oq):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=0.5)
    h, t = 1e-3, 0.6
    eta = to_numpy(sd.eta_function(np.array([t - h, t, t + h])))
    assert (eta[0] - 2 * eta[1] + eta[2]) / h**2 == pytest.approx(sd.correlation(t), rel=1e-5)
    eta_m = to_numpy(sd.eta_function(np.array([t - h, t, t + h]), matsubara=True))
    assert eta_m.dtype == np.float64
    assert (eta_m[0] - 2 * eta_m[1] + eta_m[2]) / h**2 == pytest.approx(
        -sd.correlation(t, matsubara=True), rel=1e-5
    )


def test_correlation_closed_form_zero_temperature(oq):
    # J = 2 alpha w exp(-w/wc), T = 0: C(t) = 2 alpha / (1/wc + i t)^2
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0)
    taus = np.array([0.0, 0.3, 1.7])
    np.testing.assert_allclose(to_numpy(sd.correlation(taus)), 0.2 / (0.5 + 1j * taus) ** 2, rtol=1e-7)


def test_matsubara_periodicity(oq):
    bc = bc_module(oq)
    temperature = 0.5
    beta = 1 / temperature
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=temperature)
    c_0 = sd.correlation(0.0, matsubara=True)
    assert isinstance(c_0, float)
    assert sd.correlation(beta, matsubara=True) == pytest.approx(c_0, rel=1e-8)
    assert sd.correlation(0.3, matsubara=True) == pytest.approx(
        sd.correlation(beta - 0.3, matsubara=True), rel=1e-8
    )
    assert sd.correlation(0.3 + beta, matsubara=True) == pytest.approx(
        sd.correlation(0.3, matsubara=True), rel=1e-8
    )
    # eta_M(beta) = -lambda beta with lambda = 2 alpha wc; the periodic continuation is continuous at beta
    assert sd.eta_function(beta, matsubara=True) == pytest.approx(-0.4 * beta, rel=1e-7)
    assert sd.eta_function(beta + 1e-6, matsubara=True) == pytest.approx(-0.4 * beta, rel=1e-5)
    h, t = 1e-3, beta + 0.7
    eta_m = to_numpy(sd.eta_function(np.array([t - h, t, t + h]), matsubara=True))
    assert (eta_m[0] - 2 * eta_m[1] + eta_m[2]) / h**2 == pytest.approx(
        -sd.correlation(t, matsubara=True), rel=1e-5
    )


# -- 2-D integrals -------------------------------------------------------------------


@pytest.mark.parametrize("matsubara", [False, True])
@pytest.mark.parametrize("cutoff_type", ["hard", "exponential", "gaussian"])
def test_stitching_identity(oq, cutoff_type, matsubara):
    bc = bc_module(oq)
    sd = bc.CustomSD(lambda w: 0.1 * w**2, cutoff=2.0, cutoff_type=cutoff_type, temperature=2.0)
    dt = 0.25

    def triangle(delta):
        return sd.correlation_2d_integral(
            delta=delta, time_1=0.0, shape="upper-triangle", matsubara=matsubara
        )

    square = sd.correlation_2d_integral(delta=dt, time_1=2 * dt, shape="square", matsubara=matsubara)
    rect = sd.correlation_2d_integral(
        delta=dt, time_1=2 * dt, time_2=4 * dt, shape="rectangle", matsubara=matsubara
    )
    lhs = triangle(4 * dt)
    rhs = 3 * triangle(2 * dt) + square + rect - 2 * triangle(dt)
    assert abs(lhs) > 1e-3
    np.testing.assert_almost_equal(lhs, rhs, decimal=7)
    if matsubara:
        assert isinstance(lhs, float)


def test_2d_integrals_match_eta_stencils(oq):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=0.7)

    def eta(t):
        return ohmic_eta(0.1, 2.0, 0.7, t)

    dt = 0.2
    assert sd.correlation_2d_integral(dt, 0.0, shape="upper-triangle") == pytest.approx(eta(dt), rel=1e-7)
    assert sd.correlation_2d_integral(dt, 3 * dt) == pytest.approx(
        eta(4 * dt) - 2 * eta(3 * dt) + eta(2 * dt), rel=1e-6
    )
    assert sd.correlation_2d_integral(dt, 3 * dt, 7 * dt, shape="rectangle") == pytest.approx(
        rectangle(eta, 3 * dt, 7 * dt, dt), rel=1e-6
    )


@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_influence_coefficients_match_per_step_integrals(oq, temperature):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=temperature)
    dt, dkmax = 0.1, 6
    eta = to_numpy(sd.influence_coefficients(dt, dkmax))
    assert eta.shape == (dkmax + 1,) and eta.dtype == np.complex128
    expected = [sd.correlation_2d_integral(delta=dt, time_1=0.0, shape="upper-triangle")]
    expected += [
        sd.correlation_2d_integral(delta=dt, time_1=k * dt, shape="square") for k in range(1, dkmax + 1)
    ]
    np.testing.assert_allclose(eta, expected, rtol=1e-9, atol=1e-14)
    grid = dt * np.arange(dkmax + 2)
    exact = ohmic_eta(0.1, 2.0, temperature, grid)
    np.testing.assert_allclose(
        eta, np.concatenate([[exact[1]], exact[2:] - 2 * exact[1:-1] + exact[:-2]]), atol=1e-8
    )
    with pytest.raises(ValueError):
        sd.influence_coefficients(
            dt, dkmax, matsubara=True
        ) if temperature == 0 else sd.influence_coefficients(-dt, 3)
    with pytest.raises(TypeError):
        sd.influence_coefficients("dt", 3)


@pytest.mark.parametrize("temperature", [0.0, 0.2])
def test_influence_coefficients_closed_form_at_long_lags(oq, temperature):
    """The canonical Ohmic bath at 400 lags: every square integral to 1e-10 of the first one.

    Taken as differences of eta values, the coefficients beyond lag 100 were off by 2e-4 of the first one
    (docs/tempo.md, "Influence coefficients").
    """
    bc = bc_module(oq)
    alpha, cutoff, dt, dkmax = 0.25, 5.0, 0.05, 400
    sd = bc.PowerLawSD(alpha=alpha, zeta=1, cutoff=cutoff, temperature=temperature)
    eta = to_numpy(sd.influence_coefficients(dt, dkmax))
    lags = np.arange(1, dkmax + 1)
    if temperature == 0.0:
        # the second difference of 2 alpha (ln(1 + i wc t) - i wc t), without cancellation
        exact = 2 * alpha * np.log1p((cutoff * dt) ** 2 / (1 + 1j * cutoff * dt * lags) ** 2)
    else:
        values = ohmic_eta(alpha, cutoff, temperature, dt * np.arange(dkmax + 2))
        exact = values[2:] - 2 * values[1:-1] + values[:-2]
    assert np.max(np.abs(eta[1:] - exact)) < 1e-10 * abs(exact[0])


def test_influence_coefficients_smooth_in_the_lag(oq):
    """OQuPy #162's bath (weak, super-Ohmic, gaussian cutoff): the coefficients have no quadrature noise.

    The memory's cross-kernel ``eta[l - m]`` (m before a cut, l after it) of a smooth correlation has rapidly
    decaying singular values; noise in the coefficients shows as a plateau (it was at 3e-4 of the largest,
    and it set the bond dimension of PT-TEMPO at epsrel 1e-9).
    """
    bc = bc_module(oq)
    sd = bc.PowerLawSD(
        alpha=0.01 * 2.2**2, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=4 * 0.1309
    )
    eta = to_numpy(sd.influence_coefficients(0.01, 500))
    lags = np.arange(75, 500)[None, :] - np.arange(75)[:, None]
    for part in (eta.real, eta.imag):
        values = np.linalg.svd(part[lags], compute_uv=False)
        assert values[12] < 1e-10 * values[0]


@pytest.mark.parametrize("cutoff_type", ["exponential", "gaussian", "hard"])
def test_influence_coefficients_sub_ohmic(oq, cutoff_type):
    """A sub-Ohmic bath at T > 0 (integrable singularity at zero frequency) against an independent quadrature."""
    from scipy import integrate

    bc = bc_module(oq)
    alpha, zeta, cutoff, temperature, dt = 0.05, 0.5, 5.0, 1.0, 0.05
    sd = bc.PowerLawSD(alpha, zeta, cutoff, cutoff_type, temperature=temperature)
    eta = to_numpy(sd.influence_coefficients(dt, 40))
    cut = {"exponential": lambda w: np.exp(-w / cutoff), "gaussian": lambda w: np.exp(-((w / cutoff) ** 2))}
    cut["hard"] = lambda w: 1.0
    upper = {"hard": cutoff, "gaussian": 8 * cutoff, "exponential": 80 * cutoff}[cutoff_type]

    def square(lag):
        # omega = u^2 removes the singularity; a plain quadrature of the full integrand
        def part(u, real):
            w = u * u
            j = 2 * alpha * w**zeta * cutoff ** (1 - zeta) * cut[cutoff_type](w)
            factor = 4 * np.sin(0.5 * w * dt) ** 2 / w**2 * 2 * u
            if real:
                return j * factor / np.tanh(0.5 * w / temperature) * np.cos(w * lag * dt)
            return -j * factor * np.sin(w * lag * dt)

        limits = (1e-12, np.sqrt(upper))
        options = {"limit": 800, "epsabs": 1e-17, "epsrel": 1e-13}
        real = integrate.quad(part, *limits, args=(True,), **options)[0]
        imag = integrate.quad(part, *limits, args=(False,), **options)[0]
        return complex(real, imag)

    for lag in (1, 7, 40):
        assert abs(eta[lag] - square(lag)) < 1e-10 * abs(eta[1])


def test_influence_coefficients_matsubara(oq):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=1.0)
    dt, dkmax = 0.1, 9
    eta = to_numpy(sd.influence_coefficients(dt, dkmax, matsubara=True))
    assert eta.dtype == np.complex128 and np.all(eta.imag == 0)
    expected = [sd.correlation_2d_integral(dt, 0.0, shape="upper-triangle", matsubara=True)]
    expected += [sd.correlation_2d_integral(dt, k * dt, matsubara=True) for k in range(1, dkmax + 1)]
    np.testing.assert_allclose(eta.real, expected, rtol=1e-9, atol=1e-14)


def test_tail_coefficient(oq):
    bc = bc_module(oq)
    dt, dkmax = 0.1, 5
    t1 = dkmax * dt
    # Ohmic, T > 0: the real part of the infinite tail is finite but non-zero (thermal dephasing rate).
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=0.7)

    def eta(t):
        return ohmic_eta(0.1, 2.0, 0.7, t)

    finite = sd.tail_coefficient(dt, dkmax, 3.0)
    assert finite == pytest.approx(complex(rectangle(eta, t1, t1 + 3.0, dt)), rel=1e-6)
    assert finite == sd.correlation_2d_integral(dt, t1, t1 + 3.0, shape="rectangle")
    infinite = sd.tail_coefficient(dt, dkmax, np.inf)
    np.testing.assert_allclose(infinite, rectangle(eta, t1, t1 + 1e6, dt), atol=1e-7)
    assert infinite.real > 1e-3
    assert sd.tail_coefficient(dt, dkmax, 0.0) == 0
    # The same spectral density given as a CustomSD (numerical zero-frequency limit).
    custom = bc.CustomSD(lambda w: 0.2 * w, cutoff=2.0, temperature=0.7)
    np.testing.assert_allclose(custom.tail_coefficient(dt, dkmax, np.inf), infinite, atol=1e-8)
    # Super-Ohmic, T = 0: Re part of eta(t2) - eta(t2 - dt) tends to 0.
    sd3 = bc.PowerLawSD(alpha=0.3, zeta=3, cutoff=5.0)

    def eta3(t):
        return super_ohmic_eta(0.3, 5.0, t)

    np.testing.assert_allclose(
        sd3.tail_coefficient(0.4, 2, np.inf), rectangle(eta3, 0.8, 0.8 + 1e6, 0.4), atol=1e-8
    )
    with pytest.raises(ValueError):
        sd.tail_coefficient(dt, dkmax, -1.0)
    with pytest.raises(ValueError):
        sd.tail_coefficient(dt, dkmax, np.inf, matsubara=True)


# -- CustomCorrelations -------------------------------------------------------------


def test_custom_correlations(oq):
    bc = bc_module(oq)
    rate, amp = 1.5, 0.3 - 0.2j
    corr = bc.CustomCorrelations(lambda t: amp * np.exp(-rate * t))
    np.testing.assert_allclose(to_numpy(corr.correlation(np.array([0.0, 1.0]))), [amp, amp * np.exp(-rate)])
    dt = 0.2
    factor = (np.exp(rate * dt) - 1) / rate

    def square(t1):
        return amp * factor * (np.exp(-rate * t1) - np.exp(-rate * (t1 + dt))) / rate

    triangle = amp * (dt / rate - (1 - np.exp(-rate * dt)) / rate**2)
    assert corr.correlation_2d_integral(dt, 0.0, shape="upper-triangle") == pytest.approx(triangle, rel=1e-7)
    assert corr.correlation_2d_integral(dt, 2 * dt) == pytest.approx(square(2 * dt), rel=1e-7)
    rect = amp * factor * (np.exp(-rate * dt) - np.exp(-rate * 4 * dt)) / rate
    assert corr.correlation_2d_integral(dt, dt, 4 * dt, shape="rectangle") == pytest.approx(rect, rel=1e-7)
    eta = to_numpy(corr.influence_coefficients(dt, 2))
    np.testing.assert_allclose(eta, [triangle, square(dt), square(2 * dt)], rtol=1e-7)
    tail = amp * factor * np.exp(-rate * 2 * dt) / rate
    assert corr.tail_coefficient(dt, 2, np.inf) == pytest.approx(tail, rel=1e-6)
    with pytest.raises(AssertionError):
        corr.correlation_2d_integral(dt, dt, 4 * dt, shape="square")
    with pytest.raises(NotImplementedError):
        corr.correlation_2d_integral(dt, dt, shape="circle")
    with pytest.raises(NotImplementedError):
        corr.influence_coefficients(dt, 2, matsubara=True)


# -- caching ---------------------------------------------------------------------------


def test_cache_not_stale_after_changing_attributes(oq):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0)
    before = sd.eta_function(2.0)
    coefficients_before = to_numpy(sd.influence_coefficients(0.1, 3))
    sd.temperature = 0.7
    assert sd.eta_function(2.0) == pytest.approx(complex(ohmic_eta(0.1, 2.0, 0.7, 2.0)), rel=1e-7)
    fresh = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0, temperature=0.7)
    np.testing.assert_allclose(
        to_numpy(sd.influence_coefficients(0.1, 3)), to_numpy(fresh.influence_coefficients(0.1, 3))
    )
    assert not np.allclose(to_numpy(sd.influence_coefficients(0.1, 3)), coefficients_before)
    sd.temperature = 0.0
    assert sd.eta_function(2.0) == before
    sd.alpha = 0.2
    assert sd.eta_function(2.0) == pytest.approx(2 * before, rel=1e-10)
    sd.alpha = 0.1
    sd.cutoff = 3.0
    assert sd.eta_function(2.0) == pytest.approx(complex(ohmic_eta(0.1, 3.0, 0.0, 2.0)), rel=1e-7)
    sd.cutoff_type = "gaussian"
    gauss = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=3.0, cutoff_type="gaussian")
    assert sd.eta_function(2.0) == gauss.eta_function(2.0)
    # a shallow copy (as Bath stores it) evaluates with its own parameters
    clone = copy.copy(sd)
    clone.zeta = 3.0
    assert clone.eta_function(2.0) == bc.PowerLawSD(0.1, 3, 3.0, cutoff_type="gaussian").eta_function(2.0)
    assert sd.eta_function(2.0) == gauss.eta_function(2.0)
    custom = bc.CustomSD(lambda w: 0.2 * w, cutoff=2.0)
    first = custom.eta_function(1.0)
    custom.j_function = lambda w: 0.4 * w
    assert custom.eta_function(1.0) == pytest.approx(2 * first, rel=1e-10)


def test_spectral_density(oq):
    bc = bc_module(oq)
    omegas = np.array([0.5, 1.0, 3.0])
    for cutoff_type, factor in [
        ("exponential", np.exp(-omegas / 2.0)),
        ("gaussian", np.exp(-((omegas / 2.0) ** 2))),
        ("hard", (omegas < 2.0).astype(float)),
    ]:
        sd = bc.PowerLawSD(alpha=0.1, zeta=3, cutoff=2.0, cutoff_type=cutoff_type)
        np.testing.assert_allclose(
            to_numpy(sd.spectral_density(omegas)), 0.2 * omegas**3 / 4.0 * factor, rtol=1e-14
        )
    assert isinstance(sd.spectral_density(1.0), float)
    text = str(bc.PowerLawSD(alpha=0.1, zeta=3, cutoff=2.0, name="bath"))
    assert "bath" in text and "alpha" in text and "cutoff_type" in text


# -- validation --------------------------------------------------------------------


def test_base_correlations_not_implemented(oq):
    bc = bc_module(oq)
    base = bc.BaseCorrelations()
    with pytest.raises(NotImplementedError):
        base.correlation(1.0)
    with pytest.raises(NotImplementedError):
        base.correlation_2d_integral(1.0, 1.0)


def test_bad_input_exceptions(oq):
    bc = bc_module(oq)
    with pytest.raises(AssertionError):
        bc.CustomSD("not a function", cutoff=1.0)
    with pytest.raises(AssertionError):
        bc.CustomSD(lambda w: "text", cutoff=1.0)
    with pytest.raises(AssertionError):
        bc.CustomSD(lambda w: np.nan, cutoff=1.0)
    with pytest.raises(AssertionError):
        bc.CustomSD(lambda w: np.nan if w < 0.9 else w, cutoff=1.0)
    with pytest.raises(AssertionError):
        bc.CustomSD(lambda w: w, cutoff="high")
    with pytest.raises(AssertionError):
        bc.CustomSD(lambda w: w, cutoff=1.0, cutoff_type="lorentzian")
    with pytest.raises(AssertionError):
        bc.CustomSD(lambda w: w, cutoff=1.0, temperature="hot")
    with pytest.raises(ValueError):
        bc.CustomSD(lambda w: w, cutoff=1.0, temperature=-0.1)
    with pytest.raises(AssertionError):
        bc.PowerLawSD(alpha="a", zeta=1, cutoff=1.0)
    with pytest.raises(AssertionError):
        bc.PowerLawSD(alpha=0.1, zeta="z", cutoff=1.0)
    with pytest.raises(AssertionError):
        bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=None)
    with pytest.raises(ValueError):
        bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=1.0, temperature=-1.0)
    with pytest.raises(AssertionError):
        bc.CustomCorrelations(lambda t: "text")
    with pytest.raises(AssertionError):
        bc.CustomCorrelations(42)

    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=1.0)
    with pytest.raises(ValueError):
        sd.correlation(1.0, matsubara=True)
    with pytest.raises(ValueError):
        sd.eta_function(1.0, matsubara=True)
    with pytest.raises(ValueError):
        sd.correlation_2d_integral(0.1, 0.1, matsubara=True)
    with pytest.raises(NotImplementedError):
        sd.correlation_2d_integral(0.1, 0.1, shape="lower-triangle")
    with pytest.raises(TypeError):
        sd.eta_function("soon")


def test_integration_warnings_do_not_raise(oq):
    bc = bc_module(oq)
    sd = bc.PowerLawSD(alpha=0.1, zeta=1, cutoff=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = sd.eta_function(50.0, subdiv_limit=4)
    assert np.isfinite(value)
