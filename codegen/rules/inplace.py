"""In-place writes on local arrays become functional updates in ``oqupy_jax``."""

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codegen.flow.numpy_model import AT_METHODS
from codegen.rules.base import Example, Rule

#: augmented operator without an ``.at`` method -> binary operator for ``.set(x[i] OP v)``
BINARY_OPERATORS = {
    cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr,
    cst.BitXorAssign: cst.BitXor,
    cst.LeftShiftAssign: cst.LeftShift,
    cst.RightShiftAssign: cst.RightShift,
}


def _parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp, cst.Lambda)):
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _checked(target: cst.Subscript, checks: tuple[tuple[int, int], ...]) -> cst.Subscript:
    """``a[0]`` -> ``a[range(a.shape[0])[0]]`` for the literal indices the analysis could not prove in bounds: the
    shape is static under ``jax.jit``, so an out-of-bounds literal raises ``IndexError`` as in NumPy instead of
    being dropped."""
    elements = list(target.slice)
    for position, axis in checks:
        element = elements[position]
        length = cst.Subscript(
            value=cst.Attribute(value=target.value, attr=cst.Name("shape")),
            slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(axis))))],
        )
        checked = cst.Subscript(
            value=cst.Call(func=cst.Name("range"), args=[cst.Arg(length)]),
            slice=[cst.SubscriptElement(cst.Index(element.slice.value))],
        )
        elements[position] = element.with_changes(slice=cst.Index(checked))
    return target.with_changes(slice=elements)


def _at_call(target: cst.Subscript, method: str, value: cst.BaseExpression, host: bool = False) -> cst.Assign:
    base = target.value
    if host:  # an array that may be NumPy's (made from an argument): ``.at`` needs a jax.Array
        base = cst.Call(func=cst.Attribute(cst.Name("jnp"), cst.Name("asarray")), args=[cst.Arg(base)])
    at = cst.Subscript(value=cst.Attribute(value=base, attr=cst.Name("at")), slice=target.slice)
    call = cst.Call(func=cst.Attribute(value=at, attr=cst.Name(method)), args=[cst.Arg(value)])
    return cst.Assign(targets=[cst.AssignTarget(target=target.value)], value=call)


class InplaceUpdate(Rule):
    """``x[i] = v`` -> ``x = x.at[i].set(v)``; ``+= -= *= /= **=`` -> ``.add/.subtract/.multiply/.divide/.power``.

    Other augmented operators become ``x = x.at[i].set(x[i] OP v)`` (only for indices that can be
    evaluated twice).  Index elements (slices, ``...``, ``None``, tuples) are moved over unchanged.
    Exactly the writes the array analysis (:mod:`codegen.flow`) proved are rewritten, in functions and in
    a module's top-level code: into local arrays, and into an attribute (``self.x[i] = v`` becomes
    ``self.x = self.x.at[i].set(v)``) whose array the same function allocated and nobody else holds; an
    annotated ``a[0]: float = v`` loses its annotation (Python never stores it for a subscript).  Lists
    and dicts are left alone; writes into arguments, views or attributes' foreign arrays are refused by
    their own rules.

    ``a += v`` on a whole local array whose operand ``v`` has a shape the analysis cannot prove equal becomes
    ``a = a.at[...].add(v)`` (``subtract``, ``multiply``, ``divide``, ``power`` likewise): like NumPy's in-place
    operator, JAX then broadcasts ``v`` into ``a``'s shape or raises ``ValueError`` and keeps ``a``'s dtype,
    where ``a = a + v`` would silently grow the shape.  Where the shapes are proven equal, ``a += v`` stays as
    written (JAX rebinds the name to the same values).
    """

    NEEDS = ("<subscript-write>", "<augmented-name>")
    BACKENDS = ("jax",)
    # the JAX form of every proven write, not an optional convenience: since TEMPO's step moved to the host
    # (``_tempo_step.py``) the template's device code happens to write nothing in place, and the rule stays
    MAY_BE_IDLE = True
    VALID = (
        Example(
            """
            import numpy as np


            def f(n: int, v: float):
                x = np.zeros((n, 4))
                for i in range(n):
                    x[i, 1:3] = v
                    x[i, ...] += 2 * v
                    x[i, 3] //= v + 1
                x[0, 0]: float = 1.0
                names = [0, 1]
                names[0] = 5
                return x
            """,
            jax="""
            import jax.numpy as jnp


            def f(n: int, v: float):
                x = jnp.zeros((n, 4))
                for i in range(n):
                    x = x.at[i, 1:3].set(v)
                    x = x.at[i, ...].add(2 * v)
                    x = x.at[i, 3].set(x[i, 3] // (v + 1))
                x = x.at[range(x.shape[0])[0], 0].set(1.0)
                names = [0, 1]
                names[0] = 5
                return x
            """,
        ),
        Example(
            """
            import numpy as np


            class Grid:
                def __init__(self, n: int):
                    self.cache: dict = {}
                    self.values = np.zeros(n)
                    for i in range(n):
                        self.values[i] = 2.0 * i
                        self.values[n - 1 - i] += 1.0
                    self.cache["first"] = self.values[0]
            """,
            jax="""
            import jax.numpy as jnp


            class Grid:
                def __init__(self, n: int):
                    self.cache: dict = {}
                    self.values = jnp.zeros(n)
                    for i in range(n):
                        self.values = self.values.at[i].set(2.0 * i)
                        self.values = self.values.at[n - 1 - i].add(1.0)
                    self.cache["first"] = self.values[range(self.values.shape[0])[0]]
            """,
        ),
        Example(  # ``a += v`` with ``v`` of unproven shape: ``.at[...]`` broadcasts ``v`` into ``a`` or raises
            """
            import numpy as np


            def f(x: np.ndarray, n: int):
                a = np.zeros(n, dtype=np.complex128)
                a += np.sin(x)
                b = -1j * np.cos(x)
                b *= x
                c = np.zeros(n)
                c -= np.abs(x)
                c //= 2.0
                return a, b, c
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def f(x: jax.Array, n: int):
                a = jnp.zeros(n, dtype=jnp.complex128)
                a = a.at[...].add(jnp.sin(x))
                b = -1j * jnp.cos(x)
                b = b.at[...].multiply(x)
                c = jnp.zeros(n)
                c = c.at[...].subtract(jnp.abs(x))
                c //= 2.0
                return a, b, c
            """,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.owned: list[set[int]] = []  # per enclosing function: ids of the writes the flow analysis proved
        self.checks: list[dict[int, tuple[tuple[int, int], ...]]] = []  # and their literal indices to check
        self.host: list[set[int]] = []  # and which of them write into an array that may be NumPy's

    def _enter(self, node: cst.Module | cst.FunctionDef) -> None:
        flow = None if self.in_host else self.flow(node, cache=False)
        self.owned.append(flow.owned_writes if flow is not None else set())
        self.checks.append(flow.checked_indices if flow is not None else {})
        self.host.append(flow.host_writes if flow is not None else set())

    def visit_Module(self, node: cst.Module) -> None:
        self._enter(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.owned.pop()
        self.checks.pop()
        self.host.pop()
        return updated_node

    def _host(self, original_node: cst.CSTNode) -> bool:
        if id(original_node) not in self.host[-1]:
            return False
        AddImportsVisitor.add_needed_import(self.ctx.codemod, "jax.numpy", asname="jnp")
        return True

    def _target(self, original_node: cst.Assign | cst.AugAssign, target: cst.Subscript) -> cst.Subscript:
        checks = self.checks[-1].get(id(original_node))
        return _checked(target, checks) if checks else target

    def _rewrites(self, node: cst.Assign | cst.AugAssign | cst.AnnAssign, target: cst.BaseExpression) -> bool:
        """Exactly the writes the analysis proved (all others were refused or are lists and dicts)."""
        if self.in_host or not isinstance(target, cst.Subscript):
            return False
        return isinstance(target.value, (cst.Name, cst.Attribute)) and id(node) in self.owned[-1]

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        if len(original_node.targets) != 1 or not self._rewrites(
            original_node, original_node.targets[0].target
        ):
            return updated_node
        self.fire()
        target = self._target(original_node, updated_node.targets[0].target)
        return _at_call(target, "set", updated_node.value, self._host(original_node))

    def leave_AnnAssign(self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign):
        """``a[0]: float = v``: the annotation of a subscript target is never stored, so it is dropped."""
        if updated_node.value is None or not self._rewrites(original_node, original_node.target):
            return updated_node
        self.fire()
        target = self._target(original_node, updated_node.target)
        return _at_call(target, "set", updated_node.value, self._host(original_node))

    def leave_AugAssign(self, original_node: cst.AugAssign, updated_node: cst.AugAssign):
        if (
            not self.in_host
            and isinstance(updated_node.target, cst.Name)
            and id(original_node) in self.owned[-1]
        ):  # ``x += v`` on a local array with ``v`` of unproven shape: ``.at[...]`` keeps NumPy's broadcast check
            self.fire()
            whole = cst.Subscript(
                value=updated_node.target, slice=[cst.SubscriptElement(cst.Index(cst.Ellipsis()))]
            )
            method = AT_METHODS[type(updated_node.operator)]
            return _at_call(whole, method, updated_node.value, self._host(original_node))
        if not self._rewrites(original_node, original_node.target):
            return updated_node
        target = self._target(original_node, updated_node.target)
        self.fire()
        method = AT_METHODS.get(type(updated_node.operator))
        host = self._host(original_node)
        if method is not None:
            return _at_call(target, method, updated_node.value, host)
        operator = BINARY_OPERATORS[type(updated_node.operator)]()
        current = cst.Subscript(value=target.value, slice=target.slice)
        value = cst.BinaryOperation(left=current, operator=operator, right=_parenthesize(updated_node.value))
        return _at_call(target, "set", value, host)
