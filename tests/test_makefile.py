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
