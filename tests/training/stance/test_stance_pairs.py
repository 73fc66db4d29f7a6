"""The stance pair builder: each source's labelling rule on small inline data (real claims and
sentences), the builder's counts and licences on the SciFact and AVeriTeC fixtures, no held-out or
dev SciFact claim, and the JSONL + counts files."""

import json

import pytest
from typer.testing import CliRunner

from factscout.datasets import averitec, scifact
from factscout.errors import DataNotFound, UnknownName
from factscout.records import NOT_ENOUGH_INFO, REFUTES, STANCE_LABELS, SUPPORTS, Claim, Passage
from factscout.training.splits import read_heldout_ids
from factscout.training.stance.pairs import (
    averitec_stance_pairs,
    build_stance_pairs,
    checkthat_stance_pairs,
    counts_of,
    covidfact_stance_pairs,
    default_exclusions,
    licences_of,
    scifact_stance_pairs,
    write_stance_pairs,
)


def labels(pairs):
    return [(p.source, p.claim_id, p.sentence, STANCE_LABELS[p.label]) for p in pairs]


# -- SciFact -------------------------------------------------------------------------------------------

ABSTRACTS = {
    "10": ["Bariatric surgery was followed by more colorectal cancers.", "Patients were followed for 10 years."],
    "20": ["Colorectal cancer incidence rose after obesity surgery.", "We studied 80 patients."],
    "30": ["Held-out abstract about colorectal cancer after bariatric surgery."],
}


def _claim(cid, text, cited, evidence=None):
    return Claim(cid, text, None, {"cited_doc_ids": cited, "evidence": evidence or {}})


def test_scifact_pairs_rationales_cited_and_bm25_nei_without_excluded_abstracts():
    claims = [
        _claim("1", "Bariatric surgery increases rates of colorectal cancer.", ["10"],
               {"10": [{"sentences": [0], "label": "SUPPORT"}]}),
        _claim("2", "Bariatric surgery reduces colorectal cancer.", ["30"], {"30": [{"sentences": [0], "label": "CONTRADICT"}]}),
    ]  # fmt: skip
    pairs = scifact_stance_pairs(claims, ABSTRACTS, exclude_claim_ids={"2"}, bm25_nei=1)
    assert labels(pairs) == [
        ("scifact", "1", ABSTRACTS["10"][0], SUPPORTS),
        ("scifact:cited-nei", "1", ABSTRACTS["10"][1], NOT_ENOUGH_INFO),
        ("scifact:bm25-nei", "1", ABSTRACTS["20"][0], NOT_ENOUGH_INFO),  # never abstract 30: claim 2's
    ]


def test_scifact_contradict_is_refutes():
    claims = [_claim("2", "Bariatric surgery reduces colorectal cancer.", ["10"],
                     {"10": [{"sentences": [0], "label": "CONTRADICT"}]})]  # fmt: skip
    pairs = scifact_stance_pairs(claims, ABSTRACTS, bm25_nei=0)
    assert [STANCE_LABELS[p.label] for p in pairs] == [REFUTES, NOT_ENOUGH_INFO]


# -- COVID-Fact ----------------------------------------------------------------------------------------


def test_covidfact_original_supports_counter_claim_refutes():
    evidence = [
        "Here, we describe a collection of approaches based on SARS-CoV-2 spike-pseudotyped, single-cycle, "
        "replication-defective human immunodeficiency virus type-1 (HIV-1) and vesicular stomatitis virus (VSV)."
    ]
    claims = [
        Claim("cf0", "Measuring sars-cov-2 neutralizing antibody activity using pseudotyped and chimeric viruses",
              None, {"label": "SUPPORTED", "evidence": evidence}),
        Claim("cf1", "Measuring chs-cov-2 neutralizing antibody activity using pseudotyped and chimeric viruses",
              None, {"label": "REFUTED", "evidence": evidence}),
    ]  # fmt: skip
    assert [(p.claim_id, STANCE_LABELS[p.label]) for p in covidfact_stance_pairs(claims)] == [
        ("cf0", SUPPORTS),
        ("cf1", REFUTES),
    ]


# -- AVeriTeC ------------------------------------------------------------------------------------------


def _qa(question, answer, kind="Extractive", explanation=None):
    a = {"answer": answer, "answer_type": kind}
    if explanation:
        a["boolean_explanation"] = explanation
    return {"question": question, "answers": [a]}


def test_averitec_rule():
    claims = [
        Claim("train-0", "Joe Biden voted for the Iraq War.", None, {"label": "Supported", "qa": [
            _qa("Did Joe Biden vote for the Iraq War?", "Yes", "Boolean", "He voted for the resolution in 2002."),
            _qa("Did Biden oppose the war later?", "No", "Boolean"),  # bare "No" of a supported claim: skipped
            _qa("Who proposed the resolution?", "No answer could be found.", "Unanswerable"),
        ]}),
        Claim("train-1", "Without Donald Trump's China travel ban, millions would have died.", None,
              {"label": "Refuted", "qa": [
                  _qa("Did Donald Trump ban travel to China?", "No", "Boolean", "Restrictions, not an outright ban."),
                  _qa("When were the restrictions announced?", "January 31, 2020"),  # background: skipped
                  _qa("Did the restrictions stop the virus?", "There is no evidence they did."),
              ]}),
        Claim("train-2", "A claim nobody could settle.", None, {"label": "Not Enough Evidence", "qa": [
            _qa("Was it reported?", "One blog mentions it."),
        ]}),
        Claim("train-3", "A cherry-picked claim.", None, {"label": "Conflicting Evidence/Cherrypicking", "qa": [
            _qa("Is it true?", "Partly."),
        ]}),
    ]  # fmt: skip
    got = [(p.claim_id, p.sentence, STANCE_LABELS[p.label]) for p in averitec_stance_pairs(claims)]
    assert got == [
        ("train-0", "Did Joe Biden vote for the Iraq War? Yes. He voted for the resolution in 2002.", SUPPORTS),
        ("train-1", "Did Donald Trump ban travel to China? No. Restrictions, not an outright ban.", REFUTES),
        ("train-1", "Did the restrictions stop the virus? There is no evidence they did.", REFUTES),
        ("train-2", "Was it reported? One blog mentions it.", NOT_ENOUGH_INFO),
    ]


# -- CheckThat -----------------------------------------------------------------------------------------


def test_checkthat_paraphrase_supports_and_bm25_neighbour_nei():
    tweets = [Claim("tweet-sno-0", "UN demands U.S. pay reparations to blacks", None, {})]
    vclaims = [
        Passage("v1", "v1", "", "The United Nations demanded that the U.S. pay reparations to black Americans.\nsub"),
        Passage("v2", "v2", "", "A Texas county forces residents to pay reparations to black citizens."),
        Passage("v3", "v3", "", "A man locked his daughter in a cage."),
    ]
    pairs = checkthat_stance_pairs(tweets, vclaims, {"tweet-sno-0": {"v1": 1}}, nei=1)
    assert [(p.sentence, STANCE_LABELS[p.label]) for p in pairs] == [
        ("The United Nations demanded that the U.S. pay reparations to black Americans.", SUPPORTS),
        ("A Texas county forces residents to pay reparations to black citizens.", NOT_ENOUGH_INFO),
    ]


# -- the builder on the fixtures -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def mini_pairs():
    try:
        return build_stance_pairs(sources=("scifact", "averitec"), mini=True, augment=False, consistency=0)
    except DataNotFound as exc:
        pytest.skip(str(exc))


def test_builder_counts_and_licences_on_the_fixtures(mini_pairs):
    counts = counts_of(mini_pairs)
    assert set(counts) == {"scifact", "scifact:cited-nei", "scifact:bm25-nei", "averitec"}
    assert counts["scifact"][NOT_ENOUGH_INFO] == 0
    assert counts["scifact"][SUPPORTS] > 0 and counts["scifact"][REFUTES] > 0
    assert counts["scifact:bm25-nei"] == {
        SUPPORTS: 0,
        REFUTES: 0,
        NOT_ENOUGH_INFO: counts["scifact:bm25-nei"][NOT_ENOUGH_INFO],
    }
    assert sum(sum(c.values()) for c in counts.values()) == len(mini_pairs)
    licences = licences_of(mini_pairs)
    assert licences["scifact"] == [scifact.SOURCE.license]
    assert licences["averitec"] == [averitec.SOURCE.license] == ["CC BY-NC 4.0"]


def test_builder_keeps_out_heldout_and_dev_claims(mini_pairs):
    from factscout.datasets import load_dataset

    claims = load_dataset("scifact_mini").claims
    excluded = default_exclusions(mini=True)
    assert read_heldout_ids() <= excluded
    mini_ids = {c.claim_id for c in claims}
    assert mini_ids & excluded  # the fixture holds some: the check below means something
    used = {p.claim_id for p in mini_pairs if p.source.startswith("scifact")}
    assert used and not used & excluded
    assert used <= mini_ids - excluded


def test_builder_is_deterministic_and_augments_only_supporting_pairs():
    try:
        a = build_stance_pairs(sources=("averitec",), mini=True, seed=5)
    except DataNotFound as exc:
        pytest.skip(str(exc))
    assert a == build_stance_pairs(sources=("averitec",), mini=True, seed=5)
    augmented = [p for p in a if p.source.startswith("aug:")]
    assert augmented and {p.licence for p in augmented} == {"CC BY-NC 4.0"}
    assert {p.origin for p in a} == {"averitec"}


def test_builder_supporting_edits_only_where_they_are_sound():
    try:
        made = build_stance_pairs(
            sources=("scifact", "averitec"), mini=True, augmentations=("both", "reflip"), consistency=0
        )
    except DataNotFound as exc:
        pytest.skip(str(exc))
    augmented = [p for p in made if p.source.startswith("aug:")]
    assert {p.source for p in augmented} <= {"aug:both", "aug:reflip"}
    assert {STANCE_LABELS.index(SUPPORTS)} == {STANCE_LABELS.index(p.label) for p in augmented}
    reflips = [p for p in augmented if p.source == "aug:reflip"]
    assert reflips and {p.origin for p in reflips} == {"scifact"}  # an AVeriTeC refutation is no contradiction
    with pytest.raises(UnknownName, match="no augmentation 'shuffle'"):
        build_stance_pairs(sources=("scifact",), mini=True, augmentations=("shuffle",))


def test_builder_unknown_source():
    with pytest.raises(UnknownName, match="no stance pair source 'fever'"):
        build_stance_pairs(sources=("fever",))


def test_write_pairs_and_counts(tmp_path, mini_pairs):
    path, counts_path = write_stance_pairs(tmp_path / "pairs.jsonl", mini_pairs)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == len(mini_pairs)
    assert set(rows[0]) == {"claim", "sentence", "label", "source", "licence", "claim_id", "origin"}
    summary = json.loads(counts_path.read_text())
    assert counts_path.name == "pairs.jsonl.counts.json"
    assert summary["pairs"] == len(rows) == sum(summary["total"].values())
    assert summary["counts"] == counts_of(mini_pairs)
    assert set(summary["by_origin"]) == {"scifact", "averitec"}
    assert sum(summary["by_origin"]["averitec"].values()) == sum(p.origin == "averitec" for p in mini_pairs)


def test_cli_writes_pairs_and_prints_the_table(tmp_path, monkeypatch, mini_pairs):
    from factscout.cli.main import app
    from factscout.training.stance import pairs as stance_pairs

    asked = {}

    def fake(data_root, **kw):
        asked.update(kw)
        return mini_pairs

    monkeypatch.setattr(stance_pairs, "build_stance_pairs", fake)
    out = tmp_path / "p.jsonl"
    r = CliRunner().invoke(app, ["train", "stance-pairs", "--out", str(out), "--sources", "scifact", "--no-augment"])
    assert r.exit_code == 0, r.output
    assert asked["sources"] == ["scifact"] and asked["augment"] is False and asked["seed"] == 0
    assert "scifact:cited-nei" in r.output and f"{len(mini_pairs)} stance pairs" in r.output
    assert len(out.read_text().splitlines()) == len(mini_pairs)
    assert json.loads((tmp_path / "p.jsonl.counts.json").read_text())["pairs"] == len(mini_pairs)


def test_cli_unknown_source_is_a_usage_error(tmp_path):
    from factscout.cli.main import app

    out = tmp_path / "p.jsonl"
    r = CliRunner().invoke(app, ["train", "stance-pairs", "--out", str(out), "--sources", "checkthat,nope"])
    assert r.exit_code == 2 and "no stance pair source 'nope'" in r.output
    assert not out.exists()


def test_cli_unknown_augmentation_is_a_usage_error(tmp_path):
    from factscout.cli.main import app

    out = tmp_path / "p.jsonl"
    args = ["train", "stance-pairs", "--out", str(out), "--sources", "scifact", "--augmentations", "both,flip"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2 and "no augmentation 'flip'" in r.output
    assert not out.exists()


def test_exclusions_apply_to_every_source():
    try:
        kept = build_stance_pairs(sources=("averitec",), mini=True, augment=False, exclude_claim_ids=(), consistency=0)
        some = sorted({p.claim_id for p in kept})[:3]
        fewer = build_stance_pairs(
            sources=("averitec",), mini=True, augment=False, exclude_claim_ids=some, consistency=0
        )
    except DataNotFound as exc:
        pytest.skip(str(exc))
    assert {p.claim_id for p in fewer} == {p.claim_id for p in kept} - set(some)


@pytest.mark.dataset
def test_dev_claims_are_those_stance_cross_chooses_on():
    from factscout.datasets import load_dataset
    from factscout.training.splits import SEED, split_scifact

    try:
        claims = list(load_dataset("scifact", "train").claims)
    except DataNotFound as exc:
        pytest.skip(str(exc))
    train, heldout = split_scifact(claims, seed=SEED)
    from factscout.training.stance.cross import CrossConfig
    from factscout.training.stance.pairs import DEV_FRACTION

    assert CrossConfig().dev_fraction == DEV_FRACTION
    _, dev = split_scifact(train, heldout_fraction=DEV_FRACTION, seed=SEED + 1)  # as stance_cross.run
    assert {c.claim_id for c in heldout} == read_heldout_ids()
    assert default_exclusions() == {c.claim_id for c in heldout} | {c.claim_id for c in dev}


def test_cli_exclude_file_must_exist(tmp_path):
    from factscout.cli.main import app

    r = CliRunner().invoke(
        app, ["train", "stance-pairs", "--out", str(tmp_path / "p.jsonl"), "--exclude", str(tmp_path / "none.txt")]
    )
    assert r.exit_code == 2 and "--exclude: no such file" in r.output
