"""``x.shape = s`` on a local array becomes ``x = x.reshape(s)`` in both packages."""

import libcst as cst

from codegen.analysis import FRESH, TemplateTransformer, TemplateVisitor
from codegen.rules.base import Example, Invalid, Rule


def _shape_target(node: cst.Assign):
    if len(node.targets) == 1:
        target = node.targets[0].target
        if isinstance(target, cst.Attribute) and target.attr.value == "shape":
            return target
    return None


class _Checker(TemplateVisitor):
    RULE = "shape-assign"

    def visit_Assign(self, node: cst.Assign) -> None:
        target = _shape_target(node)
        if target is None or self.in_host:
            return
        if not (isinstance(target.value, cst.Name) and self.arrays.status(target.value.value) == FRESH):
            self.report(
                target,
                "`.shape =` on something that is not a local array (an argument, a view or an attribute)",
                "reshape a local copy: `y = x.reshape(s)`",
            )


class _Reshape(TemplateTransformer):
    RULE = "shape-assign"

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        target = _shape_target(original_node)
        local = (
            target is not None
            and isinstance(target.value, cst.Name)
            and self.arrays.status(target.value.value) == FRESH
        )
        result = super().leave_Assign(original_node, updated_node)
        if not local:
            return result
        self.fire()
        name = target.value
        reshape = cst.Call(
            func=cst.Attribute(value=name, attr=cst.Name("reshape")), args=[cst.Arg(updated_node.value)]
        )
        return cst.Assign(targets=[cst.AssignTarget(target=name)], value=reshape)


class ShapeAssign(Rule):
    """Rewrite ``x.shape = s`` on local arrays to ``x = x.reshape(s)``; refuse it anywhere else."""

    NAME = "shape-assign"
    NEEDS = ("<shape-write>",)
    VALID = (
        Example(
            template="import numpy as np\n\n\ndef f():\n    x = np.zeros(4)\n    x.shape = (2, 2)\n    return x\n",
            numpy="import numpy as np\n\n\ndef f():\n    x = np.zeros(4)\n    x = x.reshape((2, 2))\n    return x\n",
            jax="import jax.numpy as jnp\n\n\ndef f():\n    x = jnp.zeros(4)\n    x = x.reshape((2, 2))\n    return x\n",
        ),
    )
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f(x: np.ndarray):\n    x.shape = (2, 2)\n    return x\n",
            "`.shape =`",
        ),
        Invalid("class A:\n    def f(self):\n        self.x.shape = (2, 2)\n", "`.shape =`", backend="numpy"),
    )
    Checker = _Checker
    Transformer = _Reshape
