"""Model cards name each dataset's licence as its loader's SOURCE states it; metrics files keep
each trainer's JSON layout."""

import json

import pytest

from factscout.datasets import averitec, checkthat, covidfact, scifact
from factscout.errors import UnknownName
from factscout.training.cards import licence_of, write_card, write_metrics


@pytest.mark.parametrize(
    ("name", "module"),
    [("scifact", scifact), ("covidfact", covidfact), ("averitec", averitec), ("averitec_beir", averitec),
     ("checkthat2022", checkthat)],
)  # fmt: skip
def test_licence_comes_from_the_loaders_source(name, module):
    assert licence_of(name) == module.SOURCE.license


def test_unknown_dataset_lists_the_known_ones():
    with pytest.raises(UnknownName, match=r"known: .*scifact"):
        licence_of("scifacts")


def test_stance_card_names_the_licences_from_source():
    from factscout.training.stance.card import Run, model_card
    from factscout.verify.stance import MODEL_DIR

    metrics = json.loads((MODEL_DIR / "metrics.json").read_text())
    card = model_card(Run(**metrics))
    assert scifact.SOURCE.license in card and averitec.SOURCE.license in card


def test_writers(tmp_path):
    path = write_metrics(tmp_path / "a" / "metrics.json", {"x": [1, 2]}, indent=1)
    assert path.read_text() == '{\n "x": [\n  1,\n  2\n ]\n}\n'
    assert write_card(tmp_path / "CARD.md", "# card\n").read_text() == "# card\n"
