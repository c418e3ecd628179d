"""Refusals: constructs whose meaning would differ between the NumPy and the JAX package.

Each rule only checks (it has no rewrite) and reports ``src_template/<file>:<line>:<col>``, the rule and
an idiom that translates safely.  They apply to code that reaches ``oqupy_jax`` outside ``@host``.
"""

from typing import Iterator, Optional

import libcst as cst

from codegen import names
from codegen.analysis import FRESH, PARAM, VIEW, is_simple_index
from codegen.rules.base import Invalid, Rule


class _Refusal(Rule):
    """Checks only code that reaches the JAX package outside ``@host``."""

    BACKENDS = ("jax",)


def _targets(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    if isinstance(node, cst.Assign):
        yield from (t.target for t in node.targets)
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        yield node.target
    elif isinstance(node, cst.Del):
        yield node.target


class ArgumentWrite(_Refusal):
    """Refuse in-place writes to array arguments (``x[i] = v`` or ``x += v`` on a parameter)."""

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x[0] = 1.0
                return x
            """,
            "argument `x`",
        ),
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x += 1.0
                return x
            """,
            "argument `x`",
        ),
    )

    def check_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def check_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)

    def _check(self, node: cst.Assign | cst.AugAssign) -> None:
        if self.in_host:
            return
        for target in _targets(node):
            written = target.value if isinstance(target, cst.Subscript) else target
            if isinstance(node, cst.AugAssign) or isinstance(target, cst.Subscript):
                if isinstance(written, cst.Name) and self.arrays.status(written.value) == PARAM:
                    self.report(
                        target,
                        f"in-place write to the argument `{written.value}` (NumPy callers would see it, JAX callers not)",
                        f"copy first: `{written.value} = {written.value}.copy()`, and return the result",
                    )


class ViewWrite(_Refusal):
    """Refuse writes through views (``b = a[0]; b[1] = 5``, ``a.real[...] = v``): JAX never writes through."""

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros((2, 2))
                b = a[0]
                b[1] = 5.0
                return a
            """,
            "write through `b`",
        ),
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(2)
                a.real[0] = 1.0
                return a
            """,
            "view `.real`",
        ),
    )

    def check_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def check_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)

    def _check(self, node: cst.Assign | cst.AugAssign) -> None:
        if self.in_host:
            return
        for target in _targets(node):
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute):
                base = target.value
                if self.arrays.base_status(base.value):
                    self.report(
                        target,
                        f"write through the view `.{base.attr.value}`",
                        "build the new array explicitly (e.g. `x = x + 1j * v`) instead of writing into a view",
                    )
                continue
            written = target.value if isinstance(target, cst.Subscript) else target
            if isinstance(node, cst.AugAssign) or isinstance(target, cst.Subscript):
                if isinstance(written, cst.Name) and self.arrays.status(written.value) == VIEW:
                    self.report(
                        target,
                        f"write through `{written.value}`, which may be a view of another array",
                        "write to the base array with one subscript (`a[0, 1] = v`) or take `.copy()` first",
                    )


class ChainedWrite(_Refusal):
    """Refuse ``a[i][j] = v``, ``a[i] = b[j] = v`` and ``del a[i]`` on arrays."""

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros((2, 2))
                a[0][1] = 1.0
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

    def check_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def check_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)

    def check_Del(self, node: cst.Del) -> None:
        self._check(node)

    def _check(self, node: cst.Assign | cst.AugAssign | cst.Del) -> None:
        if self.in_host:
            return
        targets = list(_targets(node))
        for target in targets:
            chained = isinstance(target, cst.Subscript) and isinstance(target.value, cst.Subscript)
            if chained and self.arrays.base_status(target):
                self.report(target, "chained subscript write", "use one subscript: `a[i, j] = v`")
            elif (
                isinstance(node, cst.Del)
                and isinstance(target, cst.Subscript)
                and self.arrays.base_status(target)
            ):
                self.report(
                    target, "`del` on an array element", "build a new array (`np.delete` or indexing)"
                )
        if isinstance(node, cst.Assign) and len(targets) > 1:
            if any(isinstance(t, cst.Subscript) and self.arrays.base_status(t) for t in targets):
                self.report(
                    node, "chained assignment into an array", "assign each target in its own statement"
                )


class FancyAugmented(_Refusal):
    """Refuse ``x[idx] += v`` with array indices (NumPy and ``.at[].add`` disagree on duplicates)."""

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                idx = np.array([0, 0])
                a[idx] += 1.0
                return a
            """,
            "array index",
        ),
        Invalid(
            """
            import numpy as np


            def f(g):
                a = np.zeros(3)
                a[g(1)] //= 2
                return a
            """,
            "twice",
        ),
    )

    def check_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if self.in_host or not isinstance(target, cst.Subscript) or not isinstance(target.value, cst.Name):
            return
        if self.arrays.status(target.value.value) != FRESH:
            return
        if not all(is_simple_index(element) for element in target.slice):
            self.report(
                target,
                "augmented assignment with a computed index (its kind cannot be checked; other operators evaluate it twice)",
                "bind the index to a name first",
            )
        elif not all(self._basic_index(element) for element in target.slice):
            self.report(
                target,
                "augmented assignment with an array index (duplicates apply once in NumPy, accumulate in JAX)",
                "use basic indices, or `np.add.at` in a @host function",
            )

    def _basic_index(self, element: cst.SubscriptElement) -> bool:
        value = element.slice
        if isinstance(value, cst.Slice):
            return True
        expr = value.value
        if isinstance(expr, (cst.Integer, cst.Ellipsis)) or (
            isinstance(expr, cst.Name) and expr.value == "None"
        ):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, cst.Integer):
            return True
        if isinstance(expr, cst.Name):
            return self.arrays.status(expr.value) is None
        if isinstance(expr, cst.BinaryOperation):
            return all(
                isinstance(side, (cst.Integer, cst.Name))
                and not (isinstance(side, cst.Name) and self.arrays.status(side.value))
                for side in (expr.left, expr.right)
            )
        return False


class InplaceMethod(_Refusal):
    """Refuse in-place array methods (``.fill``, ``.sort``, ``.resize``, ``.put``, ...) and ``np.copyto``."""

    INVALID = (
        Invalid(
            """
            import numpy as np


            def f():
                a = np.zeros(3)
                a.fill(2.0)
                return a
            """,
            "`.fill()`",
        ),
        Invalid(
            """
            import numpy as np


            def f(b: np.ndarray):
                a = np.zeros(3)
                np.copyto(a, b)
                return a
            """,
            "numpy.copyto",
        ),
    )

    def check_Call(self, node: cst.Call) -> None:
        if self.in_host:
            return
        func = node.func
        if self.qname(func) in names.INPLACE_FUNCTIONS:
            self.report(
                node, f"`{self.qname(func)}` writes into its argument", "build the result as a new array"
            )
        elif isinstance(func, cst.Attribute) and func.attr.value in names.INPLACE_METHODS:
            if self.arrays.base_status(func.value):
                self.report(
                    node,
                    f"in-place method `.{func.attr.value}()` on an array",
                    "use the functional form (`np.sort(x)`, `np.full_like(x, v)`, `x.reshape(...)`)",
                )


class OutArgument(_Refusal):
    """Refuse ``out=`` arguments of NumPy/SciPy functions."""

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
    )

    def check_Call(self, node: cst.Call) -> None:
        if self.in_host or (self.qname(node.func) or "").split(".")[0] not in ("numpy", "scipy"):
            return
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
        if self.in_host or not self.in_kernel or not self.arrays.base_status(node.value):
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and self._is_mask(element.slice.value):
                self.report(node, "boolean mask index inside a kernel", "use `np.where(mask, value, x)`")
