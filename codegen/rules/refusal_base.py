"""The base of the refusal rules: check only code that reaches ``oqupy_jax``, report the flow's findings."""

import libcst as cst

from codegen.rules.base import Rule


class _Refusal(Rule):
    """Checks only code that reaches the JAX package outside ``@host``."""

    BACKENDS = ("jax",)


class _FlowRefusal(_Refusal):
    """Reports the problems the flow analysis (:mod:`codegen.flow`) files under this rule's name, for each
    function and for the module's top-level code."""

    def check_Module(self, node: cst.Module) -> None:
        self._report_flow(node)

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._report_flow(node)

    def _report_flow(self, node: cst.FunctionDef | cst.Module) -> None:
        if not self.in_host or self.HOST:
            self.report_findings(node)

    HOST = False  # whether the rule also reports (some of) its findings in ``@host`` code
