"""Host code: ``__runs_on__ = "host"`` modules and ``@host`` definitions keep NumPy/SciPy in both packages."""

import libcst as cst

from codegen.analysis import HOST_MARKER, KERNEL_MARKER
from codegen.rules.base import Example, Invalid, Rule


class HostMarker(Rule):
    """Host code keeps plain NumPy/SciPy in the JAX package too.

    A whole module is host code when it declares ``__runs_on__ = "host"``: no rule translates anything in
    it, only the package is renamed (the declaration is dropped).  Inside a device module, ``@host`` marks
    the rare function or class that must stay NumPy/SciPy; the decorator is stripped.  ``@host`` or
    ``@kernel`` inside a host module is refused.
    """

    NEEDS = ("oqupy._codegen.host", "__runs_on__")
    VALID = (
        Example(
            """
            import numpy as np
            from oqupy._codegen import host


            @host
            def f(x):
                return np.exp(x)
            """,
            numpy="""
            import numpy as np


            def f(x):
                return np.exp(x)
            """,
            jax="""
            import numpy as np


            def f(x):
                return np.exp(x)
            """,
        ),
        Example(
            """
            import numpy as np

            __runs_on__ = "host"


            def f(x):
                return np.exp(x)
            """,
            numpy="""
            import numpy as np


            def f(x):
                return np.exp(x)
            """,
            jax="""
            import numpy as np


            def f(x):
                return np.exp(x)
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            __runs_on__ = "host"
            from oqupy._codegen import host


            @host
            def f(x):
                return x
            """,
            "says nothing",
        ),
        Invalid(
            """
            __runs_on__ = "host"
            from oqupy._codegen import kernel


            @kernel
            def f(x):
                return x
            """,
            "`@kernel` in a host module",
        ),
        Invalid('__runs_on__ = "gpu"\n', "must be the string"),
    )

    # -- check -------------------------------------------------------------------------------------
    def check_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target
        if self.scopes or not (isinstance(target, cst.Name) and target.value == "__runs_on__"):
            return
        if self.ctx.runs_on not in ("host", "device"):
            self.report(node, '`__runs_on__` must be the string "host" or "device"', '`__runs_on__ = "host"`')

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._check_decorators(node)

    def check_ClassDef(self, node: cst.ClassDef) -> None:
        self._check_decorators(node)

    def _check_decorators(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        if self.ctx.runs_on != "host":
            return
        for decorator in node.decorators:
            marker = self.decorator_marker(decorator)
            if marker == HOST_MARKER:
                self.report(
                    decorator,
                    '`@host` in a module that runs on the host (`__runs_on__ = "host"`) says nothing',
                    "remove the decorator",
                )
            elif marker == KERNEL_MARKER:
                self.report(
                    decorator,
                    "`@kernel` in a host module (its code is never translated to JAX)",
                    "move the kernel into a device module",
                )

    # -- rewrite -----------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        if self.ctx.runs_on == "host":
            self.fire()  # the whole module is kept as written; only the declaration is dropped

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        return self._strip(original_node, updated_node)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef):
        return self._strip(original_node, updated_node)

    def _strip(self, original_node, updated_node):
        kept = [
            new
            for old, new in zip(original_node.decorators, updated_node.decorators)
            if self.decorator_marker(old) != HOST_MARKER
        ]
        if len(kept) != len(updated_node.decorators):
            self.fire()
            updated_node = updated_node.with_changes(decorators=kept)
        return updated_node
