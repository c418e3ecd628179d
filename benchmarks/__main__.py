"""Benchmark runner: oqupy_numpy, oqupy_jax and (optionally) OQuPy 0.5, side by side, interleaved, in one run.

    python -m benchmarks                                   # every scenario, both generated packages
    python -m benchmarks --oqupy /path/to/oqupy-venv/bin/python
    python -m benchmarks --scenario tempo_canonical --scenario qutrit --rounds 3
    python -m benchmarks --device [--quick]                # accelerator check (benchmarks/device.py)

Each (scenario group, package) pair runs in a fresh worker process (``benchmarks/worker.py``); rounds
interleave the packages so that machine noise hits all of them alike.  Prints a table of medians and ratios and
writes every measurement to JSON (``benchmarks/results/latest.json`` by default).  OQuPy 0.5 needs its own
virtual environment (numpy<2, tensornetwork 0.4.3): ``python3 -m venv oqupy-venv && oqupy-venv/bin/pip install
oqupy==0.5.0``.  The generated packages must be installed in the interpreter that runs this module.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.scenarios import BATCH, PT_FILE, SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
GROUPS = [
    ["tempo_canonical"],
    ["tempo_200"],
    ["tempo_tight"],
    ["tempo_162"],
    ["qutrit"],
    ["pt_build"],
    ["pt_dynamics", "gradient", "batch", "batch_loop"],
    ["tti_build", "tti_long", "tti_steady"],
    ["stationary_window", "stationary_propagate", "stationary_finite_route", "spectrum", "spectrum_2d"],
]
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
"""BLAS/OpenMP thread counts pinned in every worker (all packages alike)."""


def pinned_environment(threads: int) -> dict:
    """Environment variables that pin BLAS, OpenMP and XLA's CPU threads to ``threads`` (0: leave as is)."""
    if threads <= 0:
        return {}
    env = {name: str(threads) for name in THREAD_VARIABLES}
    flags = os.environ.get("XLA_FLAGS", "")
    if threads == 1:
        # XLA has no thread-count flag for the CPU: one thread is "no Eigen thread pool" (a token without "--",
        # such as the often quoted intra_op_parallelism_threads=1, is silently ignored by XLA's flag parser)
        flags += " --xla_cpu_multi_thread_eigen=false"
    env["XLA_FLAGS"] = flags.strip()
    return env


OQUPY_BATCH = 16
"""OQuPy runs the batch scenarios on this many Hamiltonians; its time is scaled to the full batch."""


def run_worker(
    python: str,
    package: str,
    names: list,
    repeats: int,
    profile: bool,
    batch_size: int,
    timeout: float,
    threads: int = 1,
) -> list:
    command = [python, "-m", "benchmarks.worker", "--package", package, "--repeats", str(repeats)]
    command += ["--batch-size", str(batch_size)]
    for name in names:
        command += ["--scenario", name]
    if profile:
        command.append("--profile")
    path = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])
    )  # a given path is kept
    env = dict(os.environ, PYTHONPATH=path, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", ""))
    env.update(pinned_environment(threads))
    try:
        completed = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        print(f"  ! {package} {names}: no result within {timeout} s", file=sys.stderr)
        return []
    if completed.returncode != 0:
        print(f"  ! {package} {names}: worker failed\n{completed.stderr[-2000:]}", file=sys.stderr)
        return []
    records = [json.loads(line[7:]) for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    for record in records:
        if record["scenario"].startswith("batch") and batch_size != BATCH:
            record["scale"] = BATCH / batch_size
    return records


def summarise(records: list) -> dict:
    """scenario -> package -> {cold, warm, max_bond, linalg, rss} (medians over rounds)."""
    table: dict = {}
    for record in records:
        entry = table.setdefault(record["scenario"], {}).setdefault(record["package"], [])
        entry.append(record)
    summary: dict = {}
    for scenario, packages in table.items():
        for package, runs in packages.items():
            scale = runs[0].get("scale", 1.0)
            cold = statistics.median(r["times_s"][0] for r in runs) * scale
            warm_runs = [min(r["times_s"][1:]) for r in runs if len(r["times_s"]) > 1]
            warm = statistics.median(warm_runs) * scale if warm_runs else cold
            busy = [
                r["cpu_s"][-1] / r["times_s"][-1] for r in runs if r.get("cpu_s") and r["times_s"][-1] > 0
            ]
            fractions = [r["linalg_fraction"] for r in runs if "linalg_fraction" in r]
            compile_s = [r["compile_s"][0] for r in runs if r.get("compile_s")]
            compilations = [r["compilations"][0] for r in runs if r.get("compilations")]
            summary.setdefault(scenario, {})[package] = {
                "compile_s": statistics.median(compile_s) if compile_s else None,
                "compilations": max(compilations) if compilations else None,
                "cold_s": cold,
                "warm_s": warm,
                "max_bond": runs[0].get("max_bond"),
                "linalg_fraction": statistics.median(fractions) if fractions else None,
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "cores_busy": statistics.median(busy) if busy else None,
                "extrapolated": scale != 1.0,
            }
    return summary


def _fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def print_table(summary: dict) -> str:
    header = (
        "| scenario | numpy warm [s] | jax cold [s] | jax warm [s] | OQuPy [s] | jax/numpy | numpy/OQuPy | "
        "jax/OQuPy | max bond (np/jax/OQuPy) | LAPACK/BLAS share (np/OQuPy) | peak RSS MB (np/jax/OQuPy) | "
        "jax compile [s] (programs) | cores busy, last run (np/jax/OQuPy) |"
    )
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for scenario in SCENARIOS:
        if scenario not in summary:
            continue
        row = summary[scenario]
        numpy_, jax_, oqupy_ = row.get("oqupy_numpy"), row.get("oqupy_jax"), row.get("oqupy")

        def get(entry, key):
            return None if entry is None else entry.get(key)

        def ratio(a, b):
            return None if a is None or b is None or b == 0 else a / b

        oq_time = get(oqupy_, "warm_s")
        oq_label = _fmt(oq_time) + (" (extrapolated)" if oqupy_ and oqupy_["extrapolated"] else "")
        lines.append(
            "| "
            + " | ".join(
                [
                    scenario,
                    _fmt(get(numpy_, "warm_s")),
                    _fmt(get(jax_, "cold_s")),
                    _fmt(get(jax_, "warm_s")),
                    oq_label,
                    _fmt(ratio(get(jax_, "warm_s"), get(numpy_, "warm_s")), 2),
                    _fmt(ratio(get(numpy_, "warm_s"), oq_time), 2),
                    _fmt(ratio(get(jax_, "warm_s"), oq_time), 2),
                    "/".join(_fmt(get(e, "max_bond")) for e in (numpy_, jax_, oqupy_)),
                    "/".join(_fmt(get(e, "linalg_fraction"), 2) for e in (numpy_, oqupy_)),
                    "/".join(_fmt(get(e, "peak_rss_mb"), 4) for e in (numpy_, jax_, oqupy_)),
                    f"{_fmt(get(jax_, 'compile_s'))} ({_fmt(get(jax_, 'compilations'))})",
                    "/".join(_fmt(get(e, "cores_busy"), 2) for e in (numpy_, jax_, oqupy_)),
                ]
            )
            + " |"
        )
    text = "\n".join(lines)
    print(text)
    return text


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--device" in argv:  # the accelerator check: benchmarks/device.py
        from benchmarks.device import main as device_main

        return device_main([a for a in argv if a != "--device"])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", help="scenario name (repeatable; default: all)")
    parser.add_argument("--package", action="append", choices=("numpy", "jax"), help="default: both")
    parser.add_argument("--oqupy", help="python interpreter of a virtual environment with OQuPy 0.5")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians over rounds)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per worker: the first is cold")
    parser.add_argument("--profile", action="store_true", help="measure the LAPACK/BLAS share (extra run)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP threads per worker, all packages; 1 also turns off XLA's CPU thread pool (0: unpinned)",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per worker process")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "results" / "latest.json")
    args = parser.parse_args(argv)
    wanted = set(args.scenario or SCENARIOS)
    unknown = wanted - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}; choose from {list(SCENARIOS)}")
    packages = [(sys.executable, f"oqupy_{name}", BATCH) for name in (args.package or ["numpy", "jax"])]
    if args.oqupy:
        packages.append((args.oqupy, "oqupy", OQUPY_BATCH))
    records = []
    started = time.time()
    pinning = pinned_environment(args.threads) or {"threads": "not pinned"}
    print(
        "thread pinning (every worker): " + ", ".join(f"{k}={v}" for k, v in pinning.items()), file=sys.stderr
    )
    for round_index in range(args.rounds):
        for group in GROUPS:
            names = [name for name in group if name in wanted]
            if not names:
                continue
            if "pt_dynamics" in group and not PT_FILE.exists():
                print(f"writing {PT_FILE} with oqupy_numpy", file=sys.stderr, flush=True)
                code = "from benchmarks.scenarios import write_canonical_pt; write_canonical_pt()"
                subprocess.run(
                    [sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT))
                )
            for python, package, batch_size in packages:
                # OQuPy 0.5 has no batched dynamics, no uniform process tensors and no stationary correlations
                uniform = ("tti", "stationary", "spectrum")
                run_names = [
                    n for n in names if not (package == "oqupy" and (n == "batch" or n.startswith(uniform)))
                ]
                if not run_names:
                    continue
                print(
                    f"round {round_index + 1}: {package:12s} {', '.join(run_names)}",
                    file=sys.stderr,
                    flush=True,
                )
                profile = args.profile and package != "oqupy_jax"  # the LAPACK share is a host-side measure
                records += run_worker(
                    python, package, run_names, args.repeats, profile, batch_size, args.timeout, args.threads
                )
                args.output.with_suffix(".partial.json").parent.mkdir(parents=True, exist_ok=True)
                args.output.with_suffix(".partial.json").write_text(json.dumps(records, indent=1))
    summary = summarise(records)
    print("threads pinned in every worker: " + ", ".join(f"{k}={v}" for k, v in pinning.items()))
    table = print_table(summary)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                "cpu_count": os.cpu_count(),
                "thread_pinning": pinning,
                "wall_s": time.time() - started,
                "records": records,
                "summary": summary,
                "table": table,
            },
            indent=1,
        )
    )
    print(f"\nwritten: {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
