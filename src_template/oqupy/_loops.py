"""Loop primitives: ``scan`` and ``vmap`` are ``jax.lax.scan`` and ``jax.vmap`` in ``oqupy_jax`` and plain Python
loops in ``oqupy_numpy``.

``shard(arrays, devices)`` places arrays that share a leading batch axis for a batched computation: in
``oqupy_jax`` each is padded along axis 0 (with copies of its first entry) to a multiple of the number of
devices and put on a one-axis mesh over ``devices`` (default: all of ``jax.devices()``), so that the jitted
batch runs on every device and its results stay sharded there; in ``oqupy_numpy`` the arrays are returned
unchanged.  Trim results to the original batch size afterwards.

Template code never converts loops automatically; a step loop whose carry has a fixed shape is written once
as ``carry, ys = scan(step, carry, xs)`` and each package gets its natural form.

Semantics (both packages): ``step(carry, x) -> (carry, y)`` is called with ``x`` the ``k``-th slice of
``xs`` (``xs`` may be nested tuples or named tuples; every leaf is indexed along its first axis, None stays
None), for ``k = 0, 1, ...``;
the ``y`` (one array) are stacked along a new first axis.  In ``oqupy_numpy`` the leaves of ``xs`` may be
lists of arrays of different shapes (exact bond dimensions) and the carry may change shape from step to
step; in ``oqupy_jax`` the leaves are stacked arrays and the carry keeps its shape and dtype (pad first).

``vmap(function, in_axes)`` maps ``function`` over axis 0 of the arguments whose ``in_axes`` entry is 0 (``None``:
shared; nested tuples follow nested tuple arguments) and stacks each output (an array or a tuple of arrays)
along a new first axis.
"""

from oqupy._codegen import BACKEND

__runs_on__ = "device"

__all__ = ["scan", "shard", "vmap"]

if BACKEND == "jax":
    from typing import Any, Tuple

    import jax
    import jax.numpy as jnp
    from jax import vmap
    from jax.lax import scan
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    def shard(arrays: Tuple[Any, ...], devices: Any = None) -> Tuple[Any, ...]:
        """``arrays`` padded along axis 0 to a multiple of the device count and sharded over a one-axis mesh."""
        mesh_devices = jax.devices() if devices is None else list(devices)
        sharding = NamedSharding(Mesh(mesh_devices, ("batch",)), PartitionSpec("batch"))
        count = len(mesh_devices)
        placed = []
        for array in arrays:
            array = jnp.asarray(array)
            missing = -array.shape[0] % count
            if missing:
                array = jnp.concatenate([array, jnp.repeat(array[:1], missing, axis=0)])
            placed.append(jax.device_put(array, sharding))
        return tuple(placed)

else:
    from typing import Any, Callable, Tuple

    import numpy as np

    def _first_leaf(tree: Any) -> Any:
        return _first_leaf(tree[0]) if isinstance(tree, tuple) else tree

    def _rebuild(tree: tuple, leaves: Any) -> tuple:
        """A tuple of ``leaves`` of the type of ``tree`` (a named tuple keeps its fields)."""
        return type(tree)(*leaves) if hasattr(tree, "_fields") else tuple(leaves)

    def _slice(tree: Any, index: int) -> Any:
        if tree is None:
            return None
        if isinstance(tree, tuple):
            return _rebuild(tree, (_slice(leaf, index) for leaf in tree))
        return tree[index]

    def scan(step: Callable[[Any, Any], Tuple[Any, Any]], carry: Any, xs: Any) -> Tuple[Any, Any]:
        """``(carry, stacked ys)`` of ``step`` applied along the first axis of ``xs``: a plain loop."""
        ys = []
        for index in range(len(_first_leaf(xs))):
            carry, y = step(carry, _slice(xs, index))
            ys.append(y)
        return carry, np.stack(ys) if ys else np.zeros((0,))

    def _batch_slice(tree: Any, axes: Any, index: int) -> Any:
        if axes is None:
            return tree
        if isinstance(axes, tuple):
            return _rebuild(tree, (_batch_slice(leaf, axis, index) for leaf, axis in zip(tree, axes)))
        return tree[index]

    def _batch_size(tree: Any, axes: Any) -> int:
        if isinstance(axes, tuple):
            sizes = [_batch_size(leaf, axis) for leaf, axis in zip(tree, axes)]
            return max(sizes)
        return -1 if axes is None else len(tree)

    def vmap(function: Callable[..., Any], in_axes: Tuple[Any, ...]) -> Callable[..., Any]:
        """``function`` mapped over axis 0 of the arguments marked 0 in ``in_axes``: a plain loop."""

        def batched(*args: Any) -> Any:
            results = [function(*_batch_slice(args, in_axes, k)) for k in range(_batch_size(args, in_axes))]
            if isinstance(results[0], tuple):
                return tuple(np.stack(parts) for parts in zip(*results))
            return np.stack(results)

        return batched

    def shard(arrays: Tuple[Any, ...], devices: Any = None) -> Tuple[Any, ...]:
        """``arrays`` unchanged (NumPy runs the batch as a loop on the host; ``devices`` is ignored)."""
        return tuple(arrays)
