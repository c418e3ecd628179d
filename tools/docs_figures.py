"""MkDocs hook: the documentation's figures are made by the examples during the docs build, never committed.

``mkdocs.yml`` names this file under ``hooks:``.  For every figure in ``FIGURES`` the hook runs its example with
``oqupy_numpy`` (``--output`` pointing into a cache folder) and adds the PNG to the site as if it lay in ``docs/``,
so ``![...](spin_boson.png)`` in a page resolves and ``mkdocs build --strict`` fails when an example does.

- A figure is cached under ``.cache/docs-figures/`` by a digest of the example's source, its arguments and the
  generated ``oqupy_numpy`` sources: a rebuild after a docs-only change runs nothing.
- ``OQUPY_DOCS_QUICK=1`` (set by ``./dev test``) runs each example with ``--quick``: a smoke build that shows the
  examples still run and plot, in seconds, with figures that are too short or too coarse to publish.
"""

import hashlib
import logging
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.structure.files import File

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "docs-figures"
PACKAGE_SOURCES = REPO / "generated" / "oqupy_numpy" / "src"
log = logging.getLogger("mkdocs.hooks.docs_figures")

#: figure file name in the site -> (example script, extra arguments for the published figure)
FIGURES = {
    "spin_boson.png": ("spin_boson.py", ()),
    "process_tensor.png": ("process_tensor.py", ()),
    "steady_state.png": ("steady_state.py", ()),
    "spectra.png": ("spectra.py", ()),
    "mean_field.png": ("mean_field.py", ()),
    "gibbs_state.png": ("gibbs_state.py", ()),
    "optimal_control.png": ("optimal_control.py", ()),
    "bath_dynamics.png": ("bath_dynamics.py", ()),
    "spin_chain.png": ("spin_chain.py", ()),
    "influence_coefficients.png": ("influence_coefficients.py", ()),
    "pt_tempo_methods.png": ("pt_tempo_methods.py", ()),
}


def _quick() -> bool:
    return os.environ.get("OQUPY_DOCS_QUICK", "") not in ("", "0")


def _package_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_SOURCES.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE_SOURCES).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def figure_path(name: str, arguments: tuple[str, ...], package_digest: str) -> Path:
    """Where the cached figure for ``name`` made with ``arguments`` lives."""
    script, _ = FIGURES[name]
    digest = hashlib.sha256((REPO / "examples" / script).read_bytes())
    digest.update("\0".join(arguments).encode())
    digest.update(package_digest.encode())
    return CACHE / f"{Path(name).stem}-{digest.hexdigest()[:16]}.png"


def make_figure(name: str, package_digest: str) -> Path:
    """The figure's PNG, running its example unless the cache has it."""
    script, extra = FIGURES[name]
    arguments = ("--backend", "numpy", *extra, *(("--quick",) if _quick() else ()))
    output = figure_path(name, arguments, package_digest)
    if output.exists():
        return output
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_suffix(".partial.png")
    start = time.perf_counter()
    command = [sys.executable, str(REPO / "examples" / script), *arguments, "--output", str(partial)]
    run = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if run.returncode != 0 or not partial.exists():
        raise RuntimeError(f"examples/{script} failed making {name}:\n{run.stdout}\n{run.stderr}")
    partial.replace(output)  # only a complete figure enters the cache
    log.info("made %s with examples/%s in %.1f s", name, script, time.perf_counter() - start)
    return output


def on_files(files, config):
    package_digest = _package_digest()
    # the examples run side by side, one process each, as many at once as there are cores
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        made = dict(zip(FIGURES, pool.map(lambda name: make_figure(name, package_digest), FIGURES)))
    for name, path in made.items():
        files.append(File.generated(config, name, abs_src_path=str(path)))
    return files
