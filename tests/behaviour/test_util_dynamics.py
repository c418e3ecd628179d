"""Delta embedding, small utilities, validators and the Dynamics container."""

import importlib
import itertools

import numpy as np
import pytest


def delta_by_loops(tensor, scrambling):
    """Reference: the definition of create_delta, element by element."""
    out_shape = tuple(tensor.shape[a] for a in scrambling)
    out = np.zeros(out_shape, dtype=tensor.dtype)
    for index in itertools.product(*(range(n) for n in out_shape)):
        source = [None] * tensor.ndim
        consistent = True
        for k, axis in enumerate(scrambling):
            if source[axis] is None:
                source[axis] = index[k]
            elif source[axis] != index[k]:
                consistent = False
        if consistent:
            out[index] = tensor[tuple(source)]
    return out


@pytest.mark.parametrize(
    ("shape", "scrambling"),
    [
        ((3, 4), [1, 0, 0, 1]),
        ((2, 3, 4), [0, 1, 2, 2]),
        ((3, 4), [0, 1, 1, 0]),
        ((3, 4), [1, 1, 0]),
        ((3, 4), [0, 1, 0]),
    ],
)
def test_create_delta_matches_definition(oq, shape, scrambling):
    rng = np.random.default_rng(1)
    tensor = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    out = np.asarray(oq.util.create_delta(tensor, scrambling))
    np.testing.assert_array_equal(out, delta_by_loops(tensor, scrambling))


def test_add_singleton_and_diagonal(oq):
    x = np.arange(6.0).reshape(2, 3)
    assert oq.util.add_singleton(x, 1).shape == (2, 1, 3)
    assert oq.util.add_singleton(x).shape == (2, 3, 1)
    assert oq.util.add_singleton(x, 0).shape == (1, 2, 3)
    assert oq.util.is_diagonal_matrix(np.diag([1.0, 2.0]))
    assert not oq.util.is_diagonal_matrix(np.array([[1.0, 1e-300], [0.0, 1.0]]))
    with pytest.raises(AssertionError):
        oq.util.is_diagonal_matrix(np.zeros((2, 3)))


def test_add_singleton_leaves_the_callers_array_alone(oq):
    # issue 17, class 9: the template reshaped the caller's array with copy=False, neither package did;
    # now all three return a reshaped array and leave the argument's shape alone
    x = np.arange(6.0).reshape(2, 3)
    for copy in (True, False):
        result = oq.util.add_singleton(x, 1, copy=copy)
        assert np.asarray(result).shape == (2, 1, 3) and x.shape == (2, 3)
        np.testing.assert_array_equal(np.asarray(result)[:, 0, :], x)


def test_validators(oq):
    util = oq.util
    assert util.check_convert("1.5", float, "dt") == 1.5
    with pytest.raises(TypeError, match="'dt'"):
        util.check_convert("x", float, "dt")
    with pytest.raises(ValueError, match="positive"):
        util.check_true(False, "dt must be positive")
    with pytest.raises(TypeError):
        util.check_isinstance(1, str, "name")
    index = [0, 0]
    seen = [tuple(index)]
    while util.increase_list_of_index(index, [2, 3]):
        seen.append(tuple(index))
    assert seen == list(itertools.product(range(2), range(3)))


def test_progress_types(oq, capsys):
    printed = {}
    for kind in ["silent", "simple", "bar"]:
        with oq.util.get_progress(kind)(3, title="run") as progress:
            for step in range(3):
                progress.update(step + 1)
        assert progress.step == 3
        printed[kind] = capsys.readouterr().err
    assert printed["silent"] == ""
    assert "run" in printed["simple"] and "Elapsed time" in printed["simple"]
    assert "run" in printed["bar"] and "3/3" in printed["bar"]
    assert oq.util.get_progress() is oq.util.ProgressBar  # the default, config.PROGRESS_TYPE
    with pytest.raises(AssertionError):
        oq.util.get_progress("fancy")


def test_dynamics_container(oq):
    dyn = oq.Dynamics(name="run")
    assert dyn.expectations() == (None, None)
    up, down = np.asarray(oq.operators.spin_dm("up")), np.asarray(oq.operators.spin_dm("down"))
    dyn.add(0.2, down)
    dyn.add(0.0, up)
    dyn.add(0.1, oq.operators.spin_dm("x+"))
    np.testing.assert_allclose(np.asarray(dyn.times), [0.0, 0.1, 0.2])
    assert dyn.states.shape == (3, 2, 2) and np.asarray(dyn.states).dtype == np.complex128
    times, sz = dyn.expectations(oq.operators.sigma("z"), real=True)
    np.testing.assert_allclose(np.asarray(sz), [1.0, 0.0, -1.0], atol=1e-15)
    _, trace = dyn.expectations()
    np.testing.assert_allclose(np.asarray(trace), [1, 1, 1])
    assert len(dyn) == 3 and "run" in str(dyn)
    with pytest.raises(AssertionError):
        dyn.add(0.3, np.zeros((3, 3)))
    with pytest.raises(AssertionError):
        dyn.add("later", up)
    with pytest.raises(AssertionError):
        dyn.expectations(np.eye(3))
    with pytest.raises(AssertionError):
        oq.Dynamics(times=[0.0], states=[])


def test_dynamics_given_one_array_equals_one_by_one(oq):
    """``Dynamics(times, states)`` with states as one (n, d, d) array (how ``compute_dynamics`` hands over its
    states) keeps them as they are: the same states as adding them one by one, a copy on every read, and later
    ``add`` calls still inserted in time order; times out of order take the one-by-one path."""
    rng = np.random.default_rng(3)
    stacked = rng.normal(size=(5, 2, 2)) + 1j * rng.normal(size=(5, 2, 2))
    times = [0.0, 0.1, 0.1, 0.3, 0.4]
    whole, single = oq.Dynamics(times, stacked), oq.Dynamics()
    for time, state in zip(times, stacked):
        single.add(time, state)
    np.testing.assert_array_equal(np.asarray(whole.states), np.asarray(single.states))
    np.testing.assert_array_equal(np.asarray(whole.times), np.asarray(single.times))
    assert whole.shape == (2, 2) and len(whole) == 5
    read = np.array(whole.states)
    read[0] = 0.0
    np.testing.assert_array_equal(np.asarray(whole.states), stacked)
    whole.add(0.2, np.eye(2))
    single.add(0.2, np.eye(2))
    np.testing.assert_array_equal(np.asarray(whole.states), np.asarray(single.states))
    shuffled = oq.Dynamics([0.4, 0.0, 0.1, 0.3, 0.1], stacked)
    np.testing.assert_allclose(np.asarray(shuffled.times), sorted(times))
    np.testing.assert_array_equal(np.asarray(shuffled.states)[0], stacked[1])
    with pytest.raises(AssertionError):
        oq.Dynamics(["later"] * 5, stacked)
    assert len(oq.Dynamics([], np.zeros((0, 2, 2)))) == 0


def test_step_chunks_are_few_powers_of_two(oq):
    """``compute_dynamics`` runs its steps as ``CHUNK_STEPS`` and then decreasing powers of two: contiguous, every
    step once, and few distinct lengths (each one compiled program in ``oqupy_jax``) over all run lengths."""
    setup = importlib.import_module(oq.__name__ + "._dynamics_setup")
    lengths = set()
    for num_steps in [0, 1, 2, 3, 63, 64, 70, 1023, 1024, 1100, 10_000]:
        bounds = setup.chunks(num_steps)
        assert [begin for begin, _ in bounds] == [0, *(end for _, end in bounds)][: len(bounds)]
        assert (bounds[-1][1] if bounds else 0) == num_steps
        sizes = [end - begin for begin, end in bounds]
        assert all(size & (size - 1) == 0 and size <= setup.CHUNK_STEPS for size in sizes)
        assert sizes == sorted(sizes, reverse=True)
        lengths.update(sizes)
    assert setup.chunks(10_000)[-3:] == [(9216, 9728), (9728, 9984), (9984, 10_000)]
    assert len(lengths) <= setup.CHUNK_STEPS.bit_length()


def test_base_api_names(oq):
    obj = oq.base_api.BaseAPIClass()
    assert obj.name == "__unnamed__" and obj.description == "__no_description__"
    obj.name = "a"
    del obj.description
    assert obj.name == "a" and obj.description == "__no_description__"
    with pytest.raises(AssertionError):
        obj.name = 3


def test_package_facts(oq):
    assert oq.__version__ and set(oq.__all__) <= set(dir(oq))
    assert oq.config.NpDtype == np.complex128 and oq.config.NpDtypeReal == np.float64
    assert oq.config.SUBDIV_LIMIT == 256 and oq.config.INTEGRATE_EPSREL == 2**-26
