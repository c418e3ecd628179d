"""LAPACK's SVD drivers on matrices of the shapes and ranks that the OQuPy #162 build factorises (issue 30).

    python -m benchmarks.svd_drivers [--rounds 5] [--calls 300]

The fast PT-TEMPO build of ``benchmarks.hard_regime`` spends a third of its time in about 15,900 truncated
SVDs of small, numerically low-rank matrices (tens of rows, rank about a third of the columns,
``docs/benchmarks.md``).  This times, on one BLAS thread, each driver SciPy wraps directly for real matrices:

- ``gesdd`` (divide and conquer, what the build calls, :func:`oqupy._mps.lapack_svd`);
- ``gesvd`` (QR iteration);
- ``gejsv`` (preconditioned one-sided Jacobi, high relative accuracy), with the default ``joba``;
- ``geqrf``, the QR that ``gesdd`` starts with on a tall matrix, and ``gesdd`` of that QR's ``R``: how much of a
  split is the small square SVD.

Each matrix is ``U diag(s) V^T`` with ``r`` singular values from 1 down to 1e-8 and the rest of order 1e-13 (what
the build's truncation at 1e-9 leaves), in Fortran order, as the build passes them.  Printed: the median over
``--rounds`` of the time per call (each round ``--calls`` calls), in microseconds, all measured in this run.
Nothing is asserted; the figures are in ``docs/benchmarks.md``.
"""

import argparse
import os
import statistics
import time

THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
os.environ.update(THREADS)

import numpy as np  # noqa: E402 - after the thread settings
import scipy.linalg.lapack as lapack  # noqa: E402

SHAPES = ((72, 24, 8), (99, 33, 11), (176, 33, 11), (44, 33, 11), (33, 33, 11), (225, 75, 25))
"""(rows, columns, rank): the build's common shapes (pairs of times: rows 9 l, columns 3 l for a left bond l)."""


def low_rank(rows: int, columns: int, rank: int, rng: np.random.Generator) -> np.ndarray:
    left = np.linalg.qr(rng.standard_normal((rows, columns)))[0]
    right = np.linalg.qr(rng.standard_normal((columns, columns)))[0]
    values = np.concatenate([np.logspace(0, -8, rank), 1e-13 * rng.random(columns - rank)])
    return np.asfortranarray((left * values) @ right.T)


def per_call(function, matrix: np.ndarray, rounds: int, calls: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            function(matrix)
        times.append((time.perf_counter() - start) / calls)
    return 1e6 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    print("threads: " + ", ".join(f"{name}={value}" for name, value in THREADS.items()))
    rng = np.random.default_rng(162)
    drivers = {
        "gesdd": lambda a: lapack.dgesdd(a, compute_uv=1, full_matrices=0),
        "gesvd": lambda a: lapack.dgesvd(a, compute_uv=1, full_matrices=0),
        "gejsv": lambda a: lapack.dgejsv(a),
        "geqrf": lambda a: lapack.dgeqrf(a),
    }
    print(
        "shape (rank)      "
        + "".join(f"{name:>10}" for name in drivers)
        + "  gesdd of R  (microseconds per call)"
    )
    for rows, columns, rank in SHAPES:
        matrix = low_rank(rows, columns, rank, rng)
        times = [per_call(driver, matrix, args.rounds, args.calls) for driver in drivers.values()]
        triangle = np.asfortranarray(np.triu(lapack.dgeqrf(matrix)[0][:columns]))
        square = per_call(drivers["gesdd"], triangle, args.rounds, args.calls)
        label = f"{rows} x {columns} ({rank})"
        print(f"{label:<18}" + "".join(f"{t:>10.0f}" for t in times) + f"  {square:>10.0f}")


if __name__ == "__main__":
    main()
