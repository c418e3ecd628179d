"""The 2-D spectrum's work in both packages side by side, in one process (issue 33).

    PYTHONPATH=generated/oqupy_numpy/src:generated/oqupy_jax/src python -m benchmarks.pathway_probes [--rounds 5]

Pins every thread count to 1 before NumPy and JAX load, builds the canonical uniform process tensor (epsrel 1e-6,
transfer map ``M = 592``) once per package and times, interleaved over rounds, the ``spectrum_2d`` scenario (a
third-order pathway on 100 x 100 (t1, t3) at one t2, and its FFT) and its parts: the steady state
(``_transfer_map.unique_state``: a real solve where the map has a real form) and the exact powers of the pathway,
a column by ``T`` and a row by ``T^T`` with 99 steps each, every power recorded, as each package runs them
(``oqupy_numpy``: the complex structured step; ``oqupy_jax``: ``real_steps``, one jitted scan each).  Prints the
first call apart (JAX compiles there), then CPU-time medians (``time.process_time``) of the warm calls in ms, and
the load average before and after.
"""

import argparse
import os
import statistics
import time

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_name] = "1"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()

import numpy as np  # noqa: E402

import oqupy_jax  # noqa: E402
import oqupy_numpy  # noqa: E402
from benchmarks.scenarios import _spectrum_2d_run, _stationary_setup  # noqa: E402

STEPS = 99


def cpu(function):
    start = time.process_time()
    function()
    return time.process_time() - start


def parts(package):
    """``{name: callable}``: the scenario and its parts, as ``package`` runs them."""
    context = _stationary_setup(package, None)
    system, pt, op = context
    maps = package._transfer_map
    transfer = maps.transfer_map(system, pt, None)
    size = int(np.prod(transfer.shape))
    rng = np.random.default_rng(1)
    column, row = rng.standard_normal((2, 1, size)) + 1j * rng.standard_normal((2, 1, size))

    def complex_powers(step, start):
        powers = [start]
        for _ in range(STEPS):
            powers.append(step(powers[-1]))
        return np.stack(powers)

    if package._transfer_map.REAL_POWERS and transfer.real is not None:

        def probes():
            return maps.real_steps(transfer, column, STEPS), maps.real_steps(transfer, row, STEPS, True)
    else:

        def probes():
            return complex_powers(transfer.step, column), complex_powers(transfer.back, row)

    return {
        "spectrum_2d (scenario)": lambda: _spectrum_2d_run(package, context),
        "steady state (unique_state)": lambda: maps.unique_state(transfer, 1e-6, 1e-7),
        "exact powers: column by T, row by T^T": probes,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5, help="warm calls per part, package and round")
    args = parser.parse_args()
    load_before = os.getloadavg()
    packages = {"oqupy_numpy": parts(oqupy_numpy), "oqupy_jax": parts(oqupy_jax)}
    first = {
        (package, name): cpu(call) for package, calls in packages.items() for name, call in calls.items()
    }
    times = {key: [] for key in first}
    for _ in range(args.rounds):
        for package, calls in packages.items():
            for name, call in calls.items():
                times[(package, name)].extend(cpu(call) for _ in range(args.repeats))
    load_after = os.getloadavg()
    print(
        f"CPU ms, medians of {args.rounds} x {args.repeats} warm calls; first call apart (JAX compiles there)"
    )
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f}")
    print("| part | numpy | jax | jax / numpy | first call numpy / jax |\n|---|---|---|---|---|")
    for name in packages["oqupy_numpy"]:
        numpy_ms = 1e3 * statistics.median(times[("oqupy_numpy", name)])
        jax_ms = 1e3 * statistics.median(times[("oqupy_jax", name)])
        firsts = f"{1e3 * first[('oqupy_numpy', name)]:.1f} / {1e3 * first[('oqupy_jax', name)]:.1f}"
        print(f"| {name} | {numpy_ms:.1f} | {jax_ms:.1f} | {jax_ms / numpy_ms:.2f} | {firsts} |")


if __name__ == "__main__":
    main()
