"""What a new user sees must not come out wrong: the demo's three example claims and the claims a
first user tries, checked with ``check``'s default settings (``Checker.from_index``) against the
demo's corpus (SciFact's 5,183 abstracts; a BM25 index here, since the demo's hybrid index with
sentence vectors takes minutes to build), and a claim paired with itself.

The verdicts below are the shipped stance model's (``verify/models/stance_cross_minilm.npz``, its
count rule and ``--min-confidence`` default), each with why. Three are wrong today and are strict
xfails naming the sentences that make them wrong: a retrained model that gets one right fails its
test until this file records the new verdict.
"""

from __future__ import annotations

import pytest

from factscout.records import REFUTED, SUPPORTED

pytestmark = [pytest.mark.dataset, pytest.mark.encoder]

DEMO_CLAIMS = {
    # the claims `make demo` checks (every len/3-th SciFact train claim with evidence)
    "2": "1 in 5 million in UK have abnormal PrP positivity.",
    "488": "HAND2 methylation is a key step in early endometrial carcinogenesis.",
    "953": "Pioglitazone use is significantly associated with an increased risk of pancreatic cancer.",
}
ASPIRIN = "Regular aspirin use lowers the risk of colorectal cancer"
VITAMIN_D = "Vitamin D supplementation prevents falls in older adults"


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    from factscout.check import Checker, CheckSettings
    from factscout.datasets import load_dataset
    from factscout.retrieve import build_index

    folder = tmp_path_factory.mktemp("demo") / "scifact-bm25"
    build_index(load_dataset("scifact", "train").corpus, folder, "bm25")
    return Checker.from_index(folder, CheckSettings())


# Known wrong with the shipped model (measured on the BM25 index below; issue 46 left them open):
# strict xfails, so a model that gets one right makes its test fail until this file records it.
WRONG_OUTCOME = (
    "the abstract on pioglitazone and bladder cancer ('Ever use of pioglitazone was not associated with bladder "
    "cancer risk', P(refutes) 1.00) is read as refuting a claim about pancreatic cancer: 4 supporting against 5 "
    "refuting sentences, so refuted, where SciFact's gold is SUPPORT"
)
REDUCED_RISK_AS_REFUTING = (
    "sentences that report a lower risk ('Observational studies report reduced colorectal cancer in regular "
    "aspirin consumers', P(refutes) 0.46) count as refuting at the rule's 0.34: 4 supporting against 6 refuting"
)
OFF_TOPIC_AS_REFUTING = (
    "the abstracts read are about vitamin D intake and status, not falls, yet 10 of their sentences are called "
    "refuting (up to P 0.99): 1 supporting against 10 refuting, so refuted"
)


@pytest.mark.parametrize(
    "claim_id",
    [
        "2",
        "488",
        pytest.param("953", marks=pytest.mark.xfail(strict=True, reason=WRONG_OUTCOME)),
    ],
)
def test_the_demo_claims_are_not_called_against_their_gold(checker, claim_id):
    from factscout.datasets import load_dataset

    gold = next(c.meta["label"] for c in load_dataset("scifact", "train").claims if c.claim_id == claim_id)
    opposite = {"SUPPORT": REFUTED, "CONTRADICT": SUPPORTED}[gold]
    report = checker.check(DEMO_CLAIMS[claim_id])
    assert report.verdict.label != opposite, report.verdict


@pytest.mark.xfail(strict=True, reason=REDUCED_RISK_AS_REFUTING)
def test_aspirin_and_colorectal_cancer_is_not_refuted(checker):
    # SciFact's abstracts on aspirin and colorectal cancer report a lower risk (or none in subgroups);
    # none says aspirin raises it
    report = checker.check(ASPIRIN)
    assert report.verdict.label != REFUTED, report.verdict


@pytest.mark.xfail(strict=True, reason=OFF_TOPIC_AS_REFUTING)
def test_vitamin_d_and_falls_is_not_refuted(checker):
    # the one sentence of the abstracts read that mentions falls says low vitamin D contributes to
    # "risk of fractures and falls" (it leans towards the claim, and the model calls it refuting,
    # P 0.44); no sentence says supplementation fails to prevent falls
    report = checker.check(VITAMIN_D)
    assert report.verdict.label != REFUTED, report.verdict


def test_a_claim_paired_with_itself_supports_it(checker):
    claims = [ASPIRIN, VITAMIN_D, *DEMO_CLAIMS.values()]
    probs = checker.stance.predict_pairs(claims, claims)
    assert [int(p.argmax()) for p in probs] == [0] * len(claims)  # STANCE_LABELS[0] == "supports"
