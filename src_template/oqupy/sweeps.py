"""Process-tensor sweeps on Dask: one process tensor per bath, built as tasks, each in its own HDF5 file.

A sweep over bath parameters (temperature, coupling, cutoff, ...) is embarrassingly parallel: every process
tensor is independent.  :func:`pt_tempo_sweep` submits one task per bath to a Dask cluster (a local one by
default, or any ``dask.distributed.Client``, e.g. one of ``dask-jobqueue`` on SLURM or PBS) and returns the
file names.

- **Names from the inputs.** Each file is named from a hash of what determines the process tensor: the
  coupling operator, the influence coefficients of the correlations on the time grid (the 2-D integrals of
  ``C(t)``, so two correlation objects that describe the same bath share a file, whatever their class), the
  times, the parameters, ``unique``, ``uniform`` and the package.
- **Atomic files.** A task writes under a temporary name in the same directory and renames the file only when
  it is complete, so a file with a final name is always whole; a worker killed mid-build leaves at most a
  ``*.partial`` file, which is never read.
- **Resumable.** A file whose name exists is not built again, so re-running an interrupted sweep builds only
  what is missing.
- **Nothing dropped silently.** Dask reruns the tasks of a worker that died; a task that raises is retried
  ``retries`` times and then reported: :class:`SweepError` lists every bath that failed, after all others are
  written.

Dask is an optional dependency (``pip install oqupy-numpy[dask]``), imported only when a sweep runs.
Everything here runs on the host in every generated package; the builds use the package's own PT-TEMPO.
"""

import copy
import hashlib
import os
import uuid
from typing import Any, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from oqupy import config
from oqupy.bath import Bath
from oqupy.process_tensor import SimpleProcessTensor, TtiProcessTensor
from oqupy.pt_tempo import pt_tempo_compute
from oqupy.tempo import TempoParameters, num_steps_between
from oqupy.tti_pt_tempo import tti_pt_tempo_compute
from oqupy.util import check_convert

__runs_on__ = "host"

__all__ = ["SweepError", "SweepTask", "build_one", "local_client", "pt_tempo_sweep", "sweep_file_name"]

_PACKAGE = __name__.split(".")[0]
"""The generated package (``oqupy_numpy`` or ``oqupy_jax``): part of every file name's hash."""

_SIGNIFICANT_DIGITS = 12
"""Influence coefficients enter the hash rounded to this many significant digits (robust to the last bits of a
quadrature on another machine)."""


class SweepTask(NamedTuple):
    """Everything one build needs; sent to a worker."""

    bath: Bath
    start_time: float
    end_time: Optional[float]  # None for a uniform process tensor
    parameters: TempoParameters
    unique: bool
    path: str


class SweepError(RuntimeError):
    """Some builds of a sweep failed after their retries; ``failures`` maps each bath's index to its error."""

    def __init__(self, failures: dict) -> None:
        self.failures = dict(failures)
        lines = [
            f"  bath {index}: {type(error).__name__}: {error}" for index, error in sorted(failures.items())
        ]
        super().__init__(f"{len(failures)} process-tensor build(s) failed:\n" + "\n".join(lines))


def _rounded(values: np.ndarray) -> np.ndarray:
    """Real and imaginary parts of ``values``, rounded to ``_SIGNIFICANT_DIGITS`` significant digits."""
    parts = np.stack([np.real(values), np.imag(values)]).astype(float)
    scale = np.where(
        parts == 0.0, 1.0, 10.0 ** np.floor(np.log10(np.abs(np.where(parts == 0.0, 1.0, parts))))
    )
    digits = 10.0 ** (_SIGNIFICANT_DIGITS - 1)
    return np.round(parts / scale * digits) / digits * scale


def sweep_file_name(
    bath: Bath,
    start_time: float,
    end_time: Optional[float],
    parameters: TempoParameters,
    unique: bool = False,
) -> str:
    """The file name (no directory) under which :func:`pt_tempo_sweep` stores the process tensor of ``bath``.

    ``end_time=None`` names a uniform process tensor.  The name is ``pt-<40 hex digits>.hdf5``, the SHA-1 of
    the inputs listed in the module docstring.
    """
    dt = parameters.dt
    if end_time is None:
        horizon = parameters.dkmax
        if horizon is None:
            raise ValueError("A uniform sweep needs parameters with a finite memory (dkmax or tcut).")
    else:
        steps = num_steps_between(start_time, end_time, dt)
        horizon = steps if parameters.dkmax is None else min(parameters.dkmax, steps)
    # a copy: the caller's correlations keep their cache as it was, so that a later build in this process
    # computes the same bits as a build in a fresh worker (the eta cache fills in a different order otherwise)
    correlations = copy.deepcopy(bath.correlations)
    eta = correlations.influence_coefficients(dt, max(int(horizon), 0))
    digest = hashlib.sha1()
    fields = (
        _PACKAGE,
        "uniform" if end_time is None else f"finite {start_time!r} {end_time!r}",
        f"dt {dt!r} epsrel {parameters.epsrel!r} dkmax {parameters.dkmax!r}",
        f"add_correlation_time {parameters.add_correlation_time!r} unique {bool(unique)}",
    )
    for field in fields:
        digest.update(field.encode() + b"\0")
    digest.update(np.ascontiguousarray(bath.coupling_operator, dtype=config.NpDtype).tobytes())
    digest.update(np.ascontiguousarray(bath.unitary_transform, dtype=config.NpDtype).tobytes())
    digest.update(_rounded(eta).tobytes())
    if parameters.add_correlation_time is not None and parameters.dkmax is not None:
        tail = correlations.tail_coefficient(dt, parameters.dkmax, parameters.add_correlation_time)
        digest.update(_rounded(np.asarray([tail])).tobytes())
    return f"pt-{digest.hexdigest()}.hdf5"


def build_one(task: SweepTask) -> str:
    """Build one process tensor and write it to ``task.path`` atomically; returns the path.

    The module-level function that a Dask worker runs.  A file that already exists is left alone.
    """
    if os.path.exists(task.path):
        return task.path
    partial = f"{task.path}.{os.getpid()}-{uuid.uuid4().hex[:8]}.partial"
    pt: Union[SimpleProcessTensor, TtiProcessTensor]
    try:
        if task.end_time is None:
            pt = tti_pt_tempo_compute(
                task.bath, task.start_time, task.parameters, unique=task.unique, progress_type="silent"
            )
        else:
            finite = pt_tempo_compute(
                task.bath,
                task.start_time,
                task.end_time,
                task.parameters,
                unique=task.unique,
                progress_type="silent",
            )
            assert isinstance(finite, SimpleProcessTensor)
            pt = finite
        pt.export(partial)
        os.replace(partial, task.path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return task.path


def local_client(workers: Optional[int] = None) -> Any:
    """A ``dask.distributed.Client`` of a new ``LocalCluster`` set up for process-tensor builds.

    ``workers`` single-threaded worker processes (default: one per core), with OpenBLAS, OpenMP and MKL
    pinned to one thread each.  Dask's nannies normally start workers with ``MALLOC_TRIM_THRESHOLD_=65536``
    (glibc returns freed memory to the system at once); a PT-TEMPO build allocates and frees large arrays at
    every step, and under that setting each build ran 1.4-1.5 times slower (measured: 17.3 s against 12.2 s for
    one canonical build), so these workers keep glibc's default.  Close the client and its cluster when done
    (``client.close(); client.cluster.close()``).
    """
    from dask import config as dask_config
    from dask.distributed import Client, LocalCluster

    if workers is None:
        count = os.cpu_count() or 1
    else:
        count = check_convert(workers, int, "workers")
    if count < 1:
        raise ValueError("Argument 'workers' must be at least 1.")
    threads = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    with dask_config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        cluster = LocalCluster(
            n_workers=count,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env=threads,
        )
    return Client(cluster)


def pt_tempo_sweep(
    baths: Sequence[Bath],
    start_time: float,
    end_time: Optional[float],
    parameters: TempoParameters,
    directory: str,
    client: Any = None,
    uniform: bool = False,
    unique: bool = False,
    retries: int = 2,
) -> List[str]:
    """Build one process tensor per bath as Dask tasks; return their HDF5 files, in the order of ``baths``.

    Parameters
    ----------
    baths: list(Bath)
        The baths of the sweep (any number; equal baths share one file and one build).
    start_time: float
        Start time of every process tensor.
    end_time: float
        End time of the finite process tensors (PT-TEMPO); ignored (may be None) when ``uniform``.
    parameters: TempoParameters
        Time step, truncation and memory of every build (a uniform build needs a finite memory).
    directory: str
        Folder of the files (created if missing).  Files present from an earlier sweep are reused.
    client: dask.distributed.Client
        Where the tasks run (default: :func:`local_client`, one single-threaded worker process per core,
        closed at the end).
    uniform: bool
        Uniform (time-translation-invariant) process tensors (``tti_pt_tempo_compute``), not finite ones.
    unique: bool
        Passed on to the builds (degeneracy checking).
    retries: int
        How often a task that raised is retried before it counts as failed (default 2).

    Returns
    -------
    paths: list(str)
        The file of each bath's process tensor; read them with ``import_process_tensor``.

    Raises
    ------
    SweepError
        When some builds failed after their retries; every other file is written first.
    """
    baths = list(baths)
    for bath in baths:
        assert isinstance(bath, Bath), "Every entry of 'baths' must be a Bath."
    assert isinstance(parameters, TempoParameters), "Argument 'parameters' must be a TempoParameters."
    start_time = check_convert(start_time, float, "start_time")
    if uniform:
        end_time = None
    else:
        end_time = check_convert(end_time, float, "end_time")
        if end_time <= start_time:
            raise ValueError("Argument 'end_time' must be later than 'start_time'.")
    retries = check_convert(retries, int, "retries")
    if retries < 0:
        raise ValueError("Argument 'retries' must be non-negative.")
    os.makedirs(directory, exist_ok=True)
    paths = [
        os.path.join(directory, sweep_file_name(bath, start_time, end_time, parameters, unique))
        for bath in baths
    ]
    todo = {}
    for index, (bath, path) in enumerate(zip(baths, paths, strict=True)):
        if not os.path.exists(path) and path not in todo:
            todo[path] = (index, SweepTask(bath, start_time, end_time, parameters, bool(unique), path))
    if not todo:
        return paths
    own_client = client is None
    if own_client:
        client = local_client()
    try:
        failures = _run(client, list(todo.values()), retries)
    finally:
        if own_client:
            cluster = client.cluster
            client.close()
            cluster.close()
    if failures:
        raise SweepError(failures)
    return paths


def _run(client: Any, tasks: list, retries: int) -> dict:
    """Submit the tasks, wait for all of them; ``{bath index: exception}`` of those that failed."""
    from dask.distributed import wait

    futures = {
        client.submit(
            build_one, task, key=f"oqupy-pt-{os.path.basename(task.path)}", retries=retries, pure=False
        ): index
        for index, task in tasks
    }
    wait(list(futures))
    failures = {}
    for future, index in futures.items():
        if future.status != "finished":
            failures[index] = future.exception()
    return failures
