"""The value lattice: what a name may hold (:class:`Val`), states per program point, and findings."""

import re
from dataclasses import dataclass, field, replace
from typing import Optional

import libcst as cst

from codegen.flow.numpy_model import _code, _result_kind, kinds_union

# -- values and states -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
    kinds: frozenset[str]
    bufs: frozenset[str] = frozenset()
    owned: bool = False
    contig: bool = False
    shape: Optional[tuple[str, ...]] = None  # the axes' lengths: literals, never rebound names, "" if unknown
    #: the element kinds it may have: "b", "i", "f", "c" or several ("fc"); of an ``other`` value, the kind of
    #: every element of a tuple of Python numbers (``scipy.integrate.quad``'s value and error)
    dtype: Optional[str] = None
    stop: Optional[str] = None  # an int known to lie in [0, stop)
    const: Optional[int] = None  # an int known exactly
    low: Optional[int] = None  # a lower bound of an int (``if n < 1: raise ...`` gives 1)
    device: bool = False  # made by a NumPy call, so a ``jax.Array`` in oqupy_jax (an argument may be NumPy's)
    origin: str = ""  # how a non-owned array came to be (for messages)
    #: a tuple (or a slice, or a dict of tuples) usable as an index: the possible tuples, ints and None (a slice)
    index: Optional[frozenset[tuple[Optional[int], ...]]] = None
    obj: str = (
        ""  # the array object (not memory) made at a site of this function, "" if unknown or not made here
    )
    ndim: Optional[int] = None  # the number of axes, when known without the shape
    #: a ``str`` (never a NumPy or JAX array, and as an index never an array's element); of a list built here,
    #: that every element is one
    text: bool = False
    traced: bool = False  # a number that may be a JAX scalar under tracing (a kernel's argument, an element)
    #: ``x.reshape(E)`` with one argument: the code of ``E`` (its names are locals; any rebinding clears it)
    flat: str = ""
    #: a tuple of known length: what each element holds (``a, b = f()`` with ``f`` annotated
    #: ``-> Tuple[np.ndarray, List[int]]``)
    items: Optional[tuple["Val", ...]] = None
    #: its ``other`` kind is ``None`` and nothing else (``Optional[int]``, ``x = None``): ``if x is not None``
    #: leaves what else it may be
    none: bool = False

    @property
    def maybe_array(self) -> bool:
        return bool(self.kinds & {"array", "unknown"})


UNKNOWN = Val(frozenset({"unknown"}), frozenset({"?"}))
_SLICE: frozenset[tuple[Optional[int], ...]] = frozenset({(None,)})  # the index facts of a slice object
OTHER = Val(frozenset({"other"}))
NONE = Val(frozenset({"other"}), none=True)
TEXT = Val(frozenset({"other"}), text=True)  # a string
INT_TUPLE = Val(frozenset({"other"}), dtype="i")  # a tuple of Python ints (``.shape``, ``.strides``)


def returned_val(kind: str, call: str) -> Val:
    """What a call returns whose function is annotated (``analysis.return_kind``: "array", a scalar's element
    kind, a container, ``tuple:k1,k2``); ``call`` names it in messages."""
    if kind == "array":  # of unknown memory: it may be an argument, a view or a module's array
        return Val(frozenset({"array"}), frozenset({"?"}), origin=f"the array {call} returns")
    if kind in ("list", "dict", "other"):
        return Val(frozenset({kind}), frozenset({"?"}))
    if kind == "text":
        return TEXT
    if kind == "unknown":
        return Val(frozenset({"unknown"}), frozenset({"?"}), origin=f"a value {call} returns")
    if kind.startswith("optional:"):
        inner = returned_val(kind[len("optional:") :], call)
        return replace(inner, kinds=inner.kinds | {"other"}, none=True)
    if kind.startswith("tuple:"):
        items = tuple(returned_val(item, call) for item in kind[len("tuple:") :].split(","))
        return Val(frozenset({"other"}), frozenset({"?"}), items=items)
    return num(kind)


def field_name(value: Val) -> bool:
    """Whether an index is a string (a field or dict key): never an array's element, never out of bounds."""
    return value.text and "list" not in value.kinds


def numbers_tuple(value: Val) -> bool:
    """Whether ``value`` is a tuple of Python numbers of a known kind (its elements are ``num(value.dtype)``)."""
    return (
        value.kinds == frozenset({"other"}) and bool(value.dtype) and value.index is None and not value.text
    )


def value_kinds(value: Val) -> Optional[str]:
    """The element kinds a value written into an array may have: its dtype's, every numeric kind ("bifc") for a
    number or an array of unknown dtype, None for what may be neither (a list, an unknown object)."""
    if not value.kinds or not value.kinds <= {"num", "array"}:
        return None
    return value.dtype or "bifc"


def num(kind: Optional[str], **facts) -> Val:
    return Val(frozenset({"num"}), dtype=kind, **facts)


def join(a: Optional[Val], b: Optional[Val]) -> Optional[Val]:
    if a is None or b is None or a == b:
        return a if b is None else b
    return Val(
        a.kinds | b.kinds,
        a.bufs | b.bufs,
        a.owned and b.owned,
        a.contig and b.contig,
        a.shape if a.shape == b.shape else None,
        kinds_union(a.dtype, b.dtype),
        a.stop if a.stop == b.stop else None,
        a.const if a.const == b.const else None,
        min(a.low, b.low) if a.low is not None and b.low is not None else None,
        a.device and b.device,
        a.origin or b.origin,
        a.index | b.index if a.index is not None and b.index is not None else None,
        a.obj if a.obj == b.obj else "",
        a.ndim if a.ndim == b.ndim else None,
        a.text and b.text,
        a.traced or b.traced,
        a.flat if a.flat == b.flat else "",
        a.items if a.items == b.items else None,
        "other" in a.kinds | b.kinds
        and (a.none or "other" not in a.kinds)
        and (b.none or "other" not in b.kinds),
    )


@dataclass
class State:
    names: dict[str, Val] = field(default_factory=dict)
    escaped: set[str] = field(default_factory=set)

    def copy(self) -> "State":
        return State(dict(self.names), set(self.escaped))


def untracked_attribute(key: str, kinds: frozenset[str] = frozenset({"unknown"})) -> Val:
    """What ``obj.attr`` (``key``) may hold where this function has not assigned it: memory it does not own."""
    attr = key.rsplit(".", 1)[-1]
    return Val(kinds, frozenset({f"attr:{attr}"}), origin=f"the attribute `{key}`")


def forget_flat(state: "State", name: str) -> None:
    """``name`` is rebound: a ``flat`` fact that names it no longer holds."""
    for key, value in list(state.names.items()):
        if value.flat and name in _FLAT_NAMES.findall(value.flat):
            state.names[key] = replace(value, flat="")


_FLAT_NAMES = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def join_states(a: Optional[State], b: Optional[State]) -> Optional[State]:
    if a is None or b is None:
        return (a if b is None else b).copy() if (a or b) is not None else None
    names = {}
    for k in a.names.keys() | b.names.keys():
        left, right = a.names.get(k), b.names.get(k)
        if "." in k and (left is None or right is None):  # an attribute assigned on one path only
            left, right = left or untracked_attribute(k), right or untracked_attribute(k)
        names[k] = join(left, right)
    return State({k: v for k, v in names.items() if v is not None}, a.escaped | b.escaped)


def same_state(a: Optional[State], b: Optional[State]) -> bool:
    if a is None or b is None:
        return a is b
    return a.names == b.names and a.escaped == b.escaped


@dataclass(frozen=True)
class Finding:
    """What the analysis could not prove at ``node``, filed under the rule that renders it; ``facts`` are what
    a rule may select on (``("argument", "x")``: the write reaches the argument ``x``)."""

    node: cst.CSTNode
    rule: str
    message: str
    idiom: str
    facts: tuple[tuple[str, str], ...] = ()


def _binary_symbol(expr: cst.BinaryOperation) -> str:
    return _code(expr.operator).strip()


def _arith(left: Val, right: Val, op: str, fresh: Optional[Val] = None) -> Val:
    if "array" in left.kinds or "array" in right.kinds:
        if fresh is None:
            return Val(frozenset({"array"}))
        arrays = [v for v in (left, right) if "array" in v.kinds]
        shape = arrays[0].shape if len(arrays) == 1 or arrays[0].shape == arrays[1].shape else None
        if op == "@":
            shape = None
        return replace(
            fresh,
            device=any(v.device for v in arrays),
            contig=all(v.contig for v in arrays) or op == "@",
            shape=shape,
            dtype=_result_kind(op, left.dtype, right.dtype),
        )
    if left.kinds == frozenset({"num"}) and right.kinds == frozenset({"num"}):
        const = None
        if left.const is not None and right.const is not None and op in ("+", "-", "*"):
            const = {
                "+": left.const + right.const,
                "-": left.const - right.const,
                "*": left.const * right.const,
            }[op]
        return num(_result_kind(op, left.dtype, right.dtype), const=const, traced=left.traced or right.traced)
    if left.kinds <= {"list"} and right.kinds <= {"list"} and op == "+":
        return Val(frozenset({"list"}), left.bufs | right.bufs)
    # an unknown operand: ``-1j * x`` is still of a complex kind if it is a number or an array
    dtype = _result_kind(op, left.dtype, right.dtype) if op in ("+", "-", "*", "/", "**") else None
    return Val(
        frozenset({"unknown"}), left.bufs | right.bufs if op in ("+", "*") else frozenset(), dtype=dtype
    )
