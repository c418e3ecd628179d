"""Random template functions over the constructs the array analysis must get right, and their judge.

:func:`programs` is a hypothesis strategy of small template modules (one function ``f`` over array
parameters, local arrays, views and aliases, subscript and augmented writes, in-place operators, shape
assignments, branches, loops, ``try``, containers, closures, kernels).  :func:`judge` translates one for both
packages in memory (``codegen.pipeline.translate``), and either checks the refusal (every diagnostic has
``file:line:col`` and a rule) or runs the template, the ``oqupy_numpy`` text and the ``oqupy_jax`` text on the
same inputs and compares the results *and* the caller's inputs afterwards.  Used by
``tests/codegen/test_fuzz_codegen.py``; see docs/architecture.md ("Fuzzing the transformer").
"""

import inspect
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
from hypothesis import strategies as st

from codegen.analysis import ModuleContext
from codegen.pipeline import translate

PATH = "src_template/oqupy/fuzz.py"
DIAGNOSTIC = re.compile(r"^src_template/oqupy/fuzz\.py:\d+:\d+: \[([a-z-]+)\] .+")
PACKAGES = {"numpy": "oqupy_numpy", "jax": "oqupy_jax"}
_MARKERS = Path(__file__).resolve().parents[2] / "src_template" / "oqupy" / "_codegen.py"

LOCALS = ("a", "b", "w", "v")
PARAMS_1D = ("x", "k")  # float and int vectors of length 4
CREATE = (
    "np.zeros(4)",
    "np.arange(4.0)",
    "np.arange(4)",
    "np.zeros(4, dtype=np.complex128)",
    "np.zeros(n)",
    "np.ones((3, 4))",
    "np.arange(6.0).reshape(2, 3)",
    "x.copy()",
    "k.copy()",
    "m.copy()",
    "np.array(x)",
    "x * 2.0",
    "np.linspace(0.0, 1.0, 4)",
)
VIEWS = (
    "{a}",
    "{a}[1:]",
    "{a}[::2]",
    "{a}.T",
    "{a}.reshape(-1)",
    "np.flip({a})",
    "np.real({a})",
    "np.imag({a})",
    "np.expand_dims({a}, 0)",
    "np.atleast_1d({a})",
    "np.atleast_2d({a})",
    "{a}.conj()",
    "np.asarray({a})",
    "np.array({a}, copy=False)",
    "{a}.astype(np.float64, copy=False)",
    "{a}.ravel()",
    "np.diag({a})",
    "np.broadcast_to({a}, (2, 4))",
    "{a}.flatten()",
    "{a} + 0",
    "{a} if n > 3 else {a}.copy()",
    "{a}[idx]",
    "{a}[0]",
    "{a}.copy()",
)
INDICES = (
    "0",
    "1",
    "3",
    "-1",
    "-4",
    "4",
    "6",
    "-6",
    "1:3",
    "::2",
    "...",
    "idx",
    "[1, 1, 2]",
    "j",
    "0, 1",
    "1, -1",
    "{t} > 0.5",
    "n",
    "-n",
    "n - 1",
)
LOOP_INDICES = ("i", "-1 - i", "n - 1 - i", "i + 1")
VALUES = ("1.0", "2", "0.5", "1j", "n", "-3", "{o}", "{o}[0]", "2.0 * {o}")
OPERATORS = ("=", "+=", "-=", "*=", "/=", "**=", "//=", "@=")
#: reads (issue 32): out of bounds NumPy raises, JAX clamps unless the translation checks or NaN-fills
READ_INDICES = ("0", "3", "-1", "4", "-5", "n", "n - 1", "j", "1:3", "k[0]", "k[2]", "k", "[0, 3]", "[1, 4]")

# A *careful* program (half of them) is written the way the template is meant to be: writes into local arrays
# created in the function with a literal shape, indices within that shape, values of a fitting dtype, few of
# the constructs that are always refused.  Those are legitimately safe far more often, so the differential test
# exercises translation and not only refusal; the analysis must still prove each one (or refuse it).
CAREFUL_CREATE = (
    "np.zeros(4)",
    "np.arange(4.0)",
    "np.ones(4)",
    "np.linspace(0.0, 1.0, 4)",
    "np.zeros(4, dtype=np.complex128)",
    "np.zeros((3, 4))",
    "np.array(x, dtype=np.float64)",
    "np.exp(x)",
    "np.zeros(n)",
)
CAREFUL_VIEWS = ("{a}.copy()", "{a} + 0", "{a}[1:]", "np.array({a})", "{a} * 2.0", "{a}", "np.flip({a})")
CAREFUL_INDICES = ("0", "1", "3", "-1", "-4", "1:3", "::2", "...", ":", "{t} > 0.5", "4")
CAREFUL_LOOP_INDICES = ("i", "-1 - i", "3 - i")
CAREFUL_VALUES = ("1.0", "2", "0.5", "-3", "2.0 * {o}[0]", "n", "0.25")
CAREFUL_OPERATORS = ("=", "=", "+=", "-=", "*=", "/=")


@dataclass
class _Gen:
    draw: Any
    kernel: bool
    careful: bool = False
    lines: list[str] = field(default_factory=list)
    arrays: list[str] = field(default_factory=list)  # names bound to arrays so far (may be views)
    depth: int = 0
    loop: bool = False

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def emit(self, text: str) -> None:
        self.lines.extend("    " * (self.depth + 1) + line for line in text.split("\n"))

    def any_array(self) -> str:
        params = ["x", "k", "m"] if self.kernel else ["x", "k", "m", "u"]
        if self.careful:
            params = ["x"]
        if self.arrays and self.draw(st.integers(0, 4)) > 0:
            return self.pick(self.arrays)
        return self.pick(params)

    def statement(self, budget: int) -> None:
        kinds = (
            ["create"] * 3 + ["view"] * 3 + ["write"] * 6 + ["aug-name"] * 2 + ["index-name"] + ["read"] * 2
        )
        if budget > 1 and self.depth < 2:
            kinds += ["if", "if", "for", "for", "try"]
        if self.careful and self.draw(st.integers(0, 7)) == 0:
            kinds = ["tuple", "chain", "shape", "container"]
        elif not self.careful and self.draw(st.integers(0, 3)) == 0:
            kinds = ["container", "swap", "tuple", "chain", "method", "out", "shape", "closure"]
        kind = self.pick(kinds)
        getattr(self, "_" + kind.replace("-", "_"))(budget)

    def block(self, budget: int) -> None:
        count = self.draw(st.integers(1, max(1, min(3, budget))))
        self.depth += 1
        for _ in range(count):
            self.statement(budget - 1)
        self.depth -= 1

    def _bind(self, name: str) -> None:
        if name not in self.arrays:
            self.arrays.append(name)

    def _create(self, budget: int) -> None:
        name = self.pick(LOCALS)
        self.emit(f"{name} = {self.pick(CAREFUL_CREATE if self.careful else CREATE)}")
        if self.depth == 0:
            self._bind(name)

    def _view(self, budget: int) -> None:
        name = self.pick(LOCALS)
        self.emit(
            f"{name} = {self.pick(CAREFUL_VIEWS if self.careful else VIEWS).format(a=self.any_array())}"
        )
        if self.depth == 0:
            self._bind(name)

    def _index(self) -> str:
        if self.careful:
            options = CAREFUL_INDICES + (CAREFUL_LOOP_INDICES * 2 if self.loop else ())
        else:
            options = INDICES + (LOOP_INDICES if self.loop else ())
        return self.pick(options).format(t=self.any_array())

    def _value(self) -> str:
        return self.pick(CAREFUL_VALUES if self.careful else VALUES).format(o=self.any_array())

    def local_array(self) -> str:
        if self.arrays and (self.careful or self.draw(st.integers(0, 9)) > 0):
            return self.pick(self.arrays)
        return self.any_array()

    def _write(self, budget: int) -> None:
        target = self.local_array()
        operator = self.pick(CAREFUL_OPERATORS if self.careful else OPERATORS[:-1])
        self.emit(f"{target}[{self._index()}] {operator} {self._value()}")

    def _read(self, budget: int) -> None:
        index = self.pick(READ_INDICES + (("i", "i + 1", "3 - i") if self.loop else ()))
        if index == "j" and not any(line.strip().startswith("j =") for line in self.lines):
            index = "1"
        self.emit(
            f"r = r + ({self.pick((*self.arrays, 'x', 'k', 'm') if self.arrays else ('x', 'k'))}[{index}],)"
        )
        self.reads = True

    def _aug_name(self, budget: int) -> None:
        operators = CAREFUL_OPERATORS[2:] if self.careful else OPERATORS[1:]
        self.emit(f"{self.local_array()} {self.pick(operators)} {self._value()}")

    def _if(self, budget: int) -> None:
        self.emit(f"if n > {self.pick((1, 3))}:")
        self.block(budget)
        if self.draw(st.booleans()):
            self.emit("else:")
            self.block(budget)

    def _for(self, budget: int) -> None:
        self.emit(f"for i in range({self.pick(('4', '4', 'n') if self.careful else ('n', '4', '3'))}):")
        was, self.loop = self.loop, True
        self.block(budget)
        self.loop = was

    def _try(self, budget: int) -> None:
        self.emit("try:")
        self.block(budget)
        self.emit("except IndexError:")
        self.emit("    pass")

    def _container(self, budget: int) -> None:
        name = self.any_array()
        self.emit(self.pick((f"lst = [{name}]", f"d = {{'k': {name}}}", f"lst = [{name}, {name}]")))
        self.extra_returns.add("lst" if "lst" in self.lines[-1] else "d")

    def _swap(self, budget: int) -> None:
        target = self.any_array()
        self.emit(f"{target}[0], {target}[1] = {target}[1], {target}[0]")

    def _tuple(self, budget: int) -> None:
        first, second = self.pick((("a", "b"), ("w", "v"), ("a", "w")))
        self.emit(f"{first}, {second} = {self.pick(CREATE)}, {self.pick(CREATE)}")
        if self.depth == 0:
            self._bind(first)
            self._bind(second)

    def _chain(self, budget: int) -> None:
        first, second = self.pick((("a", "w"), ("b", "v")))
        self.emit(f"{first} = {second} = {self.pick(CREATE)}")
        if self.depth == 0:
            self._bind(first)
            self._bind(second)

    def _method(self, budget: int) -> None:
        self.emit(f"{self.any_array()}.{self.pick(('sort()', 'fill(1.0)'))}")

    def _out(self, budget: int) -> None:
        source, target = self.any_array(), self.any_array()
        self.emit(self.pick((f"np.exp({source}, {target})", f"np.exp({source}, out={target})")))

    def _shape(self, budget: int) -> None:
        self.emit(f"{self.any_array()}.shape = {self.pick(('(2, 2)', '(4,)', '(12,)', '(2, 3)', '(-1,)'))}")

    def _closure(self, budget: int) -> None:
        target = self.any_array()
        self.emit(f"def g():\n    {target}[0] = 1.0\n\ng()")

    def _index_name(self, budget: int) -> None:
        self.emit(self.pick(("j = 2", "j = n - 1", "ix = m.argmax(axis=1)", "mask = x > 0.5")))


@st.composite
def programs(draw) -> str:
    """Source of a template module with one function ``f(x, k, m, n, u, idx)``."""
    kernel = draw(st.integers(0, 5)) == 0
    gen = _Gen(draw, kernel, careful=not draw(st.booleans()))  # the simplest draws are careful
    gen.extra_returns = set()
    gen.reads = False
    gen.lines.append("    r = ()")
    gen._create(3)
    for _ in range(draw(st.integers(1, 6))):
        gen.statement(3)
    names = [n for n in gen.arrays if draw(st.booleans())] or gen.arrays[:1] or ["x"]
    names += sorted(gen.extra_returns) if not kernel else []
    names += ["r"] if gen.reads else []
    header = ["import numpy as np", ""]
    if kernel:
        header = ["import numpy as np", "", "from oqupy._codegen import kernel", "", ""]
        header += ['@kernel(static=("n",))', "def f(x: np.ndarray, k: np.ndarray, m: np.ndarray, n: int):"]
        body = [line for line in gen.lines]
    else:
        header += ["", "def f(x: np.ndarray, k: np.ndarray, m: np.ndarray, n: int, u, idx: list):"]
        body = gen.lines
    return "\n".join([*header, *body, f"    return ({', '.join(names)},)", ""])


# -- the judge --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    kind: (
        str  # "refused", "agree", "nan" (NumPy raised IndexError, a NaN-filled read in JAX), "silent", "loud"
    )
    rules: tuple[str, ...] = ()
    detail: str = ""


def translations(source: str) -> tuple[dict[str, Optional[str]], list[str]]:
    """Both translations (JAX first: most refusals are its own, and then the NumPy one is not needed)."""
    outputs: dict[str, Optional[str]] = {"numpy": None, "jax": None}
    diagnostics: list[str] = []
    for backend in ("jax", "numpy"):
        ctx = ModuleContext(PATH, "oqupy.fuzz", backend, PACKAGES[backend])
        outputs[backend] = translate(source, ctx)
        diagnostics += [str(d) for d in ctx.diagnostics]
        if outputs[backend] is None:
            break
    return outputs, diagnostics


def inputs(n: int, use_jax: bool = False) -> dict[str, Any]:
    values = {
        "x": np.array([0.25, 0.75, 0.5, 1.0]),
        "k": np.array([3, 1, 4, 1]),
        "m": np.arange(12.0).reshape(3, 4) / 7.0,
        "n": n,
        "u": np.array([1.0, 2.0, 3.0, 4.0]),
        "idx": [1, 1, 2],
    }
    if use_jax:
        import jax.numpy as jnp

        values.update({name: jnp.asarray(values[name]) for name in ("x", "k", "m")})
    return values


def _load(source: str, template: bool) -> Any:
    namespace: dict[str, Any] = {"__name__": "oqupy_fuzz"}
    if template:
        markers: dict[str, Any] = {}
        exec(compile(_MARKERS.read_text(), str(_MARKERS), "exec"), markers)
        source = source.replace("from oqupy._codegen import kernel\n", "")
        namespace["kernel"] = markers["kernel"]
    exec(compile(source, PATH, "exec"), namespace)
    return namespace["f"]


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return np.asarray(value)


def _run(function, n: int, use_jax: bool) -> tuple[Any, Any]:
    args = inputs(n, use_jax)
    accepted = inspect.signature(function).parameters
    args = {name: value for name, value in args.items() if name in accepted}  # kernels take fewer
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 and friends: NumPy warns, JAX does not
            warnings.simplefilter("error", np.exceptions.ComplexWarning)  # NumPy drops an imaginary part
            result = ("ok", _plain(function(**args)))
    except Exception as error:  # noqa: BLE001 - the kind is what is compared
        result = ("raise", _family(error))
    return result, _plain(args)


def _family(error: Exception) -> str:
    for kind in (
        IndexError,
        ValueError,
        TypeError,
        ZeroDivisionError,
        ArithmeticError,
        NameError,
        AttributeError,
    ):
        if isinstance(error, kind):
            return "ValueError" if kind in (ValueError, TypeError) else kind.__name__
    return type(error).__name__


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, np.ndarray) and isinstance(right, np.ndarray):
        if left.shape != right.shape or left.dtype.kind != right.dtype.kind:
            return False
        if left.dtype.kind in "fc":
            return bool(np.allclose(left, right, rtol=1e-12, atol=1e-12, equal_nan=True))
        return bool(np.array_equal(left, right))
    return left == right


def judge(source: str) -> Outcome:
    outputs, diagnostics = translations(source)
    if outputs["numpy"] is None or outputs["jax"] is None:
        rules = []
        for text in diagnostics:
            match = DIAGNOSTIC.match(text)
            if match is None:
                return Outcome("loud", detail=f"diagnostic without file:line:col and rule: {text}")
            rules.append(match.group(1))
        if not rules:
            return Outcome("loud", detail="refused without a diagnostic")
        return Outcome("refused", tuple(sorted(set(rules))))
    for n in (2, 4):
        template = _run(_load(source, True), n, False)
        numpy_package = _run(_load(outputs["numpy"], False), n, False)
        runs = {"template": template, "oqupy_numpy": numpy_package}
        for use_jax in (False, True):
            runs[f"oqupy_jax({'jax' if use_jax else 'numpy'} inputs)"] = _run(
                _load(outputs["jax"], False), n, use_jax
            )
        (result, args) = template
        for name, (other, other_args) in runs.items():
            if _filled(result, other, outputs["jax"] if "jax(" in name else ""):
                return Outcome("nan", detail=f"n={n}: template raises IndexError, {name} reads NaN")
            if result[0] != other[0]:
                return Outcome(
                    "loud",
                    detail=f"n={n}: template {result[0]} {_short(result)} but {name} {other[0]} {_short(other)}",
                )
            if result[0] == "raise" and result[1] != other[1]:
                return Outcome("loud", detail=f"n={n}: template raises {result[1]}, {name} raises {other[1]}")
            if not _same(result[1], other[1]):
                return Outcome(
                    "silent",
                    detail=f"n={n}: results differ: template {_short(result)} vs {name} {_short(other)}",
                )
            if not _same(args, other_args):
                return Outcome(
                    "silent", detail=f"n={n}: the caller's inputs differ after the call: template vs {name}"
                )
    return Outcome("agree")


def _filled(template: Any, other: Any, source: str) -> bool:
    """The loud translation of an unprovable read (``.at[...].get(mode="fill")``, issue 32): where NumPy raises
    ``IndexError``, JAX reads NaN, which reaches the result."""
    if template != ("raise", "IndexError") or other[0] != "ok" or 'mode="fill"' not in source:
        return False
    leaves = other[1] if isinstance(other[1], list) else [other[1]]
    flat = [np.asarray(leaf) for leaf in leaves if not isinstance(leaf, (list, dict))]
    return any(leaf.dtype.kind in "fc" and bool(np.isnan(leaf).any()) for leaf in flat) or any(
        _filled(template, ("ok", leaf), source) for leaf in leaves if isinstance(leaf, list)
    )


def _short(result: Any) -> str:
    text = (
        repr(result[1])
        if result[0] == "raise"
        else np.array2string(np.asarray(result[1], dtype=object), threshold=20)
    )
    return text[:300]
