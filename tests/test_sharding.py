"""Batches sharded over every device in oqupy_jax (issue: sweeps that outgrow one machine): ``compute_dynamics_batch``
through finite and uniform process tensors, and ``jax.vmap``-ed gradients of inputs placed with ``shard_batch``.
Four CPU devices are forced in a fresh interpreter (``--xla_force_host_platform_device_count=4``).
"""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("jax")

SCRIPT = """
import json
import jax
import numpy as np
import oqupy_jax as oq

op = oq.operators
sd = oq.PowerLawSD(alpha=0.2, zeta=1, cutoff=5.0, cutoff_type="exponential", temperature=0.5)
pt = oq.pt_tempo_compute(
    oq.Bath(0.5 * op.sigma("z"), sd), 0.0, 1.0, oq.TempoParameters(dt=0.1, epsrel=1e-6, dkmax=5),
    progress_type="silent",
)
report = {"devices": len(jax.devices())}
for size in (8, 6):
    systems = [oq.System(0.5 * w * op.sigma("x") + 0.1 * op.sigma("z")) for w in np.linspace(0.5, 2.0, size)]
    _, sharded = oq.compute_dynamics_batch(systems, op.spin_dm("up"), process_tensor=pt, progress_type="silent")
    _, single = oq.compute_dynamics_batch(
        systems, op.spin_dm("up"), process_tensor=pt, progress_type="silent", devices=jax.devices()[:1]
    )
    loop = np.stack(
        [oq.compute_dynamics(s, op.spin_dm("up"), process_tensor=pt, progress_type="silent").states for s in systems]
    )
    report[size] = {
        "shape": list(sharded.shape),
        "devices": len(sharded.sharding.device_set),
        "spec": str(getattr(sharded.sharding, "spec", "")),
        "shard_rows": sorted({shard.data.shape[0] for shard in sharded.addressable_shards}),
        "vs_single": float(np.abs(np.asarray(sharded) - np.asarray(single)).max()),
        "vs_loop": float(np.abs(np.asarray(sharded) - loop).max()),
    }

def layout(array):
    return {
        "shape": list(array.shape),
        "devices": len(array.sharding.device_set),
        "shard_rows": sorted({shard.data.shape[0] for shard in array.addressable_shards}),
    }


# the batched path of a uniform process tensor: sharded, and equal to one device
tti = oq.tti_pt_tempo_compute(
    oq.Bath(0.5 * op.sigma("z"), sd), 0.0, oq.TempoParameters(dt=0.1, epsrel=1e-5, dkmax=5), progress_type="silent"
)
systems = [oq.System(0.5 * w * op.sigma("x")) for w in np.linspace(0.5, 2.0, 8)]
kwargs = dict(num_steps=12, process_tensor=tti, progress_type="silent")
_, sharded = oq.compute_dynamics_batch(systems, op.spin_dm("up"), **kwargs)
_, single = oq.compute_dynamics_batch(systems, op.spin_dm("up"), devices=jax.devices()[:1], **kwargs)
report["uniform"] = {**layout(sharded), "vs_single": float(np.abs(np.asarray(sharded) - np.asarray(single)).max())}

# jax.vmap-ed gradients: the parameters placed with shard_batch (6 padded to 8), the gradients stay sharded
system = oq.ParameterizedSystem(lambda hx, hz: 0.5 * hx * op.sigma("x") + 0.5 * hz * op.sigma("z"))
target = op.spin_dm("down")


def fidelity(theta):
    dynamics = oq.compute_dynamics(
        system, initial_state=op.spin_dm("up"), process_tensor=pt, parameters=theta, progress_type="silent"
    )
    return jax.numpy.real(jax.numpy.trace(target @ dynamics.states[-1]))


thetas = 0.5 + np.random.default_rng(3).normal(size=(6, 20, 2))
placed = oq.shard_batch(thetas)
gradients = jax.jit(jax.vmap(jax.grad(fidelity)))(placed)
alone = jax.jit(jax.vmap(jax.grad(fidelity)))(jax.device_put(thetas, jax.devices()[0]))
one_by_one = np.stack([np.asarray(jax.jit(jax.grad(fidelity))(theta)) for theta in thetas])
report["gradients"] = {
    **layout(gradients),
    "placed": layout(placed),
    "vs_single": float(np.abs(np.asarray(gradients)[:6] - np.asarray(alone)).max()),
    "vs_loop": float(np.abs(np.asarray(gradients)[:6] - one_by_one).max()),
    "scale": float(np.abs(one_by_one).max()),
}
print("REPORT", json.dumps(report))
"""


def test_batch_is_sharded_over_four_devices():
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.split("REPORT", 1)[1])
    assert report["devices"] == 4
    divisible, padded = report["8"], report["6"]
    # a batch of 8 stays on the mesh: 2 systems per device, along the batch axis
    assert divisible["shape"] == [8, 11, 2, 2] and divisible["devices"] == 4
    assert "batch" in divisible["spec"] and divisible["shard_rows"] == [2]
    # a batch of 6 is padded to 8 for the run and trimmed after; same numbers as one device and as a loop
    assert padded["shape"] == [6, 11, 2, 2] and padded["devices"] == 4
    for case in (divisible, padded):
        assert case["vs_single"] <= 1e-12
        assert case["vs_loop"] <= 1e-12
    # a uniform process tensor's batch is split the same way
    uniform = report["uniform"]
    assert uniform["shape"] == [8, 13, 2, 2] and uniform["devices"] == 4 and uniform["shard_rows"] == [2]
    assert uniform["vs_single"] <= 1e-12
    # vmap-ed gradients of a batch placed by shard_batch run on all four devices and stay there
    gradients = report["gradients"]
    assert gradients["placed"] == {"shape": [8, 20, 2], "devices": 4, "shard_rows": [2]}
    assert gradients["shape"] == [8, 20, 2] and gradients["devices"] == 4 and gradients["shard_rows"] == [2]
    assert gradients["scale"] > 1e-3  # not trivially zero
    assert gradients["vs_single"] <= 1e-12 and gradients["vs_loop"] <= 1e-12
