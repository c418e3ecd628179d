"""One step of the dynamics through a uniform process tensor, complex against real forms (issue 31), measured.

    python -m benchmarks.real_step [--bond 327] [--dim 2] [--steps 2000] [--rounds 5]

A step of ``compute_dynamics`` through a uniform process tensor: the state ``s[x, chi]`` (system leg first) is
read out with the cap, multiplied by the system's ``enter`` matrix, contracted with the cell ``[x, p, f]`` (one
vector-matrix product per path index ``x``) and multiplied by ``leave``.  In the real basis of the swap
``(i, j) -> (j, i)`` (``oqupy._influences.conjugation_basis``) every one of these is real: a fixed index ``x``
keeps a real product ``s_x c_x``, a pair ``(A, B)`` becomes ``s'_A = s_A c_A - s_B c_B``,
``s'_B = s_A c_B + s_B c_A`` (the complex product ``s_a T_a`` written in its real and imaginary parts).
Forms timed, each as ``jax.jit`` of a ``lax.scan`` over ``--steps`` steps and as NumPy's Python loop:

- ``complex``: the current step, ``matmul`` of ``s[x, 1, p]`` by the complex cell ``[x, p, f]``;
- ``real pairs``: fixed indices as one batched real product, each pair as one ``(2, chi) @ (chi, 2 chi)``
  product (both rows of the pair against ``[c_A, c_B]``: every cell matrix read once), then the sums above;
- ``real gather``: every index as ``[s_x, s_swap(x)] @ [c_x; c'_x]`` in one batched product (the fixed
  indices' second half zero: twice the flops of the pairs form, one product);
- ``real block`` (what ``compute_dynamics`` runs, ``_propagation.contract_real_uniform``): the real basis
  ordered fixed indices first, then each pair's two rows adjacent, so that a pair is one row ``[s_A, s_B]`` (a
  reshape) times the block ``[[c_A, c_B], [-c_B, c_A]] / sqrt 2``, the fixed indices one batched product;
- ``real pairs (layout)``: the pairs form in that order (no gather or scatter);
- ``real dense``, ``real dense2``: every ``s_y c_z`` in one plain product ``(d^2, chi) @ (chi, d^2 chi)``, then
  the combinations (``d^4`` products instead of ``d^2``, each cell matrix read once).

CPU time per step (``time.process_time``, median of ``--rounds``), one thread (set below, before importing
NumPy and JAX).  The cells are built from random unitary (complex) and orthogonal (fixed indices) matrices, so
the state keeps its norm over any number of steps.  Nothing is asserted.
"""

import argparse
import os
import statistics
import time

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"


def _unitary(rng, size: int, real: bool):
    import numpy as np

    matrix = rng.normal(size=(size, size))
    if not real:
        matrix = matrix + 1j * rng.normal(size=(size, size))
    q, _ = np.linalg.qr(matrix)
    return q


def _problem(bond: int, dim: int, seed: int = 1):
    """The complex step's inputs and the same step in the real basis."""
    import numpy as np

    rng = np.random.default_rng(seed)
    dim2 = dim * dim
    path = np.arange(dim2)
    swap = (path % dim) * dim + path // dim
    fixed = [x for x in range(dim2) if swap[x] == x]
    pairs = [(x, int(swap[x])) for x in range(dim2) if x < swap[x]]
    cell = np.empty((dim2, bond, bond), dtype=complex)
    for x in fixed:
        cell[x] = _unitary(rng, bond, True)
    for a, b in pairs:
        cell[a] = _unitary(rng, bond, False)
        cell[b] = cell[a].conj()
    root = np.sqrt(0.5)
    basis = np.zeros((dim2, dim2), dtype=complex)
    for x in fixed:
        basis[x, x] = 1.0
    for a, b in pairs:
        basis[a, a] = basis[a, b] = root
        basis[b, a], basis[b, b] = -1j * root, 1j * root
    real_cell = np.einsum("Xx,xpf->Xpf", basis, cell).real  # c_A = sqrt2 Re T_a, c_B = sqrt2 Im T_a
    # a real orthogonal system step, and its complex form
    enter_real, leave_real = _unitary(rng, dim2, True), _unitary(rng, dim2, True)
    # the loop applies ``M`` as ``s -> M^T s``: R M^T R^dagger = M_real^T
    enter = basis.T @ enter_real @ basis.conj()
    leave = basis.T @ leave_real @ basis.conj()
    cap = rng.normal(size=bond)
    state_real = rng.normal(size=(dim2, bond))
    state = basis.conj().T @ state_real
    return dict(
        cell=cell,
        enter=enter,
        leave=leave,
        cap=cap.astype(complex),
        state=state,
        real_cell=real_cell,
        enter_real=enter_real,
        leave_real=leave_real,
        cap_real=cap,
        state_real=state_real,
        basis=basis,
        fixed=np.array(fixed),
        pairs=np.array(pairs).reshape(-1, 2),
    )


def _forms(xp, p):
    """The step functions ``(state) -> (state, rho)`` of each form, written with the array module ``xp``."""
    import numpy as np

    root = np.sqrt(0.5)
    fixed, pairs = p["fixed"], p["pairs"]
    bond = p["cell"].shape[1]
    cell = xp.asarray(p["cell"])
    fixed_cell = xp.asarray(p["real_cell"][fixed])
    # pair k: [c_A, c_B] side by side, (chi, 2 chi), with 1 / sqrt 2 folded in
    pair_cell = xp.asarray(
        root * np.concatenate([p["real_cell"][pairs[:, 0]], p["real_cell"][pairs[:, 1]]], axis=-1)
    )
    dim2 = cell.shape[0]
    path = np.arange(dim2)
    partner = path.copy()
    partner[pairs[:, 0]], partner[pairs[:, 1]] = pairs[:, 1], pairs[:, 0]
    # gather form: out[x] = s[x] @ first[x] + s[partner x] @ second[x]
    first = np.empty_like(p["real_cell"])
    second = np.zeros_like(p["real_cell"])
    first[fixed] = p["real_cell"][fixed]
    first[pairs[:, 0]] = root * p["real_cell"][pairs[:, 0]]  # s'_A = (s_A c_A - s_B c_B) / sqrt 2
    second[pairs[:, 0]] = -root * p["real_cell"][pairs[:, 1]]
    first[pairs[:, 1]] = root * p["real_cell"][pairs[:, 0]]  # s'_B = (s_B c_A + s_A c_B) / sqrt 2
    second[pairs[:, 1]] = root * p["real_cell"][pairs[:, 1]]
    stacked = xp.asarray(np.concatenate([first, second], axis=1))  # (x, 2 chi, chi)
    order = np.argsort(np.concatenate([fixed, pairs[:, 0], pairs[:, 1]]))  # back to the path order
    # dense form: P[y, (z, f)] = s[y] @ c[z] for every y, z in one product, then out[x] = sum coef[x, y, z] P[y, z]
    wide = xp.asarray(np.transpose(p["real_cell"], (1, 0, 2)).reshape(bond, dim2 * bond))
    coef = np.zeros((dim2, dim2, dim2))
    for x in fixed:
        coef[x, x, x] = 1.0
    for a, b in pairs:
        coef[a, a, a], coef[a, b, b] = root, -root
        coef[b, a, b], coef[b, b, a] = root, root
    coef = xp.asarray(coef.reshape(dim2, dim2 * dim2))

    def complex_step(state, enter, leave, cap):
        rho = state @ cap
        state = enter.T @ state
        state = xp.matmul(state[:, None, :], cell)[:, 0, :]
        return leave.T @ state, rho

    def pairs_step(state, enter, leave, cap):
        rho = state @ cap
        state = enter.T @ state
        out_fixed = xp.matmul(state[fixed][:, None, :], fixed_cell)[:, 0, :]
        rows = xp.stack([state[pairs[:, 0]], state[pairs[:, 1]]], axis=1)  # (pairs, 2, chi)
        both = xp.matmul(rows, pair_cell)  # (pairs, 2, 2 chi)
        out_a = both[:, 0, :bond] - both[:, 1, bond:]
        out_b = both[:, 0, bond:] + both[:, 1, :bond]
        state = xp.concatenate([out_fixed, out_a, out_b], axis=0)[order]
        return leave.T @ state, rho

    def gather_step(state, enter, leave, cap):
        rho = state @ cap
        state = enter.T @ state
        rows = xp.concatenate([state, state[partner]], axis=1)  # (x, 2 chi)
        state = xp.matmul(rows[:, None, :], stacked)[:, 0, :]
        return leave.T @ state, rho

    # block form: the real basis ordered [fixed..., A_1, B_1, A_2, B_2, ...], so that a pair's two rows are one
    # row of length 2 chi (a view), multiplied by [[c_A, c_B], [-c_B, c_A]] / sqrt 2
    num_fixed, num_pairs = len(fixed), len(pairs)
    ca, cb = p["real_cell"][pairs[:, 0]], p["real_cell"][pairs[:, 1]]
    block = xp.asarray(
        root * np.concatenate([np.concatenate([ca, cb], -1), np.concatenate([-cb, ca], -1)], 1)
    )

    def block_step(state, enter, leave, cap):
        # state, enter, leave in the ``layout`` order
        rho = state @ cap
        state = enter.T @ state
        out_fixed = xp.matmul(state[:num_fixed, None, :], fixed_cell)[:, 0, :]
        rows = state[num_fixed:].reshape(num_pairs, 1, 2 * bond)
        out_pairs = xp.matmul(rows, block).reshape(2 * num_pairs, bond)
        return leave.T @ xp.concatenate([out_fixed, out_pairs], axis=0), rho

    def pairs_block_step(state, enter, leave, cap):
        # the pairs form in the ``layout`` order: no gather, no scatter
        rho = state @ cap
        state = enter.T @ state
        out_fixed = xp.matmul(state[:num_fixed, None, :], fixed_cell)[:, 0, :]
        both = xp.matmul(state[num_fixed:].reshape(num_pairs, 2, bond), pair_cell)  # (pairs, 2, 2 chi)
        out_a = both[:, 0, :bond] - both[:, 1, bond:]
        out_b = both[:, 0, bond:] + both[:, 1, :bond]
        out_pairs = xp.stack([out_a, out_b], axis=1).reshape(2 * num_pairs, bond)
        return leave.T @ xp.concatenate([out_fixed, out_pairs], axis=0), rho

    def dense_step(state, enter, leave, cap):
        rho = state @ cap
        state = enter.T @ state
        products = (state @ wide).reshape(dim2 * dim2, bond)
        return leave.T @ (coef @ products), rho

    def dense2_step(state, enter, leave, cap):
        rho = state @ cap
        products = ((enter.T @ state) @ wide).reshape(dim2 * dim2, bond)
        return (leave.T @ coef) @ products, rho

    return {
        "complex": complex_step,
        "real pairs": pairs_step,
        "real gather": gather_step,
        "real dense": dense_step,
        "real block": block_step,
        "real pairs (layout)": pairs_block_step,
        "real dense2": dense2_step,
    }


def _inputs(p, name):
    if name == "complex":
        return p["state"], p["enter"], p["leave"], p["cap"]
    if name in ("real block", "real pairs (layout)"):
        import numpy as np

        layout = np.concatenate([p["fixed"], p["pairs"].reshape(-1)])
        square = np.ix_(layout, layout)
        return p["state_real"][layout], p["enter_real"][square], p["leave_real"][square], p["cap_real"]
    return p["state_real"], p["enter_real"], p["leave_real"], p["cap_real"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bond", type=int, default=327)
    parser.add_argument("--dim", type=int, default=2)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np

    p = _problem(args.bond, args.dim)
    numpy_forms = _forms(np, p)
    jax_forms = _forms(jnp, p)

    # the forms agree: the real state after a few steps is R times the complex one
    reference = None
    for name, step in numpy_forms.items():
        state, enter, leave, cap = _inputs(p, name)
        rhos = []
        for _ in range(5):
            state, rho = step(state, enter, leave, cap)
            rhos.append(rho)
        if name == "complex":
            state = (p["basis"] @ state).real
            rhos = [(p["basis"] @ rho).real for rho in rhos]
        if name in ("real block", "real pairs (layout)"):
            back = np.argsort(np.concatenate([p["fixed"], p["pairs"].reshape(-1)]))
            state, rhos = state[back], [rho[back] for rho in rhos]
        if reference is None:
            reference = (state, rhos)
        else:
            error = max(np.abs(state - reference[0]).max(), np.abs(np.array(rhos) - reference[1]).max())
            assert error < 1e-10, (name, error)

    def run_numpy(step, state, enter, leave, cap):
        rhos = []
        for _ in range(args.steps):
            state, rho = step(state, enter, leave, cap)
            rhos.append(rho)
        return np.stack(rhos)

    def make_jax(step):
        @jax.jit
        def run(state, enter, leave, cap):
            def body(carry, _):
                return step(carry, enter, leave, cap)

            return jax.lax.scan(body, state, None, length=args.steps)

        return run

    jitted = {name: make_jax(step) for name, step in jax_forms.items()}
    for name, run in jitted.items():
        jax.block_until_ready(run(*(jnp.asarray(a) for a in _inputs(p, name))))

    times = {(name, package): [] for name in numpy_forms for package in ("numpy", "jax")}
    for _ in range(args.rounds):
        for name in numpy_forms:
            numpy_inputs = _inputs(p, name)
            start = time.process_time()
            run_numpy(numpy_forms[name], *numpy_inputs)
            times[(name, "numpy")].append(time.process_time() - start)
            jax_inputs = tuple(jnp.asarray(a) for a in numpy_inputs)
            start = time.process_time()
            jax.block_until_ready(jitted[name](*jax_inputs))
            times[(name, "jax")].append(time.process_time() - start)

    print(
        f"bond {args.bond}, d = {args.dim}, {args.steps} steps, {args.rounds} rounds, one thread, "
        f"load {os.getloadavg()[0]:.2f}; CPU ms per step (median)"
    )
    print(f"{'form':<20} {'numpy':>8} {'jax':>8}")
    for name in numpy_forms:
        cells = [1e3 * statistics.median(times[(name, package)]) / args.steps for package in ("numpy", "jax")]
        print(f"{name:<20} {cells[0]:8.3f} {cells[1]:8.3f}")


if __name__ == "__main__":
    main()
