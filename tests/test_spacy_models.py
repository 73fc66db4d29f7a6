"""One spaCy loader: pipelines load once per (model, disabled components), fall back in order,
and a missing model or spaCy names what to install."""

import sys
import types

import pytest

from factscout import spacy_models
from factscout.errors import MissingDependency


@pytest.fixture
def fake_spacy(monkeypatch):
    calls = []

    def load(name, disable=()):
        calls.append((name, tuple(disable)))
        if name.startswith("missing"):
            raise OSError(f"[E050] Can't find model '{name}'")
        return f"nlp:{name}"

    monkeypatch.setitem(sys.modules, "spacy", types.SimpleNamespace(load=load))
    monkeypatch.setattr(spacy_models, "_LOADED", {})
    return calls


def test_loads_once_per_model_and_disabled_components(fake_spacy):
    assert spacy_models.load_spacy("m", needs="x") == "nlp:m"
    assert spacy_models.load_spacy("m", needs="x") == "nlp:m"
    assert spacy_models.load_spacy("m", needs="x", disable=("ner",)) == "nlp:m"
    assert fake_spacy == [("m", ()), ("m", ("ner",))]


def test_falls_back_in_order(fake_spacy, monkeypatch):
    assert spacy_models.load_spacy("missing-a", needs="x", fallbacks=("missing-b", "c")) == "nlp:c"
    monkeypatch.setattr(spacy_models, "_LOADED", {})
    with pytest.raises(MissingDependency, match="spaCy model 'missing-a' is not installed: pip install"):
        spacy_models.load_spacy("missing-a", needs="x", fallbacks=("missing-b",))


def test_missing_spacy_says_who_needs_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)
    monkeypatch.setattr(spacy_models, "_LOADED", {})
    with pytest.raises(MissingDependency, match=r"parsing needs spaCy: pip install 'factscout\[nlp\]'"):
        spacy_models.load_spacy("m", needs="parsing needs spaCy")
