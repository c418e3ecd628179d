"""PT-TEMPO's two constructions on OQuPy issue #162's bath: build time and accuracy.

    J(w) = 2 alpha w^3 w_c^-2 exp(-(w / w_c)^2), alpha = 0.0484, w_c = 2.2, T = 0.5236, coupling sigma_z,
    dt = 0.01, tcut = end_time, then H = sigma_x / 2 from spin up.

Run from the repository root, with either generated package installed:

    python examples/pt_tempo_methods.py                  # end_time = tcut = 2 (about a minute)
    python examples/pt_tempo_methods.py --end-time 5     # the issue's full case (a few minutes)
    python examples/pt_tempo_methods.py --output /tmp/methods.png

``method="fast"`` (the default) builds every tensor in a real basis, sketches the larger zip-up splits and leaves
the legs' bonds to the zip-ups' truncation (its sweep only orthogonalises them); ``method="reference"`` is the
complex construction with a full SVD for every split.  Both truncate with the same bound.  The figure shows (left) the CPU time of each build at epsrel 1e-9 and (right) the error of <sigma_z>(t)
of each against the reference construction at epsrel 1e-10: the two errors are of one size, the truncation's.
"""

import argparse
import time
from pathlib import Path

import numpy as np

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("pt_tempo_methods.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--end-time", type=float, default=2.0, help="end time = memory cut-off tcut")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument("--quick", action="store_true", help="end_time 0.4 (a smoke run)")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.backend == "jax":
        import oqupy_jax as oqupy
    else:
        import oqupy_numpy as oqupy
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    end_time = 0.4 if args.quick else args.end_time
    op = oqupy.operators
    sd = oqupy.PowerLawSD(
        alpha=0.01 * 2.2**2, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=4 * 0.1309
    )
    bath = oqupy.Bath(op.sigma("z"), sd)
    system = oqupy.System(0.5 * op.sigma("x"))

    def run(method: str, epsrel: float):
        parameters = oqupy.TempoParameters(dt=0.01, tcut=end_time, epsrel=epsrel)
        start = time.process_time()
        pt = oqupy.pt_tempo_compute(bath, 0.0, end_time, parameters, progress_type="silent", method=method)
        seconds = time.process_time() - start
        dynamics = oqupy.compute_dynamics(system, op.spin_dm("up"), process_tensor=pt, progress_type="silent")
        times, sz = dynamics.expectations(op.sigma("z"), real=True)
        return seconds, np.asarray(times), np.asarray(sz)

    _, times, converged = run("reference", 1e-10)
    builds = {method: run(method, 1e-9) for method in ("reference", "fast")}
    for method, (seconds, _, sz) in builds.items():
        print(
            f"{method}: build {seconds:.1f} s CPU, max |<sz> - converged| = {np.abs(sz - converged).max():.1e}"
        )

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    names = list(builds)
    left.bar(names, [builds[name][0] for name in names], color=["tab:gray", "tab:blue"])
    left.set_ylabel("build CPU time (s)")
    left.set_title(f"PT-TEMPO, epsrel 1e-9, end_time = tcut = {end_time:g}")
    for name, color in zip(names, ("tab:gray", "tab:blue")):
        error = np.abs(builds[name][2] - converged)
        right.semilogy(times[1:], np.maximum(error[1:], 1e-16), color=color, label=name)
    right.set_xlabel("t")
    right.set_ylabel(r"$|\langle\sigma_z\rangle - \langle\sigma_z\rangle_{10^{-10}}|$")
    right.set_title("error against the reference at epsrel 1e-10")
    right.legend()
    figure.tight_layout()
    figure.savefig(args.output, dpi=120)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
