"""``a[i][j] = v`` written ``a[i, j] = v``; other chained subscript writes refused."""

import libcst as cst

from codegen.rules.base import Example, Idiom, Invalid
from codegen.rules.refusal_base import _FlowRefusal


class ChainedWrite(_FlowRefusal):
    """Write ``a[i][j] = v`` as ``a[i, j] = v`` when every inner index is an integer (``a[i]`` is then a view of
    ``a``, so the two mean the same in NumPy); refuse other chained subscript writes (``a[1:3][0] = v``,
    ``a[idx][0] = v``), ``a[i] = b[j] = v``, ``del a[i]`` on arrays and subscripts in tuple targets
    (``a[0], a[1] = a[1], a[0]``: NumPy assigns one after the other, through views)."""

    NEEDS = ("<chained-write>",)
    MAY_BE_IDLE = True
    VALID = (
        Example(
            """
            import numpy as np


            def f(v: float):
                a = np.zeros((2, 3))
                a[1][-1] = v
                a[0][1] += 2.0
                return a
            """,
            jax="""
            import jax.numpy as jnp


            def f(v: float):
                a = jnp.zeros((2, 3))
                a = a.at[1, -1].set(v)
                a = a.at[0, 1].add(2.0)
                return a
            """,
        ),
        Example(  # an annotated write (the only write of its module): the annotation is never stored
            """
            import numpy as np


            def f(v: float):
                a = np.zeros((2, 3))
                a[1][2]: float = v
                return a
            """,
            jax="""
            import jax.numpy as jnp


            def f(v: float):
                a = jnp.zeros((2, 3))
                a = a.at[1, 2].set(v)
                return a
            """,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flat: list[set[int]] = []

    def _enter(self, node: cst.Module | cst.FunctionDef) -> None:
        self.flat.append(set() if self.in_host else self.flow(node, cache=False).flattened)

    def visit_Module(self, node: cst.Module) -> None:
        self._enter(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.flat.pop()
        return updated_node

    def _flat(self, original: cst.CSTNode, target: cst.BaseExpression) -> cst.BaseExpression:
        if id(original) not in self.flat[-1] or not isinstance(target, cst.Subscript):
            return target
        inner: list[cst.SubscriptElement] = []
        base = target.value
        while isinstance(base, cst.Subscript):
            inner = [*base.slice, *inner]
            base = base.value
        self.fire()
        return target.with_changes(value=base, slice=[*inner, *target.slice])

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        if len(updated_node.targets) != 1:
            return updated_node
        target = updated_node.targets[0]
        return updated_node.with_changes(
            targets=[target.with_changes(target=self._flat(original_node, target.target))]
        )

    def leave_AugAssign(self, original_node: cst.AugAssign, updated_node: cst.AugAssign):
        return updated_node.with_changes(target=self._flat(original_node, updated_node.target))

    def leave_AnnAssign(self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign):
        return updated_node.with_changes(target=self._flat(original_node, updated_node.target))

    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f():
                a = np.arange(4.0)
                a[0], a[1] = a[1], a[0]
                return a
            """,
            """
            import numpy as np


            def f():
                a = np.arange(4.0)
                first, second = a[1], a[0]
                a[0] = first
                a[1] = second
                return a
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros((2, 2))
                a[0:1][0] = 1.0
                return a
            """,
            "chained",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(2)
                del a[0]
                return a
            """,
            "`del`",
        ),
    )
