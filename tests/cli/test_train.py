"""``factscout train``: one sub-command per registered trainer, with each trainer's defaults."""

import dataclasses
import enum

import pytest
import typer
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.training.base import TRAINERS


def invoke(*args):
    return CliRunner().invoke(app, list(args))


def test_train_help_lists_every_trainer():
    r = invoke("train", "--help")
    assert r.exit_code == 0
    for name in TRAINERS:
        assert name in r.output


def test_unknown_trainer_lists_the_known_ones():
    r = invoke("train", "nope")
    assert r.exit_code == 2 and "no trainer 'nope'; known:" in r.output


@pytest.mark.parametrize("name", list(TRAINERS))
def test_every_sub_command_has_help(name):
    r = invoke("train", name, "--help")
    assert r.exit_code == 0, r.output
    assert "--out" in r.output


def _commands():
    import typer.main

    from factscout.cli.train import app as train_app

    return typer.main.get_command(train_app).commands


def test_every_trainer_names_its_config_dataclass():
    from factscout.cli.train import config_of

    without = [name for name in TRAINERS if config_of(name) is None]
    assert without == ["qgen"]  # qgen has no hyper-parameters: its options are two paths
    for name in TRAINERS:
        if name != "qgen":
            assert dataclasses.is_dataclass(config_of(name)), name


@pytest.mark.parametrize("name", list(TRAINERS))
def test_option_defaults_are_the_config_dataclass_defaults(name):
    """Each option bound to a config field shows that field's default (None for the options that
    only override it: their default depends on another option such as --quick)."""
    from factscout.cli.train import SPECS, config_of

    params = {p.name: p for p in _commands()[name].params}
    config = config_of(name)
    for opt in SPECS[name].options:
        if opt.field is None:
            if opt.name == "backbone":  # a folder to read the backbone from, not the config's backbone name
                continue
            assert config is None or opt.name not in {f.name for f in dataclasses.fields(config)}, (
                f"{name} --{opt.name}: a config field given a default of its own"
            )
            continue
        cls = opt.of or config
        expected = None if opt.override else getattr(cls(), opt.field)
        if opt.to_cli is not None and expected is not None:  # shown as the option's own type (e.g. "0.1,1")
            expected = opt.to_cli(expected)
        shown = params[opt.name].default
        shown = shown.value if isinstance(shown, enum.Enum) else shown
        assert shown == expected, f"factscout train {name} --{opt.name}: {shown!r} != {cls.__name__}.{opt.field}"


def test_a_changed_config_default_changes_the_option_default(monkeypatch):
    """The defaults are read from the dataclass, not copied: a new default shows in the command."""
    from factscout.cli.train_options import CommandSpec, add_command, setting
    from factscout.training.stance.head import HeadConfig

    @dataclasses.dataclass(frozen=True)
    class Changed(HeadConfig):
        epochs: int = 99

    app = typer.Typer()
    seen = []
    add_command(app, "x", CommandSpec((setting("epochs"),), lambda config: seen.append(config), "x"), Changed)
    app.command("y")(lambda: None)
    r = CliRunner().invoke(app, ["x", "--help"])
    assert "[default: 99]" in r.output
    assert CliRunner().invoke(app, ["x"]).exit_code == 0 and seen[0].epochs == 99
    assert CliRunner().invoke(app, ["x", "--epochs", "3"]).exit_code == 0 and seen[1] == Changed(epochs=3)


def test_stage_without_bundle_is_a_usage_error(tmp_path):
    r = invoke("train", "rerank", "--out", str(tmp_path), "--stage", "fit")
    assert r.exit_code == 2 and "--bundle" in r.output


def test_a_soup_of_seeds_that_are_not_integers_is_refused(tmp_path):
    r = invoke("train", "stance-cross", "--out", str(tmp_path), "--stage", "fit", "--soup", "13,x")
    assert r.exit_code == 2 and "--soup takes comma-separated integer seeds" in r.output
