"""HealthVer, Check-COVID, Citation-Integrity, ANLI and SICK loaders against the real files:
counts, labels, licences, the HealthVer dev part, and the SciFact-layout metadata the stance and
verdict code reads."""

from __future__ import annotations

import collections

import pytest

from factscout.training.cards import licence_of


def test_healthver_rows_labels_and_dev_part(loaded):
    from factscout.datasets.healthver import dev_part_ids, fit_part_ids

    ds = loaded("healthver", "dev")
    assert len(ds.claims) == 1917
    assert collections.Counter(c.meta["label"] for c in ds.claims) == {"Neutral": 993, "Supports": 533, "Refutes": 391}
    assert {c.meta["stance"] for c in ds.claims} == {"supports", "refutes", "not enough info"}
    first = ds.claims[0]
    assert first.claim_id == "hv224" and first.text == "The CORONAVIRUS is not of natural origin"
    assert first.meta["evidence"].startswith("Covid19 infection began in Wuhan")
    assert ds.qrels["hv224"] == {p.passage_id: 1 for p in ds.corpus if p.text == first.meta["evidence"]}
    dev, fit = dev_part_ids(), fit_part_ids()
    assert len(dev) == 867 and len(fit) == 1050 and not dev & fit
    topics = collections.defaultdict(set)
    for c in ds.claims:
        topics[c.meta["topic"]].add(c.claim_id in dev)
    assert all(len(sides) == 1 for sides in topics.values())  # a topic is wholly on one side
    assert "none stated" in licence_of("healthver")


def test_checkcovid_claims_pool_and_evidence(loaded):
    dev, train = loaded("checkcovid", "dev"), loaded("checkcovid", "train")
    assert len(dev.claims) == 207 and len(train.claims) == 1068 and len(dev.corpus) == 347
    assert collections.Counter(c.meta["label"] for c in dev.claims) == {"CONTRADICT": 70, "SUPPORT": 69, "NEI": 68}
    assert sum(c.meta["is_auth"] for c in dev.claims) == 47
    claim = next(c for c in train.claims if c.claim_id == "60b83923f9b9e03ea4d8e6be_0")
    assert claim.meta["published_label"] == "REFUTE" and claim.meta["label"] == "CONTRADICT"
    assert claim.meta["evidence"] == {"8vp57c1o": [{"sentences": [1], "label": "CONTRADICT"}]}
    nei = next(c for c in train.claims if c.meta["label"] == "NEI")
    assert nei.meta["evidence"] == {} and nei.meta["nei_sentences"]
    assert all(dev.qrels[c.claim_id] == {c.meta["cited_doc_ids"][0]: 1} for c in dev.claims)
    assert licence_of("checkcovid") == "MIT"


def test_citint_in_scifact_layout_without_citation_markers(loaded):
    train, dev = loaded("citint", "train"), loaded("citint", "dev")
    assert len(train.claims) == 2138 and len(dev.claims) == 316 and len(dev.corpus) == 3063
    assert collections.Counter(c.meta["label"] for c in dev.claims) == {"SUPPORT": 191, "CONTRADICT": 101, "NEI": 24}
    assert all("<|" not in c.text for c in train.claims + dev.claims)
    first = dev.claims[0]
    assert first.claim_id == "ci0"
    assert first.text.endswith("in cirrhotic patients.")
    assert first.meta["published_text"].endswith("patients[<|multi_cit|>].")
    assert "none stated" in licence_of("citint")


def test_citint_clean_claim():
    from factscout.datasets.citint import clean_claim

    assert clean_claim("Tumour growth [<|multi_cit|>,7].") == "Tumour growth."
    assert clean_claim("as shown before (Smith et al., <|other_cit|>), and") == "as shown before, and"
    assert clean_claim("no marker here.") == "no marker here."


def test_anli_rounds(loaded):
    ds = loaded("anli", "dev")
    assert len(ds.claims) == 3198
    assert collections.Counter(c.meta["round"] for c in ds.claims) == {"r1": 1000, "r2": 1000, "r3": 1198}
    assert collections.Counter(c.meta["stance"] for c in ds.claims) == {
        "supports": 1070,
        "refutes": 1062,
        "not enough info": 1066,
    }
    assert ds.claims[0].meta["premise"].startswith("Linguistics is the scientific study of language")
    assert len(loaded("anli", "r3").claims) == 1198
    assert licence_of("anli") == "CC BY-NC 4.0"


def test_sick_both_directions(loaded):
    ds = loaded("sick", "all")
    assert len(ds.claims) == 2 * 9840
    by_id = {c.claim_id: c for c in ds.claims}
    ab, ba = by_id["sick2ab"], by_id["sick2ba"]
    assert ab.text.startswith("A group of kids is playing in a yard") and ab.meta["label"] == "contradicts"
    assert ba.meta["premise"] == ab.text and ba.meta["label"] == "neutral"
    assert ab.meta["stance"] == "refutes" and ba.meta["stance"] == "not enough info"
    assert len(loaded("sick", "train").claims) == 2 * 4439
    assert licence_of("sick") == "CC BY-NC-SA 3.0"


@pytest.mark.parametrize("name", ["healthver", "checkcovid", "citint", "anli", "sick"])
def test_listed_in_the_catalogue(name):
    from factscout.datasets.catalogue import entry

    e = entry(name)
    assert e.url.startswith("https://raw.githubusercontent.com/") and e.downloads_as == name
