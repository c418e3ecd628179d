"""PT-TEMPO's fast and reference constructions on several baths (issue "hard regimes", goal 3).

    python -m benchmarks.pt_methods [--case NAME ...] [--package oqupy_numpy] [--rounds 1] [--oqupy PYTHON]

For each case (a bath, a coupling and a system a user would try), builds the process tensor with
``method="reference"`` (complex, full SVDs) and ``method="fast"`` (real basis, sketched splits) at the case's
epsrel, alternated in one process with one BLAS/XLA thread, and a reference at epsrel / 10 with
``method="reference"``.  Prints CPU times (medians over rounds), their ratio, the largest bonds and the largest
error of <sigma_z>-like expectations (the first diagonal operator given) against the tighter reference.
With ``--oqupy`` (the python of a virtual environment with OQuPy 0.5) each case is also built by OQuPy 0.5 in a
fresh process with one BLAS thread, at the case's epsrel, once per round: its CPU time, its ratio to the fast build,
and its error against the same reference.  Nothing is asserted.
"""

import argparse
import os

THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
for _name, _value in THREADS.items():
    os.environ.setdefault(_name, _value)
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import importlib  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

#: name -> (spectral density arguments, coupling, Hamiltonian, dt, end_time (= tcut), epsrel)
CASES = {
    "ohmic-exp-sz": (
        dict(alpha=0.25, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.2),
        "sz",
        "sx",
        0.05,
        5.0,
        1e-7,
    ),
    "subohmic-gauss-sx": (
        dict(alpha=0.1, zeta=0.5, cutoff=3.0, cutoff_type="gaussian", temperature=0.05),
        "sx",
        "sz",
        0.05,
        4.0,
        1e-7,
    ),
    "superohmic-weak-hot-sz": (
        dict(alpha=0.02, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=2.0),
        "sz",
        "sx",
        0.02,
        1.5,
        1e-9,
    ),
    "strong-cold-sz": (
        dict(alpha=0.8, zeta=1, cutoff=2.0, cutoff_type="exponential", temperature=0.0),
        "sz",
        "sx",
        0.1,
        5.0,
        1e-6,
    ),
    "spin-1": (
        dict(alpha=0.1, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=1.0),
        "spin1-z",
        "spin1-x",
        0.05,
        2.0,
        1e-7,
    ),
}


def operators(oq, name):
    op = oq.operators
    spin1_x = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]) / np.sqrt(2)
    table = {
        "sx": op.sigma("x"),
        "sz": op.sigma("z"),
        "spin1-z": np.diag([1.0, 0.0, -1.0]),
        "spin1-x": spin1_x,
    }
    return np.asarray(table[name], dtype=complex)


OQUPY_CASE = """
import json, time
import numpy as np
import oqupy

spectral, coupling, hamiltonian, dt, end_time, epsrel = {case!r}
coupling, hamiltonian = np.array(coupling), np.array(hamiltonian)
bath = oqupy.Bath(coupling, oqupy.PowerLawSD(**spectral))
dimension = coupling.shape[0]
initial = np.zeros((dimension, dimension), dtype=complex)
initial[0, 0] = 1.0
observable = np.diag(np.arange(dimension, 0, -1).astype(float))
parameters = oqupy.TempoParameters(dt=dt, tcut=end_time, epsrel=epsrel)
start = time.process_time()
pt = oqupy.pt_tempo_compute(bath, 0.0, end_time, parameters, progress_type="silent")
seconds = time.process_time() - start
bond = max(pt.get_mpo_tensor(step).shape[1] for step in range(len(pt) - 1))
dynamics = oqupy.compute_dynamics(oqupy.System(hamiltonian), initial, process_tensor=pt, progress_type="silent")
values = dynamics.expectations(observable, real=True)[1]
print("RESULT" + json.dumps({{"seconds": seconds, "bond": bond, "values": [float(v) for v in values]}}))
"""


def run_oqupy(python, oq, name):
    """One build of case ``name`` by OQuPy 0.5 (``python``: its environment's interpreter), one BLAS thread."""
    spectral, coupling, hamiltonian, dt, end_time, epsrel = CASES[name]
    matrices = [np.asarray(operators(oq, key)).tolist() for key in (coupling, hamiltonian)]
    case = (spectral, *matrices, dt, end_time, epsrel)
    env = dict(os.environ, **THREADS)
    completed = subprocess.run(
        [python, "-c", OQUPY_CASE.format(case=case)], capture_output=True, text=True, env=env, check=False
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT")]
    if completed.returncode != 0 or not lines:
        raise RuntimeError(f"OQuPy 0.5 failed on {name}:\n{completed.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT") :])


def run_case(oq, name, rounds, oqupy_python=None):
    spectral, coupling, hamiltonian, dt, end_time, epsrel = CASES[name]
    bath = oq.Bath(operators(oq, coupling), oq.PowerLawSD(**spectral))
    system = oq.System(operators(oq, hamiltonian))
    dimension = bath.dimension
    initial = np.zeros((dimension, dimension), dtype=complex)
    initial[0, 0] = 1.0
    observable = np.diag(np.arange(dimension, 0, -1).astype(float))

    def build(method, tolerance):
        parameters = oq.TempoParameters(dt=dt, tcut=end_time, epsrel=tolerance)
        start = time.process_time()
        pt = oq.pt_tempo_compute(bath, 0.0, end_time, parameters, progress_type="silent", method=method)
        seconds = time.process_time() - start
        bond = max(pt.get_mpo_tensor(step).shape[1] for step in range(len(pt) - 1))
        dynamics = oq.compute_dynamics(system, initial, process_tensor=pt, progress_type="silent")
        return seconds, bond, np.asarray(dynamics.expectations(observable, real=True)[1])

    _, reference_bond, reference = build("reference", epsrel / 10)
    times = {"reference": [], "fast": []}
    results = {}
    oqupy_times = []
    for _ in range(rounds):
        for method in times:
            seconds, bond, values = build(method, epsrel)
            times[method].append(seconds)
            results[method] = (bond, values)
        if oqupy_python:
            theirs = run_oqupy(oqupy_python, oq, name)
            oqupy_times.append(theirs["seconds"])
            results["oqupy"] = (theirs["bond"], np.asarray(theirs["values"]))
    medians = {method: statistics.median(values) for method, values in times.items()}
    errors = {method: float(np.abs(values - reference).max()) for method, (_, values) in results.items()}
    difference = float(np.abs(results["fast"][1] - results["reference"][1]).max())
    row = (
        f"| {name} | {dimension} | {end_time:g} / {dt:g} | {epsrel:g} | {medians['reference']:.2f} "
        f"| {medians['fast']:.2f} | {medians['fast'] / medians['reference']:.2f} "
        f"| {results['reference'][0]} / {results['fast'][0]} ({reference_bond}) "
        f"| {errors['reference']:.1e} / {errors['fast']:.1e} | {difference:.1e} |"
    )
    if oqupy_python:
        theirs = statistics.median(oqupy_times)
        row += f" {theirs:.2f} | {medians['fast'] / theirs:.2f} | {results['oqupy'][0]} | {errors['oqupy']:.1e} |"
    print(row, flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="repeatable; default: all")
    parser.add_argument("--package", default="oqupy_numpy", choices=("oqupy_numpy", "oqupy_jax"))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--oqupy", help="python of a virtual environment with OQuPy 0.5: also its builds")
    args = parser.parse_args(argv)
    oq = importlib.import_module(args.package)
    print(f"{args.package}, threads: {THREADS}, XLA_FLAGS={os.environ['XLA_FLAGS']}, rounds {args.rounds}")
    header = (
        "| case | d | end_time = tcut / dt | epsrel | reference CPU (s) | fast CPU (s) | fast / reference "
        "| bond reference / fast (at epsrel / 10) | error reference / fast | fast - reference |"
    )
    columns = 10
    if args.oqupy:
        header += " OQuPy 0.5 CPU (s) | fast / OQuPy | OQuPy bond | OQuPy error |"
        columns += 4
    print(header)
    print("|" + "---|" * columns)
    for name in args.case or sorted(CASES):
        run_case(oq, name, args.rounds, args.oqupy)


if __name__ == "__main__":
    main()
