"""The stance pairs of the five judgment datasets and the consistency pairs, on the real files."""

from __future__ import annotations

import pytest

from factscout.records import Claim
from factscout.training.stance.data import LABEL_ID
from factscout.training.stance.pairs import consistency_pairs, content_words, evidence_stance_pairs, row_stance_pairs

pytestmark = pytest.mark.dataset


@pytest.fixture(scope="module")
def loaded():
    from factscout.datasets import data_root, load_dataset
    from factscout.errors import DataNotFound

    try:
        data_root()
    except DataNotFound as exc:
        pytest.skip(f"real data not available: {exc}")
    return load_dataset


def test_checkcovid_pairs_follow_the_evidence(loaded):
    from factscout.datasets import checkcovid

    ds = loaded("checkcovid", "train")
    sentences = checkcovid.load_abstract_sentences()
    claim = next(c for c in ds.claims if c.claim_id == "60b83923f9b9e03ea4d8e6be_0")  # REFUTE, sentence 1
    pairs = evidence_stance_pairs("checkcovid", [claim], sentences, other_source="checkcovid:other-nei")
    gold = [p for p in pairs if p.source == "checkcovid"]
    assert [(p.index, p.label) for p in gold] == [(1, LABEL_ID["refutes"])]
    others = [p for p in pairs if p.source == "checkcovid:other-nei"]
    assert len(others) == min(2, len(sentences["8vp57c1o"]) - 1) and all(
        p.label == LABEL_ID["not enough info"] and p.index != 1 for p in others
    )
    nei = next(c for c in ds.claims if c.meta["label"] == "NEI")
    assert {
        p.label for p in evidence_stance_pairs("checkcovid", [nei], sentences) if p.index in nei.meta["nei_sentences"]
    } == {LABEL_ID["not enough info"]}


def test_healthver_and_nli_rows(loaded):
    hv = loaded("healthver", "dev").claims[:3]
    pairs = row_stance_pairs("healthver", hv, "evidence")
    assert [p.sentence for p in pairs] == [" ".join(c.meta["evidence"].split())[:600] for c in hv]
    sick = [c for c in loaded("sick", "all").claims if c.claim_id in ("sick2ab", "sick2ba")]
    assert [p.label for p in row_stance_pairs("sick", sick, "premise")] == [
        LABEL_ID["refutes"],
        LABEL_ID["not enough info"],
    ]


def test_built_set_keeps_healthver_dev_part_and_citint_ids_apart():
    from factscout.datasets.healthver import dev_part_ids
    from factscout.training.stance.pairs import build_stance_pairs

    pairs = build_stance_pairs(sources=["healthver", "citint"], augment=False, consistency=0)
    hv = [p for p in pairs if p.origin == "healthver"]
    assert len(hv) == 1050 and not {p.claim_id for p in hv} & dev_part_ids()
    ci = [p for p in pairs if p.origin == "citint"]
    assert all(p.claim_id.startswith("ci") for p in ci)  # no collision with SciFact's numeric held-out ids
    assert len({p.claim_id for p in ci}) == 2138


def test_consistency_pairs():
    from factscout.training.stance.data import Pair

    texts = [
        "Aspirin lowers the risk of colorectal cancer.",
        "Vitamin D supplements prevent falls in older adults.",
        "Masks reduce transmission of influenza viruses.",
        "Statins raise muscle pain among elderly patients.",
    ]
    base = [Pair("x", f"c{i}", t, "some sentence", 0) for i, t in enumerate(texts)]
    out = consistency_pairs(base, limit=10, seed=0, max_overlap=0.0, partners=1)
    selfs = [p for p in out if p.source == "consistency:self"]
    assert sorted(p.claim for p in selfs) == sorted(texts) and all(p.sentence == p.claim for p in selfs)
    assert all(p.label == LABEL_ID["supports"] for p in selfs)
    unrelated = [p for p in out if p.source == "consistency:unrelated"]
    assert unrelated and all(
        p.label == LABEL_ID["not enough info"] and not content_words(p.claim) & content_words(p.sentence)
        for p in unrelated
    )
    assert consistency_pairs(base, limit=10, seed=0, max_overlap=0.0, partners=1) == out
    two = [p for p in consistency_pairs(base, limit=10, seed=0) if p.source == "consistency:unrelated"]
    assert len(two) == 2 * len(texts)  # two partners each by default (any overlap <= 0.1 allowed)
    assert consistency_pairs(base[:1]) == []
    assert Claim("a", texts[0]).text == texts[0]


def test_the_stance_pairs_command_defaults_are_the_builders():
    import inspect

    import typer.main

    from factscout.cli.train import app
    from factscout.training.stance.pairs import build_stance_pairs

    params = {p.name: p.default for p in typer.main.get_command(app).commands["stance-pairs"].params}
    builder = {k: p.default for k, p in inspect.signature(build_stance_pairs).parameters.items()}
    assert params["sources"] == ",".join(builder["sources"])
    for name in ("consistency", "unrelated_overlap", "unrelated_partners", "seed"):
        assert params[name] == builder[name], name
