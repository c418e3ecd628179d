"""Process-tensor files interchangeable with OQuPy 0.5, in both directions.

Without ``OQUPY05_PYTHON``: a file with OQuPy 0.5's layout, built here with h5py (what OQuPy's
``FileProcessTensor`` writes: ``oqupy_version`` attribute, no ``format``, ``writing`` left true, ``[nan]`` for no
``dt`` / transform, ``initial_tensor_*`` datasets with one entry), is accepted and gives the dynamics of the same
tensors in memory, while a file of ours left flagged as being written stays refused; and our files have the
layout OQuPy reads.  With ``OQUPY05_PYTHON`` naming an OQuPy 0.5 interpreter, OQuPy itself writes a PT-TEMPO
file that we read, and reads a file we wrote, and the dynamics computed by either library agree to 1e-10.
"""

import json
import os
import subprocess

import h5py
import numpy as np
import pytest

OQUPY = os.environ.get("OQUPY05_PYTHON")
needs_oqupy = pytest.mark.skipif(not OQUPY, reason="set OQUPY05_PYTHON to an OQuPy 0.5 interpreter")

DT, STEPS = 0.1, 5


def oqupy_environment():
    """The environment for OQuPy's interpreter: without PYTHONPATH, which may point at our ``oqupy`` template."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def rng_complex(rng, *shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


def random_tensors(seed=3):
    """An initial tensor of None, MPO tensors with bonds [1, 3, 2, 1] (rank 3, 4, 3), no caps."""
    rng = np.random.default_rng(seed)
    return [
        0.3 * rng_complex(rng, 1, 3, 4),
        0.3 * rng_complex(rng, 3, 2, 4, 4),
        0.3 * rng_complex(rng, 2, 1, 4),
    ]


def write_oqupy_layout(path, tensors, dt=DT, version="0.5.0"):
    """A file as OQuPy 0.5 writes it (its ``writing`` flag is never cleared)."""
    nan = [np.nan]
    data_type, shape_type = h5py.vlen_dtype(np.dtype("complex128")), h5py.vlen_dtype(np.dtype("i"))
    with h5py.File(path, "w") as f:
        f.attrs["oqupy_version"] = version
        f.attrs["name"] = "from OQuPy"
        f.attrs["description"] = "__no_description__"
        f.attrs["writing"] = True
        f.create_dataset("hs_dim", (1,), dtype="i", data=[2])
        f.create_dataset("dt", (1,), dtype="float64", data=nan if dt is None else [dt])
        f.create_dataset("transform_in", (1,), dtype="complex128", data=nan)
        f.create_dataset("transform_out", (1,), dtype="complex128", data=nan)
        initial_data = f.create_dataset("initial_tensor_data", (1,), dtype=data_type)
        initial_shape = f.create_dataset("initial_tensor_shape", (1,), dtype=shape_type)
        initial_data[0], initial_shape[0] = np.array(nan, dtype=complex), [1]
        mpo_data = f.create_dataset("mpo_tensors_data", (len(tensors),), dtype=data_type, maxshape=(None,))
        mpo_shape = f.create_dataset("mpo_tensors_shape", (len(tensors),), dtype=shape_type, maxshape=(None,))
        for step, tensor in enumerate(tensors):
            mpo_data[step], mpo_shape[step] = tensor.reshape(-1), tensor.shape
        f.create_dataset("cap_tensors_data", (0,), dtype=data_type, maxshape=(None,))
        f.create_dataset("cap_tensors_shape", (0,), dtype=shape_type, maxshape=(None,))


def states_of(oq, pt):
    dynamics = oq.compute_dynamics(
        oq.System(0.5 * oq.operators.sigma("x")),
        oq.operators.spin_dm("up"),
        process_tensor=pt,
        progress_type="silent",
    )
    return np.asarray(dynamics.times), np.asarray(dynamics.states)


@pytest.mark.parametrize("kind", ["file", "simple"])
def test_file_with_oqupy_layout_is_accepted(oq, tmp_path, kind):
    tensors = random_tensors()
    path = tmp_path / "oqupy.processTensor"
    write_oqupy_layout(path, tensors)
    reference = oq.SimpleProcessTensor(2, DT)
    for step, tensor in enumerate(tensors):
        reference.set_mpo_tensor(step, tensor)
    pt = oq.import_process_tensor(str(path), kind)
    try:
        assert len(pt) == 3 and pt.dt == DT and pt.hilbert_space_dimension == 2 and pt.name == "from OQuPy"
        assert pt.transform_in is None and pt.transform_out is None and pt.get_initial_tensor() is None
        for step, tensor in enumerate(tensors):
            assert np.array_equal(np.asarray(pt.get_raw_mpo_tensor(step)), tensor)
        np.testing.assert_array_equal(pt.get_bond_dimensions(), [1, 3, 2, 1])
        times, states = states_of(oq, pt)
    finally:
        if isinstance(pt, oq.FileProcessTensor):
            pt.close()
    ref_times, ref_states = states_of(oq, reference)
    np.testing.assert_allclose(times, ref_times, rtol=0, atol=1e-14)
    np.testing.assert_allclose(states, ref_states, rtol=0, atol=1e-12)
    with h5py.File(path, "r") as f:  # reading left the file as it was
        assert bool(f.attrs["writing"]) and "format" not in f.attrs


def test_file_with_oqupy_layout_and_no_time_step(oq, tmp_path):
    path = tmp_path / "no_dt.processTensor"
    write_oqupy_layout(path, random_tensors(), dt=None)
    pt = oq.import_process_tensor(str(path), "simple")
    assert pt.dt is None and len(pt) == 3


def test_our_interrupted_file_stays_refused(oq, tmp_path):
    path = tmp_path / "ours.hdf5"
    pt = oq.SimpleProcessTensor(2, DT)
    for step, tensor in enumerate(random_tensors()):
        pt.set_mpo_tensor(step, tensor)
    pt.export(str(path))
    with h5py.File(path, "r+") as f:
        assert "oqupy_version" in f.attrs and "format" in f.attrs
        f.attrs["writing"] = True  # as a writer killed before flushing leaves it
    for kind in ("file", "simple"):
        with pytest.raises(oq.process_tensor.ProcessTensorFileError, match="interrupted"):
            oq.import_process_tensor(str(path), kind)


def test_our_files_have_the_oqupy_layout(oq, tmp_path):
    """What OQuPy 0.5's reader needs: its attribute and dataset names, ``[nan]`` for none, one initial entry."""
    path = tmp_path / "ours.hdf5"
    with oq.FileProcessTensor("write", str(path), 2, None, name="mine") as pt:
        for step, tensor in enumerate(random_tensors()):
            pt.set_mpo_tensor(step, tensor)
    with h5py.File(path, "r") as f:
        assert f.attrs["oqupy_version"] == "0.5.0" and f.attrs["name"] == "mine" and "description" in f.attrs
        assert not bool(f.attrs["writing"])
        for key in ("dt", "transform_in", "transform_out"):
            assert f[key].shape == (1,) and np.isnan(f[key][0]), key
        assert f["initial_tensor_data"].shape == (1,) and f["initial_tensor_shape"].shape == (1,)
        assert np.isnan(f["initial_tensor_data"][0][0]) and list(f["initial_tensor_shape"][0]) == [1]
        assert "initial_tensors_data" not in f
        assert f["mpo_tensors_data"].shape == f["mpo_tensors_shape"].shape == (3,)
        assert list(f["mpo_tensors_shape"][1]) == [3, 2, 4, 4]


def test_file_of_an_earlier_version_of_ours_is_read(oq, tmp_path):
    """Files written before the switch to OQuPy's layout: ``initial_tensors_*``, ``dt`` 0 and ``[0]`` for none."""
    path = tmp_path / "old.hdf5"
    tensors = random_tensors()
    with oq.FileProcessTensor("write", str(path), 2, DT) as pt:
        for step, tensor in enumerate(tensors):
            pt.set_mpo_tensor(step, tensor)
    with h5py.File(path, "r+") as f:
        del f.attrs["oqupy_version"]
        for suffix in ("data", "shape"):
            f.move(f"initial_tensor_{suffix}", f"initial_tensors_{suffix}")
        for key in ("transform_in", "transform_out"):
            del f[key]
            f.create_dataset(key, data=np.array([0.0]))
    pt = oq.import_process_tensor(str(path), "simple")
    assert pt.dt == DT and pt.transform_in is None and pt.get_initial_tensor() is None
    assert np.array_equal(np.asarray(pt.get_raw_mpo_tensor(1)), tensors[1])


# ------------------------------------------------------------------------------------------------------------
# with OQuPy 0.5 itself

OQUPY_SCRIPT = """
import json, sys
import numpy as np
import oqupy

mode, path = sys.argv[1], sys.argv[2]
system = oqupy.System(0.5 * oqupy.operators.sigma("x"))
if mode == "write":
    sd = oqupy.PowerLawSD(alpha=0.1, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=0.5)
    bath = oqupy.Bath(0.5 * oqupy.operators.sigma("z"), sd)
    parameters = oqupy.TempoParameters(dt=%(dt)r, epsrel=1e-6, dkmax=3)
    pt = oqupy.PtTempo(bath, 0.0, %(end)r, parameters, process_tensor_file=path).get_process_tensor(
        progress_type="silent")
else:
    pt = oqupy.import_process_tensor(path, "file")
dynamics = oqupy.compute_dynamics(system, oqupy.operators.spin_dm("up"), process_tensor=pt, progress_type="silent")
states = np.asarray(dynamics.states)
print(json.dumps({"times": list(map(float, dynamics.times)), "re": states.real.tolist(), "im": states.imag.tolist(),
                  "length": len(pt), "bonds": [int(b) for b in pt.get_bond_dimensions()]}))
pt.close()
""" % {"dt": DT, "end": DT * STEPS}


def run_oqupy(mode, path):
    result = subprocess.run(
        [OQUPY, "-c", OQUPY_SCRIPT, mode, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=oqupy_environment(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    return np.array(out["times"]), np.array(out["re"]) + 1j * np.array(out["im"]), out


@pytest.fixture(scope="module")
def oqupy_file(tmp_path_factory):
    """A PT-TEMPO file written by OQuPy 0.5, and OQuPy's dynamics from it."""
    if not OQUPY:
        pytest.skip("set OQUPY05_PYTHON to an OQuPy 0.5 interpreter")
    path = tmp_path_factory.mktemp("oqupy") / "pt_tempo.processTensor"
    times, states, out = run_oqupy("write", path)
    return path, times, states, out


@needs_oqupy
@pytest.mark.parametrize("kind", ["file", "simple"])
def test_we_read_a_file_written_by_oqupy(oq, oqupy_file, kind):
    path, ref_times, ref_states, out = oqupy_file
    with h5py.File(path, "r") as f:
        assert bool(f.attrs["writing"]) and "oqupy_version" in f.attrs  # OQuPy's flag is never cleared
    pt = oq.import_process_tensor(str(path), kind)
    try:
        assert len(pt) == out["length"] == STEPS
        np.testing.assert_array_equal(pt.get_bond_dimensions(), out["bonds"])
        times, states = states_of(oq, pt)
    finally:
        if isinstance(pt, oq.FileProcessTensor):
            pt.close()
    np.testing.assert_allclose(times, ref_times, rtol=0, atol=1e-12)
    np.testing.assert_allclose(states, ref_states, rtol=0, atol=1e-10)
    assert np.abs(states[-1] - states[0]).max() > 1e-2  # something happened


@needs_oqupy
def test_oqupy_reads_a_file_we_wrote(oq, tmp_path):
    path = tmp_path / "ours.processTensor"
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=0.5)
    bath = oq.Bath(0.5 * oq.operators.sigma("z"), sd)
    parameters = oq.TempoParameters(dt=DT, epsrel=1e-6, dkmax=3)
    pt = oq.PtTempo(bath, 0.0, DT * STEPS, parameters, process_tensor_file=str(path)).get_process_tensor(
        progress_type="silent"
    )
    times, states = states_of(oq, pt)
    bonds = list(pt.get_bond_dimensions())
    pt.close()
    ref_times, ref_states, out = run_oqupy("read", path)
    assert out["length"] == STEPS and out["bonds"] == bonds
    np.testing.assert_allclose(ref_times, times, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ref_states, states, rtol=0, atol=1e-10)
