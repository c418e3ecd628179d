"""``build`` and ``check``: generate both packages from the template, or prove ``generated/`` is fresh.

A build happens in memory first (every module checked and translated, all problems collected), then in a
temporary tree that is import-checked in a subprocess, and only then are changed files written into
``generated/`` (orphans removed).  A failed build leaves ``generated/`` as it was.

Every translated file records, in its banner, the digest of its body (hand edits) and of its inputs: the
template module and the code generator itself (``codegen/`` and the pinned tool versions).  ``check`` compares
those digests and re-renders the cheap metadata files, which takes seconds; ``check --full`` translates every
module again and diffs the result (about a minute on two cores; the test suite does it too).
"""

import difflib
import hashlib
import importlib.metadata
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import libcst as cst

from codegen import metadata
from codegen.analysis import ARRAY_TYPE, ModuleContext
from codegen.diagnostics import CodegenError, Diagnostic
from codegen.docs import render_rules
from codegen.format import format_source
from codegen.pipeline import (
    Parsed,
    array_aliases,
    dtype_constants,
    function_returns,
    module_declaration,
    translate,
)
from codegen.rules import RULES

REPO = Path(__file__).resolve().parents[1]
TEMPLATE_ROOT = "src_template"
TEMPLATE_PACKAGE = "oqupy"
GENERATED = "generated"
RULES_DOC = "docs/rules.md"
NOT_TRANSLATED = {"_codegen.py"}  # the markers
ALIASES_MODULE = "_types"  # its ``Name = np.ndarray`` aliases annotate arrays in every template module
DTYPES_MODULE = "config"  # its ``Name = np.complex128`` constants are known dtypes in every template module
IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "build", "dist", ".tox"}
MARK = f"GENER{''}ATED"  # spelled so that this file never looks generated
BANNER_PREFIX = {".py": "# ", ".toml": "# ", ".md": "<!-- "}
BANNER_SUFFIX = {".py": "", ".toml": "", ".md": " -->"}

_JINJA = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)


@dataclass
class Tree:
    """A complete build: relative path -> file content, plus how often each rule fired."""

    files: dict[str, str] = field(default_factory=dict)
    fired: dict[str, int] = field(default_factory=dict)
    #: reads ``u[i]`` of values of unknown kind left as written in ``oqupy_jax`` (``ModuleContext.notes``)
    notes: list[Diagnostic] = field(default_factory=list)


def digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def codegen_fingerprint() -> str:
    """Digest of everything besides a template module that decides its translation."""
    root = Path(__file__).resolve().parent
    sources = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in {".py", ".j2", ".toml"} and "__pycache__" not in p.parts
    )
    parts = [f"{p.relative_to(root).as_posix()}\n{p.read_text()}" for p in sources]
    parts.append(f"libcst {importlib.metadata.version('libcst')}, ruff {importlib.metadata.version('ruff')}")
    return digest("\0".join(parts))


def inputs_digest(
    template_source: str,
    fingerprint: str,
    array_types: frozenset[str],
    dtypes: tuple[tuple[str, str], ...] = (),
    returns: tuple[tuple[str, str], ...] = (),
) -> str:
    """Digest of what decides a module's translation: codegen, the module, the template's array types, dtype
    constants and what its functions are annotated to return."""
    constants = ",".join(f"{name}={kind}" for name, kind in dtypes)
    returned = ",".join(f"{name}={kind}" for name, kind in returns)
    return digest(
        f"{fingerprint}\0{','.join(sorted(array_types))}\0{constants}\0{returned}\0{template_source}"
    )


def array_types(repo: Path = REPO) -> frozenset[str]:
    """``numpy.ndarray`` and the aliases of it declared in the template's ``_types`` module."""
    path = repo / TEMPLATE_ROOT / TEMPLATE_PACKAGE / f"{ALIASES_MODULE}.py"
    aliases = (
        array_aliases(path.read_text(), f"{TEMPLATE_PACKAGE}.{ALIASES_MODULE}") if path.exists() else set()
    )
    return frozenset({ARRAY_TYPE, *aliases})


def package_dtypes(repo: Path = REPO) -> tuple[tuple[str, str], ...]:
    """The dtype constants of the template's ``config`` module (``oqupy.config.NpDtype`` -> "c")."""
    path = repo / TEMPLATE_ROOT / TEMPLATE_PACKAGE / f"{DTYPES_MODULE}.py"
    return dtype_constants(path.read_text(), f"{TEMPLATE_PACKAGE}.{DTYPES_MODULE}") if path.exists() else ()


def _module_name(repo: Path, path: Path) -> str:
    """The dotted name of a template module (``oqupy._mps``; a package's ``__init__`` is the package)."""
    parts = path.relative_to(repo / TEMPLATE_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_returns(repo: Path = REPO) -> tuple[tuple[str, str], ...]:
    """What the template's module functions are annotated to return, by qualified name
    (:func:`codegen.pipeline.function_returns`): a module that calls ``_validation.first_nonfinite_step``
    knows it gets an ``Optional[int]``."""
    found: list[tuple[str, str]] = []
    for path in template_modules(repo):
        found.extend(function_returns(path.read_text(), _module_name(repo, path)))
    return tuple(sorted(found))


def with_banner(body: str, source: str, suffix: str, inputs: str | None = None) -> str:
    before, after = BANNER_PREFIX[suffix], BANNER_SUFFIX[suffix]
    recorded = f"sha256:{digest(body)}" + (f" inputs:{inputs}" if inputs else "")
    return (
        f"{before}{MARK} by `python -m codegen build` from {source}; DO NOT EDIT.{after}\n"
        f"{before}{recorded}{after}\n" + body
    )


def split_banner(content: str) -> tuple[str | None, str]:
    """(recorded digest, body) of a generated file; digest None when there is no banner."""
    lines = content.split("\n", 2)
    if len(lines) < 3 or MARK not in lines[0] or "sha256:" not in lines[1]:
        return None, content
    recorded = lines[1].split("sha256:", 1)[1].split()[0].rstrip("->").strip()
    return recorded, lines[2]


def recorded_inputs(content: str) -> str | None:
    """The inputs digest in a translated file's banner (None if absent)."""
    lines = content.split("\n", 2)
    if len(lines) < 2 or "inputs:" not in lines[1]:
        return None
    return lines[1].split("inputs:", 1)[1].split()[0]


def template_modules(repo: Path) -> list[Path]:
    root = repo / TEMPLATE_ROOT / TEMPLATE_PACKAGE
    return sorted(
        p for p in root.rglob("*.py") if p.name not in NOT_TRANSLATED and "__pycache__" not in p.parts
    )


def template_version(repo: Path = REPO) -> str:
    """``__version__`` of the template package: the one place the version is written."""
    path = repo / TEMPLATE_ROOT / TEMPLATE_PACKAGE / "__init__.py"
    value = module_declaration(cst.parse_module(path.read_text()), "__version__")
    if not isinstance(value, cst.SimpleString):
        relative = path.relative_to(repo).as_posix()
        raise CodegenError(
            [Diagnostic(relative, 1, 1, "version", "no `__version__` string", '`__version__ = "1.0.0"`')]
        )
    return str(value.evaluated_value)


def rendered_files(repo: Path = REPO) -> dict[str, str]:
    """The files rendered, not translated: each package's pyproject, README, LICENSE and py.typed, and
    ``docs/rules.md``."""
    version = template_version(repo)
    licence = (repo / "LICENSE").read_text()
    files = {RULES_DOC: with_banner(render_rules(), "codegen/rules/ (codegen/docs.py)", ".md")}
    for backend, package in metadata.PACKAGES.items():
        values = dict(
            backend=backend,
            package=package,
            distribution=package.replace("_", "-"),
            version=version,
            description=metadata.DESCRIPTIONS[backend],
            python_requires=metadata.PYTHON_REQUIRES,
            dependencies=metadata.DEPENDENCIES[backend],
            extras=metadata.EXTRAS,
            urls=metadata.URLS,
        )
        files[f"{GENERATED}/{package}/LICENSE"] = licence  # copied verbatim: a licence text carries no banner
        files[f"{GENERATED}/{package}/src/{package}/py.typed"] = ""  # PEP 561 marker (must stay empty)
        for name, suffix in (("pyproject.toml", ".toml"), ("README.md", ".md")):
            body = _JINJA.get_template(f"{name}.j2").render(**values)
            files[f"{GENERATED}/{package}/{name}"] = with_banner(body, f"codegen/templates/{name}.j2", suffix)
    return files


def _targets(repo: Path, path: Path) -> dict[str, str]:
    """backend -> generated path of one template module (every module goes into every package)."""
    inner = path.relative_to(repo / TEMPLATE_ROOT / TEMPLATE_PACKAGE).as_posix()
    return {
        backend: f"{GENERATED}/{package}/src/{package}/{inner}"
        for backend, package in metadata.PACKAGES.items()
    }


Translation = tuple[dict[str, str], dict[str, int], list[Diagnostic], list[Diagnostic]]
"""One template module's translation: generated files by path, rules fired (counts), diagnostics, notes."""


def _translate_file(
    repo: Path,
    path: Path,
    fingerprint: str,
    types: frozenset[str],
    dtypes: tuple[tuple[str, str], ...],
    returns: tuple[tuple[str, str], ...],
) -> Translation:
    """Translate one template module for every backend it is emitted into."""
    files: dict[str, str] = {}
    fired: dict[str, int] = {}
    diagnostics: list[Diagnostic] = []
    notes: list[Diagnostic] = []
    relative = path.relative_to(repo).as_posix()
    source = path.read_text()
    parsed = Parsed(source)
    inputs = inputs_digest(source, fingerprint, types, dtypes, returns)
    for backend, target in _targets(repo, path).items():
        package = metadata.PACKAGES[backend]
        ctx = ModuleContext(
            relative,
            _module_name(repo, path),
            backend,
            package,
            array_types=types,
            dtypes=dtypes,
            returns=returns,
        )
        translated = translate(parsed, ctx)
        diagnostics.extend(ctx.diagnostics)
        notes.extend(sorted(set(ctx.notes)))
        for rule, count in ctx.fired.items():
            fired[rule] = fired.get(rule, 0) + count
        if translated is None:
            continue
        files[target] = with_banner(format_source(translated, target), relative, ".py", inputs)
    return files, fired, diagnostics, notes


def build_tree(repo: Path = REPO, cache: dict[tuple[str, str], Translation] | None = None) -> Tree:
    """Translate every template module for both backends; raise ``CodegenError`` with all problems.

    Modules are independent, so they are translated in parallel processes; the result does not depend
    on the order in which they finish.  ``cache`` (optional, read and filled) holds translations by template
    path and :func:`inputs_digest`, which covers everything that decides a module's translation (as for
    :func:`check`'s quick judgement): trees that differ in a few modules translate only those.  The test suite
    shares one between the builds of its scratch trees; ``python -m codegen`` keeps none.
    """
    tree = Tree()
    diagnostics: list[Diagnostic] = []
    paths = template_modules(repo)
    fingerprint, types, dtypes = codegen_fingerprint(), array_types(repo), package_dtypes(repo)
    returns = package_returns(repo)
    keys = [
        (
            path.relative_to(repo).as_posix(),
            inputs_digest(path.read_text(), fingerprint, types, dtypes, returns),
        )
        for path in paths
    ]
    known: dict[tuple[str, str], Translation] = {} if cache is None else cache
    missing = [index for index, key in enumerate(keys) if key not in known]
    if missing:
        count = len(missing)
        # spawn, not fork: the caller may have JAX (multithreaded) loaded, and forking it can deadlock
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(count, os.cpu_count() or 1), mp_context=context) as pool:
            fresh = pool.map(
                _translate_file,
                [repo] * count,
                [paths[index] for index in missing],
                [fingerprint] * count,
                [types] * count,
                [dtypes] * count,
                [returns] * count,
            )
            known.update((keys[index], result) for index, result in zip(missing, fresh))
    results = [known[key] for key in keys]
    for files, fired, found, notes in results:
        tree.files.update(files)
        tree.notes.extend(notes)
        diagnostics.extend(found)
        for rule, count in fired.items():
            tree.fired[rule] = tree.fired.get(rule, 0) + count
    if diagnostics:
        raise CodegenError(diagnostics)
    tree.files.update(rendered_files(repo))
    return tree


def unused_rules(tree: Tree) -> list[str]:
    return [
        rule.NAME
        for rule in RULES
        if rule.rewrites() and not rule.MAY_BE_IDLE and not tree.fired.get(rule.NAME)
    ]


def existing_files(repo: Path = REPO) -> dict[str, str]:
    """Files currently under ``generated/`` (build artefacts ignored), plus ``docs/rules.md``."""
    found = {}
    root = repo / GENERATED
    if root.exists():
        for path in sorted(root.rglob("*")):
            parts = set(path.relative_to(root).parts)
            if (
                path.is_file()
                and not parts & IGNORED_PARTS
                and not any(p.endswith(".egg-info") for p in parts)
            ):
                found[path.relative_to(repo).as_posix()] = path.read_text()
    if (repo / RULES_DOC).exists():
        found[RULES_DOC] = (repo / RULES_DOC).read_text()
    return found


# -- the judgement: which files are not what the template and codegen produce ---------------------------
@dataclass(frozen=True)
class Expected:
    """What a file under ``generated/`` should be: its whole ``content`` when it is known (a fresh build, or a
    rendered file), else the ``inputs`` digest its banner must record (``check`` without translating)."""

    content: str | None = None
    inputs: str | None = None


VERDICTS = {
    "missing": "missing",
    "no-banner": "has no generated-file banner",
    "hand-edited": "was edited by hand",
    "stale": "is stale (the template or codegen changed)",
    "orphan": "orphan (no template produces it)",
}


@dataclass(frozen=True)
class Finding:
    """One file that is not as it should be, and why (a key of ``VERDICTS``)."""

    path: str
    verdict: str

    def __str__(self) -> str:
        return f"{self.path}: {VERDICTS[self.verdict]}"


def _verdict(actual: str | None, expected: Expected) -> str | None:
    if actual is None:
        return "missing"
    if expected.content is not None and actual == expected.content:
        return None
    recorded, body = split_banner(actual)
    if recorded is None:
        return "no-banner"
    if recorded != digest(body):
        return "hand-edited"
    if expected.content is None and recorded_inputs(actual) == expected.inputs:
        return None
    return "stale"


def judge(expected: dict[str, Expected], current: dict[str, str]) -> list[Finding]:
    """Every file of ``current`` (on disk) that differs from ``expected``, and every orphan.

    The one judgement behind ``build`` (what to write and remove), ``check`` and ``check --full``.
    """
    findings = []
    for path, wanted in sorted(expected.items()):
        verdict = _verdict(current.get(path), wanted)
        if verdict is not None:
            findings.append(Finding(path, verdict))
    findings.extend(Finding(path, "orphan") for path in sorted(set(current) - set(expected)))
    return findings


def expected_from_digests(repo: Path = REPO) -> dict[str, Expected]:
    """What ``check`` expects without translating: rendered files in full, translated ones by inputs digest."""
    expected = {path: Expected(content=content) for path, content in rendered_files(repo).items()}
    fingerprint, types, dtypes = codegen_fingerprint(), array_types(repo), package_dtypes(repo)
    returns = package_returns(repo)
    for path in template_modules(repo):
        inputs = inputs_digest(path.read_text(), fingerprint, types, dtypes, returns)
        for target in _targets(repo, path).values():
            expected[target] = Expected(inputs=inputs)
    return expected


def expected_from_tree(tree: Tree) -> dict[str, Expected]:
    return {path: Expected(content=content) for path, content in tree.files.items()}


def problems(repo: Path = REPO, tree: Tree | None = None) -> list[str]:
    """``check``'s report: the judgement from the banners' digests or, given a fresh ``tree`` (``--full``),
    from its contents, with a unified diff per changed file and the unused rules."""
    current = existing_files(repo)
    if tree is None:
        return [str(finding) for finding in judge(expected_from_digests(repo), current)]
    report = []
    for finding in judge(expected_from_tree(tree), current):
        text = str(finding)
        if finding.path in current and finding.path in tree.files:
            text += "\n" + "".join(
                difflib.unified_diff(
                    current[finding.path].splitlines(True),
                    tree.files[finding.path].splitlines(True),
                    f"{finding.path} (on disk)",
                    f"{finding.path} (fresh build)",
                )
            )
        report.append(text)
    report.extend(
        f"rule {name!r} fired on nothing in the template (unused rule)" for name in unused_rules(tree)
    )
    return report


IMPORT_CHECK = """
import importlib, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for info in pkgutil.walk_packages(package.__path__, sys.argv[1] + "."):
    importlib.import_module(info.name)
if sys.argv[1] == "oqupy_numpy":
    assert "jax" not in sys.modules, "oqupy_numpy imported jax"
"""


def import_check(root: Path) -> list[str]:
    """Import every module of each package in ``root`` in a fresh interpreter."""
    failures = []
    for backend, package in metadata.PACKAGES.items():
        if (
            backend == "jax"
            and subprocess.run([sys.executable, "-c", "import jax"], capture_output=True).returncode
        ):
            print("codegen: jax is not installed here; import check of oqupy_jax skipped", file=sys.stderr)
            continue
        env = dict(os.environ, PYTHONPATH=str(root / GENERATED / package / "src"))
        result = subprocess.run(
            [sys.executable, "-c", IMPORT_CHECK, package], env=env, capture_output=True, text=True, cwd=root
        )
        if result.returncode:
            failures.append(f"{package} does not import:\n{result.stderr}")
    return failures


def build(repo: Path = REPO, cache: dict[tuple[str, str], Translation] | None = None) -> int:
    """Translate the template and write what changed into ``generated/`` (nothing if any module fails);
    0 on success.  ``cache``: as for :func:`build_tree`."""
    try:
        tree = build_tree(repo, cache)
    except CodegenError as error:
        for diagnostic in error.diagnostics:
            print(diagnostic, file=sys.stderr)
        print(f"codegen: {len(error.diagnostics)} problem(s); nothing written", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="codegen-") as scratch:
        root = Path(scratch)
        for path, content in tree.files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        failures = import_check(root)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print("codegen: import check failed; nothing written", file=sys.stderr)
        return 1
    findings = judge(expected_from_tree(tree), existing_files(repo))
    for finding in findings:
        target = repo / finding.path
        if finding.verdict == "orphan":
            target.unlink()
            print(f"codegen: removed orphan {finding.path}")
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(tree.files[finding.path])
    for directory in sorted((repo / GENERATED).rglob("*"), reverse=True):  # emptied folders
        if directory.is_dir() and not any(directory.iterdir()):
            shutil.rmtree(directory)
    written = sum(finding.verdict != "orphan" for finding in findings)
    print(f"codegen: {len(tree.files)} files, {written} written")
    if tree.notes:
        print(
            f"codegen: {len(tree.notes)} reads of values of unknown kind left as written in oqupy_jax"
            " (`python tools/codegen_corpus.py template --verbose` lists them)"
        )
    for name in unused_rules(tree):
        print(f"codegen: warning: rule {name!r} fired on nothing in the template", file=sys.stderr)
    return 0


def check(repo: Path = REPO, full: bool = False) -> int:
    """0 when ``generated/`` is fresh.  ``full``: translate again, show diffs and unused rules."""
    tree = None
    if full:
        try:
            tree = build_tree(repo)
        except CodegenError as error:
            for diagnostic in error.diagnostics:
                print(diagnostic, file=sys.stderr)
            return 1
    found = problems(repo, tree)
    if found:
        print("\n".join(found), file=sys.stderr)
        hint = "" if full else " (`check --full` shows the diffs)"
        print(f"codegen check failed: run `python -m codegen build`{hint}", file=sys.stderr)
        return 1
    how = "fresh build" if full else "banner digests"
    print(f"codegen check: {len(existing_files(repo))} generated files are fresh ({how})")
    return 0
