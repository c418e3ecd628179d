"""The benchmark runner itself works (it is run by hand, so it must not rot); no timing is asserted."""

import pytest

from benchmarks.__main__ import print_table, summarise
from benchmarks.worker import run


def test_worker_measures_a_scenario():
    # tempo_162 (40 steps, 0.5 s a run), not qutrit (16 s a run): the runner, not the scenario, is under test
    (record,) = run("oqupy_numpy", ["tempo_162"], repeats=2, profile=True, batch_size=4)
    assert record["scenario"] == "tempo_162" and record["package"] == "oqupy_numpy"
    assert len(record["times_s"]) == 2 and all(t > 0 for t in record["times_s"])
    assert len(record["cpu_s"]) == 2 and all(c > 0 for c in record["cpu_s"])
    assert record["steps"] == 40 and record["max_bond"] >= 2
    assert 0.0 < record["linalg_fraction"] <= 1.0
    assert record["peak_rss_mb"] > 10
    assert -1.0 <= record["final_sz"] <= 1.0


def test_summary_and_table_report_medians_ratios_and_extrapolation():
    records = [
        {
            "package": "oqupy_numpy",
            "scenario": "batch",
            "times_s": [3.0, 2.0],
            "peak_rss_mb": 100.0,
            "max_bond": 90,
            "linalg_fraction": 0.5,
        },
        {
            "package": "oqupy_jax",
            "scenario": "batch",
            "times_s": [9.0, 0.5],
            "cpu_s": [9.0, 0.8],
            "peak_rss_mb": 500.0,
            "max_bond": 90,
        },
        {
            "package": "oqupy",
            "scenario": "batch_loop",
            "times_s": [1.0, 1.0],
            "peak_rss_mb": 150.0,
            "max_bond": 140,
            "scale": 16.0,
        },
    ]
    summary = summarise(records)
    assert summary["batch"]["oqupy_numpy"]["warm_s"] == 2.0
    assert summary["batch"]["oqupy_jax"]["cold_s"] == 9.0
    assert summary["batch_loop"]["oqupy"]["warm_s"] == pytest.approx(16.0)
    assert summary["batch_loop"]["oqupy"]["extrapolated"]
    table = print_table(summary)
    assert "| batch | 2 | 9 | 0.5 | - | 0.25 |" in table
    assert "16 (extrapolated)" in table
    # the cores a warm run kept busy (CPU time over wall time): XLA may use more than the pinned one
    assert summary["batch"]["oqupy_jax"]["cores_busy"] == pytest.approx(1.6)
    assert "| -/1.6/- |" in table


def test_device_check_runs_with_tiny_sizes_and_writes_its_table(tmp_path):
    """``benchmarks.device --quick`` (the accelerator check's CPU rehearsal), in a subprocess: it pins threads
    before JAX starts. Every group runs; the table file holds one row per (item, package) measured."""
    import subprocess
    import sys

    table = tmp_path / "table.md"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.device",
            "--quick",
            "--items",
            "svd,batch,factor,hard",
            "--table",
            str(table),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    measured, goals = table.read_text().split("\n\n| row |")  # every item, then issue 31's goals
    rows = [line for line in measured.splitlines() if line.startswith("| ") and "item" not in line]
    items = {tuple(cell.strip() for cell in row.split("|")[1:3]) for row in rows}
    assert ("svd 8", "oqupy_numpy") in items and ("svd 16", "oqupy_jax") in items
    assert ("batch 4", "oqupy_numpy") in items and ("batch 16", "oqupy_jax") in items
    assert ("sketch 16/3", "oqupy_numpy") in items and ("svd x8 32", "oqupy_jax") in items
    assert ("pt_162_full", "oqupy_jax") in items and ("pt_162_full", "oqupy_numpy") not in items
    assert not any(item.startswith(("chi_sweep", "pt_large", "pt_162 ")) for item, _ in items)
    # the goals: a figure where its items ran (pt_162_full), "-" where they did not (no pt_large, no batch 4096)
    goal_rows = {row.split("|")[1].strip(): row.split("|")[2].strip() for row in goals.splitlines()[2:]}
    assert goal_rows["OQuPy #162's full PT [s]"] != "-"
    assert goal_rows["PT build at bond >= 200 / numpy on one CPU core"] == "-"
    assert goal_rows["batch of 4,096 Hamiltonians / numpy loop"] == "-"


def test_svd_drivers_runs_and_prints_every_shape():
    """``benchmarks.svd_drivers`` with one call per round: it pins one thread, times every driver on every shape
    it lists, and the shapes' SVDs are real ones (``gesdd`` of its low-rank matrix has the ranks it was built with)."""
    import subprocess
    import sys

    import numpy as np

    from benchmarks.svd_drivers import SHAPES, low_rank

    for rows, columns, rank in SHAPES:
        values = np.linalg.svd(low_rank(rows, columns, rank, np.random.default_rng(0)), compute_uv=False)
        assert np.sum(values > 1e-9) == rank
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.svd_drivers", "--rounds", "1", "--calls", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    assert "OPENBLAS_NUM_THREADS=1" in out
    assert sum(
        line.split("(")[0].strip() in {f"{r} x {c}" for r, c, _ in SHAPES} for line in out.splitlines()
    ) == len(SHAPES)
