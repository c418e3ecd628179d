"""Bath dynamics: how a driven spin changes the occupation of the bath modes it couples to.

    H_S = (Omega / 2) sigma_x, Omega = 2.0,  coupling operator S = sigma_z / 2,
    J(w) = 2 alpha w exp(-w / w_c),  alpha = 0.1, w_c = 5.0, T = 0.2,
    dt = 0.1, epsrel = 1e-6, full memory, t = 0 ... 8,  rho(0) = |up><up|.

Run from the repository root, with either generated package installed:

    python examples/bath_dynamics.py                  # oqupy_numpy
    python examples/bath_dynamics.py --backend jax    # oqupy_jax
    python examples/bath_dynamics.py --output /tmp/bath_dynamics.png

PT-TEMPO builds the process tensor; ``TwoTimeBathCorrelations`` computes the ordered correlations
<S(t') S(t)> once (``compute_correlations``) and from them the change of the occupation density Delta n(w, t)
of every band w (docs/bath_dynamics.md).  The spin, flipping at the frequency Omega, emits into the modes near
w = Omega: the plot shows Delta n(w, t) as a map, and Delta n(w) at a few times.
"""

import argparse
import time
from pathlib import Path

OMEGA = 2.0
ALPHA = 0.1
CUTOFF = 5.0
TEMPERATURE = 0.2
DT = 0.1
EPSREL = 1e-6
END_TIME = 8.0

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("bath_dynamics.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument(
        "--quick", action="store_true", help="a short run (t = 0 ... 1, 12 bands) for smoke tests"
    )
    return parser.parse_args(argv)


def plot(freqs, times, change, backend: str, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, (left, right) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    mesh = left.pcolormesh(times, freqs, change, shading="auto", cmap="magma")
    figure.colorbar(mesh, ax=left, label=r"$\Delta n(\omega, t)$")
    left.axhline(OMEGA, color="white", linewidth=0.8, linestyle="--")
    left.set_xlabel(r"time $t$")
    left.set_ylabel(r"band frequency $\omega$")
    picks = np.unique(np.linspace(len(times) // 4, len(times) - 1, 4).astype(int))
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, len(picks)))
    for index, colour in zip(picks, colours):
        right.plot(freqs, change[:, index], color=colour, label=rf"$t={times[index]:.1f}$")
    right.axvline(OMEGA, color="grey", linewidth=0.8, linestyle="--")
    right.set_xlabel(r"band frequency $\omega$")
    right.set_ylabel(r"$\Delta n(\omega, t)$ (per unit $\omega$)")
    right.legend(fontsize=8)
    figure.suptitle(
        f"Bath-mode occupation change (oqupy_{backend}): $H=\\Omega\\sigma_x/2$, $\\Omega={OMEGA}$, "
        f"$S=\\sigma_z/2$, Ohmic $\\alpha={ALPHA}$, $\\omega_c={CUTOFF}$, $T={TEMPERATURE}$, dt={DT}",
        fontsize=10,
    )
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120)
    plt.close(figure)


def main(argv=None) -> int:
    import numpy as np

    args = parse_args(argv)
    if args.backend == "jax":
        import oqupy_jax as oqupy
    else:
        import oqupy_numpy as oqupy

    end_time, num_freqs = (1.0, 12) if args.quick else (END_TIME, 60)
    sigma_x, sigma_z = oqupy.operators.sigma("x"), oqupy.operators.sigma("z")
    correlations = oqupy.PowerLawSD(
        alpha=ALPHA, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
    )
    bath = oqupy.Bath(0.5 * sigma_z, correlations)
    system = oqupy.System(0.5 * OMEGA * sigma_x)
    parameters = oqupy.TempoParameters(dt=DT, epsrel=EPSREL, tcut=None)

    start = time.perf_counter()
    process_tensor = oqupy.PtTempo(bath, 0.0, end_time, parameters).get_process_tensor(progress_type="bar")
    build = time.perf_counter() - start

    bath_dynamics = oqupy.TwoTimeBathCorrelations(
        system, bath, process_tensor, initial_state=oqupy.operators.spin_dm("up")
    )
    start = time.perf_counter()
    bath_dynamics.generate_system_correlations(end_time, progress_type="bar")
    system_correlations = time.perf_counter() - start

    freqs = np.linspace(0.25, 4.0, num_freqs)
    start = time.perf_counter()
    rows = []
    for freq in freqs:
        times, change = bath_dynamics.occupation(freq, change_only=True)
        rows.append(change)
    change = np.array(rows)
    occupations = time.perf_counter() - start
    peak = freqs[int(np.argmax(change[:, -1]))]

    print(f"backend               : oqupy_{args.backend}")
    print(f"process tensor        : {len(process_tensor)} steps, built in {build:.2f} s")
    print(f"system correlations   : {system_correlations:.2f} s")
    print(f"occupations, {num_freqs} bands : {occupations:.2f} s")
    print(f"largest change at t={times[-1]:g}: Delta n = {change[:, -1].max():.4f} at w = {peak:.2f}")

    plot(freqs, times, change, args.backend, args.output)
    print(f"plot                  : {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
