"""Uniform process tensors: spin-boson dynamics to t = 500 and the steady state, for a few couplings.

    coupling operator S = sigma_z / 2,  J(w) = 2 alpha w exp(-w / w_c),  w_c = 5.0, T = 0.2,
    alpha in (0.1, 0.25, 0.4);  H_S = sigma_x / 2 + eps sigma_z / 2 with eps = 0.5 (a biased spin: the steady
    state is polarised), rho(0) = |up><up|;  dt = 0.05, dkmax = 40, epsrel = 1e-6, 10,000 steps.

Run from the repository root, with either generated package installed:

    python examples/steady_state.py                  # oqupy_numpy
    python examples/steady_state.py --backend jax    # oqupy_jax
    python examples/steady_state.py --steps 2000 --output /tmp/steady.png

For each coupling, ``TtiPtTempo`` builds the bath's influence as one repeating tensor (40 truncated SVDs,
whatever the number of steps), ``compute_dynamics`` runs it for every step and ``compute_steady_state`` finds the
state the dynamics converge to from one eigenproblem.  It prints the timings and the distance between the last
state and the steady state, and saves a plot of <sigma_z>(t) with the steady-state values as dashed lines.
"""

import argparse
import time
from pathlib import Path

CUTOFF = 5.0
TEMPERATURE = 0.2
ALPHAS = (0.1, 0.25, 0.4)
BIAS = 0.5
DT = 0.05
DKMAX = 40
EPSREL = 1e-6

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("steady_state.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--steps", type=int, default=10_000, help="number of time steps (default 10,000)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument(
        "--quick", action="store_true", help="a short run (200 steps, one coupling) for smoke tests"
    )
    return parser.parse_args(argv)


def plot(results, output: Path, backend: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.0, 4.2))
    colours = plt.cm.viridis([k / max(len(results) - 1, 1) for k in range(len(results))])
    for (alpha, times, s_z, steady_z), colour in zip(results, colours):
        axes.plot(times, s_z, color=colour, linewidth=1.2, label=rf"$\alpha={alpha:g}$")
        axes.axhline(steady_z, color=colour, linestyle="--", linewidth=0.9)
    axes.set_xscale("symlog", linthresh=10.0, linscale=1.5)
    axes.set_xlim(0.0, max(times[-1] for _, times, _, _ in results))
    axes.set_xlabel("t (linear to 10, then logarithmic)")
    axes.set_ylabel(r"$\langle\sigma_z\rangle$")
    axes.set_title(f"uniform process tensor ({backend}): dynamics and steady state (dashed)")
    axes.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(output, dpi=120)


def main(argv=None) -> None:
    args = parse_args(argv)
    import numpy as np

    oq = __import__(f"oqupy_{args.backend}")
    op = oq.operators
    system = oq.System(0.5 * op.sigma("x") + 0.5 * BIAS * op.sigma("z"))
    parameters = oq.TempoParameters(dt=DT, epsrel=EPSREL, dkmax=DKMAX)
    results = []
    if args.quick:
        args.steps = min(args.steps, 200)
    for alpha in ALPHAS[:1] if args.quick else ALPHAS:
        sd = oq.PowerLawSD(
            alpha=alpha, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
        )
        bath = oq.Bath(0.5 * op.sigma("z"), sd)
        start = time.perf_counter()
        pt = oq.TtiPtTempo(bath, 0.0, parameters, unique=True).get_process_tensor(progress_type="silent")
        built = time.perf_counter()
        dynamics = oq.compute_dynamics(
            system, op.spin_dm("up"), num_steps=args.steps, process_tensor=pt, progress_type="silent"
        )
        evolved = time.perf_counter()
        steady = np.asarray(oq.compute_steady_state(system, pt))
        solved = time.perf_counter()
        times, s_z = dynamics.expectations(op.sigma("z"), real=True)
        steady_z = float(np.real(np.trace(np.asarray(op.sigma("z")) @ steady)))
        distance = float(np.abs(np.asarray(dynamics.states)[-1] - steady).max())
        print(
            f"alpha {alpha:4.2f}: bond {pt.bond_dimension:3d}, build {built - start:5.2f} s, "
            f"{args.steps} steps {evolved - built:5.2f} s, steady state {solved - evolved:4.2f} s; "
            f"<sigma_z>_ss = {steady_z:+.5f}, |rho(t_end) - rho_ss| = {distance:.1e}"
        )
        results.append((alpha, np.asarray(times), np.asarray(s_z), steady_z))
    plot(results, args.output, args.backend)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
