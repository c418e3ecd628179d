"""Stationary correlations and spectra from uniform process tensors: a quantum dot's absorption line with its
phonon sideband, the independent-boson closed form, and a 2-D (rephasing) spectrum.

    (a) canonical spin-boson: S = sigma_z / 2, J(w) = 2 alpha w exp(-w / w_c), alpha 0.25, w_c 5, T 0.2,
        H = sigma_x / 2; dt 0.05, dkmax 40, epsrel 1e-6: the stationary <sigma_x(tau) sigma_x(0)>.
    (b) quantum dot (rotating frame, H = 0): S = |e><e|, super-Ohmic J(w) = 2 alpha w^3 w_c^-2 exp(-w / w_c),
        alpha 0.1, w_c 2, T 0.1, radiative decay 0.02; dt 0.1, dkmax 30: the absorption spectrum
        (A = sigma^+, B = sigma^-): a zero-phonon line and a phonon sideband.
    (c) independent-boson model: S = |e><e|, Ohmic alpha 0.05, w_c 10, T 2, splitting 5 (+ the polaron shift),
        relaxed in the ground state: <sigma^-(tau) sigma^+(0)> = exp(-eta(tau) - i (5 + shift) tau), ours against
        the closed form.
    (d) the quantum dot's rephasing stimulated-emission pathway R(t1, t2 = 0, t3) (sigma^- from the right, then
        sigma^+ and sigma^- from the left, read out with sigma^+) on a 100 x 100 grid (t1, t3 up to 29.7), and
        its 2-D spectrum (the grid tapered by half a Hann window, then zero-padded).

Run from the repository root, with either generated package installed:

    python examples/spectra.py                  # oqupy_numpy
    python examples/spectra.py --backend jax    # oqupy_jax
"""

import argparse
import time
import warnings
from pathlib import Path

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("spectra.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument(
        "--quick", action="store_true", help="short memories and coarse grids, for smoke tests"
    )
    return parser.parse_args(argv)


def uniform_pt(oq, coupling, dt, dkmax, epsrel, **sd_args):
    bath = oq.Bath(coupling, oq.PowerLawSD(cutoff_type="exponential", **sd_args))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the quick run's short memories warn
        return oq.TtiPtTempo(
            bath, 0.0, oq.TempoParameters(dt=dt, dkmax=dkmax, epsrel=epsrel)
        ).get_process_tensor(progress_type="silent")


def main(argv=None) -> None:
    args = parse_args(argv)
    import numpy as np

    oq = __import__(f"oqupy_{args.backend}")
    op = oq.operators
    quick = args.quick

    # (a) canonical spin-boson case
    start = time.perf_counter()
    pt = uniform_pt(
        oq,
        0.5 * op.sigma("z"),
        0.05,
        10 if quick else 40,
        1e-5 if quick else 1e-6,
        alpha=0.25,
        zeta=1,
        cutoff=5.0,
        temperature=0.2,
    )
    built = time.perf_counter()
    canonical = oq.System(0.5 * op.sigma("x"))
    tau_a, corr_a = oq.compute_stationary_correlations(
        canonical, pt, op.sigma("x"), op.sigma("x"), 10_000, time_order="full", progress_type="silent"
    )
    done = time.perf_counter()
    print(f"(a) bond {pt.bond_dimension}: build {built - start:.2f} s, 2 x 10,000 lags {done - built:.2f} s")

    # (b) quantum dot: zero-phonon line and phonon sideband
    dot_pt = uniform_pt(
        oq,
        op.spin_dm("z+"),
        0.1,
        10 if quick else 30,
        1e-5 if quick else 1e-7,
        alpha=0.1,
        zeta=3,
        cutoff=2.0,
        temperature=0.1,
    )
    dot = oq.System(0 * op.sigma("z"), gammas=[0.02], lindblad_operators=[op.sigma("-")])
    omega_b = np.linspace(-8.0, 2.0, 301 if quick else 2001)
    start = time.perf_counter()
    omega_b, absorption = oq.compute_spectrum(dot, dot_pt, op.sigma("+"), op.sigma("-"), omega=omega_b)
    print(
        f"(b) bond {dot_pt.bond_dimension}: spectrum at {len(omega_b)} frequencies {time.perf_counter() - start:.2f} s"
    )

    # (c) independent-boson closed form
    ibm = dict(alpha=0.05, zeta=1, cutoff=10.0, temperature=2.0)
    shift = 2 * ibm["alpha"] * ibm["cutoff"]
    ibm_pt = uniform_pt(oq, op.spin_dm("z+"), 0.05, 10 if quick else 40, 1e-6, **ibm)
    ibm_system = oq.System(0.5 * (5.0 + shift) * op.sigma("z"))
    steps = 40 if quick else 200
    tau_c, corr_c = oq.compute_stationary_correlations(
        ibm_system,
        ibm_pt,
        op.sigma("+"),
        op.sigma("-"),
        steps,
        initial_state=op.spin_dm("z-"),
        progress_type="silent",
    )
    sd = oq.PowerLawSD(cutoff_type="exponential", **ibm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eta = np.array(
            [sd.correlation_2d_integral(delta=t, time_1=0.0, shape="upper-triangle") for t in tau_c]
        )
    exact_c = np.exp(-eta - 1j * (5.0 + shift) * tau_c)
    print(f"(c) |ours - closed form| <= {np.abs(corr_c - exact_c).max():.1e} to t = {tau_c[-1]:g}")

    # (d) 2-D spectrum of the dot at t2 = 0: rephasing stimulated emission
    points = 32 if quick else 100
    grid = np.arange(points) * (1 if quick else 3)
    start = time.perf_counter()
    delays, response = oq.compute_stationary_multitime_correlations(
        dot,
        dot_pt,
        [op.sigma("-"), op.sigma("+"), op.sigma("-"), op.sigma("+")],
        ["right", "left", "left", "left"],
        [grid, 0, grid],
    )
    response = response[:, 0, :]
    print(f"(d) {points} x {points} response {time.perf_counter() - start:.2f} s")
    step = delays[0][1] - delays[0][0]
    taper = np.cos(0.5 * np.pi * np.arange(points) / points) ** 2  # half a Hann window: no truncation ringing
    tapered = response * taper[:, None] * taper[None, :]
    spectrum_2d = np.fft.fftshift(np.fft.fft2(tapered, s=(2 * points, 2 * points)))
    frequencies = np.fft.fftshift(np.fft.fftfreq(2 * points, d=step)) * 2 * np.pi

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(10.0, 7.5))
    window = np.abs(tau_a) <= 8
    axes[0, 0].plot(tau_a[window], corr_a.real[window], label="Re")
    axes[0, 0].plot(tau_a[window], corr_a.imag[window], label="Im")
    axes[0, 0].set_xlabel(r"$\tau$")
    axes[0, 0].set_title(r"(a) stationary $\langle\sigma_x(\tau)\sigma_x(0)\rangle$, canonical case")
    axes[0, 0].legend(fontsize=8)
    axes[0, 1].plot(-omega_b, absorption)  # absorption lines lie at omega = -(transition energy)
    axes[0, 1].set_yscale("log")
    axes[0, 1].set_xlabel(r"$-\omega$ (photon energy, rotating frame)")
    axes[0, 1].set_title(r"(b) dot absorption $S(\omega)$: zero-phonon line + sideband")
    axes[1, 0].plot(tau_c, corr_c.real, label="ours, Re")
    axes[1, 0].plot(tau_c, exact_c.real, "k--", linewidth=0.8, label="closed form")
    axes[1, 0].plot(tau_c, np.abs(corr_c), label="ours, |C|")
    axes[1, 0].plot(tau_c, np.abs(exact_c), "k:", linewidth=0.8)
    axes[1, 0].set_xlabel(r"$\tau$")
    axes[1, 0].set_title(r"(c) independent boson $\langle\sigma^-(\tau)\sigma^+(0)\rangle$")
    axes[1, 0].legend(fontsize=8)
    extent = (frequencies[0], frequencies[-1], frequencies[0], frequencies[-1])
    axes[1, 1].imshow(np.abs(spectrum_2d).T, origin="lower", extent=extent, aspect="auto", cmap="viridis")
    axes[1, 1].set_xlim(-3, 3)
    axes[1, 1].set_ylim(-3, 3)
    axes[1, 1].set_xlabel(r"$\omega_1$")
    axes[1, 1].set_ylabel(r"$\omega_3$")
    axes[1, 1].set_title(r"(d) $|$FFT$_{t_1, t_3} R(t_1, t_2 = 0, t_3)|$, rephasing SE")
    figure.suptitle(f"stationary correlations and spectra ({args.backend})")
    figure.tight_layout()
    figure.savefig(args.output, dpi=110)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
