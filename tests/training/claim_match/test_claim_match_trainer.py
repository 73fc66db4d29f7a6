"""``factscout train claim-match`` end to end on a small synthetic CheckThat-like set (a hashed
bag-of-words encoder, no model files): it fits on train, chooses on dev, writes the model, its
metrics and card, and the written model ranks the dev-test tweets' fact-checks first."""

from __future__ import annotations

import datetime as dt
import json

from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.datasets.base import Dataset
from factscout.factchecks import FactCheck, FactCheckMemory, MatchModel
from factscout.records import Claim

from ...factchecks.conftest import WordEncoder

TOPICS = [
    "vaccines contain tracking microchips",
    "a shark swims on a flooded highway",
    "the great wall is visible from the moon",
    "drinking bleach cures the virus",
    "the president banned all flights from europe",
    "a comet will hit the earth next week",
    "windmills cause cancer in nearby towns",
    "the city will ban gas stoves next year",
    "a celebrity was arrested at the airport",
    "the moon landing was filmed in a studio",
    "eating garlic prevents the flu",
    "five g towers spread the disease",
]
RECORDS = [
    FactCheck(f"vclaim-{i}", f"Claim: {t}.", "snopes.com", date=dt.date(2020, 1, 1) + dt.timedelta(days=30 * i),
              sources=("checkthat2022",), licenses=("lab terms",))
    for i, t in enumerate(TOPICS)
]  # fmt: skip


def _split(name: str, _root: object) -> Dataset:
    offset = {"train": 0, "dev": 1, "dev-test": 2}[name]
    claims, qrels = [], {}
    for i, topic in enumerate(TOPICS):
        words = topic.split()
        tweet = " ".join(words[offset:] + words[:offset]) + f" #{name} (@someone)"
        day = RECORDS[i].date - dt.timedelta(days=2)  # type: ignore[operator]
        claims.append(Claim(f"{name}-{i}", f"{tweet} — Some One (@someone) {day:%B} {day.day}, {day.year}"))
        qrels[f"{name}-{i}"] = {RECORDS[i].fact_check_id: 1}
    return Dataset("checkthat2022", name, tuple(claims), qrels=qrels)


def test_train_claim_match_on_a_small_set(monkeypatch, tmp_path):
    monkeypatch.setattr("factscout.factchecks.memory._encoder", lambda name: WordEncoder())
    monkeypatch.setattr("factscout.training.claim_match.train.load_source", lambda name, root: list(RECORDS))
    monkeypatch.setattr("factscout.training.claim_match.train._split", _split)
    out = tmp_path / "model"
    r = CliRunner().invoke(app, ["train", "claim-match", "--out", str(out), "--cs", "1,10", "--depth", "5"])
    assert r.exit_code == 0, r.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["dev"]) == {"fallback", "logistic C=1", "logistic C=10"} and metrics["chosen"] in metrics["dev"]
    assert metrics["dev_test"]["AP@5"] > 0.8 and 0.0 < metrics["threshold"] <= 1.0
    assert metrics["sha256"] in (out / "MODEL_CARD.md").read_text()
    model = MatchModel.load(out / "claim_match.json")
    memory = FactCheckMemory.build(RECORDS, model=model, encoder=WordEncoder())
    tweet = _split("dev-test", None).claims[3].text
    assert memory.search(tweet, 1)[0].record.fact_check_id == "vclaim-3"


def test_bad_strengths_are_named(tmp_path):
    r = CliRunner().invoke(app, ["train", "claim-match", "--out", str(tmp_path), "--cs", "1,ten"])
    assert r.exit_code == 2 and "--cs must be comma-separated numbers" in r.output
