"""PT-TEBD: a magnetisation excitation moving along an XXZ spin chain, every spin with its own bath.

N spins 1/2 (hbar = 1) in a transverse field with XXZ couplings,

    H = sum_n (h / 2) sigma_x^n + (J / 4) sum_n (sigma_x^n sigma_x^{n+1} + sigma_y^n sigma_y^{n+1}
        + Delta sigma_z^n sigma_z^{n+1}),

and a weak decay sigma_- at rate gamma on every spin.  Spin 0 starts up, the others down.  Every spin couples
through sigma_z / 2 to its own Ohmic bath, J(w) = 2 alpha w exp(-w / w_c) at temperature T, given as one
process tensor (PT-TEMPO) used for every site.  PT-TEBD (Fux et al., PRL 130, 2023) propagates the chain;
the same chain without baths is computed for comparison.

Run from the repository root, with either generated package installed:

    python examples/spin_chain.py                  # oqupy_numpy
    python examples/spin_chain.py --backend jax    # oqupy_jax

It prints timings, bond dimensions and the final magnetisations and saves a plot of <sigma_z^n>(t) for every
spin (default ``examples/spin_chain.png``).
"""

import argparse
import importlib
import time
from pathlib import Path

H_FIELD, J_COUPLING, DELTA, GAMMA = 0.2, 1.0, 0.5, 0.02
ALPHA, CUTOFF, TEMPERATURE = 0.1, 4.0, 0.5
DT, DKMAX, PT_EPSREL, TEBD_EPSREL = 0.2, 8, 1e-5, 1e-5
FULL = dict(sites=3, steps=15)
QUICK = dict(sites=2, steps=4)

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("spin_chain.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument("--quick", action="store_true", help="two spins, four steps, for smoke tests")
    return parser.parse_args(argv)


def spin_chain(oqupy, sites: int):
    """The chain's Hamiltonian and decay (no baths)."""
    op = oqupy.operators
    chain = oqupy.SystemChain([2] * sites)
    for site in range(sites):
        chain.add_site_hamiltonian(site, 0.5 * H_FIELD * op.sigma("x"))
        chain.add_site_dissipation(site, op.sigma("-"), gamma=GAMMA)
    for site in range(sites - 1):
        for name, weight in (("x", 1.0), ("y", 1.0), ("z", DELTA)):
            chain.add_nn_hamiltonian(site, 0.25 * J_COUPLING * weight * op.sigma(name), op.sigma(name))
    return chain


def magnetisation(oqupy, chain, process_tensors, steps: int):
    """Times and <sigma_z^n>(t) (one row per spin), the run's bond dimensions and wall time."""
    op = oqupy.operators
    sites = len(chain)
    initial = oqupy.AugmentedMPS([op.spin_dm("up")] + [op.spin_dm("down")] * (sites - 1))
    tebd = oqupy.PtTebd(
        initial,
        chain,
        process_tensors,
        oqupy.PtTebdParameters(dt=DT, epsrel=TEBD_EPSREL, order=2),
        dynamics_sites=list(range(sites)),
    )
    start = time.perf_counter()
    results = tebd.compute(steps, progress_type="silent")
    seconds = time.perf_counter() - start
    values = []
    for site in range(sites):
        times, sigma_z = results["dynamics"][site].expectations(op.sigma("z"), real=True)
        values.append(sigma_z)
    return times, values, results["bond_dimensions"].max(axis=0), seconds


def plot(times, with_baths, without, backend: str, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7.0, 4.2))
    colours = plt.cm.viridis([k / max(len(with_baths) - 1, 1) for k in range(len(with_baths))])
    for site, colour in enumerate(colours):
        axis.plot(times, with_baths[site], color=colour, linewidth=1.6, label=f"spin {site}")
        axis.plot(times, without[site], color=colour, linewidth=1.0, linestyle="--")
    axis.set_xlabel("time t")
    axis.set_ylabel(r"$\langle\sigma_z^n\rangle$")
    axis.set_title(f"XXZ chain, every spin with its own bath (solid) and without (dashed); oqupy_{backend}")
    axis.title.set_fontsize(9)
    axis.legend(fontsize=8, ncol=2)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120)


def main(argv=None) -> int:
    args = parse_args(argv)
    oqupy = importlib.import_module(f"oqupy_{args.backend}")
    size = QUICK if args.quick else FULL
    op = oqupy.operators
    start = time.perf_counter()
    bath = oqupy.Bath(
        0.5 * op.sigma("z"),
        oqupy.PowerLawSD(
            alpha=ALPHA, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
        ),
    )
    parameters = oqupy.TempoParameters(dt=DT, epsrel=PT_EPSREL, dkmax=DKMAX)
    pt = oqupy.PtTempo(bath, 0.0, size["steps"] * DT, parameters).get_process_tensor(progress_type="silent")
    pt_seconds = time.perf_counter() - start
    chain = spin_chain(oqupy, size["sites"])
    times, with_baths, bonds, seconds = magnetisation(oqupy, chain, [pt] * size["sites"], size["steps"])
    _, without, bonds_free, seconds_free = magnetisation(oqupy, chain, [None] * size["sites"], size["steps"])
    print(f"backend                   : oqupy_{args.backend}")
    print(
        f"process tensor (PT-TEMPO) : {pt_seconds:.1f} s, bond dimensions up to {max(pt.get_bond_dimensions())}"
    )
    print(f"PT-TEBD with baths        : {seconds:.1f} s, largest chain bonds {list(bonds)}")
    print(f"PT-TEBD without baths     : {seconds_free:.1f} s, largest chain bonds {list(bonds_free)}")
    print("final <sigma_z> with baths   :", " ".join(f"{values[-1]:+.4f}" for values in with_baths))
    print("final <sigma_z> without baths:", " ".join(f"{values[-1]:+.4f}" for values in without))
    plot(times, with_baths, without, args.backend, args.output)
    print(f"plot                      : {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
