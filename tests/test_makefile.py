"""`make demo` installs only what the demo needs: no Chromium, Ray or PostgreSQL (the tests' set-up)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_demo_target_needs_no_chromium_ray_or_postgres(tmp_path):
    venv = tmp_path / "venv"  # absent: make prints the whole install, from a fresh clone's point of view
    plan = subprocess.run(
        ["make", "-n", "demo", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "factscout demo" in plan and "torch==2.13.0" in plan
    for heavy in ("chromium", "playwright", "apt-get", "ray", "pg", "all,", "[all", "test]"):
        assert heavy not in plan, f"make demo would install {heavy!r}:\n{plan}"
    full = subprocess.run(["make", "-n", "setup", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "chromium" in full, "the test set-up still installs the browser"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_bench_runs_the_reproduction_specs_then_refills_the_pages(tmp_path):
    """`make bench` runs every spec of at most an hour (benchmarks/specs.toml), `make bench-headline` the
    longer ones, each then tools/update_readme.py; no hand-kept list of benchmark scripts."""
    venv = tmp_path / "venv"
    for target, selection in (("bench", "--max-minutes 60"), ("bench-headline", "--longer-than 60")):
        plan = subprocess.run(
            ["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        run = next(line for line in plan.splitlines() if "benchmarks/reproduce.py" in line)
        assert selection in run and run.index("reproduce.py") < run.index("tools/update_readme.py"), run
        assert "benchmarks/retrieval_quality.py" not in plan
    phony = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith(".PHONY:"))
    assert {"bench", "bench-headline"} <= set(phony.split()[1:])
