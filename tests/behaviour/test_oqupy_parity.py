"""OQuPy 0.5 parity of small pieces: bad input raises OQuPy's exception type (docs/migration.md), the
``util.BaseProgress`` / ``util.check_true`` interface, and ``helpers.plot_correlations_with_parameters``."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest


def small_pt(oq, dt=0.1, steps=3):
    pt = oq.SimpleProcessTensor(2, dt)
    for step in range(steps):
        pt.set_mpo_tensor(step, np.ones((1, 1, 4)))
    return pt


# -- exceptions -------------------------------------------------------------------------------------------


def test_correlations_without_a_process_tensor_are_assertion_errors(oq):
    op = oq.operators
    system, x, up = oq.System(op.sigma("x")), op.sigma("x"), op.spin_dm("up")
    with pytest.raises(AssertionError):
        oq.compute_correlations_nt(system, None, [x, x], [0.0, 0.1], ["left", "left"], initial_state=up)
    with pytest.raises(AssertionError):
        oq.compute_correlations_nt(system, "pt", [x, x], [0.0, 0.1], ["left", "left"], initial_state=up)
    with pytest.raises(AssertionError):
        oq.compute_correlations(system, None, x, x, 0.0, 0.1, initial_state=up)
    with pytest.raises(AssertionError):  # no time step anywhere
        oq.compute_correlations_nt(
            system, small_pt(oq, dt=None), [x, x], [0, 1], ["left", "left"], initial_state=up
        )
    # the same call with a time step works, and the checks did not get in its way
    _, corr = oq.compute_correlations_nt(
        system,
        small_pt(oq, dt=None),
        [x, x],
        [0, 1],
        ["left", "left"],
        initial_state=up,
        dt=0.1,
        progress_type="silent",
    )
    assert corr.shape == (1, 1) and np.isfinite(corr).all()


def test_time_interval_of_non_floats_is_an_assertion_error(oq):
    op = oq.operators
    system, x, up = oq.System(op.sigma("x")), op.sigma("x"), op.spin_dm("up")
    for interval in ((0, 1), (0.0, 0.1, 0.2)):
        with pytest.raises(AssertionError):
            oq.compute_correlations(
                system, small_pt(oq), x, x, interval, 0.1, initial_state=up, progress_type="silent"
            )
        with pytest.raises(AssertionError):
            oq.compute_correlations_nt(
                system,
                small_pt(oq),
                [x, x],
                [0.0, interval],
                ["left", "left"],
                initial_state=up,
                progress_type="silent",
            )
    times, _ = oq.compute_correlations(
        system, small_pt(oq), x, x, (0.0, 0.2), 0.3, initial_state=up, progress_type="silent"
    )
    np.testing.assert_allclose(times[0], [0.0, 0.1, 0.2])


def test_expectation_of_a_non_array_is_an_assertion_error(oq):
    op = oq.operators
    dynamics = oq.compute_dynamics(
        oq.System(op.sigma("x")), op.spin_dm("up"), dt=0.1, num_steps=2, progress_type="silent"
    )
    with pytest.raises(AssertionError):
        dynamics.expectations("x")
    _, values = dynamics.expectations([[1, 0], [0, -1]], real=True)
    np.testing.assert_allclose(values, np.cos(2 * 0.1 * np.arange(3)), atol=1e-12)  # H = sigma_x: cos(2t)


def test_dynamics_of_non_lists_is_an_assertion_error(oq):
    up = oq.operators.spin_dm("up")
    with pytest.raises(AssertionError):
        oq.Dynamics(0.1, [up])
    with pytest.raises(AssertionError):
        oq.Dynamics([0.0], 0.1)
    with pytest.raises(AssertionError):
        oq.Dynamics().add(0.0, "up")
    assert len(oq.Dynamics((0.0, 0.1), (up, up))) == 2


# -- util ------------------------------------------------------------------------------------------------


def test_base_progress_is_oqupys_abstract_interface(oq):
    progress = oq.util.BaseProgress()
    with pytest.raises(NotImplementedError):
        progress.__enter__()
    with pytest.raises(NotImplementedError):
        progress.__exit__(None, None, None)
    with pytest.raises(NotImplementedError):
        progress.update(4)

    class Recorder(oq.util.BaseProgress):
        def enter(self):
            self.log = ["enter"]
            return "bound"

        def exit(self):
            self.log.append("exit")

        def update(self, step=None):
            self.log.append(step)

    recorder = Recorder(3, "title")
    with recorder as bound:
        recorder.update(2)
    assert bound == "bound" and recorder.log == ["enter", 2, "exit"]
    assert recorder.max_value == 3 and recorder.title == "title"
    for name in ("silent", "simple", "bar"):
        cls = oq.util.get_progress(name)
        for total in (10, 0):
            with cls(total) as progress:
                progress.update(None)
                progress.update(5)
            assert progress.step == 5


def test_check_true_signature(oq):
    oq.util.check_true(expr=True, msg="fine")
    with pytest.raises(ValueError, match="^$"):
        oq.util.check_true(False)
    with pytest.raises(ValueError, match="broken"):
        oq.util.check_true(expr=0, msg="broken")


# -- helpers ---------------------------------------------------------------------------------------------


def test_importing_the_package_does_not_import_matplotlib(oq):
    code = f"import sys, {oq.__name__}; print('matplotlib' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "False"


@pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the 'plot' extra) missing"
)
@pytest.mark.parametrize("added", [None, 0.35, np.inf])
def test_plot_correlations_with_parameters_draws_the_samples(oq, added):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def c(t):
        return (np.cos(t) + 1j * np.sin(6.0 * t)) * np.exp(-2.0 * t)

    correlations = oq.CustomCorrelations(c)
    parameters = oq.TempoParameters(dt=0.1, dkmax=5, epsrel=1e-6, add_correlation_time=added)
    ax = oq.helpers.plot_correlations_with_parameters(correlations, parameters)
    try:
        samples = 0.1 * np.arange(6)
        real_points, imag_points = (collection.get_offsets() for collection in ax.collections[:2])
        np.testing.assert_allclose(real_points, np.column_stack([samples, c(samples).real]), atol=1e-12)
        np.testing.assert_allclose(imag_points, np.column_stack([samples, c(samples).imag]), atol=1e-12)
        curve = ax.lines[0].get_xydata()
        assert curve[-1, 0] == pytest.approx(0.5) and len(curve) == 16
        np.testing.assert_allclose(curve[:, 1], c(curve[:, 0]).real, atol=1e-12)
        shaded = [c for c in ax.collections[2:]]
        assert len(shaded) == (0 if added is None else 2)
        assert [label.get_text() for label in ax.get_legend().get_texts()] == ["real", "imag"]
        fig, own = plt.subplots()
        assert oq.helpers.plot_correlations_with_parameters(correlations, parameters, ax=own) is own
        plt.close(fig)
    finally:
        plt.close(ax.figure)
    with pytest.raises(ValueError):
        oq.helpers.plot_correlations_with_parameters(correlations, oq.TempoParameters(dt=0.1, epsrel=1e-6))
