"""Optimal control through a process tensor: a piecewise-constant field that flips a spin coupled to a bath.

    H(t) = h(t) sigma_x / 2 + eps sigma_z / 2 with eps = 1.0, h(t) constant on each time step (N values);
    coupling operator S = sigma_z / 2, J(w) = 2 alpha w exp(-w / w_c), alpha = 0.1, w_c = 5.0, T = 0.2;
    rho(0) = |up><up|, target |down><down|, F = <down| rho(t_f) |down>;  dt = 0.1, N = 30 steps (t_f = 3),
    PT-TEMPO epsrel 1e-6.

Run from the repository root, with either generated package installed:

    python examples/optimal_control.py                  # oqupy_numpy: gradient by the adjoint method
    python examples/optimal_control.py --backend jax    # oqupy_jax: jax.grad through compute_dynamics
    python examples/optimal_control.py --steps 20 --output /tmp/control.png

The process tensor is computed once; SciPy's L-BFGS-B then maximises F over the N field values (bounded by
|h| <= 5; a ``ParameterizedSystem`` takes one value per half step, so each value fills two rows and its
derivative is the sum of theirs), with the gradient from ``state_gradient`` (``--backend numpy``) or from ``jax.grad`` of a function
that builds a ``ParameterizedSystem`` dynamics with ``compute_dynamics`` (``--backend jax``, compiled once with
``jax.jit``).  It prints the fidelity before and after and the timings, and plots the infidelity per
iteration and the optimised field.
"""

import argparse
import importlib
import time
from pathlib import Path

import numpy as np
import scipy.optimize

ALPHA = 0.1
CUTOFF = 5.0
TEMPERATURE = 0.2
EPS = 1.0
DT = 0.1
EPSREL = 1e-6
BOUND = 5.0

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("optimal_control.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--steps", type=int, default=30, help="number of time steps N (default 30)")
    parser.add_argument("--iterations", type=int, default=60, help="L-BFGS-B iterations at most (default 60)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument("--quick", action="store_true", help="10 steps and 5 iterations, for smoke tests")
    return parser.parse_args(argv)


def objective_and_gradient(oq, backend, system, process_tensor, initial, target):
    """``h -> (F, dF/dh)`` for the (N,) field values, one per step."""
    if backend == "numpy":

        def evaluate(values):
            theta = np.repeat(values, 2).reshape(-1, 1)  # the same value on both half steps
            result = oq.state_gradient(
                system, initial, target.T, [process_tensor], theta, progress_type="silent"
            )
            fidelity = np.trace(target @ result["final_state"]).real
            return fidelity, result["gradient"].real.reshape(-1, 2).sum(axis=1)

        return evaluate
    jax = importlib.import_module("jax")
    jnp = importlib.import_module("jax.numpy")

    def fidelity(values):
        dynamics = oq.compute_dynamics(
            system,
            initial_state=initial,
            process_tensor=process_tensor,
            parameters=jnp.repeat(values, 2).reshape(-1, 1),
            progress_type="silent",
        )
        return jnp.real(jnp.trace(target @ dynamics.states[-1]))

    value_and_grad = jax.jit(jax.value_and_grad(fidelity))

    def evaluate(values):
        value, gradient = value_and_grad(values)
        return float(value), np.asarray(gradient)

    return evaluate


def plot(history, field, dt, output: Path, backend: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6))
    left.semilogy(np.arange(len(history)), 1.0 - np.array(history), marker="o", markersize=3)
    left.set_xlabel("L-BFGS-B iteration")
    left.set_ylabel("infidelity 1 - F")
    left.set_title(f"optimisation ({backend})")
    edges = dt * np.arange(len(field) + 1)
    right.stairs(field, edges, linewidth=1.4)
    right.set_xlabel("t")
    right.set_ylabel("h(t)")
    right.set_title("optimised field (one value per step)")
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120)
    print(f"plot saved to {output}")


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.quick:
        args.steps, args.iterations = min(args.steps, 10), min(args.iterations, 5)
    oq = importlib.import_module(f"oqupy_{args.backend}")
    sx, sz = oq.operators.sigma("x"), oq.operators.sigma("z")
    initial, target = oq.operators.spin_dm("up"), oq.operators.spin_dm("down")
    correlations = oq.PowerLawSD(ALPHA, 1.0, CUTOFF, "exponential", temperature=TEMPERATURE)
    bath = oq.Bath(0.5 * sz, correlations)
    start = time.perf_counter()
    process_tensor = oq.pt_tempo_compute(
        bath,
        0.0,
        args.steps * DT,
        oq.TempoParameters(dt=DT, epsrel=EPSREL, tcut=None),
        progress_type="silent",
    )
    print(f"process tensor: {args.steps} steps, {time.perf_counter() - start:.1f} s")
    system = oq.ParameterizedSystem(lambda h: 0.5 * h * sx + 0.5 * EPS * sz)
    evaluate = objective_and_gradient(oq, args.backend, system, process_tensor, initial, target)
    values = np.full(args.steps, 1.0)  # a constant field to start from
    first, _ = evaluate(values)
    history = [first]

    def negative(x):
        fidelity, gradient = evaluate(x)
        return -fidelity, -gradient

    def record(intermediate_result):  # SciPy passes the OptimizeResult to a parameter of this name
        history.append(-intermediate_result.fun)

    start = time.perf_counter()
    result = scipy.optimize.minimize(
        negative,
        values,
        jac=True,
        method="L-BFGS-B",
        bounds=[(-BOUND, BOUND)] * values.size,
        options={"maxiter": args.iterations},
        callback=record,
    )
    print(
        f"fidelity {first:.6f} -> {-result.fun:.6f} in {result.nit} iterations "
        f"({result.nfev} evaluations, {time.perf_counter() - start:.1f} s; {args.backend})"
    )
    plot(history, result.x, DT, args.output, args.backend)


if __name__ == "__main__":
    main()
