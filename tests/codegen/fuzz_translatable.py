"""A seeded generator of template functions that are *legitimately translatable*, for measuring false refusals.

Every function drawn here means the same in NumPy and in JAX when translated faithfully: writes go into arrays
the function allocated (or copied) itself, indices are provably in bounds, operands have the target's shape,
values fit the target's dtype.  The transformer should accept them and both packages should agree with the
template.  :func:`corpus` draws ``count`` functions from a seed; :func:`measure` judges them with
:func:`tests.codegen.fuzz_programs.judge` and counts the outcomes by class.

The classes are those of issues 17 and 32 (kernel-local copies, literal tuple indices, operands of literal shape,
array parameters of unknown dtype, scalar augmented assignment, dtypes from module constants, tuple indices from
names and dicts, ``.shape =`` on reshaped views and size-1 axes, ``np.append`` results, ``a[i][j] = v``,
``x.sort()``, ``.setflags``, the NumPy names jax.numpy also has, loop-indexed writes, masks, ``a += v`` with
``v`` of unproven shape), and what helpers' return annotations say (tuples unpacked, ``Optional[int]`` narrowed).

CI runs a small budget (``tests/codegen/test_fuzz_codegen.py``); a larger one:
``python tools/codegen_corpus.py fuzz --seed 7 --count 2000``.
"""

import collections
import random
from dataclasses import dataclass, field

HEADER = "import numpy as np\n"
KERNEL_IMPORT = "from oqupy._codegen import kernel\n"
SIGNATURE = "def f(x: np.ndarray, k: np.ndarray, m: np.ndarray, n: int):"
# x: float (4,), k: int (4,), m: float (3, 4), n: 2 or 4 (see fuzz_programs.inputs)


@dataclass
class Drawn:
    source: str
    classes: tuple[str, ...]
    kernel: bool = False


@dataclass
class _Snippet:
    lines: list[str]
    result: str
    header: list[str] = field(default_factory=list)


def _literal_index(r: random.Random, length: int) -> int:
    return r.randrange(-length, length)


def _value(r: random.Random, kind: str = "f") -> str:
    if kind == "c":
        return r.choice(["1j", "0.5 + 2j", "2.0", "-1.5"])
    if kind == "i":
        return r.choice(["1", "2", "-3", "7"])
    return r.choice(["1.0", "2.5", "-0.75", "3", "0.125"])


# -- the classes: each returns a snippet using fresh names with the suffix ``s`` ------------------------------


def kernel_copy(r: random.Random, s: str) -> _Snippet:
    src = r.choice(["x", "m"])
    index = str(_literal_index(r, 4)) if src == "x" else f"{_literal_index(r, 3)}, {_literal_index(r, 4)}"
    return _Snippet([f"w{s} = {src}.copy()", f"w{s}[{index}] = {_value(r)}"], f"w{s}")


def tuple_index(r: random.Random, s: str) -> _Snippet:
    rows, cols = r.randint(1, 4), r.randint(1, 5)
    i, j = _literal_index(r, rows), _literal_index(r, cols)
    write = r.choice([f"a{s}[({i}, {j})] = {_value(r)}", f"a{s}[{i}, {j}] += {_value(r)}"])
    return _Snippet([f"a{s} = np.zeros(({rows}, {cols}))", write], f"a{s}")


def literal_operand(r: random.Random, s: str) -> _Snippet:
    size = r.randint(3, 8)
    lo = r.randint(0, size - 1)
    hi = r.randint(lo + 1, size)
    op = r.choice(["+=", "-=", "*="])
    operand = r.choice([f"np.ones({hi - lo})", f"np.arange({hi - lo}.0)", f"np.full({hi - lo}, 0.5)"])
    return _Snippet([f"a{s} = np.linspace(0.0, 1.0, {size})", f"a{s}[{lo}:{hi}] {op} {operand}"], f"a{s}")


def unknown_dtype(r: random.Random, s: str) -> _Snippet:
    line = r.choice(
        [
            f"y{s}[{_literal_index(r, 4)}] = {r.choice(['1', '2', '-4', '0'])}",
            f"y{s} += {r.choice(['1', '2'])}",
        ]
    )
    return _Snippet([f"y{s} = np.array(x)", line], f"y{s}")


def scalar_aug(r: random.Random, s: str) -> _Snippet:
    value = r.choice(["x.sum()", f"x[{_literal_index(r, 4)}]", "x.max()", "np.sum(m)", "m[1, 2]"])
    op = r.choice(["+=", "-=", "*="])
    return _Snippet([f"t{s} = {r.choice(['0.0', '1.0', '2'])}", f"t{s} {op} {value}"], f"t{s}")


def module_dtype(r: random.Random, s: str) -> _Snippet:
    kind = r.choice(["complex128", "float64"])
    value = _value(r, "c" if kind == "complex128" else "f")
    return _Snippet(
        [f"a{s} = np.zeros(4, dtype=DTYPE{s})", f"a{s}[{_literal_index(r, 4)}] = {value}"],
        f"a{s}",
        header=[f"DTYPE{s} = np.{kind}"],
    )


def named_tuple_index(r: random.Random, s: str) -> _Snippet:
    rows, cols = r.randint(2, 4), r.randint(2, 5)
    index = r.choice(
        [
            f"({_literal_index(r, rows)}, {_literal_index(r, cols)})",
            f"(slice(0, {r.randint(1, rows)}), {_literal_index(r, cols)})",
            f"(slice(None), slice(1, {r.randint(2, cols)}))",
        ]
    )
    if r.random() < 0.5:
        lines = [f"r{s} = {index}", f"a{s}[r{s}] = {_value(r)}"]
    else:
        lines = [f"r{s} = {{'a': {index}}}", f"a{s}[r{s}['a']] = {_value(r)}"]
    return _Snippet([f"a{s} = np.zeros(({rows}, {cols}))", *lines], f"a{s}")


def reshape_shape(r: random.Random, s: str) -> _Snippet:
    new = r.choice(["(2, 2)", "(1, 4)", "(4, 1)", "(2, 1, 2)"])
    first = r.choice([f"y{s} = x.reshape(4)", f"y{s} = np.ones(4)", f"y{s} = x.ravel()"])
    return _Snippet([first, f"y{s}.shape = {new}"], f"y{s}")


def append_result(r: random.Random, s: str) -> _Snippet:
    op = r.choice(["+=", "*=", "-="])
    # a float appended makes the result float or complex whatever ``x`` is (an integer ``x`` and ``3``: NumPy
    # refuses ``*= 0.125`` in place, rightly refused)
    appended = r.choice(["1.0", "2.5", "-0.75", "0.125"])
    return _Snippet([f"y{s} = np.append(x, {appended})", f"y{s} {op} {_value(r)}"], f"y{s}")


def whole_update(r: random.Random, s: str) -> _Snippet:
    """``a OP= v`` on a fresh array with ``v`` of a shape the analysis cannot prove (an argument's): JAX's
    ``a.at[...].OP(v)`` broadcasts ``v`` into ``a``'s shape as NumPy's in-place operator does."""
    target, operand = r.choice(
        [
            ("np.zeros(4, dtype=complex)", r.choice(["np.sin(x)", "x", "k"])),
            ("np.ones((3, 4), dtype=np.complex128)", r.choice(["x", "m", "np.cos(m)"])),
            ("-1j * np.cos(x)", r.choice(["x", "np.exp(x)"])),
            ("np.zeros(4)", r.choice(["np.abs(x)", "np.abs(k)"])),
        ]
    )
    op = r.choice(["+=", "-=", "*="])
    return _Snippet([f"a{s} = {target}", f"a{s} {op} {operand}"], f"a{s}")


def chained_index(r: random.Random, s: str) -> _Snippet:
    i, j = _literal_index(r, 3), _literal_index(r, 4)
    return _Snippet([f"a{s} = np.zeros((3, 4))", f"a{s}[{i}][{j}] = {_value(r)}"], f"a{s}")


def sort_method(r: random.Random, s: str) -> _Snippet:
    return _Snippet([f"t{s} = x * {_value(r)}", f"t{s}.sort()"], f"t{s}")


def setflags(r: random.Random, s: str) -> _Snippet:
    return _Snippet([f"y{s} = x * 2.0", f"y{s}.setflags(write=False)"], f"y{s}")


def jnp_names(r: random.Random, s: str) -> _Snippet:
    expression = r.choice(
        [
            "np.nan_to_num(x / x)",
            "np.heaviside(x - 0.5, 0.5)",
            "np.amax(m, axis=0)",
            "np.finfo(np.float64).eps * x",
            "np.append(x, x)",
        ]
    )
    return _Snippet([f"y{s} = {expression}"], f"y{s}")


def loop_write(r: random.Random, s: str) -> _Snippet:
    index = r.choice(["i", "-1 - i", "3 - i", "2 * i + 1"])
    op = r.choice(["=", "+=", "*="])
    # an ``np.ndarray`` argument may be complex: its elements go into a complex array, numbers into a real one
    create, value = r.choice(
        [
            ("np.zeros(8, dtype=np.complex128)", f"x[i] + {_value(r)}"),
            ("np.ones(8)", f"0.5 * i + {_value(r)}"),
        ]
    )
    return _Snippet([f"a{s} = {create}", "for i in range(4):", f"    a{s}[{index}] {op} {value}"], f"a{s}")


def mask_write(r: random.Random, s: str) -> _Snippet:
    create = r.choice(["x * 3.0", "np.exp(x)", "np.linspace(0.0, 2.0, 5)"])
    return _Snippet([f"a{s} = {create}", f"a{s}[a{s} > 1.0] = {_value(r)}"], f"a{s}")


def annotated_return(r: random.Random, s: str) -> _Snippet:
    """What a helper's return annotation says: ``-> Tuple[np.ndarray, List[int]]`` unpacks into an array and a
    list, and ``-> Optional[int]`` is an int once ``is not None`` has been tested; the array's read by that int
    is checked against its shape in JAX, the list's is read as written."""
    index = _literal_index(r, 4)
    scale = _value(r)
    guard = r.choice(["not_none", "raise"])
    header = [
        "from typing import List, Optional, Tuple",
        "",
        "",
        f"def pair{s}(v: np.ndarray) -> Tuple[np.ndarray, List[int]]:",
        f"    return v * {scale}, [3, 1, 4, 1]",
        "",
        "",
        f"def first{s}(v: np.ndarray) -> Optional[int]:",
        f"    return {index} if v.shape[0] == 4 else None",
        "",
        "",
    ]
    lines = [f"a{s}, b{s} = pair{s}(x)", f"i{s} = first{s}(a{s})"]
    if guard == "not_none":
        lines += [
            f"if i{s} is not None:",
            f"    y{s} = a{s} * (a{s}[i{s}] + b{s}[i{s}])",
            "else:",
            f"    y{s} = a{s}",
        ]
    else:
        lines += [
            f"if i{s} is None:",
            "    raise ValueError('no index')",
            f"y{s} = a{s} * (a{s}[i{s}] - b{s}[i{s}])",
        ]
    return _Snippet(lines, f"y{s}", header=header)


CLASSES = {
    "kernel-copy": kernel_copy,
    "tuple-index": tuple_index,
    "literal-operand": literal_operand,
    "unknown-dtype": unknown_dtype,
    "scalar-aug": scalar_aug,
    "module-dtype": module_dtype,
    "named-tuple-index": named_tuple_index,
    "reshape-shape": reshape_shape,
    "append-result": append_result,
    "chained-index": chained_index,
    "sort-method": sort_method,
    "setflags": setflags,
    "jnp-names": jnp_names,
    "loop-write": loop_write,
    "mask-write": mask_write,
    "whole-update": whole_update,
    "annotated-return": annotated_return,
}
#: classes a ``@kernel`` may hold (no data-dependent shapes, no host-only calls)
KERNEL_CLASSES = (
    "kernel-copy",
    "tuple-index",
    "literal-operand",
    "scalar-aug",
    "loop-write",
    "chained-index",
    "whole-update",
)


def draw(r: random.Random) -> Drawn:
    kernel = r.random() < 0.25
    outside = sorted(set(CLASSES) - {"kernel-copy"})  # the class is about kernels' traced arguments
    names = r.sample(KERNEL_CLASSES if kernel else outside, r.randint(1, 3))
    header: list[str] = []
    body: list[str] = []
    results = []
    for position, name in enumerate(names):
        snippet = CLASSES[name](r, str(position))
        header += snippet.header
        body += snippet.lines
        results.append(snippet.result)
    lines = [HEADER]
    if kernel:
        lines.append(KERNEL_IMPORT)
    lines += [*header, "", ""]
    if kernel:
        lines.append('@kernel(static=("n",))')
    lines.append(SIGNATURE)
    lines += ["    " + line for line in body]
    lines.append(f"    return ({', '.join(results)},)")
    return Drawn("\n".join(lines) + "\n", tuple(names), kernel)


def corpus(seed: int, count: int) -> list[Drawn]:
    r = random.Random(seed)
    return [draw(r) for _ in range(count)]


def measure(drawn: list[Drawn]) -> dict:
    """Outcomes (agree / refused / silent / loud / crash) overall and per class, with the refusing rules."""
    from tests.codegen.fuzz_programs import judge

    totals: collections.Counter = collections.Counter()
    by_class: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    rules: collections.Counter = collections.Counter()
    bad: list[str] = []
    for item in drawn:
        try:
            outcome = judge(item.source)
            kind = outcome.kind
        except Exception as error:  # noqa: BLE001 - a crash of codegen or of the judge is counted
            kind, outcome = "crash", None
            bad.append(f"crash: {error!r}\n{item.source}")
        totals[kind] += 1
        for name in item.classes:
            by_class[name][kind] += 1
        if outcome is not None:
            rules.update(outcome.rules)
            if kind in ("silent", "loud"):
                bad.append(f"{kind}: {outcome.detail}\n{item.source}")
    return {"totals": totals, "by_class": by_class, "rules": rules, "bad": bad}
