"""``@kernel`` functions: plain functions in ``oqupy_numpy``, ``jax.jit`` with static arguments in ``oqupy_jax``."""

from typing import Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen.analysis import KERNEL_MARKER
from codegen.rules.base import Example, Invalid, Rule

STATIC_TYPES = frozenset(
    {
        "builtins.int",
        "builtins.bool",
        "builtins.str",
        "builtins.tuple",
        "typing.Tuple",
        "typing.Callable",
        "collections.abc.Callable",
    }
)


def _params(node: cst.FunctionDef) -> list[cst.Param]:
    return [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]


def _donated(decorator: cst.Decorator) -> list[str]:
    call = decorator.decorator
    if not isinstance(call, cst.Call):
        return []
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "donate":
            elements = arg.value.elements if isinstance(arg.value, (cst.Tuple, cst.List)) else []
            return [e.value.evaluated_value for e in elements if isinstance(e.value, cst.SimpleString)]
    return []


class _KernelInfo:
    """Mixin of KernelJit (kept separate until statics are declared explicitly)."""

    def kernel_decorator(self, node: cst.FunctionDef) -> Optional[cst.Decorator]:
        for decorator in node.decorators:
            if self.decorator_marker(decorator) == KERNEL_MARKER:
                return decorator
        return None

    def static_names(self, node: cst.FunctionDef) -> list[str]:
        static = []
        for param in _params(node):
            if param.annotation is None:
                continue
            if self.is_static(param.annotation.annotation):
                static.append(param.name.value)
        return static

    def is_static(self, expr: cst.BaseExpression) -> bool:
        """int/bool/str/Callable, and Optional/Tuple of static types (``Tuple[np.ndarray, ...]`` is not)."""
        if isinstance(expr, cst.Ellipsis):
            return True
        if not isinstance(expr, cst.Subscript):
            return self.qname(expr) in STATIC_TYPES
        outer = self.qname(expr.value)
        if outer in ("typing.Callable", "collections.abc.Callable"):
            return True
        if outer in ("typing.Optional", "typing.Tuple", "builtins.tuple"):
            return all(isinstance(e.slice, cst.Index) and self.is_static(e.slice.value) for e in expr.slice)
        return False


def _names_tuple(items: list[str]) -> cst.Tuple:
    elements = [cst.Element(cst.SimpleString(f'"{name}"')) for name in items]
    if len(elements) == 1:
        elements[0] = elements[0].with_changes(comma=cst.Comma())
    return cst.Tuple(elements)


class KernelJit(_KernelInfo, Rule):
    """``@kernel`` -> ``@partial(jax.jit, static_argnames=(...))`` in ``oqupy_jax``; removed in ``oqupy_numpy``.

    Static arguments are the parameters annotated ``int``, ``bool``, ``str``, ``tuple`` or ``Callable``
    (printed in the decorator, so recompilation triggers are visible); ``@kernel(donate=("x",))`` adds
    ``donate_argnames``.  Kernels are module-level, so the wrappers exist once, at import.
    """

    NEEDS = ("oqupy._codegen.kernel",)
    VALID = (
        Example(
            template=(
                "import numpy as np\n\nfrom oqupy._codegen import kernel\n\n\n@kernel\n"
                "def f(x: np.ndarray, n: int) -> np.ndarray:\n    return x * n\n"
            ),
            numpy="import numpy as np\n\n\n\ndef f(x: np.ndarray, n: int) -> np.ndarray:\n    return x * n\n",
            jax=(
                "from functools import partial\n\nimport jax\n\n\n"
                '@partial(jax.jit, static_argnames=("n",))\ndef f(x: jax.Array, n: int) -> jax.Array:\n    return x * n\n'
            ),
        ),
    )
    INVALID = (
        Invalid(
            "from oqupy._codegen import kernel\n\n\nclass A:\n    @kernel\n    def f(self, x: float):\n        return x\n",
            "nested function or method",
            backend="numpy",
        ),
        Invalid(
            "from oqupy._codegen import kernel\n\n\n@kernel\ndef f(x):\n    return x\n",
            "no annotation",
            "numpy",
        ),
    )

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        decorator = self.kernel_decorator(node)
        if decorator is None:
            return
        if len(self.scopes) > 1:  # scopes[-1] is the kernel itself
            self.report(
                decorator, "@kernel on a nested function or method", "make it a module-level function"
            )
        params = _params(node)
        for param in params:
            if param.annotation is None:
                self.report(param, f"kernel parameter `{param.name.value}` has no annotation", "annotate it")
        for name in _donated(decorator):
            if name not in {p.name.value for p in params}:
                self.report(decorator, f"donated `{name}` is not a parameter", "name an array parameter")

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        decorator = self.kernel_decorator(original_node)
        if decorator is None:
            return updated_node
        self.fire()
        index = list(original_node.decorators).index(decorator)
        decorators = list(updated_node.decorators)
        if self.ctx.backend != "jax":
            del decorators[index]
            return updated_node.with_changes(decorators=decorators)
        AddImportsVisitor.add_needed_import(self.ctx.codemod, "jax")
        static = self.static_names(original_node)
        donated = _donated(decorator)
        if not static and not donated:
            decorators[index] = cst.Decorator(cst.parse_expression("jax.jit"))
        else:
            AddImportsVisitor.add_needed_import(self.ctx.codemod, "functools", "partial")
            args = [cst.Arg(cst.parse_expression("jax.jit"))]
            eq = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
            if static:
                args.append(cst.Arg(_names_tuple(static), keyword=cst.Name("static_argnames"), equal=eq))
            if donated:
                args.append(cst.Arg(_names_tuple(donated), keyword=cst.Name("donate_argnames"), equal=eq))
            decorators[index] = cst.Decorator(cst.Call(func=cst.Name("partial"), args=args))
        return updated_node.with_changes(decorators=decorators)
