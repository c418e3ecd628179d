"""Every ``vectorize`` gets an explicit ``signature=``, derived from the callable's annotation."""

from typing import Optional

import libcst as cst
from libcst.metadata import ParentNodeProvider

from codegen.rules.base import Example, Invalid, Rule

CALLABLES = frozenset({"typing.Callable", "collections.abc.Callable"})
SCALARS = frozenset({"builtins.float", "builtins.complex", "builtins.int", "builtins.bool"})
#: core dimensions of the template's array aliases (which alias means which shape is codegen's table: an alias
#: is only ``np.ndarray`` to the type checker)
CORES = {"oqupy._types.Matrix": "(m,m)", "oqupy._types.Vector": "(m)"}
VECTORIZE = "numpy.vectorize"


class VectorizeSignature(Rule):
    """``np.vectorize(f)`` gets ``signature=`` from ``f``'s annotation (never typed twice by hand).

    ``Callable[[float], Matrix]`` gives ``"()->(m,m)"``, ``Callable[[float, complex], Matrix]`` gives
    ``"(),()->(m,m)"``, ``Callable[[float], float]`` gives ``"()->()"``.  In ``oqupy_jax`` the call
    becomes ``jnp.vectorize`` (outside ``@host`` code) and loses ``otypes``/``cache``.  A callable whose
    signature cannot be derived (an attribute, an unannotated argument) is left as written outside kernels:
    ``np.vectorize`` is NumPy's loop calling it on each element, on the host in both packages (``jnp.vectorize``
    would trace a callable that may need Python floats, e.g. one integrating with ``scipy.integrate.quad``); its
    result is of unknown kind to the analysis (writes into it stay as written).  Inside a ``@kernel`` it is refused.
    """

    NEEDS = (VECTORIZE,)
    VALID = (
        Example(
            """
            from typing import Callable

            import numpy as np

            from oqupy._types import Matrix


            def f(h: Callable[[float], Matrix]):
                return np.vectorize(h)
            """,
            numpy="""
            from typing import Callable

            import numpy as np

            from oqupy_numpy._types import Matrix


            def f(h: Callable[[float], Matrix]):
                return np.vectorize(h, signature="()->(m,m)")
            """,
            jax="""
            from typing import Callable

            import jax.numpy as jnp

            from oqupy_jax._types import Matrix


            def f(h: Callable[[float], Matrix]):
                return jnp.vectorize(h, signature="()->(m,m)")
            """,
        ),
        Example(  # a callable of unknown kind outside kernels: NumPy's loop on the host in both packages
            """
            import numpy as np


            def sampled(correlations, times: np.ndarray) -> np.ndarray:
                values = np.vectorize(correlations.correlation)(times)
                return np.real(values)
            """,
            numpy="""
            import numpy as np


            def sampled(correlations, times: np.ndarray) -> np.ndarray:
                values = np.vectorize(correlations.correlation)(times)
                return np.real(values)
            """,
            jax="""
            import numpy as np
            import jax
            import jax.numpy as jnp


            def sampled(correlations, times: jax.Array) -> jax.Array:
                values = np.vectorize(correlations.correlation)(times)
                return jnp.real(values)
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray):
                return np.vectorize(np.sinc)(x)
            """,
            "inside a @kernel",
        ),
        Invalid(
            """
            import numpy as np


            def f(h):
                return np.vectorize(h, signature="()->()")
            """,
            "hand-written",
            backend="numpy",
        ),
    )

    def signature_of(self, call: cst.Call) -> tuple[Optional[str], str]:
        return signature_of(self, call)

    def check_Call(self, node: cst.Call) -> None:
        if self.qname(node.func) != VECTORIZE:
            return
        if any(arg.keyword is not None and arg.keyword.value == "signature" for arg in node.args):
            self.report(
                node, "hand-written vectorize signature", "annotate the callable; codegen writes `signature=`"
            )
            return
        signature, reason = self.signature_of(node)
        if signature is None and self.in_kernel and not self.in_host:
            self.report(
                node,
                f"cannot derive a vectorize signature inside a @kernel: {reason} (NumPy's loop over a callable"
                " of unknown kind cannot run traced)",
                "annotate `f: Callable[[float], Matrix]`, or vectorize outside the kernel",
            )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if self.qname(original_node.func) != VECTORIZE:
            return updated_node
        signature, _ = self.signature_of(original_node)
        self.fire()  # with a signature, or left as NumPy's loop (refused in kernels)
        if signature is None:
            return updated_node
        dropped = ("otypes", "cache") if self.ctx.backend == "jax" and not self.in_host else ()
        args = [arg for arg in updated_node.args if arg.keyword is None or arg.keyword.value not in dropped]
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        keyword = cst.Arg(
            keyword=cst.Name("signature"),
            value=cst.SimpleString(f'"{signature}"'),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        return updated_node.with_changes(args=[*args, keyword])


def _core(rule: Rule, expr: cst.BaseExpression) -> Optional[str]:
    qualified = rule.qname(expr)
    if qualified in SCALARS:
        return "()"
    return CORES.get(qualified or "")


def signature_of(rule: Rule, call: cst.Call) -> tuple[Optional[str], str]:
    """The signature of the ``np.vectorize`` call ``call`` from its callable's annotation (visible to
    ``rule``): (signature, reason it could not be derived)."""
    if not call.args or not isinstance(call.args[0].value, cst.Name):
        return None, "the vectorized callable must be a name with a `Callable[...]` annotation"
    name = call.args[0].value.value
    annotation = rule.annotations[-1].get(name)
    if not (isinstance(annotation, cst.Subscript) and rule.qname(annotation.value) in CALLABLES):
        return None, f"`{name}` has no `Callable[[...], ...]` annotation"
    if len(annotation.slice) != 2 or not isinstance(annotation.slice[0].slice.value, cst.List):
        return None, f"`{name}` must be annotated `Callable[[arg types], return type]`"
    inputs = [_core(rule, element.value) for element in annotation.slice[0].slice.value.elements]
    output = _core(rule, annotation.slice[1].slice.value)
    if output is None or any(core is None for core in inputs):
        return None, f"the annotation of `{name}` uses types other than scalars, Matrix and Vector"
    return f"{','.join(inputs)}->{output}", ""


def host_vectorize(rule: Rule, node: cst.CSTNode) -> bool:
    """Whether ``node`` is ``np.vectorize`` called (outside kernels) on a callable with no derivable signature:
    NumPy's loop, kept in ``oqupy_jax`` (``jnp.vectorize`` would trace a callable that may need Python
    values, e.g. one that integrates with ``scipy.integrate.quad``)."""
    call = rule.get_metadata(ParentNodeProvider, node, None)
    return (
        isinstance(call, cst.Call)
        and call.func is node
        and not rule.in_kernel
        and rule.qname(node) == VECTORIZE
        and signature_of(rule, call)[0] is None
    )
