"""The dense retriever's trainer: source-pure capped batches and its sub-command."""

import numpy as np
from typer.testing import CliRunner

from factscout.cli.train import app
from factscout.training.dense.trainer import TrainConfig, batches


def test_batches_keep_sources_apart_and_cap():
    pairs = [["scifact", f"c{i}", f"p{i}", [], [f"p{i}"]] for i in range(7)]
    pairs += [["covidfact", f"d{i}", f"q{i}", [], [f"q{i}"]] for i in range(5)]
    plan = batches(pairs, TrainConfig(batch_size=3, epochs=2), np.random.default_rng(0))
    assert sum(len(b) for b in plan) == 24
    assert all(len({pairs[i][0] for i in b}) == 1 for b in plan)
    capped = batches(pairs, TrainConfig(batch_size=3, epochs=2, max_train_pairs=4), np.random.default_rng(0))
    assert 4 <= sum(len(b) for b in capped) <= 6


def test_sub_command_help():
    r = CliRunner().invoke(app, ["dense", "--help"])
    assert r.exit_code == 0
    assert "--quick" in r.output and "--hard-negatives" in r.output
