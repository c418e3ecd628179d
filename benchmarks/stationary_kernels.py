"""The transfer map's kernels, NumPy (OpenBLAS) against jitted JAX (XLA), on the canonical case (issue 33).

    PYTHONPATH=generated/oqupy_numpy/src:generated/oqupy_jax/src python -m benchmarks.stationary_kernels

Pins every thread count to 1 before NumPy and JAX load, builds the canonical uniform process tensor (epsrel 1e-6,
transfer map ``M = 592``) and times, in one process, the work of a 2-D spectrum in both forms: chains of 99 steps
through the map (dense complex, dense real-split, structured, structured real-split; one vector, a block of 100),
the dense LU solve and a ``592 x 592 x 100`` product.  The JAX forms are one ``jax.jit`` each (a ``lax.scan``
for the chains), timed after a warm-up call.  Prints CPU-time medians (``time.process_time``) in ms.
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
    return transfer, np.asarray(matrices.enter[0]), cell, np.asarray(matrices.leave[0])


def main():
    transfer, enter, cell, leave = canonical_map()
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
    hundred = block.T.reshape(100, -1, 4)
    bordered = np.identity(size) - dense + np.outer(np.ones(size), np.ones(size)) / size
    solve = jax.jit(jnp.linalg.solve)
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
        jax_ms = median_ms(lambda form=jax_form: jax.block_until_ready(form()))
        print(f"| {name} | {numpy_ms} | {jax_ms:.1f} |")


if __name__ == "__main__":
    main()
