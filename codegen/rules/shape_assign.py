"""``x.shape = s`` on a local array becomes ``x = x.reshape(s)`` in both packages."""

from typing import Optional

import libcst as cst

from codegen.rules.base import Example, Idiom, Invalid, Rule


def _shape_target(node: cst.Assign) -> Optional[cst.Attribute]:
    if len(node.targets) == 1:
        target = node.targets[0].target
        if isinstance(target, cst.Attribute) and target.attr.value == "shape":
            return target
    return None


class ShapeAssign(Rule):
    """Rewrite ``x.shape = s`` on local arrays to ``x = x.reshape(s)``; refuse it anywhere else.

    The local array must be C-contiguous (created by ``np.zeros``-like calls, ``.copy()``, or reshaped from
    one: NumPy refuses ``.shape =`` on other layouts, where ``reshape`` would copy) and no other live name
    may refer to it (it would see the new shape in the template only).  ``y = x.reshape(n)`` of a value of
    unknown kind is a new object too; a ``.shape =`` that names ``n`` as one axis (``tuple([1] * k + [n])``)
    either reshapes a 1-D array, which NumPy can for any layout, or fails in both packages.  A new shape that
    keeps the array's own axes in order and adds literal ones (``(1,) + x.shape``, ``(x.shape[0], 1,
    x.shape[1])``) inserts axes of size 1, which NumPy does in place for any layout, so it needs no contiguity.
    Host code keeps ``.shape =``.
    """

    NEEDS = ("<shape-write>",)
    VALID = (
        Example(
            """
            import numpy as np


            def f():
                x = np.zeros(4)
                x.shape = (2, 2)
                return x
            """,
            numpy="""
            import numpy as np


            def f():
                x = np.zeros(4)
                x = x.reshape((2, 2))
                return x
            """,
            jax="""
            import jax.numpy as jnp


            def f():
                x = jnp.zeros(4)
                x = x.reshape((2, 2))
                return x
            """,
        ),
        Example(  # ``state`` of unknown kind: ``reshape`` makes a new object; naming ``n`` as an axis, the
            # new shape either fails in both packages (``n`` a tuple) or reshapes a 1-D array (any layout)
            """
            def f(state, n):
                flat = state.reshape(n)
                flat.shape = tuple([1] * 2 + [n])
                return flat
            """,
            numpy="""
            def f(state, n):
                flat = state.reshape(n)
                flat = flat.reshape(tuple([1] * 2 + [n]))
                return flat
            """,
            jax="""
            def f(state, n):
                flat = state.reshape(n)
                flat = flat.reshape(tuple([1] * 2 + [n]))
                return flat
            """,
        ),
        Example(  # axes of size 1 inserted: a view for any layout, so ``np.array(x)`` (``x``'s layout) will do
            """
            import numpy as np


            def f(x: np.ndarray):
                a = np.array(x)
                a.shape = (1,) + a.shape
                b = np.array(x)
                b.shape = (b.shape[0], 1, b.shape[1])
                return a, b
            """,
            numpy="""
            import numpy as np


            def f(x: np.ndarray):
                a = np.array(x)
                a = a.reshape((1,) + a.shape)
                b = np.array(x)
                b = b.reshape((b.shape[0], 1, b.shape[1]))
                return a, b
            """,
            jax="""
            import jax
            import jax.numpy as jnp


            def f(x: jax.Array):
                a = jnp.array(x)
                a = a.reshape((1,) + a.shape)
                b = jnp.array(x)
                b = b.reshape((b.shape[0], 1, b.shape[1]))
                return a, b
            """,
        ),
    )
    IDIOMS = (
        Idiom(
            """
            import numpy as np


            def f(x: np.ndarray):
                a = np.array(x)
                a.shape = (2, 2)
                return a
            """,
            """
            import numpy as np


            def f(x: np.ndarray):
                a = np.asarray(x).copy()
                a.shape = (2, 2)
                return a
            """,
        ),
    )
    INVALID = (
        Invalid(
            """
            import numpy as np


            def f(x: np.ndarray):
                x.shape = (2, 2)
                return x
            """,
            "`.shape =`",
        ),
        Invalid(  # the new shape does not name ``n``: ``state.reshape(n)`` may be a strided view
            """
            def f(state, n):
                flat = state.reshape(n)
                flat.shape = (2, -1)
                return flat
            """,
            "may not be C-contiguous",
        ),
        Invalid(  # ``n`` rebound between: ``flat`` may have several axes
            """
            def f(state, n, m):
                flat = state.reshape(n)
                n = m
                flat.shape = (1, n)
                return flat
            """,
            "may not be C-contiguous",
        ),
        Invalid(  # the axes swapped, not only ones added: NumPy refuses it on other layouts
            """
            import numpy as np


            def f(x: np.ndarray):
                a = np.array(x)
                a.shape = (a.shape[1], a.shape[0])
                return a
            """,
            "may not be C-contiguous",
        ),
        Invalid(  # another holder of the object would see the new shape in NumPy only
            """
            def f(state, n):
                flat = state.reshape(n)
                kept = [flat]
                flat.shape = (1, n)
                return kept
            """,
            "escaped",
        ),
        Invalid(
            """
            class A:
                def f(self):
                    self.x.shape = (2, 2)
            """,
            "`.shape =`",
            backend="numpy",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.owned: list[set[int]] = []

    def check_Module(self, node: cst.Module) -> None:
        self._report_flow(node)

    def check_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._report_flow(node)

    def _report_flow(self, node: cst.FunctionDef | cst.Module) -> None:
        if not self.in_host:
            self.report_findings(node)

    def visit_Module(self, node: cst.Module) -> None:
        self.owned.append(set() if self.in_host else self.flow(node, cache=False).owned_writes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.owned.append(set() if self.in_host else self.flow(node, cache=False).owned_writes)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        self.owned.pop()
        return updated_node

    def check_Assign(self, node: cst.Assign) -> None:
        target = _shape_target(node)
        if target is None or self.in_host:
            return
        if not isinstance(target.value, cst.Name):  # names: the flow analysis decides (_report_flow)
            self.report(
                target,
                "`.shape =` on something that is not a local array (an argument, a view or an attribute)",
                "reshape a local copy: `y = x.reshape(s)`",
            )

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        target = _shape_target(original_node)
        if self.in_host or target is None:
            return updated_node
        if id(original_node) not in self.owned[-1]:
            return updated_node
        self.fire()
        name = updated_node.targets[0].target.value
        reshape = cst.Call(
            func=cst.Attribute(value=name, attr=cst.Name("reshape")), args=[cst.Arg(updated_node.value)]
        )
        return cst.Assign(targets=[cst.AssignTarget(target=name)], value=reshape)
