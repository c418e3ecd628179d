"""Benchmark scenarios, written against OQuPy 0.5's public API only.

The same code runs with ``oqupy_numpy``, ``oqupy_jax`` and OQuPy 0.5 itself (imported as ``oq``), so these
scenarios double as a compatibility check.  Each scenario is ``setup(oq, options) -> context`` (not timed) and
``run(oq, context) -> info`` (timed); ``info`` holds the largest bond dimension where there is one.
"""

import math
from pathlib import Path

import numpy as np

ALPHA, CUTOFF, TEMPERATURE = 0.25, 5.0, 0.2
DT, DKMAX, EPSREL, STEPS = 0.05, 40, 1e-6, 100
BATCH = 256


def _max_bond(pt):
    bonds = pt.get_bond_dimensions()
    return int(np.max(bonds)) if bonds is not None else 1


def spin_boson(oq, epsrel=EPSREL):
    op = oq.operators
    correlations = oq.PowerLawSD(
        alpha=ALPHA, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
    )
    bath = oq.Bath(0.5 * op.sigma("z"), correlations)
    parameters = oq.TempoParameters(dt=DT, epsrel=epsrel, dkmax=DKMAX)
    return oq.System(0.5 * op.sigma("x")), bath, parameters, op.spin_dm("up")


def _tempo_setup(steps, epsrel):
    def setup(oq, options):
        return (*spin_boson(oq, epsrel), steps)

    return setup


def _tempo_run(oq, context):
    system, bath, parameters, state, steps = context
    tempo = oq.Tempo(system, bath, parameters, state, 0.0)
    dynamics = tempo.compute(steps * parameters.dt, progress_type="silent")
    bond = getattr(tempo, "max_bond_dimension", None)
    return {"steps": len(dynamics) - 1, "max_bond": bond, "final_sz": _final(oq, dynamics)}


def _final(oq, dynamics):
    """The last value of S_z (sigma_z for a spin-1/2, diag(1, 0, -1) for the spin-1)."""
    dim = np.asarray(dynamics.states).shape[-1]
    operator = np.asarray(oq.operators.sigma("z")) if dim == 2 else np.diag(np.linspace(1.0, -1.0, dim))
    _, values = dynamics.expectations(operator.astype(complex), real=True)
    return float(np.asarray(values)[-1])


def _spin_one():
    sz = np.diag([1.0, 0.0, -1.0]).astype(complex)
    sx = (np.diag([1.0, 1.0], 1) + np.diag([1.0, 1.0], -1)).astype(complex) / math.sqrt(2)
    return sx, sz


def _qutrit_setup(oq, options):
    sx, sz = _spin_one()
    correlations = oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=0.5)
    bath = oq.Bath(sx, correlations)
    parameters = oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=10)
    state = np.diag([1.0, 0.0, 0.0]).astype(complex)
    return oq.System(sz + 0.5 * sx), bath, parameters, state, 50


def _weak_setup(steps):
    """OQuPy issue #162's regime: weak coupling (alpha = 0.01) and a tight epsrel, which makes the bonds large."""

    def setup(oq, options):
        op = oq.operators
        correlations = oq.PowerLawSD(
            alpha=0.01, zeta=1, cutoff=CUTOFF, cutoff_type="exponential", temperature=TEMPERATURE
        )
        bath = oq.Bath(0.5 * op.sigma("z"), correlations)
        parameters = oq.TempoParameters(dt=DT, epsrel=1e-8, dkmax=DKMAX)
        return oq.System(0.5 * op.sigma("x")), bath, parameters, op.spin_dm("up"), steps

    return setup


def _pt_build_setup(oq, options):
    system, bath, parameters, state = spin_boson(oq)
    return bath, parameters


def _pt_build_run(oq, context):
    bath, parameters = context
    pt = oq.PtTempo(bath, 0.0, STEPS * DT, parameters).get_process_tensor(progress_type="silent")
    return {"steps": len(pt), "max_bond": _max_bond(pt)}


PT_FILE = Path(__file__).resolve().parent / "results" / "canonical_pt.hdf5"
"""The canonical process tensor, written once by oqupy_numpy and read by both generated packages."""


def write_canonical_pt(path=PT_FILE):
    """Build the canonical process tensor with oqupy_numpy and write it to ``path``."""
    import oqupy_numpy as oq

    _, bath, parameters, _ = spin_boson(oq)
    path.parent.mkdir(parents=True, exist_ok=True)
    pt = oq.PtTempo(bath, 0.0, STEPS * DT, parameters, process_tensor_file=str(path), overwrite=True)
    pt.get_process_tensor(progress_type="silent").close()


def _pt_context(oq, options):
    """The canonical process tensor, once per worker process (``options["cache"]``).

    The generated packages read ``PT_FILE`` when it exists (the same tensor for both: the dynamics are compared
    on equal input and the JAX package is spared a slow build); OQuPy builds its own.
    """
    cache = options.setdefault("cache", {})
    if "pt" not in cache:
        system, bath, parameters, state = spin_boson(oq)
        if hasattr(oq, "compute_dynamics_batch") and PT_FILE.exists():
            pt = oq.import_process_tensor(str(PT_FILE), "simple")
        else:
            pt = oq.PtTempo(bath, 0.0, STEPS * DT, parameters).get_process_tensor(progress_type="silent")
        cache["pt"] = (system, state, pt)
    return cache["pt"]


def _pt_dynamics_run(oq, context):
    system, state, pt = context
    dynamics = oq.compute_dynamics(system, state, process_tensor=pt, progress_type="silent")
    return {"steps": len(dynamics) - 1, "max_bond": _max_bond(pt), "final_sz": _final(oq, dynamics)}


def _gradient_setup(oq, options):
    """A one-parameter field (2 x 100 half steps) through the canonical process tensor; the fidelity with |down>.

    ``oqupy_jax`` differentiates ``compute_dynamics`` with ``jax.grad`` (compiled once, in the cold run); the
    others use the adjoint method (``state_gradient``)."""
    system, state, pt = _pt_context(oq, options)
    sigma_x = np.asarray(oq.operators.sigma("x"))
    parameterized = oq.ParameterizedSystem(lambda hx: 0.5 * hx * sigma_x)
    theta = np.ones((2 * len(pt), 1))
    target = np.asarray(oq.operators.spin_dm("down"))
    if oq.__name__ != "oqupy_jax":
        return "adjoint", parameterized, state, pt, theta, target
    import jax
    import jax.numpy as jnp

    def fidelity(values):
        dynamics = oq.compute_dynamics(
            parameterized, initial_state=state, process_tensor=pt, parameters=values, progress_type="silent"
        )
        return jnp.real(jnp.trace(target @ dynamics.states[-1]))

    return "jax.grad", jax.jit(jax.grad(fidelity)), pt, theta


def _gradient_run(oq, context):
    if context[0] == "jax.grad":
        _, gradient_function, pt, theta = context
        gradient = np.asarray(gradient_function(theta))
    else:
        _, system, state, pt, theta, target = context
        result = oq.state_gradient(system, state, target.T, [pt], theta, progress_type="silent")
        gradient = np.real(result["gradient"])
    return {"max_bond": _max_bond(pt), "gradient_sum": float(np.sum(gradient)), "method": context[0]}


def _batch_systems(oq, count):
    op = oq.operators
    return [oq.System(0.5 * omega * op.sigma("x")) for omega in np.linspace(0.2, 3.0, count)]


def _batch_setup(oq, options):
    system, state, pt = _pt_context(oq, options)
    count = options.get("batch_size", BATCH)
    return _batch_systems(oq, count), state, pt


def _batch_run(oq, context):
    """256 Hamiltonians through one process tensor: one call where the package has it, else a Python loop."""
    systems, state, pt = context
    batch = getattr(oq, "compute_dynamics_batch", None)
    if batch is not None:
        _, states = batch(systems, state, process_tensor=pt, progress_type="silent")
        np.asarray(states)
        return {"systems": len(systems), "max_bond": _max_bond(pt), "call": "compute_dynamics_batch"}
    for system in systems:
        np.asarray(oq.compute_dynamics(system, state, process_tensor=pt, progress_type="silent").states)
    return {"systems": len(systems), "max_bond": _max_bond(pt), "call": "loop over compute_dynamics"}


def _batch_loop_run(oq, context):
    systems, state, pt = context
    for system in systems:
        np.asarray(oq.compute_dynamics(system, state, process_tensor=pt, progress_type="silent").states)
    return {"systems": len(systems), "max_bond": _max_bond(pt), "call": "loop over compute_dynamics"}


TTI_EPSREL, TTI_STEPS = 1e-7, 10_000
"""The uniform process tensor of the canonical bath: its epsrel (100-step deviation from a tight TEMPO run:
1.3e-3) and the long run (t = 500)."""


def _tti_setup(oq, options):
    return spin_boson(oq, TTI_EPSREL)


def _tti_build(oq, bath, parameters):
    return oq.TtiPtTempo(bath, 0.0, parameters, unique=True).get_process_tensor(progress_type="silent")


def _tti_build_run(oq, context):
    system, bath, parameters, state = context
    pt = _tti_build(oq, bath, parameters)
    return {"max_bond": pt.bond_dimension}


def _tti_long_run(oq, context):
    """Build plus 10,000 steps: the figure to set against OQuPy's TEMPO for the same steps."""
    system, bath, parameters, state = context
    pt = _tti_build(oq, bath, parameters)
    dynamics = oq.compute_dynamics(
        system, state, num_steps=TTI_STEPS, process_tensor=pt, progress_type="silent"
    )
    return {"max_bond": pt.bond_dimension, "steps": TTI_STEPS, "final_sz": _final(oq, dynamics)}


def _tti_steady_setup(oq, options):
    system, bath, parameters, state = spin_boson(oq, TTI_EPSREL)
    return system, _tti_build(oq, bath, parameters)


def _tti_steady_run(oq, context):
    system, pt = context
    rho = np.asarray(oq.compute_steady_state(system, pt))
    return {"max_bond": pt.bond_dimension, "final_sz": float(np.real(rho[0, 0] - rho[1, 1]))}


STATIONARY_EPSREL, WINDOW, RELAXED = 1e-6, 10_000, 1200
"""Stationary correlations of the canonical case: the uniform process tensor at epsrel 1e-6 (bond 148, transfer
map 592: its dense eigendecomposition is O(M^3), so 1e-7's 1308 costs 10x), a window of 10,000 lags, and the
finite route's relaxation (1200 steps: the slowest mode, 61 steps, decayed to 3e-9)."""


def _stationary_setup(oq, options):
    system, bath, parameters, state = spin_boson(oq, STATIONARY_EPSREL)
    return system, _tti_build(oq, bath, parameters), oq.operators


def _stationary_window_run(oq, context, method="eig"):
    system, pt, op = context
    _, corr = oq.compute_stationary_correlations(
        system, pt, op.sigma("x"), op.sigma("x"), WINDOW, method=method, progress_type="silent"
    )
    return {"max_bond": pt.bond_dimension, "final_sz": float(np.real(corr[WINDOW]))}


def _stationary_propagate_run(oq, context):
    return _stationary_window_run(oq, context, "propagate")


def _stationary_finite_run(oq, context):
    """The route without stationary correlations: relax from spin up, then the window, by compute_correlations."""
    system, pt, op = context
    _, corr = oq.compute_correlations(
        system,
        pt,
        op.sigma("x"),
        op.sigma("x"),
        RELAXED,
        slice(RELAXED, RELAXED + WINDOW + 1),
        initial_state=op.spin_dm("up"),
        progress_type="silent",
    )
    return {"max_bond": pt.bond_dimension, "final_sz": float(np.real(corr[0, -1]))}


def _spectrum_run(oq, context):
    system, pt, op = context
    omega, spectrum = oq.compute_spectrum(system, pt, op.sigma("-"), op.sigma("+"), num_points=4096)
    return {"max_bond": pt.bond_dimension, "final_sz": float(np.sum(spectrum) * (omega[1] - omega[0]))}


def _spectrum_2d_run(oq, context):
    """A third-order pathway on 100 x 100 (t1, t3) at t2 = 0, and its 2-D FFT."""
    system, pt, op = context
    grid = np.arange(100)
    _, response = oq.compute_stationary_multitime_correlations(
        system,
        pt,
        [op.sigma("-"), op.sigma("+"), op.sigma("-"), op.sigma("+")],
        ["right", "left", "left", "left"],
        [grid, 0, grid],
    )
    spectrum = np.fft.fft2(np.asarray(response)[:, 0, :])
    return {"max_bond": pt.bond_dimension, "final_sz": float(np.abs(spectrum).max())}


#: name -> (setup, run, description)
SCENARIOS = {
    "tempo_canonical": (
        _tempo_setup(STEPS, EPSREL),
        _tempo_run,
        "TEMPO spin-boson, alpha 0.25, wc 5, T 0.2, dt 0.05, dkmax 40, epsrel 1e-6, 100 steps",
    ),
    "tempo_200": (_tempo_setup(200, EPSREL), _tempo_run, "the same, 200 steps"),
    "tempo_tight": (_tempo_setup(STEPS, 10**-6.5), _tempo_run, "the same, epsrel 10^-6.5, 100 steps"),
    "tempo_162": (
        _weak_setup(40),
        _tempo_run,
        "TEMPO spin-boson in OQuPy #162's regime: alpha 0.01, epsrel 1e-8, dkmax 40, 40 steps",
    ),
    "qutrit": (
        _qutrit_setup,
        _tempo_run,
        "TEMPO spin-1, coupling S_x (non-diagonal), H = S_z + S_x/2, dt 0.1, dkmax 10, epsrel 1e-6, 50 steps",
    ),
    "pt_build": (_pt_build_setup, _pt_build_run, "PT-TEMPO of the canonical bath, 100 steps"),
    "pt_dynamics": (_pt_context, _pt_dynamics_run, "compute_dynamics from that process tensor"),
    "gradient": (
        _gradient_setup,
        _gradient_run,
        "one gradient of a 100-step fidelity through that process tensor (adjoint; oqupy_jax: jax.grad)",
    ),
    "batch": (
        _batch_setup,
        _batch_run,
        f"{BATCH} Hamiltonians through that process tensor (compute_dynamics_batch, or a loop)",
    ),
    "batch_loop": (
        _batch_setup,
        _batch_loop_run,
        f"{BATCH} Hamiltonians as a Python loop over compute_dynamics",
    ),
    "tti_build": (
        _tti_setup,
        _tti_build_run,
        f"uniform process tensor (TtiPtTempo, unique) of the canonical bath, epsrel {TTI_EPSREL:g}",
    ),
    "tti_long": (
        _tti_setup,
        _tti_long_run,
        f"its build plus {TTI_STEPS} steps of the canonical system (t = 500)",
    ),
    "tti_steady": (_tti_steady_setup, _tti_steady_run, "compute_steady_state through it"),
    "stationary_window": (
        _stationary_setup,
        _stationary_window_run,
        f"compute_stationary_correlations, {WINDOW} lags (eigendecomposition), canonical case at epsrel "
        f"{STATIONARY_EPSREL:g}",
    ),
    "stationary_propagate": (
        _stationary_setup,
        _stationary_propagate_run,
        f"the same, method='propagate' ({WINDOW} steps from the steady state)",
    ),
    "stationary_finite_route": (
        _stationary_setup,
        _stationary_finite_run,
        f"the same window by compute_correlations after {RELAXED} steps of relaxation",
    ),
    "spectrum": (_stationary_setup, _spectrum_run, "compute_spectrum (sigma^- sigma^+), 4096 frequencies"),
    "spectrum_2d": (
        _stationary_setup,
        _spectrum_2d_run,
        "a 4-time pathway on 100 x 100 (t1, t3) at t2 = 0 (compute_stationary_multitime_correlations) and its FFT",
    ),
}
