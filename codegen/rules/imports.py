"""Import rewriting: the package name in both packages, NumPy/SciPy to ``jax.numpy`` / ``jax.scipy``."""

from typing import Optional

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import ParentNodeProvider

from codegen import names
from codegen.rules.base import Example, Invalid, Rule
from codegen.rules.vectorize import host_vectorize

TEMPLATE_PACKAGE = "oqupy"


def _dotted(node: Optional[cst.BaseExpression]) -> str:
    return cst.Module([]).code_for_node(node) if node is not None else ""


def _rename_root(node: cst.BaseExpression, package: str) -> cst.BaseExpression:
    if isinstance(node, cst.Name):
        return node.with_changes(value=package) if node.value == TEMPLATE_PACKAGE else node
    if isinstance(node, cst.Attribute):
        return node.with_changes(value=_rename_root(node.value, package))
    return node


class PackageRename(Rule):
    """Rename the template package ``oqupy`` to ``oqupy_numpy`` / ``oqupy_jax`` in imports and references."""

    VALID = (
        Example(
            """
            from oqupy import config
            from oqupy.util import check_true
            """,
            numpy="""
            from oqupy_numpy import config
            from oqupy_numpy.util import check_true
            """,
            jax="""
            from oqupy_jax import config
            from oqupy_jax.util import check_true
            """,
        ),
    )
    INVALID = (Invalid("from .util import check_true\n", "relative import", backend="numpy"),)

    def check_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative:
            self.report(node, "relative import in the template", "use `from oqupy.<module> import ...`")
        return False

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom):
        if _dotted(original_node.module).split(".")[0] == TEMPLATE_PACKAGE:
            self.fire()
            return updated_node.with_changes(module=_rename_root(updated_node.module, self.ctx.package))
        return updated_node

    def leave_ImportAlias(self, original_node: cst.ImportAlias, updated_node: cst.ImportAlias):
        parent = self.get_metadata(ParentNodeProvider, original_node)
        if isinstance(parent, cst.Import) and _dotted(original_node.name).split(".")[0] == TEMPLATE_PACKAGE:
            self.fire()
            return updated_node.with_changes(name=_rename_root(updated_node.name, self.ctx.package))
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name):
        if original_node.value == TEMPLATE_PACKAGE and (self.qname(original_node) or "").startswith(
            TEMPLATE_PACKAGE
        ):
            return updated_node.with_changes(value=self.ctx.package)
        return updated_node


class NumpyToJax(Rule):
    """In ``oqupy_jax``, NumPy and SciPy names outside ``@host`` code become ``jax.numpy`` / ``jax.scipy``.

    Matching is by qualified name through a table (``codegen/names.py``); names with no mapping are
    refused, and so are ``np.linalg.eig`` / ``eigvals`` of a matrix not known complex (NumPy's result is real
    where every eigenvalue is, JAX's complex); unused ``numpy`` imports are dropped (host code keeps ``import numpy as np``).
    SciPy's quadratures (``quad``, ``dblquad``, ``tplquad``, ``quad_vec``: ``names.HOST_CALLS``) call a Python
    integrand on Python floats: outside kernels they stay SciPy in ``oqupy_jax`` too (the translated integrand
    runs on the host, ``quad(...)[0]`` is a Python float in both packages); inside a ``@kernel``, or in a
    function of the module that a kernel calls, they are refused (a kernel is traced).  NumPy's seeded
    generator (``np.random.default_rng``) is kept the same way: the same numbers in both packages, where
    ``jax.random`` would need keys; a kernel would draw once, at tracing, so it is refused there.
    ``np.ndarray`` annotations become ``jax.Array``.
    """

    NEEDS = ("numpy.", "scipy.")
    BACKENDS = ("jax",)
    VALID = (
        Example(
            """
            import numpy as np
            import scipy.linalg


            def f(x: np.ndarray) -> np.ndarray:
                return scipy.linalg.expm(np.kron(x, x))
            """,
            numpy="""
            import numpy as np
            import scipy.linalg


            def f(x: np.ndarray) -> np.ndarray:
                return scipy.linalg.expm(np.kron(x, x))
            """,
            jax="""
            import jax
            import jax.numpy as jnp
            import jax.scipy.linalg as jsl


            def f(x: jax.Array) -> jax.Array:
                return jsl.expm(jnp.kron(x, x))
            """,
        ),
        Example(  # ``eig`` of a complex matrix: the same LAPACK routine and dtype in both packages
            """
            import numpy as np


            def f(m: np.ndarray):
                values, vectors = np.linalg.eig(np.asarray(m, dtype=np.complex128))
                return values
            """,
            numpy="""
            import numpy as np


            def f(m: np.ndarray):
                values, vectors = np.linalg.eig(np.asarray(m, dtype=np.complex128))
                return values
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def f(m: jax.Array):
                values, vectors = jnp.linalg.eig(jnp.asarray(m, dtype=jnp.complex128))
                return values
            """,
        ),
        Example(  # outside kernels SciPy's quadratures run on the host in both packages; results are floats
            """
            import numpy as np
            from scipy import integrate


            def area(t: float) -> float:
                total = 0.0
                for k in range(3):
                    total += integrate.quad(np.cos, 0.0, t * k)[0]
                value, error = integrate.dblquad(lambda y, x: np.exp(-x * y), 0.0, t, 0.0, 1.0)
                return total + value
            """,
            numpy="""
            import numpy as np
            from scipy import integrate


            def area(t: float) -> float:
                total = 0.0
                for k in range(3):
                    total += integrate.quad(np.cos, 0.0, t * k)[0]
                value, error = integrate.dblquad(lambda y, x: np.exp(-x * y), 0.0, t, 0.0, 1.0)
                return total + value
            """,
            jax="""
            from scipy import integrate
            import jax.numpy as jnp


            def area(t: float) -> float:
                total = 0.0
                for k in range(3):
                    total += integrate.quad(jnp.cos, 0.0, t * k)[0]
                value, error = integrate.dblquad(lambda y, x: jnp.exp(-x * y), 0.0, t, 0.0, 1.0)
                return total + value
            """,
        ),
        Example(  # NumPy's seeded generator stays NumPy's: the same numbers in both packages
            """
            import numpy as np


            def density_matrix(dim: int, seed: int = 1) -> np.ndarray:
                rng = np.random.default_rng(seed)
                a = rng.random((dim, dim)) + 1j * rng.random((dim, dim))
                b = np.matmul(a, a.conj().T)
                return b / np.trace(b)
            """,
            jax="""
            import jax
            import jax.numpy as jnp
            import numpy as np


            def density_matrix(dim: int, seed: int = 1) -> jax.Array:
                rng = np.random.default_rng(seed)
                a = rng.random((dim, dim)) + 1j * rng.random((dim, dim))
                b = jnp.matmul(a, a.conj().T)
                return b / jnp.trace(b)
            """,
        ),
    )
    INVALID = (
        Invalid(  # a kernel would draw once, when it is traced, and replay that draw
            """
            import numpy as np

            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray):
                return x * np.random.default_rng(1).random()
            """,
            "cannot run inside a @kernel",
        ),
        Invalid(
            """
            import numpy as np


            def f(n: int):
                return np.random.rand(n)
            """,
            "`numpy.random.rand` has no JAX",
        ),
        Invalid(  # a real matrix: NumPy's eigenvalues are real where all are, JAX's complex
            """
            import numpy as np


            def f(m: np.ndarray):
                values, vectors = np.linalg.eig(np.asarray(m, dtype=np.float64))
                return values
            """,
            "may be real",
        ),
        Invalid(  # a kernel is traced: SciPy's quadrature needs Python floats
            """
            import numpy as np
            from scipy import integrate

            from oqupy._codegen import kernel


            @kernel
            def f(x: np.ndarray):
                return x * integrate.quad(np.cos, 0.0, 1.0)[0]
            """,
            "cannot run inside a @kernel",
        ),
    )

    # -- check -------------------------------------------------------------------------------------
    def check_Module(self, node: cst.Module) -> None:
        self._report_flow(node)
        self._host_callers = self._functions_calling_host(node)

    def _functions_calling_host(self, module: cst.Module) -> set[str]:
        """Names of this module's functions that call a SciPy quadrature (``names.HOST_CALLS``), directly or
        through another such function called by name: a kernel cannot call them (they need Python floats)."""
        bodies = {d.name.value: d for d in m.findall(module, m.FunctionDef())}
        callers = {
            name
            for name, func in bodies.items()
            if any(self.qname(n) in names.HOST_CALLS for n in m.findall(func, m.Name() | m.Attribute()))
        }
        while True:
            more = {
                name
                for name, func in bodies.items()
                if name not in callers
                and any(c.func.value in callers for c in m.findall(func, m.Call(func=m.Name())))
            }
            if not more:
                return callers
            callers |= more

    def check_Call(self, node: cst.Call) -> None:
        if (
            self.in_kernel
            and not self.in_host
            and isinstance(node.func, cst.Name)
            and node.func.value in getattr(self, "_host_callers", ())
        ):
            self.report(
                node,
                f"the @kernel calls `{node.func.value}`, which runs SciPy's quadratures or NumPy's generator on the"
                " host (a kernel is traced)",
                "integrate (or draw) before the kernel and pass the values in",
            )

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._report_flow(node)

    def _report_flow(self, node: cst.FunctionDef | cst.Module) -> None:
        if not self.in_host:  # the flow's findings: names mapped for some arguments only (``COMPLEX_ONLY``)
            self.report_findings(node)

    def check_Import(self, node: cst.Import) -> bool:
        return False

    def check_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def check_Attribute(self, node: cst.Attribute) -> None:
        self._check_name(node)

    def check_Name(self, node: cst.Name) -> None:
        self._check_name(node)

    def _check_name(self, node: cst.BaseExpression) -> None:
        if self.in_host:
            return
        qualified = self.qname(node)
        if qualified is None or qualified.split(".")[0] not in ("numpy", "scipy"):
            return
        parent = self.get_metadata(ParentNodeProvider, node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # the enclosing attribute is the name to check
        if qualified in names.HOST_CALLS:
            if self.in_kernel:
                self.report(
                    node,
                    f"`{qualified}` runs on the host and cannot run inside a @kernel (traced)",
                    "integrate (or draw) before the kernel and pass the values in",
                )
            return
        if qualified not in names.NUMPY_TO_JAX:
            self.report(
                node,
                f"`{qualified}` has no JAX mapping",
                "move host-only work into a @host function, or add the name to codegen/names.py if jax has it",
            )

    # -- rewrite -----------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            module = _dotted(alias.name)
            if module.split(".")[0] in ("numpy", "scipy"):
                asname = alias.asname.name.value if alias.asname else None
                RemoveImportsVisitor.remove_unused_import(self.ctx.codemod, module, asname=asname)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = _dotted(node.module)
        if module.split(".")[0] in ("numpy", "scipy") and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                asname = alias.asname.name.value if alias.asname else None
                RemoveImportsVisitor.remove_unused_import(self.ctx.codemod, module, alias.name.value, asname)
        return False

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute):
        return self._replace(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name):
        return self._replace(original_node, updated_node)

    def _replace(self, original_node, updated_node):
        if self.in_host or host_vectorize(self, original_node):
            return updated_node
        target = names.NUMPY_TO_JAX.get(self.qname(original_node) or "")
        if target is None:
            return updated_node
        self.fire()
        module, asname = names.JAX_IMPORTS[target.split(".")[0]]
        AddImportsVisitor.add_needed_import(self.ctx.codemod, module, asname=asname)
        return cst.parse_expression(target)
