"""Device check: whole-step kernels of oqupy_jax on an accelerator, against oqupy_numpy, in one short run.

    python -m benchmarks.device              # on a machine with an accelerator (about 5 minutes, --budget)
    python -m benchmarks.device --quick      # tiny sizes: checks that the script works (CPU, under a minute)
    python -m benchmarks --device [--quick]  # the same

Measures, in one process, packages interleaved, BLAS/OpenMP threads pinned (``--threads``, reported):

0. ``svd n``: one complex128 SVD of an (n x n) matrix, ``jnp.linalg.svd`` (jitted, on the default device) against
   ``numpy.linalg.svd`` on the host: the factorisation that every item below is made of;
1. (``chi_sweep``, one whole-step PT-TEMPO kernel on legs of bond ``chi``, was removed with that kernel: ``PtTempo``
   never used it; items 2 and 4 time the real ``PtTempo`` path);
2. ``pt_162``: a PT-TEMPO build in the regime of OQuPy issue #162 (weak coupling alpha = 0.01, tight epsrel, so
   large bonds);
3. ``batch_N``: ``compute_dynamics_batch`` of N = 256 ... 4096 Hamiltonians through that process tensor (a loop
   over ``compute_dynamics`` in oqupy_numpy);
4. ``pt_large``: a PT-TEMPO build whose bonds reach about 200 (the canonical bath at epsrel 1e-7), run once per
   package when the budget allows (cold only: compilation included for oqupy_jax);
5. ``factor``: what would make PT builds pay on an accelerator (issue 11, untried there): ``sketch n/k`` is a
   sketched SVD (randomized subspace iteration, one power iteration, ``1.2 n/k + 8`` probes: keeping ``n/k`` of
   ``n``) against the full ``svd n`` above, and ``svd x8 n`` is 8 independent SVDs as one batched call (as
   batched builds of a bath sweep would run them) against 8 times ``svd n``;
6. ``pt_162_full``: OQuPy #162's own case (``hard`` group: super-ohmic gaussian bath, ``dt = 0.01``,
   ``tcut = end_time = 5``, ``epsrel = 1e-9``), oqupy_jax only (oqupy_numpy runs the same host code), last,
   once, when the budget allows;
7. compile time and number of XLA programs of each oqupy_jax item (from ``jax.monitoring``).

Prints one table (cold and warm seconds, compile seconds and programs, largest bond), and writes it after every
item to ``--table`` (if given), so that a run stopped by a time limit keeps what it measured.  Items are skipped
once ``--budget`` seconds have passed.  Then the **goals table** of issue 31's accelerator rows (:func:`goals`):
each measured figure beside its goal.  Nothing is asserted.
"""

import argparse
import os
import sys
import time

THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

FULL = {
    "svds": (256, 512, 1024, 2048),
    "numpy_max_svd": 1024,
    "pt": dict(alpha=0.01, epsrel=1e-9, dt=0.05, dkmax=30, steps=40),
    "batches": (256, 1024, 4096, 16384),
    "numpy_max_batch": 4096,
    "pt_large": dict(alpha=0.25, epsrel=1e-7, dt=0.05, dkmax=40, steps=60),
    "factors": (512, 1024, 2048),
    "hard_end_time": 5.0,
    "budget": 300.0,
}
QUICK = {
    "svds": (8, 16),
    "numpy_max_svd": 16,
    "pt": dict(alpha=0.01, epsrel=1e-6, dt=0.1, dkmax=4, steps=6),
    "batches": (4, 16),
    "numpy_max_batch": 4,
    "pt_large": dict(alpha=0.25, epsrel=1e-5, dt=0.1, dkmax=4, steps=6),
    "factors": (16, 32),
    "hard_end_time": 0.05,
    "budget": 60.0,
}


def pin_threads(threads: int) -> dict:
    """Pin BLAS/OpenMP (every package) and XLA's CPU threads; must run before NumPy or JAX is imported."""
    if threads <= 0:
        return {"threads": "not pinned"}
    for name in THREADS:
        os.environ[name] = str(threads)
    flags = os.environ.get("XLA_FLAGS", "")
    if threads == 1:
        flags += " --xla_cpu_multi_thread_eigen=false"
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


def svd_time(pkg, n: int) -> dict:
    """One complex128 SVD of an (n x n) matrix with decaying singular values: cold and warm seconds."""
    xp = _array_module(pkg)
    return {**_timed(pkg, lambda m: xp.linalg.svd(m, full_matrices=False), _decaying(n)), "bond": n}


def _decaying(n: int, count: int = 0):
    """An (n x n) complex matrix with decaying singular values, or ``count`` of them stacked."""
    import numpy as np

    rng = np.random.default_rng(n + count)
    shape = (count, n, n) if count else (n, n)
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)) * np.exp(-np.arange(n) * 8.0 / n)


def _timed(pkg, function, *arguments) -> dict:
    """Cold and warm seconds of ``function(*arguments)`` (jitted, arguments on the device, for oqupy_jax)."""
    if pkg.__name__ == "oqupy_jax":
        import jax

        function = jax.jit(function)
        arguments = tuple(_block(jax.numpy.asarray(argument)) for argument in arguments)
    times = []
    for _ in range(2):
        start = time.perf_counter()
        result = function(*arguments)
        if pkg.__name__ == "oqupy_jax":
            _block(result)
        times.append(time.perf_counter() - start)
    return {"cold_s": times[0], "warm_s": times[1]}


def _array_module(pkg):
    """``jax.numpy`` for oqupy_jax, ``numpy`` otherwise."""
    if pkg.__name__ == "oqupy_jax":
        import jax.numpy as jnp

        return jnp
    import numpy as np

    return np


def sketch_time(pkg, n: int, share: int) -> dict:
    """A sketched SVD keeping ``n // share`` of ``n``: one power iteration, ``1.2 n / share + 8`` probes."""
    import numpy as np

    xp = _array_module(pkg)
    probes = int(1.2 * n / share) + 8
    gauss = np.random.default_rng(0).normal(size=(n, probes)) + 0j

    def sketch(matrix, gauss):
        basis, _ = xp.linalg.qr(matrix @ gauss)
        back, _ = xp.linalg.qr(matrix.conj().T @ basis)
        basis, _ = xp.linalg.qr(matrix @ back)
        left, values, right = xp.linalg.svd(basis.conj().T @ matrix, full_matrices=False)
        return basis @ left, values, right

    return {**_timed(pkg, sketch, _decaying(n), gauss), "bond": n}


def batched_svd_time(pkg, n: int, count: int = 8) -> dict:
    """``count`` independent complex SVDs of (n x n) as one batched call (NumPy: its stacked ``svd``)."""
    xp = _array_module(pkg)
    return {**_timed(pkg, lambda m: xp.linalg.svd(m, full_matrices=False), _decaying(n, count)), "bond": n}


def pt_build(pkg, alpha: float, epsrel: float, dt: float, dkmax: int, steps: int, runs: int = 2) -> tuple:
    """A PT-TEMPO build (``runs`` times: cold, warm); returns the record and the process tensor."""
    op = pkg.operators
    correlations = pkg.PowerLawSD(alpha=alpha, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.2)
    bath = pkg.Bath(0.5 * op.sigma("z"), correlations)
    parameters = pkg.TempoParameters(dt=dt, epsrel=epsrel, dkmax=dkmax)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        pt = pkg.PtTempo(bath, 0.0, steps * dt, parameters).get_process_tensor(progress_type="silent")
        times.append(time.perf_counter() - start)
    bonds = pt.get_bond_dimensions()
    return {"cold_s": times[0], "warm_s": times[-1] if runs > 1 else None, "bond": int(max(bonds))}, pt


def hard_build(pkg, end_time: float) -> dict:
    """OQuPy #162's PT-TEMPO build as its reporter ran it (``tcut = end_time``, ``epsrel = 1e-9``), once."""
    op = pkg.operators
    correlations = pkg.PowerLawSD(
        alpha=0.01 * 2.2**2, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=4 * 0.1309
    )
    parameters = pkg.TempoParameters(dt=0.01, tcut=end_time, epsrel=1e-9)
    start = time.perf_counter()
    pt = pkg.pt_tempo_compute(
        pkg.Bath(op.sigma("z"), correlations), 0.0, end_time, parameters, progress_type="silent"
    )
    return {"cold_s": time.perf_counter() - start, "warm_s": None, "bond": int(max(pt.get_bond_dimensions()))}


GOALS = (
    # (row of issue 31's table, the measured item, the item it is divided by (None: seconds), goal)
    (
        "PT build at bond >= 200 / numpy on one CPU core",
        ("pt_large", "oqupy_jax"),
        ("pt_large", "oqupy_numpy"),
        0.1,
    ),
    ("OQuPy #162's full PT [s]", ("pt_162_full", "oqupy_jax"), None, 10.0),
    (
        "batch of 4,096 Hamiltonians / numpy loop",
        ("batch 4096", "oqupy_jax"),
        ("batch 4096", "oqupy_numpy"),
        1 / 50,
    ),
)


def goals(rows: list, quick: bool = False) -> str:
    """Issue 31's accelerator rows: each figure (warm seconds where there are two runs, else cold) beside its goal;
    ``-`` where an item did not run (budget, ``--items``)."""
    seconds = {}
    for item, name, result, _ in rows:
        seconds[(item, name)] = result["warm_s"] if result["warm_s"] is not None else result["cold_s"]
    lines = ["| row | measured | goal | met |", "|---|---|---|---|"]
    if quick:
        lines.insert(0, "(--quick: tiny cases, not those of the goals)\n")
    for row, numerator, denominator, goal in GOALS:
        value = seconds.get(numerator)
        if denominator is not None and value is not None:
            below = seconds.get(denominator)
            value = None if below is None else value / below
        if value is None:
            lines.append(f"| {row} | - | <= {goal:.3g} | - |")
        else:
            lines.append(f"| {row} | {value:.3g} | <= {goal:.3g} | {'yes' if value <= goal else 'no'} |")
    return "\n".join(lines)


def _shared_process_tensor(packages: list, parameters: dict) -> dict:
    """The ``pt_162`` process tensor built once by oqupy_numpy (untimed), read by every package from a file."""
    import importlib
    import tempfile
    from pathlib import Path

    builder = importlib.import_module("oqupy_numpy")
    _, pt = pt_build(builder, runs=1, **parameters)
    path = Path(tempfile.mkdtemp()) / "pt_162.hdf5"
    pt.export(str(path))
    return {pkg.__name__: pkg.import_process_tensor(str(path), "simple") for pkg in packages}


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


def _seconds(value) -> str:
    return "-" if value is None else f"{value:.3g}"


def _table(rows: list, pinning: dict, elapsed: float, skipped: list) -> str:
    lines = [
        "| item | package | cold [s] | warm [s] | compile [s] (programs) | largest bond |",
        "|---|---|---|---|---|---|",
    ]
    for item, name, result, compiled in rows:
        compile_text = "-" if compiled is None else f"{compiled[1]:.3g} ({compiled[0]})"
        bond = "-" if result["bond"] is None else str(result["bond"])
        cold, warm = _seconds(result["cold_s"]), _seconds(result["warm_s"])
        lines.append(f"| {item} | {name} | {cold} | {warm} | {compile_text} | {bond} |")
    if skipped:
        lines.append(f"\nskipped (budget spent): {', '.join(skipped)}")
    lines.append(f"\ntotal {elapsed:.0f} s; threads pinned: {pinning}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a CPU check of the script)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP/XLA CPU threads (0: unpinned)")
    parser.add_argument("--package", action="append", choices=("numpy", "jax"), help="default: both")
    parser.add_argument("--budget", type=float, default=None, help="seconds after which items are skipped")
    parser.add_argument("--table", default=None, help="file the table is written to after every item")
    parser.add_argument(
        "--items",
        default="svd,pt,batch,factor,large,hard",
        help="comma-separated groups to run (svd, pt, batch, large, factor, hard); without pt, batch goes through a "
        "process tensor built by oqupy_numpy and read by each package from a file (untimed)",
    )
    args = parser.parse_args(argv)
    pinning = pin_threads(args.threads)
    sizes = QUICK if args.quick else FULL
    budget = sizes["budget"] if args.budget is None else args.budget
    import importlib

    import jax

    packages = [importlib.import_module(f"oqupy_{name}") for name in (args.package or ["numpy", "jax"])]
    compiles = Compiles()
    print(f"devices: {jax.devices()}; threads pinned: {pinning}", flush=True)
    rows: list = []
    skipped: list = []
    started = time.perf_counter()

    def run(item: str, pkg, measure, *arguments, **keywords):
        """Measure one item unless the budget is spent; record and write the table; return what it returned."""
        if time.perf_counter() - started > budget:
            skipped.append(f"{item} {pkg.__name__}")
            return None
        compiles.take()
        returned = measure(pkg, *arguments, **keywords)
        result = returned[0] if isinstance(returned, tuple) else returned
        count, seconds = compiles.take()
        compiled = (count, seconds) if pkg.__name__ == "oqupy_jax" else None
        rows.append((item, pkg.__name__, result, compiled))
        print(f"  {item:14s} {pkg.__name__:12s} {result} compiles {compiled}", file=sys.stderr, flush=True)
        if args.table:
            with open(args.table, "w") as handle:
                handle.write(_table(rows, pinning, time.perf_counter() - started, skipped) + "\n\n")
                handle.write(goals(rows, args.quick) + "\n")
        return returned

    items = set(args.items.split(","))
    for n in sizes["svds"] if "svd" in items else ():
        for pkg in packages:
            if pkg.__name__ == "oqupy_jax" or n <= sizes["numpy_max_svd"]:
                run(f"svd {n}", pkg, svd_time, n)
    tensors = {}
    for pkg in packages if "pt" in items else ():
        returned = run("pt_162", pkg, pt_build, **sizes["pt"])
        if returned is not None:
            tensors[pkg.__name__] = returned[1]
    if "batch" in items and "pt" not in items:
        tensors = _shared_process_tensor(packages, sizes["pt"])
    for size in sizes["batches"] if "batch" in items else ():
        for pkg in packages:
            if pkg.__name__ in tensors and (pkg.__name__ == "oqupy_jax" or size <= sizes["numpy_max_batch"]):
                run(f"batch {size}", pkg, batch, tensors[pkg.__name__], size)
    # oqupy_jax first: oqupy_numpy's figure can also be taken on another machine
    for pkg in reversed(packages) if "large" in items else ():
        run("pt_large", pkg, pt_build, runs=1, **sizes["pt_large"])
    jax_package = [pkg for pkg in packages if pkg.__name__ == "oqupy_jax"]
    for pkg in jax_package if "hard" in items else ():
        run("pt_162_full", pkg, hard_build, sizes["hard_end_time"])
    for n in sizes["factors"] if "factor" in items else ():
        for pkg in packages:
            if pkg.__name__ == "oqupy_jax" or n <= sizes["numpy_max_svd"]:
                for share in (3, 8):
                    run(f"sketch {n}/{share}", pkg, sketch_time, n, share)
                run(f"svd x8 {n}", pkg, batched_svd_time, n)
    print()
    print(_table(rows, pinning, time.perf_counter() - started, skipped))
    print()
    print(goals(rows, args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
