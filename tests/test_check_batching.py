"""check scores the (claim, sentence) pairs of a whole batch in one stance call, with the same
reports as claim by claim."""

import hashlib

import numpy as np
import pytest

from factscout.check import Checker, CheckSettings
from factscout.datasets import load_dataset
from factscout.retrieve import build_retriever
from factscout.verify.stance import PairwiseStance


class Vectors:
    model_name = "fake"

    def encode(self, texts):
        rows = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "little")
            rows.append(np.random.default_rng(seed).normal(size=16))
        return np.array(rows, dtype=np.float32).reshape(len(texts), 16)


class CountingPairs(PairwiseStance):
    """Probabilities from the texts' hash; records how many pairs each call scored."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def predict_pairs(self, claims, sentences):
        self.calls.append(len(claims))
        out = []
        for c, s in zip(claims, sentences, strict=True):
            seed = int.from_bytes(hashlib.sha256(f"{c}\0{s}".encode()).digest()[:4], "little")
            p = np.random.default_rng(seed).random(3) + 0.1
            out.append(p / p.sum())
        return np.array(out, dtype=np.float32).reshape(-1, 3)


@pytest.fixture(scope="module")
def setup():
    mini = load_dataset("scifact_mini")
    return mini, build_retriever(mini.corpus, "bm25")


def test_one_stance_call_per_batch_and_the_same_reports(setup):
    mini, retriever = setup
    settings = CheckSettings(planner="claim", passages=3, threshold=0.0, stance="head")
    claims = mini.claims[:5]
    batched = CountingPairs()
    checker = Checker(retriever, settings, stance=batched, encoder=Vectors())
    reports = checker.check_many(claims, batch_size=5)
    assert len(batched.calls) == 1 and batched.calls[0] > len(claims), "one call for the whole batch"
    one_by_one = CountingPairs()
    single = Checker(retriever, settings, stance=one_by_one, encoder=Vectors())
    found = single.retrieve(claims)
    alone = [single.judge([c], [f])[0] for c, f in zip(claims, found, strict=True)]
    assert len(one_by_one.calls) == sum(1 for r in alone if any(e.sentences for e in r.evidence))
    assert [r.to_dict() for r in reports] == [r.to_dict() for r in alone]
    assert any(e.sentences for r in reports for e in r.evidence)
