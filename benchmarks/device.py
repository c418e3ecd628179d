"""Device check: whole-step kernels of oqupy_jax on an accelerator, against oqupy_numpy, in one short run.

    python -m benchmarks.device              # on a machine with an accelerator (about 8 minutes)
    python -m benchmarks.device --quick      # tiny sizes: checks that the script works (CPU, under a minute)
    python -m benchmarks --device [--quick]  # the same

Measures, in one process, packages interleaved, BLAS/OpenMP threads pinned (``--threads``, reported):

1. ``chi_sweep``: one PT-TEMPO step (:func:`oqupy._steps.pt_step`) on open legs of bond ``chi`` (64 ... 512), the
   zip-up and sweep of ``--legs`` legs: the SVDs of (4 chi x 4 chi) matrices that dominate large builds.  Both
   packages get the same legs, of exactly ``chi`` (no padding: ``capacity = chi`` in oqupy_jax);
2. ``pt_162``: a PT-TEMPO build in the regime of OQuPy issue #162 (weak coupling alpha = 0.01, tight epsrel, so
   large bonds);
3. ``batch_N``: ``compute_dynamics_batch`` of N = 256 ... 4096 Hamiltonians through that process tensor;
4. compile time and number of XLA programs of each oqupy_jax item (from ``jax.monitoring``).

Prints one table (cold and warm seconds, compile seconds and programs, largest bond).  Nothing is asserted.
"""

import argparse
import os
import sys
import time

THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

FULL = {
    "chis": (64, 128, 256, 512),
    "numpy_max_chi": 256,
    "legs": 4,
    "pt": dict(alpha=0.01, epsrel=1e-8, dt=0.05, dkmax=30, steps=40),
    "batches": (256, 1024, 4096),
    "numpy_max_batch": 256,
}
QUICK = {
    "chis": (8, 16),
    "numpy_max_chi": 16,
    "legs": 3,
    "pt": dict(alpha=0.01, epsrel=1e-6, dt=0.1, dkmax=4, steps=6),
    "batches": (4, 16),
    "numpy_max_batch": 4,
}


def pin_threads(threads: int) -> dict:
    """Pin BLAS/OpenMP (every package) and XLA's CPU threads; must run before NumPy or JAX is imported."""
    if threads <= 0:
        return {"threads": "not pinned"}
    for name in THREADS:
        os.environ[name] = str(threads)
    flags = os.environ.get("XLA_FLAGS", "")
    if threads == 1:
        flags += " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    os.environ["XLA_FLAGS"] = flags.strip()
    return {name: os.environ[name] for name in (*THREADS, "XLA_FLAGS")}


class Compiles:
    """XLA compilations (count, seconds) seen by ``jax.monitoring`` since the last :meth:`take`."""

    def __init__(self) -> None:
        import jax.monitoring

        self.count, self.seconds = 0, 0.0
        jax.monitoring.register_event_duration_secs_listener(self._record)

    def _record(self, event: str, duration: float, **_: object) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            self.count += 1
            self.seconds += duration

    def take(self) -> tuple:
        taken = (self.count, self.seconds)
        self.count, self.seconds = 0, 0.0
        return taken


def _block(value):
    import jax

    return jax.block_until_ready(value)


def _random_legs(pkg, chi: int, count: int, seed: int):
    """A ring of ``count + 1`` open legs of bond ``chi`` with decaying weights (the same numbers for both)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    decay = np.exp(-np.arange(chi) * 8.0 / chi)
    legs = []
    for _ in range(count + 1):
        leg = rng.normal(size=(chi, 4, chi)) + 1j * rng.normal(size=(chi, 4, chi))
        legs.append(leg * decay[:, None, None] * decay[None, None, :])
    legs[-1][:, :, 1:] = 0.0  # the farthest open leg ends the chain: a right bond of dimension 1
    if pkg.__name__ == "oqupy_jax":
        return np.stack(legs)
    return legs[:-1] + [legs[-1][:, :, :1]]


def chi_step(pkg, chi: int, count: int) -> dict:
    """One PT-TEMPO step on legs of bond ``chi``; cold (with compilation) and warm seconds."""
    import numpy as np

    phases = np.exp(0.3j * np.arange(16.0)).reshape(4, 4)
    lines = np.stack([(0.9 + 0.01 * k) * phases for k in range(count)])
    operators = pkg._steps.PtOperators(
        lines,
        np.eye(4) + 0j,
        np.eye(4) + 0j,
        np.ones(4) + 0.1j,
    )
    times, largest = [], 0
    for repeat in range(2):
        legs = _random_legs(pkg, chi, count, seed=repeat)
        if pkg.__name__ == "oqupy_jax":
            import jax.numpy as jnp

            legs = _block(jnp.asarray(legs))
        start = time.perf_counter()
        result = pkg._steps.pt_step(legs, 0, 10 * count, lines[-1], operators, 1e-8, chi)
        if pkg.__name__ == "oqupy_jax":
            _block(result)
        times.append(time.perf_counter() - start)
        largest = int(np.asarray(result[3]))
    return {"cold_s": times[0], "warm_s": times[1], "bond": largest}


def pt_build(pkg, alpha: float, epsrel: float, dt: float, dkmax: int, steps: int) -> tuple:
    """The #162-regime PT-TEMPO build (twice: cold, warm); returns the record and the process tensor."""
    op = pkg.operators
    correlations = pkg.PowerLawSD(alpha=alpha, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.2)
    bath = pkg.Bath(0.5 * op.sigma("z"), correlations)
    parameters = pkg.TempoParameters(dt=dt, epsrel=epsrel, dkmax=dkmax)
    times = []
    for _ in range(2):
        start = time.perf_counter()
        pt = pkg.PtTempo(bath, 0.0, steps * dt, parameters).get_process_tensor(progress_type="silent")
        times.append(time.perf_counter() - start)
    bonds = pt.get_bond_dimensions()
    return {"cold_s": times[0], "warm_s": times[1], "bond": int(max(bonds))}, pt


def batch(pkg, pt, size: int) -> dict:
    import numpy as np

    op = pkg.operators
    systems = [pkg.System(0.5 * omega * op.sigma("x")) for omega in np.linspace(0.2, 3.0, size)]
    times = []
    for _ in range(2):
        start = time.perf_counter()
        _, states = pkg.compute_dynamics_batch(
            systems, op.spin_dm("up"), process_tensor=pt, progress_type="silent"
        )
        np.asarray(states)
        times.append(time.perf_counter() - start)
    return {"cold_s": times[0], "warm_s": times[1], "bond": None}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a CPU check of the script)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP/XLA CPU threads (0: unpinned)")
    parser.add_argument("--package", action="append", choices=("numpy", "jax"), help="default: both")
    args = parser.parse_args(argv)
    pinning = pin_threads(args.threads)
    sizes = QUICK if args.quick else FULL
    import importlib

    import jax

    packages = [importlib.import_module(f"oqupy_{name}") for name in (args.package or ["numpy", "jax"])]
    compiles = Compiles()
    print(f"devices: {jax.devices()}; threads pinned: {pinning}", flush=True)
    rows = []

    def record(item: str, pkg, result: dict) -> None:
        count, seconds = compiles.take()
        jax_package = pkg.__name__ == "oqupy_jax"
        rows.append((item, pkg.__name__, result, (count, seconds) if jax_package else None))
        print(f"  {item:14s} {pkg.__name__:12s} {result}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    for chi in sizes["chis"]:
        for pkg in packages:
            if pkg.__name__ == "oqupy_numpy" and chi > sizes["numpy_max_chi"]:
                continue
            compiles.take()
            record(f"chi_sweep {chi}", pkg, chi_step(pkg, chi, sizes["legs"]))
    tensors = {}
    for pkg in packages:
        compiles.take()
        result, tensors[pkg.__name__] = pt_build(pkg, **sizes["pt"])
        record("pt_162", pkg, result)
    for size in sizes["batches"]:
        for pkg in packages:
            if pkg.__name__ == "oqupy_numpy" and size > sizes["numpy_max_batch"]:
                continue
            compiles.take()
            record(f"batch {size}", pkg, batch(pkg, tensors[pkg.__name__], size))
    print("\n| item | package | cold [s] | warm [s] | compile [s] (programs) | largest bond |")
    print("|---|---|---|---|---|---|")
    for item, name, result, compiled in rows:
        compile_text = "-" if compiled is None else f"{compiled[1]:.3g} ({compiled[0]})"
        bond = "-" if result["bond"] is None else str(result["bond"])
        print(
            f"| {item} | {name} | {result['cold_s']:.3g} | {result['warm_s']:.3g} | {compile_text} | {bond} |"
        )
    print(f"\ntotal {time.perf_counter() - started:.0f} s; threads pinned: {pinning}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
