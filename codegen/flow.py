"""Flow-sensitive, alias-aware array facts for one function (what makes an in-place write translatable).

``oqupy_jax`` turns ``x[i] = v`` into ``x = x.at[i].set(v)``: only the name ``x`` sees the new value.  That
is NumPy's meaning only when no other live name, container or caller can see ``x``'s memory, when the
index is in bounds (JAX drops out-of-bounds writes) and free of duplicates, and when NumPy's in-place
casting rules agree with JAX's promotion.  This module proves those facts per program point and reports
every write it cannot prove; the refusal rules in :mod:`codegen.rules.refusals` print the reports.

The abstraction:

- every value is a :class:`Val`: which kinds it may have (``array``, ``num``, ``list``, ``dict``, ``other``,
  ``unknown``), which memory (*buffers*) it may share (``new@<site>`` for an allocation in this function,
  ``param:<name>`` for an argument, ``?`` for memory of unknown origin), whether it is *owned* (every buffer
  allocated here and the value writable), and when known its element kind, shape and C-contiguity;
- states map names to values, are joined at branches and iterated to a fixed point over loops; a buffer
  stored into a container, an attribute or passed to an unknown function is *escaped* for good;
- a write to ``x`` is safe when ``x`` is owned, none of its buffers escaped, and no other name that may
  share a buffer is live (read later, read in the enclosing loop, or referenced by a closure).

NumPy functions are classified by qualified name through explicit tables (:data:`FRESH_FUNCTIONS`,
:data:`WRITABLE_VIEW_FUNCTIONS`; every other ``numpy.*`` call may return a view of its array arguments).
"""

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import libcst as cst
import numpy

from codegen.analysis import kept_branch

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


# -- values and states -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
    kinds: frozenset[str]
    bufs: frozenset[str] = frozenset()
    owned: bool = False
    contig: bool = False
    shape: Optional[tuple[str, ...]] = None
    dtype: Optional[str] = None  # the element kinds it may have: "b", "i", "f", "c" or several ("fc")
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

    @property
    def maybe_array(self) -> bool:
        return bool(self.kinds & {"array", "unknown"})


UNKNOWN = Val(frozenset({"unknown"}), frozenset({"?"}))
_SLICE: frozenset[tuple[Optional[int], ...]] = frozenset({(None,)})  # the index facts of a slice object
OTHER = Val(frozenset({"other"}))


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
    )


def kinds_union(*kinds: Optional[str]) -> Optional[str]:
    """The element kinds of a value that may have any of ``kinds`` (None: unknown)."""
    if any(k is None for k in kinds) or not kinds:
        return None
    return "".join(k for k in _ORDER if any(k in kind for kind in kinds if kind))


def promote(*kinds: Optional[str]) -> Optional[str]:
    """The kinds of the result of an arithmetic operation on values of ``kinds`` (each pair promoted)."""
    if any(k is None for k in kinds) or not kinds:
        return None
    results = {""}
    for kind in kinds:
        results = {max(r + k, key=_ORDER.index) for r in results for k in kind}  # type: ignore[operator]
    return kinds_union(*results)


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


# -- the source-order skeleton: positions, reads, bindings ----------------------------------------------------


class _Skeleton(cst.CSTVisitor):
    """Pre-order numbering of every node, the names read at each position, closures' names."""

    def __init__(self, root: cst.FunctionDef) -> None:
        super().__init__()
        self.root = root
        self.span: dict[int, tuple[int, int]] = {}
        self.counter = 0
        self.binding: set[int] = set()
        self.reads: list[tuple[int, str]] = []
        self.closure: set[str] = set()
        self.assigned: set[str] = set()
        self.nested = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.counter += 1
        self.span[id(node)] = (self.counter, self.counter)
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not self.root:
            self.nested += 1
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind(target.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            self._bind(node.target)
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                self.binding.discard(id(node.target))  # also read
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._bind(node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._bind(node.asname.name)
        elif isinstance(node, cst.NamedExpr):
            self._bind(node.target)
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            self._bind(node.name.name)
        elif isinstance(node, cst.Name) and id(node) not in self.binding:
            if self.nested:
                self.closure.add(node.value)
            self.reads.append((self.counter, node.value))
        if isinstance(node, cst.Attribute):
            node.value.visit(self)
            return False
        if isinstance(node, cst.Arg):
            node.value.visit(self)
            return False
        if isinstance(node, (cst.Param, cst.ImportAlias)):
            if node is not None and isinstance(node, cst.Param) and node.default is not None:
                node.default.visit(self)
            return False
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not self.root:
            self.assigned.add(node.name.value)
            if isinstance(node, cst.FunctionDef):
                node.params.visit(self)
                node.body.visit(self)
            else:
                node.body.visit(self)
            return False
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        start, _ = self.span[id(original_node)]
        self.span[id(original_node)] = (start, self.counter)
        if isinstance(original_node, (cst.FunctionDef, cst.Lambda)) and original_node is not self.root:
            self.nested -= 1

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.binding.add(id(target))
            if not self.nested:
                self.assigned.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)


# -- the analysis --------------------------------------------------------------------------------------------


class FunctionFlow:
    """Abstract interpretation of one function body, or of a module's top-level statements.

    ``qname`` resolves qualified names (libcst metadata), ``is_array`` tells array annotations, ``backend``
    picks the branch of ``if BACKEND == ...`` blocks, ``enclosing`` holds the names bound by enclosing
    functions (writes to them from a closure are refused), ``donating`` maps this module's kernels to their
    donated parameters, ``attributes`` the kinds of the attributes of ``self`` (for a method, see
    :func:`class_attribute_kinds`).  After :meth:`run`, ``problems`` lists the unsafe constructs and
    ``owned_writes`` the ids of the subscript writes (and ``.shape =`` assignments) that the JAX rewrite may
    turn into functional updates.

    Attributes: ``obj.attr`` for a local name ``obj`` is tracked as the pseudo-name ``"obj.attr"`` once this
    function assigns it; until then (and after an unknown call, which may store it anywhere) it holds memory
    this function does not own.  Attribute pseudo-names are always live (the object outlives the call), and
    at module level every name is (module globals are visible to importers).
    """

    def __init__(
        self,
        node: cst.FunctionDef | cst.Module,
        qname: Callable[[cst.CSTNode], Optional[str]],
        is_array: Callable[[Optional[cst.Annotation]], bool],
        backend_test: Callable[[cst.BaseExpression], Optional[tuple[str, bool]]],
        backend: str,
        enclosing: frozenset[str] = frozenset(),
        donating: Optional[dict[str, tuple[tuple[int, str], ...]]] = None,
        attributes: Optional[dict[str, frozenset[str]]] = None,
        module_arrays: frozenset[str] = frozenset(),
        traced: frozenset[str] = frozenset(),
        module_dtypes: Optional[dict[str, str]] = None,
    ) -> None:
        self.node = node
        self.module = isinstance(node, cst.Module)
        self.attributes = attributes
        self.array_subscripts: set[int] = (
            set()
        )  # ids of subscripts (reads and writes) of what may be an array
        self.all_live = 0  # > 0 inside a class body: its names are class attributes
        self.qname = qname
        self.is_array = is_array
        self.backend_test = backend_test
        self.backend = backend
        self.enclosing = enclosing
        self.module_arrays = module_arrays
        self.traced = traced  # a kernel's traced parameters: JAX arrays in oqupy_jax
        self.module_dtypes = (
            module_dtypes or {}
        )  # module constants naming a dtype (``DTYPE = np.complex128``)
        self.donating = donating or {}
        self.problems: dict[tuple[int, str], Finding] = {}
        self.owned_writes: set[int] = set()
        #: id of a proved write -> (subscript element, axis) of literal indices to check against the static shape
        self.checked_indices: dict[int, tuple[tuple[int, int], ...]] = {}
        self.element_vals: dict[int, list[Val]] = {}
        #: ids of the statements whose ``a[i][j] = v`` (integer ``i``) is written ``a[i, j] = v`` by chained-write
        self.flattened: set[int] = set()
        #: ids of proved writes into arrays that may be NumPy's in oqupy_jax: written ``jnp.asarray(x).at[i]``
        self.host_writes: set[int] = set()
        #: ids of ``x.sort()`` statements (-> "rebind": ``x = x.sort()``) and ``x.setflags(write=False)`` ("drop")
        self.rewritten_methods: dict[int, str] = {}
        self.synthetic: dict[
            int, cst.CSTNode
        ] = {}  # a flattened subscript -> the template's  # a literal tuple's element values (tuple indices)
        self.reporting = True
        self.loops: list[cst.CSTNode] = []
        self.jumps: list[dict[str, Optional[State]]] = []
        self.declared: set[str] = set()  # global / nonlocal
        self._state: Optional[State] = None  # the state an expression is evaluated in
        skeleton = _Skeleton(node)
        node.visit(skeleton)
        self.skeleton = skeleton
        self.locals = skeleton.assigned | {p.name.value for p in self._params()}

    # -- driver ----------------------------------------------------------------------------------------
    def _params(self) -> list[cst.Param]:
        if self.module:
            return []
        p = self.node.params
        extra = [x for x in (p.star_arg, p.star_kwarg) if isinstance(x, cst.Param)]
        return [*p.posonly_params, *p.params, *p.kwonly_params, *extra]

    @property
    def self_name(self) -> Optional[str]:
        """The first parameter of a method (``self``), whose attributes ``attributes`` describes."""
        params = self._params()
        return params[0].name.value if self.attributes is not None and params else None

    def run(self) -> "FunctionFlow":
        state = State()
        for param in self._params():
            state.names[param.name.value] = self._param_val(param)
        body = cst.IndentedBlock(body=self.node.body) if self.module else self.node.body
        self._block(body, state)
        self.final = state
        return self

    @property
    def arrays(self) -> frozenset[str]:
        """After :meth:`run`: the names that hold an array at the end (at module level: the module's arrays)."""
        return frozenset(name for name, val in self.final.names.items() if "array" in val.kinds)

    def _param_val(self, param: cst.Param) -> Val:
        name = param.name.value
        buf = frozenset({f"param:{name}"})
        if name == self.self_name:
            return Val(frozenset({"other"}), buf)  # an object: its attributes are tracked by name
        annotation = param.annotation
        if annotation is None:
            return Val(frozenset({"unknown"}), buf, origin=f"the unannotated argument `{name}`")
        if self.is_array(annotation):
            kinds = {"array"}
            expr = annotation.annotation
            if isinstance(expr, cst.Subscript) and self.qname(expr.value) == "typing.Optional":
                kinds.add("other")
            # by convention an ``np.ndarray`` argument is a float or complex array (see dtype-safety)
            return Val(
                frozenset(kinds), buf, dtype="fc", device=name in self.traced, origin=f"the argument `{name}`"
            )
        expr = annotation.annotation
        base = expr.value if isinstance(expr, cst.Subscript) else expr
        qualified = self.qname(base) or ""
        if qualified in _SCALAR_ANNOTATIONS:
            return num(_SCALAR_ANNOTATIONS[qualified])
        if qualified in _CONTAINER_ANNOTATIONS:
            return Val(frozenset({_CONTAINER_ANNOTATIONS[qualified]}), buf)
        if isinstance(expr, cst.SimpleString) or qualified in (
            "typing.Any",
            "typing.Union",
            "typing.Optional",
            "",
        ):
            return Val(
                frozenset({"unknown"}), buf, origin=f"the argument `{name}` (annotated `{_code(expr)}`)"
            )
        return Val(frozenset({"other"}), buf)

    def report(
        self, node: cst.CSTNode, rule: str, message: str, idiom: str, facts: tuple[tuple[str, str], ...] = ()
    ) -> None:
        node = self.synthetic.get(id(node), node)  # a flattened ``a[i][j]`` reports at the template's node
        if self.reporting:
            self.problems.setdefault((id(node), rule), Finding(node, rule, message, idiom, facts))

    # -- statements ------------------------------------------------------------------------------------
    def _block(self, body: cst.BaseSuite, state: Optional[State]) -> Optional[State]:
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for statement in statements:
            if state is None:
                return None  # unreachable
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    state = self._small(small, state) if state is not None else None
            else:
                state = self._compound(statement, state)
        return state

    def _compound(self, node: cst.BaseCompoundStatement, state: State) -> Optional[State]:
        if isinstance(node, cst.If):
            test = self.backend_test(node.test)
            if test is not None:
                kept = kept_branch(node, test, self.backend)
                if kept is None:
                    return state
                if isinstance(kept, cst.If):
                    return self._compound(kept, state)
                return self._block(kept, state)
            self.ev(node.test, state)
            after_body = self._block(node.body, state.copy())
            if after_body is None:  # ``if n < 1: raise ...``: what follows knows ``n >= 1``
                state = _refine(node.test, state)
            orelse = node.orelse
            if orelse is None:
                after_else: Optional[State] = state
            elif isinstance(orelse, cst.If):
                after_else = self._compound(orelse, state.copy())
            else:
                after_else = self._block(orelse.body, state.copy())
            return join_states(after_body, after_else)
        if isinstance(node, (cst.For, cst.While)):
            return self._loop(node, state)
        if isinstance(node, cst.Try):
            return self._try(node, state)
        if isinstance(node, cst.With):
            for item in node.items:
                value = self.ev(item.item, state)
                self._escape(value, state)
                self._forget_attributes(state)  # ``__enter__`` may do anything
                if item.asname is not None:
                    self._bind(item.asname.name, UNKNOWN, state, node)
            return self._block(node.body, state)
        if isinstance(node, cst.FunctionDef):
            state.names[node.name.value] = OTHER
            return state
        if isinstance(node, cst.ClassDef):  # its body runs here; what it binds are class attributes
            inner = state.copy()
            self.all_live += 1
            self._block(node.body, inner)
            self.all_live -= 1
            for name, value in inner.names.items():
                if state.names.get(name) is not value:
                    self._escape(value, inner)
            state.escaped |= inner.escaped
            self._forget_attributes(state, "")
            state.names[node.name.value] = OTHER
            return state
        # match statements and anything new: refused, the analysis cannot follow what they bind
        kind = type(node).__name__
        self.report(
            node,
            "unmodelled-statement",
            f"`{kind.lower()}` statement: the array analysis does not model what it binds",
            "write it with `if` / `elif` / `else`",
        )
        return state

    def _loop(self, node: cst.For | cst.While, state: State) -> Optional[State]:
        reporting = self.reporting
        self.reporting = False
        head: Optional[State] = state.copy()
        for _ in range(8):
            out, jumps = self._loop_body(node, head.copy())
            new_head = join_states(join_states(state, out), jumps["continue"])
            if same_state(new_head, head):
                break
            head = new_head
        else:  # no fixed point: forget everything the loop binds
            head = self._widen(head)
        self.reporting = reporting
        out, jumps = self._loop_body(node, head.copy())
        exit_state = head.copy()
        if isinstance(node, cst.While):
            self.ev(node.test, exit_state)
        if node.orelse is not None:
            exit_state = self._block(node.orelse.body, exit_state)
        return join_states(exit_state, jumps["break"])

    def _widen(self, state: State) -> State:
        widened = state.copy()
        for name, value in widened.names.items():
            widened.names[name] = join(value, UNKNOWN)
        return widened

    def _loop_body(self, node: cst.For | cst.While, state: State):
        self.loops.append(node)
        self.jumps.append({"break": None, "continue": None})
        if isinstance(node, cst.For):
            self._bind(node.target, self._iterate(node.iter, state), state, node)
        else:
            self.ev(node.test, state)
        out = self._block(node.body, state)
        self.loops.pop()
        return out, self.jumps.pop()

    def _iterate(self, expr: cst.BaseExpression, state: State) -> Val:
        if isinstance(expr, cst.Call) and self.qname(expr.func) == "builtins.range":
            args = [a.value for a in expr.args if a.keyword is None]
            for arg in args:
                self.ev(arg, state)
            stop = None
            if len(args) == 1:
                stop = self._length(args[0], state)
            elif len(args) == 2 and isinstance(args[0], cst.Integer) and int(args[0].value) >= 0:
                stop = self._length(args[1], state)
            return num("i", stop=stop)
        value = self.ev(expr, state)
        if "array" in value.kinds:
            return Val(frozenset({"array", "num"}), value.bufs, origin="a loop over an array")
        self._escape(value, state)
        return UNKNOWN

    def _try(self, node: cst.Try, state: State) -> Optional[State]:
        seen: Optional[State] = state.copy()
        current: Optional[State] = state
        for statement in node.body.body:
            if current is None:
                break
            current = self._block(cst.IndentedBlock(body=[statement]), current)
            seen = join_states(seen, current)
        after = current
        if node.orelse is not None and after is not None:
            after = self._block(node.orelse.body, after)
        for handler in node.handlers:
            entry = seen.copy() if seen is not None else State()
            if handler.name is not None:
                entry.names[handler.name.name.value] = OTHER
            after = join_states(after, self._block(handler.body, entry))
        if node.finalbody is not None:
            base = join_states(after, seen)
            end = self._block(node.finalbody.body, base.copy() if base else State())
            return end if after is not None else None
        return after

    def _small(self, node: cst.BaseSmallStatement, state: State) -> Optional[State]:
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
            if len(targets) == 1 and _pairwise(targets[0], node.value):
                values = [self.ev(e.value, state) for e in node.value.elements]
                self._check_donation(node, state)
                for item, element, item_value in zip(targets[0].elements, node.value.elements, values):
                    self._assign(item.value, element.value, item_value, state, node)
                self._assign(targets[0], None, OTHER, state, node)  # reports subscripts in the target
                return state
            value = self.ev(node.value, state)
            self._check_donation(node, state)
            if len(targets) > 1 and any(
                isinstance(t, cst.Subscript) and "array" in self.ev(t.value, state).kinds for t in targets
            ):
                self.report(
                    node,
                    "chained-write",
                    "chained assignment into an array",
                    "assign each target in its own statement",
                )
            for target in targets:
                self._assign(target, node.value, value, state, node)
            return state
        if isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self._assign(node.target, node.value, self.ev(node.value, state), state, node)
            return state
        if isinstance(node, cst.AugAssign):
            self._augassign(node, state)
            return state
        if isinstance(node, cst.Expr):
            if self._statement_method(node, state):
                return state
            self.ev(node.value, state)
            self._check_donation(node, state)
            return state
        if isinstance(node, cst.Return):
            if node.value is not None:
                self.ev(node.value, state)
                self._check_donation(node, state)
            return None
        if isinstance(node, cst.Raise):
            if node.exc is not None:
                self.ev(node.exc, state)
            return None
        if isinstance(node, (cst.Break, cst.Continue)):
            if self.jumps:
                key = "break" if isinstance(node, cst.Break) else "continue"
                self.jumps[-1][key] = join_states(self.jumps[-1][key], state)
            return None
        if isinstance(node, cst.Assert):
            self.ev(node.test, state)
            return state
        if isinstance(node, cst.Del):
            for target in _del_targets(node.target):
                if isinstance(target, cst.Subscript):
                    if "array" in self.ev(target.value, state).kinds:
                        self.array_subscripts.add(id(target))
                        self.report(
                            target,
                            "chained-write",
                            "`del` on an array element",
                            "build a new array (`np.delete` or indexing)",
                        )
                elif isinstance(target, cst.Attribute):
                    self.ev(target.value, state)
                    self._forget_attributes(state, attr=target.attr.value)
            for name in _names_in(node.target):
                self._forget_attributes(state, base=name)
                state.names.pop(name, None)
            return state
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            self.declared.update(n.name.value for n in node.names)
            return state
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            return state
        return state

    # -- bindings and writes ---------------------------------------------------------------------------
    def _bind(self, target: cst.BaseExpression, value: Val, state: State, stmt: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self._forget_attributes(state, base=target.value)
            state.names[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            element = (
                UNKNOWN
                if not ("array" in value.kinds)
                else replace(value, owned=False, kinds=frozenset({"array", "num"}))
            )
            for item in target.elements:
                self._bind(item.value, element, state, stmt)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, Val(frozenset({"list"}), value.bufs), state, stmt)
        else:
            self._assign(target, None, value, state, stmt)

    def _assign(
        self,
        target: cst.BaseExpression,
        value_node: Optional[cst.BaseExpression],
        value: Val,
        state: State,
        stmt: cst.CSTNode,
    ) -> None:
        if isinstance(target, cst.Name):
            if target.value in self.declared:
                self._escape(value, state)
            self._forget_attributes(state, base=target.value)
            state.names[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            subscripts = [e.value for e in target.elements if isinstance(e.value, cst.Subscript)]
            if subscripts:
                self.report(
                    subscripts[0],
                    "chained-write",
                    "subscript inside a tuple target (NumPy assigns one after the other, through views)",
                    "assign each element in its own statement, from names bound first",
                )
            if value_node is not None:
                self._bind(target, value, state, stmt)
        elif isinstance(target, cst.Attribute):
            self.ev(target.value, state)
            if target.attr.value == "shape":
                self._shape_assign(target, value_node, state, stmt)
                return
            key = self._attribute_key(target, state)
            # ``o.attr = v`` may rebind the attribute of any object that ``o`` may be
            self._forget_attributes(state, attr=target.attr.value)
            if key is None:
                self._escape(value, state)
            else:
                state.names[key] = value
        elif isinstance(target, cst.Subscript):
            self._subscript_write(target, None, value_node, value, state, stmt)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, Val(frozenset({"list"}), value.bufs), state, stmt)

    def _shape_assign(
        self, target: cst.Attribute, value_node: Optional[cst.BaseExpression], state: State, stmt: cst.CSTNode
    ) -> None:
        base = target.value
        if not isinstance(base, cst.Name):
            return  # ``self.x.shape =``: refused by the shape-assign rule
        current = state.names.get(base.value)
        if current is None or not current.maybe_array:
            return  # not an array: NumPy semantics of whatever it is, as in the template
        if current.kinds != frozenset({"array"}) or not (current.owned or current.obj):
            self.report(
                target,
                "shape-assign",
                f"`.shape =` on `{base.value}`, which is not a local array (an argument, a view or unknown)",
                f"reshape a local copy: `y = {base.value}.reshape(s)`",
            )
            return
        # ``.shape =`` changes one array object: other names of the same memory keep their shapes, so it is
        # enough that no other live name, container or call holds the *object* (a fresh view made here)
        reason = self._exclusive(base.value, current, state, stmt) if not current.obj else None
        if current.obj and current.obj in state.escaped:
            reason = f"its array object is also held by a container, an attribute or a call (`{base.value}` escaped)"
        for other, val in sorted(state.names.items()):
            if reason is None and current.obj and other != base.value and val.obj == current.obj:
                if self._live(other, stmt):
                    reason = f"`{other}` is the same array object and is used later"
        one_axis = current.ndim == 1 or (current.shape is not None and len(current.shape) == 1)
        if reason is None and not current.contig and not one_axis:
            reason = "may not be C-contiguous (NumPy refuses `.shape =` there, `reshape` copies)"
        if reason is not None:
            self.report(
                target,
                "shape-assign",
                f"`{base.value}.shape =` where `{base.value}` {reason}",
                f"bind a new name: `y = {base.value}.reshape(s)`",
            )
            return
        self.owned_writes.add(id(stmt))
        state.names[base.value] = replace(current, shape=self._shape_of(value_node, state), ndim=None)

    def _subscript_write(
        self,
        target: cst.Subscript,
        op: Optional[str],
        value_node: Optional[cst.BaseExpression],
        value: Val,
        state: State,
        stmt: cst.CSTNode,
    ) -> None:
        flat = self._flattened(target, state)
        if flat is not None:
            self.synthetic[id(flat)] = target
            self.flattened.add(id(stmt))
            target = flat
        base = target.value
        index_vals = [self._index_val(e, state) for e in target.slice]
        key = self._attribute_key(base, state) if isinstance(base, cst.Attribute) else None
        if isinstance(base, cst.Name):
            name = base.value
            current = state.names.get(name)
        elif key is not None:  # ``self.x[i] = v``: the attribute is tracked like a name
            name, current = key, self._attribute_val(base, state)
        else:
            base_val = self.ev(base, state)
            self._escape(value, state)
            self._foreign_write(target, base, base_val, state)
            return
        self.array_subscripts.add(id(target))
        if current is None:
            self._escape(value, state)
            if name in self.enclosing or name in self.declared:
                self.report(
                    target,
                    "closure-write",
                    f"write into `{name}` of an enclosing scope (JAX would rebind a local name)",
                    "pass the array in and return the updated one",
                )
            elif name in self.module_arrays:
                self.report(
                    target,
                    "closure-write",
                    f"write into the module-level array `{name}` (a JAX array cannot be written, and "
                    f"`{name} = {name}.at[...]` would bind a local name)",
                    "pass the array in and return the updated one",
                )
            return
        if not current.maybe_array:
            self._escape(value, state)  # a list or dict now holds the value
            if current.index is not None and name in state.names:
                state.names[name] = replace(current, index=None)
            return
        if "array" not in current.kinds:  # unknown: an unannotated argument or an unknown call's result
            self._escape(value, state)
            if "." in name or any(b.startswith("attr:") for b in current.bufs):
                self._attribute_problem(target, name, current, "write into")
            elif any(b.startswith("param:") for b in current.bufs):
                self.report(
                    target,
                    "argument-write",
                    f"write into `{name}`, {current.origin} (an array would change for NumPy callers only)",
                    f"annotate it (`np.ndarray`, `list`, `dict`); for an array copy first: `{name} = {name}.copy()`",
                    (("argument", name),),
                )
            return
        where = self._write_problem(name, current, state, stmt)
        if where is not None:
            return
        if self._index_problem(target, name, current, index_vals, op, value, state, stmt):
            return
        if self._dtype_problem(target, current, op, value):
            return
        if name in self.declared:
            self.report(
                target, "closure-write", f"write into the global/nonlocal `{name}`", "return the array"
            )
            return
        self.owned_writes.add(id(stmt))
        if (
            not current.device
        ):  # may be a NumPy array in oqupy_jax (made from an argument without a NumPy call)
            self.host_writes.add(id(stmt))
            state.names[name] = replace(state.names.get(name, current), device=True)

    def _flattened(self, target: cst.Subscript, state: State) -> Optional[cst.Subscript]:
        """``a[i][j]`` as ``a[i, j]`` when every inner index is an integer (then the inner subscripts are views of
        ``a`` and the write lands in ``a``); None otherwise."""
        inner: list[cst.SubscriptElement] = []
        base = target.value
        if not isinstance(base, cst.Subscript):
            return None
        while isinstance(base, cst.Subscript):
            for element in base.slice:
                if not isinstance(element.slice, cst.Index) or isinstance(element.slice.value, cst.Ellipsis):
                    return None
                val = self._ev(element.slice.value, state)
                if val.kinds != frozenset({"num"}) or val.dtype != "i":
                    return None
            inner = [*base.slice, *inner]
            base = base.value
        if not isinstance(base, (cst.Name, cst.Attribute)) or "array" not in self._ev(base, state).kinds:
            return None
        return cst.Subscript(value=base, slice=[*inner, *target.slice])

    def _write_problem(
        self, name: str, current: Val, state: State, stmt: cst.CSTNode, device: bool = True
    ) -> Optional[str]:
        """Report and return a reason when writing into ``name`` is not exclusive; None when it is."""
        if not current.owned and ("." in name or any(b.startswith("attr:") for b in current.bufs)):
            self._attribute_problem(stmt, name, current, "in-place write into")
            return f"`{name}` may hold an attribute's array"
        if not current.owned:
            params = sorted(b[len("param:") :] for b in current.bufs if b.startswith("param:"))
            if params:
                reason = f"`{name}` shares memory with the argument `{params[0]}`"
                self.report(
                    stmt,
                    "argument-write",
                    f"in-place write to the argument `{params[0]}`"
                    + (f" through `{name}`" if name != params[0] else "")
                    + " (NumPy callers would see it, JAX callers not)",
                    f"copy first: `{name} = {name}.copy()`, and return the result",
                    (("argument", params[0]),),
                )
                return reason
            origin = current.origin or "memory this function does not own"
            reason = f"`{name}` may be a (read-only) view of {origin}"
            self.report(
                stmt,
                "view-write",
                f"write through `{name}`, which may be a view of {origin}",
                f"take a copy first: `{name} = {name}.copy()`",
            )
            return reason
        reason = self._exclusive(name, current, state, stmt)
        if reason is not None:
            self.report(
                stmt,
                "view-write",
                f"write into `{name}` while {reason}",
                "take `.copy()` where the other name is bound, or bind a new name",
            )
        elif current.kinds != frozenset({"array"}):
            reason = f"`{name}` may or may not be an array here"
            self.report(stmt, "view-write", f"write into {reason}", "bind one kind of value per name")
        return reason

    def _attribute_problem(self, node: cst.CSTNode, name: str, current: Val, what: str) -> None:
        attrs = sorted(b[len("attr:") :] for b in current.bufs if b.startswith("attr:"))
        if "." in name:
            held = f"the attribute `{name}`, which may hold an array this function did not allocate"
            short = name.rsplit(".", 1)[-1]
        else:
            held = f"`{name}`, which may be the array of an attribute (`.{attrs[0] if attrs else '?'}`)"
            short = name
        self.report(
            node,
            "attribute-write",
            f"{what} {held} (NumPy changes it for every holder, JAX would rebind one name)",
            f"build a new array and assign it: `{short} = np.array({name}, dtype=...)`, write into `{short}`, then"
            f" `{name} = {short}`; or annotate the attribute where it is set (`self.{short}: list = []`)",
        )

    def _foreign_write(
        self, target: cst.Subscript, base: cst.BaseExpression, base_val: Val, state: State
    ) -> None:
        """A subscript write whose base is neither a name nor a tracked attribute."""
        if isinstance(base, cst.Subscript):
            if "array" in base_val.kinds:
                self.array_subscripts.add(id(target))
                self.report(
                    target, "chained-write", "chained subscript write", "use one subscript: `a[i, j] = v`"
                )
            return
        if not isinstance(base, cst.Attribute):
            return
        owner = self._ev(base.value, state)
        if "array" in owner.kinds:
            self.array_subscripts.add(id(target))
            self.report(
                target,
                "view-write",
                f"write through the view `.{base.attr.value}` of an array",
                "build the new array explicitly (e.g. `x = x + 1j * v`) instead of writing into a view",
            )
        elif base_val.maybe_array:
            self._attribute_problem(target, _code(base), base_val, "write into")

    def _exclusive(self, name: str, current: Val, state: State, stmt: cst.CSTNode) -> Optional[str]:
        if current.bufs & state.escaped:
            return f"its memory is also held by a container, an attribute or a call (`{name}` escaped)"
        for other, val in sorted(state.names.items()):
            if other != name and val.bufs & current.bufs and self._live(other, stmt):
                return f"`{other}` shares its memory and is used later"
        return None

    def _live(self, name: str, stmt: cst.CSTNode) -> bool:
        if self.module or self.all_live or "." in name or name in self.skeleton.closure:
            return True
        start, end = self.skeleton.span[id(stmt)]
        ranges = [(end + 1, 10**9)] + [self.skeleton.span[id(loop)] for loop in self.loops]
        return any(n == name and any(lo <= pos <= hi for lo, hi in ranges) for pos, n in self.skeleton.reads)

    # -- index, dtype ----------------------------------------------------------------------------------
    def _index_val(self, element: cst.SubscriptElement, state: State) -> Optional[Val]:
        if isinstance(element.slice, cst.Index):
            return self.ev(element.slice.value, state)
        for part in (element.slice.lower, element.slice.upper, element.slice.step):
            if part is not None:
                self.ev(part, state)
        return None

    def _index_items(self, target: cst.Subscript, index_vals: list[Optional[Val]]) -> list[list[tuple]]:
        """The index of a write as one or more alternatives, each a list of items: ``("slice",)``,
        ``("ellipsis",)``, ``("none",)`` or ``("expr", node, value, position)`` (``position``: the subscript
        element, None when the item comes from a tuple).  ``a[(0, -2)]``, ``a[r]`` with ``r = (0, slice(1, 3))``
        and ``a[regions["a"]]`` with a dict of such tuples are read as the tuples they hold."""
        elements = list(target.slice)
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            expr, val = elements[0].slice.value, index_vals[0]
            vals = self.element_vals.get(id(expr))
            if isinstance(expr, cst.Tuple) and vals is not None:
                return [[self._item(e.value, v, None) for e, v in zip(expr.elements, vals)]]
            if val is not None and val.index is not None:
                return [
                    [("slice",) if c is None else ("expr", expr, num("i", const=c), None) for c in choice]
                    for choice in sorted(val.index, key=repr)
                ]
        return [
            [
                ("slice",) if val is None else self._item(e.slice.value, val, position)
                for position, (e, val) in enumerate(zip(elements, index_vals))
            ]
        ]

    def _item(self, expr: cst.BaseExpression, val: Val, position: Optional[int]) -> tuple:
        if isinstance(expr, cst.Ellipsis):
            return ("ellipsis",)
        if isinstance(expr, cst.Name) and expr.value == "None":
            return ("none",)
        if val.index is not None and len(val.index) == 1 and next(iter(val.index)) == (None,):
            return ("slice",)
        return ("expr", expr, val, position)

    def _index_problem(
        self,
        target: cst.Subscript,
        name: str,
        current: Val,
        index_vals: list[Optional[Val]],
        op: Optional[str],
        value: Val,
        state: State,
        stmt: Optional[cst.CSTNode] = None,
    ) -> bool:
        alternatives = self._index_items(target, index_vals)
        checks: list[tuple[int, int]] = []
        reason = None
        for items in alternatives:
            reason = self._items_problem(items, name, current, value, state, checks)
            if reason is not None:
                break
        if reason is None:
            if checks and stmt is not None:
                self.checked_indices[id(stmt)] = tuple(checks)
            return False
        self.report(
            target,
            "index-safety",
            f"write `{_code(target)}` with {reason}",
            "index with a `range` loop variable over the axis length the array was created with, a literal within "
            "a literal shape, a slice or a mask of the array itself; for scatters use `np.add.at` in @host code",
        )
        return True

    def _items_problem(
        self,
        items: list[tuple],
        name: str,
        current: Val,
        value: Val,
        state: State,
        checks: list[tuple[int, int]],
    ) -> Optional[str]:
        shape = current.shape
        axis = 0
        for position, item in enumerate(items):
            if item[0] == "slice":  # never out of bounds, never duplicates
                axis += 1
                continue
            if item[0] == "ellipsis":
                if any(later[0] == "expr" for later in items[position + 1 :]):
                    return "an integer index after `...`"
                axis = -(10**6)  # axes unknown from here on
                continue
            if item[0] == "none":
                continue
            _, expr, val, element = item
            if self._is_mask(expr, val, name, current) and len(items) == 1:
                if "num" not in value.kinds or value.kinds != frozenset({"num"}):
                    return "a boolean mask with a non-scalar value"
                continue
            if val.kinds != frozenset({"num"}) or val.dtype != "i":
                return (
                    "an index that may be an integer array or list (duplicates: NumPy applies once, JAX accumulates"
                    " or picks any; out of bounds: NumPy raises, JAX drops)"
                )
            length = shape[axis] if shape is not None and 0 <= axis < len(shape) else None
            if not self._in_bounds(expr, val, length, state):
                literal = length is not None and length.lstrip("-").isdigit()
                if val.const is not None and element is not None and axis >= 0 and not literal:
                    checks.append((element, axis))  # oqupy_jax checks it against the static shape
                else:
                    reason = f"index `{_code(expr)}` not provably within axis {max(axis, 0)}" + (
                        f" of length `{length}`" if length else " (shape unknown)"
                    )
                    return reason + " (NumPy raises IndexError, JAX drops the write)"
            axis += 1
        return None

    def _is_mask(self, expr: cst.BaseExpression, val: Val, name: str, current: Val) -> bool:
        if val.kinds != frozenset({"array"}) or val.dtype != "b":
            return False
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            sides = [expr.left, expr.comparisons[0].comparator]
            return any(isinstance(s, (cst.Name, cst.Attribute)) and _code(s) == name for s in sides)
        if isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
            args = [a.value for a in expr.args]
            return (
                len(args) == 1 and isinstance(args[0], (cst.Name, cst.Attribute)) and _code(args[0]) == name
            )
        return val.shape is not None and val.shape == current.shape

    def _in_bounds(self, expr: cst.BaseExpression, val: Val, length: Optional[str], state: State) -> bool:
        if length is None:
            return False
        literal = int(length) if length.lstrip("-").isdigit() else None
        if literal is None and length in state.names:
            literal = state.names[length].low  # at least this long
        if val.const is not None and literal is not None:
            return -literal <= val.const < literal
        if val.stop is not None and val.stop == length:
            return True
        if (  # ``-n`` on an axis of length ``n >= 1``
            isinstance(expr, cst.UnaryOperation)
            and isinstance(expr.operator, cst.Minus)
            and isinstance(expr.expression, cst.Name)
            and expr.expression.value == length
            and (literal or 0) >= 1
        ):
            return True
        # ``-1 - i`` and ``length - 1 - i`` with ``i`` in [0, length)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract):
            right = expr.right
            if isinstance(right, cst.Name) and right.value in state.names:
                loop = state.names[right.value].stop
                left = _code(expr.left).replace(" ", "")
                if loop == length and left in ("-1", f"{length}-1"):
                    return True
        span = _interval(expr, state)  # ``3 - i``, ``2 * i + 1`` with ``i`` from ``range(<literal>)``
        return span is not None and literal is not None and -literal <= span[0] and span[1] < literal

    def _dtype_problem(self, target: cst.BaseExpression, current: Val, op: Optional[str], value: Val) -> bool:
        kind = current.dtype
        value_kind = value.dtype if value.kinds <= {"num", "array"} else None
        reason = None
        if kind is None:
            reason = "an array whose dtype the analysis does not know"
            if (
                op is None
                and "array" not in value.kinds
                and value_kind is not None
                and value_kind in ("b", "i")
            ):
                reason = None  # an integer or boolean fits any numeric dtype
        elif op is None:
            if value_kind is None:
                if kind != "c":
                    reason = "a value whose dtype the analysis does not know"
            else:
                reason = _set_problem(kind, value_kind)
        else:
            reason = _augmented_problem(op, kind, value_kind)
        if reason is None:
            return False
        text = f"`{_code(target)} {op or ''}=` with {reason}".replace("  =", " =")
        self.report(
            target,
            "dtype-safety",
            text,
            "create the array with the result's dtype (`dtype=np.complex128`) or write `x = x OP v` (a new array)",
        )
        return True

    def _augassign(self, node: cst.AugAssign, state: State) -> None:
        op = AUG_SYMBOLS[type(node.operator)]
        value = self.ev(node.value, state)
        target = node.target
        if isinstance(target, cst.Subscript):
            self.ev(target, state)
            self._subscript_write(target, op, node.value, value, state, node)
            return
        if isinstance(target, cst.Attribute):
            key = self._attribute_key(target, state)
            if key is None:
                self._escape(value, state)
                current = self.ev(target, state)
                if "array" in self._ev(target.value, state).kinds:
                    self.report(
                        node,
                        "view-write",
                        f"`{_code(target)} {op}=` writes through the view `.{target.attr.value}` of an array",
                        "build the new array explicitly (e.g. `x = x + 1j * v`)",
                    )
                elif current.maybe_array:
                    self._attribute_problem(node, _code(target), current, f"`{op}=` on")
                return
            name, current = key, self._attribute_val(target, state)
        elif isinstance(target, cst.Name):
            name = target.value
            current = state.names.get(name)
        else:
            return
        if current is None:
            if name in self.enclosing or name in self.declared or name in self.module_arrays:
                self.report(
                    node,
                    "closure-write",
                    f"`{name} {op}=` on a name of an enclosing scope",
                    "return the value",
                )
            return
        if not current.maybe_array:
            state.names[name] = _arith(current, value, op)
            return
        if "array" not in current.kinds and ("." in name or any(b.startswith("attr:") for b in current.bufs)):
            self._escape(value, state)
            self._attribute_problem(node, name, current, f"`{op}=` on")
            return
        if "array" not in current.kinds or current.kinds != frozenset({"array"}):
            self.report(
                node,
                "argument-write" if any(b.startswith("param:") for b in current.bufs) else "dtype-safety",
                f"`{name} {op}= ...` where `{name}` may be an array"
                + (f" ({current.origin})" if current.origin else "")
                + " (NumPy updates it in place, JAX rebinds the name)",
                f"write `{name} = {name} {op} ...` (a new value in both packages)",
                (("argument", name),) if any(b.startswith("param:") for b in current.bufs) else (),
            )
            return
        if self._write_problem(name, current, state, node) is not None:
            return
        if op == "@":
            reason = "`@=` (the result's shape may differ)"
        elif "array" in value.kinds and (value.shape is None or value.shape != current.shape):
            reason = (
                "an array operand of unproven shape (NumPy refuses to change the shape in place, JAX rebinds)"
            )
        else:
            reason = None
        if reason is None:
            if current.dtype is None:
                reason = "an array whose dtype the analysis does not know"
            else:
                reason = _augmented_problem(
                    op, current.dtype, value.dtype if value.kinds <= {"num", "array"} else None
                )
        if reason is not None:
            self.report(
                node,
                "dtype-safety",
                f"`{name} {op}= ...` with {reason}",
                f"write `{name} = {name} {op} ...` (a new array in both packages)",
            )

    # -- donation --------------------------------------------------------------------------------------
    def _check_donation(self, stmt: cst.CSTNode, state: State) -> None:
        if not self.donating:
            return
        rebound = set()
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                rebound.update(_names_in(target.target))
        for call in _calls(stmt):
            if not isinstance(call.func, cst.Name) or call.func.value not in self.donating:
                continue
            for position, param in self.donating[call.func.value]:
                arg = _argument(call, position, param)
                if isinstance(arg, cst.Name) and arg.value not in rebound and self._live(arg.value, stmt):
                    self.report(
                        call,
                        "kernel-jit",
                        f"`{arg.value}` is used after being donated to `{call.func.value}` (JAX deletes its buffer)",
                        f"rebind it from the result: `{arg.value} = {call.func.value}(...)`",
                    )

    # -- attributes ------------------------------------------------------------------------------------
    def _attribute_key(self, expr: cst.BaseExpression, state: State) -> Optional[str]:
        """``"obj.attr"`` for ``obj.attr`` where ``obj`` is a name that is not an array or a number."""
        if not isinstance(expr, cst.Attribute) or not isinstance(expr.value, cst.Name):
            return None
        if (
            expr.attr.value in _ARRAY_ATTRIBUTES
            or self.qname(expr) is not None
            and self.qname(expr).startswith(("numpy.", "math.", "scipy."))
        ):
            return None
        owner = state.names.get(expr.value.value)
        if owner is None or owner.kinds & {"array", "num"}:
            return None
        return f"{expr.value.value}.{expr.attr.value}"

    def _attribute_val(self, expr: cst.Attribute, state: State) -> Val:
        """The value of a keyed attribute: tracked, or what the object held before (memory not owned here)."""
        key = self._attribute_key(expr, state)
        assert key is not None
        if key in state.names:
            return state.names[key]
        base, attr = key.rsplit(".", 1)
        kinds = frozenset({"unknown"})
        if base == self.self_name and self.attributes is not None:
            kinds = self.attributes.get(attr, kinds)
        if kinds == frozenset({"num"}):
            return num(None)
        value = untracked_attribute(key, kinds)
        if value.maybe_array:  # ``o.attr`` may be the same object's attribute as a tracked ``self.attr``
            shared = [v.bufs for k, v in state.names.items() if "." in k and k.rsplit(".", 1)[1] == attr]
            value = replace(value, bufs=value.bufs.union(*shared))
        return value

    def _forget_attributes(self, state: State, base: str = "", attr: str = "") -> None:
        """Stop tracking attributes (of ``base``, named ``attr``, or all): their arrays count as escaped."""
        for key in [k for k in state.names if "." in k]:
            owner, name = key.rsplit(".", 1)
            if (not base or owner == base) and (not attr or name == attr):
                self._escape(state.names.pop(key), state)

    # -- expressions -----------------------------------------------------------------------------------
    def _escape(self, value: Val, state: State) -> None:
        state.escaped.update(b for b in value.bufs if b.startswith(("new@", "old@")))
        if value.obj:
            state.escaped.add(value.obj)

    def _site(self, node: cst.CSTNode) -> str:
        """The array object made at ``node`` (a view: its memory is another's, the object is new)."""
        return f"obj@{self.skeleton.span.get(id(node), (0, 0))[0]}"

    def _new(self, node: cst.CSTNode, **facts) -> Val:
        """A fresh allocation at ``node``: the *recency* abstraction keeps the newest array of a site apart
        (``new@<site>``) from all older ones (``old@<site>``, e.g. those of earlier loop iterations)."""
        start, _ = self.skeleton.span.get(id(node), (0, 0))
        newest, older = f"new@{start}", f"old@{start}"
        state = self._state
        if state is not None:
            for name, value in state.names.items():
                if newest in value.bufs:
                    state.names[name] = replace(value, bufs=(value.bufs - {newest}) | {older})
            if newest in state.escaped:
                state.escaped.discard(newest)
                state.escaped.add(older)
        return Val(frozenset({"array"}), frozenset({newest}), owned=True, obj=f"obj@{start}", **facts)

    def _length(self, expr: cst.BaseExpression, state: State) -> Optional[str]:
        """A length expression that keeps its value for the whole call: a literal or a never rebound name."""
        if isinstance(expr, cst.Integer):
            return str(int(expr.value))
        if isinstance(expr, cst.Name) and expr.value not in self.skeleton.assigned:
            val = state.names.get(expr.value)
            if val is not None and val.kinds == frozenset({"num"}) and val.dtype == "i":
                return expr.value
        return None

    def _shape_of(self, expr: Optional[cst.BaseExpression], state: State) -> Optional[tuple[str, ...]]:
        if expr is None:
            return None
        if isinstance(expr, (cst.Tuple, cst.List)):
            parts = [self._length(e.value, state) for e in expr.elements if isinstance(e, cst.Element)]
            if len(parts) != len(expr.elements) or any(p is None for p in parts):
                return None
            return tuple(p for p in parts if p is not None)
        length = self._length(expr, state)
        return (length,) if length is not None else None

    def ev(self, expr: cst.BaseExpression, state: State) -> Val:
        self._state = state
        return self._ev(expr, state)

    def _ev(self, expr: cst.BaseExpression, state: State) -> Val:
        ev = self._ev
        if isinstance(expr, cst.Name):
            if expr.value in state.names:
                return state.names[expr.value]
            if expr.value in ("None",):
                return OTHER
            if expr.value in ("True", "False"):
                return num("b")
            return UNKNOWN
        if isinstance(expr, cst.Integer):
            return num("i", const=int(expr.value, 0))
        if isinstance(expr, cst.Float):
            return num("f")
        if isinstance(expr, cst.Imaginary):
            return num("c")
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            if isinstance(expr, cst.FormattedString):
                for part in expr.parts:
                    if isinstance(part, cst.FormattedStringExpression):
                        ev(part.expression, state)
            return OTHER
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            vals = [ev(element.value, state) for element in expr.elements]
            for val in vals:
                self._escape(val, state)
            if isinstance(expr, cst.List):
                return Val(frozenset({"list"}))
            index = None
            if isinstance(expr, cst.Tuple) and not any(
                isinstance(e, cst.StarredElement) for e in expr.elements
            ):
                self.element_vals[id(expr)] = vals
                if all(v.const is not None or v.index == _SLICE for v in vals):
                    index = frozenset({tuple(v.const if v.const is not None else None for v in vals)})
            return Val(frozenset({"other"}), index=index)
        if isinstance(expr, cst.Dict):
            values = []
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    ev(element.key, state)
                values.append(ev(element.value, state))
                self._escape(values[-1], state)
            indices = [v.index for v in values]
            index = frozenset().union(*indices) if indices and all(i is not None for i in indices) else None
            return Val(frozenset({"dict"}), index=index)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            self._comprehension(expr, state)
            return Val(frozenset({"dict" if isinstance(expr, cst.DictComp) else "list"}))
        if isinstance(expr, cst.StarredElement):
            return ev(expr.value, state)
        if isinstance(expr, cst.BinaryOperation):
            return _arith(ev(expr.left, state), ev(expr.right, state), _binary_symbol(expr), self._new(expr))
        if isinstance(expr, cst.UnaryOperation):
            operand = ev(expr.expression, state)
            if isinstance(expr.operator, cst.Not):
                return num("b")
            if "array" in operand.kinds:
                return self._new(
                    expr,
                    contig=operand.contig,
                    shape=operand.shape,
                    dtype=operand.dtype,
                    device=operand.device,
                )
            if operand.kinds == frozenset({"num"}):
                const = (
                    -operand.const
                    if operand.const is not None and isinstance(expr.operator, cst.Minus)
                    else None
                )
                return num(operand.dtype, const=const)
            return Val(frozenset({"unknown"}))
        if isinstance(expr, cst.Comparison):
            sides = [ev(expr.left, state)] + [ev(c.comparator, state) for c in expr.comparisons]
            arrays = [s for s in sides if "array" in s.kinds]
            if arrays:
                return self._new(expr, dtype="b", shape=arrays[0].shape, device=any(a.device for a in arrays))
            if all(s.kinds == frozenset({"num"}) for s in sides):
                return num("b")
            return Val(frozenset({"unknown"}))
        if isinstance(expr, cst.BooleanOperation):
            return join(ev(expr.left, state), ev(expr.right, state)) or UNKNOWN
        if isinstance(expr, cst.IfExp):
            ev(expr.test, state)
            return join(ev(expr.body, state), ev(expr.orelse, state)) or UNKNOWN
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, state)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, state)
        if isinstance(expr, cst.Call):
            return self._call(expr, state)
        if isinstance(expr, cst.Lambda):
            return OTHER
        if isinstance(expr, cst.NamedExpr):
            value = ev(expr.value, state)
            self._bind(expr.target, value, state, expr)
            return value
        if isinstance(expr, (cst.Await, cst.Yield)):
            inner = getattr(expr, "value", None) or getattr(expr, "expression", None)
            if isinstance(inner, cst.BaseExpression):
                self._escape(ev(inner, state), state)
            return UNKNOWN
        return UNKNOWN

    def _comprehension(self, expr: cst.CSTNode, state: State) -> None:
        inner = state.copy()
        clause = expr.for_in
        while clause is not None:
            self._bind(clause.target, self._iterate(clause.iter, inner), inner, expr)
            for condition in clause.ifs:
                self._ev(condition.test, inner)
            clause = clause.inner_for_in
        if isinstance(expr, cst.DictComp):
            self._escape(self._ev(expr.value, inner), inner)
        else:
            self._escape(self._ev(expr.elt, inner), inner)
        state.escaped |= inner.escaped

    def _subscript(self, expr: cst.Subscript, state: State) -> Val:
        base = self._ev(expr.value, state)
        vals = [self._index_val(e, state) for e in expr.slice]
        if base.kinds == frozenset({"dict"}) and base.index is not None:
            return Val(frozenset({"other"}), index=base.index)  # one of the dict's index tuples
        if "array" in base.kinds:
            self.array_subscripts.add(id(expr))
        if "array" not in base.kinds:
            if base.kinds <= {"num", "other"} and "unknown" not in base.kinds:
                return UNKNOWN if "other" in base.kinds else num(None)
            return UNKNOWN
        if any(v is not None and "list" in v.kinds for v in vals):
            self.report(
                expr,
                "index-safety",
                f"`{_code(expr)}` indexes an array with a Python list (JAX refuses lists as indices)",
                "index with an array: `x[np.asarray(idx)]`",
            )
        fancy = any(v is not None and not (v.kinds == frozenset({"num"}) or v == OTHER) for v in vals)
        if fancy:
            return self._new(expr, dtype=base.dtype, device=base.device)
        ints = sum(v is not None and v.kinds == frozenset({"num"}) for v in vals)
        if base.shape is not None and ints == len(vals) == len(base.shape):
            return num(base.dtype)
        partial = base.shape is not None and ints < len(base.shape) and len(vals) == ints
        return Val(
            frozenset({"array"}) if any(v is None for v in vals) or partial else frozenset({"array", "num"}),
            base.bufs,
            base.owned,
            dtype=base.dtype,
            origin=base.origin,
            device=base.device,
        )

    def _attribute(self, expr: cst.Attribute, state: State) -> Val:
        qualified = self.qname(expr)
        if qualified is not None and qualified.startswith(("numpy.", "math.")):
            return (
                num("f")
                if qualified in ("numpy.pi", "numpy.e", "numpy.inf", "numpy.nan", "math.pi")
                else OTHER
            )
        base = self._ev(expr.value, state)
        attr = expr.attr.value
        if self._attribute_key(expr, state) is not None:
            return self._attribute_val(expr, state)
        if "array" in base.kinds:
            if attr in ("T", "mT"):
                shape = tuple(reversed(base.shape)) if base.shape is not None else None
                return replace(base, contig=False, shape=shape)
            if attr in ("real", "imag", "flat"):
                return replace(base, owned=False, contig=False, shape=None, origin=f"`.{attr}` of an array")
            if attr in ("shape", "strides"):
                return OTHER
            if attr in ("ndim", "size", "itemsize", "nbytes"):
                return num("i")
            if attr == "dtype":
                return OTHER
        if base.kinds == frozenset({"other"}) and not base.bufs:
            return UNKNOWN
        return UNKNOWN

    def _args(self, call: cst.Call, state: State) -> list[Val]:
        return [self._ev(arg.value, state) for arg in call.args]

    def _call(self, call: cst.Call, state: State) -> Val:
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            held = state.names.get(func.value.value)
            if held is not None and held.index is not None and func.attr.value in STORING_METHODS:
                state.names[func.value.value] = replace(held, index=None)  # a dict of indices changes
        qualified = self.qname(func)
        if qualified is None and isinstance(func, cst.Attribute):
            receiver = self._ev(func.value, state)
            args = self._args(call, state)
            return self._method(call, func.attr.value, receiver, args, state)
        if (
            isinstance(func, cst.Attribute)
            and qualified is not None
            and not qualified.startswith(("numpy.", "scipy.", "math.", "builtins."))
        ):
            receiver = self._ev(func.value, state)
            if receiver != UNKNOWN or isinstance(func.value, cst.Name) and func.value.value in state.names:
                args = self._args(call, state)
                return self._method(call, func.attr.value, receiver, args, state)
        args = self._args(call, state)
        arrays = [a for a in args if "array" in a.kinds]
        if qualified == "builtins.slice" and all(a.kinds == frozenset({"num"}) or a == OTHER for a in args):
            return Val(frozenset({"other"}), index=_SLICE)
        if qualified in PURE_BUILTINS:
            if qualified == "builtins.range":
                return OTHER
            kind = PURE_BUILTINS[qualified]
            if kind is None and args:
                kind = args[0].dtype if args[0].kinds == frozenset({"num"}) else None
            return (
                num(kind) if qualified not in ("builtins.print", "builtins.str", "builtins.repr") else OTHER
            )
        if qualified is not None and qualified.startswith("numpy."):
            return self._numpy(call, qualified, args, arrays, state)
        if qualified in ("math.sqrt", "math.exp", "math.log", "math.cos", "math.sin"):
            return num("f")
        for arg in args:
            self._escape(arg, state)
        self._forget_attributes(state)  # the callee may store or rebind any object's attributes
        if qualified in ("builtins.list", "builtins.sorted"):
            return Val(frozenset({"list"}), frozenset({"?"}))
        if qualified in ("builtins.dict",):
            return Val(frozenset({"dict"}), frozenset({"?"}))
        if qualified in ("builtins.tuple", "builtins.zip", "builtins.enumerate", "builtins.map"):
            return Val(frozenset({"other"}), frozenset({"?"}))
        return UNKNOWN

    def _numpy(self, call: cst.Call, qualified: str, args: list[Val], arrays: list[Val], state: State) -> Val:
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        positional = [a.value for a in call.args if a.keyword is None]
        bufs = frozenset().union(*(a.bufs for a in args if a.maybe_array)) if args else frozenset()
        dtype = self._dtype_of(keywords.get("dtype"))
        if qualified == "numpy.array":
            copy = keywords.get("copy")
            if copy is None or (isinstance(copy, cst.Name) and copy.value == "True"):
                first = args[0] if args else OTHER
                order = keywords.get("order")
                contig = isinstance(order, cst.SimpleString) and order.evaluated_value == "C"
                kind = dtype or (first.dtype if first.kinds <= {"num", "array", "list"} else None)
                shape = first.shape if "array" in first.kinds else None
                return self._new(call, dtype=kind, contig=contig, shape=shape, device=True)
            return Val(
                frozenset({"array"}),
                bufs | frozenset({f"new@{self.skeleton.span[id(call)][0]}"}),
                origin="`np.array(..., copy=...)`",
            )
        if ufunc_inputs(qualified) is not None:
            kinds = [a.dtype for a in args[: ufunc_inputs(qualified)]]
            out_kind = _ufunc_kind(qualified, kinds)
            shape = arrays[0].shape if len(arrays) == 1 and len(args) == 1 else None
            if not arrays:
                return num(out_kind)
            return self._new(
                call, dtype=out_kind, shape=shape, contig=all(a.contig for a in arrays), device=True
            )
        name = qualified[len("numpy.") :]
        if name == "nan_to_num" and "copy" in keywords:  # ``copy=False`` may return the argument itself
            return Val(frozenset({"array"}), bufs, origin="`np.nan_to_num(..., copy=...)`")
        if qualified in FRESH_FUNCTIONS:
            if name in _CREATORS and "order" not in keywords:
                shape = None
                if name in ("zeros", "ones", "empty", "full") and positional:
                    shape = self._shape_of(positional[0], state)
                elif name in ("eye", "identity") and len(positional) == 1:
                    length = self._length(positional[0], state)
                    shape = (length, length) if length else None
                elif name == "arange" and len(positional) == 1:
                    stop = positional[0]
                    if isinstance(stop, cst.Float) and float(stop.value) >= 0:
                        shape = (str(math.ceil(float(stop.value))),)
                    else:
                        shape = self._shape_of(stop, state) if args[0].dtype == "i" else None
                if dtype is None:
                    if name == "full" and len(args) > 1:
                        dtype = args[1].dtype if args[1].kinds == frozenset({"num"}) else None
                    elif name == "arange":
                        dtype = promote(*(a.dtype for a in args[:3])) if args else None
                    else:
                        dtype = "f"
                return self._new(call, contig=True, shape=shape, dtype=dtype, device=True)
            if name in ("zeros_like", "ones_like", "empty_like", "full_like", "copy") and args:
                return self._new(call, dtype=dtype or args[0].dtype, shape=args[0].shape, device=True)
            if name in ("allclose", "array_equal", "any", "all", "count_nonzero") and "axis" not in keywords:
                return num("b" if name != "count_nonzero" else "i")
            if dtype is None and name in _SAME_KIND_FUNCTIONS:
                dtype = promote(*(a.dtype for a in args if a.kinds <= {"num", "array"} and a.kinds))
            return self._new(call, dtype=dtype, device=True)
        if qualified in WRITABLE_VIEW_FUNCTIONS and args:
            first = args[0]
            if "array" not in first.kinds:
                if first.kinds <= {"num", "list"}:
                    return self._new(call, dtype=dtype, device=True)
                return replace(UNKNOWN, kinds=frozenset({"array"}), device=True)
            shape = (
                self._shape_of(positional[1], state) if name == "reshape" and len(positional) > 1 else None
            )
            same = ("asarray", "asanyarray", "ascontiguousarray", "flip", "fliplr", "flipud", "atleast_1d")
            if name != "reshape":
                shape = first.shape if name in same else None
            contig = first.contig and name in ("reshape", "asarray", "asanyarray")
            obj = (
                first.obj
                if name in ("asarray", "asanyarray", "ascontiguousarray", "atleast_1d")
                else self._site(call)
            )
            return replace(first, contig=contig, shape=shape, device=True, obj=obj, ndim=None)
        if not arrays and not any(a.maybe_array for a in args):
            return (
                UNKNOWN
                if qualified.count(".") > 1
                else Val(frozenset({"array", "num", "other"}), frozenset(), origin=f"`{qualified}`")
            )
        return Val(
            frozenset({"array"})
            | (frozenset({"num"}) if "unknown" in {k for a in args for k in a.kinds} else frozenset()),
            bufs,
            origin=f"`{qualified}(...)`",
        )

    def _dtype_of(self, expr: Optional[cst.BaseExpression]) -> Optional[str]:
        kind = _dtype_of(expr, self.qname)
        if kind is None and isinstance(expr, cst.Name) and expr.value not in self.skeleton.assigned:
            kind = self.module_dtypes.get(expr.value)
        return kind

    def _statement_method(self, node: cst.Expr, state: State) -> bool:
        """``x.sort(...)`` and ``x.setflags(write=False)`` as statements on a local array ``x``: the first becomes
        ``x = x.sort(...)`` in oqupy_jax (``jax.Array.sort`` returns the sorted copy) when ``x`` could be written in
        place; the second is dropped there (JAX arrays are immutable) and makes ``x`` read-only for the analysis.
        True when handled."""
        call = node.value
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)
            and call.func.attr.value in ("sort", "setflags")
        ):
            return False
        name = call.func.value.value
        current = state.names.get(name)
        if current is None or current.kinds != frozenset({"array"}):
            return False
        for arg in call.args:
            self.ev(arg.value, state)
        if call.func.attr.value == "setflags":
            args = {a.keyword.value if a.keyword else "write": a.value for a in call.args}
            if set(args) != {"write"} or not (
                isinstance(args["write"], cst.Name) and args["write"].value == "False"
            ):
                return False
            state.names[name] = replace(current, owned=False, origin="an array made read-only by `.setflags`")
            self.rewritten_methods[id(node)] = "drop"
            return True
        if self._write_problem(name, current, state, node, device=False) is not None:
            return True  # reported
        self.rewritten_methods[id(node)] = "rebind"
        return True

    def _method(self, call: cst.Call, method: str, receiver: Val, args: list[Val], state: State) -> Val:
        if (
            "array" in receiver.kinds
            or any(b.startswith("param:") for b in receiver.bufs)
            and receiver.maybe_array
        ):
            if method in INPLACE_METHODS:
                self.report(
                    call,
                    "inplace-method",
                    f"in-place method `.{method}()` on an array (JAX returns a new array and drops it)",
                    "use the functional form (`np.sort(x)`, `np.full_like(x, v)`, `x.reshape(...)`)",
                )
        if "array" in receiver.kinds and receiver.kinds <= {"array", "other"}:
            keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            if method in FRESH_METHODS:
                if method == "copy" and "order" not in keywords:
                    return self._new(
                        call, contig=True, shape=receiver.shape, dtype=receiver.dtype, device=receiver.device
                    )
                if method == "flatten":
                    return self._new(call, contig=True, dtype=receiver.dtype, device=receiver.device)
                if (
                    method in ("sum", "mean", "max", "min", "prod", "trace", "any", "all", "std", "var")
                    and not call.args
                ):
                    return num(receiver.dtype if method not in ("any", "all") else "b")
                kind = (
                    receiver.dtype
                    if method not in ("argmax", "argmin", "argsort", "nonzero", "searchsorted")
                    else "i"
                )
                return self._new(call, dtype=kind, device=receiver.device)
            if method == "astype":
                copy = keywords.get("copy")
                kind = self._dtype_of(call.args[0].value if call.args else None)
                if copy is None or (isinstance(copy, cst.Name) and copy.value == "True"):
                    return self._new(call, dtype=kind, shape=receiver.shape, device=receiver.device)
                return replace(receiver, owned=False, dtype=kind, origin="`.astype(..., copy=...)`")
            if method in WRITABLE_VIEW_METHODS:
                shape = None
                if method == "reshape":
                    positional = [a.value for a in call.args if a.keyword is None]
                    shape = (
                        self._shape_of(
                            positional[0]
                            if len(positional) == 1
                            else cst.Tuple([cst.Element(p) for p in positional]),
                            state,
                        )
                        if positional
                        else None
                    )
                return replace(
                    receiver,
                    contig=receiver.contig and method in ("reshape", "ravel"),
                    shape=shape,
                    obj=self._site(call),
                    ndim=1 if method == "ravel" else None,
                )
            if method in ("tolist", "item"):
                return num(receiver.dtype) if method == "item" else Val(frozenset({"list"}))
            return replace(receiver, owned=False, shape=None, contig=False, origin=f"`.{method}()`")
        if receiver.kinds <= {"list", "dict"} and receiver.kinds:
            if method in STORING_METHODS:
                for arg in args:
                    self._escape(arg, state)
                return OTHER
            if method == "copy":
                return Val(receiver.kinds, frozenset({"?"}))
            return UNKNOWN
        for arg in args:
            self._escape(arg, state)
        self._forget_attributes(state)
        return UNKNOWN


# -- helpers ------------------------------------------------------------------------------------------------


def _refine(test: cst.BaseExpression, state: State) -> State:
    """The state after ``if <test>: <always exits>``: ``n < c`` / ``n <= c`` / ``c > n`` give ``n >= ...``."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return state
    left, comparison = test.left, test.comparisons[0]
    right, operator = comparison.comparator, comparison.operator
    if isinstance(left, cst.Integer) and isinstance(right, cst.Name):
        left, right = right, left
        operator = {cst.GreaterThan: cst.LessThan(), cst.GreaterThanEqual: cst.LessThanEqual()}.get(
            type(operator), operator
        )
    if not (isinstance(left, cst.Name) and isinstance(right, cst.Integer) and left.value in state.names):
        return state
    bound = int(right.value, 0) + (1 if isinstance(operator, cst.LessThanEqual) else 0)
    if not isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
        return state
    value = state.names[left.value]
    if value.kinds == frozenset({"num"}) and value.dtype == "i":
        refined = state.copy()
        refined.names[left.value] = replace(value, low=max(bound, value.low or bound))
        return refined
    return state


def _interval(expr: cst.BaseExpression, state: State) -> Optional[tuple[int, int]]:
    """The values an integer expression of literals and ``range(<literal>)`` loop variables may take."""
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0), int(expr.value, 0)
    if isinstance(expr, cst.Name):
        value = state.names.get(expr.value)
        if value is not None and value.const is not None:
            return value.const, value.const
        if value is not None and value.stop is not None and value.stop.isdigit() and int(value.stop) > 0:
            return 0, int(value.stop) - 1
        return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _interval(expr.expression, state)
        return (-inner[1], -inner[0]) if inner is not None else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Add, cst.Subtract, cst.Multiply)
    ):
        left, right = _interval(expr.left, state), _interval(expr.right, state)
        if left is None or right is None:
            return None
        if isinstance(expr.operator, cst.Add):
            return left[0] + right[0], left[1] + right[1]
        if isinstance(expr.operator, cst.Subtract):
            return left[0] - right[1], left[1] - right[0]
        products = [a * b for a in left for b in right]
        return min(products), max(products)
    return None


def _pairwise(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """``a, b = e1, e2``: same length, no starred element on either side."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
        return False
    if len(target.elements) != len(value.elements):
        return False
    return not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))


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
        return num(_result_kind(op, left.dtype, right.dtype), const=const)
    if left.kinds <= {"list"} and right.kinds <= {"list"} and op == "+":
        return Val(frozenset({"list"}), left.bufs | right.bufs)
    return Val(frozenset({"unknown"}), left.bufs | right.bufs if op in ("+", "*") else frozenset())


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
    """Why ``a[i] = v`` may differ for some pair of the possible kinds: a value of a higher kind than the array."""
    for kind in kinds:
        for value_kind in value_kinds:
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


def _ufunc_kind(qualified: str, kinds: list[Optional[str]]) -> Optional[str]:
    name = qualified.rsplit(".", 1)[-1]
    if name in _BOOLEAN_UFUNCS:
        return "b"
    kind = promote(*kinds) if kinds else None
    if kind is not None and name in _FLOATING_UFUNCS:
        kind = kinds_union(*("f" if k in "bi" else k for k in kind))
    if kind is not None and name in ("absolute", "abs"):
        kind = kinds_union(*("f" if k == "c" else k for k in kind))
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
    ):
        return kind
    return kind if name in _FLOATING_UFUNCS else None


def _dtype_of(
    expr: Optional[cst.BaseExpression], qname: Callable[[cst.CSTNode], Optional[str]]
) -> Optional[str]:
    if expr is None:
        return None
    return _DTYPES.get(qname(expr) or "")


def _names_in(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_in(e.value)]
    return []


def _del_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for e in target.elements for t in _del_targets(e.value)]
    return [target]


def class_attribute_kinds(
    node: cst.ClassDef,
    qname: Callable[[cst.CSTNode], Optional[str]],
    is_array: Callable[[Optional[cst.Annotation]], bool],
) -> dict[str, frozenset[str]]:
    """What each attribute of ``self`` may hold, from the class's own code: an annotation where it is set
    (``self.cache: dict = {}``, or ``cache: dict`` in the class body) decides; otherwise every value assigned to
    ``self.attr`` in the class's methods must be a literal (a number, a list or a dict) for it to be known
    not to be an array.  An attribute never assigned here is ``unknown`` (it may be an array)."""
    annotated: dict[str, frozenset[str]] = {}
    assigned: dict[str, set[str]] = {}

    def kinds_of_annotation(annotation: cst.Annotation) -> frozenset[str]:
        if is_array(annotation):
            return frozenset({"array"})
        expr = annotation.annotation
        qualified = qname(expr.value if isinstance(expr, cst.Subscript) else expr) or ""
        if qualified in _SCALAR_ANNOTATIONS:
            return frozenset({"num"})
        if qualified in _CONTAINER_ANNOTATIONS:
            return frozenset({_CONTAINER_ANNOTATIONS[qualified]})
        return frozenset({"unknown"})

    def kinds_of_value(expr: Optional[cst.BaseExpression]) -> str:
        while isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return "num"
        if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return "num"
        if isinstance(expr, (cst.List, cst.ListComp)):
            return "list"
        if isinstance(expr, (cst.Dict, cst.DictComp)):
            return "dict"
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or (
            isinstance(expr, cst.Name) and expr.value == "None"
        ):
            return "other"
        return "unknown"

    for statement in node.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    annotated.setdefault(small.target.value, kinds_of_annotation(small.annotation))
        if not isinstance(statement, cst.FunctionDef):
            continue
        params = [*statement.params.posonly_params, *statement.params.params]
        if not params or any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in statement.decorators
        ):
            continue
        owner = params[0].name.value

        class _Targets(cst.CSTVisitor):
            def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
                return inner is statement  # nested functions' ``self`` is another story: unknown

            def _attr(self, target: cst.BaseExpression) -> Optional[str]:
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name)
                    and target.value.value == owner
                ):
                    return target.attr.value
                return None

            def _unpacked(self, target: cst.BaseExpression) -> None:
                if isinstance(target, (cst.Tuple, cst.List)):
                    for element in target.elements:
                        self._unpacked(element.value)
                elif self._attr(target) is not None:
                    assigned.setdefault(self._attr(target), set()).add("unknown")

            def visit_Assign(self, small: cst.Assign) -> None:
                for target in small.targets:
                    name = self._attr(target.target)
                    if name is not None:
                        assigned.setdefault(name, set()).add(kinds_of_value(small.value))
                    else:
                        self._unpacked(target.target)

            def visit_AnnAssign(self, small: cst.AnnAssign) -> None:
                name = self._attr(small.target)
                if name is not None:
                    annotated.setdefault(name, kinds_of_annotation(small.annotation))

            def visit_AugAssign(self, small: cst.AugAssign) -> None:
                name = self._attr(small.target)
                if name is not None:  # ``self.n += 1`` keeps a number a number
                    assigned.setdefault(name, set()).add(
                        "num" if kinds_of_value(small.value) == "num" else "unknown"
                    )

            def visit_For(self, small: cst.For) -> None:
                self._unpacked(small.target)

            def visit_WithItem(self, small: cst.WithItem) -> None:
                if small.asname is not None:
                    self._unpacked(small.asname.name)

        statement.visit(_Targets())
    kinds = {name: frozenset(found) for name, found in assigned.items()}
    kinds.update(annotated)
    return kinds


def _calls(stmt: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    stmt.visit(_Collect())
    return found


def _argument(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None
