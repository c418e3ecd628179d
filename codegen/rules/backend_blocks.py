"""Backend blocks: ``if BACKEND == "jax": ... else: ...`` keeps one branch per package."""

from typing import Optional

import libcst as cst

from codegen.analysis import BACKEND_MARKER, backend_test, kept_branch
from codegen.rules.base import Example, Invalid, Rule

KNOWN_BACKENDS = ("numpy", "jax")


class BackendBlocks(Rule):
    """Cut backend-specific blocks at generation time.

    ``if BACKEND == "jax":`` (or ``!=``, with an optional ``else``) keeps exactly one branch in each
    package; the marker import disappears.  No generated package ever tests a backend name at run time.
    """

    NEEDS = ("oqupy._codegen.BACKEND",)
    VALID = (
        Example(
            """
            from oqupy._codegen import BACKEND

            if BACKEND == "jax":
                import jax

                jax.config.update("jax_enable_x64", True)
            else:
                pass
            x = 1
            """,
            numpy="""
            pass
            x = 1
            """,
            jax="""
            import jax

            jax.config.update("jax_enable_x64", True)
            x = 1
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            from oqupy._codegen import BACKEND

            if BACKEND == "torch":
                pass
            """,
            "unknown backend 'torch'",
        ),
        Invalid(
            """
            from oqupy._codegen import BACKEND

            print(BACKEND)
            """,
            "BACKEND used as a value",
        ),
        Invalid(
            """
            from oqupy._codegen import BACKEND

            x = 1 if BACKEND == "jax" else 2
            """,
            "backend test outside an `if`",
        ),
        Invalid(
            """
            from oqupy._codegen import BACKEND

            if x:
                pass
            elif BACKEND == "jax":
                pass
            """,
            "backend test in an `elif`",
        ),
    )

    # -- check -------------------------------------------------------------------------------------
    def check_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If) and backend_test(node.orelse.test, self.qname) is not None:
            self.report(
                node.orelse, "backend test in an `elif`", "write `else:` and nest `if BACKEND == ...:` in it"
            )
        test = backend_test(node.test, self.qname)
        if test is None:
            return
        if test[0] not in KNOWN_BACKENDS:
            self.report(
                node.test, f"unknown backend {test[0]!r}", f"compare BACKEND with one of {KNOWN_BACKENDS}"
            )
        if isinstance(node.orelse, cst.If):
            self.report(node.orelse, "elif after a backend test", "use `if BACKEND == ...: ... else: ...`")

    def check_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def check_Comparison(self, node: cst.Comparison) -> Optional[bool]:
        if backend_test(node, self.qname) is not None:
            self.report(
                node, "backend test outside an `if` statement", "branch with `if BACKEND == ...:` blocks"
            )
            return False
        return None

    def check_Name(self, node: cst.Name) -> None:
        if self.qname(node) == BACKEND_MARKER:
            self.report(node, "BACKEND used as a value; it is cut at generation time", "only test it in `if`")

    # -- rewrite -----------------------------------------------------------------------------------
    def leave_If(self, original_node: cst.If, updated_node: cst.If):
        test = backend_test(original_node.test, self.qname)
        if test is None:
            return updated_node
        self.fire()
        branch = kept_branch(updated_node, test, self.ctx.backend)
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
