"""``factscout train``: one sub-command per registered trainer, with each trainer's defaults."""

import pytest
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


def test_option_defaults_are_the_trainers_defaults():
    from factscout.cli.train import stance
    from factscout.cli.train_staged import stance_cross
    from factscout.training.stance.cross import CrossConfig
    from factscout.training.stance.head import HeadConfig

    def defaults(fn):
        import inspect

        return {k: p.default for k, p in inspect.signature(fn).parameters.items()}

    head, cross = defaults(stance), defaults(stance_cross)
    assert (head["hidden"], head["epochs"], head["lr"], head["seed"]) == (
        HeadConfig().hidden, HeadConfig().epochs, HeadConfig().lr, HeadConfig().seed,
    )  # fmt: skip
    c = CrossConfig()
    assert (cross["epochs"], cross["lr"], cross["max_length"], cross["covidfact"], cross["seed"]) == (
        c.epochs, c.lr, c.max_length, c.covidfact, c.seed,
    )  # fmt: skip


def test_stage_without_bundle_is_a_usage_error(tmp_path):
    r = invoke("train", "rerank", "--out", str(tmp_path), "--stage", "fit")
    assert r.exit_code == 2 and "--bundle" in r.output


def test_a_soup_of_seeds_that_are_not_integers_is_refused(tmp_path):
    r = invoke("train", "stance-cross", "--out", str(tmp_path), "--stage", "fit", "--soup", "13,x")
    assert r.exit_code == 2 and "--soup takes comma-separated integer seeds" in r.output
