"""What a module's private functions are passed, from their call sites in the module."""

from typing import Callable, Optional

import libcst as cst

from codegen.flow.attributes import class_attribute_kinds

#: argument kinds a parameter may take from its call sites (an array never among them)
_NOT_ARRAYS = frozenset({"other", "list", "dict"})


def call_site_kinds(
    module: cst.Module,
    qname: Callable[[cst.CSTNode], Optional[str]],
    is_array: Callable[[Optional[cst.Annotation]], bool],
) -> dict[str, dict[str, frozenset[str]]]:
    """Function name -> parameter -> what every call passes, for the module's undecorated functions whose name
    starts with ``_`` and that the module only calls by name (never passes on, rebinds or shadows).

    A parameter is listed when every call passes it an attribute of ``self`` that the class's own code never
    binds to an array (``class_attribute_kinds``: an HDF5 dataset, a list, ``None``), ``None`` or a string, or
    leaves it at such a default: ``_write(step, data=self._data)`` with ``self._data = self._f.create_dataset(...)``
    writes into the dataset in both packages.  A private function is the module's own business: a caller
    elsewhere that passes a NumPy array sees the same NumPy code in both packages."""
    functions = {
        s.name.value: s
        for s in module.body
        if isinstance(s, cst.FunctionDef) and s.name.value.startswith("_") and not s.decorators
    }
    if not functions:
        return {}
    visitor = _Calls(set(functions), qname, is_array)
    module.visit(visitor)
    found: dict[str, dict[str, frozenset[str]]] = {}
    for name, func in functions.items():
        calls = visitor.calls.get(name, [])
        if not calls or visitor.references.get(name, 0) != len(calls) + 1:  # + 1: the ``def`` itself
            continue
        kinds = _parameter_kinds(func, calls)
        if kinds:
            found[name] = kinds
    return found


def _parameter_kinds(
    func: cst.FunctionDef, calls: list[tuple[cst.Call, dict[str, frozenset[str]], str]]
) -> dict[str, frozenset[str]]:
    params = func.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return {}
    positional = [*params.posonly_params, *params.params]
    every = positional + list(params.kwonly_params)
    union: dict[str, frozenset[str]] = {p.name.value: frozenset() for p in every}
    for call, attributes, owner in calls:
        passed: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(call.args):
            if arg.star:
                return {}
            if arg.keyword is not None:
                passed[arg.keyword.value] = arg.value
            elif index < len(positional):
                passed[positional[index].name.value] = arg.value
        for param in every:
            union[param.name.value] |= _kinds(passed.get(param.name.value, param.default), attributes, owner)
    return {name: kinds for name, kinds in union.items() if kinds and kinds <= _NOT_ARRAYS}


def _kinds(
    expr: Optional[cst.BaseExpression], attributes: dict[str, frozenset[str]], owner: str
) -> frozenset[str]:
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or (
        isinstance(expr, cst.Name) and expr.value == "None"
    ):
        return frozenset({"other"})
    if (
        owner
        and isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == owner
    ):
        return attributes.get(expr.attr.value, frozenset({"unknown"}))
    return frozenset({"unknown"})


class _Calls(cst.CSTVisitor):
    """The calls of the named functions, each with the attribute kinds of the class of the method it is in and
    that method's ``self``; and how often each name occurs at all."""

    def __init__(
        self,
        names: set[str],
        qname: Callable[[cst.CSTNode], Optional[str]],
        is_array: Callable[[Optional[cst.Annotation]], bool],
    ) -> None:
        super().__init__()
        self.names = names
        self.qname = qname
        self.is_array = is_array
        self.calls: dict[str, list[tuple[cst.Call, dict[str, frozenset[str]], str]]] = {}
        self.references: dict[str, int] = {}
        self.classes: list[cst.ClassDef] = []
        self.owners: list[str] = []  # per function: its ``self`` if it is a method, else ""
        self._attributes: dict[int, dict[str, frozenset[str]]] = {}  # per class, computed on its first call

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [*node.params.posonly_params, *node.params.params]
        bound = not any(  # ``cls`` of a classmethod holds class attributes, not the instance's
            isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
            for d in node.decorators
        )
        method = bool(self.classes) and not self.owners and params and bound
        self.owners.append(params[0].name.value if method else "")

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.owners.pop()

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.references[node.value] = self.references.get(node.value, 0) + 1

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in self.names:
            return
        owner = self.owners[-1] if self.owners else ""
        attributes: dict[str, frozenset[str]] = {}
        if owner:
            cls = self.classes[-1]
            if id(cls) not in self._attributes:
                self._attributes[id(cls)] = class_attribute_kinds(cls, self.qname, self.is_array)
            attributes = self._attributes[id(cls)]
        self.calls.setdefault(node.func.value, []).append((node, attributes, owner))
