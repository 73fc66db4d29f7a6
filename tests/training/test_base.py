"""The trainer registry: every ``factscout train`` sub-command is registered, and an unknown
name lists the known ones."""

import importlib

import pytest

from factscout.errors import UnknownName
from factscout.training.base import TRAINERS, Trainer

NAMES = [
    "checkworthy",
    "claim-match",
    "classifier",
    "dense",
    "qgen",
    "rerank",
    "rewrite",
    "rewrite-ranker",
    "selector",
    "stance",
    "stance-cross",
    "verdict-aggregator",
]


def test_registry_holds_every_trainer():
    assert TRAINERS.names() == NAMES
    for name in NAMES:
        trainer = TRAINERS[name]
        assert isinstance(trainer, Trainer) and trainer.name == name and trainer.summary
        importlib.import_module(trainer.module)


def test_unknown_trainer_lists_the_valid_names():
    with pytest.raises(UnknownName) as info:
        TRAINERS["stanse"]
    assert str(info.value) == f"no trainer 'stanse'; known: {', '.join(NAMES)}"
