"""``factscout serve``: a thin wrapper; bad arguments stop before any model loads."""

from __future__ import annotations

from typer.testing import CliRunner

from factscout.cli.main import app

runner = CliRunner()


def test_serve_help_and_a_missing_index(tmp_path):
    r = runner.invoke(app, ["serve", "--help"])
    assert r.exit_code == 0 and "--index" in r.output and "--port" in r.output
    r = runner.invoke(app, ["serve", "--index", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "error" in r.output
