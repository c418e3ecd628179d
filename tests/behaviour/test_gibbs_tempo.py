"""GibbsTEMPO against closed forms (no coupling; the polaron), second-order perturbation theory, a rotated
coupling, convergence in the number of steps, OQuPy 0.5 (when ``OQUPY05_PYTHON`` names its interpreter) and bad
input."""

import json
import os
import subprocess
import textwrap

import numpy as np
import pytest
import scipy.linalg
from scipy import integrate

HADAMARD = np.array([[1.0, 1.0], [1.0, -1.0]]) / np.sqrt(2.0)


def gibbs_state(oq, hamiltonian, coupling, sd, n_steps, epsrel=1e-12):
    tempo = oq.GibbsTempo(oq.System(hamiltonian), oq.Bath(coupling, sd), oq.GibbsParameters(n_steps, epsrel))
    tempo.compute(progress_type="silent")
    return tempo, np.asarray(tempo.get_state())


def ohmic(oq, alpha, cutoff, temperature):
    return oq.PowerLawSD(
        alpha=alpha, zeta=1, cutoff=cutoff, cutoff_type="exponential", temperature=temperature
    )


def thermal(hamiltonian, temperature):
    state = scipy.linalg.expm(-np.asarray(hamiltonian) / temperature)
    return state / np.trace(state)


def polaron_state(alpha, cutoff, temperature):
    """docs/algorithms.md, "Mean-force Gibbs state": H = diag(1/2, -1/2), coupling |0><0|: level 0 shifted down by 2 alpha cutoff."""
    return 0.5 * (
        np.eye(2) - 2 * np.tanh(1 / (2 * temperature) - alpha * cutoff / temperature) * np.diag([0.5, -0.5])
    )


def second_order_state(hamiltonian, coupling, alpha, cutoff, temperature, nodes=60):
    r"""Mean-force Gibbs state to second order in the coupling, for ``PowerLawSD(alpha, zeta=1, exponential)``.

    ``Tr_B e^{-beta H} / Z_B = e^{-beta H_S} [1 + \int_0^beta d tau \int_0^tau d tau' K(tau - tau') S(tau) S(tau')]``
    with ``S(tau) = e^{tau H_S} S e^{-tau H_S}`` and ``K(u) = \int J(w) (e^{-wu} + e^{-w(beta-u)}) / (1 - e^{-w beta})
    dw``; in the eigenbasis of H_S the inner integral is done in closed form, the lag ``u`` by Gauss-Legendre and
    ``K`` by ``quad``: independent of the library's integrals.
    """
    beta = 1.0 / temperature
    energies, vectors = np.linalg.eigh(np.asarray(hamiltonian))
    s = vectors.conj().T @ np.asarray(coupling) @ vectors
    x, w = np.polynomial.legendre.leggauss(nodes)
    lags, weights = beta * (x + 1) / 2, beta * w / 2

    def kernel(u):
        def integrand(omega):
            bose = (np.exp(-omega * u) + np.exp(-omega * (beta - u))) / -np.expm1(-beta * omega)
            return 2 * alpha * omega * np.exp(-omega / cutoff) * bose

        return integrate.quad(integrand, 0, np.inf, epsabs=0, epsrel=1e-12, limit=200)[0]

    k = np.array([kernel(u) for u in lags])
    gaps = energies[:, None] - energies[None, :]
    dim = len(energies)
    m = np.zeros((dim, dim), dtype=complex)
    for i in range(dim):
        for j in range(dim):
            a = gaps[i, j]
            inner = beta - lags if abs(a) < 1e-12 else (np.exp(beta * a) - np.exp(lags * a)) / a
            for n in range(dim):
                m[i, j] += s[i, n] * s[n, j] * np.sum(weights * k * np.exp(-lags * gaps[n, j]) * inner)
    state = vectors @ (np.diag(np.exp(-beta * energies)) @ (np.eye(dim) + m)) @ vectors.conj().T
    return state / np.trace(state)


def test_zero_coupling_gives_the_thermal_state(oq):
    """alpha = 0: the network is (P P)^n = exp(-beta H) exactly, for any n_steps and a non-diagonal coupling."""
    op = oq.operators
    hamiltonian = 0.7 * op.sigma("x") + 0.3 * op.sigma("y") + 0.2 * op.sigma("z")
    tempo, state = gibbs_state(oq, hamiltonian, op.sigma("x") + op.sigma("z"), ohmic(oq, 0.0, 3.0, 0.8), 7)
    np.testing.assert_allclose(state, thermal(hamiltonian, 0.8), atol=1e-13)
    assert tempo.dimension == 2 and tempo.temperature == 0.8


@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_polaron_closed_form(oq, alpha):
    """docs/algorithms.md, "Mean-force Gibbs state" (n_steps 40 instead of 100: the commuting case has no Trotter error), to 1e-10."""
    sd = ohmic(oq, alpha, 5.0, 2.1)
    tempo, state = gibbs_state(oq, np.diag([0.5, -0.5]), np.diag([1.0, 0.0]), sd, 40, epsrel=1e-11)
    np.testing.assert_allclose(state, polaron_state(alpha, 5.0, 2.1), atol=1e-10)
    # the imaginary-time history: n_steps + 1 unnormalised operators at n * dbeta, the identity first
    dynamics = tempo.get_dynamics()
    np.testing.assert_allclose(np.asarray(dynamics.times), np.arange(41) / (40 * 2.1), rtol=1e-14)
    assert dynamics.times[-1] == 1 / 2.1  # exactly beta (OQuPy's tests compare with ==)
    np.testing.assert_allclose(np.asarray(dynamics.states[0]), np.eye(2), atol=0)
    final = np.asarray(dynamics.states[-1])
    np.testing.assert_allclose(final / np.trace(final), state, atol=1e-15)


def test_rotated_coupling_rotates_the_state(oq):
    """§20.4 rotated: H -> V H V^dagger, coupling -> V|0><0|V^dagger (V Hadamard) gives V rho V^dagger.

    OQuPy 0.5 raises NotImplementedError for a non-diagonal coupling; here it is computed in its eigenbasis.
    """
    v = HADAMARD
    sd = ohmic(oq, 0.3, 5.0, 2.1)
    coupling = v @ np.diag([1.0, 0.0]) @ v.T
    _, state = gibbs_state(oq, v @ np.diag([0.5, -0.5]) @ v.T, coupling, sd, 40, epsrel=1e-11)
    np.testing.assert_allclose(state, v @ polaron_state(0.3, 5.0, 2.1) @ v.T, atol=1e-10)


def test_weak_coupling_approaches_second_order_perturbation_theory(oq):
    """Non-commuting H and coupling: TEMPO minus the second-order state is O(alpha^2) (ratio 4 when alpha doubles),
    and small against the first-order correction itself."""
    op = oq.operators
    hamiltonian, coupling, cutoff, temperature = (
        0.5 * op.sigma("x") + 0.25 * op.sigma("z"),
        0.5 * op.sigma("z"),
        5.0,
        1.0,
    )
    free = thermal(hamiltonian, temperature)
    deviations, corrections = [], []
    for alpha in (0.01, 0.02):
        _, state = gibbs_state(
            oq, hamiltonian, coupling, ohmic(oq, alpha, cutoff, temperature), 40, epsrel=1e-9
        )
        reference = second_order_state(hamiltonian, coupling, alpha, cutoff, temperature)
        deviations.append(np.abs(state - reference).max())
        corrections.append(np.abs(reference - free).max())
    assert deviations[0] < 0.03 * corrections[0]
    assert 3.5 < deviations[1] / deviations[0] < 4.5


def test_convergence_in_n_steps(oq):
    """Trotter error O(dbeta^2): |rho(n) - rho(4n)| drops by (1/n^2 - 1/16n^2) / (1/4n^2 - 1/16n^2) = 5 from n to 2n."""
    op = oq.operators
    hamiltonian, coupling = 0.5 * op.sigma("x") + 0.25 * op.sigma("z"), 0.5 * op.sigma("z")
    sd = ohmic(oq, 0.2, 5.0, 1.0)
    states = [gibbs_state(oq, hamiltonian, coupling, sd, n, epsrel=1e-8)[1] for n in (10, 20, 40)]
    coarse, fine = np.abs(states[0] - states[2]).max(), np.abs(states[1] - states[2]).max()
    assert coarse > 1e-5
    assert 4.0 < coarse / fine < 6.0
    # Hermitian up to the truncation (epsrel 1e-8 per split, some 1e-7 in all), positive
    assert np.abs(states[2] - states[2].conj().T).max() < 1e-6 and np.linalg.eigvalsh(states[2]).min() > 0


# -- OQuPy 0.5 -------------------------------------------------------------------------------------------------

OQUPY05_SCRIPT = textwrap.dedent(
    """
    import json, numpy as np, oqupy
    h = 0.5 * oqupy.operators.sigma("x") + 0.15 * oqupy.operators.sigma("z")
    sd = oqupy.PowerLawSD(alpha=0.2, zeta=1, cutoff=3.0, cutoff_type="exponential", temperature=1.5)
    tempo = oqupy.GibbsTempo(oqupy.System(h), oqupy.Bath(0.5 * oqupy.operators.sigma("z"), sd),
                             oqupy.GibbsParameters(30, 1e-12))
    tempo.compute(progress_type="silent")
    states = tempo.get_dynamics().states
    print(json.dumps({"state": tempo.get_state().real.tolist(), "history": states.real.tolist()}))
    """
)


@pytest.mark.skipif(
    not os.environ.get("OQUPY05_PYTHON"), reason="set OQUPY05_PYTHON to an OQuPy 0.5 interpreter"
)
def test_agrees_with_oqupy_05(oq):
    """A real Hamiltonian with a bath whose Matsubara integrals OQuPy 0.5 gets right (its integrand drops a term
    above ``omega = 36 T``: harmless at cutoff 3, T = 1.5).  OQuPy 0.5 returns the transpose of the state, which
    only shows for complex Hamiltonians (docs/gibbs_tempo.md)."""
    run = subprocess.run(
        [os.environ["OQUPY05_PYTHON"], "-c", OQUPY05_SCRIPT], capture_output=True, text=True, check=True
    )
    reference = json.loads(run.stdout)
    op = oq.operators
    sd = ohmic(oq, 0.2, 3.0, 1.5)
    tempo, state = gibbs_state(oq, 0.5 * op.sigma("x") + 0.15 * op.sigma("z"), 0.5 * op.sigma("z"), sd, 30)
    np.testing.assert_allclose(state, np.array(reference["state"]), atol=1e-9)
    history = np.asarray(tempo.get_dynamics().states)
    np.testing.assert_allclose(history.real, np.array(reference["history"]), rtol=1e-8, atol=1e-10)


# -- bad input -------------------------------------------------------------------------------------------------


def test_gibbs_parameters_validation(oq):
    parameters = oq.GibbsParameters(10, 1e-7)
    assert parameters.n_steps == 10 and parameters.epsrel == 1e-7
    assert parameters.time_step_length(2.0) == pytest.approx(0.05)
    for n_steps, epsrel, error in [
        (2.5, 1e-7, TypeError),
        (10, "x", TypeError),
        (1, 1e-7, ValueError),
        (10, 0.0, ValueError),
    ]:
        with pytest.raises(error):
            oq.GibbsParameters(n_steps, epsrel)
    with pytest.raises(AttributeError):
        parameters.n_steps = 3
    with pytest.raises(AttributeError):
        del parameters.epsrel


def test_gibbs_tempo_validation(oq):
    op = oq.operators
    sd = ohmic(oq, 0.1, 3.0, 1.0)
    system, bath, parameters = (
        oq.System(op.sigma("x")),
        oq.Bath(op.sigma("z"), sd),
        oq.GibbsParameters(4, 1e-7),
    )
    time_dependent = oq.TimeDependentSystem(lambda t: op.sigma("x"))
    correlations = oq.CustomCorrelations(lambda tau: np.exp(-np.abs(tau)))
    cases = [
        ((time_dependent, bath, parameters), TypeError),
        ((system, op.sigma("z"), parameters), TypeError),
        ((system, oq.Bath(op.sigma("z"), correlations), parameters), TypeError),
        ((system, bath, oq.TempoParameters(dt=0.1, epsrel=1e-7)), TypeError),
        ((system, oq.Bath(np.eye(3), sd), parameters), ValueError),
        ((system, oq.Bath(op.sigma("z"), ohmic(oq, 0.1, 3.0, 0.0)), parameters), ValueError),
    ]
    for arguments, error in cases:
        with pytest.raises(error):
            oq.GibbsTempo(*arguments)
    lossy = oq.System(op.sigma("x"), gammas=[0.1], lindblad_operators=[op.sigma("-")])
    with pytest.raises(Warning, match="Markovian decay"):
        oq.GibbsTempo(lossy, bath, parameters)
    tempo = oq.GibbsTempo(system, bath, parameters)
    assert tempo.get_dynamics() is None
    with pytest.raises(ValueError):
        tempo.get_state()
    state = oq.gibbs_tempo_compute(system, bath, parameters, progress_type="silent")
    tempo.compute(progress_type="silent")
    np.testing.assert_allclose(np.asarray(state), tempo.get_state(), atol=1e-14)
    assert oq.tempo.GibbsTempo is oq.GibbsTempo and oq.tempo.gibbs_tempo_compute is oq.gibbs_tempo_compute
