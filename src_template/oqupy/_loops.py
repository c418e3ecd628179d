"""Loop primitives: ``scan``, ``fori_loop``, ``cond`` and ``vmap`` are ``jax.lax.scan``, ``jax.lax.fori_loop``,
``jax.lax.cond`` and ``jax.vmap`` in ``oqupy_jax`` and plain Python loops and branches in ``oqupy_numpy``;
``replace`` writes one entry of a sequence of tensors (``.at[index].set`` on a stacked array in ``oqupy_jax``, a
new list in ``oqupy_numpy``).

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

``fori_loop(lower, upper, body, init)`` returns ``body(upper - 1, ... body(lower, init))``; the bounds may be
traced integers in ``oqupy_jax`` (a while loop: one compilation for every trip count), and in ``oqupy_numpy`` the
carry may change shape from one index to the next.  ``cond(pred, if_true, if_false, *operands)`` calls one of the
two functions (in ``oqupy_jax`` both must return the same shapes).  ``replace(items, index, value)`` returns
``items`` with entry ``index`` replaced: a stacked array in ``oqupy_jax`` (``value`` has the entries' padded
shape), a list of arrays of any shapes (or an array) in ``oqupy_numpy``; ``items`` itself is never written.

``trimmed(body, sizes, axes, *operands)`` returns ``body(*operands)`` for operands whose bond axes are padded
with zeros (``axes[i]``: the bond axes of operand ``i``): in ``oqupy_jax`` each operand is cut along its bond axes
to the smallest of the static ``sizes`` that holds all of its non-zero entries, ``body`` runs at that size (one
``jax.lax.switch`` branch per size, only the taken one runs) and its outputs are padded with zeros back to the
shapes they have at full size; in ``oqupy_numpy``, whose bonds are exact, it is ``body(*operands)``.  ``body``
must give the full-size result padded with zeros when its inputs are (a truncated SVD that masks both factors
does).

``vmap(function, in_axes)`` maps ``function`` over axis 0 of the arguments whose ``in_axes`` entry is 0 (``None``:
shared; nested tuples follow nested tuple arguments) and stacks each output (an array or a tuple of arrays)
along a new first axis.
"""

from oqupy._codegen import BACKEND

__runs_on__ = "device"

__all__ = ["cond", "fori_loop", "replace", "scan", "shard", "trimmed", "vmap"]

if BACKEND == "jax":
    from typing import Any, Callable, Sequence, Tuple

    import jax
    import jax.numpy as jnp
    from jax import vmap
    from jax.lax import cond, fori_loop, scan
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    def replace(items: Any, index: Any, value: Any) -> Any:
        """``items`` (a stacked array) with entry ``index`` set to ``value``."""
        return items.at[index].set(value)

    def _used(array: Any, axes: Sequence[int]) -> Any:
        """The number of leading entries along ``axes`` that hold the non-zero entries of ``array`` (the largest)."""
        used = jnp.zeros((), dtype=int)
        for axis in axes:
            others = tuple(other for other in range(array.ndim) if other != axis)
            nonzero = jnp.any(array != 0, axis=others)
            used = jnp.maximum(used, jnp.max(jnp.where(nonzero, jnp.arange(1, array.shape[axis] + 1), 0)))
        return used

    def _cut(array: Any, axes: Sequence[int], size: int) -> Any:
        """``array`` with its ``axes`` cut to their first ``size`` entries (static slices)."""
        return array[tuple(slice(0, size) if axis in axes else slice(None) for axis in range(array.ndim))]

    def _padded(array: Any, shape: Any) -> Any:
        """``array`` padded with zeros at the end of each axis to the shape of ``shape`` (a ``ShapeDtypeStruct``)."""
        if array.shape == shape.shape:
            return array
        return jnp.pad(array, [(0, full - part) for part, full in zip(array.shape, shape.shape)])

    def trimmed(
        body: Callable[..., Any], sizes: Sequence[int], axes: Sequence[Sequence[int]], *operands: Any
    ) -> Any:
        """``body(*operands)``, run on the operands cut along their bond ``axes`` to the smallest of ``sizes`` that
        holds their non-zero entries, and padded back to its full-size shapes."""
        shapes = jax.eval_shape(body, *operands)
        used = jnp.max(jnp.stack([_used(operand, bonds) for operand, bonds in zip(operands, axes) if bonds]))
        choice = jnp.minimum(jnp.searchsorted(jnp.asarray(sizes), used), len(sizes) - 1)

        def branch(size: int) -> Callable[..., Any]:
            def run(*operands: Any) -> Any:
                cut = [_cut(operand, bonds, size) for operand, bonds in zip(operands, axes)]
                return jax.tree.map(_padded, body(*cut), shapes)

            return run

        return jax.lax.switch(choice, [branch(size) for size in sizes], *operands)

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

    def fori_loop(lower: Any, upper: Any, body: Callable[[int, Any], Any], init: Any) -> Any:
        """``body(index, carry)`` for ``index = lower ... upper - 1``: a plain loop."""
        carry = init
        for index in range(int(lower), int(upper)):
            carry = body(index, carry)
        return carry

    def cond(pred: Any, if_true: Callable[..., Any], if_false: Callable[..., Any], *operands: Any) -> Any:
        """``if_true(*operands)`` if ``pred`` else ``if_false(*operands)``: a plain branch."""
        return if_true(*operands) if bool(pred) else if_false(*operands)

    def replace(items: Any, index: Any, value: Any) -> Any:
        """A copy of ``items`` (a list or an array) with entry ``index`` set to ``value``."""
        items = list(items) if isinstance(items, list) else np.array(items)
        items[int(index)] = value
        return items

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

    def trimmed(body: Callable[..., Any], sizes: Any, axes: Any, *operands: Any) -> Any:
        """``body(*operands)``: the bonds are exact (``sizes`` and ``axes`` are for ``oqupy_jax``)."""
        return body(*operands)

    def shard(arrays: Tuple[Any, ...], devices: Any = None) -> Tuple[Any, ...]:
        """``arrays`` unchanged (NumPy runs the batch as a loop on the host; ``devices`` is ignored)."""
        return tuple(arrays)
