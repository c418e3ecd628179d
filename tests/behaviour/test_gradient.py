"""Gradients: ``ParameterizedSystem``, the adjoint method (``state_gradient``) against central finite differences
of the dynamics, the array boundary, and in ``oqupy_jax`` ``jax.grad`` / ``jacfwd`` / ``vmap`` through
``compute_dynamics``.

Process tensors are small (5 steps, epsrel 1e-6, no memory cut) so that the finite differences are cheap. They are
computed by ``oqupy_numpy`` (or the template) and handed to ``oqupy_jax`` through the shared file format: PT-TEMPO is
tested elsewhere, and compiling its kernels here would cost ~15 s.
"""

import functools
import importlib
import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

pytestmark = pytest.mark.device  # run on accelerators by benchmarks/device_check.sh

SX = np.array([[0, 1], [1, 0]], dtype=complex)
SZ = np.array([[1, 0], [0, -1]], dtype=complex)
SM = np.array([[0, 0], [1, 0]], dtype=complex)
RHO_0 = np.array([[1, 0], [0, 0]], dtype=complex)
TARGET = np.array([[0.5, 0.5], [0.5, 0.5]], dtype=complex)  # x+
NUM_STEPS = 5
DT = 0.1
COUPLINGS = {
    "diagonal": (0.5 * SZ, 0.5 * SZ),
    "rotated": (0.5 * (SX + SZ) / np.sqrt(2.0), 0.5 * SX),
}


_FILES = tempfile.TemporaryDirectory(prefix="oqupy-gradient-")


def _transferred(package, pt, name):
    """``pt`` (computed by another package) read by ``package`` from a file."""
    oq = importlib.import_module(package)
    filename = str(Path(_FILES.name) / f"{name}.hdf5")
    pt.export(filename)
    return oq.import_process_tensor(filename, "simple")


@functools.lru_cache(maxsize=None)
def process_tensors(package, coupling, epsrel):
    """Two process tensors (different baths) for ``coupling``, cached per package."""
    if package == "oqupy_jax":
        return tuple(
            _transferred(package, pt, f"{coupling}-{epsrel}-{k}")
            for k, pt in enumerate(process_tensors("oqupy_numpy", coupling, epsrel))
        )
    oq = importlib.import_module(package)
    first, second = COUPLINGS[coupling]
    baths = [
        oq.Bath(
            first, oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
        ),
        oq.Bath(
            second, oq.PowerLawSD(alpha=0.1, zeta=1, cutoff=3.0, cutoff_type="gaussian", temperature=0.2)
        ),
    ]
    parameters = oq.TempoParameters(dt=DT, epsrel=epsrel, tcut=None)
    return tuple(
        oq.pt_tempo_compute(bath, 0.0, NUM_STEPS * DT, parameters, progress_type="silent") for bath in baths
    )


@functools.lru_cache(maxsize=None)
def uniform_process_tensor(package):
    """A uniform process tensor (memory 5 steps) of the first bath of the diagonal coupling."""
    if package == "oqupy_jax":
        return _transferred(package, uniform_process_tensor("oqupy_numpy"), "uniform")
    oq = importlib.import_module(package)
    correlations = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
    parameters = oq.TempoParameters(dt=DT, epsrel=1e-4, dkmax=5)
    return oq.tti_pt_tempo_compute(oq.Bath(0.5 * SZ, correlations), 0.0, parameters, progress_type="silent")


def parameterized(oq):
    """Two controls (x and z fields) and a constant decay."""
    return oq.ParameterizedSystem(
        lambda hx, hz: 0.5 * hx * SX + 0.5 * hz * SZ,
        gammas=[lambda hx, hz: 0.05],
        lindblad_operators=[lambda hx, hz: SM],
    )


def start_parameters(seed=1):
    return 0.5 + np.random.default_rng(seed).normal(size=(2 * NUM_STEPS, 2))


def fidelity(oq, system, pts, theta, control=None, num_steps=None):
    dynamics = oq.compute_dynamics(
        system,
        initial_state=RHO_0,
        num_steps=num_steps,
        process_tensor=list(pts),
        parameters=theta,
        control=control,
        progress_type="silent",
    )
    return np.trace(TARGET @ np.asarray(dynamics.states[-1])).real


def central_differences(function, theta, step=1e-5):
    result = np.zeros(theta.shape)
    for index in np.ndindex(*theta.shape):
        shift = np.zeros(theta.shape)
        shift[index] = step
        result[index] = (function(theta + shift) - function(theta - shift)) / (2.0 * step)
    return result


# -- ParameterizedSystem -----------------------------------------------------------------------------------


def test_parameterized_system_matches_system_and_expm(oq):
    system = parameterized(oq)
    assert system.number_of_parameters == 2 and system.dimension == 2
    constant = oq.System(0.5 * 0.3 * SX + 0.5 * 0.7 * SZ, gammas=[0.05], lindblad_operators=[SM])
    np.testing.assert_allclose(system.liouvillian(0.3, 0.7), constant.liouvillian(), atol=1e-15)
    theta = start_parameters()
    first, second = system.get_propagators(DT, theta)(2)
    np.testing.assert_allclose(first, scipy.linalg.expm(system.liouvillian(*theta[4]) * DT / 2), atol=1e-14)
    np.testing.assert_allclose(second, scipy.linalg.expm(system.liouvillian(*theta[5]) * DT / 2), atol=1e-14)
    stack_1, stack_2 = system.get_propagator_stack(DT, theta)
    assert stack_1.shape == (NUM_STEPS, 4, 4)
    np.testing.assert_allclose(stack_1[2], first, atol=1e-14)
    np.testing.assert_allclose(stack_2[2], second, atol=1e-14)


def test_propagator_derivatives_against_finite_differences(oq):
    # a Hamiltonian quadratic in one parameter: the stencil on L is exact, the Frechet derivative too
    system = oq.ParameterizedSystem(
        lambda a, b: a * SX + a * a * b * SZ, [lambda a, b: 0.1 * b * b], [lambda a, b: SM]
    )
    theta = np.array([[0.3, -0.8], [1.1, 0.4]])
    derivatives = system.get_propagator_derivatives(0.7, theta)(0)
    for half in range(2):
        for j in range(2):

            def propagator(x, half=half, j=j):
                row = theta[half].copy()
                row[j] = x
                return scipy.linalg.expm(system.liouvillian(*row) * 0.35)

            h = 1e-5
            expected = (propagator(theta[half, j] + h) - propagator(theta[half, j] - h)) / (2 * h)
            np.testing.assert_allclose(derivatives[half][j], expected, atol=1e-9)
    custom = oq.ParameterizedSystem(lambda a: a * SX, propagator_derivatives=lambda dt, row: ["custom"])
    assert custom.get_propagator_derivatives(0.1, np.ones((2, 1)))(0) == (["custom"], ["custom"])


def test_parameterized_system_bad_input(oq):
    with pytest.raises(TypeError):
        oq.ParameterizedSystem(SX)
    with pytest.raises(AssertionError):
        oq.ParameterizedSystem(lambda a: np.array([[0, 1], [0, 0]]) * a)  # not Hermitian
    with pytest.raises(AssertionError):
        oq.ParameterizedSystem(lambda a: a * SX, gammas=[lambda a: 0.1], lindblad_operators=[])
    system = parameterized(oq)
    with pytest.raises(TypeError):
        system.liouvillian(0.1)
    pts = process_tensors(oq.__name__, "diagonal", 1e-6)
    with pytest.raises(TypeError):  # a ParameterizedSystem needs its parameters
        oq.compute_dynamics(system, initial_state=RHO_0, process_tensor=list(pts))
    with pytest.raises(ValueError):
        oq.compute_dynamics(system, initial_state=RHO_0, process_tensor=list(pts), parameters=np.ones((4, 2)))
    with pytest.raises(TypeError):
        oq.compute_dynamics_batch([system], initial_state=RHO_0, process_tensor=list(pts))


def test_compute_dynamics_of_a_parameterized_system_equals_system(oq):
    # constant parameters: the same dynamics as the equivalent System
    pts = process_tensors(oq.__name__, "rotated", 1e-6)
    theta = np.tile([0.3, 0.7], (2 * NUM_STEPS, 1))
    constant = oq.System(0.5 * 0.3 * SX + 0.5 * 0.7 * SZ, gammas=[0.05], lindblad_operators=[SM])
    expected = oq.compute_dynamics(
        constant, initial_state=RHO_0, process_tensor=list(pts), progress_type="silent"
    )
    result = oq.compute_dynamics(
        parameterized(oq),
        initial_state=RHO_0,
        process_tensor=list(pts),
        parameters=theta,
        progress_type="silent",
    )
    np.testing.assert_allclose(result.states, expected.states, atol=1e-14)
    no_bath = oq.compute_dynamics(parameterized(oq), initial_state=RHO_0, dt=DT, parameters=theta)
    assert len(no_bath) == NUM_STEPS + 1


# -- the adjoint method -------------------------------------------------------------------------------------


@pytest.mark.parametrize("coupling", sorted(COUPLINGS))
def test_adjoint_gradient_equals_finite_differences(oq, coupling):
    pts = process_tensors(oq.__name__, coupling, 1e-6)
    system = parameterized(oq)
    theta = start_parameters()
    result = oq.state_gradient(system, RHO_0, TARGET.T, list(pts), theta, progress_type="silent")
    assert set(result) == {"final_state", "gradprop", "gradient", "dynamics"}
    gradient = result["gradient"]
    assert gradient.shape == theta.shape and gradient.dtype == np.complex128
    assert np.max(np.abs(gradient.imag)) < 1e-14
    expected = central_differences(lambda th: fidelity(oq, system, pts, th), theta)
    np.testing.assert_allclose(gradient.real, expected, rtol=0, atol=1e-6 * np.max(np.abs(expected)))
    np.testing.assert_allclose(result["final_state"], result["dynamics"].states[-1])
    np.testing.assert_allclose(
        np.trace(TARGET @ result["final_state"]).real, fidelity(oq, system, pts, theta), atol=1e-14
    )


def test_adjoint_tensors_contract_to_the_objective_at_every_step(oq):
    pts = process_tensors(oq.__name__, "rotated", 1e-6)
    system = parameterized(oq)
    theta = start_parameters(2)
    tensors, dynamics = oq.compute_gradient_and_dynamics(
        system, RHO_0, TARGET.T, list(pts), theta, progress_type="silent"
    )
    assert isinstance(tensors, list) and len(tensors) == NUM_STEPS and tensors[0].shape == (4, 4, 4, 4)
    assert len(dynamics) == NUM_STEPS + 1
    objective = np.trace(TARGET @ dynamics.states[-1])
    propagators = system.get_propagators(DT, theta)
    for step, tensor in enumerate(tensors):
        first, second = propagators(step)
        np.testing.assert_allclose(np.einsum("abce,ba,ec->", tensor, first, second), objective, atol=1e-13)


def test_adjoint_with_control_and_callable_target(oq):
    # a pre-measurement control in the middle, and the purity F = Tr(rho^2) with dF/drho = 2 rho^T
    pts = process_tensors(oq.__name__, "diagonal", 1e-6)
    system = parameterized(oq)
    theta = start_parameters(3)
    control = oq.Control(2)
    control.add_single(2, oq.operators.left_right_super(SX, SX) * 0.3 + 0.7 * np.identity(4))

    def purity(th):
        dynamics = oq.compute_dynamics(
            system,
            initial_state=RHO_0,
            process_tensor=list(pts),
            parameters=th,
            control=control,
            progress_type="silent",
        )
        rho = np.asarray(dynamics.states[-1])
        return np.trace(rho @ rho).real

    tensors, _ = oq.compute_gradient_and_dynamics(
        system, RHO_0, lambda rho: 2 * rho.T, list(pts), theta, control=control, progress_type="silent"
    )
    gradient = oq.gradient._chain_rule(
        tensors, system.get_propagator_derivatives(DT, theta), system.get_propagators(DT, theta), NUM_STEPS, 2
    )
    expected = central_differences(purity, theta)
    np.testing.assert_allclose(gradient.real, expected, rtol=0, atol=1e-6 * np.max(np.abs(expected)))


def test_adjoint_through_a_uniform_and_a_finite_process_tensor(oq):
    pts = (uniform_process_tensor(oq.__name__), process_tensors(oq.__name__, "rotated", 1e-6)[1])
    system = parameterized(oq)
    theta = start_parameters(4)[:8]  # 4 steps: the uniform tensor has no length, the finite one 5 steps
    tensors, dynamics = oq.compute_gradient_and_dynamics(
        system, RHO_0, TARGET.T, list(pts), theta, num_steps=4, progress_type="silent"
    )
    gradient = oq.gradient._chain_rule(
        tensors, system.get_propagator_derivatives(DT, theta), system.get_propagators(DT, theta), 4, 2
    )
    expected = central_differences(lambda th: fidelity(oq, system, pts, th, num_steps=4), theta)
    np.testing.assert_allclose(gradient.real, expected, rtol=0, atol=1e-6 * np.max(np.abs(expected)))


@pytest.mark.parametrize("epsrel", [1e-6, 1e-8])
def test_gradients_are_finite_at_small_epsrel(oq, epsrel):
    pts = process_tensors(oq.__name__, "rotated", epsrel)
    gradient = oq.state_gradient(
        parameterized(oq), RHO_0, TARGET.T, list(pts), start_parameters(), progress_type="silent"
    )["gradient"]
    assert np.all(np.isfinite(gradient)) and np.max(np.abs(gradient)) > 1e-3


def test_gradient_bad_input(oq):
    pts = list(process_tensors(oq.__name__, "diagonal", 1e-6))
    theta = start_parameters()
    with pytest.raises(TypeError):
        oq.compute_gradient_and_dynamics(oq.System(SX), RHO_0, TARGET.T, pts, theta)
    with pytest.raises(AssertionError):
        oq.compute_gradient_and_dynamics(parameterized(oq), RHO_0, None, pts, theta)
    with pytest.raises(TypeError):
        oq.state_gradient(parameterized(oq), RHO_0, TARGET.T, pts, theta.tolist())


# -- the array boundary ---------------------------------------------------------------------------------------


def test_concrete_results_are_numpy_arrays(oq):
    np.testing.assert_equal(oq.operators.sigma("x"), SX)
    assert type(oq.operators.sigma("x")) is np.ndarray
    dynamics = oq.compute_dynamics(oq.System(SX), initial_state=RHO_0, dt=0.1, num_steps=3)
    assert type(dynamics.states) is np.ndarray
    times, values = dynamics.expectations(SZ, real=True)
    assert type(times) is np.ndarray and type(values) is np.ndarray
    np.testing.assert_almost_equal(dynamics.states[-1], dynamics.states[-1].copy())
    assert type(oq.System(SX).liouvillian()) is np.ndarray
    assert type(parameterized(oq).get_propagator_stack(DT, start_parameters())[0]) is np.ndarray


# -- oqupy_jax: autodiff through compute_dynamics -------------------------------------------------------------


@pytest.fixture
def jx(oq):
    if oq.__name__ != "oqupy_jax":
        pytest.skip("autodiff through compute_dynamics is oqupy_jax's")
    return importlib.import_module("jax")


def traced_fidelity(oq, pts):
    jnp = importlib.import_module("jax.numpy")
    system = parameterized(oq)

    def function(theta):
        dynamics = oq.compute_dynamics(
            system, initial_state=RHO_0, process_tensor=list(pts), parameters=theta, progress_type="silent"
        )
        return jnp.real(jnp.trace(TARGET @ dynamics.states[-1]))

    return function


def test_jax_grad_equals_the_adjoint(oq, jx):
    pts = process_tensors(oq.__name__, "rotated", 1e-6)
    theta = start_parameters()
    adjoint = oq.state_gradient(parameterized(oq), RHO_0, TARGET.T, list(pts), theta, progress_type="silent")
    function = traced_fidelity(oq, pts)
    gradient = np.asarray(jx.jit(jx.grad(function))(theta))
    np.testing.assert_allclose(gradient, adjoint["gradient"].real, rtol=0, atol=1e-8)
    assert abs(function(theta) - np.trace(TARGET @ adjoint["final_state"]).real) < 1e-14


def test_jax_grad_first_then_plain_calls(oq, jx):
    """The device copy of a process tensor made while ``jax.grad`` traces is kept and reused by plain calls.

    It used to be kept as a tracer: a plain call after the first traced one raised ``UnexpectedTracerError``.
    """
    pts = tuple(
        _transferred(oq.__name__, pt, f"fresh-{k}")
        for k, pt in enumerate(process_tensors("oqupy_numpy", "rotated", 1e-6))
    )
    theta = start_parameters()
    function = traced_fidelity(oq, pts)
    gradient = np.asarray(jx.jit(jx.grad(function))(theta))
    value = function(theta)
    again = np.asarray(jx.grad(function)(theta))
    np.testing.assert_allclose(again, gradient, rtol=0, atol=1e-12)
    assert abs(value - fidelity(oq, parameterized(oq), pts, theta)) < 1e-12


def test_jax_vmap_over_parameter_sets_equals_a_loop(oq, jx):
    pts = process_tensors(oq.__name__, "diagonal", 1e-6)
    function = traced_fidelity(oq, pts)
    thetas = np.stack([start_parameters(seed) for seed in range(8)])
    mapped = np.asarray(jx.jit(jx.vmap(function))(thetas))
    looped = np.array([fidelity(oq, parameterized(oq), pts, theta) for theta in thetas])
    np.testing.assert_allclose(mapped, looped, rtol=0, atol=1e-14)


def test_jax_jacfwd_through_a_system_built_from_traced_values(oq, jx):
    # through a uniform and a finite process tensor together
    jnp = importlib.import_module("jax.numpy")
    pts = [uniform_process_tensor(oq.__name__), process_tensors(oq.__name__, "diagonal", 1e-6)[1]]

    def expectation(h):
        system = oq.System(h[0] * SX + h[1] * SZ, gammas=[h[2]], lindblad_operators=[SZ])
        dynamics = oq.compute_dynamics(
            system, initial_state=RHO_0, process_tensor=pts, progress_type="silent"
        )
        return jnp.real(dynamics.expectations(SX)[1][-1])

    h = np.array([0.7, 0.3, 0.1])
    gradient = np.asarray(jx.jit(jx.jacfwd(expectation))(h))

    def concrete(values):
        return float(expectation(values))

    expected = central_differences(concrete, h)
    np.testing.assert_allclose(gradient, expected, rtol=0, atol=1e-6 * np.max(np.abs(expected)))
    assert type(oq.System(h[0] * SX).liouvillian()) is np.ndarray  # concrete again outside the trace


def test_jax_grad_is_finite_at_small_epsrel(oq, jx):
    # epsrel 1e-6: test_jax_grad_and_jacfwd_equal_the_adjoint
    pts = process_tensors(oq.__name__, "rotated", 1e-8)
    gradient = np.asarray(jx.jit(jx.grad(traced_fidelity(oq, pts)))(start_parameters()))
    adjoint = oq.state_gradient(
        parameterized(oq), RHO_0, TARGET.T, list(pts), start_parameters(), progress_type="silent"
    )
    assert np.all(np.isfinite(gradient))
    np.testing.assert_allclose(gradient, adjoint["gradient"].real, rtol=0, atol=1e-8)


def test_traced_expm_equals_scipy(oq, jx):
    boundary = importlib.import_module(oq.__name__ + "._boundary")
    rng = np.random.default_rng(7)
    matrices = rng.normal(size=(4, 4, 4)) + 1j * rng.normal(size=(4, 4, 4))
    scales = np.array([1e-3, 0.3, 3.0, 30.0])[:, None, None]
    result = np.asarray(jx.jit(boundary.expm)(matrices * scales))
    for got, matrix in zip(result, matrices * scales):
        expected = scipy.linalg.expm(matrix)
        assert np.max(np.abs(got - expected)) < 1e-13 * np.max(np.abs(expected))
