"""The trained query generator: learning from tiny pairs, exclusion of a claim's own pair,
persistence, the shipped model, and cross-fitting."""

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from factscout.errors import DataNotFound, InputError
from factscout.plan import make_planner, qgen
from factscout.plan.qgen import Logistic, QgenPlanner, QueryGenerator, TrainingPair
from factscout.records import Claim
from factscout.retrieve import build_retriever
from factscout.training.qgen.trainer import EvidencePool, cross_fitted_plans

pytest.importorskip("spacy")

PAIRS = [
    TrainingPair("t:1", "Kenya's unemployment rate rose to 20% in 2019.", ("What was the unemployment rate in Kenya in 2019?", "Did unemployment in Kenya rise in 2019?")),
    TrainingPair("t:2", "Nigeria's inflation rate hit 15% in 2020.", ("What was the inflation rate in Nigeria in 2020?", "Did inflation in Nigeria reach 15%?")),
    TrainingPair("t:3", "Uganda's poverty rate fell to 30% in 2016.", ("What was the poverty rate in Uganda in 2016?", "Did poverty in Uganda fall?")),
    TrainingPair("t:4", "Joe Biden banned fracking in Texas.", ("Did Joe Biden ban fracking?", "Is fracking banned in Texas?")),
    TrainingPair("t:5", "Donald Trump closed the border with Mexico in 2019.", ("Did Donald Trump close the border with Mexico?", "Was the Mexico border closed in 2019?")),
    TrainingPair("t:6", "The WHO declared the coronavirus a pandemic in March 2020.", ("When did the WHO declare the coronavirus a pandemic?",)),
    TrainingPair("t:7", "Bill Gates wants to put microchips in vaccines.", ("Does Bill Gates want microchips in vaccines?", "Do vaccines contain microchips?")),
    TrainingPair("t:8", "South Africa's murder rate doubled between 2012 and 2018.", ("What was the murder rate in South Africa in 2012?", "What was the murder rate in South Africa in 2018?")),
    TrainingPair("t:9", "Cyril Ramaphosa said 40% of graduates are unemployed.", ("Did Cyril Ramaphosa say 40% of graduates are unemployed?", "What share of graduates are unemployed in South Africa?")),
    TrainingPair("t:10", "Boris Johnson cut police funding by 20% in London.", ("Did Boris Johnson cut police funding?", "By how much was police funding cut in London?")),
]  # fmt: skip


@pytest.fixture(scope="module")
def generator():
    return QueryGenerator(neighbours=3).fit(PAIRS)


def test_fit_learns_both_models(generator):
    assert generator.token_model is not None and generator.candidate_model is not None
    assert len(generator.token_model.weights) == len(qgen.TOKEN_FEATURES)
    assert len(generator.candidate_model.weights) == len(qgen.CANDIDATE_FEATURES)
    assert generator.label_source == "questions"
    assert 0 < generator.metrics["token_positive_rate"] < 1


def test_generated_queries_use_the_new_claims_entity_not_the_neighbours(generator):
    claim = "Ghana's unemployment rate rose to 12% in 2018."
    neighbours = [p.pair_id for p, _ in generator.neighbours_of(claim)]
    assert neighbours[0] == "t:1"  # the Kenya claim is the nearest training claim
    out = generator.generate(claim, n=5)
    assert out and len(out) <= 5
    assert any("Ghana" in g.text for g in out)
    assert not any(re.search(r"Kenya|Nigeria|Uganda|2019", g.text) for g in out)
    assert all(0.0 <= g.score <= 1.0 for g in out)
    assert len({g.text.lower() for g in out}) == len(out)


def test_neighbours_never_include_the_claim_itself_or_excluded_ids(generator):
    own = PAIRS[0].claim
    assert "t:1" not in [p.pair_id for p, _ in generator.neighbours_of(own)]
    # the same claim with other case and punctuation is still itself
    assert "t:1" not in [p.pair_id for p, _ in generator.neighbours_of(own.upper().rstrip("."))]
    near = "Kenya's unemployment rate rose to 25% in 2019."
    assert generator.neighbours_of(near)[0][0].pair_id == "t:1"
    assert "t:1" not in [p.pair_id for p, _ in generator.neighbours_of(near, exclude_ids=["t:1"])]
    assert "t:1" not in [p.pair_id for p, _ in generator.neighbours_of(near, exclude_ids=["1"])]  # bare id


def test_planner_excludes_the_claims_own_pair_by_id(generator, monkeypatch):
    seen = []
    original = generator._excluded

    def spy(text, exclude_ids):
        out = original(text, exclude_ids)
        seen.append(out)
        return out

    monkeypatch.setattr(generator, "_excluded", spy)
    planner = QgenPlanner(generator=generator, exclude_claim_ids=["t:2"])
    plan = planner.plan(Claim("1", "Kenya's unemployment rate rose to 25% in 2019."))
    assert seen and {0, 1} <= seen[-1]  # own id "1" -> pair t:1, and t:2 as asked
    assert plan[0].query_id == "1" and plan[0].origin == "claim"
    assert all(q.origin == "qgen" for q in plan[1:]) and 2 <= len(plan) <= 8


def test_planner_plan_many_and_determinism(generator):
    planner = QgenPlanner(generator=generator, max_queries=4)
    claims = [
        Claim("a", "Ghana's unemployment rate rose to 12% in 2018."),
        Claim("b", "Kamala Harris banned guns in California."),
    ]
    plans = planner.plan_many(claims)
    assert plans == [planner.plan(c) for c in claims]
    assert all(1 <= len(p) <= 4 for p in plans)
    again = QueryGenerator(neighbours=3).fit(PAIRS)
    assert np.allclose(again.candidate_model.weights, generator.candidate_model.weights)
    assert QgenPlanner(generator=again, max_queries=4).plan_many(claims) == plans


def test_save_load_round_trip(generator, tmp_path):
    path = generator.save(tmp_path / "m.json")
    data = json.loads(path.read_text())
    assert data["format"] == qgen.FORMAT and len(data["pairs"]) == len(PAIRS)  # no sources: pairs saved
    loaded = QueryGenerator.load(path)
    claim = "Ghana's unemployment rate rose to 12% in 2018."
    assert loaded.generate(claim) == generator.generate(claim)
    assert QgenPlanner(path).plan(Claim("g", claim)) == QgenPlanner(generator=generator).plan(Claim("g", claim))


def test_load_errors(tmp_path, generator):
    with pytest.raises(DataNotFound, match="no qgen model"):
        QueryGenerator.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="not a qgen model"):
        QueryGenerator.load(tmp_path / "bad.json")
    data = generator.to_dict()
    data["candidate_features"] = ["other"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="retrain"):
        QueryGenerator.load(tmp_path / "old.json", pairs=PAIRS)


def test_fit_and_generate_errors():
    with pytest.raises(InputError, match="at least 2"):
        QueryGenerator().fit(PAIRS[:1])
    with pytest.raises(InputError, match="not fitted"):
        QueryGenerator().generate("A claim.")
    with pytest.raises(InputError, match="max_queries"):
        QgenPlanner(max_queries=0)


def test_evidence_labels_reward_finding_what_the_claim_misses(tiny_corpus):
    pool = EvidencePool(build_retriever(tiny_corpus, "bm25"), {"t:1": {"p07": 1}}, k=1)
    assert pool.covers("t:1") and not pool.covers("t:2")
    [labels] = pool.labels([("t:1", "vaccine trial report", ["unemployment fell", "vaccine safety"])])
    # the claim's top 1 is a vaccine passage; "unemployment fell" finds p07 (recall 1, all of it new)
    assert labels == [1.0, 0.0]


def test_fit_with_evidence_labels_candidates_by_retrieval(tiny_corpus):
    qrels = {"t:1": {"p07": 1}, "t:2": {"p06": 1}, "t:3": {"p11": 1}, "t:4": {"p01": 1}}
    pool = EvidencePool(build_retriever(tiny_corpus, "bm25"), qrels, k=3)
    gen = QueryGenerator(neighbours=3).fit(PAIRS, pool)
    assert gen.label_source == "evidence" and gen.metrics["candidate_claims"] == 4


def test_logistic_regression_learns_a_separable_rule():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = Logistic().fit(x, np.array([0, 0, 1, 1]), l2=0.01)
    p = model.predict(x)
    assert p[0] < 0.5 < p[3] and np.all(np.diff(p) > 0)
    assert np.allclose(Logistic.from_dict(model.to_dict()).predict(x), p, atol=1e-4)


def test_cross_fitting_never_trains_on_a_held_out_claim(monkeypatch):
    claims = [Claim(p.claim_id, p.claim, None, {"questions": list(p.questions)}) for p in PAIRS]
    fitted_on = []
    original = QueryGenerator.fit

    def spy(self, pairs, evidence=None):
        fitted_on.append({p.pair_id for p in pairs})
        return original(self, pairs, evidence)

    monkeypatch.setattr(QueryGenerator, "fit", spy)
    queries = cross_fitted_plans(claims, folds=2, extra_pairs=PAIRS[:2], dataset="t", evidence=None, neighbours=2)
    assert {q.claim_id for q in queries} == {c.claim_id for c in claims}
    assert len(fitted_on) == 2
    planned = {}
    for q in queries:
        planned.setdefault(q.claim_id, []).append(q)
    assert all(qs[0].origin == "claim" for qs in planned.values())
    # each fit saw half of the claims; together they cover both halves, never one claim twice
    own = [ids - {"t:1", "t:2"} for ids in fitted_on]
    assert not own[0] & own[1] and len(own[0] | own[1]) >= len(PAIRS) - 2
    # extra pairs whose text is a held-out claim are left out too
    assert all(not ({"t:1", "t:2"} <= ids) for ids in fitted_on)


def test_registered_as_qgen(generator):
    planner = make_planner("qgen", generator=generator)
    assert isinstance(planner, QgenPlanner) and planner.name == "qgen"


# -- the shipped model -----------------------------------------------------------------------


def _data_or_skip():
    from factscout.datasets import data_root

    try:
        data_root()
    except DataNotFound:
        pytest.skip("the shared data folder is not here")


def test_shipped_model_matches_its_model_card():
    path = qgen.DEFAULT_MODEL_PATH
    card = (path.parent / "MODEL_CARD.md").read_text()
    assert hashlib.sha256(path.read_bytes()).hexdigest() in card
    assert path.stat().st_size < 2_000_000
    data = json.loads(path.read_text())
    assert data["training"]["sources"] == [list(s) for s in qgen.DEFAULT_SOURCES]
    assert "pairs" not in data  # rebuilt from the datasets, never shipped


def test_shipped_model_loads_offline_and_plans():
    _data_or_skip()
    planner = QgenPlanner()
    plan = planner.plan(Claim("x", "Kenya has the highest unemployment rate in East Africa, up 20% since 2015."))
    assert plan[0].origin == "claim" and 2 <= len(plan) <= 8
    assert all(q.origin == "qgen" for q in plan[1:])
    assert any("Kenya" in q.text for q in plan[1:])
    assert planner.generator.label_source == "evidence"
    assert len(planner.generator.pairs) > 5000


def test_default_pairs_say_where_the_data_is_missing(tmp_path):
    with pytest.raises(DataNotFound, match="qgen"):
        qgen.default_pairs(root=Path(tmp_path))
