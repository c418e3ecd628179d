"""In-place writes on local arrays become functional updates in ``oqupy_jax``."""

import libcst as cst

from codegen.rules.base import Example, Rule

#: augmented operator -> ``.at`` method
AT_METHODS = {
    cst.AddAssign: "add",
    cst.SubtractAssign: "subtract",
    cst.MultiplyAssign: "multiply",
    cst.DivideAssign: "divide",
    cst.PowerAssign: "power",
}

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


def _at_call(target: cst.Subscript, method: str, value: cst.BaseExpression) -> cst.Assign:
    at = cst.Subscript(value=cst.Attribute(value=target.value, attr=cst.Name("at")), slice=target.slice)
    call = cst.Call(func=cst.Attribute(value=at, attr=cst.Name(method)), args=[cst.Arg(value)])
    return cst.Assign(targets=[cst.AssignTarget(target=target.value)], value=call)


class InplaceUpdate(Rule):
    """``x[i] = v`` -> ``x = x.at[i].set(v)``; ``+= -= *= /= **=`` -> ``.add/.subtract/.multiply/.divide/.power``.

    Other augmented operators become ``x = x.at[i].set(x[i] OP v)`` (only for indices that can be
    evaluated twice).  Index elements (slices, ``...``, ``None``, tuples) are moved over unchanged.
    Exactly the writes the array analysis (:mod:`codegen.flow`) proved are rewritten, in functions and in
    a module's top-level code: into local arrays, and into an attribute (``self.x[i] = v`` becomes
    ``self.x = self.x.at[i].set(v)``) whose array the same function allocated and nobody else holds.  Lists
    and dicts are left alone; writes into arguments, views or attributes' foreign arrays are refused by
    their own rules.
    """

    NEEDS = ("<subscript-write>",)
    BACKENDS = ("jax",)
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
                    self.cache["first"] = self.values[0]
            """,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.owned: list[set[int]] = []  # per enclosing function: ids of the writes the flow analysis proved

    def visit_Module(self, node: cst.Module) -> None:
        self.owned.append(set() if self.in_host else self.flow(node, cache=False).owned_writes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.owned.append(set() if self.in_host else self.flow(node, cache=False).owned_writes)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.owned.pop()
        return updated_node

    def _rewrites(self, node: cst.Assign | cst.AugAssign, target: cst.BaseExpression) -> bool:
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
        return _at_call(updated_node.targets[0].target, "set", updated_node.value)

    def leave_AugAssign(self, original_node: cst.AugAssign, updated_node: cst.AugAssign):
        if not self._rewrites(original_node, original_node.target):
            return updated_node
        target = updated_node.target
        self.fire()
        method = AT_METHODS.get(type(updated_node.operator))
        if method is not None:
            return _at_call(target, method, updated_node.value)
        operator = BINARY_OPERATORS[type(updated_node.operator)]()
        current = cst.Subscript(value=target.value, slice=target.slice)
        value = cst.BinaryOperation(left=current, operator=operator, right=_parenthesize(updated_node.value))
        return _at_call(target, "set", value)
