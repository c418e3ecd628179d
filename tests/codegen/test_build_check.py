"""``python -m codegen build`` / ``check``: drift, hand edits, orphans, atomic failure, determinism."""

import re
import shutil
from pathlib import Path

import pytest

from codegen import build as codegen_build

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def translations():
    """Translated modules shared by this module's builds (``build_tree``'s ``cache``): a scratch tree that
    differs from the template in a few modules translates only those (a full translation takes minutes on two
    cores).  ``test_build_is_deterministic`` translates without it."""
    return {}


@pytest.fixture(scope="module")
def fresh_tree(translations):
    return codegen_build.build_tree(REPO, translations)


def test_generated_tree_is_fresh(fresh_tree):
    problems = codegen_build.problems(REPO, fresh_tree)
    assert not problems, "\n".join(problems) + "\nrun `python -m codegen build`"


def test_build_is_deterministic(fresh_tree):
    """The largest template modules translated again here, in this process (another hash seed than the build's
    workers, and no cache), give the same files.  The whole tree is compared with the committed one, which an
    earlier build wrote, by ``test_generated_tree_is_fresh``."""
    paths = sorted(codegen_build.template_modules(REPO), key=lambda path: path.stat().st_size)[-3:]
    fingerprint = codegen_build.codegen_fingerprint()
    types, dtypes = codegen_build.array_types(REPO), codegen_build.package_dtypes(REPO)
    returns = codegen_build.package_returns(REPO)
    for path in paths:
        files, _, diagnostics, _ = codegen_build._translate_file(
            REPO, path, fingerprint, types, dtypes, returns
        )
        assert files and not diagnostics
        for target, content in files.items():
            assert content == fresh_tree.files[target], target


#: The template's reads ``u[i]`` of values of unknown kind that reach ``oqupy_jax`` (a ``jax.Array`` there would
#: clamp where NumPy raises), each reviewed: in bounds by construction (docs/template_guide.md).  A new one fails
#: ``test_template_reads_of_unknown_kind_are_the_reviewed_ones``: annotate the value (then its reads are checked),
#: or review the read and list it here.
REVIEWED_UNKNOWN_READS = [
    ("src_template/oqupy/_propagation.py", "stack[step.index]"),  # a scan's step over the stack's own steps
    ("src_template/oqupy/_propagation.py", "stack[step.index]"),
    ("src_template/oqupy/pt_tempo.py", "trace[0]"),  # the first cap of a process tensor (d**2 entries)
    ("src_template/oqupy/system_dynamics.py", "caps[num_steps]"),  # caps of steps 0 .. num_steps
    ("src_template/oqupy/system_dynamics.py", "setup.controls.pre[0]"),  # controls of steps 0 .. num_steps
    ("src_template/oqupy/system_dynamics.py", "setup.controls.pre[0]"),
]


def test_template_reads_of_unknown_kind_are_the_reviewed_ones(fresh_tree):
    found = [(note.path, note.message.split("`")[1]) for note in fresh_tree.notes]
    assert all(note.rule == "index-safety" for note in fresh_tree.notes)
    assert sorted(found) == sorted(REVIEWED_UNKNOWN_READS)


def test_every_generated_file_has_a_banner_naming_its_template(fresh_tree):
    for path, content in fresh_tree.files.items():
        if path.endswith(("py.typed", "/LICENSE")):  # an empty marker and a licence text carry no banner
            continue
        recorded, body = codegen_build.split_banner(content)
        assert recorded == codegen_build.digest(body), path
        assert "from " in content.splitlines()[0] and "DO NOT EDIT" in content.splitlines()[0]


def test_each_package_carries_the_licence_verbatim(fresh_tree):
    licence = (REPO / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0" in licence
    for package in ("oqupy_numpy", "oqupy_jax"):
        assert fresh_tree.files[f"generated/{package}/LICENSE"] == licence
        assert 'license-files = ["LICENSE"]' in fresh_tree.files[f"generated/{package}/pyproject.toml"]


@pytest.fixture
def scratch(tmp_path):
    shutil.copy(REPO / "LICENSE", tmp_path / "LICENSE")
    for folder in ("src_template", "generated", "docs"):
        shutil.copytree(
            REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
        )
    return tmp_path


def problems_in(repo, translations):
    return "\n".join(codegen_build.problems(repo, codegen_build.build_tree(repo, translations)))


def spoil(repo):
    """One file of each kind the judgement tells apart."""
    target = repo / "generated/oqupy_jax/src/oqupy_jax/_tensors.py"
    target.write_text(target.read_text().replace("return result", "return result * 1"))
    template = repo / "src_template/oqupy/operators.py"
    template.write_text(template.read_text() + "\n\nANSWER = 42\n")
    (repo / "generated/oqupy_numpy/src/oqupy_numpy/extra.py").write_text("x = 1\n")
    (repo / "generated/oqupy_jax/src/oqupy_jax/dynamics.py").unlink()
    readme = repo / "generated/oqupy_numpy/README.md"
    readme.write_text(readme.read_text() + "edited\n")
    config = repo / "generated/oqupy_numpy/src/oqupy_numpy/config.py"
    config.write_text(codegen_build.split_banner(config.read_text())[1])


SPOILED = [
    "generated/oqupy_jax/src/oqupy_jax/_tensors.py: was edited by hand",
    "generated/oqupy_jax/src/oqupy_jax/dynamics.py: missing",
    "generated/oqupy_jax/src/oqupy_jax/operators.py: is stale (the template or codegen changed)",
    "generated/oqupy_numpy/README.md: was edited by hand",
    "generated/oqupy_numpy/src/oqupy_numpy/config.py: has no generated-file banner",
    "generated/oqupy_numpy/src/oqupy_numpy/extra.py: orphan (no template produces it)",
    "generated/oqupy_numpy/src/oqupy_numpy/operators.py: is stale (the template or codegen changed)",
]


def test_full_check_judges_like_the_quick_one_and_adds_diffs(scratch, translations):
    spoil(scratch)
    report = codegen_build.problems(scratch, codegen_build.build_tree(scratch, translations))
    assert sorted(line.split("\n")[0] for line in report) == SPOILED
    assert "+    return result\n" in "\n".join(report)


def test_unused_rule_is_reported(scratch, translations):
    rewritten = 0
    for path in (scratch / "src_template/oqupy").glob("*.py"):  # every `x.shape = s` written as a reshape
        text = path.read_text()
        new = re.sub(r"^( *)(\w+)\.shape = (.+)$", r"\1\2 = \2.reshape(\3)", text, flags=re.MULTILINE)
        path.write_text(new)
        rewritten += new != text
    assert rewritten
    assert "rule 'shape-assign' fired on nothing" in problems_in(scratch, translations)


def test_failed_build_writes_nothing_and_reports_every_problem(scratch, translations, capsys):
    before = {p: p.read_bytes() for p in (scratch / "generated").rglob("*") if p.is_file()}
    (scratch / "src_template/oqupy/broken.py").write_text(
        "import numpy as np\n\n\ndef f(x: np.ndarray):\n    x[0] = 1.0\n    return np.random.rand(3)\n"
    )
    operators = scratch / "src_template/oqupy/operators.py"
    operators.write_text(operators.read_text() + "\n\nANSWER = 42\n")
    assert codegen_build.build(scratch, translations) == 1
    err = capsys.readouterr().err
    assert "src_template/oqupy/broken.py:5:5: [argument-write]" in err
    assert "src_template/oqupy/broken.py:6:12: [numpy-to-jax]" in err and "nothing written" in err
    after = {p: p.read_bytes() for p in (scratch / "generated").rglob("*") if p.is_file()}
    assert after == before


def test_build_then_check_round_trip(scratch, translations):
    operators = scratch / "src_template/oqupy/operators.py"
    operators.write_text(operators.read_text() + "\n\nANSWER = 42\n")
    assert codegen_build.build(scratch, translations) == 0
    assert "ANSWER = 42" in (scratch / "generated/oqupy_jax/src/oqupy_jax/operators.py").read_text()
    assert codegen_build.check(scratch) == 0


def test_quick_check_passes_on_the_committed_tree():
    assert codegen_build.problems(REPO) == []


def test_quick_check_finds_hand_edits_stale_orphan_and_missing_files(scratch):
    spoil(scratch)
    assert sorted(codegen_build.problems(scratch)) == SPOILED
    assert codegen_build.check(scratch) == 1


def test_quick_check_sees_a_change_of_the_code_generator(scratch, monkeypatch):
    monkeypatch.setattr(codegen_build, "codegen_fingerprint", lambda: "another-codegen")
    report = codegen_build.problems(scratch)
    assert report and all("is stale (the template or codegen changed)" in line for line in report)
    translated = [
        target
        for path in codegen_build.template_modules(scratch)
        for target in codegen_build._targets(scratch, path)
    ]
    assert len(report) == len(translated) > 30


def test_quick_check_sees_a_new_array_alias(scratch):
    types = scratch / "src_template/oqupy/_types.py"
    types.write_text(types.read_text() + "\nTensor = np.ndarray\n")
    report = codegen_build.problems(scratch)
    assert report and all("is stale" in line for line in report)
    assert len(report) == 2 * len(codegen_build.template_modules(scratch))


def test_jax_package_switches_to_64_bit_before_anything_else(fresh_tree):
    def code_lines(package):
        _, body = codegen_build.split_banner(
            fresh_tree.files[f"generated/{package}/src/{package}/__init__.py"]
        )
        code = body.split('"""', 2)[2]  # after the module docstring
        return [line for line in code.splitlines() if line.strip()]

    first, second = code_lines("oqupy_jax")[:2]
    assert first == "import jax" and second.startswith('jax.config.update("jax_enable_x64", True)')
    assert not any("jax" in line for line in code_lines("oqupy_numpy"))
    assert codegen_build.template_version(REPO) in fresh_tree.files["generated/oqupy_jax/pyproject.toml"]
