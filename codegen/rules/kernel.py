"""``@kernel`` functions: plain functions in ``oqupy_numpy``, ``jax.jit`` with static arguments in ``oqupy_jax``."""

from typing import Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen.analysis import KERNEL_MARKER, backend_test, kept_branch
from codegen.rules.base import Example, Idiom, Invalid, Rule

#: annotations of values that cannot be traced: such a parameter must be declared static
UNTRACEABLE = frozenset({"builtins.str", "typing.Callable", "collections.abc.Callable"})
#: the keyword arguments of the marker, and the ``jax.jit`` argument each becomes
MARKER_ARGUMENTS = {"static": "static_argnames", "donate": "donate_argnames"}


def _params(node: cst.FunctionDef) -> list[cst.Param]:
    return [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]


#: what stays static under ``jax.jit`` even for a traced array
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})
_STATIC_CALLS = frozenset({"len", "isinstance"})


def _traced_name(expr: cst.CSTNode, traced: set[str]) -> Optional[str]:
    """A traced name that ``expr``'s value depends on (None: static under tracing)."""
    if isinstance(expr, cst.Name):
        return expr.value if expr.value in traced else None
    if isinstance(expr, cst.Attribute) and expr.attr.value in _STATIC_ATTRIBUTES:
        return None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in _STATIC_CALLS:
        return None
    if isinstance(expr, cst.Comparison) and all(
        isinstance(c.operator, (cst.Is, cst.IsNot)) for c in expr.comparisons
    ):
        return None  # ``x is None``: a tracer is never None
    if isinstance(expr, (cst.Lambda, cst.FunctionDef)):
        return None
    for child in expr.children:
        found = _traced_name(child, traced)
        if found is not None:
            return found
    return None


class _TracedTests(cst.CSTVisitor):
    """The tests (``if``, ``while``, ``x if c else y``) of a kernel body that depend on traced values, with the
    names bound from traced values followed in source order."""

    def __init__(self, traced: set[str], backend_test, backend: str) -> None:
        super().__init__()
        self.traced = set(traced)
        self.backend_test = backend_test
        self.backend = backend
        self.found: list[tuple[cst.CSTNode, str]] = []

    def _test(self, test: cst.BaseExpression) -> None:
        name = _traced_name(test, self.traced)
        if name is not None:
            self.found.append((test, name))

    def visit_If(self, node: cst.If) -> Optional[bool]:
        test = self.backend_test(node.test)
        if test is not None:
            kept = kept_branch(node, test, self.backend)
            if kept is not None:
                kept.visit(self)
            return False
        self._test(node.test)
        return True

    def visit_While(self, node: cst.While) -> None:
        self._test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._test(node.test)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        depends = _traced_name(node.value, self.traced) is not None
        for target in node.targets:
            for name in _bound(target.target):
                (self.traced.add if depends else self.traced.discard)(name)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _traced_name(node.value, self.traced) is not None:
            self.traced.update(_bound(node.target))

    def visit_For(self, node: cst.For) -> None:
        if _traced_name(node.iter, self.traced) is not None:
            self.traced.update(_bound(node.target))


def _bound(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound(e.value)]
    return []


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
        Invalid(
            """
            from oqupy._codegen import kernel


            @kernel
            def f(x: float, n: int):
                if n % 2:
                    return -x
                return x
            """,
            "branch on the traced argument `n`",
        ),
        Invalid(
            """
            import numpy as np
            from oqupy._codegen import kernel


            @kernel(donate=("a",))
            def f(a: np.ndarray) -> np.ndarray:
                return a * 2.0


            A = np.ones(3)
            B = f(A)
            C = A + B
            """,
            "`A` is used after being donated to `f`",
        ),
    )

    def kernel_decorator(self, node: cst.FunctionDef) -> Optional[cst.Decorator]:
        for decorator in node.decorators:
            if self.decorator_marker(decorator) == KERNEL_MARKER:
                return decorator
        return None

    # -- check -------------------------------------------------------------------------------------
    def check_Module(self, node: cst.Module) -> None:
        if not self.in_host:  # arrays used after being donated, at module level
            self.report_findings(node)

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.in_host:  # arrays used after being donated (calls to this module's kernels)
            self.report_findings(node)
        decorator = self.kernel_decorator(node)
        if decorator is None:
            return
        if self.ctx.backend == "jax":
            self._check_traced_branches(node)
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

    def _check_traced_branches(self, node: cst.FunctionDef) -> None:
        """``if`` / ``while`` / conditional expressions whose test depends on a traced argument fail when JAX
        traces the kernel: refuse them here, with the static argument or ``np.where`` as the idiom."""
        traced = {p.name.value for p in _params(node)} - set(self._static(node))
        finder = _TracedTests(traced, lambda test: backend_test(test, self.qname), self.ctx.backend)
        node.body.visit(finder)
        for test, name in finder.found:
            self.report(
                test,
                f"branch on the traced argument `{name}` inside a kernel (JAX cannot decide it while tracing)",
                f'declare it static (`@kernel(static=("{name}",))`) or select with `np.where(cond, a, b)`',
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
