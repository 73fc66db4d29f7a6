"""Ranking a document's sentences: one tie rule (probability, then document order), --min-score
before --top, ranks over the whole document, batches in order."""

from __future__ import annotations

import pytest

from factscout.claims.checkworthy import CheckworthyScore
from factscout.claims.document import parse_document
from factscout.claims.ranking import rank_document, ranked_row, score_texts
from factscout.errors import InputError


class TableModel:
    """Check-worthiness read from a table of texts (a test double with the model's interface)."""

    threshold = 0.5
    labels = ("not check-worthy", "check-worthy")

    def __init__(self, table: dict[str, float]) -> None:
        self.table, self.calls = table, []

    def score(self, texts):
        self.calls.append(list(texts))
        return [CheckworthyScore(self.table[t], "?", {"check-worthy": self.table[t]}) for t in texts]

    def probabilities(self, texts):  # pragma: no cover - not used here
        raise NotImplementedError


DOC = parse_document("Alpha rose 3 %. Beta is nice. Gamma fell 5 %. He said it rose.")
MODEL = TableModel({"Alpha rose 3 %.": 0.7, "Beta is nice.": 0.1, "Gamma fell 5 %.": 0.9, "He said it rose.": 0.7})


def test_ranked_by_probability_ties_in_document_order():
    ranked = rank_document(DOC, MODEL)
    assert [(r.sentence.sentence_id, r.rank, r.checkworthy) for r in ranked] == [
        ("s3", 1, True),
        ("s1", 2, True),
        ("s4", 3, True),
        ("s2", 4, False),
    ]


def test_min_score_then_top_keep_the_document_ranks():
    assert [r.rank for r in rank_document(DOC, MODEL, min_score=0.7)] == [1, 2, 3]
    assert [r.sentence.sentence_id for r in rank_document(DOC, MODEL, min_score=0.7, top=2)] == ["s3", "s1"]
    assert rank_document(DOC, MODEL, min_score=0.95) == []
    with pytest.raises(InputError, match="top must be a positive"):
        rank_document(DOC, MODEL, top=0)
    with pytest.raises(InputError, match="between 0 and 1"):
        rank_document(DOC, MODEL, min_score=1.5)


def test_batches_keep_the_order_and_count_progress():
    model, seen = TableModel(MODEL.table), []
    texts = [s.text for s in DOC.sentences]
    scores = score_texts(model, texts, batch_size=3, progress=seen.append)
    assert [s.probability for s in scores] == [0.7, 0.1, 0.9, 0.7]
    assert model.calls == [texts[:3], texts[3:]] and seen == [3, 1]


def test_a_row_carries_the_span_and_the_claim_with_its_context():
    row = ranked_row(DOC, rank_document(DOC, MODEL)[2])
    assert row["id"] == "s4" and DOC.text[row["start"] : row["end"]] == "He said it rose."
    assert row["context"] == ["s2", "s3"] and row["claim"] == "Beta is nice. Gamma fell 5 %. He said it rose."
