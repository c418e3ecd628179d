"""Process tensor: compute the bath's influence once (PT-TEMPO), save it, reuse it for many Hamiltonians.

    coupling operator S = sigma_z / 2,  J(w) = 2 alpha w exp(-w / w_c),  alpha = 0.2, w_c = 5.0, T = 0.5,
    dt = 0.1, epsrel = 1e-6, tcut = 1.5 (dkmax = 15), t = 0 ... 5,
    H_S = (Omega / 2) sigma_x for Omega in 0.5 ... 3.0, rho(0) = |up><up|.

Run from the repository root, with either generated package installed:

    python examples/process_tensor.py                  # oqupy_numpy
    python examples/process_tensor.py --backend jax    # oqupy_jax
    python examples/process_tensor.py --file /tmp/pt.hdf5 --output /tmp/sweep.png

The process tensor is written to an HDF5 file (a temporary one unless ``--file`` is given), read back with
``import_process_tensor`` and contracted with each system; a file written by one package can be read by the
other.  It prints the timings and saves a plot of <sigma_z>(t) for every Omega, with the TEMPO result of one
Omega on top as a check.
"""

import argparse
import tempfile
import time
from pathlib import Path

ALPHA = 0.2
CUTOFF = 5.0
TEMPERATURE = 0.5
DT = 0.1
EPSREL = 1e-6
TCUT = 1.5
END_TIME = 5.0
OMEGAS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("process_tensor.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument(
        "--file", type=Path, default=None, help="HDF5 file for the process tensor (default: temporary)"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument(
        "--quick", action="store_true", help="a short run (t = 0 ... 1.5, three systems) for smoke tests"
    )
    return parser.parse_args(argv)


def plot(results, check, backend: str, end_time: float, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.0, 4.2))
    colours = plt.cm.viridis([k / max(len(results) - 1, 1) for k in range(len(results))])
    for (omega, times, s_z), colour in zip(results, colours):
        axes.plot(times, s_z, color=colour, linewidth=1.4, label=rf"$\Omega={omega:g}$")
    check_omega, check_times, check_s_z = check
    axes.plot(check_times, check_s_z, "k.", markersize=3, label=rf"TEMPO, $\Omega={check_omega:g}$")
    axes.axhline(0.0, color="grey", linewidth=0.6)
    axes.set_xlim(0.0, end_time)
    axes.set_ylim(-1.05, 1.05)
    axes.set_xlabel(r"time $t$")
    axes.set_ylabel(r"$\langle\sigma_z\rangle(t)$")
    axes.set_title(
        f"One process tensor, many systems (oqupy_{backend}): $H=\\Omega\\sigma_x/2$, $S=\\sigma_z/2$,\n"
        f"Ohmic $\\alpha={ALPHA}$, $\\omega_c={CUTOFF}$, $T={TEMPERATURE}$, dt={DT}, epsrel={EPSREL:.0e}, tcut={TCUT}",
        fontsize=10,
    )
    axes.legend(loc="lower right", fontsize=8, ncol=2)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120)
    plt.close(figure)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.backend == "jax":
        import oqupy_jax as oqupy
    else:
        import oqupy_numpy as oqupy

    end_time, omegas = (1.5, OMEGAS[:3]) if args.quick else (END_TIME, OMEGAS)
    sigma_x, sigma_z = oqupy.operators.sigma("x"), oqupy.operators.sigma("z")
    correlations = oqupy.PowerLawSD(
        alpha=ALPHA, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
    )
    bath = oqupy.Bath(0.5 * sigma_z, correlations)
    parameters = oqupy.TempoParameters(dt=DT, epsrel=EPSREL, tcut=TCUT)
    initial_state = oqupy.operators.spin_dm("up")

    with tempfile.TemporaryDirectory() as scratch:
        path = args.file if args.file is not None else Path(scratch) / "spin_boson_pt.hdf5"
        start = time.perf_counter()
        pt_tempo = oqupy.PtTempo(
            bath, 0.0, end_time, parameters, process_tensor_file=str(path), overwrite=True
        )
        pt_tempo.get_process_tensor(progress_type="bar").close()
        build = time.perf_counter() - start

        process_tensor = oqupy.import_process_tensor(str(path), "simple")
        start = time.perf_counter()
        results = []
        for omega in omegas:
            system = oqupy.System(0.5 * omega * sigma_x)
            dynamics = oqupy.compute_dynamics(
                system, initial_state, process_tensor=process_tensor, progress_type="silent"
            )
            times, s_z = dynamics.expectations(sigma_z, real=True)
            results.append((omega, times, s_z))
        sweep = time.perf_counter() - start
        bonds = process_tensor.get_bond_dimensions()

    check_omega = omegas[2]
    tempo = oqupy.Tempo(oqupy.System(0.5 * check_omega * sigma_x), bath, parameters, initial_state, 0.0)
    check_times, check_s_z = tempo.compute(end_time, progress_type="silent").expectations(sigma_z, real=True)
    difference = max(abs(float(a) - float(b)) for a, b in zip(results[2][2], check_s_z))

    print(f"backend               : oqupy_{args.backend}")
    print(f"process tensor        : {len(process_tensor)} steps, max bond dimension {max(bonds)}")
    print(
        f"PT-TEMPO build        : {build:.2f} s (written to {'a temporary file' if args.file is None else path})"
    )
    print(f"dynamics, {len(omegas)} systems  : {sweep:.2f} s")
    for omega, _, s_z in results:
        print(f"  Omega = {omega:3.1f}        : <sz>(t={end_time:g}) = {float(s_z[-1]):+.6f}")
    print(f"check against TEMPO   : max |<sz>_PT - <sz>_TEMPO| = {difference:.1e} at Omega = {check_omega:g}")

    plot(results, (check_omega, check_times, check_s_z), args.backend, end_time, args.output)
    print(f"plot                  : {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
