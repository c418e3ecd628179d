"""Process-tensor sweep on Dask against the same builds one after another (issue "sweeps that outgrow one machine").

    OPENBLAS_NUM_THREADS=1 python -m benchmarks.sweep [--baths 8] [--workers 2] [--package oqupy_numpy]

The baths are the canonical spin-boson bath of ``benchmarks/scenarios.py`` at ``--baths`` temperatures; each build
is the canonical PT-TEMPO run (100 steps, dkmax 40, epsrel 1e-6).  The sequential builds run in this process, the
sweep on a ``LocalCluster`` of ``--workers`` single-threaded worker processes (cluster start-up included in its
time).  BLAS is pinned to one thread everywhere (set before NumPy is imported; the values are printed).  Prints
both wall times and their ratio; nothing is asserted.
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
    args = parser.parse_args(argv)
    os.environ.update(THREADS)
    from dask.distributed import Client, LocalCluster

    from benchmarks.scenarios import DT, STEPS, spin_boson

    oq = importlib.import_module(args.package)
    _, bath, parameters, _ = spin_boson(oq)
    correlations = bath.correlations
    temperatures = [0.2 + 0.05 * k for k in range(args.baths)]
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
    with tempfile.TemporaryDirectory() as directory:
        start = time.perf_counter()
        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, env=THREADS
        )
        with Client(cluster) as client:
            oq.pt_tempo_sweep(baths, 0.0, end_time, parameters, directory, client=client)
        cluster.close()
        swept = time.perf_counter() - start
    print(
        f"package {args.package}, {args.baths} canonical PT builds, threads {THREADS}, {os.cpu_count()} cores"
    )
    print(f"sequential (this process)        : {sequential:7.1f} s")
    print(f"pt_tempo_sweep, {args.workers} workers        : {swept:7.1f} s (cluster start-up included)")
    print(f"ratio sweep / sequential         : {swept / sequential:7.2f}")


if __name__ == "__main__":
    main()
