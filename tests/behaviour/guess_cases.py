"""Cases for ``guess_tempo_parameters``, written against the OQuPy 0.5 API so that the same builder runs with
our packages and with OQuPy itself (``test_guess_parameters.py`` imports it; its live comparison runs it in an
OQuPy interpreter).  Each case returns the keyword arguments of ``guess_tempo_parameters``."""

import numpy as np


def _bath(oq, alpha=0.3, cutoff=5.0, temperature=0.0, zeta=1.0, axis="z"):
    sd = oq.PowerLawSD(
        alpha=alpha, zeta=zeta, cutoff=cutoff, cutoff_type="exponential", temperature=temperature
    )
    return oq.Bath(0.5 * oq.operators.sigma(axis), sd)


def _quickstart(oq):
    # OQuPy's quickstart tutorial: Omega = 1, alpha = 0.3, cutoff 5, T = 0, t in [0, 5], tolerance 0.01
    system = oq.System(0.5 * oq.operators.sigma("x"))
    return dict(bath=_bath(oq), start_time=0.0, end_time=5.0, system=system, tolerance=0.01)


def _quickstart_no_system(oq):
    return dict(bath=_bath(oq), start_time=0.0, end_time=5.0, tolerance=0.01)


def _warm_default_tolerance(oq):
    # default tolerance (3.9e-3), finite temperature, longer window, start time not zero
    system = oq.System(0.5 * oq.operators.sigma("x"))
    return dict(
        bath=_bath(oq, alpha=0.1, cutoff=3.0, temperature=0.5), start_time=1.0, end_time=11.0, system=system
    )


def _fast_system(oq):
    # H = 4 sigma_x limits dt: 0.5 / ||H||^2 = 0.5 / 16 (OQuPy's squared norm)
    system = oq.System(4.0 * oq.operators.sigma("x"))
    return dict(
        bath=_bath(oq, alpha=0.05, cutoff=1.0), start_time=0.0, end_time=4.0, system=system, tolerance=0.01
    )


def _lindblad_limited(oq):
    op = oq.operators
    system = oq.System(0.5 * op.sigma("x"), gammas=[3.0], lindblad_operators=[op.sigma("-")])
    return dict(
        bath=_bath(oq, alpha=0.1, cutoff=2.0), start_time=0.0, end_time=3.0, system=system, tolerance=0.02
    )


def _time_dependent(oq):
    op = oq.operators

    def hamiltonian(t):
        return 0.5 * (1.0 + 2.0 * t) * op.sigma("x") + 0.5 * np.sin(t) * op.sigma("z")

    system = oq.TimeDependentSystem(
        hamiltonian, gammas=[lambda t: 0.1 * t], lindblad_operators=[lambda t: op.sigma("-")]
    )
    return dict(
        bath=_bath(oq, alpha=0.1, cutoff=4.0), start_time=0.0, end_time=2.0, system=system, tolerance=0.01
    )


def _tight_tolerance(oq):
    system = oq.System(0.5 * oq.operators.sigma("x"))
    return dict(
        bath=_bath(oq, alpha=0.2, cutoff=3.0, temperature=0.2),
        start_time=0.0,
        end_time=3.0,
        system=system,
        tolerance=1e-3,
    )


def _max_dkmax_reached(oq):
    # a slowly decaying oscillation over a long window: the grid outgrows MAX_DKMAX = 256 (second warning)
    correlations = oq.CustomCorrelations(lambda t: np.exp(-0.05 * t) * np.exp(3j * t))
    return dict(
        bath=oq.Bath(0.5 * oq.operators.sigma("z"), correlations),
        start_time=0.0,
        end_time=60.0,
        tolerance=1e-3,
    )


def _custom_correlations(oq):
    correlations = oq.CustomCorrelations(lambda t: np.exp(-t) * (1.0 + 0.5j * np.cos(2.0 * t)))
    system = oq.System(0.5 * oq.operators.sigma("x"))
    return dict(
        bath=oq.Bath(0.5 * oq.operators.sigma("z"), correlations),
        start_time=0.0,
        end_time=10.0,
        system=system,
    )


GUESS_WARNING_PREFIXES = (
    "Estimating TEMPO parameters",
    "Reached maximal recommend",
    "Assuming unit complex field",
)

CASES = {
    "quickstart": _quickstart,
    "quickstart_no_system": _quickstart_no_system,
    "warm_default_tolerance": _warm_default_tolerance,
    "fast_system": _fast_system,
    "lindblad_limited": _lindblad_limited,
    "time_dependent": _time_dependent,
    "tight_tolerance": _tight_tolerance,
    "max_dkmax_reached": _max_dkmax_reached,
    "custom_correlations": _custom_correlations,
}


def guesses(oq):
    """{case: (dt, dkmax, epsrel, description, [warnings of the guess])} computed with package ``oq``.

    Only the guess's own warnings are kept (integration warnings of the bath differ between implementations)."""
    import warnings

    out = {}
    for name, build in CASES.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            p = oq.guess_tempo_parameters(**build(oq))
        out[name] = (
            float(p.dt),
            int(p.dkmax),
            float(p.epsrel),
            p.description,
            [str(w.message) for w in caught if str(w.message).startswith(GUESS_WARNING_PREFIXES)],
        )
    return out


if __name__ == "__main__":  # python guess_cases.py: the guesses of the importable ``oqupy`` (OQuPy 0.5)
    import json

    import oqupy

    print(json.dumps(guesses(oqupy)))
