"""Spin-boson model with TEMPO: a spin-1/2 tunnelling under sigma_x/2 and dephased by an Ohmic bath.

    H_S = sigma_x / 2,  coupling operator S = sigma_z / 2,
    J(w) = 2 alpha w exp(-w / w_c),  alpha = 0.3, w_c = 5.0, T = 0,
    dt = 0.1, epsrel = 1e-4, tcut = 3.0 (dkmax = 30), rho(0) = |up><up|.

Run from the repository root, with either generated package installed:

    python examples/spin_boson.py                   # oqupy_numpy, t = 0 ... 15
    python examples/spin_boson.py --backend jax     # oqupy_jax (jit-compiled)
    python examples/spin_boson.py --end-time 3 --output /tmp/short.png

It prints the final Bloch vector, the largest bond dimension and the wall time, and saves a plot of
<sigma_z>(t).  The backend's package is imported inside ``main`` so that the NumPy run never imports JAX.
"""

import argparse
import time
from pathlib import Path

ALPHA = 0.3
ZETA = 1.0
CUTOFF = 5.0
TEMPERATURE = 0.0
DT = 0.1
EPSREL = 1e-4
TCUT = 3.0

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("spin_boson.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--end-time", type=float, default=15.0, help="final time (default 15.0)")
    parser.add_argument("--quick", action="store_true", help="a short run (end time 1.5) for smoke tests")
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="PNG file for the plot (default examples/spin_boson.png)",
    )
    return parser.parse_args(argv)


def plot(times, sigma_z, backend: str, end_time: float, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.0, 4.0))
    axes.plot(times, sigma_z, color="tab:blue", linewidth=1.5, label=r"TEMPO $\langle\sigma_z\rangle$")
    axes.axhline(0.0, color="grey", linewidth=0.6)
    axes.set_xlim(0.0, end_time)
    axes.set_ylim(-1.05, 1.05)
    axes.set_xlabel(r"time $t$")
    axes.set_ylabel(r"$\langle\sigma_z\rangle(t)$")
    axes.set_title(
        f"Spin-boson, oqupy_{backend}: $H=\\sigma_x/2$, $S=\\sigma_z/2$, Ohmic $\\alpha={ALPHA}$, "
        f"$\\omega_c={CUTOFF}$, $T={TEMPERATURE}$\n"
        f"dt={DT}, epsrel={EPSREL:.0e}, tcut={TCUT}",
        fontsize=10,
    )
    axes.legend(loc="upper right")
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120)
    plt.close(figure)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.end_time = min(args.end_time, 1.5)
    if args.backend == "jax":
        import oqupy_jax as oqupy
    else:
        import oqupy_numpy as oqupy

    sigma_x = oqupy.operators.sigma("x")
    sigma_y = oqupy.operators.sigma("y")
    sigma_z = oqupy.operators.sigma("z")

    system = oqupy.System(0.5 * sigma_x)
    correlations = oqupy.PowerLawSD(
        alpha=ALPHA, zeta=ZETA, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
    )
    bath = oqupy.Bath(0.5 * sigma_z, correlations)
    parameters = oqupy.TempoParameters(dt=DT, epsrel=EPSREL, tcut=TCUT)
    initial_state = oqupy.operators.spin_dm("up")

    start = time.perf_counter()
    tempo = oqupy.Tempo(system, bath, parameters, initial_state, start_time=0.0)
    dynamics = tempo.compute(end_time=args.end_time, progress_type="bar")
    wall = time.perf_counter() - start

    times, s_z = dynamics.expectations(sigma_z, real=True)
    _, s_x = dynamics.expectations(sigma_x, real=True)
    _, s_y = dynamics.expectations(sigma_y, real=True)

    print(f"backend               : oqupy_{args.backend}")
    print(f"steps                 : {len(dynamics) - 1} (t = {times[0]:g} ... {times[-1]:g})")
    print(f"final Bloch vector    : (<sx>, <sy>, <sz>) = ({s_x[-1]:+.6f}, {s_y[-1]:+.6f}, {s_z[-1]:+.6f})")
    print(f"max bond dimension    : {tempo.max_bond_dimension}")
    print(f"wall time             : {wall:.2f} s (Tempo construction and compute)")

    plot(times, s_z, args.backend, args.end_time, args.output)
    print(f"plot                  : {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
