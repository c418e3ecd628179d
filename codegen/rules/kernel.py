"""``@kernel`` functions: plain functions in ``oqupy_numpy``, ``jax.jit`` with static arguments in ``oqupy_jax``."""

from typing import Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen.analysis import KERNEL_MARKER
from codegen.rules.base import Example, Idiom, Invalid, Rule

#: annotations of values that cannot be traced: such a parameter must be declared static
UNTRACEABLE = frozenset({"builtins.str", "typing.Callable", "collections.abc.Callable"})
#: the keyword arguments of the marker, and the ``jax.jit`` argument each becomes
MARKER_ARGUMENTS = {"static": "static_argnames", "donate": "donate_argnames"}


def _params(node: cst.FunctionDef) -> list[cst.Param]:
    return [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]


def _string_tuple(value: cst.BaseExpression) -> Optional[list[str]]:
    """The strings of a tuple or list of plain string literals; None for anything else."""
    if not isinstance(value, (cst.Tuple, cst.List)):
        return None
    strings = [element.value for element in value.elements]
    if not all(isinstance(s, cst.SimpleString) and isinstance(s.evaluated_value, str) for s in strings):
        return None
    return [s.evaluated_value for s in strings]


def _names_tuple(items: list[str]) -> cst.Tuple:
    elements = [cst.Element(cst.SimpleString(f'"{name}"')) for name in items]
    if len(elements) == 1:
        elements[0] = elements[0].with_changes(comma=cst.Comma())
    return cst.Tuple(elements)


class KernelJit(Rule):
    """``@kernel`` -> ``@jax.jit`` in ``oqupy_jax``; removed in ``oqupy_numpy``.

    ``@kernel(static=("n",))`` declares the static arguments, written into ``static_argnames`` (each new value
    recompiles, so the decorator shows the recompilation triggers); every other argument is traced.
    ``@kernel(donate=("x",))`` adds ``donate_argnames``; a caller in the same module that still reads the
    donated array after the call is refused (JAX deletes the buffer).  Both take a tuple of parameter names as string
    literals.  A parameter annotated ``str`` or ``Callable`` cannot be traced and must be declared static.
    Kernels are module-level, so the wrappers exist once, at import.
    """

    NEEDS = ("oqupy._codegen.kernel",)
    VALID = (
        Example(
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel(static=("n",))
            def f(x: np.ndarray, n: int, scale: float) -> np.ndarray:
                return x * n * scale
            """,
            numpy="""
            import numpy as np


            def f(x: np.ndarray, n: int, scale: float) -> np.ndarray:
                return x * n * scale
            """,
            jax="""
            from functools import partial

            import jax


            @partial(jax.jit, static_argnames=("n",))
            def f(x: jax.Array, n: int, scale: float) -> jax.Array:
                return x * n * scale
            """,
        ),
        Example(
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel
            def g(x: np.ndarray, rank: int) -> np.ndarray:
                return x[:rank]


            @kernel(donate=("x",))
            def h(x: np.ndarray) -> np.ndarray:
                return 2 * x
            """,
            jax="""
            from functools import partial

            import jax


            @jax.jit
            def g(x: jax.Array, rank: int) -> jax.Array:
                return x[:rank]


            @partial(jax.jit, donate_argnames=("x",))
            def h(x: jax.Array) -> jax.Array:
                return 2 * x
            """,
        ),
    )
    IDIOMS = (
        Idiom(
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel(donate=("x",))
            def double(x: np.ndarray) -> np.ndarray:
                return 2 * x


            def f(a: np.ndarray):
                b = double(a)
                return a + b
            """,
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel(donate=("x",))
            def double(x: np.ndarray) -> np.ndarray:
                return 2 * x


            def f(a: np.ndarray):
                total = a + 0.0
                a = double(a)
                return total + a
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            from oqupy._codegen import kernel


            class A:
                @kernel
                def f(self, x: float):
                    return x
            """,
            "nested function or method",
            backend="numpy",
        ),
        Invalid(
            """
            from oqupy._codegen import kernel


            @kernel
            def f(x):
                return x
            """,
            "no annotation",
            backend="numpy",
        ),
        Invalid(
            """
            from oqupy._codegen import kernel


            @kernel(static=("m",))
            def f(x: float, n: int):
                return x * n
            """,
            "static `m` is not a parameter",
        ),
        Invalid(
            """
            from oqupy._codegen import kernel


            @kernel(donate="x")
            def f(x: float):
                return x
            """,
            "`donate=` must be a tuple of parameter names",
        ),
        Invalid(
            """
            from typing import Callable

            from oqupy._codegen import kernel


            @kernel
            def f(g: Callable[[float], float], x: float):
                return g(x)
            """,
            "`g` cannot be traced",
        ),
    )

    def kernel_decorator(self, node: cst.FunctionDef) -> Optional[cst.Decorator]:
        for decorator in node.decorators:
            if self.decorator_marker(decorator) == KERNEL_MARKER:
                return decorator
        return None

    # -- check -------------------------------------------------------------------------------------
    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.in_host:  # arrays used after being donated (calls to this module's kernels)
            for problem in self.flow(node).problems.values():
                if problem.rule == self.NAME:
                    self.report(problem.node, problem.message, problem.idiom)
        decorator = self.kernel_decorator(node)
        if decorator is None:
            return
        if len(self.scopes) > 1:  # scopes[-1] is the kernel itself
            self.report(
                decorator, "@kernel on a nested function or method", "make it a module-level function"
            )
        params = {param.name.value: param for param in _params(node)}
        for param in params.values():
            if param.annotation is None:
                self.report(param, f"kernel parameter `{param.name.value}` has no annotation", "annotate it")
        declared = self._check_marker_arguments(decorator, params)
        for name, param in params.items():
            if param.annotation is not None and name not in declared.get("static", ()):
                annotation = param.annotation.annotation
                if isinstance(annotation, cst.Subscript):
                    annotation = annotation.value
                if self.qname(annotation) in UNTRACEABLE:
                    self.report(
                        param,
                        f"kernel parameter `{name}` cannot be traced (annotated `{self.qname(annotation)}`)",
                        f'declare it static: `@kernel(static=("{name}",))`',
                    )

    def _check_marker_arguments(self, decorator: cst.Decorator, params: dict) -> dict[str, list[str]]:
        declared: dict[str, list[str]] = {}
        call = decorator.decorator
        for arg in call.args if isinstance(call, cst.Call) else ():
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword not in MARKER_ARGUMENTS:
                self.report(arg, "@kernel takes only `static=` and `donate=`", '`@kernel(static=("n",))`')
                continue
            names = _string_tuple(arg.value)
            if names is None:
                self.report(
                    arg,
                    f"`{keyword}=` must be a tuple of parameter names as string literals",
                    f'`@kernel({keyword}=("x",))`',
                )
                continue
            for name in names:
                if name not in params:
                    self.report(
                        arg, f"{keyword} `{name}` is not a parameter", "name a parameter of the kernel"
                    )
            declared[keyword] = names
        return declared

    # -- rewrite -----------------------------------------------------------------------------------
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
        call = decorator.decorator
        given = {
            arg.keyword.value: _string_tuple(arg.value) or []
            for arg in (call.args if isinstance(call, cst.Call) else ())
            if arg.keyword is not None and arg.keyword.value in MARKER_ARGUMENTS
        }
        eq = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        jit_arguments = [
            cst.Arg(_names_tuple(given[marker]), keyword=cst.Name(keyword), equal=eq)
            for marker, keyword in MARKER_ARGUMENTS.items()
            if given.get(marker)
        ]
        if not jit_arguments:
            decorators[index] = cst.Decorator(cst.parse_expression("jax.jit"))
        else:
            AddImportsVisitor.add_needed_import(self.ctx.codemod, "functools", "partial")
            args = [cst.Arg(cst.parse_expression("jax.jit")), *jit_arguments]
            decorators[index] = cst.Decorator(cst.Call(func=cst.Name("partial"), args=args))
        return updated_node.with_changes(decorators=decorators)
