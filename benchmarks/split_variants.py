"""Cheaper zip-up splits for the fast PT-TEMPO build on OQuPy #162's bath (issue 30), measured before adopting any.

    python -m benchmarks.split_variants [--end-time 1.5] [--rounds 2] [--reference-epsrel 1e-11]

The build is ``benchmarks.hard_regime``'s case (``dt = 0.01``, ``tcut = end_time``, epsrel 1e-9) with
``oqupy_numpy``'s default ``method="fast"``.  Each variant changes one thing: how the zip-up is grouped, or the
full truncated SVD of the zip-up splits (``_pt_tempo_step.split``, used where a sketch does not pay):

- ``fast``: the build as shipped (LAPACK ``gesdd``, two times per zip-up at small bonds);
- ``single-steps``: the build as shipped but one time per zip-up (``_pt_tempo_step.PAIR_MAX_BOND = 0``);
- ``pivoted-qr``: a column-pivoted QR of the matrix's transpose (``dgeqp3``), truncated where the norm of the
  trailing block of ``R`` falls below ``epsrel |R_00|`` (a bound on the discarded part, but not an optimal
  truncation);
- ``gram``: ``eigh`` of ``A^T A`` for tall matrices, with an SVD of ``A V`` over the eigenvectors below
  ``1e-6 s_0``, whose Gram eigenvectors are not accurate (the discarded tail at epsrel 1e-9 lies there).

Each run is a fresh interpreter with one BLAS thread (``--threads``: more for the variants), the variants alternated over ``--rounds``.  Printed: CPU
time of the build, the wall time of the whole process (what more threads could shorten), the largest bond, and the largest error of ``<sigma_z>(t)`` for ``H = sigma_x / 2`` from spin
up, against ``method="reference"`` at ``--reference-epsrel`` (built once, first), up to t = 1 and overall.
Nothing is asserted; the figures are in ``docs/benchmarks.md``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}

CASE = """
import json, time
import numpy as np
import scipy.linalg.lapack
import oqupy_numpy as oqupy
from oqupy_numpy import _mps, _pt_tempo_step

full_split = _pt_tempo_step.split


def pivoted_qr_split(matrix, epsrel, weights_left=False):
    if not weights_left or matrix.dtype != np.float64:
        return full_split(matrix, epsrel, weights_left)
    factored, pivots, tau, _, _ = scipy.linalg.lapack.dgeqp3(matrix.T)
    size = min(matrix.shape)
    triangle = np.triu(factored[:size])
    tails = np.sqrt(np.cumsum(np.einsum("ij,ij->i", triangle, triangle)[::-1]))[::-1]
    rank = max(1, int(np.count_nonzero(tails > epsrel * abs(triangle[0, 0]))))
    basis, _, _ = scipy.linalg.lapack.dorgqr(factored[:, :size], tau)
    weights = np.empty((matrix.shape[0], rank))
    weights[pivots - 1] = triangle[:rank].T
    return weights, basis[:, :rank].T, rank


def gram_split(matrix, epsrel, weights_left=False):
    rows, columns = matrix.shape
    if not weights_left or columns > rows or matrix.dtype != np.float64:
        return full_split(matrix, epsrel, weights_left)
    eigenvalues, vectors = np.linalg.eigh(matrix.T @ matrix)
    eigenvalues, vectors = eigenvalues[::-1], vectors[:, ::-1]
    accurate = int(np.count_nonzero(eigenvalues > 1e-12 * max(eigenvalues[0], 0.0)))
    weights = matrix @ vectors
    values = np.sqrt(np.einsum("ij,ij->j", weights, weights))
    if accurate < columns:
        left, small, right = np.linalg.svd(weights[:, accurate:], full_matrices=False)
        vectors = np.concatenate([vectors[:, :accurate], vectors[:, accurate:] @ right.T], axis=1)
        weights = np.concatenate([weights[:, :accurate], left * small], axis=1)
        values = np.concatenate([values[:accurate], small])
    order = np.argsort(-values, kind="stable")
    rank = _mps.truncation_rank(values[order], epsrel)
    return weights[:, order[:rank]], vectors[:, order[:rank]].T, rank


variant, end_time, epsrel, method = {variant!r}, {end_time}, {epsrel}, {method!r}
if variant == "pivoted-qr":
    _pt_tempo_step.split = pivoted_qr_split
elif variant == "gram":
    _pt_tempo_step.split = gram_split
elif variant == "single-steps":
    _pt_tempo_step.PAIR_MAX_BOND = 0
sd = oqupy.PowerLawSD(alpha=0.01 * 2.2**2, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=4 * 0.1309)
bath = oqupy.Bath(oqupy.operators.sigma("z"), sd)
parameters = oqupy.TempoParameters(dt=0.01, tcut=end_time, epsrel=epsrel)
start = time.process_time()
pt = oqupy.pt_tempo_compute(bath, 0.0, end_time, parameters, progress_type="silent", method=method)
cpu = time.process_time() - start
bond = max(pt.get_mpo_tensor(step).shape[1] for step in range(len(pt) - 1))
dynamics = oqupy.compute_dynamics(
    system=oqupy.System(0.5 * oqupy.operators.sigma("x")),
    process_tensor=pt,
    initial_state=oqupy.operators.spin_dm("up"),
    progress_type="silent",
)
times, sz = dynamics.expectations(oqupy.operators.sigma("z"), real=True)
print("RESULT" + json.dumps({{"cpu": cpu, "bond": bond, "t": [float(x) for x in times], "sz": [float(x) for x in sz]}}))
"""

VARIANTS = ("fast", "single-steps", "pivoted-qr", "gram")


def run(variant: str, end_time: float, epsrel: float, method: str = "fast", threads: int = 1) -> dict:
    """One build in a fresh interpreter with ``threads`` BLAS threads; the dict printed by ``CASE``."""
    code = CASE.format(variant=variant, end_time=end_time, epsrel=epsrel, method=method)
    env = dict(os.environ, **{name: str(threads) for name in THREADS})
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    wall = time.perf_counter() - start
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT")]
    if completed.returncode != 0 or not lines:
        raise RuntimeError(f"{variant} failed:\n{completed.stderr[-3000:]}")
    return dict(json.loads(lines[-1][len("RESULT") :]), wall=wall)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end-time", type=float, default=1.5, help="end time = tcut")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reference-epsrel", type=float, default=1e-11)
    parser.add_argument("--variant", action="append", choices=VARIANTS, help="default: all")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of the variants' builds")
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    print(
        f"BLAS threads: {args.threads} (the reference build: 1); end_time = tcut = {args.end_time}, epsrel 1e-9, {args.rounds} rounds"
    )
    reference = run("fast", args.end_time, args.reference_epsrel, method="reference")
    times = {variant: [] for variant in variants}
    walls = {variant: [] for variant in variants}
    results = {}
    for _ in range(args.rounds):
        for variant in variants:
            results[variant] = run(variant, args.end_time, 1e-9, threads=args.threads)
            times[variant].append(results[variant]["cpu"])
            walls[variant].append(results[variant]["wall"])
    print(
        "| variant | build CPU (s), median | rounds | process wall (s), median | largest bond | error t <= 1 | all t |"
    )
    print("|---|---|---|---|---|---|---|")
    for variant in variants:
        result = results[variant]
        errors = [abs(a - b) for a, b in zip(result["sz"], reference["sz"])]
        early = [error for error, t in zip(errors, result["t"]) if t <= 1.0 + 1e-9]
        print(
            f"| {variant} | {statistics.median(times[variant]):.2f} | "
            + " ".join(f"{value:.2f}" for value in times[variant])
            + f" | {statistics.median(walls[variant]):.2f} | {result['bond']} | {max(early):.1e} | {max(errors):.1e} |"
        )


if __name__ == "__main__":
    main()
