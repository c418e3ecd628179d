"""Process tensors (Trivial, Simple, File) and their HDF5 files: round trips, interrupted or damaged files,
no data loss, files shared between the two packages, and the tensor conventions of the module docstring."""

import contextlib
import errno
import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

# ------------------------------------------------------------------------------------------------------------
# helpers


def rng_complex(rng, *shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


def make_bath(oq, axis):
    sd = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=4.0, cutoff_type="exponential")
    return oq.Bath(0.5 * oq.operators.sigma(axis), sd, name=f"bath-{axis}")


STEPS = 4  # PT-TEMPO runs: dt = 0.1, dkmax = 3 (the memory cut-off is reached)


def make_pt_tempo(oq, axis, **options):
    options.setdefault("description", f"PT-TEMPO of bath-{axis}")  # passed on to the process tensor, as OQuPy
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=3)
    return oq.PtTempo(make_bath(oq, axis), 0.0, STEPS * 0.1, parameters, **options)


_PT_CACHE = {}


def cached_pt(oq, axis):
    """In-memory PT-TEMPO process tensor (computed once per package and coupling; do not modify it)."""
    key = (oq.__name__, axis)
    if key not in _PT_CACHE:
        _PT_CACHE[key] = make_pt_tempo(oq, axis, name=f"pt-{axis}").get_process_tensor(progress_type="silent")
    return _PT_CACHE[key]


@contextlib.contextmanager
def imported(oq, path, kind=None):
    """``import_process_tensor``, closing the file afterwards when the result is a FileProcessTensor."""
    pt = oq.import_process_tensor(str(path), kind)
    try:
        yield pt
    finally:
        if isinstance(pt, oq.FileProcessTensor):
            pt.close()


def hand_made_pt(oq, transforms=True, seed=1):
    """Three steps, bonds [1, 3, 2, 1]: rank 3, rank 4, rank 3; random complex transforms if ``transforms``."""
    rng = np.random.default_rng(seed)
    t_in = rng_complex(rng, 4, 4) if transforms else None
    t_out = rng_complex(rng, 4, 4) if transforms else None
    pt = oq.SimpleProcessTensor(2, 0.05, t_in, t_out, name="hand made", description="random tensors")
    pt.set_mpo_tensor(0, rng_complex(rng, 1, 3, 4))
    pt.set_mpo_tensor(1, rng_complex(rng, 3, 2, 4, 4))
    pt.set_mpo_tensor(2, rng_complex(rng, 2, 1, 4))
    return pt


def with_caps(pt):
    pt.compute_caps()
    return pt


def assert_same_pt(copy, original, exact=True):
    """Everything a process tensor stores: bitwise (``exact``) or to 1e-12."""

    def same(a, b):
        if a is None or b is None:
            assert a is None and b is None, (a, b)
            return
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype == np.complex128, (
            a.shape,
            b.shape,
            a.dtype,
            b.dtype,
        )
        if exact:
            assert np.array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)

    assert len(copy) == len(original)
    assert copy.hilbert_space_dimension == original.hilbert_space_dimension
    assert copy.dt == original.dt
    assert copy.name == original.name and copy.description == original.description
    same(copy.transform_in, original.transform_in)
    same(copy.transform_out, original.transform_out)
    same(copy.get_initial_tensor(), original.get_initial_tensor())
    for step in range(len(original)):
        same(copy.get_raw_mpo_tensor(step), original.get_raw_mpo_tensor(step))
    for step in range(len(original) + 1):
        same(copy.get_cap_tensor(step), original.get_cap_tensor(step))
    assert np.array_equal(copy.get_bond_dimensions(), original.get_bond_dimensions())


def dynamics_states(oq, pt):
    system = oq.System(0.5 * oq.operators.sigma("x"))
    dynamics = oq.compute_dynamics(
        system, oq.operators.spin_dm("up"), process_tensor=pt, progress_type="silent"
    )
    return np.asarray(dynamics.times), np.asarray(dynamics.states)


@pytest.mark.parametrize("kind", ["simple", "file"])
def test_dynamics_follow_tensors_written_after_use(oq, tmp_path, kind):
    """Dynamics, then one MPO tensor rewritten, then the caps, each followed by dynamics again: the second run sees the new
    tensors (``oqupy_jax`` keeps a process tensor's stacked tensors on the device between calls; every write must
    drop them) and equals a run through a fresh process tensor holding the same tensors."""
    original = with_caps(hand_made_pt(oq, transforms=False))
    if kind == "file":
        pt = oq.FileProcessTensor("write", str(tmp_path / "rewritten.hdf5"), 2, 0.05)
        for step in range(len(original)):
            pt.set_mpo_tensor(step, original.get_raw_mpo_tensor(step))
        for step in range(len(original) + 1):
            pt.set_cap_tensor(step, original.get_cap_tensor(step))
    else:
        pt = original
    _, before = dynamics_states(oq, pt)
    rng = np.random.default_rng(7)
    pt.set_mpo_tensor(1, rng_complex(rng, 3, 2, 4, 4))
    _, after_tensor = dynamics_states(oq, pt)
    caps = (
        pt.get_cap_tensors()
    )  # computed from the new tensors (the stored ones were dropped): write them all,
    for step, cap in enumerate(caps):  # one of them doubled
        pt.set_cap_tensor(step, 2.0 * cap if step == 1 else cap)
    _, after_cap = dynamics_states(oq, pt)
    fresh = oq.SimpleProcessTensor(2, 0.05)
    for step in range(len(pt)):
        fresh.set_mpo_tensor(step, pt.get_raw_mpo_tensor(step))
    for step in range(len(pt) + 1):
        fresh.set_cap_tensor(step, pt.get_cap_tensor(step))
    _, expected = dynamics_states(oq, fresh)
    if kind == "file":
        pt.close()
    assert np.max(np.abs(after_tensor - before)) > 1e-3
    assert np.max(np.abs(after_cap - after_tensor)) > 1e-3
    np.testing.assert_allclose(after_cap, expected, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------------------------
# 1. round trips


@pytest.mark.parametrize("kind", ["file", "simple", None])
@pytest.mark.parametrize("transforms", [True, False], ids=["transforms", "no-transforms"])
def test_export_import_round_trip_of_hand_made_pt_is_bitwise(oq, tmp_path, kind, transforms):
    pt = hand_made_pt(oq, transforms)
    pt.set_initial_tensor(np.arange(6.0).reshape(2, 3) + 0.5j)
    pt.compute_caps()
    path = tmp_path / "hand.hdf5"
    pt.export(str(path))
    with imported(oq, path, kind) as copy:
        expected = oq.SimpleProcessTensor if kind == "simple" else oq.FileProcessTensor
        assert type(copy) is expected
        assert_same_pt(copy, pt)
        assert copy.dt == 0.05 and copy.name == "hand made" and copy.description == "random tensors"
        assert (copy.transform_in is None) is (not transforms)
        assert np.array_equal(copy.get_bond_dimensions(), [1, 3, 2, 1])


def test_export_without_computed_caps_writes_the_caps(oq, tmp_path):
    pt = hand_made_pt(oq)
    assert all(pt.get_cap_tensor(step) is None for step in range(4))
    pt.export(str(tmp_path / "caps.hdf5"))
    reference = hand_made_pt(oq)
    reference.compute_caps()
    with imported(oq, tmp_path / "caps.hdf5") as copy:
        for step in range(4):
            assert np.array_equal(copy.get_cap_tensor(step), reference.get_cap_tensor(step))
        assert np.array_equal(copy.get_cap_tensor(3), [1.0])


def test_round_trip_keeps_missing_tensors_no_time_step_and_unicode_text(oq, tmp_path):
    pt = oq.SimpleProcessTensor(2, None, name="ρ bath ✓", description="δ\nsecond line")
    pt.set_mpo_tensor(2, np.ones((1, 1, 4)))  # steps 0 and 1 stay empty
    pt.export(str(tmp_path / "sparse.hdf5"))
    with imported(oq, tmp_path / "sparse.hdf5", "simple") as copy:
        assert len(copy) == 3 and copy.dt is None
        assert copy.get_raw_mpo_tensor(0) is None and copy.get_raw_mpo_tensor(1) is None
        assert np.array_equal(copy.get_raw_mpo_tensor(2), np.ones((1, 1, 4)))
        assert copy.get_initial_tensor() is None
        assert copy.name == "ρ bath ✓" and copy.description == "δ\nsecond line"


@pytest.mark.parametrize("kind", ["file", "simple"])
@pytest.mark.parametrize("axis", ["x", "z"])
def test_pt_tempo_result_round_trip(oq, tmp_path, kind, axis):
    pt = cached_pt(oq, axis)
    # a non-diagonal coupling has a basis change, a diagonal one none
    if axis == "x":
        assert pt.transform_in.shape == (4, 4) and pt.transform_out.shape == (4, 4)
        assert not np.allclose(pt.transform_in, np.identity(4))
    else:
        assert pt.transform_in is None and pt.transform_out is None
    assert len(pt) == STEPS and pt.dt == 0.1 and pt.name == f"pt-{axis}"
    path = tmp_path / "pt.hdf5"
    pt.export(str(path))
    with imported(oq, path, kind) as copy:
        assert_same_pt(copy, pt)
        assert copy.description == f"PT-TEMPO of bath-{axis}"  # the PtTempo's, as in OQuPy


@pytest.mark.parametrize("axis", ["x", "z"])
def test_pt_tempo_writes_its_file_equal_to_the_in_memory_result(oq, tmp_path, axis):
    path = tmp_path / "pt_tempo.hdf5"
    written = make_pt_tempo(oq, axis, process_tensor_file=str(path), name=f"pt-{axis}")
    pt_file = written.get_process_tensor(progress_type="silent")
    assert isinstance(pt_file, oq.FileProcessTensor) and pt_file.filename == str(path)
    pt_file.close()
    with imported(oq, path) as copy:
        assert_same_pt(copy, cached_pt(oq, axis))
    # the process tensor from the file drives the same dynamics
    with imported(oq, path, "simple") as copy:
        times, states = dynamics_states(oq, copy)
    ref_times, ref_states = dynamics_states(oq, cached_pt(oq, axis))
    assert np.array_equal(times, ref_times) and states.shape == (STEPS + 1, 2, 2)
    np.testing.assert_allclose(states, ref_states, rtol=0, atol=1e-14)


# ------------------------------------------------------------------------------------------------------------
# 2. interrupted writers and damaged files

WRITER = r"""
import os, signal, sys
import numpy as np
oq = __import__(sys.argv[1])
death, folder = sys.argv[2], sys.argv[3]
files = {}
for case in ("unflushed", "written-after-flush", "flushed"):
    pt = oq.FileProcessTensor("write", os.path.join(folder, case + ".hdf5"), 2, 0.1, name=case)
    pt.set_mpo_tensor(0, np.full((1, 3, 4), 1.0 + 2.0j))
    pt.set_mpo_tensor(1, np.full((3, 1, 4), 3.0))
    files[case] = pt
files["written-after-flush"].flush()
files["written-after-flush"].set_cap_tensor(0, np.ones(1))  # marks the file incomplete again
files["flushed"].flush()  # nothing pending: the file is complete
print("written", flush=True)
if death == "exit":
    os._exit(0)
os.kill(os.getpid(), signal.SIGKILL)
"""

DEATHS = {"exit": 0, "kill": -9}  # how the writer ends (never closing its files): expected return code


def run_writers(oq, tmp_path):
    """Run WRITER once per way of dying, in parallel; returns {death: folder with the files left behind}."""
    package_root = str(Path(oq.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    processes, folders = {}, {}
    for death in DEATHS:
        folders[death] = tmp_path / death
        folders[death].mkdir()
        processes[death] = subprocess.Popen(
            [sys.executable, "-c", WRITER, oq.__name__, death, str(folders[death])],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    for death, process in processes.items():
        try:
            stdout, stderr = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        assert process.returncode == DEATHS[death], (death, process.returncode, stderr[-2000:])
        assert stdout == "written\n", (death, stdout, stderr[-2000:])
    return folders


def test_interrupted_writer_leaves_a_file_that_is_refused(oq, tmp_path):
    error = oq.process_tensor.ProcessTensorFileError
    assert issubclass(error, OSError)
    for death, folder in run_writers(oq, tmp_path).items():
        for case in ("unflushed", "written-after-flush"):
            path = folder / f"{case}.hdf5"
            assert path.exists(), (death, case)
            for kind in ("file", "simple"):
                with pytest.raises(error, match="interrupted") as info:
                    oq.import_process_tensor(str(path), kind)
                assert str(path) in str(info.value), (death, case)
            with pytest.raises(error, match="interrupted"):
                oq.FileProcessTensor("read", str(path))
        # control: the file flushed with nothing pending when the writer died is complete
        with imported(oq, folder / "flushed.hdf5", "simple") as pt:
            assert len(pt) == 2 and pt.name == "flushed" and pt.dt == 0.1, death
            assert np.array_equal(pt.get_raw_mpo_tensor(0), np.full((1, 3, 4), 1.0 + 2.0j))
            assert np.array_equal(pt.get_raw_mpo_tensor(1), np.full((3, 1, 4), 3.0 + 0.0j))


def test_truncated_and_random_files_are_refused(oq, tmp_path):
    error = oq.process_tensor.ProcessTensorFileError
    valid = tmp_path / "valid.hdf5"
    hand_made_pt(oq).export(str(valid))
    content = valid.read_bytes()
    truncated = tmp_path / "truncated.hdf5"
    truncated.write_bytes(content[: len(content) // 2])
    noise = tmp_path / "noise.hdf5"
    noise.write_bytes(np.random.default_rng(7).bytes(4096))
    empty = tmp_path / "empty.hdf5"
    empty.write_bytes(b"")
    for path in (truncated, noise, empty):
        for kind in ("file", "simple"):
            with pytest.raises(error, match="not a readable HDF5 file"):
                oq.import_process_tensor(str(path), kind)
    with imported(oq, valid) as pt:  # the source of the truncated copy was fine
        assert len(pt) == 3
    with pytest.raises(FileNotFoundError):
        oq.import_process_tensor(str(tmp_path / "missing.hdf5"))


def test_hdf5_files_without_the_layout_are_refused(oq, tmp_path):
    error = oq.process_tensor.ProcessTensorFileError
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as f:
        f.create_dataset("temperature", data=np.ones(3))
    partial = tmp_path / "partial.hdf5"
    with h5py.File(partial, "w") as f:
        f.attrs["format"] = "oqupy-process-tensor"
        f.attrs["writing"] = False
        f.create_dataset("hs_dim", data=np.array([2]))
        f.create_dataset("dt", data=np.array([0.1]))
    for path in (other, partial):
        for kind in ("file", "simple"):
            with pytest.raises(error, match="not a valid process tensor file"):
                oq.import_process_tensor(str(path), kind)


def test_inconsistent_datasets_are_refused(oq, tmp_path):
    error = oq.process_tensor.ProcessTensorFileError
    lengths = tmp_path / "lengths.hdf5"
    hand_made_pt(oq).export(str(lengths))
    with h5py.File(lengths, "r+") as f:
        f["mpo_tensors_shape"].resize((2,))
    with pytest.raises(error, match="mpo tensor data and shapes differ in length"):
        oq.import_process_tensor(str(lengths))
    shapes = tmp_path / "shapes.hdf5"
    hand_made_pt(oq).export(str(shapes))
    with h5py.File(shapes, "r+") as f:
        f["mpo_tensors_shape"][1] = np.array([3, 2, 4, 5])  # 120 values announced, 96 stored
    with imported(oq, shapes) as pt:
        assert pt.get_raw_mpo_tensor(0).shape == (1, 3, 4)
        with pytest.raises(error, match="96 values for shape"):
            pt.get_raw_mpo_tensor(1)
    with pytest.raises(error, match="96 values for shape"):
        oq.import_process_tensor(str(shapes), "simple")


def test_writer_that_raises_inside_with_block_leaves_a_refused_file(oq, tmp_path):
    path = tmp_path / "with.hdf5"
    with pytest.raises(RuntimeError, match="computation failed"):
        with oq.FileProcessTensor("write", str(path), 2, 0.1) as pt:
            pt.set_mpo_tensor(0, np.ones((1, 2, 4)))
            raise RuntimeError("computation failed")  # step 1 (closing the bond of dimension 2) never written
    with pytest.raises(oq.process_tensor.ProcessTensorFileError, match="interrupted"):
        oq.import_process_tensor(str(path)).close()


def test_failed_export_leaves_a_refused_file(oq, tmp_path, monkeypatch):
    cls = oq.process_tensor.FileProcessTensor
    original = cls.set_mpo_tensor

    def disk_full_at_step_2(self, step, tensor=None):
        if step == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        original(self, step, tensor)

    monkeypatch.setattr(cls, "set_mpo_tensor", disk_full_at_step_2)
    path = tmp_path / "export.hdf5"
    with pytest.raises(OSError, match="No space left"):
        hand_made_pt(oq).export(str(path))
    monkeypatch.setattr(cls, "set_mpo_tensor", original)
    with pytest.raises(oq.process_tensor.ProcessTensorFileError, match="interrupted"):
        with imported(oq, path, "simple") as pt:
            assert len(pt) == 2  # what happens today: two of the three steps are read back, no error


# ------------------------------------------------------------------------------------------------------------
# 3. no data loss


def test_write_mode_never_replaces_an_existing_file(oq, tmp_path):
    path = tmp_path / "keep.hdf5"
    hand_made_pt(oq).export(str(path))
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="overwrite"):
        oq.FileProcessTensor("write", str(path), 2, 0.1)
    with pytest.raises(FileExistsError):
        oq.FileProcessTensor("write", path, 3)  # a Path works as well
    with pytest.raises(FileExistsError):
        hand_made_pt(oq, seed=2).export(str(path))
    with pytest.raises(FileExistsError):
        make_pt_tempo(oq, "z", process_tensor_file=str(path)).get_process_tensor(progress_type="silent")
    with pytest.raises(ValueError, match="mode"):
        oq.FileProcessTensor("append", str(path), 2, 0.1)
    assert path.read_bytes() == before
    with imported(oq, path, "simple") as pt:
        assert_same_pt(pt, with_caps(hand_made_pt(oq)))


def test_overwrite_mode_replaces_the_file(oq, tmp_path):
    path = tmp_path / "replace.hdf5"
    hand_made_pt(oq).export(str(path))
    replacement = oq.FileProcessTensor("overwrite", str(path), 3, 0.2, name="new")
    replacement.set_mpo_tensor(0, np.full((1, 1, 9), 2.0))
    replacement.close()
    with imported(oq, path) as pt:
        assert (len(pt), pt.hilbert_space_dimension, pt.dt, pt.name) == (1, 3, 0.2, "new")
        assert np.array_equal(pt.get_raw_mpo_tensor(0), np.full((1, 1, 9), 2.0 + 0j))
        assert pt.get_cap_tensor(0) is None and pt.transform_in is None
    other = hand_made_pt(oq, seed=3)
    other.export(str(path), overwrite=True)
    with imported(oq, path, "simple") as pt:
        assert_same_pt(pt, with_caps(hand_made_pt(oq, seed=3)))
    pt_file = make_pt_tempo(oq, "z", process_tensor_file=str(path), overwrite=True, name="pt-z")
    pt_file.get_process_tensor(progress_type="silent").close()
    with imported(oq, path) as pt:
        assert_same_pt(pt, cached_pt(oq, "z"))


def test_bad_mode_and_bad_type_are_value_errors(oq, tmp_path):
    path = tmp_path / "new.hdf5"
    for mode in ("append", "w", "Write", None):
        with pytest.raises(ValueError, match="'read', 'write', 'overwrite'"):
            oq.FileProcessTensor(mode, str(path), 2, 0.1)
    assert not path.exists()
    hand_made_pt(oq).export(str(path))
    for kind in ("dense", "File", "mpo"):
        with pytest.raises(ValueError, match="'file' or 'simple'"):
            oq.import_process_tensor(str(path), kind)


def test_remove_deletes_only_temporary_or_overwritten_files(oq, tmp_path):
    path = tmp_path / "named.hdf5"
    named = oq.FileProcessTensor("write", str(path), 2, 0.1, name="named")
    named.set_mpo_tensor(0, np.ones((1, 1, 4)))
    with pytest.raises(FileExistsError, match="cannot be removed"):
        named.remove()
    assert path.exists()
    with imported(oq, path) as pt:  # closed (and complete) by the refused remove()
        assert len(pt) == 1 and pt.name == "named"
    temporary = oq.FileProcessTensor("write", None, 2, 0.1)
    temporary.set_mpo_tensor(0, np.ones((1, 1, 4)))
    temporary.flush()
    assert os.path.isfile(temporary.filename) and temporary.filename.endswith(".hdf5")
    with imported(oq, temporary.filename) as pt:
        assert len(pt) == 1
    temporary.remove()
    assert not os.path.exists(temporary.filename)
    overwritten = oq.FileProcessTensor("overwrite", str(path), 2, 0.1)
    overwritten.remove()
    assert not path.exists()
    pt_temp = make_pt_tempo(oq, "z", process_tensor_file=True).get_process_tensor(progress_type="silent")
    filename = pt_temp.filename
    assert os.path.isfile(filename) and len(pt_temp) == STEPS
    pt_temp.remove()
    assert not os.path.exists(filename)


# ------------------------------------------------------------------------------------------------------------
# 4. files shared between the packages

BOTH_PACKAGES = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None
    or importlib.util.find_spec("oqupy_numpy") is None
    or importlib.util.find_spec("oqupy_jax") is None,
    reason="needs both oqupy_numpy and oqupy_jax (with JAX) importable; this environment tests one package",
)


@BOTH_PACKAGES
@pytest.mark.parametrize(("writer", "reader"), [("oqupy_jax", "oqupy_numpy"), ("oqupy_numpy", "oqupy_jax")])
def test_file_written_by_one_package_is_read_by_the_other(tmp_path, writer, reader):
    w, r = importlib.import_module(writer), importlib.import_module(reader)
    path = tmp_path / f"from_{writer}.hdf5"
    pt_written = make_pt_tempo(w, "x", process_tensor_file=str(path), name="pt-x")
    pt_written.get_process_tensor(progress_type="silent").close()
    in_memory = cached_pt(w, "x")
    ref_times, ref_states = dynamics_states(w, in_memory)
    with imported(r, path) as pt:
        assert isinstance(pt, r.FileProcessTensor)
        assert_same_pt(pt, in_memory, exact=False)
        times, states = dynamics_states(r, pt)
    assert np.array_equal(times, ref_times) and states.shape == (STEPS + 1, 2, 2)
    np.testing.assert_allclose(states, ref_states, rtol=0, atol=1e-10)
    # the bath is felt: the state differs from the bath-free evolution by more than the tolerance
    free = r.compute_dynamics(
        r.System(0.5 * r.operators.sigma("x")),
        r.operators.spin_dm("up"),
        dt=0.1,
        num_steps=STEPS,
        progress_type="silent",
    )
    assert np.abs(np.asarray(free.states)[-1] - states[-1]).max() > 1e-4


@BOTH_PACKAGES
def test_both_packages_store_the_same_bond_dimensions():
    onp, ojax = importlib.import_module("oqupy_numpy"), importlib.import_module("oqupy_jax")
    np.testing.assert_array_equal(
        cached_pt(ojax, "z").get_bond_dimensions(), cached_pt(onp, "z").get_bond_dimensions()
    )


# ------------------------------------------------------------------------------------------------------------
# 5. API behaviour


def test_trivial_process_tensor(oq):
    pt = oq.TrivialProcessTensor()
    assert len(pt) == 0 and pt.max_step == float("inf") and pt.hilbert_space_dimension == 1 and pt.dt is None
    assert pt.get_mpo_tensor(0) is None and pt.get_mpo_tensor(10**6, transformed=False) is None
    assert pt.get_raw_mpo_tensor(3) is None and pt.get_initial_tensor() is None
    assert pt.get_bond_dimensions() is None
    for step in (0, 5):
        cap = pt.get_cap_tensor(step)
        assert cap.dtype == np.complex128 and np.array_equal(cap, [1.0])
    with pytest.raises(RuntimeError, match="cannot be written"):
        pt.set_mpo_tensor(0, np.ones((1, 1, 4)))
    with pytest.raises(RuntimeError, match="cannot be written"):
        pt.set_cap_tensor(0, np.ones(1))
    assert oq.TrivialProcessTensor(3, name="t").hilbert_space_dimension == 3


def test_out_of_range_steps_are_index_errors(oq, tmp_path):
    pt = hand_made_pt(oq)
    assert len(pt) == 3 and pt.max_step == 3
    pt.export(str(tmp_path / "range.hdf5"))
    with imported(oq, tmp_path / "range.hdf5") as pt_file:
        for candidate in (pt, pt_file):
            for getter in (candidate.get_mpo_tensor, candidate.get_raw_mpo_tensor):
                with pytest.raises(IndexError):
                    getter(3)
                with pytest.raises(IndexError):
                    getter(-1)
            with pytest.raises(IndexError):
                candidate.get_cap_tensor(4)
            with pytest.raises(TypeError):
                candidate.get_raw_mpo_tensor(1.0)
            assert candidate.get_mpo_tensor(2).shape == (2, 1, 4, 4)


def test_rank_3_tensor_is_the_delta_expansion_and_transforms_apply(oq):
    pt = hand_made_pt(oq)
    raw = pt.get_raw_mpo_tensor(0)
    full = pt.get_mpo_tensor(0, transformed=False)
    assert full.shape == (1, 3, 4, 4)
    for a in range(4):
        for b in range(4):
            expected = raw[:, :, a] if a == b else np.zeros((1, 3))
            assert np.array_equal(full[:, :, a, b], expected), (a, b)
    # a system vector v enters as v @ transform_in, w leaves as w @ transform_out
    t_in, t_out = pt.transform_in, pt.transform_out
    transformed = pt.get_mpo_tensor(0)
    for x in range(4):
        for y in range(4):
            expected = np.einsum("a,pfa,a->pf", t_in[x], raw, t_out[:, y])
            np.testing.assert_allclose(transformed[:, :, x, y], expected, rtol=1e-13, atol=1e-13)
    rng = np.random.default_rng(5)
    v, w = rng_complex(rng, 4), rng_complex(rng, 4)
    np.testing.assert_allclose(
        np.einsum("x,pfxy,y->pf", v, transformed, w),
        np.einsum("a,pfa,a->pf", v @ t_in, raw, t_out @ w),
        rtol=1e-12,
    )
    # a stored rank-4 tensor is returned as it is, and transformed on both legs
    raw4 = pt.get_raw_mpo_tensor(1)
    assert np.array_equal(pt.get_mpo_tensor(1, transformed=False), raw4)
    np.testing.assert_allclose(
        pt.get_mpo_tensor(1), np.einsum("xi,pfio,oy->pfxy", t_in, raw4, t_out), rtol=1e-12, atol=1e-12
    )
    # without transforms, transformed and untransformed agree
    plain = hand_made_pt(oq, transforms=False)
    assert np.array_equal(plain.get_mpo_tensor(0), plain.get_mpo_tensor(0, transformed=False))


def test_bond_dimensions(oq):
    assert np.array_equal(hand_made_pt(oq).get_bond_dimensions(), [1, 3, 2, 1])
    assert oq.SimpleProcessTensor(2, 0.1).get_bond_dimensions() is None
    bonds = cached_pt(oq, "z").get_bond_dimensions()
    shapes = [cached_pt(oq, "z").get_raw_mpo_tensor(step).shape for step in range(STEPS)]
    assert list(bonds) == [s[0] for s in shapes] + [1] and bonds[0] == 1
    assert all(shapes[n][1] == shapes[n + 1][0] for n in range(STEPS - 1))


def independent_caps(pt, d):
    """c_N = [1]; c_n[p] = sum M_n[p,f,x,y] c_{n+1}[f] t[x] t[y], M_n the rank-4 tensor in the system basis,
    t = vec(1)/sqrt(d) (the module docstring); the delta and the transforms are applied here, not by the library."""
    t = np.identity(d).reshape(d * d) / np.sqrt(d)
    t_in = np.identity(d * d) if pt.transform_in is None else pt.transform_in
    t_out = np.identity(d * d) if pt.transform_out is None else pt.transform_out
    caps = [np.ones(1, dtype=complex)]
    for step in reversed(range(len(pt))):
        raw = pt.get_raw_mpo_tensor(step)
        if raw.ndim == 3:
            full = np.zeros(raw.shape + raw.shape[2:], dtype=complex)
            for a in range(raw.shape[2]):
                full[:, :, a, a] = raw[:, :, a]
        else:
            full = raw
        system_basis = np.einsum("xi,pfio,oy->pfxy", t_in, full, t_out)
        caps.append(np.einsum("pfxy,f,x,y->p", system_basis, caps[-1], t, t))
    return caps[::-1]


@pytest.mark.parametrize("transforms", [True, False], ids=["transforms", "no-transforms"])
def test_compute_caps_matches_an_independent_computation(oq, tmp_path, transforms):
    pt = hand_made_pt(oq, transforms)
    expected = independent_caps(pt, 2)
    assert [cap.shape for cap in expected] == [(1,), (3,), (2,), (1,)]
    pt.compute_caps()
    for step in range(4):
        np.testing.assert_allclose(pt.get_cap_tensor(step), expected[step], rtol=1e-12, atol=1e-12)
    # the same caps in a FileProcessTensor
    pt_file = oq.FileProcessTensor(
        "write", str(tmp_path / "caps.hdf5"), 2, 0.05, pt.transform_in, pt.transform_out
    )
    for step in range(3):
        pt_file.set_mpo_tensor(step, pt.get_raw_mpo_tensor(step))
    assert pt_file.get_cap_tensor(0) is None
    pt_file.compute_caps()
    for step in range(4):
        np.testing.assert_allclose(pt_file.get_cap_tensor(step), expected[step], rtol=1e-12, atol=1e-12)
    pt_file.close()
    # setting a tensor makes the caps of a SimpleProcessTensor stale (removed)
    pt.set_mpo_tensor(2, 2.0 * pt.get_raw_mpo_tensor(2))
    assert all(pt.get_cap_tensor(step) is None for step in range(4))


def test_caps_of_a_pt_tempo_result_match_an_independent_computation(oq):
    for axis in ("x", "z"):
        pt = cached_pt(oq, axis)
        expected = independent_caps(pt, 2)
        for step in range(len(pt) + 1):
            np.testing.assert_allclose(pt.get_cap_tensor(step), expected[step], rtol=1e-10, atol=1e-12)


def test_file_process_tensor_does_not_keep_stale_caps(oq, tmp_path):
    source = cached_pt(oq, "z")
    simple = oq.SimpleProcessTensor(2, 0.1)
    pt_file = oq.FileProcessTensor("write", str(tmp_path / "stale.hdf5"), 2, 0.1)
    for pt in (simple, pt_file):
        for step in range(len(source)):
            pt.set_mpo_tensor(step, source.get_raw_mpo_tensor(step))
        pt.compute_caps()
        # halving the last tensor halves every earlier cap
        pt.set_mpo_tensor(STEPS - 1, 0.5 * source.get_raw_mpo_tensor(STEPS - 1))
    try:
        _, simple_states = dynamics_states(oq, simple)
        _, file_states = dynamics_states(oq, pt_file)
        np.testing.assert_allclose(file_states, simple_states, rtol=0, atol=1e-12)
        assert pt_file.get_cap_tensor(0) is None or np.allclose(
            pt_file.get_cap_tensor(0), 0.5 * source.get_cap_tensor(0)
        )
    finally:
        pt_file.close()


def test_file_name_and_description_setters_write_through(oq, tmp_path):
    path = tmp_path / "names.hdf5"
    pt = oq.FileProcessTensor("write", str(path), 2, 0.1, name="first", description="one")
    pt.set_mpo_tensor(0, np.ones((1, 1, 4)))
    pt.flush()
    pt.name = "second"
    pt.description = "two"
    assert pt.name == "second"
    pt.close()
    with imported(oq, path) as reopened:
        assert (reopened.name, reopened.description) == ("second", "two")
        reopened.name = "third"  # read mode: changes the object, not the file
        assert reopened.name == "third"
    with imported(oq, path) as reopened:
        assert reopened.name == "second"
        with pytest.raises(RuntimeError, match="not open for writing"):
            reopened.set_mpo_tensor(1, np.ones((1, 1, 4)))
    del_pt = oq.FileProcessTensor("overwrite", str(path), 2, 0.1, name="named")
    del del_pt.name  # back to the default
    del_pt.close()
    with imported(oq, path) as reopened:
        assert reopened.name == "__unnamed__"
