"""Loop primitives: ``scan`` is ``jax.lax.scan`` in ``oqupy_jax`` and a plain Python loop in ``oqupy_numpy``.

Template code never converts loops automatically; a step loop whose carry has a fixed shape is written once
as ``carry, ys = scan(step, carry, xs)`` and each package gets its natural form.

Semantics (both packages): ``step(carry, x) -> (carry, y)`` is called with ``x`` the ``k``-th slice of
``xs`` (``xs`` may be nested tuples; every leaf is indexed along its first axis), for ``k = 0, 1, ...``;
the ``y`` (one array) are stacked along a new first axis.  In ``oqupy_numpy`` the leaves of ``xs`` may be
lists of arrays of different shapes (exact bond dimensions) and the carry may change shape from step to
step; in ``oqupy_jax`` the leaves are stacked arrays and the carry keeps its shape and dtype (pad first).
"""

from oqupy._codegen import BACKEND

__all__ = ["scan"]

if BACKEND == "jax":
    from jax.lax import scan
else:
    from typing import Any, Callable, Tuple

    import numpy as np

    def _first_leaf(tree: Any) -> Any:
        return _first_leaf(tree[0]) if isinstance(tree, tuple) else tree

    def _slice(tree: Any, index: int) -> Any:
        if isinstance(tree, tuple):
            return tuple(_slice(leaf, index) for leaf in tree)
        return tree[index]

    def scan(step: Callable[[Any, Any], Tuple[Any, Any]], carry: Any, xs: Any) -> Tuple[Any, Any]:
        """``(carry, stacked ys)`` of ``step`` applied along the first axis of ``xs``: a plain loop."""
        ys = []
        for index in range(len(_first_leaf(xs))):
            carry, y = step(carry, _slice(xs, index))
            ys.append(y)
        return carry, np.stack(ys) if ys else np.zeros((0,))
