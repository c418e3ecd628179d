"""What a ``.shape =`` assignment's new shape does to the array's axes (read by the writes' ``.shape =`` check)."""

from typing import Optional

import libcst as cst

from codegen.flow.numpy_model import _code


def _shape_of_name(node: cst.BaseExpression, name: str) -> bool:
    """Whether ``node`` is ``name.shape``."""
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == name
        and node.attr.value == "shape"
    )


def _sequence_call(node: Optional[cst.BaseExpression]) -> bool:
    """Whether ``node`` is ``tuple(x)`` or ``list(x)`` of one argument (a shape spelled through a sequence)."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("tuple", "list")
        and len(node.args) == 1
    )


def _shape_items(shape: Optional[cst.BaseExpression], name: str) -> Optional[list]:
    """``shape`` as a list of ``1`` (a literal one), ``"all"`` (``name.shape`` spliced in) and ``("axis", k)`` (the
    literal axis ``name.shape[k]``), or None where it holds anything else."""
    if shape is None:
        return None
    if _shape_of_name(shape, name):
        return ["all"]
    if isinstance(shape, cst.BinaryOperation) and isinstance(shape.operator, cst.Add):
        left, right = _shape_items(shape.left, name), _shape_items(shape.right, name)
        return None if left is None or right is None else left + right
    if _sequence_call(shape):
        return _shape_items(shape.args[0].value, name)
    if not isinstance(shape, (cst.Tuple, cst.List)):
        return None
    items: list = []
    for element in shape.elements:
        if isinstance(element, cst.StarredElement):
            inner = _shape_items(element.value, name)
            if inner is None:
                return None
            items.extend(inner)
        elif isinstance(element.value, cst.Integer) and element.value.evaluated_value == 1:
            items.append(1)
        elif (
            isinstance(element.value, cst.Subscript)
            and _shape_of_name(element.value.value, name)
            and len(element.value.slice) == 1
            and isinstance(element.value.slice[0].slice, cst.Index)
            and isinstance(element.value.slice[0].slice.value, cst.Integer)
        ):
            items.append(("axis", element.value.slice[0].slice.value.evaluated_value))
        else:
            return None
    return items


def _unit_axes_only(shape: Optional[cst.BaseExpression], name: str) -> bool:
    """Whether the new shape ``shape`` of ``name`` keeps ``name``'s axes in their order and adds only literal ones:
    ``(1,) + x.shape``, ``(*x.shape, 1)``, ``(x.shape[0], 1, x.shape[1])``.  Such a ``.shape =`` inserts axes of
    size 1 (or, where ``x`` has axes the shape leaves out, either drops axes of size 1 or fails in both packages:
    the sizes differ), which NumPy does in place for any memory layout."""
    items = _shape_items(shape, name)
    if items is None:
        return False
    whole = items.count("all")
    axes = [item[1] for item in items if isinstance(item, tuple)]
    if whole:
        return whole == 1 and not axes
    return all(axis >= 0 for axis in axes) and all(a < b for a, b in zip(axes, axes[1:]))


def _names_axis(shape: Optional[cst.BaseExpression], flat: str) -> bool:
    """Whether the shape expression ``shape`` (tuples, lists, ``tuple(...)``/``list(...)``, ``+`` and ``*`` of
    them) holds ``flat``'s code as one of its axes."""
    if isinstance(shape, (cst.Tuple, cst.List)):
        return any(isinstance(e, cst.Element) and _code(e.value) == flat for e in shape.elements) or any(
            isinstance(e, cst.StarredElement) and _names_axis(e.value, flat) for e in shape.elements
        )
    if isinstance(shape, cst.BinaryOperation) and isinstance(shape.operator, (cst.Add, cst.Multiply)):
        return _names_axis(shape.left, flat) or _names_axis(shape.right, flat)
    if _sequence_call(shape):
        return _names_axis(shape.args[0].value, flat)
    return False
