"""Check the sdists and wheels built from ``generated/`` hold what a user needs.

Usage::

    python tools/check_dists.py DIST_DIR

DIST_DIR holds, for each generated package, the sdist and the wheel that ``python -m build`` made from it (the
wheel is built from the unpacked sdist, so a file missing from the sdist is missing from the wheel too).  Every
module under ``generated/<package>/src/<package>/`` must be in both; the sdist must carry the pyproject, README
and LICENSE; the wheel its ``py.typed`` marker, the licence under ``.dist-info/licenses/`` and metadata naming
the licence, Python >= 3.11 and the extras.  Exits 1 with one line per problem.
"""

import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("oqupy_numpy", "oqupy_jax")
EXTRAS = ("dask", "plot", "test")


def _one(directory: Path, pattern: str) -> Path:
    found = sorted(directory.glob(pattern))
    if len(found) != 1:
        raise SystemExit(f"{directory}: expected one {pattern}, found {[p.name for p in found]}")
    return found[0]


def problems(dist_dir: Path, package: str) -> list[str]:
    distribution = package  # both sdist and wheel names use the normalised name with underscores
    sources = REPO / "generated" / package / "src" / package
    modules = {p.relative_to(sources.parent).as_posix() for p in sources.rglob("*.py")}
    modules.add(f"{package}/py.typed")
    found = []

    sdist = _one(dist_dir, f"{distribution}-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for required in ("pyproject.toml", "README.md", "LICENSE"):
        if required not in names:
            found.append(f"{sdist.name}: no {required}")
    found += [f"{sdist.name}: no {m}" for m in sorted(modules) if f"src/{m}" not in names]

    wheel = _one(dist_dir, f"{distribution}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        metadata = Parser().parsestr(archive.read(metadata_name).decode()) if metadata_name else None
    found += [f"{wheel.name}: no {m}" for m in sorted(modules) if m not in names]
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        found.append(f"{wheel.name}: no .dist-info/licenses/LICENSE")
    if metadata is None:
        found.append(f"{wheel.name}: no METADATA")
    else:
        if metadata.get("License-Expression") != "Apache-2.0":
            found.append(f"{wheel.name}: License-Expression is {metadata.get('License-Expression')!r}")
        if metadata.get("Requires-Python") != ">=3.11":
            found.append(f"{wheel.name}: Requires-Python is {metadata.get('Requires-Python')!r}")
        extras = set(metadata.get_all("Provides-Extra") or [])
        found += [f"{wheel.name}: no extra {e!r}" for e in EXTRAS if e not in extras]
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    dist_dir = Path(argv[0])
    report = [line for package in PACKAGES for line in problems(dist_dir, package)]
    for line in report:
        print(line)
    if not report:
        names = ", ".join(sorted(p.name for p in dist_dir.iterdir()))
        print(f"dists complete: {names}")
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
