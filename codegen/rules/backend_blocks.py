"""Backend blocks: ``if BACKEND == "jax": ... else: ...`` keeps one branch per package."""

from typing import Optional

import libcst as cst

from codegen.analysis import BACKEND_MARKER, TemplateTransformer, TemplateVisitor, backend_test
from codegen.rules.base import Example, Invalid, Rule

BACKENDS = ("numpy", "jax")


class _Checker(TemplateVisitor):
    RULE = "backend-blocks"

    def visit_If(self, node: cst.If) -> Optional[bool]:
        test = backend_test(node.test, self.qname)
        if test is not None:
            if test[0] not in BACKENDS:
                self.report(
                    node.test, f"unknown backend {test[0]!r}", f"compare BACKEND with one of {BACKENDS}"
                )
            if isinstance(node.orelse, cst.If):
                self.report(
                    node.orelse, "elif after a backend test", "use `if BACKEND == ...: ... else: ...`"
                )
        return super().visit_If(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> Optional[bool]:
        return False

    def visit_Comparison(self, node: cst.Comparison) -> Optional[bool]:
        if backend_test(node, self.qname) is not None:
            self.report(
                node, "backend test outside an `if` statement", "branch with `if BACKEND == ...:` blocks"
            )
            return False
        return None

    def visit_Name(self, node: cst.Name) -> None:
        if self.qname(node) == BACKEND_MARKER:
            self.report(node, "BACKEND used as a value; it is cut at generation time", "only test it in `if`")


class _Cut(TemplateTransformer):
    RULE = "backend-blocks"

    def leave_If(self, original_node: cst.If, updated_node: cst.If):
        test = backend_test(original_node.test, self.qname)
        if test is None:
            return updated_node
        name, equal = test
        self.fire()
        keep_body = (name == self.ctx.backend) == equal
        branch = updated_node.body if keep_body else updated_node.orelse
        if isinstance(branch, cst.Else):
            branch = branch.body
        if branch is None:
            return cst.RemovalSentinel.REMOVE
        body = list(branch.body)
        if body and updated_node.leading_lines:
            body[0] = body[0].with_changes(
                leading_lines=[*updated_node.leading_lines, *body[0].leading_lines]
            )
        return cst.FlattenSentinel(body)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock):
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node


class BackendBlocks(Rule):
    """Cut backend-specific blocks at generation time.

    ``if BACKEND == "jax":`` (or ``!=``, with an optional ``else``) keeps exactly one branch in each
    package; the marker import and a module's ``__backends__`` declaration disappear.  No generated
    package ever tests a backend name at run time.
    """

    NAME = "backend-blocks"
    NEEDS = ("oqupy._codegen.BACKEND",)
    VALID = (
        Example(
            template=(
                "from oqupy._codegen import BACKEND\n"
                'if BACKEND == "jax":\n'
                "    import jax\n"
                '    jax.config.update("jax_enable_x64", True)\n'
                "else:\n"
                "    pass\n"
                "x = 1\n"
            ),
            numpy="pass\nx = 1\n",
            jax='import jax\njax.config.update("jax_enable_x64", True)\nx = 1\n',
        ),
    )
    INVALID = (
        Invalid(
            'from oqupy._codegen import BACKEND\nif BACKEND == "torch":\n    pass\n',
            "unknown backend 'torch'",
        ),
        Invalid("from oqupy._codegen import BACKEND\nprint(BACKEND)\n", "BACKEND used as a value"),
        Invalid(
            'from oqupy._codegen import BACKEND\nx = 1 if BACKEND == "jax" else 2\n',
            "backend test outside an `if`",
        ),
    )
    Checker = _Checker
    Transformer = _Cut
