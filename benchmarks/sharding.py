"""Sharded batches: the canonical batch of 256 Hamiltonians on 4 forced host devices against 1 (issue 16).

    python -m benchmarks.sharding [--devices 4] [--batch 256] [--rounds 3]

``compute_dynamics_batch`` of ``oqupy_jax`` runs the batch of ``benchmarks/scenarios.py`` (256 Hamiltonians through
the canonical process tensor, read from ``benchmarks/results/canonical_pt.hdf5``, built first if missing) once with
``devices=jax.devices()[:1]`` and once sharded over all ``--devices`` forced host devices, interleaved, ``--rounds``
rounds each after one warm-up call per configuration (its time, compilation included, is printed apart).
``XLA_FLAGS`` forces the host devices and keeps each device's computations on one thread
(``--xla_cpu_multi_thread_eigen=false``); BLAS is pinned to one thread; both are
printed.  On a CPU the devices are threads of one process, so the ratio shows at most how the work splits over
the machine's cores (2 on the development machine); an accelerator shows the rest.

Those flags do not keep one device on one core: XLA's CPU compiler still splits the loops of one device's
program over its thread pool (``outer_dimension_partitions`` in the compiled HLO), and one device keeps 1.6 of the
2 cores busy.  A third configuration therefore runs one device with every thread of the process confined to the
first core (``os.sched_setaffinity`` on each thread, restored after the call): the speed-up against it is how
the work splits over devices.  Nothing is asserted.
"""

import argparse
import os
import statistics
import sys
import time


def _environment(devices: int) -> dict:
    flags = f"--xla_force_host_platform_device_count={devices} --xla_cpu_multi_thread_eigen=false"
    pinned = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    return {"XLA_FLAGS": flags, **pinned}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if "jax" in sys.modules:
        raise SystemExit("run as `python -m benchmarks.sharding` (XLA_FLAGS must be set before JAX starts)")
    pinned = _environment(args.devices)
    os.environ.update(pinned)

    import jax
    import numpy as np

    import oqupy_jax as oq
    from benchmarks.scenarios import PT_FILE, _batch_systems, spin_boson, write_canonical_pt

    if not PT_FILE.exists():
        write_canonical_pt()
    pt = oq.import_process_tensor(str(PT_FILE), "simple")
    _, _, _, state = spin_boson(oq)
    systems = _batch_systems(oq, args.batch)
    one_core = "1 device, 1 core"
    configurations = {
        "1 device": jax.devices()[:1],
        one_core: jax.devices()[:1],
        f"{len(jax.devices())} devices": jax.devices(),
    }
    all_cores = os.sched_getaffinity(0)

    def confine(cores):
        for thread in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(thread), cores)
            except OSError:  # a thread that ended meanwhile
                pass

    def run(label):
        if label == one_core:
            confine({min(all_cores)})
        try:
            start = time.perf_counter()
            cpu = time.process_time()
            _, states = oq.compute_dynamics_batch(
                systems, state, process_tensor=pt, progress_type="silent", devices=configurations[label]
            )
            states.block_until_ready()
            seconds = time.perf_counter() - start
            return seconds, (time.process_time() - cpu) / seconds, states
        finally:
            confine(all_cores)

    print(f"oqupy_jax, jax {jax.__version__}, {os.cpu_count()} cores; environment: {pinned}")
    print(f"batch of {args.batch} Hamiltonians through {PT_FILE.name} ({len(pt)} steps)")
    first, results = {}, {}
    for label in configurations:
        first[label], _, results[label] = run(label)
        print(f"{label:>16}: first call {first[label]:6.1f} s (compilation included)")
    deviation = float(np.max(np.abs(np.asarray(results["1 device"]) - np.asarray(results[label]))))
    print(f"largest difference between one device and {label}: {deviation:.1e}")
    times = {label: [] for label in configurations}
    busy = {label: [] for label in configurations}
    for _ in range(args.rounds):
        for label in configurations:
            seconds, cores, _ = run(label)
            times[label].append(seconds)
            busy[label].append(cores)
    medians = {label: statistics.median(values) for label, values in times.items()}
    for label, median in medians.items():
        rounds = ", ".join(f"{t:.2f}" for t in times[label])
        cores = statistics.median(busy[label])
        print(
            f"{label:>16}: median {median:6.2f} s over {args.rounds} rounds ({rounds}); cores busy {cores:.2f}"
        )
    one, confined, many = medians.values()
    print(f"speed-up {label} / 1 device:         {one / many:.2f}x")
    print(
        f"speed-up {label} / 1 device, 1 core: {confined / many:.2f}x (target >= 1.5x with 4 forced devices)"
    )


if __name__ == "__main__":
    main()
