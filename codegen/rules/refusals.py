"""Refusals: constructs whose meaning would differ between the NumPy and the JAX package.

Each rule only checks (no transformer) and reports ``src_template/<file>:<line>:<col>``, the rule and
an idiom that translates safely.  They apply to code that reaches ``oqupy_jax`` outside ``@host``.
"""

from typing import Iterator, Optional

import libcst as cst

from codegen import names
from codegen.analysis import FRESH, PARAM, VIEW, TemplateVisitor, is_simple_index
from codegen.rules.base import Invalid, Rule


class _JaxChecker(TemplateVisitor):
    """Checks only code that reaches the JAX package outside ``@host``."""

    @property
    def active(self) -> bool:
        return self.ctx.backend == "jax" and not self.in_host


def _targets(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    if isinstance(node, cst.Assign):
        yield from (t.target for t in node.targets)
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        yield node.target
    elif isinstance(node, cst.Del):
        yield node.target


class _ArgumentWrite(_JaxChecker):
    RULE = "argument-write"

    def _check(self, node: cst.CSTNode) -> None:
        if not self.active:
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

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)


class ArgumentWrite(Rule):
    """Refuse in-place writes to array arguments (``x[i] = v`` or ``x += v`` on a parameter)."""

    NAME = "argument-write"
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f(x: np.ndarray):\n    x[0] = 1.0\n    return x\n", "argument `x`"
        ),
        Invalid(
            "import numpy as np\n\n\ndef f(x: np.ndarray):\n    x += 1.0\n    return x\n", "argument `x`"
        ),
    )
    Checker = _ArgumentWrite


class _ViewWrite(_JaxChecker):
    RULE = "view-write"

    def _check(self, node: cst.CSTNode) -> None:
        if not self.active:
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

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)


class ViewWrite(Rule):
    """Refuse writes through views (``b = a[0]; b[1] = 5``, ``a.real[...] = v``): JAX never writes through."""

    NAME = "view-write"
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f():\n    a = np.zeros((2, 2))\n    b = a[0]\n    b[1] = 5.0\n    return a\n",
            "write through `b`",
        ),
        Invalid(
            "import numpy as np\n\n\ndef f():\n    a = np.zeros(2)\n    a.real[0] = 1.0\n    return a\n",
            "view `.real`",
        ),
    )
    Checker = _ViewWrite


class _ChainedWrite(_JaxChecker):
    RULE = "chained-write"

    def _chained(self, target: cst.BaseExpression) -> bool:
        return isinstance(target, cst.Subscript) and isinstance(target.value, cst.Subscript)

    def _check(self, node: cst.CSTNode) -> None:
        if not self.active:
            return
        targets = list(_targets(node))
        for target in targets:
            if self._chained(target) and self.arrays.base_status(target):
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

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)

    def visit_Del(self, node: cst.Del) -> None:
        self._check(node)


class ChainedWrite(Rule):
    """Refuse ``a[i][j] = v``, ``a[i] = b[j] = v`` and ``del a[i]`` on arrays."""

    NAME = "chained-write"
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f():\n    a = np.zeros((2, 2))\n    a[0][1] = 1.0\n    return a\n",
            "chained",
        ),
        Invalid(
            "import numpy as np\n\n\ndef f():\n    a = np.zeros(2)\n    del a[0]\n    return a\n", "`del`"
        ),
    )
    Checker = _ChainedWrite


def _basic_index(checker: TemplateVisitor, element: cst.SubscriptElement) -> bool:
    value = element.slice
    if isinstance(value, cst.Slice):
        return True
    expr = value.value
    if isinstance(expr, (cst.Integer, cst.Ellipsis)) or (isinstance(expr, cst.Name) and expr.value == "None"):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, cst.Integer):
        return True
    if isinstance(expr, cst.Name):
        return checker.arrays.status(expr.value) is None
    if isinstance(expr, cst.BinaryOperation):
        return all(
            isinstance(side, (cst.Integer, cst.Name))
            and not (isinstance(side, cst.Name) and checker.arrays.status(side.value))
            for side in (expr.left, expr.right)
        )
    return False


class _IndexChecker(_JaxChecker):
    RULE = "fancy-augmented"

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if not self.active or not isinstance(target, cst.Subscript) or not isinstance(target.value, cst.Name):
            return
        if self.arrays.status(target.value.value) != FRESH:
            return
        if not all(is_simple_index(element) for element in target.slice):
            self.report(
                target,
                "augmented assignment with a computed index (its kind cannot be checked; other operators evaluate it twice)",
                "bind the index to a name first",
            )
        elif not all(_basic_index(self, element) for element in target.slice):
            self.report(
                target,
                "augmented assignment with an array index (duplicates apply once in NumPy, accumulate in JAX)",
                "use basic indices, or `np.add.at` in a @host function",
            )


class FancyAugmented(Rule):
    """Refuse ``x[idx] += v`` with array indices (NumPy and ``.at[].add`` disagree on duplicates)."""

    NAME = "fancy-augmented"
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f():\n    a = np.zeros(3)\n    idx = np.array([0, 0])\n    a[idx] += 1.0\n"
            "    return a\n",
            "array index",
        ),
        Invalid(
            "import numpy as np\n\n\ndef f(g):\n    a = np.zeros(3)\n    a[g(1)] //= 2\n    return a\n",
            "twice",
        ),
    )
    Checker = _IndexChecker


class _InplaceMethod(_JaxChecker):
    RULE = "inplace-method"

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active:
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


class InplaceMethod(Rule):
    """Refuse in-place array methods (``.fill``, ``.sort``, ``.resize``, ``.put``, ...) and ``np.copyto``."""

    NAME = "inplace-method"
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f():\n    a = np.zeros(3)\n    a.fill(2.0)\n    return a\n",
            "`.fill()`",
        ),
        Invalid(
            "import numpy as np\n\n\ndef f(b: np.ndarray):\n    a = np.zeros(3)\n    np.copyto(a, b)\n    return a\n",
            "numpy.copyto",
        ),
    )
    Checker = _InplaceMethod


class _OutArgument(_JaxChecker):
    RULE = "out-argument"

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active or not (self.qname(node.func) or "").split(".")[0] in ("numpy", "scipy"):
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                self.report(
                    arg, "`out=` writes into an existing array", "assign the result: `y = np.add(a, b)`"
                )


class OutArgument(Rule):
    """Refuse ``out=`` arguments of NumPy/SciPy functions."""

    NAME = "out-argument"
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f(a: np.ndarray):\n    y = np.zeros(3)\n    np.exp(a, out=y)\n    return y\n",
            "`out=`",
        ),
    )
    Checker = _OutArgument


class _DataDependent(_JaxChecker):
    RULE = "data-dependent-shape"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.masks: list[set[str]] = [set()]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        self.masks.append(set())
        return super().visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.masks.pop()
        super().leave_FunctionDef(original_node)

    def _is_mask(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Comparison):
            return True
        if isinstance(expr, cst.Call) and self.qname(expr.func) in names.BOOLEAN_CALLS:
            return True
        return isinstance(expr, cst.Name) and expr.value in self.masks[-1]

    def leave_Assign(self, original_node: cst.Assign) -> None:
        super().leave_Assign(original_node)
        for target in original_node.targets:
            if isinstance(target.target, cst.Name):
                if self._is_mask(original_node.value):
                    self.masks[-1].add(target.target.value)
                else:
                    self.masks[-1].discard(target.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        if not (self.active and self.in_kernel):
            return
        qualified = self.qname(node.func)
        one_arg_where = qualified == "numpy.where" and len(node.args) == 1
        if qualified in names.DATA_DEPENDENT or one_arg_where:
            self.report(
                node,
                f"`{qualified}` has a data-dependent output shape inside a kernel",
                "compute it on the host before the kernel, or use `np.where(mask, a, b)`",
            )

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if not (self.active and self.in_kernel) or not self.arrays.base_status(node.value):
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and self._is_mask(element.slice.value):
                self.report(node, "boolean mask index inside a kernel", "use `np.where(mask, value, x)`")


class DataDependentShape(Rule):
    """Refuse data-dependent output shapes inside kernels (``unique``, ``nonzero``, boolean masks)."""

    NAME = "data-dependent-shape"
    INVALID = (
        Invalid(
            "import numpy as np\nfrom oqupy._codegen import kernel\n\n\n@kernel\ndef f(x: np.ndarray) -> np.ndarray:\n"
            "    return np.unique(x)\n",
            "data-dependent output shape",
        ),
        Invalid(
            "import numpy as np\nfrom oqupy._codegen import kernel\n\n\n@kernel\ndef f(x: np.ndarray) -> np.ndarray:\n"
            "    return x[x > 0]\n",
            "boolean mask",
        ),
    )
    Checker = _DataDependent
