"""The hard regime of OQuPy issue #162: a weak super-Ohmic bath, long memory, tight epsrel (issue "hard regimes").

    python -m benchmarks.hard_regime [--end-time 2.5] [--oqupy /path/to/oqupy05-venv/bin/python] [--reference]

The case: ``PowerLawSD(alpha=0.01 * 2.2**2, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=4 * 0.1309)``,
``Bath(sigma("z"), sd)``, ``TempoParameters(dt=0.01, tcut=end_time, epsrel=1e-9)``, ``pt_tempo_compute`` from 0 to
``end_time`` (the user's call, unchanged: ``unique`` left at its default), then ``compute_dynamics`` of
``H = sigma_x / 2`` from spin up.  Each run is a fresh subprocess with one BLAS/XLA thread (values printed);
it reports the build time, the largest bond, the peak resident memory and the trajectory of ``<sigma_z>``.

Runs: ``oqupy_numpy`` and ``oqupy_jax`` (influence coefficients integrated directly at every lag; the default
``method="fast"``), with ``--reference-method`` also ``oqupy_numpy``'s ``method="reference"``, with
``--converged EPSREL ...`` that reference construction at tighter tolerances, with ``--reference`` also ``oqupy_numpy`` with the coefficients taken as differences of ``eta`` (what the packages did
before, and what OQuPy 0.5 does: same PT-TEMPO algorithm, noisier input), and with ``--oqupy`` OQuPy 0.5 in its
own environment.  The ``<sigma_z>`` differences are against the first run.  Nothing is asserted.
"""

import argparse
import json
import os
import subprocess
import sys
import time

THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
XLA_FLAGS = "--xla_cpu_multi_thread_eigen=false"

CASE = """
import json, resource, sys, time
import numpy as np
import {module} as oqupy

end_time = {end_time}
sd = oqupy.PowerLawSD(alpha=0.01 * 2.2**2, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=4 * 0.1309)
if {difference}:
    # the coefficients as second differences of eta(k dt), as before (reference input)
    from oqupy_numpy._spectral_integrals import influence_stencil

    def difference_coefficients(dt, dkmax, **kwargs):
        return influence_stencil(np.asarray(sd.eta_function(dt * np.arange(dkmax + 2)), dtype=complex))

    sd.influence_coefficients = difference_coefficients
bath = oqupy.Bath(oqupy.operators.sigma("z"), sd)
parameters = oqupy.TempoParameters(dt=0.01, tcut=end_time, epsrel={epsrel})
start, start_cpu = time.perf_counter(), time.process_time()
pt = oqupy.pt_tempo_compute(bath, 0.0, end_time, parameters, progress_type="silent"{method})
build, build_cpu = time.perf_counter() - start, time.process_time() - start_cpu
bonds = [pt.get_mpo_tensor(step).shape[1] for step in range(len(pt) - 1)]
system = oqupy.System(0.5 * oqupy.operators.sigma("x"))
dynamics = oqupy.compute_dynamics(
    system=system, process_tensor=pt, initial_state=oqupy.operators.spin_dm("up"), progress_type="silent"
)
_, sz = dynamics.expectations(oqupy.operators.sigma("z"), real=True)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print("RESULT" + json.dumps({{"build": build, "build_cpu": build_cpu, "bond": max(bonds), "peak_mb": peak, "sz": [float(x) for x in sz]}}))
"""


def run(
    python: str,
    module: str,
    end_time: float,
    difference: bool = False,
    epsrel: float = 1e-9,
    method: str = "",
) -> dict:
    """One build in a fresh interpreter with one thread; the dict printed by ``CASE``.  ``method``: the ``method``
    argument of our packages' ``pt_tempo_compute`` (empty: not given, the default)."""
    env = dict(os.environ, **THREADS, XLA_FLAGS=XLA_FLAGS, JAX_ENABLE_X64="1")
    method_argument = f", method={method!r}" if method else ""
    code = CASE.format(
        module=module, end_time=end_time, difference=difference, epsrel=epsrel, method=method_argument
    )
    start = time.perf_counter()
    completed = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT")]
    if completed.returncode != 0 or not lines:
        raise RuntimeError(f"{module} failed:\n{completed.stderr[-3000:]}")
    result = json.loads(lines[-1][len("RESULT") :])
    result["wall"] = wall
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end-time", type=float, default=2.5, help="end time = tcut (issue: 2.5 and 5.0)")
    parser.add_argument("--oqupy", help="python of a virtual environment with OQuPy 0.5")
    parser.add_argument("--reference", action="store_true", help="also the eta-difference coefficients")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--epsrel", type=float, default=1e-9, help="truncation tolerance (issue: 1e-9)")
    parser.add_argument(
        "--converged",
        type=float,
        nargs="*",
        default=[],
        help="also oqupy_numpy's reference construction at these tighter epsrel (the last is the reference of "
        "the <sz> errors)",
    )
    parser.add_argument(
        "--reference-method",
        action="store_true",
        help="also oqupy_numpy with method='reference' (complex, full SVDs) at --epsrel",
    )
    parser.add_argument("--save", help="write the results (with the trajectories) to this JSON file")
    args = parser.parse_args(argv)
    print(
        f"threads: {THREADS}, XLA_FLAGS={XLA_FLAGS}; end_time = tcut = {args.end_time}, epsrel {args.epsrel:g}"
    )
    eps = args.epsrel
    runs = [("oqupy_numpy", sys.executable, "oqupy_numpy", False, eps, "")]
    if not args.no_jax:
        runs.append(("oqupy_jax", sys.executable, "oqupy_jax", False, eps, ""))
    if args.reference_method:
        runs.append(("oqupy_numpy, method reference", sys.executable, "oqupy_numpy", False, eps, "reference"))
    if args.reference:
        runs.append(("oqupy_numpy, eta differences", sys.executable, "oqupy_numpy", True, eps, ""))
    if args.oqupy:
        runs.append(("OQuPy 0.5", args.oqupy, "oqupy", False, eps, ""))
    runs += [
        (
            f"oqupy_numpy, method reference, epsrel {tight:g}",
            sys.executable,
            "oqupy_numpy",
            False,
            tight,
            "reference",
        )
        for tight in args.converged
    ]
    results = []
    for label, python, module, difference, epsrel, method in runs:
        result = run(python, module, args.end_time, difference, epsrel, method)
        results.append((label, result))
        print(
            f"  {label}: build {result['build']:.1f} s (CPU {result['build_cpu']:.1f} s), bond {result['bond']}, peak {result['peak_mb']:.0f} MB"
        )
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump({label: result for label, result in results}, handle)
    first = results[0][1]
    print(
        "| run | build (s) | / first | build CPU (s) | / first | max bond | peak memory (MB) "
        "| max abs diff <sz> vs first |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, result in results:
        diff = max(abs(a - b) for a, b in zip(result["sz"], first["sz"]))
        print(
            f"| {label} | {result['build']:.1f} | {result['build'] / first['build']:.2f} "
            f"| {result['build_cpu']:.1f} | {result['build_cpu'] / first['build_cpu']:.2f} | {result['bond']} "
            f"| {result['peak_mb']:.0f} | {diff:.1e} |"
        )
    if args.converged:
        reference = results[-1][1]["sz"]
        print(f"max abs error of <sz> against {results[-1][0]}:")
        for label, result in results[:-1]:
            print(f"  {label}: {max(abs(a - b) for a, b in zip(result['sz'], reference)):.1e}")
    print("max abs difference of <sz> between runs:")
    for index, (label, result) in enumerate(results):
        others = [max(abs(a - b) for a, b in zip(result["sz"], other["sz"])) for _, other in results[:index]]
        print(f"  {label}: " + ", ".join(f"{value:.1e}" for value in others))


if __name__ == "__main__":
    main()
