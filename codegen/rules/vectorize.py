"""Every ``vectorize`` gets an explicit ``signature=``, derived from the callable's annotation."""

from typing import Optional

import libcst as cst

from codegen.analysis import TemplateTransformer, TemplateVisitor
from codegen.rules.base import Example, Invalid, Rule

CALLABLES = frozenset({"typing.Callable", "collections.abc.Callable"})
SCALARS = frozenset({"builtins.float", "builtins.complex", "builtins.int", "builtins.bool"})
CORES = {"oqupy._types.Matrix": "(m,m)", "oqupy._types.Vector": "(m)"}
VECTORIZE = "numpy.vectorize"


class _Annotations:
    """Mixin: annotations of the parameters and annotated locals visible in the current function."""

    def _init_annotations(self) -> None:
        self.annotations: list[dict[str, cst.BaseExpression]] = [{}]

    def _push(self, node: cst.FunctionDef) -> None:
        scope = dict(self.annotations[-1])
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if param.annotation is not None:
                scope[param.name.value] = param.annotation.annotation
        self.annotations.append(scope)

    def _record(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.annotations[-1][node.target.value] = node.annotation.annotation

    def _core(self, expr: cst.BaseExpression) -> Optional[str]:
        qualified = self.qname(expr)
        if qualified in SCALARS:
            return "()"
        return CORES.get(qualified or "")

    def signature_of(self, call: cst.Call) -> tuple[Optional[str], str]:
        """(signature, reason it could not be derived)."""
        if not call.args or not isinstance(call.args[0].value, cst.Name):
            return None, "the vectorized callable must be a name with a `Callable[...]` annotation"
        name = call.args[0].value.value
        annotation = self.annotations[-1].get(name)
        if not (isinstance(annotation, cst.Subscript) and self.qname(annotation.value) in CALLABLES):
            return None, f"`{name}` has no `Callable[[...], ...]` annotation"
        if len(annotation.slice) != 2 or not isinstance(annotation.slice[0].slice.value, cst.List):
            return None, f"`{name}` must be annotated `Callable[[arg types], return type]`"
        inputs = [self._core(element.value) for element in annotation.slice[0].slice.value.elements]
        output = self._core(annotation.slice[1].slice.value)
        if output is None or any(core is None for core in inputs):
            return None, f"the annotation of `{name}` uses types other than scalars, Matrix and Vector"
        return f"{','.join(inputs)}->{output}", ""


class _Checker(_Annotations, TemplateVisitor):
    RULE = "vectorize-signature"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._init_annotations()

    def visit_FunctionDef(self, node: cst.FunctionDef):
        self._push(node)
        return super().visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.annotations.pop()
        super().leave_FunctionDef(original_node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record(node)

    def visit_Call(self, node: cst.Call) -> None:
        if self.qname(node.func) != VECTORIZE:
            return
        if any(arg.keyword is not None and arg.keyword.value == "signature" for arg in node.args):
            self.report(
                node, "hand-written vectorize signature", "annotate the callable; codegen writes `signature=`"
            )
            return
        signature, reason = self.signature_of(node)
        if signature is None:
            self.report(
                node,
                f"cannot derive a vectorize signature: {reason}",
                "annotate `f: Callable[[float], Matrix]`",
            )


class _AddSignature(_Annotations, TemplateTransformer):
    RULE = "vectorize-signature"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._init_annotations()

    def visit_FunctionDef(self, node: cst.FunctionDef):
        self._push(node)
        return super().visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.annotations.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def visit_AnnAssign(self, node: cst.AnnAssign):
        self._record(node)
        return None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if self.qname(original_node.func) != VECTORIZE:
            return updated_node
        signature, _ = self.signature_of(original_node)
        if signature is None:
            return updated_node
        self.fire()
        dropped = ("otypes", "cache") if self.ctx.backend == "jax" and not self.in_host else ()
        args = [arg for arg in updated_node.args if arg.keyword is None or arg.keyword.value not in dropped]
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        keyword = cst.Arg(
            keyword=cst.Name("signature"),
            value=cst.SimpleString(f'"{signature}"'),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        return updated_node.with_changes(args=[*args, keyword])


class VectorizeSignature(Rule):
    """``np.vectorize(f)`` gets ``signature=`` from ``f``'s annotation (never typed twice by hand).

    ``Callable[[float], Matrix]`` gives ``"()->(m,m)"``, ``Callable[[float, complex], Matrix]`` gives
    ``"(),()->(m,m)"``, ``Callable[[float], float]`` gives ``"()->()"``.  In ``oqupy_jax`` the call
    becomes ``jnp.vectorize`` (outside ``@host`` code) and loses ``otypes``/``cache``.
    """

    NAME = "vectorize-signature"
    NEEDS = ("numpy.vectorize",)
    VALID = (
        Example(
            template=(
                "from typing import Callable\n\nimport numpy as np\n\nfrom oqupy._types import Matrix\n\n\n"
                "def f(h: Callable[[float], Matrix]):\n    return np.vectorize(h)\n"
            ),
            numpy=(
                "from typing import Callable\n\nimport numpy as np\n\nfrom oqupy_numpy._types import Matrix\n\n\n"
                'def f(h: Callable[[float], Matrix]):\n    return np.vectorize(h, signature="()->(m,m)")\n'
            ),
            jax=(
                "from typing import Callable\n\nimport jax.numpy as jnp\n\nfrom oqupy_jax._types import Matrix\n\n\n"
                'def f(h: Callable[[float], Matrix]):\n    return jnp.vectorize(h, signature="()->(m,m)")\n'
            ),
        ),
    )
    INVALID = (
        Invalid(
            "import numpy as np\n\n\ndef f(h):\n    return np.vectorize(h)\n", "no `Callable[[...], ...]`"
        ),
        Invalid(
            'import numpy as np\n\n\ndef f(h):\n    return np.vectorize(h, signature="()->()")\n',
            "hand-written",
            backend="numpy",
        ),
    )
    Checker = _Checker
    Transformer = _AddSignature
