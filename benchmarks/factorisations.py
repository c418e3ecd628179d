"""Cheaper factorisations for the truncated splits of PT-TEMPO (issue 11, item 2), measured before adopting any.

    python -m benchmarks.factorisations [--every 7] [--epsrel 1e-6] [--repeats 3]

Builds the canonical process tensor (``benchmarks/scenarios.py``: 100 steps, dkmax 40, epsrel 1e-6) with
``oqupy_numpy`` and keeps every ``--every``-th matrix that the build factorises (those of at least 64 x 64), then
factorises each again three ways, on one BLAS thread, and decides the kept rank as the build does
(``_mps.truncation_rank``, relative criterion and degeneracy rule):

- **full SVD**: ``numpy.linalg.svd`` (LAPACK ``gesdd``), what both packages use;
- **sketched SVD** (randomized subspace iteration): ``k = 1.2 r + 8`` Gaussian probes, where ``r`` is the full
  SVD's rank (an oracle guess, the best case: a real build would take the previous step's rank), ``q`` power
  iterations with re-orthonormalisation, the SVD of the ``k x n`` projection, and the discarded tail computed
  from the exact Frobenius norm of the matrix (``||A||^2 - sum s_i^2`` appended as one more value);
- **Gram eigh**: the eigenvalues of ``A^H A`` (``numpy.linalg.eigh``), ``s = sqrt(lambda)``, with the right
  singular vectors and ``A V`` (what a split needs).

Prints, per method: how many kept ranks equal the full SVD's, the largest discarded tail relative to ``s_0``
(the full SVD keeps it ``<= epsrel``), and the summed time (best of ``--repeats``) against the full SVD's, all
measured in this run; and the times of the largest matrices.  Nothing is asserted.
"""

import argparse
import os
import time

THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def _collect(every: int) -> list:
    """Every ``every``-th matrix (at least 64 x 64) that the canonical oqupy_numpy PT build factorises."""
    import numpy as np

    import oqupy_numpy as oq
    from benchmarks.scenarios import DT, STEPS, spin_boson
    from oqupy_numpy import _mps

    kept, calls, full = [], [0], _mps.lapack_svd  # the SVD of every split of the host step (_mps.split)

    def spy(matrix):
        calls[0] += 1
        if min(matrix.shape) >= 64 and calls[0] % every == 0:
            kept.append(np.array(matrix))
        return full(matrix)

    _, bath, parameters, _ = spin_boson(oq)
    _mps.lapack_svd = spy
    try:
        oq.pt_tempo_compute(bath, 0.0, STEPS * DT, parameters, progress_type="silent")
    finally:
        _mps.lapack_svd = full
    return kept


def _sketched(matrix, probes: int, iterations: int, rng):
    """Randomized subspace iteration: values and the discarded norm beyond them (exact Frobenius total)."""
    import numpy as np

    size = matrix.shape[1]
    gauss = rng.normal(size=(size, probes)) + 1j * rng.normal(size=(size, probes))
    basis, _ = np.linalg.qr(matrix @ gauss)
    for _ in range(iterations):
        back, _ = np.linalg.qr(matrix.conj().T @ basis)
        basis, _ = np.linalg.qr(matrix @ back)
    left, values, right = np.linalg.svd(basis.conj().T @ matrix, full_matrices=False)
    rest = max(float(np.vdot(matrix, matrix).real - np.sum(values**2)), 0.0)
    return basis @ left, values, right, np.sqrt(rest)


def _gram(matrix):
    """Singular values and vectors from ``eigh`` of the Gram matrix of the longer side."""
    import numpy as np

    tall = matrix if matrix.shape[0] >= matrix.shape[1] else matrix.conj().T
    eigenvalues, vectors = np.linalg.eigh(tall.conj().T @ tall)
    vectors = vectors[:, ::-1]
    return np.sqrt(np.clip(eigenvalues[::-1], 0.0, None)), tall @ vectors, vectors


def _best(repeats: int, function, *args) -> float:
    """Best wall time of ``function(*args)`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=7)
    parser.add_argument("--epsrel", type=float, default=1e-6)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.update(THREADS)
    import numpy as np

    from oqupy_numpy._mps import truncation_rank

    matrices = _collect(args.every)
    rng = np.random.default_rng(0)
    rows = {"sketched, q = 1": [], "sketched, q = 2": [], "Gram eigh": []}
    for matrix in matrices:
        values = np.linalg.svd(matrix, compute_uv=False)
        rank = truncation_rank(values, args.epsrel)
        full = _best(args.repeats, np.linalg.svd, matrix, False)
        probes = min(min(matrix.shape), int(1.2 * rank) + 8)
        for iterations in (1, 2):
            left, approx, right, rest = _sketched(matrix, probes, iterations, rng)
            kept = truncation_rank(np.concatenate([approx, [rest]]), args.epsrel)
            tail = np.linalg.norm(matrix - (left[:, :kept] * approx[:kept]) @ right[:kept]) / values[0]
            seconds = _best(args.repeats, _sketched, matrix, probes, iterations, rng)
            rows[f"sketched, q = {iterations}"].append((matrix.shape, rank, kept, tail, full, seconds))
        gram_values, _, _ = _gram(matrix)
        kept = truncation_rank(gram_values, args.epsrel)
        seconds = _best(args.repeats, _gram, matrix)
        rows["Gram eigh"].append((matrix.shape, rank, kept, np.nan, full, seconds))
    largest = max(min(matrix.shape) for matrix in matrices)
    print(f"oqupy_numpy, canonical PT build, epsrel {args.epsrel}; threads {THREADS}")
    print(f"{len(matrices)} matrices, {min(min(m.shape) for m in matrices)} to {largest} on the shorter side")
    for method, results in rows.items():
        same = sum(rank == kept for _, rank, kept, _, _, _ in results)
        full = sum(row[4] for row in results)
        other = sum(row[5] for row in results)
        tails = [row[3] for row in results if np.isfinite(row[3])]
        worst = f", largest discarded tail {max(tails) / args.epsrel:.3f} epsrel s_0" if tails else ""
        print(
            f"{method:>16}: same rank as the full SVD {same}/{len(results)}{worst}; "
            f"{other:.2f} s against {full:.2f} s ({other / full:.2f}x the full SVD's time)"
        )
    big = sorted(rows["sketched, q = 1"], key=lambda row: -min(row[0]))[:4]
    for shape, rank, _, _, full, seconds in big:
        gram = next(row[5] for row in rows["Gram eigh"] if row[0] == shape and row[1] == rank)
        print(
            f"  {shape[0]} x {shape[1]}, rank {rank}: full SVD {full * 1e3:.1f} ms, sketched (q = 1) "
            f"{seconds * 1e3:.1f} ms, Gram eigh {gram * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()
