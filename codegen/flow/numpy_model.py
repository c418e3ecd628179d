"""The model of NumPy the analysis uses: which functions and methods return fresh arrays, views or
numbers, what they store, and the element kinds (``b`` < ``i`` < ``f`` < ``c``) of results.

A new NumPy function is classified here, in one table.  Element kinds are strings of the kinds a value may
have (``"fc"``: float or complex); the promotion of a pair is NumPy's (``np.result_type`` on representatives).
"""

from typing import Callable, Optional

import libcst as cst
import numpy

# -- tables ------------------------------------------------------------------------------------------------

_CREATORS = "zeros ones empty full eye identity arange linspace".split()
#: NumPy functions whose result never shares memory with an argument
FRESH_FUNCTIONS = frozenset(
    f"numpy.{name}"
    for name in [
        *_CREATORS,
        *"zeros_like ones_like empty_like full_like copy kron outer stack concatenate hstack vstack tensordot "
        "append nan_to_num heaviside dot vdot inner einsum_path sum mean std var prod max min amax amin cumsum cumprod diff sort argsort argmax "
        "argmin clip round around tile repeat pad tril triu trace take take_along_axis unique nonzero argwhere "
        "flatnonzero count_nonzero allclose isclose array_equal any all indices where roll sign "
        "searchsorted interp polyval convolve cross histogram meshgrid".split(),
    ]
) | frozenset(
    f"numpy.linalg.{name}"
    for name in "cholesky det eigh eigvalsh eigvals eig inv matrix_power norm qr solve svd pinv lstsq".split()
)
#: reductions that return a NumPy *scalar* (immutable: ``+=`` on it rebinds) when given one array and no axis,
#: with the element kind of the result per kind of the argument
SCALAR_REDUCTIONS: dict[str, dict[str, str]] = {
    **{name: {"b": "i", "i": "i", "f": "f", "c": "c"} for name in ("sum", "prod")},
    **{name: {"b": "b", "i": "i", "f": "f", "c": "c"} for name in ("max", "min", "amax", "amin")},
    "mean": {"b": "f", "i": "f", "f": "f", "c": "c"},
    **{name: {"b": "f", "i": "f", "f": "f", "c": "f"} for name in ("std", "var")},
}
#: NumPy functions that return their array argument or a *writable* view of it
WRITABLE_VIEW_FUNCTIONS = frozenset(
    f"numpy.{name}"
    for name in "asarray asanyarray reshape transpose swapaxes moveaxis ravel squeeze expand_dims flip fliplr "
    "flipud rot90 atleast_1d atleast_2d atleast_3d ascontiguousarray".split()
)
#: fresh NumPy functions whose result has the kind of their arguments promoted together
_SAME_KIND_FUNCTIONS = frozenset(
    "append kron outer tile repeat roll sort clip diff cumsum cumprod tril triu take dot vdot inner tensordot "
    "heaviside nan_to_num".split()
)
#: NumPy functions (of the views below) whose result has their first argument's kind; ``real`` and ``imag``
#: make complex real
DTYPE_KEEPING_VIEWS = frozenset({"diag", "diagonal", "broadcast_to", "real", "imag"})
#: documented for readers: NumPy functions known to return (possibly read-only) views; like every ``numpy.*``
#: name outside the two tables above, their results are treated as unowned views of their array arguments
READ_ONLY_OR_VIEW_FUNCTIONS = frozenset(
    f"numpy.{name}"
    for name in "real imag diag diagonal broadcast_to broadcast_arrays einsum split array_split hsplit vsplit "
    "dsplit require frombuffer asarray_chkfinite".split()
)
#: array methods returning a fresh array
FRESH_METHODS = frozenset(
    "copy flatten sum mean std var prod max min argmax argmin cumsum cumprod dot round clip trace any all "
    "nonzero argsort searchsorted take repeat compress".split()
)
#: array methods returning the array itself or a writable view of it
WRITABLE_VIEW_METHODS = frozenset("reshape transpose swapaxes ravel squeeze view".split())
#: Functions ``jax.numpy`` has only for complex arguments: NumPy's result dtype depends on the data otherwise
#: (``np.linalg.eig`` of a real matrix is real where every eigenvalue is real, JAX's always complex).
COMPLEX_ONLY = frozenset({"numpy.linalg.eig", "numpy.linalg.eigvals"})
#: methods that mutate an array in place
INPLACE_METHODS = frozenset("fill sort resize itemset put setflags partition byteswap".split())
#: container methods that store their argument
STORING_METHODS = frozenset("append extend insert add update setdefault __setitem__ appendleft".split())
#: builtins that neither keep nor return their arguments
PURE_BUILTINS = {
    "builtins.len": "i",
    "builtins.int": "i",
    "builtins.float": "f",
    "builtins.complex": "c",
    "builtins.bool": "b",
    "builtins.abs": None,
    "builtins.round": None,
    "builtins.isinstance": "b",
    "builtins.print": None,
    "builtins.str": None,
    "builtins.repr": None,
    "builtins.range": None,
}
_DTYPES = {
    "numpy.float64": "f",
    "numpy.float32": "f",
    "numpy.complex128": "c",
    "numpy.complex64": "c",
    "numpy.int64": "i",
    "numpy.int32": "i",
    "numpy.bool_": "b",
    "builtins.float": "f",
    "builtins.complex": "c",
    "builtins.int": "i",
    "builtins.bool": "b",
}
_ORDER = "bifc"
#: attributes every array has (never tracked as an object's attribute)
_ARRAY_ATTRIBUTES = frozenset(
    "T mT real imag flat shape strides ndim size itemsize nbytes dtype base at".split()
)
_SCALAR_ANNOTATIONS = {
    "builtins.int": "i",
    "builtins.float": "f",
    "builtins.complex": "c",
    "builtins.bool": "b",
}
_CONTAINER_ANNOTATIONS = {
    "builtins.list": "list",
    "typing.List": "list",
    "builtins.dict": "dict",
    "typing.Dict": "dict",
    "builtins.str": "other",
    "builtins.tuple": "other",
    "typing.Tuple": "other",
}
#: module attributes of the standard library that are containers, never arrays (``os.environ[k] = v``)
KNOWN_CONTAINERS = {"os.environ": "dict", "sys.modules": "dict", "sys.path": "list"}
#: augmented operator -> binary operator symbol
AUG_SYMBOLS = {
    cst.AddAssign: "+",
    cst.SubtractAssign: "-",
    cst.MultiplyAssign: "*",
    cst.DivideAssign: "/",
    cst.PowerAssign: "**",
    cst.FloorDivideAssign: "//",
    cst.ModuloAssign: "%",
    cst.MatrixMultiplyAssign: "@",
    cst.BitAndAssign: "&",
    cst.BitOrAssign: "|",
    cst.BitXorAssign: "^",
    cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>",
}
#: augmented operator -> the method of JAX's ``x.at[...]`` that applies it
AT_METHODS = {
    cst.AddAssign: "add",
    cst.SubtractAssign: "subtract",
    cst.MultiplyAssign: "multiply",
    cst.DivideAssign: "divide",
    cst.PowerAssign: "power",
}
#: their symbols
AT_OPERATORS = frozenset(AUG_SYMBOLS[operator] for operator in AT_METHODS)


def ufunc_inputs(qualified: Optional[str]) -> Optional[int]:
    """``nin`` of the NumPy ufunc ``qualified`` (e.g. ``numpy.exp`` -> 1); None if it is not a ufunc."""
    if not qualified or not qualified.startswith("numpy."):
        return None
    obj: object = numpy
    for part in qualified.split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj.nin if isinstance(obj, numpy.ufunc) else None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def kinds_union(*kinds: Optional[str]) -> Optional[str]:
    """The element kinds of a value that may have any of ``kinds`` (None: unknown)."""
    if any(k is None for k in kinds) or not kinds:
        return None
    return "".join(k for k in _ORDER if any(k in kind for kind in kinds if kind))


def promote(*kinds: Optional[str]) -> Optional[str]:
    """The kinds of the result of an arithmetic operation on values of ``kinds`` (each pair promoted)."""
    if kinds and "c" in kinds:  # complex absorbs every numeric kind, known or not
        return "c"
    if any(k is None for k in kinds) or not kinds:
        return None
    results = {""}
    for kind in kinds:
        results = {max(r + k, key=_ORDER.index) for r in results for k in kind}  # type: ignore[operator]
    return kinds_union(*results)


def _result_kind(op: str, a: Optional[str], b: Optional[str]) -> Optional[str]:
    kinds = promote(a, b)
    if kinds is None:
        return None
    return kinds_union(*(_one_result_kind(op, kind) for kind in kinds))


def _one_result_kind(op: str, kind: str) -> str:
    if op == "/" and kind in "bi":
        return "f"
    if kind == "b" and op in ("+", "-", "*", "**", "//", "%"):
        return "i" if op != "+" else "b"
    return kind


def _augmented_problem(op: str, kinds: str, value_kinds: Optional[str]) -> Optional[str]:
    """Why ``a OP= v`` may differ between NumPy and JAX for some pair of the possible kinds (None: it cannot)."""
    if value_kinds is None:
        return "a value whose dtype the analysis does not know"
    for kind in kinds:
        for value_kind in value_kinds:
            reason = _one_augmented_problem(op, kind, value_kind)
            if reason is not None:
                return reason
    return None


def _one_augmented_problem(op: str, kind: str, value_kind: str) -> Optional[str]:
    if kind == "b":
        return "a boolean array"
    allowed = {
        "i": {"+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"},
        "f": {"+", "-", "*", "/", "**", "//", "%"},
        "c": {"+", "-", "*", "/", "**"},
    }[kind]
    if op not in allowed:
        return f"`{op}=` on a `{kind}` array (NumPy and JAX disagree on the result's dtype or value)"
    if _ORDER.index(value_kind) > _ORDER.index(kind):
        return f"a `{value_kind}` value on a `{kind}` array (NumPy casts in place or refuses, JAX promotes)"
    if kind in "bi" and value_kind not in "bi":
        return "a non-integer value on an integer array"
    return None


def _set_problem(kinds: str, value_kinds: str) -> Optional[str]:
    """Why ``a[i] = v`` may differ for some pair of the possible kinds: a value of a higher kind than the array.

    A float into an array that may be integer or inexact (an argument's dtype, ``"ifc"``) is allowed: both
    packages truncate it into an integer array (JAX with a warning), and store it as is otherwise."""
    for kind in kinds:
        for value_kind in value_kinds:
            if kind == "i" and value_kind == "f" and len(kinds) > 1:
                continue
            if _ORDER.index(value_kind) > _ORDER.index(kind):
                return f"a `{value_kind}` value into a `{kind}` array (NumPy casts, JAX promotes or warns)"
    return None


_BOOLEAN_UFUNCS = {
    "isnan",
    "isfinite",
    "isinf",
    "logical_and",
    "logical_or",
    "logical_not",
    "greater",
    "less",
    "equal",
    "not_equal",
    "greater_equal",
    "less_equal",
    "signbit",
}
_FLOATING_UFUNCS = {
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "log10",
    "exp2",
    "log2",
    "expm1",
    "log1p",
    "true_divide",
    "divide",
    "arctan",
    "arcsin",
    "arccos",
}


def real_kind(kinds: str) -> Optional[str]:
    """The kinds of the real values of ``kinds`` (``abs``, ``.real``): complex becomes float."""
    return kinds_union(*("f" if k == "c" else k for k in kinds))


def _ufunc_kind(qualified: str, kinds: list[Optional[str]]) -> Optional[str]:
    name = qualified.rsplit(".", 1)[-1]
    if name in _BOOLEAN_UFUNCS:
        return "b"
    kind = promote(*kinds) if kinds else None
    if kind is not None and name in _FLOATING_UFUNCS:
        kind = kinds_union(*("f" if k in "bi" else k for k in kind))
    if kind is not None and name in ("absolute", "abs"):
        kind = real_kind(kind)
    if name in (
        "add",
        "subtract",
        "multiply",
        "negative",
        "conjugate",
        "conj",
        "maximum",
        "minimum",
        "square",
        "power",
        "absolute",
        "abs",
    ):
        return kind
    return kind if name in _FLOATING_UFUNCS else None


def dtype_of(
    expr: Optional[cst.BaseExpression], qname: Callable[[cst.CSTNode], Optional[str]]
) -> Optional[str]:
    if expr is None:
        return None
    if isinstance(expr, cst.SimpleString):  # ``dtype="complex128"``: NumPy's own dtype strings
        text = expr.evaluated_value
        return _DTYPE_STRINGS.get(text) if isinstance(text, str) else None
    return _DTYPES.get(qname(expr) or "")


#: dtype strings NumPy and jax.numpy both accept, by element kind
_DTYPE_STRINGS = {
    "complex128": "c",
    "complex64": "c",
    "complex": "c",
    "float64": "f",
    "float32": "f",
    "float": "f",
    "int64": "i",
    "int32": "i",
    "int": "i",
    "bool": "b",
}
