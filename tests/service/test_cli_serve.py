"""``factscout serve``: a thin wrapper; bad arguments stop before any model loads."""

from __future__ import annotations

from typer.testing import CliRunner

from factscout.cli.main import app

runner = CliRunner()


def test_serve_help_and_a_missing_index(tmp_path):
    r = runner.invoke(app, ["serve", "--help"])
    assert r.exit_code == 0 and "--index" in r.output and "--port" in r.output and "--state" in r.output
    r = runner.invoke(app, ["serve", "--index", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "error" in r.output


def test_a_state_folder_that_cannot_be_written_stops_before_any_model_loads(served_index, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    r = runner.invoke(app, ["serve", "--index", str(served_index), "--state", str(blocker / "state")])
    assert r.exit_code != 0 and "choose a writable folder with --state" in " ".join(r.output.split())
