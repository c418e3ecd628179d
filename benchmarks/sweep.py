"""Process-tensor sweep on Dask against the same builds one after another (issue "sweeps that outgrow one machine").

    OPENBLAS_NUM_THREADS=1 python -m benchmarks.sweep [--baths 8] [--workers 2] [--package oqupy_numpy]

The baths are the canonical spin-boson bath of ``benchmarks/scenarios.py`` at ``--baths`` temperatures (0.2, 0.25,
...: colder baths take longer; ``--equal``: 0.35, 0.351, ..., builds of equal length); each build is the canonical
PT-TEMPO run (100 steps, dkmax 40, epsrel 1e-6).  The sequential builds run in this process, the
sweep on ``sweeps.local_client(--workers)``, a ``LocalCluster`` of single-threaded worker processes (cluster
start-up included in its time).  ``--dask-default`` also runs the sweep on a plain ``LocalCluster``, whose
nannies set ``MALLOC_TRIM_THRESHOLD_=65536`` (``local_client`` does not).  BLAS is pinned to one thread
everywhere (set before NumPy is imported; the values are printed).  Prints the wall times and their ratios;
nothing is asserted.
"""

import argparse
import importlib
import os
import tempfile
import time

THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baths", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--package", default="oqupy_numpy")
    parser.add_argument("--dask-default", action="store_true", help="also sweep on a plain LocalCluster")
    parser.add_argument(
        "--equal",
        action="store_true",
        help="temperatures 0.35, 0.351, ... (builds of equal length) instead of 0.2, 0.25, ... (colder is longer)",
    )
    args = parser.parse_args(argv)
    os.environ.update(THREADS)
    from benchmarks.scenarios import DT, STEPS, spin_boson

    oq = importlib.import_module(args.package)
    _, bath, parameters, _ = spin_boson(oq)
    correlations = bath.correlations
    temperatures = [(0.35 + 0.001 * k) if args.equal else (0.2 + 0.05 * k) for k in range(args.baths)]
    baths = [
        oq.Bath(
            bath.coupling_operator,
            oq.PowerLawSD(correlations.alpha, 1, correlations.cutoff, "exponential", temperature=temperature),
        )
        for temperature in temperatures
    ]
    end_time = STEPS * DT
    start = time.perf_counter()
    for one_bath in baths:
        oq.pt_tempo_compute(one_bath, 0.0, end_time, parameters, progress_type="silent")
    sequential = time.perf_counter() - start
    swept = _sweep(oq, baths, end_time, parameters, lambda: oq.sweeps.local_client(args.workers))
    plain = None
    if args.dask_default:
        from dask.distributed import Client, LocalCluster

        def plain_client():
            cluster = LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                env=THREADS,
            )
            return Client(cluster)

        plain = _sweep(oq, baths, end_time, parameters, plain_client)
    print(
        f"package {args.package}, {args.baths} canonical PT builds, threads {THREADS}, {os.cpu_count()} cores"
    )
    print(f"sequential (this process)             : {sequential:7.1f} s")
    print(f"pt_tempo_sweep, local_client({args.workers})      : {swept:7.1f} s (cluster start-up included)")
    print(f"ratio sweep / sequential              : {swept / sequential:7.2f}")
    if plain is not None:
        print(f"pt_tempo_sweep, plain LocalCluster    : {plain:7.1f} s (Dask's MALLOC_TRIM_THRESHOLD_=65536)")
        print(f"ratio plain sweep / sequential        : {plain / sequential:7.2f}")


def _sweep(oq, baths, end_time, parameters, make_client) -> float:
    """Wall time of one sweep into a fresh directory, the cluster's start-up and shut-down included."""
    with tempfile.TemporaryDirectory() as directory:
        start = time.perf_counter()
        client = make_client()
        try:
            oq.pt_tempo_sweep(baths, 0.0, end_time, parameters, directory, client=client)
        finally:
            client.close()
            client.cluster.close()
        return time.perf_counter() - start


if __name__ == "__main__":
    main()
