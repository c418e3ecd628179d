"""Non-symmetric ``eig`` is routed through one generated helper in ``oqupy_jax``."""

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen import names
from codegen.rules.base import Example, Rule


class RoutedEig(Rule):
    """``numpy.linalg.eig`` / ``scipy.linalg.eig`` -> ``oqupy_jax._linalg.eig`` (CPU, result on the default device).

    Hermitian problems use ``eigh``, which stays native on every device.
    """

    NEEDS = ("numpy.linalg.eig", "scipy.linalg.eig")
    BACKENDS = ("jax",)
    VALID = (
        Example(
            """
            import numpy as np


            def f(x: np.ndarray):
                return np.linalg.eig(x)
            """,
            jax="""
            import jax

            from oqupy_jax import _linalg


            def f(x: jax.Array):
                return _linalg.eig(x)
            """,
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if self.in_host or self.qname(original_node.func) not in names.EIG_NAMES:
            return updated_node
        self.fire()
        AddImportsVisitor.add_needed_import(self.ctx.codemod, self.ctx.package, "_linalg")
        return updated_node.with_changes(func=cst.parse_expression("_linalg.eig"))
