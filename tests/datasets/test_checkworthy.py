"""The check-worthiness loaders: counts and labels on the real files (SOURCE.txt's figures), the
fused CheckThat! 2021 1B line, the overlaps between editions, and bad input naming its line."""

from __future__ import annotations

import collections
import io
import zipfile
from pathlib import Path

import pytest

from factscout.datasets import checkworthy as cw
from factscout.datasets import checkworthy_fetch as fetching
from factscout.datasets import load_dataset
from factscout.datasets.checkworthy import (
    CHECK_WORTHY,
    NON_FACTUAL,
    UNIMPORTANT_FACTUAL,
    CheckworthySentence,
    load_sentences,
)
from factscout.datasets.checkworthy_overlap import Overlap, overlap, without_overlap
from factscout.errors import InputError


def _sentence(sid: str, text: str, *, dataset: str = "a", tweet_id: str | None = None, event: str | None = None):
    return CheckworthySentence(sid, text, False, dataset, "train", tweet_id=tweet_id, event=event)


# -- tiny inline data (no shared data folder) -------------------------------------------------------


def test_overlap_by_tweet_text_and_event():
    train = [
        _sentence("t1", "ok", tweet_id="111"),
        _sentence("t2", "Unemployment rose by forty percent in the state."),
        _sentence("t3", "Thank you very much."),  # too short to count as the same sentence
        _sentence("t4", "Another debate sentence about taxes and budgets.", dataset="cb", event="us-debate-2016-10-19"),
        _sentence(
            "t5", "A sentence of the same debate in the same dataset.", dataset="ct", event="us-debate-2016-10-19"
        ),
    ]
    held = [
        _sentence("h1", "a different text", tweet_id="111", dataset="ct"),
        _sentence("h2", "UNEMPLOYMENT rose by forty percent, in the state!", dataset="ct"),
        _sentence("h3", "Thank you very much.", dataset="ct"),
        _sentence("h4", "Something else entirely said on that night.", dataset="ct", event="us-debate-2016-10-19"),
    ]
    found = overlap(train, held)
    assert found.by_reason == {"tweet": ("t1",), "text": ("t2",), "event": ("t4",)}
    assert [s.sentence_id for s in without_overlap(train, held)] == ["t3", "t5"]
    with pytest.raises(Overlap, match="share 3 sentences"):
        without_overlap(train, held, refuse=True)
    assert without_overlap(train[2:3], held, refuse=True) == train[2:3]


def test_label_must_agree_with_checkworthy():
    with pytest.raises(InputError, match="disagrees"):
        CheckworthySentence("x", "t", False, "d", "s", label=CHECK_WORTHY)


def test_a_transcript_with_a_bad_label_names_its_line(tmp_path):
    path = tmp_path / "debate.tsv"
    path.write_text("1\tA\tFine line.\t0\n2\tB\tBad line.\tyes\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"debate\.tsv:2: expected a 0/1 label"):
        cw.read_transcript(path)


def test_a_transcript_line_with_a_missing_field_names_its_line(tmp_path):
    path = tmp_path / "debate.tsv"
    path.write_text("1\tA\tFine line.\t0\n2\tB\tNo label here.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"debate\.tsv:2: expected 4"):
        cw.read_transcript(path)


def test_download_lays_out_and_checks_every_file(tmp_path, monkeypatch):
    """download(): loose files fetched, zips extracted into the layout, every file's sha256 checked
    (here against a table of the fake files' own sums); the result loads."""
    from factscout.hashing import file_sha256

    served: dict[str, bytes] = {}
    layout: dict[str, bytes] = {}
    header22 = "topic\ttweet_id\ttweet_url\ttweet_text\tclass_label\n"
    header21 = "topic_id\ttweet_id\ttweet_url\ttweet_text\tclaim\tcheck_worthiness\n"
    cb = "Sentence_id,Text,Speaker,Speaker_title,Speaker_party,File_id,Length,Line_number,Sentiment,Verdict\n"
    layout["claimbuster/crowdsourced.csv"] = (cb + "1,We cut taxes by 10%.,A,,R,2016-10-19.txt,5,1,0.0,1\n").encode()
    layout["claimbuster/groundtruth.csv"] = (cb + "2,Hello there all.,A,,R,2012-10-22.txt,3,2,0.0,-1\n").encode()
    for split, suffix in cw._CT22_SUFFIX.items():
        layout[f"ct22_1a_en_tweets/CT22_english_1A_checkworthy_{suffix}.tsv"] = (
            header22 + f"c\t{split}1\tu\tA claim tweet.\t1\n"
        ).encode()
        layout[f"ct22_1b_en_tweets/CT22_english_1B_claim_{suffix}.tsv"] = (
            header22 + f"c\t{split}1\tu\tA claim tweet.\t1\nc\t{split}2\tu\tNo claim.\t0\n"
        ).encode()
    for split, name in cw.CT21_1A_FILES.items():
        layout[f"ct21_1a_en_tweets/{name}"] = (header21 + f"c\t{split}9\tu\tA tweet.\t1\t0\n").encode()
    for split in ("train", "dev", "test"):
        layout[f"ct21_1b_en_debates/{split}/2017_x.tsv"] = b"1\tA\tA line.\t0\n"
    monkeypatch.setattr(fetching, "SHA256_TABLE", "\n".join(f"{p} {_sha(b)}" for p, b in layout.items()))

    def zipped(members: dict[str, bytes]) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for name, data in members.items():
                z.writestr(name, data)
        return buf.getvalue()

    def raw(path: str) -> str:
        return f"https://raw.githubusercontent.com/{fetching.CT_REPO}/{fetching.CT_COMMIT}/{path}"

    for rel, (_, _, path) in fetching._LOOSE.items():
        repo, commit = fetching._LOOSE[rel][:2]
        served[f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"] = layout[rel]
    served[raw(fetching._ZIPS["ct21_1a"][1])] = zipped(
        {f"v1/{cw.CT21_1A_FILES[s]}": layout[f"ct21_1a_en_tweets/{cw.CT21_1A_FILES[s]}"] for s in ("train", "dev")}
    )
    served[raw(fetching._ZIPS["ct21_1a_test"][1])] = zipped(
        {"subtask-1a--english/dataset_test_english.tsv": layout["ct21_1a_en_tweets/dataset_test_english.tsv"]}
    )
    served[raw(fetching._ZIPS["ct21_1b"][1])] = zipped(
        {f"v1/{s}/2017_x.tsv": layout[f"ct21_1b_en_debates/{s}/2017_x.tsv"] for s in ("train", "dev")}
    )
    served[raw(fetching._ZIPS["ct21_1b_test"][1])] = zipped(
        {"subtask-1b--english/2017_x.tsv": layout["ct21_1b_en_debates/test/2017_x.tsv"]}
    )
    served[raw(fetching._ZIPS["ct22_1a"][1])] = zipped(
        {f"CT22_english_1A_checkworthy_{x}.tsv": layout[f"ct22_1a_en_tweets/CT22_english_1A_checkworthy_{x}.tsv"]
         for x in ("train", "dev", "dev_test")}
    )  # fmt: skip
    served[raw(fetching._ZIPS["ct22_1b"][1])] = zipped(
        {f"x/CT22_english_1B_claim_{x}.tsv": layout[f"ct22_1b_en_tweets/CT22_english_1B_claim_{x}.tsv"]
         for x in ("train", "dev", "dev_test")}
    )  # fmt: skip
    served[raw(fetching._ZIPS["ct22_1b_test"][1])] = zipped(
        {"CT22_english_1B_claim_test_gold.tsv": layout["ct22_1b_en_tweets/CT22_english_1B_claim_test_gold.tsv"]}
    )

    def fake_fetch(url: str, dest: Path, **_: object) -> Path:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(served[url])
        return dest

    monkeypatch.setattr(fetching, "fetch", fake_fetch)
    folder = cw.download(tmp_path / "root")
    assert folder == tmp_path / "root" / "checkworthy"
    assert {p: file_sha256(folder / p) for p in layout} == {p: _sha(b) for p, b in layout.items()}
    tweets = load_sentences("checkthat2022_1b", "test", root=tmp_path / "root")
    assert [(s.tweet_id, s.label) for s in tweets] == [("test1", CHECK_WORTHY), ("test2", NON_FACTUAL)]
    assert load_sentences("claimbuster", "crowdsourced", root=tmp_path / "root")[0].label == CHECK_WORTHY


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


# -- the real files ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loaded():
    cache: dict[tuple[str, str], tuple[CheckworthySentence, ...]] = {}

    def get(name: str, split: str) -> tuple[CheckworthySentence, ...]:
        if (name, split) not in cache:
            cache[name, split] = load_sentences(name, split)
        return cache[name, split]

    return get


def _labels(sentences):
    return dict(collections.Counter(s.label for s in sentences))


def _positives(sentences):
    return (len(sentences), sum(s.checkworthy for s in sentences))


def test_claimbuster_counts_and_verdicts(loaded):
    crowd, truth = loaded("claimbuster", "crowdsourced"), loaded("claimbuster", "groundtruth")
    assert _labels(crowd) == {NON_FACTUAL: 14685, UNIMPORTANT_FACTUAL: 2403, CHECK_WORTHY: 5413}
    assert _labels(truth) == {NON_FACTUAL: 731, UNIMPORTANT_FACTUAL: 63, CHECK_WORTHY: 238}
    first = crowd[0]
    assert (first.sentence_id, first.speaker, first.debate, first.line_number) == (
        "cb-16",
        "George Bush",
        "1988-09-25",
        16,
    )
    assert first.text == "I think we've seen a deterioration of values." and first.label == NON_FACTUAL
    assert first.event == "us-debate-1988-09-25" and not first.checkworthy
    assert not {s.sentence_id for s in crowd} & {s.sentence_id for s in truth}


@pytest.mark.dataset
@pytest.mark.parametrize(
    ("name", "split", "expected"),
    [
        ("checkthat2021_1a", "train", (822, 290)),
        ("checkthat2021_1a", "dev", (140, 60)),
        ("checkthat2021_1a", "test", (350, 19)),
        ("checkthat2021_1b", "train", (42033, 429)),
        ("checkthat2021_1b", "dev", (3586, 69)),
        ("checkthat2021_1b", "test", (5300, 298)),
        ("checkthat2022_1a", "train", (2122, 447)),
        ("checkthat2022_1a", "dev", (195, 44)),
        ("checkthat2022_1a", "dev_test", (574, 129)),
        ("checkthat2022_1a", "test", (149, 39)),
        ("checkthat2022_1b", "train", (3324, 447)),
        ("checkthat2022_1b", "test", (251, 39)),
    ],
)
def test_checkthat_counts(loaded, name, split, expected):
    assert _positives(loaded(name, split)) == expected


def test_ct22_three_way_labels_join_1b_and_1a(loaded):
    """1B's claim label and 1A's check-worthiness make the three-way label of every 1B tweet."""
    b = loaded("checkthat2022_1b", "train")
    assert _labels(b) == {NON_FACTUAL: 1202, UNIMPORTANT_FACTUAL: 1675, CHECK_WORTHY: 447}
    assert sum(s.claim for s in b) == 2122
    a = {s.tweet_id: s for s in loaded("checkthat2022_1a", "train")}
    assert all(a[s.tweet_id].checkworthy == s.checkworthy for s in b if s.claim)
    # Excel-mangled ids in the shipped train files stay as they are (still unique)
    assert "1.37041E+18" in a


def test_ct21_1a_claim_column(loaded):
    train, dev, test = (
        loaded("checkthat2021_1a", "train"),
        loaded("checkthat2021_1a", "dev"),
        loaded("checkthat2021_1a", "test"),
    )
    assert _labels(train) == {NON_FACTUAL: 315, UNIMPORTANT_FACTUAL: 217, CHECK_WORTHY: 290}
    assert all(s.claim is None for s in dev) and _labels(dev) == {None: 80, CHECK_WORTHY: 60}
    assert _labels(test)[None] == 2  # check-worthy without a claim: no three-way label


def test_the_fused_line_is_one_record(loaded):
    """20170803_Trump_WV.tsv line 73 fuses Trump's remarks with Jim Justice's speech and the applause:
    one record (as the lab scores it), flagged, its whole text kept, the next line its own record."""
    test = loaded("checkthat2021_1b", "test")
    by_id = {s.sentence_id: s for s in test}
    fused = by_id["20170803_Trump_WV:73"]
    assert fused.fused and [s.sentence_id for s in test if s.fused] == ["20170803_Trump_WV:73"]
    assert fused.speaker == "Donald Trump" and not fused.checkworthy and len(fused.text) == 3187
    assert fused.text.startswith("We have auto plants expanding")
    assert "So tomorrow I will be changing my registration to Republican." in fused.text
    assert fused.text.endswith("Applause, Cheers]")
    after = by_id["20170803_Trump_WV:74"]
    assert (
        after.speaker == "Jim Justice" and after.text == "As a coach, I would tell you it is time to run another play."
    )
    assert len([s for s in test if s.debate == "20170803_Trump_WV"]) == 291
    claim = load_dataset("checkthat2021_1b", "test").claims
    assert next(c for c in claim if c.claim_id == "20170803_Trump_WV:73").meta["fused"] is True


def test_edition_overlaps_from_source_txt(loaded):
    """SOURCE.txt: 228 CT21-train and 145 CT21-test tweet ids in CT22 train, 19+13 in dev, 58+46 in
    dev_test; one CT22 train and one dev_test tweet in CT22 test."""
    ct21 = loaded("checkthat2021_1a", "train") + loaded("checkthat2021_1a", "test")
    for split, n in (("train", 373), ("dev", 32), ("dev_test", 104), ("test", 0)):
        assert len(overlap(ct21, loaded("checkthat2022_1a", split)).by_reason["tweet"]) == n
    test = loaded("checkthat2022_1a", "test")
    assert len(overlap(loaded("checkthat2022_1a", "train"), test).by_reason["tweet"]) == 1
    assert len(overlap(loaded("checkthat2022_1a", "dev_test"), test).by_reason["tweet"]) == 1
    with pytest.raises(Overlap):
        without_overlap(loaded("checkthat2022_1a", "train"), test, refuse=True)


def test_claimbuster_debates_in_ct21_1b_train(loaded):
    """The 2012 and 2016 general-election debates are in both: refused across datasets by event."""
    train = loaded("checkthat2021_1b", "train")
    crowd = loaded("claimbuster", "crowdsourced")
    found = overlap(train, crowd)
    debates = {sid.split(":")[0] for sid in found.by_reason["event"]}
    assert debates == set(cw.SAME_EVENTS)
    assert len(found.by_reason["text"]) > 3000
    # ClaimBuster's own two files share debates but no sentence ids: no event overlap within a dataset
    assert not overlap(crowd, loaded("claimbuster", "groundtruth")).by_reason["event"]
    assert not overlap(crowd, loaded("checkthat2021_1b", "test")).by_reason["event"]


def test_registered_with_licences():
    from factscout.datasets.catalogue import entry

    assert entry("claimbuster").license.startswith("CC BY 4.0")
    assert "free for general research use" in entry("checkthat2021_1b").license
    ds = load_dataset("checkthat2022_1a", "dev")
    assert len(ds.claims) == 195 and ds.claims[0].meta["label"] in (CHECK_WORTHY, UNIMPORTANT_FACTUAL)
