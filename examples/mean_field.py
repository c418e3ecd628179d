"""Mean-field TEMPO: N molecules in a lossy cavity, each with its own vibrational bath, and the cavity field.

The model of Fowler-Wright, Lovett and Keeling, Phys. Rev. Lett. 129, 173001 (2022) (Fig. 2a), in units of
1/ps (hbar = k_B = 1).  After the mean-field reduction one molecule (a two-level system) sees the field a(t):

    H_MF(t, a) = (omega_0 / 2) sigma_z + (Omega / 2) (a sigma_+ + a^* sigma_-),
    da/dt      = -(i omega_c + kappa) a - i (Omega / 2) <sigma_->,

with electronic loss Gamma_down sigma_- and pump Gamma_up sigma_+ (Lindblad terms) and a bath coupled through
sigma_z / 2 with J(nu) = 2 alpha nu exp(-(nu / nu_c)^2) at temperature T.  Above a threshold pump the field grows
(lasing); n = |a|^2 is the photon number per molecule.

Run from the repository root, with either generated package installed:

    python examples/mean_field.py                  # oqupy_numpy
    python examples/mean_field.py --backend jax    # oqupy_jax

It computes one pump strength with ``MeanFieldTempo``, then all pump strengths from one process tensor with
``compute_dynamics_with_field``, prints timings and the largest difference between the two routes, and saves a
plot of n(t) and <sigma_z>(t) (default ``examples/mean_field.png``).
"""

import argparse
import time
from pathlib import Path

ALPHA, NU_C, TEMPERATURE = 0.25, 227.9, 39.3
OMEGA_0, OMEGA_C, RABI = 0.0, -30.4, 303.9
KAPPA, GAMMA_DOWN = 15.2, 15.2
PUMP_RATIOS = (0.2, 0.4, 0.6, 0.8)
DT, DKMAX, EPSREL, END_TIME = 3.2e-3, 20, 1e-5, 0.3
INITIAL_FIELD = 0.05**0.5  # n(0) = 0.05

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("mean_field.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument("--quick", action="store_true", help="t = 0 ... 0.05 and two pumps, for smoke tests")
    return parser.parse_args(argv)


def mean_field_system(oqupy, np, pump_ratio):
    """One molecule type (pump Gamma_up = pump_ratio * Gamma_down) and the cavity field's equation of motion."""
    sigma_z, sigma_plus, sigma_minus = (np.asarray(oqupy.operators.sigma(name)) for name in "z+-")

    def hamiltonian(t, a):
        return 0.5 * OMEGA_0 * sigma_z + 0.5 * RABI * (a * sigma_plus + np.conj(a) * sigma_minus)

    def field_eom(t, states, a):
        return -(1j * OMEGA_C + KAPPA) * a - 0.5j * RABI * np.trace(sigma_minus @ states[0])

    molecule = oqupy.TimeDependentSystemWithField(
        hamiltonian,
        gammas=[lambda t: GAMMA_DOWN, lambda t: pump_ratio * GAMMA_DOWN],
        lindblad_operators=[lambda t: sigma_minus, lambda t: sigma_plus],
    )
    return oqupy.MeanFieldSystem([molecule], field_eom=field_eom)


def plot(results, check, backend: str, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(7.0, 6.4), sharex=True)
    colours = plt.cm.viridis([k / max(len(results) - 1, 1) for k in range(len(results))])
    for (ratio, times, n, s_z), colour in zip(results, colours):
        label = rf"$\Gamma_\uparrow={ratio:g}\,\Gamma_\downarrow$"
        top.plot(times, n, color=colour, linewidth=1.4, label=label)
        bottom.plot(times, s_z, color=colour, linewidth=1.4)
    ratio, times, n, s_z = check
    top.plot(
        times[::3],
        n[::3],
        "k.",
        markersize=3,
        label=rf"MeanFieldTempo, $\Gamma_\uparrow={ratio:g}\,\Gamma_\downarrow$",
    )
    bottom.plot(times[::3], s_z[::3], "k.", markersize=3)
    top.set_ylabel(r"photons per molecule $n=|a|^2$")
    bottom.set_ylabel(r"$\langle\sigma_z\rangle$")
    bottom.set_xlabel(r"time $t$ (ps)")
    top.set_xlim(0.0, END_TIME)
    top.set_title(
        f"Mean-field TEMPO (oqupy_{backend}): molecules in a lossy cavity, process tensor for all pumps\n"
        f"$\\alpha={ALPHA}$, $\\nu_c={NU_C}$, $T={TEMPERATURE}$, $\\Omega={RABI}$, $\\omega_c={OMEGA_C}$, "
        f"$\\kappa=\\Gamma_\\downarrow={KAPPA}$ (1/ps)\n"
        f"dt={DT}, dkmax={DKMAX}, epsrel={EPSREL:.0e}",
        fontsize=9,
    )
    top.legend(loc="upper left", fontsize=8)
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
    import numpy as np

    end_time, pump_ratios = (0.05, PUMP_RATIOS[-2:]) if args.quick else (END_TIME, PUMP_RATIOS)
    sigma_z = np.asarray(oqupy.operators.sigma("z"))
    correlations = oqupy.PowerLawSD(
        alpha=ALPHA, zeta=1, cutoff=NU_C, cutoff_type="gaussian", temperature=TEMPERATURE
    )
    bath = oqupy.Bath(0.5 * sigma_z, correlations)
    parameters = oqupy.TempoParameters(dt=DT, dkmax=DKMAX, epsrel=EPSREL)
    initial_state = oqupy.operators.spin_dm("down")

    start = time.perf_counter()
    check_ratio = pump_ratios[-1]
    tempo = oqupy.MeanFieldTempo(
        mean_field_system(oqupy, np, check_ratio), [bath], parameters, [initial_state], INITIAL_FIELD
    )
    dynamics = tempo.compute(end_time, progress_type="silent")
    times, fields = dynamics.field_expectations()
    _, s_z = dynamics.system_dynamics[0].expectations(sigma_z, real=True)
    check = (check_ratio, times, np.abs(fields) ** 2, s_z)
    tempo_time = time.perf_counter() - start

    start = time.perf_counter()
    process_tensor = oqupy.pt_tempo_compute(bath, 0.0, end_time, parameters, progress_type="silent")
    build_time = time.perf_counter() - start
    start = time.perf_counter()
    results = []
    for ratio in pump_ratios:
        with_field = oqupy.compute_dynamics_with_field(
            mean_field_system(oqupy, np, ratio),
            INITIAL_FIELD,
            [process_tensor],
            initial_state_list=[initial_state],
            progress_type="silent",
        )
        times, fields = with_field.field_expectations()
        _, s_z = with_field.system_dynamics[0].expectations(sigma_z, real=True)
        results.append((ratio, times, np.abs(fields) ** 2, s_z))
    sweep_time = time.perf_counter() - start
    difference = float(np.max(np.abs(results[-1][2] - check[2])))

    print(f"backend                    : oqupy_{args.backend}")
    print(
        f"MeanFieldTempo             : {len(times) - 1} steps in {tempo_time:.1f} s, max bond {tempo.max_bond_dimension}"
    )
    print(f"process tensor             : {len(process_tensor)} steps in {build_time:.1f} s")
    print(f"{len(pump_ratios)} pumps from the PT         : {sweep_time:.1f} s")
    print(f"final n per pump           : {', '.join(f'{r[2][-1]:.4f}' for r in results)}")
    print(f"max |n_PT - n_TEMPO| at {check_ratio:g}: {difference:.2e}")
    plot(results, check, args.backend, args.output)
    print(f"plot                       : {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
