"""Run benchmark scenarios in this process and print one JSON line per scenario.

    python -m benchmarks.worker --package oqupy_numpy --scenario tempo_canonical [--repeats 2] [--profile]

``--package oqupy`` runs OQuPy 0.5 (in its own interpreter).  The first run of a scenario is "cold" (JAX: with
compilation; every package: with the bath integrals); later runs are "warm" (steady state).  ``--profile`` adds
one run under cProfile and reports the fraction of time inside LAPACK/BLAS calls (SVD, einsum, dot/matmul,
eigh): time attributed to those functions over the total, an estimate (BLAS behind ``@`` is counted under the
calling Python function, so the fraction is a lower bound).
"""

import argparse
import cProfile
import importlib
import json
import os
import pstats
import resource
import sys
import time

LINALG_NAMES = ("svd", "einsum", "dot", "matmul", "eigh", "gesdd", "gesvd", "qr", "solve", "expm")


def linalg_fraction(profile: cProfile.Profile) -> float:
    stats = pstats.Stats(profile)
    total = 0.0
    linalg = 0.0
    for (_filename, _line, name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():
        total += tottime
        label = name.lower()
        if any(key in label for key in LINALG_NAMES) and "tensordot" not in label:
            linalg += tottime
    return linalg / total if total > 0 else float("nan")


def run(package: str, names: list, repeats: int, profile: bool, batch_size: int) -> list:
    from benchmarks.scenarios import SCENARIOS

    oq = importlib.import_module(package)
    records = []
    options = {"batch_size": batch_size}
    for name in names:
        setup, scenario, _ = SCENARIOS[name]
        start = time.perf_counter()
        context = setup(oq, options)
        setup_time = time.perf_counter() - start
        times, info = [], {}
        for _ in range(repeats):
            start = time.perf_counter()
            info = scenario(oq, context)
            times.append(time.perf_counter() - start)
        record = {
            "package": package,
            "scenario": name,
            "setup_s": setup_time,
            "times_s": times,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            **{k: v for k, v in info.items() if not k.startswith("_")},
        }
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            scenario(oq, context)
            profiler.disable()
            record["linalg_fraction"] = linalg_fraction(profiler)
        records.append(record)
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", required=True)
    parser.add_argument("--scenario", action="append", required=True)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    for record in run(args.package, args.scenario, args.repeats, args.profile, args.batch_size):
        print("RESULT " + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
