"""The transfer map's kernels, NumPy (OpenBLAS) against jitted JAX (XLA), on the canonical case (issue 33).

    PYTHONPATH=generated/oqupy_numpy/src:generated/oqupy_jax/src python -m benchmarks.stationary_kernels

Pins every thread count to 1 before NumPy and JAX load, builds the canonical uniform process tensor (epsrel 1e-6,
transfer map ``M = 592``) and times, in one process, the work of a 2-D spectrum in both forms: chains of 99 steps
through the map (dense complex, dense real-split, structured, structured real-split; one vector, a block of 100),
the dense LU solve and a ``592 x 592 x 100`` product; and, where the process tensor has a real form (issue 31:
``oqupy._dynamics_setup.real_inputs``), the same work in the real basis: the steady state's bordered solve,
structured real chains (a complex probe as two real rows), and the 2-D pathway's probes (a column by ``T``, a row
by ``T^T``, every power recorded, all products), checked against the complex forms to 1e-10.  The JAX forms are
one ``jax.jit`` each (a ``lax.scan`` for the chains), timed after a warm-up call.  Prints CPU-time medians
(``time.process_time``) in ms.
"""

import os
import statistics
import time

# one thread everywhere, before NumPy or JAX load (benchmarks.__main__.pinned_environment imports NumPy)
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_name] = "1"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402

jax.config.update("jax_enable_x64", True)

STEPS = 99


def median_ms(function, repeats=9):
    function()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return 1e3 * statistics.median(times)


def canonical_map():
    import oqupy_numpy as oq
    from benchmarks.scenarios import STATIONARY_EPSREL, _tti_build, spin_boson
    from oqupy_numpy import _dynamics_setup, _transfer_map

    system, bath, parameters, _ = spin_boson(oq, STATIONARY_EPSREL)
    pt = _tti_build(oq, bath, parameters)
    transfer = _transfer_map.transfer_map(system, pt, None)
    environment = _dynamics_setup.environment(pt, 1)
    identity = np.identity(4, dtype=complex)
    halves = _dynamics_setup.propagators(
        system, transfer.dt, 0.0, 1, oq.config.SUBDIV_LIMIT, oq.config.INTEGRATE_EPSREL
    )
    controls = _dynamics_setup.Controls(np.stack([identity, identity]), identity[None])
    matrices = _dynamics_setup.step_matrices([environment], controls, *halves)
    cell = np.asarray(environment.uniform.cell)
    real = _dynamics_setup.real_inputs([environment], matrices, identity[0])
    return transfer, np.asarray(matrices.enter[0]), cell, np.asarray(matrices.leave[0]), real


def real_chains(real, steps):
    """The structured step in the real basis (``oqupy._dynamics_setup.real_inputs``), the state in the layout
    ``(x, n, chi)``, ``n`` real rows (a complex probe: its real and imaginary parts): NumPy and jitted JAX."""
    enter, leave = real.enter[0], real.leave[0]
    fixed_cells, blocks = real.uniform[0].cell, real.uniform[0].pairs
    fixed, chi = fixed_cells.shape[0], fixed_cells.shape[1]
    pairs = blocks.shape[0]

    def numpy_step(state):  # state (x, n, chi)
        state = np.tensordot(enter, state, axes=([0], [0]))
        out_fixed = np.matmul(state[:fixed], fixed_cells)
        rows = state[fixed:].reshape(pairs, 2, -1, chi).transpose(0, 2, 1, 3).reshape(pairs, -1, 2 * chi)
        out = (
            np.matmul(rows, blocks)
            .reshape(pairs, -1, 2, chi)
            .transpose(0, 2, 1, 3)
            .reshape(2 * pairs, -1, chi)
        )
        state = np.concatenate([out_fixed, out])
        return np.tensordot(leave, state, axes=([0], [0]))

    def numpy_chain(start):
        state = start
        for _ in range(steps):
            state = numpy_step(state)
        return state

    def jax_step_with(enter, fixed_cells, blocks, leave):
        def jax_step(state, _):
            state = jnp.tensordot(enter, state, axes=([0], [0]))
            out_fixed = jnp.matmul(state[:fixed], fixed_cells)
            rows = state[fixed:].reshape(pairs, 2, -1, chi).transpose(0, 2, 1, 3).reshape(pairs, -1, 2 * chi)
            out = jnp.matmul(rows, blocks).reshape(pairs, -1, 2, chi).transpose(0, 2, 1, 3)
            state = jnp.concatenate([out_fixed, out.reshape(2 * pairs, -1, chi)])
            return jnp.tensordot(leave, state, axes=([0], [0])), None

        return jax_step

    forward_step = jax_step_with(*(jnp.asarray(a) for a in (enter, fixed_cells, blocks, leave)))
    transposed = (leave.T, np.swapaxes(fixed_cells, 1, 2), np.swapaxes(blocks, 1, 2), enter.T)
    back_step = jax_step_with(*(jnp.asarray(a) for a in transposed))

    @jax.jit
    def jax_chain(start):
        return jax.lax.scan(forward_step, start, None, length=steps)[0]

    def recorded(step, start):  # the start and every state after it: (steps + 1, x, n, chi)
        def body(state, _):
            new = step(state, None)[0]
            return new, new

        return jnp.concatenate([start[None], jax.lax.scan(body, start, None, length=steps)[1]])

    @jax.jit
    def jax_pathway(column, row):
        """The 2-D pathway's probes in the real basis, each complex probe as its real and imaginary rows
        (``(x, 2, chi)``): the column stepped by ``T``, the row by ``T^T``, every power recorded, then
        ``row_k3 . T^(k1) column`` for every ``(k1, k3)``."""
        ahead = recorded(forward_step, column)
        behind = recorded(back_step, row)
        ahead = jnp.swapaxes(ahead[:, :, 0] + 1j * ahead[:, :, 1], 1, 2).reshape(steps + 1, -1)
        behind = jnp.swapaxes(behind[:, :, 0] + 1j * behind[:, :, 1], 1, 2).reshape(steps + 1, -1)
        return ahead @ behind.T

    def numpy_pathway(transfer, column, row):
        """The same in the complex basis, as ``oqupy.stationary`` runs it (``TransferMap.step`` and ``back``)."""
        columns, rows = [column[None]], [row[None]]
        for _ in range(steps):
            columns.append(transfer.step(columns[-1]))
            rows.append(transfer.back(rows[-1]))
        return np.concatenate(columns) @ np.concatenate(rows).T

    return numpy_chain, jax_chain, jax_pathway, numpy_pathway


def main():
    from oqupy_numpy import _transfer_map

    transfer, enter, cell, leave, real = canonical_map()
    dense = np.asarray(transfer.matrix())
    size = dense.shape[0]
    rng = np.random.default_rng(1)
    vector = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    block = rng.standard_normal((size, 100)) + 1j * rng.standard_normal((size, 100))
    split = np.block([[dense.real, -dense.imag], [dense.imag, dense.real]])
    split_vector = np.concatenate([vector.real, vector.imag])

    def numpy_chain(matrix, start):
        state = start
        for _ in range(STEPS):
            state = matrix @ state
        return state

    @jax.jit
    def jax_chain(matrix, start):
        return jax.lax.scan(lambda state, _: (matrix @ state, None), start, None, length=STEPS)[0]

    def numpy_structured(start):
        state = start  # (n, p, x)
        for _ in range(STEPS):
            moved = np.moveaxis(state @ enter, -1, 0)  # (x, n, p)
            state = np.moveaxis(moved @ cell, 0, -1) @ leave
        return state

    jenter, jcell, jleave = jnp.asarray(enter), jnp.asarray(cell), jnp.asarray(leave)
    real_cell = jnp.asarray(np.block([[cell.real, cell.imag], [-cell.imag, cell.real]]))

    @jax.jit
    def jax_structured(start):
        def step(state, _):
            moved = jnp.moveaxis(state @ jenter, -1, 0)
            return jnp.moveaxis(moved @ jcell, 0, -1) @ jleave, None

        return jax.lax.scan(step, start, None, length=STEPS)[0]

    @jax.jit
    def jax_structured_real(start):
        def step(state, _):  # the cell as a real (2 chi x 2 chi) block per x: [re | im] of the bond leg
            moved = jnp.moveaxis(state @ jenter, -1, 0)
            halves = jnp.concatenate([moved.real, moved.imag], axis=-1) @ real_cell
            out = halves[..., : cell.shape[1]] + 1j * halves[..., cell.shape[1] :]
            return jnp.moveaxis(out, 0, -1) @ jleave, None

        return jax.lax.scan(step, start, None, length=STEPS)[0]

    one = vector.reshape(1, -1, 4)
    real_rows = []
    solve = jax.jit(jnp.linalg.solve)
    if real is not None:
        real_dense = np.identity(size) + 0.01 * rng.standard_normal((size, size))
        real_vector = rng.standard_normal(size)
        real_numpy, real_jax, jax_pathway, numpy_pathway = real_chains(real, STEPS)
        x_size = real.enter.shape[-1]
        pair = np.ascontiguousarray(rng.standard_normal((x_size, 2, size // x_size)))
        row = rng.standard_normal(size) + 1j * rng.standard_normal(size)

        def in_real_basis(flat, basis):  # (chi, x) complex, in the real basis, as (x, 2, chi) real rows
            moved = (flat.reshape(-1, x_size) @ basis.T).T
            return np.ascontiguousarray(np.stack([moved.real, moved.imag], axis=1))

        real_column, real_row = in_real_basis(vector, real.basis), in_real_basis(row, real.basis.conj())
        block_rows = np.ascontiguousarray(rng.standard_normal((x_size, 200, size // x_size)))
        # the steady state as oqupy.stationary solves it (bordered map, LU, condition estimate, solve), in the
        # complex basis and in the real one (the dense map brought there: real to rounding)
        _, system, guess, trace_row = _transfer_map.bordered(transfer)
        to_real = np.kron(np.identity(size // x_size), real.basis)
        real_map = to_real @ dense @ to_real.conj().T
        assert np.abs(real_map.imag).max() < 1e-12 * np.abs(real_map).max()
        real_map, real_guess, real_trace = (
            real_map.real,
            (to_real @ guess).real,
            (trace_row @ to_real.conj().T).real,
        )

        def steady(system, guess):
            factors = scipy.linalg.lu_factor(system, check_finite=False)
            (gecon,) = scipy.linalg.get_lapack_funcs(("gecon",), (factors[0],))
            gecon(factors[0], np.linalg.norm(system, 1), norm="1")
            return scipy.linalg.lu_solve(factors, guess, check_finite=False)

        def real_steady():
            return steady(np.identity(size) - real_map + np.outer(real_guess, real_trace), real_guess)

        check = np.abs(to_real.conj().T @ real_steady() - steady(system, guess)).max()
        assert check < 1e-10, check
        real_rows = [
            (
                "steady state, complex basis (bordered map, LU, gecon, solve)",
                lambda: steady(np.identity(size) - dense + np.outer(guess, trace_row), guess),
                None,
            ),
            ("steady state, real basis (the same, real)", real_steady, None),
            ("real basis structured chain, 2 real rows", lambda: real_numpy(pair), lambda: real_jax(pair)),
            (
                "real basis structured chain, 200 real rows",
                lambda: real_numpy(block_rows),
                lambda: real_jax(block_rows),
            ),
            (
                "2-D probes: 2 chains recorded + product (NumPy complex, JAX real basis)",
                lambda: numpy_pathway(transfer, vector, row),
                lambda: jax_pathway(real_column, real_row),
            ),
            (
                "LU solve, real basis (real M x M)",
                lambda: np.linalg.solve(real_dense, real_vector),
                lambda: solve(real_dense, real_vector),
            ),
        ]
        check = np.abs(np.asarray(real_jax(pair)) - real_numpy(pair)).max()
        assert check < 1e-10 * np.abs(real_numpy(pair)).max(), check
        complex_form = numpy_pathway(transfer, vector, row)
        check = np.abs(np.asarray(jax_pathway(real_column, real_row)) - complex_form).max()
        assert check < 1e-10 * np.abs(complex_form).max(), check
    hundred = block.T.reshape(100, -1, 4)
    bordered = np.identity(size) - dense + np.outer(np.ones(size), np.ones(size)) / size
    product = jax.jit(jnp.matmul)
    rows = [
        ("dense chain, 1 vector", lambda: numpy_chain(dense, vector), lambda: jax_chain(dense, vector)),
        (
            "dense real-split chain",
            lambda: numpy_chain(split, split_vector),
            lambda: jax_chain(split, split_vector),
        ),
        ("structured chain, 1 vector", lambda: numpy_structured(one), lambda: jax_structured(one)),
        ("structured real-split, 1 vector", None, lambda: jax_structured_real(one)),
        *real_rows,
        ("structured chain, 100 vectors", lambda: numpy_structured(hundred), lambda: jax_structured(hundred)),
        ("LU solve", lambda: np.linalg.solve(bordered, vector), lambda: solve(bordered, vector)),
        ("product M x M x 100", lambda: dense @ block, lambda: product(dense, block)),
    ]
    check = np.abs(np.asarray(jax_structured_real(one)) - numpy_structured(one)).max()
    assert check < 1e-10 * np.abs(numpy_structured(one)).max(), check
    print(f"M = {size}, {STEPS} steps per chain; CPU ms, medians of 9")
    print("| kernel | NumPy | JAX (jit) |\n|---|---|---|")
    for name, numpy_form, jax_form in rows:
        numpy_ms = f"{median_ms(numpy_form):.1f}" if numpy_form else "-"
        jax_ms = f"{median_ms(lambda form=jax_form: jax.block_until_ready(form())):.1f}" if jax_form else "-"
        print(f"| {name} | {numpy_ms} | {jax_ms} |")


if __name__ == "__main__":
    main()
