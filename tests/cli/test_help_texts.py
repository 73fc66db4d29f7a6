"""Every ``--help`` shows each option's help whole: a "[default: ...]" in a help text is text, not
rich markup that rich would swallow (issue 48)."""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.testing import CliRunner

from factscout.cli.main import app

runner = CliRunner()
MARKUP_LIKE = re.compile(r"\[[a-z#/@][^\[\]]*\]")  # what rich would read as a tag


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out = [(path, group)]
    if isinstance(commands := getattr(group, "commands", None), dict):  # typer's own click's Group
        for name, command in sorted(commands.items()):
            out += _commands(command, (*path, name))
    return out


def test_help_texts_keep_their_bracketed_defaults():
    commands = _commands(typer.main.get_command(app))
    checked = 0
    for path, command in commands:
        wanted = [m for p in command.params for m in MARKUP_LIKE.findall(getattr(p, "help", None) or "")]
        if not wanted:
            continue
        shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "1000"})
        assert shown.exit_code == 0, (path, shown.output)
        text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", shown.output).split())
        for bracket in wanted:
            assert " ".join(bracket.split()) in text, f"factscout {' '.join(path)} --help lost {bracket!r}"
            checked += 1
    assert checked >= 4  # check's [default: tuned] settings at least


def test_check_help_names_each_setting_by_its_field():
    from dataclasses import fields

    from factscout.settings import CheckSettings

    for f in fields(CheckSettings):
        flags = f.metadata.get("flags") or (f"--{f.name.replace('_', '-')}",)
        assert flags[0].split("/")[0] == "--" + f.name.replace("_", "-"), f"{f.name} is offered as {flags[0]}"
