"""Process-tensor sweeps on Dask (``pt_tempo_sweep``): names, bitwise equality with sequential builds, atomic
files, resumption, a worker killed mid-sweep, and failures reported.

The cluster tests need ``dask.distributed`` (the ``dask`` extra) and are skipped where it is not installed.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from tests.conftest import to_numpy

OHMIC = dict(zeta=1, cutoff=5.0, cutoff_type="exponential")
WORKER_FLAG = "OQUPY_TEST_DASK_WORKER"
# Dask workers run BLAS on one thread; so does the sequential reference build, so that bits can agree
ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def bath(oq, alpha=0.2, temperature=0.5):
    sd = oq.PowerLawSD(alpha=alpha, temperature=temperature, **OHMIC)
    return oq.Bath(0.5 * oq.operators.sigma("z"), sd)


REFERENCE_SCRIPT = """
import json, sys
import numpy as np
oq = __import__(sys.argv[1])
spec = json.loads(sys.argv[2])
parameters = oq.TempoParameters(**spec["parameters"])
tensors = {}
for k, (alpha, temperature) in enumerate(spec["baths"]):
    sd = oq.PowerLawSD(alpha=alpha, temperature=temperature, zeta=1, cutoff=5.0, cutoff_type="exponential")
    bath = oq.Bath(0.5 * oq.operators.sigma("z"), sd)
    if spec["end_time"] is None:
        pt = oq.tti_pt_tempo_compute(bath, 0.0, parameters, progress_type="silent")
        steps = [3]
    else:
        pt = oq.pt_tempo_compute(bath, 0.0, spec["end_time"], parameters, progress_type="silent")
        steps = range(len(pt))
    for step in steps:
        tensors[f"{k}_{step}"] = np.asarray(pt.get_mpo_tensor(step))
np.savez(spec["output"], **tensors)
"""


def sequential_reference(oq, baths, end_time, parameters, output):
    """MPO tensors of ``pt_tempo_compute`` for each (alpha, temperature), one after another in a fresh
    interpreter with one BLAS thread (as in a Dask worker): ``{(bath index, step): tensor}``."""
    spec = dict(baths=baths, end_time=end_time, parameters=parameters, output=str(output))
    env = {**os.environ, **ONE_THREAD}
    subprocess.run(
        [sys.executable, "-c", REFERENCE_SCRIPT, oq.__name__, json.dumps(spec)],
        env=env,
        check=True,
        timeout=600,
    )
    with np.load(output) as data:
        return {tuple(int(i) for i in key.split("_")): data[key] for key in data.files}


def numpy_only(oq):
    """The sweep machinery is host code, the same in both packages; the tests that build many process tensors
    in fresh worker processes run for oqupy_numpy only (each oqupy_jax worker would compile its kernels anew, some
    two minutes per test on two cores).  oqupy_jax runs the file-name, input and uniform-sweep tests."""
    if oq.__name__ != "oqupy_numpy":
        pytest.skip("sweep machinery is host code; exercised with oqupy_numpy (see numpy_only)")


def mpo_tensors(oq, path):
    pt = oq.import_process_tensor(str(path), "simple")
    return [to_numpy(pt.get_mpo_tensor(step)) for step in range(len(pt))]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env={WORKER_FLAG: "1", **ONE_THREAD},
    )
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


def test_file_names_follow_the_physics(oq):
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-5, dkmax=5)
    name = oq.sweeps.sweep_file_name(bath(oq), 0.0, 1.0, parameters)
    assert name.startswith("pt-") and name.endswith(".hdf5") and len(name) == len("pt-.hdf5") + 40
    assert oq.sweeps.sweep_file_name(bath(oq), 0.0, 1.0, parameters) == name
    # the same J(w) written as a CustomSD shares the file: the name hashes the influence, not the class
    custom = oq.CustomSD(lambda w: 2 * 0.2 * w, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    custom_bath = oq.Bath(0.5 * oq.operators.sigma("z"), custom)
    assert oq.sweeps.sweep_file_name(custom_bath, 0.0, 1.0, parameters) == name
    others = {
        oq.sweeps.sweep_file_name(bath(oq, temperature=0.6), 0.0, 1.0, parameters),
        oq.sweeps.sweep_file_name(bath(oq, alpha=0.21), 0.0, 1.0, parameters),
        oq.sweeps.sweep_file_name(bath(oq), 0.0, 1.1, parameters),
        oq.sweeps.sweep_file_name(bath(oq), 0.0, 1.0, oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=5)),
        oq.sweeps.sweep_file_name(bath(oq), 0.0, 1.0, parameters, unique=True),
        oq.sweeps.sweep_file_name(bath(oq), 0.0, None, parameters),
        oq.sweeps.sweep_file_name(
            oq.Bath(0.5 * oq.operators.sigma("x"), bath(oq).correlations), 0.0, 1.0, parameters
        ),
    }
    assert name not in others and len(others) == 7


def test_sweep_bad_input(oq, tmp_path):
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-5, dkmax=5)
    with pytest.raises(AssertionError):
        oq.pt_tempo_sweep([bath(oq), "bath"], 0.0, 1.0, parameters, str(tmp_path))
    with pytest.raises(AssertionError):
        oq.pt_tempo_sweep([bath(oq)], 0.0, 1.0, {"dt": 0.1}, str(tmp_path))
    with pytest.raises(ValueError):
        oq.pt_tempo_sweep([bath(oq)], 1.0, 0.5, parameters, str(tmp_path))
    with pytest.raises(ValueError):
        oq.pt_tempo_sweep(
            [bath(oq)], 0.0, None, oq.TempoParameters(dt=0.1, epsrel=1e-5), str(tmp_path), uniform=True
        )
    with pytest.raises(TypeError):
        oq.pt_tempo_sweep([bath(oq)], "zero", 1.0, parameters, str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_local_client_pins_blas_and_keeps_glibc_trimming(oq):
    numpy_only(oq)
    pytest.importorskip("dask.distributed")
    with pytest.raises(ValueError):
        oq.sweeps.local_client(0)
    client = oq.sweeps.local_client(1)
    try:
        names = ("MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
        seen = client.run(lambda: {name: os.environ.get(name) for name in names})
    finally:
        client.close()
        client.cluster.close()
    assert len(seen) == 1
    (worker,) = seen.values()
    # Dask's nannies would set 65536 here, which made every build 1.4 times slower
    assert worker["MALLOC_TRIM_THRESHOLD_"] == os.environ.get("MALLOC_TRIM_THRESHOLD_")
    assert [worker[name] for name in names[1:]] == ["1", "1", "1"]


def test_sweep_equals_sequential_builds_and_resumes(oq, client, tmp_path):
    numpy_only(oq)
    settings = dict(dt=0.1, epsrel=1e-6, dkmax=6)
    parameters = oq.TempoParameters(**settings)
    specs = [(alpha, temperature) for alpha in (0.1, 0.2, 0.3) for temperature in (0.5, 1.0)]
    baths = [bath(oq, alpha, temperature) for alpha, temperature in specs]
    paths = oq.pt_tempo_sweep(baths, 0.0, 1.0, parameters, str(tmp_path / "sweep"), client=client)
    assert len(paths) == 6 and len(set(paths)) == 6
    assert sorted(os.listdir(tmp_path / "sweep")) == sorted(os.path.basename(p) for p in paths)
    expected = sequential_reference(oq, specs, 1.0, settings, tmp_path / "reference.npz")
    for index, path in enumerate(paths):
        stored = mpo_tensors(oq, path)
        assert len(stored) == 10
        for step, tensor in enumerate(stored):
            assert np.array_equal(tensor, expected[index, step])  # bitwise
    # a re-run builds nothing: no task reaches the cluster and no file is touched
    stamps = [os.stat(p).st_mtime_ns for p in paths]
    assert oq.pt_tempo_sweep(baths, 0.0, 1.0, parameters, str(tmp_path / "sweep"), client=client) == paths
    assert [os.stat(p).st_mtime_ns for p in paths] == stamps
    # a lost file is rebuilt, the others are kept
    os.remove(paths[3])
    assert oq.pt_tempo_sweep(baths, 0.0, 1.0, parameters, str(tmp_path / "sweep"), client=client) == paths
    assert [os.stat(p).st_mtime_ns for k, p in enumerate(paths) if k != 3] == stamps[:3] + stamps[4:]
    assert os.path.exists(paths[3])


def test_uniform_sweep(oq, client, tmp_path):
    settings = dict(dt=0.1, epsrel=1e-6, dkmax=6)
    parameters = oq.TempoParameters(**settings)
    specs = [(0.1, 0.5), (0.2, 0.5)]
    baths = [bath(oq, alpha, temperature) for alpha, temperature in specs]
    paths = oq.pt_tempo_sweep(
        baths, 0.0, None, parameters, str(tmp_path / "sweep"), client=client, uniform=True
    )
    expected = sequential_reference(oq, specs, None, settings, tmp_path / "reference.npz")
    for index, path in enumerate(paths):
        stored = oq.import_process_tensor(path)
        assert isinstance(stored, oq.TtiProcessTensor)
        assert np.array_equal(to_numpy(stored.get_mpo_tensor(3)), expected[index, 3])


def test_killed_worker_loses_nothing(oq, client, tmp_path):
    numpy_only(oq)
    """A worker process killed while it builds: the sweep completes, every file is whole, a re-run builds nothing."""
    settings = dict(dt=0.1, epsrel=1e-6, dkmax=8)
    parameters = oq.TempoParameters(**settings)
    specs = [(alpha, 0.5) for alpha in (0.15, 0.2, 0.25, 0.3)]
    baths = [bath(oq, alpha, temperature) for alpha, temperature in specs]
    killed = []

    def kill_a_busy_worker():
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and not killed:
            busy = [address for address, keys in client.processing().items() if keys]
            if busy:
                pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.02)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    paths = oq.pt_tempo_sweep(baths, 0.0, 1.5, parameters, str(tmp_path / "sweep"), client=client)
    killer.join()
    assert killed, "no worker was busy to be killed"
    finals = sorted(name for name in os.listdir(tmp_path / "sweep") if name.endswith(".hdf5"))
    assert finals == sorted(os.path.basename(p) for p in paths)
    expected = sequential_reference(oq, specs, 1.5, settings, tmp_path / "reference.npz")
    for index, path in enumerate(paths):
        stored = mpo_tensors(oq, path)
        assert all(np.array_equal(tensor, expected[index, step]) for step, tensor in enumerate(stored))
    stamps = [os.stat(p).st_mtime_ns for p in paths]
    oq.pt_tempo_sweep(baths, 0.0, 1.5, parameters, str(tmp_path / "sweep"), client=client)
    assert [os.stat(p).st_mtime_ns for p in paths] == stamps


def test_failed_build_is_reported_after_the_others(oq, client, tmp_path):
    numpy_only(oq)
    """A bath whose build raises (a correlation function that fails on the workers) is retried, then reported."""
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=4)
    good = bath(oq)
    bad_sd = oq.CustomSD(_fails_in_a_dask_worker, cutoff=5.0, temperature=0.5)
    bad = oq.Bath(0.5 * oq.operators.sigma("z"), bad_sd)
    with pytest.raises(oq.sweeps.SweepError) as info:
        oq.pt_tempo_sweep([good, bad], 0.0, 0.5, parameters, str(tmp_path), client=client, retries=1)
    assert list(info.value.failures) == [1]
    assert "bath 1" in str(info.value)
    names = os.listdir(tmp_path)
    assert names == [oq.sweeps.sweep_file_name(good, 0.0, 0.5, parameters)]


def _fails_in_a_dask_worker(w):
    """J(w) = 0.5 w in the test process (so the file name can be computed); raises inside a Dask worker."""
    if os.environ.get(WORKER_FLAG):
        raise RuntimeError("spectral density unavailable on this worker")
    return 0.5 * w
