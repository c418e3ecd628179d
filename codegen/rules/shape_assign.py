"""``x.shape = s`` on a local array becomes ``x = x.reshape(s)`` in both packages."""

from typing import Optional

import libcst as cst

from codegen.analysis import FRESH
from codegen.rules.base import Example, Invalid, Rule


def _shape_target(node: cst.Assign) -> Optional[cst.Attribute]:
    if len(node.targets) == 1:
        target = node.targets[0].target
        if isinstance(target, cst.Attribute) and target.attr.value == "shape":
            return target
    return None


class ShapeAssign(Rule):
    """Rewrite ``x.shape = s`` on local arrays to ``x = x.reshape(s)``; refuse it anywhere else."""

    NEEDS = ("<shape-write>",)
    VALID = (
        Example(
            """
            import numpy as np


            def f():
                x = np.zeros(4)
                x.shape = (2, 2)
                return x
            """,
            numpy="""
            import numpy as np


            def f():
                x = np.zeros(4)
                x = x.reshape((2, 2))
                return x
            """,
            jax="""
            import jax.numpy as jnp


            def f():
                x = jnp.zeros(4)
                x = x.reshape((2, 2))
                return x
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x.shape = (2, 2)
                return x
            """,
            "`.shape =`",
        ),
        Invalid(
            """
            class A:
                def f(self):
                    self.x.shape = (2, 2)
            """,
            "`.shape =`",
            backend="numpy",
        ),
    )

    def _local(self, target: Optional[cst.Attribute]) -> bool:
        return (
            target is not None
            and isinstance(target.value, cst.Name)
            and self.arrays.status(target.value.value) == FRESH
        )

    def check_Assign(self, node: cst.Assign) -> None:
        target = _shape_target(node)
        if target is not None and not self.in_host and not self._local(target):
            self.report(
                target,
                "`.shape =` on something that is not a local array (an argument, a view or an attribute)",
                "reshape a local copy: `y = x.reshape(s)`",
            )

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        if not self._local(_shape_target(original_node)):
            return updated_node
        self.fire()
        name = updated_node.targets[0].target.value
        reshape = cst.Call(
            func=cst.Attribute(value=name, attr=cst.Name("reshape")), args=[cst.Arg(updated_node.value)]
        )
        return cst.Assign(targets=[cst.AssignTarget(target=name)], value=reshape)
