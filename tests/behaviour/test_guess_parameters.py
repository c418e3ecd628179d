"""``guess_tempo_parameters`` returns OQuPy 0.5's guesses: dt, dkmax and epsrel, the description and the warnings.

The reference numbers below were produced with OQuPy 0.5 (numpy 1.26) by running
``/work/oqupy05-venv/bin/python tests/behaviour/guess_cases.py`` (the cases are built by the same code for both
libraries).  With ``OQUPY05_PYTHON`` naming an OQuPy 0.5 interpreter, ``test_live_comparison_with_oqupy`` reruns
that script and compares everything, warnings' texts included.
"""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import guess_cases  # noqa: E402

# case: (dt, dkmax, epsrel, which limited dt ("bath", "system" or "none": no system given), number of warnings)
OQUPY05_GUESSES = {
    "quickstart": (0.0625, 37, 2.485e-05, "bath", 1),
    "quickstart_no_system": (0.0625, 37, 2.485e-05, "none", 1),
    "warm_default_tolerance": (0.0625, 52, 5.506e-06, "bath", 1),
    "fast_system": (0.03125, 128, 3.162e-06, "system", 1),
    "lindblad_limited": (0.05556, 46, 3.461e-05, "system", 1),
    "time_dependent": (0.05, 32, 3.162e-05, "bath", 1),
    "tight_tolerance": (0.0375, 77, 7.355e-07, "bath", 1),
    "max_dkmax_reached": (0.375, 160, 2.183e-07, "none", 2),
    "custom_correlations": (0.25, 21, 2.483e-05, "bath", 1),
}

_PREFIX = "Estimated with 'guess_tempo_parameters()' based on bath correlations"
DESCRIPTIONS = {
    "none": _PREFIX + ".",
    "bath": _PREFIX + " (limiting) and system frequencies.",
    "system": _PREFIX + " and system frequencies (limiting).",
}


def oqupy_environment():
    """The environment for OQuPy's interpreter: without PYTHONPATH, which may point at our ``oqupy`` template."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


@pytest.mark.parametrize("case", sorted(OQUPY05_GUESSES))
def test_guesses_equal_oqupy05(oq, case):
    dt, dkmax, epsrel, limiting, n_warnings = OQUPY05_GUESSES[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parameters = oq.guess_tempo_parameters(**guess_cases.CASES[case](oq))
    # four significant figures, as OQuPy rounds them
    assert parameters.dt == pytest.approx(dt, rel=5e-5)
    assert parameters.epsrel == pytest.approx(epsrel, rel=5e-5)
    assert parameters.dkmax == dkmax
    assert parameters.description == DESCRIPTIONS[limiting]
    assert parameters.name == "Roughly estimated parameters"
    ours = [w for w in caught if str(w.message).startswith(guess_cases.GUESS_WARNING_PREFIXES)]
    assert len(ours) == n_warnings and all(w.category is UserWarning for w in ours)
    assert str(ours[0].message).startswith("Estimating TEMPO parameters. No guarantee")


def test_quirk_squared_norm(oq):
    """OQuPy's system frequency is ||H||^2, not ||H||: H = 4 sigma_x gives dt = 0.5 / 16."""
    system = oq.System(4.0 * oq.operators.sigma("x"))
    correlations = oq.CustomCorrelations(lambda t: np.exp(-t))
    bath = oq.Bath(0.5 * oq.operators.sigma("z"), correlations)
    with pytest.warns(UserWarning):
        parameters = oq.guess_tempo_parameters(bath, 0.0, 5.0, system, tolerance=0.1)
    assert parameters.dt == 0.03125


def test_bad_input(oq):
    op = oq.operators
    bath = oq.Bath(0.5 * op.sigma("z"), oq.CustomCorrelations(lambda t: np.exp(-t)))
    system = oq.System(op.sigma("x"))
    with pytest.raises(AssertionError):
        oq.guess_tempo_parameters(system, 0.0, 1.0)
    with pytest.raises(TypeError):
        oq.guess_tempo_parameters(bath, "a", 1.0)
    with pytest.raises(ValueError):
        oq.guess_tempo_parameters(bath, 1.0, 0.5)
    with pytest.raises(AssertionError):
        oq.guess_tempo_parameters(bath, 0.0, 1.0, system=bath)
    with pytest.raises(TypeError):
        oq.guess_tempo_parameters(bath, 0.0, 1.0, tolerance="a")
    with pytest.raises(AssertionError):
        oq.guess_tempo_parameters(bath, 0.0, 1.0, tolerance=0.0)
    with pytest.raises(TypeError):
        oq.guess_tempo_parameters(bath, 0.0, 1.0, system, max_samples="A")
    with pytest.raises(AssertionError):
        oq.guess_tempo_parameters(bath, 0.0, 1.0, system, max_samples=0)


@pytest.mark.skipif(
    not os.environ.get("OQUPY05_PYTHON"), reason="set OQUPY05_PYTHON to an OQuPy 0.5 interpreter"
)
def test_live_comparison_with_oqupy(oq):
    script = Path(guess_cases.__file__)
    result = subprocess.run(
        [os.environ["OQUPY05_PYTHON"], str(script)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        env=oqupy_environment(),
    )
    reference = json.loads(result.stdout.strip().splitlines()[-1])
    ours = guess_cases.guesses(oq)
    assert set(reference) == set(ours)
    for case, (dt, dkmax, epsrel, description, messages) in reference.items():
        assert ours[case][0] == pytest.approx(dt, rel=5e-5), case
        assert ours[case][1] == dkmax, case
        assert ours[case][2] == pytest.approx(epsrel, rel=5e-5), case
        assert ours[case][3] == description, case
        assert ours[case][4] == messages, case


def test_only_time_dependent_systems_are_sampled(oq):
    """OQuPy 0.5 samples only ``TimeDependentSystem(WithField)`` in time; any other system is a ``TypeError``.

    A ``ParameterizedSystem`` whose Hamiltonian takes two parameters must not pass for a mean-field system
    ``H(t, field)`` (it did: it was then sampled at a guessed "field").
    """
    op = oq.operators
    bath = oq.Bath(0.5 * op.sigma("z"), oq.CustomCorrelations(lambda t: np.exp(-t)))
    parameterized = oq.ParameterizedSystem(lambda hx, hz: hx * op.sigma("x") + hz * op.sigma("z"))
    for system in (parameterized, oq.system.BaseSystem(2)):
        with pytest.warns(UserWarning), pytest.raises(TypeError, match="System must have time-dependence"):
            oq.guess_tempo_parameters(bath, 0.0, 1.0, system)
    with_field = oq.TimeDependentSystemWithField(lambda t, a: 4.0 * abs(a) * op.sigma("x"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parameters = oq.guess_tempo_parameters(bath, 0.0, 5.0, with_field, tolerance=0.1)
    assert any("field" in str(w.message) for w in caught)
    assert (
        parameters.dt == 0.03125
    )  # ||H||^2 = 16 at the guessed field exp(i pi / 4): the Nyquist step 0.5 / 16


def test_oqupy_private_frequency_helper(oq):
    """``oqupy.tempo._max_tdependentsystem_frequency`` is called by OQuPy 0.5's own tests: kept under that name.

    Largest ||O||^2 over the times of H(t) = t sigma_z (t^2) and of gamma(t) L(t) = 3 sigma^- (9).
    """
    op = oq.operators
    times = np.array([0.0, 0.5, 2.0, 4.0])
    frequency = oq.tempo._max_tdependentsystem_frequency
    system = oq.TimeDependentSystem(lambda t: t * op.sigma("z"))
    assert frequency(system, times) == pytest.approx(16.0, rel=1e-12)
    damped = oq.TimeDependentSystem(
        lambda t: t * op.sigma("z"), gammas=[lambda t: 3.0], lindblad_operators=[lambda t: op.sigma("-")]
    )
    assert frequency(damped, times[:3]) == pytest.approx(9.0, rel=1e-12)
    with pytest.raises(TypeError):
        frequency(oq.system.BaseSystem(2), times)
    with pytest.raises(TypeError):
        frequency(oq.System(op.sigma("x")), times)


def test_printed_parameters_as_oqupy05(oq):
    """``print(TempoParameters(...))`` lines up as OQuPy 0.5's (the tutorials show this output)."""
    text = str(oq.TempoParameters(dt=0.1, tcut=3.0, epsrel=1e-4, name="my rough parameters"))
    assert text.endswith(
        "TempoParameters object: my rough parameters\n"
        " __no_description__\n"
        "  dt                   = 0.1 \n"
        "  tcut [dkmax]         = 3.0 [30] \n"
        "  epsrel               = 0.0001 \n"
        "  add_correlation_time = None \n"
    )
