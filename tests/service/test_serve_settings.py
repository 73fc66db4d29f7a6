"""``factscout serve`` takes the check settings of ``factscout check`` (issue 19): the same
options with the same help and defaults, validated before anything loads, and used by the
served checker (recorded in every report's provenance)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from factscout.check import CheckSettings
from factscout.cli.main import app

runner = CliRunner()
SETTINGS = ["--stance", "--verdict", "--rerank", "--selector", "--min-stance-confidence", "--min-verdict-confidence"]


def _option_help(output: str, flag: str) -> str:
    """The help text of ``flag`` in a rich help screen, whitespace and box lines removed."""
    text = re.sub(r"[│╭╮╰╯─]", " ", output)
    found = re.search(f" {flag}(,--[a-z-]+)* ", text)  # an option with aliases lists them after a comma
    assert found, f"{flag} not in the help"
    start = found.start()
    following = re.search(r"\s--[a-z]", text[start + len(flag) + 2 :])
    chunk = text[start : start + len(flag) + 2 + (following.start() if following else len(text))]
    return " ".join(chunk.split())


def test_serve_has_checks_settings_with_the_same_help():
    serve = runner.invoke(app, ["serve", "--help"], env={"COLUMNS": "400"})
    check = runner.invoke(app, ["check", "--help"], env={"COLUMNS": "400"})
    assert serve.exit_code == 0 and check.exit_code == 0
    for flag in SETTINGS:
        assert _option_help(serve.output, flag) == _option_help(check.output, flag), flag


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--verdict", "nope"], "no verdict method 'nope'; known: classifier, learned, rule"),
        (["--selector", "bi"], "no selector 'bi'; known:"),
        (["--stance", "stanse"], "stance"),
        (["--min-confidence", "1.5"], "must be a number from 0 to 1"),
    ],
)
def test_bad_settings_stop_before_anything_loads(tmp_path, args, message):
    r = runner.invoke(app, ["serve", "--index", str(tmp_path / "missing"), *args])
    assert r.exit_code == 2 and message in " ".join(r.output.split()), r.output


def test_the_served_checker_uses_the_settings(served_index, monkeypatch):
    import uvicorn

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda web, **kw: served.update(app=web, **kw))
    args = ["serve", "--index", str(served_index), "--planner", "claim", "--verdict", "classifier"]
    r = runner.invoke(app, [*args, "--selector", "bio", "--stance", "cross", "--rerank", "--port", "8123"])
    assert r.exit_code == 0, r.output
    settings = served["app"].state.service.settings
    assert (settings.verdict, settings.selector, settings.stance, settings.rerank) == (
        "classifier",
        "bio",
        "cross",
        True,
    )
    assert served["port"] == 8123
    defaults = runner.invoke(app, ["serve", "--index", str(served_index), "--planner", "claim"])
    assert defaults.exit_code == 0, defaults.output
    settings = served["app"].state.service.settings
    default = CheckSettings()
    assert (settings.verdict, settings.selector, settings.stance, settings.rerank) == (
        default.verdict,
        default.selector,
        default.stance,
        default.rerank,
    )
