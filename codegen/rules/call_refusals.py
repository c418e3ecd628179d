"""Refusals of calls and subscripts: ``out=`` arguments, data-dependent shapes inside kernels.

Like :mod:`codegen.rules.refusals`, these only check, in code that reaches ``oqupy_jax`` outside ``@host``.
"""

import libcst as cst

from codegen import names
from codegen.flow import ufunc_inputs
from codegen.rules.base import Invalid
from codegen.rules.refusal_base import _Refusal


class OutArgument(_Refusal):
    """Refuse ``out=`` arguments of NumPy/SciPy functions, also given by position to a ufunc (``np.exp(a, b)``)."""

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(a: np.ndarray):
                y = np.zeros(3)
                np.exp(a, out=y)
                return y
            """,
            "`out=`",
        ),
        Invalid(
            """
            import numpy as np


            def f(a: np.ndarray):
                y = np.zeros(3)
                np.exp(a, y)
                return y
            """,
            "positional `out`",
        ),
    )

    def check_Call(self, node: cst.Call) -> None:
        if self.in_host or (self.qname(node.func) or "").split(".")[0] not in ("numpy", "scipy"):
            return
        inputs = ufunc_inputs(self.qname(node.func))
        positional = [arg for arg in node.args if arg.keyword is None]
        if inputs is not None and len(positional) > inputs:
            self.report(
                positional[inputs],
                f"positional `out` argument of the ufunc `{self.qname(node.func)}`",
                "assign the result: `y = np.exp(a)`",
            )
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                self.report(
                    arg, "`out=` writes into an existing array", "assign the result: `y = np.add(a, b)`"
                )


class DataDependentShape(_Refusal):
    """Refuse data-dependent output shapes inside kernels (``unique``, ``nonzero``, boolean masks)."""

    INVALID = (
        Invalid(
            """
            import numpy as np
            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray) -> np.ndarray:
                return np.unique(x)
            """,
            "data-dependent output shape",
        ),
        Invalid(
            """
            import numpy as np
            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray) -> np.ndarray:
                return x[x > 0]
            """,
            "boolean mask",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.masks: list[set[str]] = [set()]  # per function: names bound to boolean masks

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.masks.append(set())

    def check_leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.masks.pop()

    def check_leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if self._is_mask(node.value):
                    self.masks[-1].add(target.target.value)
                else:
                    self.masks[-1].discard(target.target.value)

    def _is_mask(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Comparison):
            return True
        if isinstance(expr, cst.Call) and self.qname(expr.func) in names.BOOLEAN_CALLS:
            return True
        return isinstance(expr, cst.Name) and expr.value in self.masks[-1]

    def check_Call(self, node: cst.Call) -> None:
        if self.in_host or not self.in_kernel:
            return
        qualified = self.qname(node.func)
        one_arg_where = qualified == "numpy.where" and len(node.args) == 1
        if qualified in names.DATA_DEPENDENT or one_arg_where:
            self.report(
                node,
                f"`{qualified}` has a data-dependent output shape inside a kernel",
                "compute it on the host before the kernel, or use `np.where(mask, a, b)`",
            )

    def check_Subscript(self, node: cst.Subscript) -> None:
        if self.in_host or not self.in_kernel or id(node) not in self.current_flow().array_subscripts:
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and self._is_mask(element.slice.value):
                self.report(node, "boolean mask index inside a kernel", "use `np.where(mask, value, x)`")
