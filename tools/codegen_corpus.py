"""Measure the transformer on two corpora: OQuPy 0.5's own modules, and generated translatable functions.

Usage::

    python tools/codegen_corpus.py oqupy [--dir DIR] [--verbose]
    python tools/codegen_corpus.py template [--verbose]
    python tools/codegen_corpus.py fuzz [--seed 7] [--count 400] [--verbose]
    python tools/codegen_corpus.py build-time [--repeat 3]

``oqupy`` fetches the ``oqupy==0.5.0`` wheel with ``pip download`` (the configured index) into DIR (default
``.cache/oqupy-0.5.0``, ignored by git; OQuPy's code never enters this repository), translates each of its 25
modules for ``oqupy_jax`` as they are (``codegen.pipeline.translate``) and prints how many are accepted, every
refusal as ``oqupy/<file>:line:col: [rule] message; idiom`` and the count per rule, and how many reads of values
of unknown kind each accepted module leaves as written (``ModuleContext.notes``; ``--verbose`` lists them).
``template`` does the same for our own template (``src_template/oqupy``).  ``fuzz`` draws COUNT
legitimately translatable functions (``tests/codegen/fuzz_translatable.py``) from SEED and prints how many are
accepted and agree in both packages, per class.  ``build-time`` times ``codegen.build.build_tree`` (the whole
in-memory translation of the template).
"""

import argparse
import collections
import subprocess
import sys
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def fetch_oqupy(directory: Path) -> Path:
    """The unpacked ``oqupy`` package of the 0.5.0 wheel under ``directory`` (downloaded once)."""
    package = directory / "oqupy"
    if package.is_dir():
        return package
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "oqupy==0.5.0", "-d", str(directory)],
        check=True,
    )
    wheel = next(directory.glob("oqupy-0.5.0-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(directory)
    return package


def translate_oqupy(package: Path, verbose: bool) -> int:
    from codegen.analysis import ModuleContext
    from codegen.pipeline import dtype_constants, function_returns, translate

    config = package / "config.py"  # its dtype constants, as the build reads the template's
    dtypes = dtype_constants(config.read_text(), "oqupy.config") if config.exists() else ()
    modules = sorted(package.rglob("*.py"))
    returns: list[tuple[str, str]] = []  # what its functions are annotated to return, for their callers
    for path in modules:
        name = path.relative_to(package.parent).with_suffix("").as_posix().removesuffix("/__init__")
        returns.extend(function_returns(path.read_text(), name.replace("/", ".")))
    accepted, crashes, unknown_reads = 0, 0, 0
    rules: collections.Counter = collections.Counter()
    for path in modules:
        relative = path.relative_to(package.parent).as_posix()
        name = relative.removesuffix(".py").replace("/", ".")
        ctx = ModuleContext(relative, name, "jax", "oqupy_jax", dtypes=dtypes, returns=tuple(returns))
        try:
            output = translate(path.read_text(), ctx)
        except Exception as error:  # noqa: BLE001 - a crash is what this counts
            crashes += 1
            print(f"{relative}: CRASH {error!r}")
            continue
        notes = sorted(set(ctx.notes))
        if output is not None:
            accepted += 1
            unknown_reads += len(notes)
            print(
                f"{relative}: accepted"
                + (f" ({len(notes)} reads of unknown kind as written)" if notes else "")
            )
            if verbose:
                for note in notes:
                    print(f"    {note}")
            continue
        found = sorted(set(ctx.diagnostics))
        rules.update(d.rule for d in found)
        print(f"{relative}: refused ({len(found)} diagnostics)")
        if verbose:
            for diagnostic in found:
                print(f"    {diagnostic}")
    print(f"\n{accepted} of {len(modules)} modules accepted, {crashes} crashes")
    print(f"reads of values of unknown kind left as written in the accepted modules: {unknown_reads}")
    print("refusals by rule: " + ", ".join(f"{k} {v}" for k, v in rules.most_common()))
    return accepted


def fuzz(seed: int, count: int, verbose: bool) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    from tests.codegen.fuzz_translatable import corpus, measure

    result = measure(corpus(seed, count))
    totals = result["totals"]
    print(f"seed {seed}, {count} functions: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    print(f"accepted and agreeing: {totals['agree']}/{count} = {totals['agree'] / count:.1%}")
    for name, counts in sorted(result["by_class"].items()):
        share = counts["agree"] / sum(counts.values())
        print(f"  {name:20s} {share:6.1%}  " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("refusing rules: " + ", ".join(f"{k} {v}" for k, v in result["rules"].most_common()))
    if verbose:
        for text in result["bad"]:
            print("----\n" + text)
    elif result["bad"]:
        print(f"{len(result['bad'])} silent/loud/crash cases (--verbose prints them)")


def build_time(repeat: int) -> None:
    from codegen.build import build_tree

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        build_tree(REPO)
        times.append(time.perf_counter() - start)
    print("build_tree: " + ", ".join(f"{t:.2f} s" for t in times) + f" (best {min(times):.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["oqupy", "template", "fuzz", "build-time"])
    parser.add_argument("--dir", type=Path, default=REPO / ".cache" / "oqupy-0.5.0")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.what == "oqupy":
        translate_oqupy(fetch_oqupy(args.dir), args.verbose)
    elif args.what == "template":
        translate_oqupy(REPO / "src_template" / "oqupy", args.verbose)
    elif args.what == "fuzz":
        fuzz(args.seed, args.count, args.verbose)
    else:
        build_time(args.repeat)


if __name__ == "__main__":
    main()
