import dataclasses

import pytest

from factscout.errors import InputError
from factscout.records import Passage
from factscout.text.sentences import sentences_of
from factscout.training.rewrite.pseudo_claims import (
    PseudoClaimSet,
    claim_like_reason,
    cut_span,
    inverse_cloze,
    is_claim_like,
)

TOPICS = [
    "aspirin", "statins", "metformin", "insulin", "caffeine", "ibuprofen", "lithium", "warfarin",
    "heparin", "vitamin", "zinc", "melatonin", "penicillin", "morphine", "cortisol", "dopamine",
    "serotonin", "ketamine", "nicotine", "alcohol", "folate", "iron", "calcium", "magnesium",
]  # fmt: skip


def make_corpus(n: int = 24) -> list[Passage]:
    """Passages of two claim-like sentences and one that is not ("This ..."), all distinct."""
    out = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        text = (
            f"Daily {topic} intake lowers the risk of heart failure in adults over sixty years old. "
            f"This effect of {topic} was seen in a cohort of {i + 100} patients. "
            f"Patients taking {topic} reported fewer hospital visits than the control group did."
        )
        out.append(Passage(f"p{i:02d}", f"d{i:02d}", f"Study {i}", text))
    return out


def test_one_claim_per_chosen_passage_with_qrels_and_training_copy():
    corpus = make_corpus()
    result = inverse_cloze(corpus, 5, seed=3)
    assert isinstance(result, PseudoClaimSet)
    assert len(result.claims) == 5 and result.requested == 5 and result.shortfall == 0
    assert result.eligible == len(corpus) and result.eligible_share == 1.0
    by_id = {p.passage_id: p for p in corpus}
    training = {p.passage_id: p for p in result.corpus}
    assert [p.passage_id for p in result.corpus] == [p.passage_id for p in corpus]  # every passage, same order
    chosen = set()
    for claim in result.claims:
        source = claim.meta["passage_id"]
        chosen.add(source)
        assert claim.claim_id == f"ict:{source}"
        assert claim.meta["source"] == "ict" and claim.date is None
        assert result.qrels[claim.claim_id] == {source: 1}
        start, end = claim.meta["span"]
        original = by_id[source].text
        assert original[start:end] == claim.text
        assert not claim.text.startswith("This")  # the non-claim-like sentence is never held out
        # the held-out sentence is gone, the others stay word for word
        kept = training[source]
        assert claim.text not in kept.text
        assert sentences_of(kept.text) == [s for s in sentences_of(original) if s != claim.text]
        assert dataclasses.replace(kept, text=original) == by_id[source]  # title, ids, dates kept
    assert len(chosen) == 5
    assert set(result.qrels) == {c.claim_id for c in result.claims}
    for pid, passage in training.items():
        if pid not in chosen:
            assert passage == by_id[pid]


def test_exact_training_text():
    text = "Statins lower LDL cholesterol in most adults with diabetes. This is well known.\nIt was confirmed."
    result = inverse_cloze([Passage("a", "a", "", text)], 1)
    # no other sentence of >= 5 words would stay ("This is well known." has 4): not eligible
    assert result.claims == [] and result.eligible == 0 and result.corpus[0].text == text
    text = "Statins lower LDL cholesterol in most adults with diabetes.  This was shown in five trials.\nIt held."
    result = inverse_cloze([Passage("a", "a", "", text)], 1)
    assert [c.text for c in result.claims] == ["Statins lower LDL cholesterol in most adults with diabetes."]
    assert result.corpus[0].text == "This was shown in five trials.\nIt held."
    assert result.eligible == 1


def test_held_out_sentence_never_remains_over_many_seeds():
    corpus = make_corpus()
    for seed in range(30):
        result = inverse_cloze(corpus, 10, seed=seed)
        training = {p.passage_id: p.text for p in result.corpus}
        for claim in result.claims:
            assert claim.text not in training[claim.meta["passage_id"]]
            assert not any(claim.text in text for text in training.values())


def test_deterministic_by_seed_and_seeds_differ():
    corpus = make_corpus()
    a, b = inverse_cloze(corpus, 6, seed=7), inverse_cloze(corpus, 6, seed=7)
    assert [(c.claim_id, c.text) for c in a.claims] == [(c.claim_id, c.text) for c in b.claims]
    assert a.corpus == b.corpus and a.qrels == b.qrels
    c = inverse_cloze(corpus, 6, seed=8)
    assert [x.claim_id for x in a.claims] != [x.claim_id for x in c.claims]


def test_sentence_choice_within_a_passage_is_seeded():
    corpus = make_corpus(1)
    picks = {inverse_cloze(corpus, 1, seed=s).claims[0].text.split()[0] for s in range(20)}
    assert picks == {"Daily", "Patients"}  # both claim-like sentences get chosen, never "This ..."


def test_n_larger_than_eligible_returns_fewer_and_says_so():
    corpus = [*make_corpus(4), Passage("short", "short", "", "Too short. Really.")]
    result = inverse_cloze(corpus, 50)
    assert len(result.claims) == 4 and result.eligible == 4 and result.shortfall == 46
    assert result.eligible_share == pytest.approx(4 / 5)
    assert "ict:short" not in result.qrels
    assert inverse_cloze([], 3).claims == [] and inverse_cloze([], 3).eligible_share == 0.0


@pytest.mark.parametrize("n", [0, -1, 1.5, True, "3", None])
def test_bad_n(n):
    with pytest.raises(InputError, match="n must be an integer >= 1"):
        inverse_cloze(make_corpus(2), n)


def test_bad_input():
    with pytest.raises(InputError, match="seed"):
        inverse_cloze(make_corpus(2), 1, seed="0")
    with pytest.raises(InputError, match="max_words"):
        inverse_cloze(make_corpus(2), 1, min_words=10, max_words=5)
    with pytest.raises(InputError, match="twice"):
        inverse_cloze(make_corpus(2) + make_corpus(1), 1)
    with pytest.raises(InputError, match="Passage records"):
        inverse_cloze(["text"], 1)  # type: ignore[list-item]


def test_sentences_that_would_leak_are_not_held_out():
    shared = "Vitamin D supplements reduce the rate of hip fractures in elderly women."
    other = "The trial followed two thousand participants for five years in total."
    corpus = [
        # the same sentence is a sentence of another passage: held out here, the copy would stay indexed
        Passage("a", "a", "", f"{shared} Results were similar in men."),
        Passage("b", "b", "", f"{shared} Results were consistent across all the participating sites."),
        # twice in one passage (once quoted inside a longer sentence): one cut leaves the other copy
        Passage("c", "c", "", f'{other} However, a review quoted it word for word: "{other}" in a footnote.'),
        # the sentence is the title
        Passage(
            "d", "d", other.replace("two", "four"), f"{other.replace('two', 'four')} Fine context sentence is here."
        ),
    ]
    result = inverse_cloze(corpus, 10)
    held = {c.meta["passage_id"]: c.text for c in result.claims}
    assert shared not in held.values()
    assert held == {"b": "Results were consistent across all the participating sites."}
    assert result.eligible == 1
    # without the other passages, "a" is eligible
    alone = inverse_cloze([corpus[0]], 1)
    assert [c.text for c in alone.claims] == [shared]
    assert sentences_of(corpus[2].text)[0] == other  # "c": the quoted copy is inside the second sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "Daily aspirin intake lowers the risk of heart failure in older adults.",
        "Type I diabetes is an autoimmune disease that destroys pancreatic beta cells.",
        "The US government approved the vaccine for children in March 2021.",
        "The ban affects travellers from Iran, Libya, Yemen, Syria, Somalia and Venezuela.",
        "COVID-19 vaccines reduced hospital admissions by 90% among adults over 65.",
        "Thistle extract does not protect the liver from alcohol damage in rats.",
        "First-line therapy with imatinib doubles survival in chronic myeloid leukemia.",
    ],
)
def test_claim_like_accepts(sentence):
    assert claim_like_reason(sentence) is None
    assert is_claim_like(sentence)


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("Aspirin lowers risk.", "3 words"),
        (" ".join(["word"] * 41) + ".", "41 words"),
        ("aspirin intake lowers the risk of heart failure in older adults.", "upper-case"),
        ("Aspirin intake lowers the risk of heart failure in older adults", "end with '.'"),
        ("Does aspirin intake lower the risk of heart failure in older adults? Yes.", "question mark"),
        ("Gwen Stefani and Blake Shelton did not get married in Reno, Nevada ...", "elided text"),
        ("Photos from the inside of chemtrail planes were revealed \u2026 last week.", "elided text"),
        ("The full report is available at https://example.org/report for all readers.", "URL 'https://'"),
        ("This effect of aspirin was seen in a large cohort of older patients.", "starts with 'This'"),
        ("It's known that aspirin lowers the risk of heart failure in adults.", "starts with 'It'"),
        ("However, aspirin did not lower the risk of heart failure in adults.", "starts with 'However'"),
        ("In addition, aspirin lowered the risk of heart failure in older adults.", "starts with 'In addition'"),
        ("In this study, aspirin lowered the risk of heart failure in older adults.", "starts with 'In this'"),
        ("RESULTS Aspirin lowered the risk of heart failure in older adults.", "section heading"),
        ("Facebook Twitter WhatsApp SMS Email Print Save LOUISVILLE, Ky.", "title case (9 of 9"),
        ("A SARS-CoV-2 Vaccination Strategy Focused on Population-Scale Immunity.", "title case (7 of 8"),
        ("Aspirin lowered the risk of heart failure in the adults we followed.", "first person 'we'"),
        ("Aspirin lowered the risk of heart failure in adults, as shown by us.", "first person 'us'"),
        ("Aspirin lowered the risk of heart failure in adults in our cohort.", "first person 'our'"),
        ("Aspirin lowered the risk of heart failure in adults, I conclude.", "first person 'I'"),
        ("Aspirin lowered the risk of heart failure in older adults [12].", "citation mark '[12]'"),
        ("Aspirin lowered the risk of heart failure in older adults [3, 4-6].", "citation mark"),
        ("Aspirin lowered the risk of heart failure in older adults (Fig. 2).", "citation mark '(Fig'"),
        ("Aspirin lowered the risk of heart failure (Smith et al. 2010) in adults.", "citation mark 'et al.'"),
        ("Doses 10 20 30 40 50 60 70 80 90 100 110 120 130 mg.", "mostly digits"),
    ],
)
def test_claim_like_rejects(sentence, reason):
    found = claim_like_reason(sentence)
    assert found is not None and reason in found
    assert not is_claim_like(sentence)


def test_claim_like_bounds_are_parameters():
    sentence = "Aspirin lowers the risk of stroke."
    assert claim_like_reason(sentence) == "6 words (claim-like: 8-40)"
    assert claim_like_reason(sentence, min_words=6) is None
    assert claim_like_reason(sentence, max_words=5, min_words=2) == "6 words (claim-like: 2-5)"


@pytest.mark.parametrize(
    ("text", "span_of", "expected"),
    [
        ("A one. B two. C three.", "B two.", "A one. C three."),
        ("A one.  B two.   C three.", "B two.", "A one. C three."),
        ("A one.\nB two.\nC three.", "B two.", "A one.\nC three."),
        ("A one. B two.\n\nC three.", "B two.", "A one.\n\nC three."),
        ("B two. C three.", "B two.", "C three."),
        ("A one. B two.  ", "B two.", "A one."),
    ],
)
def test_cut_span_tidies_whitespace_at_the_cut_only(text, span_of, expected):
    start = text.index(span_of)
    assert cut_span(text, start, start + len(span_of)) == expected


def test_cut_span_bad_span():
    with pytest.raises(InputError, match="outside"):
        cut_span("abc", 2, 5)


def test_scifact_passages():
    from factscout.datasets import load_dataset

    corpus = list(load_dataset("scifact", "train").corpus[:200])
    result = inverse_cloze(corpus, 150, seed=0)
    assert len(result.claims) == 150 and result.eligible >= 150
    original = {p.passage_id: p for p in corpus}
    training = {p.passage_id: p for p in result.corpus}
    chosen = {c.meta["passage_id"] for c in result.claims}
    for claim in result.claims:
        source = claim.meta["passage_id"]
        text, kept = original[source].text, training[source].text
        start, end = claim.meta["span"]
        assert claim.text == " ".join(text[start:end].split())
        assert text[start:end] not in kept and text[start:end] not in training[source].title
        assert result.qrels[claim.claim_id] == {source: 1}
        # only the sentence and whitespace went: the non-blank characters are the original's minus it
        assert "".join(kept.split()) == "".join((text[:start] + text[end:]).split())
        assert len(claim.text.split()) >= 8 and claim.text.endswith(".")
    assert all(training[pid] == original[pid] for pid in training if pid not in chosen)
