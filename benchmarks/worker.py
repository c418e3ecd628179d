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

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS")
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


COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class CompileLog:
    """XLA compilations in this process (JAX only): count and seconds, from ``jax.monitoring``."""

    def __init__(self, package: str) -> None:
        self.count, self.seconds = 0, 0.0
        if package == "oqupy_jax":
            import jax.monitoring

            jax.monitoring.register_event_duration_secs_listener(self._record)

    def _record(self, event: str, duration: float, **_: object) -> None:
        if event == COMPILE_EVENT:
            self.count += 1
            self.seconds += duration


def run(package: str, names: list, repeats: int, profile: bool, batch_size: int) -> list:
    from benchmarks.scenarios import SCENARIOS

    oq = importlib.import_module(package)
    compiles = CompileLog(package)
    records = []
    options = {"batch_size": batch_size}
    for name in names:
        setup, scenario, _ = SCENARIOS[name]
        start = time.perf_counter()
        context = setup(oq, options)
        setup_time = time.perf_counter() - start
        times, cpu_times, info, compile_counts, compile_seconds = [], [], {}, [], []
        for _ in range(repeats):
            count, seconds = compiles.count, compiles.seconds
            start, cpu = time.perf_counter(), time.process_time()
            info = scenario(oq, context)
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu)
            compile_counts.append(compiles.count - count)
            compile_seconds.append(compiles.seconds - seconds)
        record = {
            "package": package,
            "scenario": name,
            "setup_s": setup_time,
            "times_s": times,
            "cpu_s": cpu_times,  # every thread of the worker: cpu_s / times_s is the number of cores kept busy
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "compilations": compile_counts,
            "compile_s": compile_seconds,
            "threads": {name: os.environ.get(name, "") for name in THREAD_VARIABLES},
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
