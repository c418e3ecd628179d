"""Mean-force Gibbs states of a spin coupled to an Ohmic bath, by GibbsTEMPO, against the closed forms.

    coupling operator S = sigma_z / 2,  J(w) = 2 alpha w exp(-w / w_c),  w_c = 5.0,  T = 0.5 (beta = 2);
    n_steps = 40 (dbeta = 0.05), epsrel = 1e-9, alpha = 0 ... 0.5.

    (a) H_S = eps sigma_z / 2, eps = 1 (commuting with S): the polaron shift is exact,
        rho = exp(-beta (H_S - lambda S^2)) / Z with lambda = 2 alpha w_c, i.e. <sigma_z> = -tanh(beta eps / 2):
        for S^2 = 1/4 the shift is the same on both levels, and <sigma_z> does not depend on alpha at all.
        With S = |up><up| instead (the level shifted is only the upper one) <sigma_z> = -tanh(beta (eps - lambda)
        / 2) moves with alpha; both are drawn.
    (b) H_S = Delta sigma_x / 2 + eps sigma_z / 2, Delta = 1, eps = 0.5 (not commuting with S): the coherence
        <sigma_x> of the mean-force state against second-order (weak-coupling) perturbation theory and the bare
        Gibbs state exp(-beta H_S) / Z.  The coupling suppresses the coherence in the eigenbasis of S.

Run from the repository root, with either generated package installed:

    python examples/gibbs_state.py                  # oqupy_numpy
    python examples/gibbs_state.py --backend jax    # oqupy_jax
    python examples/gibbs_state.py --output /tmp/gibbs.png

Saves the plot (default ``examples/gibbs_state.png``) and prints the largest deviation from the closed forms.
"""

import argparse
import time
from pathlib import Path

CUTOFF = 5.0
TEMPERATURE = 0.5
EPS = 1.0
BIAS = 0.5
DELTA = 1.0
N_STEPS = 40
EPSREL = 1e-9
ALPHAS = tuple(0.05 * k for k in range(11))

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("gibbs_state.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument("--quick", action="store_true", help="three couplings only, for smoke tests")
    return parser.parse_args(argv)


def second_order_parts(hamiltonian, coupling, nodes=60):
    r"""Weak coupling: ``(A, B)`` with the unnormalised mean-force state ``A + alpha B`` to second order in ``S``.

    ``Tr_B e^{-beta H} / Z_B = e^{-beta H_S} [1 + \int_0^beta d tau \int_0^tau d tau' K(tau - tau') S(tau) S(tau')]``
    with ``S(tau) = e^{tau H_S} S e^{-tau H_S}`` and the imaginary-time bath correlation
    ``K(u) = \int J(w) (e^{-wu} + e^{-w(beta-u)}) / (1 - e^{-w beta}) dw``, linear in ``alpha`` (here ``alpha = 1``):
    the lag ``u`` by Gauss-Legendre, ``K`` by ``quad``, the rest in closed form in the eigenbasis of ``H_S``.
    """
    import numpy as np
    from scipy import integrate

    beta = 1.0 / TEMPERATURE
    energies, vectors = np.linalg.eigh(hamiltonian)
    s = vectors.conj().T @ coupling @ vectors
    x, w = np.polynomial.legendre.leggauss(nodes)
    lags, weights = beta * (x + 1) / 2, beta * w / 2

    def kernel(u):
        def integrand(omega):
            bose = (np.exp(-omega * u) + np.exp(-omega * (beta - u))) / -np.expm1(-beta * omega)
            return 2 * omega * np.exp(-omega / CUTOFF) * bose

        return integrate.quad(integrand, 0, np.inf, epsabs=0, epsrel=1e-11, limit=200)[0]

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
    free = np.diag(np.exp(-beta * energies))
    return vectors @ free @ vectors.conj().T, vectors @ (free @ m) @ vectors.conj().T


def plot(results, output: Path, backend: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    alphas = results["alpha"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8))
    fine = results["alpha_fine"]
    beta = 1.0 / TEMPERATURE
    left.plot(fine, np.full_like(fine, -np.tanh(beta * EPS / 2)), "-", color="0.6", linewidth=1.0)
    left.plot(fine, -np.tanh(beta * (EPS - 2 * fine * CUTOFF) / 2), "-", color="0.6", linewidth=1.0)
    for key, label in (
        ("sz_half", r"$S=\sigma_z/2$"),
        ("sz_up", r"$S=|{\uparrow}\rangle\langle{\uparrow}|$"),
    ):
        left.plot(alphas, results[key], "o", markersize=4, label=f"GibbsTEMPO, {label}")
    left.plot([], [], "-", color="0.6", label="polaron closed form")
    left.set_xlabel(r"$\alpha$")
    left.set_ylabel(r"$\langle\sigma_z\rangle$")
    left.set_title(r"(a) $H_S = \epsilon\sigma_z/2$: exact polaron shift", fontsize=10)
    left.legend(fontsize=8)
    right.plot(alphas, results["sx"], "o", markersize=4, label="GibbsTEMPO")
    right.plot(results["alpha_fine"], results["sx_weak"], "--", label="2nd order (weak coupling)")
    right.axhline(results["sx_bare"], color="0.6", linewidth=1.0, label=r"$e^{-\beta H_S}/Z$")
    right.set_xlabel(r"$\alpha$")
    right.set_ylabel(r"$\langle\sigma_x\rangle$")
    right.set_title(r"(b) $H_S = \Delta\sigma_x/2 + \epsilon\sigma_z/2$, $S = \sigma_z/2$", fontsize=10)
    right.legend(fontsize=8)
    figure.suptitle(
        f"mean-force Gibbs state, T = {TEMPERATURE}, $\\omega_c$ = {CUTOFF} ({backend})", fontsize=10
    )
    figure.tight_layout()
    figure.savefig(output, dpi=120)


def main(argv=None) -> None:
    args = parse_args(argv)
    import numpy as np
    import scipy.linalg

    oq = __import__(f"oqupy_{args.backend}")
    op = oq.operators
    sx, sz = np.asarray(op.sigma("x")), np.asarray(op.sigma("z"))
    beta = 1.0 / TEMPERATURE
    parameters = oq.GibbsParameters(N_STEPS, EPSREL)
    diagonal = oq.System(0.5 * EPS * sz)
    biased = oq.System(0.5 * DELTA * sx + 0.5 * BIAS * sz)
    bare = scipy.linalg.expm(-beta * np.asarray(biased.hamiltonian))
    results = {key: [] for key in ("alpha", "sz_half", "sz_half_exact", "sz_up", "sz_up_exact", "sx")}
    results["sx_bare"] = float(np.trace(sx @ bare).real / np.trace(bare).real)
    free, correction = second_order_parts(np.asarray(biased.hamiltonian), 0.5 * sz)
    results["alpha_fine"] = np.linspace(0.0, ALPHAS[-1], 101)
    results["sx_weak"] = [
        np.trace(sx @ (free + a * correction)).real / np.trace(free + a * correction).real
        for a in results["alpha_fine"]
    ]
    start = time.perf_counter()
    for alpha in ALPHAS[::5] if args.quick else ALPHAS:
        sd = oq.PowerLawSD(
            alpha=alpha, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
        )
        shift = 2 * alpha * CUTOFF
        half = oq.gibbs_tempo_compute(diagonal, oq.Bath(0.5 * sz, sd), parameters, progress_type="silent")
        up = oq.gibbs_tempo_compute(
            diagonal, oq.Bath(np.diag([1.0, 0.0]), sd), parameters, progress_type="silent"
        )
        tempo = oq.GibbsTempo(biased, oq.Bath(0.5 * sz, sd), parameters)
        tempo.compute(progress_type="silent")
        weak = free + alpha * correction
        results["alpha"].append(alpha)
        results["sz_half"].append(float(np.trace(sz @ half).real))
        results["sz_half_exact"].append(-np.tanh(beta * EPS / 2))
        results["sz_up"].append(float(np.trace(sz @ up).real))
        results["sz_up_exact"].append(-np.tanh(beta * (EPS - shift) / 2))
        results["sx"].append(float(np.trace(sx @ tempo.get_state()).real))
        print(
            f"alpha {alpha:4.2f}: <sz> {results['sz_up'][-1]:+.8f} (polaron {results['sz_up_exact'][-1]:+.8f}), "
            f"<sx> {results['sx'][-1]:+.5f} (2nd order {np.trace(sx @ weak).real / np.trace(weak).real:+.5f}), "
            f"bond {tempo.max_bond_dimension}"
        )
    elapsed = time.perf_counter() - start
    deviation = max(
        np.abs(np.subtract(results["sz_half"], results["sz_half_exact"])).max(),
        np.abs(np.subtract(results["sz_up"], results["sz_up_exact"])).max(),
    )
    print(
        f"{3 * len(results['alpha'])} GibbsTEMPO runs in {elapsed:.1f} s; largest deviation from the polaron form {deviation:.1e}"
    )
    plot(results, args.output, args.backend)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
