"""The abstract interpreter over one function body (or a module's top-level statements)."""

from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from codegen.analysis import kept_branch
from codegen.flow.calls import Calls
from codegen.flow.expressions import Expressions
from codegen.flow.indices import Indices
from codegen.flow.numpy_model import _CONTAINER_ANNOTATIONS, _SCALAR_ANNOTATIONS, _code
from codegen.flow.reads import Read, Reads
from codegen.flow.skeleton import Skeleton, _del_targets, _names_in, _narrow, _pairwise, _refine
from codegen.flow.values import (
    OTHER,
    TEXT,
    UNKNOWN,
    Finding,
    State,
    Val,
    forget_flat,
    join,
    join_states,
    num,
    same_state,
)
from codegen.flow.writes import Writes

# -- the analysis --------------------------------------------------------------------------------------------


class FunctionFlow(Writes, Reads, Indices, Calls, Expressions):
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
        returns: Optional[dict[str, str]] = None,
        passed: Optional[dict[str, frozenset[str]]] = None,
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
        self.returns = returns or {}  # module functions annotated ``-> float`` (name -> element kind)
        self.passed = passed or {}  # unannotated parameters every call site passes no array (``call_sites``)
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
        #: ids of the index expressions that are lists of integers: read ``x[jnp.asarray(idx)]`` in oqupy_jax
        self.list_indices: set[int] = set()
        #: ids of the reads ``a[...]`` by integer indices not proven in bounds -> their verdict (see ``reads``)
        self.reads: dict[int, Read] = {}
        #: the reads ``u[i]`` by an integer (or an index of unknown kind) of a value of unknown kind (an
        #: unannotated argument, an attribute, a container's element), read as written: id -> the subscript
        self.unknown_reads: dict[int, cst.Subscript] = {}
        self.write_targets: set[int] = set()  # subscripts evaluated as the target of ``a[i] += v``: no reads
        self.synthetic: dict[
            int, cst.CSTNode
        ] = {}  # a flattened subscript -> the template's  # a literal tuple's element values (tuple indices)
        self.reporting = True
        self.loops: list[cst.CSTNode] = []
        self.jumps: list[dict[str, Optional[State]]] = []
        self.declared: set[str] = set()  # global / nonlocal
        self._state: Optional[State] = None  # the state an expression is evaluated in
        skeleton = Skeleton(node)
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
        if annotation is None and name in self.passed:  # what every call in the module passes: no array
            return Val(
                self.passed[name], buf, origin=f"the argument `{name}` (its module's calls pass no array)"
            )
        if annotation is None:
            return Val(frozenset({"unknown"}), buf, origin=f"the unannotated argument `{name}`")
        return self._annotated_val(annotation, f"the argument `{name}`", buf, name in self.traced)

    def _annotated_val(self, annotation: cst.Annotation, what: str, buf: frozenset[str], traced: bool) -> Val:
        """What an annotation says a parameter (or a local annotated where it is bound to a value of unknown
        kind) holds: an array of unknown memory and dtype, a number, a container, or (``Any``, ``Union``, a
        string, a name the analysis does not know) anything."""
        if self.is_array(annotation):
            kinds = {"array"}
            expr = annotation.annotation
            optional = isinstance(expr, cst.Subscript) and self.qname(expr.value) == "typing.Optional"
            if optional:
                kinds.add("other")
            # an ``np.ndarray`` argument's dtype is unknown: integer, float or complex (see dtype-safety)
            return Val(
                frozenset(kinds),
                buf,
                dtype="ifc",
                device=traced,
                origin=what,
                none=optional,
            )
        expr = annotation.annotation
        base = expr.value if isinstance(expr, cst.Subscript) else expr
        qualified = self.qname(base) or ""
        if qualified == "typing.Optional" and isinstance(expr, cst.Subscript):
            inner = expr.slice[0].slice
            if isinstance(inner, cst.Index):  # ``Optional[int]``: what ``int`` says, or None
                value = self._annotated_val(cst.Annotation(inner.value), what, buf, traced)
                if "unknown" not in value.kinds:
                    return replace(value, kinds=value.kinds | {"other"}, none=True)
        if qualified in _SCALAR_ANNOTATIONS:
            return num(_SCALAR_ANNOTATIONS[qualified], traced=traced)
        if qualified in _CONTAINER_ANNOTATIONS:
            return Val(frozenset({_CONTAINER_ANNOTATIONS[qualified]}), buf, text=qualified == "builtins.str")
        if isinstance(expr, cst.SimpleString) or qualified in (
            "typing.Any",
            "typing.Union",
            "typing.Optional",
            "",
        ):
            return Val(frozenset({"unknown"}), buf, origin=f"{what} (annotated `{_code(expr)}`)")
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
            after_body = self._block(node.body, _narrow(node.test, state, True).copy())
            if after_body is None:  # ``if n < 1: raise ...``: what follows knows ``n >= 1``
                state = _refine(node.test, state)
            state = _narrow(node.test, state, False)  # ``if x is None: ...`` (not) taken
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
            forget_flat(state, node.name.value)
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
            forget_flat(state, node.name.value)
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
            self._bind_iteration(node.target, node.iter, state, node)
        else:
            self.ev(node.test, state)
        out = self._block(node.body, state)
        self.loops.pop()
        return out, self.jumps.pop()

    def _bind_iteration(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression, state: State, node: cst.CSTNode
    ) -> None:
        """``for target in iterable``; ``for k, item in enumerate(x)`` counts ``k`` as a Python int."""
        if (
            isinstance(iterable, cst.Call)
            and self.qname(iterable.func) == "builtins.enumerate"
            and len(iterable.args) == 1
            and iterable.args[0].keyword is None
            and not iterable.args[0].star
            and isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == 2
            and not any(isinstance(e, cst.StarredElement) for e in target.elements)
        ):
            self._bind(target.elements[0].value, num("i", low=0), state, node)
            self._bind(target.elements[1].value, self._iterate(iterable.args[0].value, state), state, node)
            return
        self._bind(target, self._iterate(iterable, state), state, node)

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
        kind = self._list_kind(value, state)
        if kind is not None:  # a list of numbers: its elements are numbers, the list stays this function's
            return num(kind, traced=value.traced)
        if value.kinds == frozenset({"list"}) and value.text and value.obj and value.obj not in state.escaped:
            return TEXT  # a list of strings built here and not changed since: its elements are strings
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
                forget_flat(entry, handler.name.name.value)
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
                value = self.ev(node.value, state)
                if value.kinds == frozenset({"unknown"}) and isinstance(node.target, cst.Name):
                    # ``links: tuple = carry[1]``: the annotation says what the unknown value holds
                    traced = value.traced or bool(self.traced)
                    what = f"the value of `{node.target.value}`"
                    value = self._annotated_val(node.annotation, what, value.bufs, traced)
                self._assign(node.target, node.value, value, state, node)
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
                forget_flat(state, name)
                state.names.pop(name, None)
            return state
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            self.declared.update(n.name.value for n in node.names)
            return state
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            return state
        return state
