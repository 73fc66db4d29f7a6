"""Check-worthiness data: ClaimBuster and the English CheckThat! task 1 sets of 2021 and 2022.

Which sentences of a debate, a speech or a tweet are worth fact-checking.

======================  ==============================  ============================================
name                    splits (default first)          what
======================  ==============================  ============================================
``claimbuster``         crowdsourced, groundtruth       22,501 + 1,032 US presidential debate
                                                        sentences (1960-2016), three-way verdicts
``checkthat2021_1a``    train, dev, test                COVID-19 tweets: check-worthy or not (and
                                                        whether each holds a claim)
``checkthat2021_1b``    train, dev, test                40 + 9 + 8 debate / speech transcripts, one
                                                        sentence a line with its speaker; ~1% positive
``checkthat2022_1a``    train, dev, dev_test, test      COVID-19 tweets holding a claim: check-worthy
``checkthat2022_1b``    train, dev, dev_test, test      COVID-19 tweets: holds a verifiable claim
======================  ==============================  ============================================

Arslan, Hassan, Li & Tremayne, 2020, "A Benchmark Dataset of Check-worthy Factual Claims" (ICWSM);
Shaar et al., 2021, "Overview of the CLEF-2021 CheckThat! Lab Task 1 on Check-Worthiness
Estimation in Tweets and Political Debates"; Nakov et al., 2022, "Overview of the CLEF-2022
CheckThat! Lab Task 1 on Identifying Relevant Claims in Tweets" (CLEF Working Notes).

Each split reads as :class:`CheckworthySentence` records (:func:`load_sentences`), or through the
dataset registry as a :class:`~factscout.datasets.Dataset` whose claims carry the same fields in
``meta``. ``checkworthy`` (binary) is always set; ``label`` is the three-way verdict
(:data:`CHECKWORTHY_LABELS`) where the data has it:

- ClaimBuster's ``Verdict``: -1 non-factual, 0 unimportant factual, 1 check-worthy.
- CheckThat! 2022: 1A annotates only tweets that hold a verifiable claim, and every 1B tweet
  with a claim is a 1A tweet (same ids, in every split), so a 1B tweet without a claim is
  non-factual, one with a claim is check-worthy or unimportant factual by its 1A label; the
  1B loader reads 1A beside it for that (``checkworthy`` of a 1B tweet is its 1A label).
- CheckThat! 2021 1A: its ``claim`` column the same way (dev's is 0 for every row, as shipped,
  and two test tweets are check-worthy without a claim: no three-way label for those).
- CheckThat! 2021 1B: binary only (selected for fact-checking by a fact-checking organisation).

The same sentences recur between editions (each folder's SOURCE.txt):

- CheckThat! 2022 1A/1B re-use CheckThat! 2021 1A tweets with new labels (hundreds of tweet ids
  in each CT22 split), and one tweet id of CT22 test is in CT22 train, one in CT22 dev_test.
- CheckThat! 2021 1B train holds four US general-election debates that ClaimBuster holds too
  (2012 third, 2016 first, second and third; the dates differ by a day on two of them), about
  3,200 of its sentences verbatim, labelled differently (ClaimBuster check-worthy, CheckThat!
  not selected) -- :data:`SAME_EVENTS`.

:func:`~factscout.datasets.checkworthy_overlap.overlap` finds what a training set shares with an
evaluation set and ``without_overlap`` removes it or refuses, so no model is scored on a sentence
it was trained on under another edition's name (:mod:`factscout.datasets.checkworthy_overlap`).

One line of CheckThat! 2021 1B test, ``20170803_Trump_WV.tsv`` line 73, fuses two speakers'
turns (Donald Trump's remarks, then Governor Jim Justice's speech and the audience's applause)
into one 3,187-character record labelled as Trump's; the lab scores it as one line, so it is
read as one record, flagged ``fused`` (:data:`FUSED_LINES`), and the next line (Justice) stays
its own record.
The download, with the published sha256 of all 70 files: :mod:`factscout.datasets.checkworthy_fetch`.

Licences: ClaimBuster CC BY 4.0 (Zenodo record 3609356); CheckThat! "free for general research
use" (the lab's README), tweets under X/Twitter's terms.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    github_raw,
    meta_dict,
    read_delimited,
    register_loader,
    require_file,
)

# download: what `factscout data download` calls
from factscout.datasets.checkworthy_fetch import CB_COMMIT, CB_REPO, CT21, CT22, CT_COMMIT, CT_REPO, FOLDER, download
from factscout.errors import InputError
from factscout.records import Claim

CheckworthyLabel = Literal["non-factual", "unimportant factual", "check-worthy"]
"""ClaimBuster's three verdicts (NFS, UFS, CFS), the order of every three-way probability."""
NON_FACTUAL: CheckworthyLabel = "non-factual"
UNIMPORTANT_FACTUAL: CheckworthyLabel = "unimportant factual"
CHECK_WORTHY: CheckworthyLabel = "check-worthy"
CHECKWORTHY_LABELS: tuple[CheckworthyLabel, CheckworthyLabel, CheckworthyLabel] = (
    NON_FACTUAL,
    UNIMPORTANT_FACTUAL,
    CHECK_WORTHY,
)
VERDICTS: dict[str, CheckworthyLabel] = {"-1": NON_FACTUAL, "0": UNIMPORTANT_FACTUAL, "1": CHECK_WORTHY}
"""ClaimBuster's ``Verdict`` column."""

MIN_TEXT_TOKENS = 5
"""Shorter texts ("Thank you.", "Go ahead.") recur in every transcript: they are no overlap."""

SOURCE = DatasetSource(
    name="Check-worthiness: ClaimBuster (Arslan et al. 2020) and CLEF CheckThat! 2021/2022 task 1 (English)",
    url=github_raw(CB_REPO, CB_COMMIT, "data/ClaimBuster/datasets/crowdsourced.csv"),
    license="ClaimBuster: CC BY 4.0 (Zenodo record 3609356); CheckThat! 2021/2022 task 1: 'free for general "
    "research use' (the lab's README); tweets under X/Twitter terms",
    citation="Arslan, Hassan, Li, Tremayne. A Benchmark Dataset of Check-worthy Factual Claims. ICWSM 2020. "
    "Shaar et al. Overview of the CLEF-2021 CheckThat! Lab Task 1 on Check-Worthiness Estimation in Tweets and "
    "Political Debates. Nakov et al. Overview of the CLEF-2022 CheckThat! Lab Task 1 on Identifying Relevant "
    "Claims in Tweets. CLEF 2021/2022 Working Notes.",
)
SOURCES: dict[str, DatasetSource] = {
    "claimbuster": DatasetSource(
        "ClaimBuster (crowdsourced + groundtruth)",
        SOURCE.url,
        "CC BY 4.0 (Zenodo record 3609356, DOI 10.5281/zenodo.3609356)",
        "Arslan, Hassan, Li, Tremayne. A Benchmark Dataset of Check-worthy Factual Claims. ICWSM 2020.",
    ),
    "checkthat2021_1a": DatasetSource(
        "CLEF-2021 CheckThat! task 1A (English tweets)",
        github_raw(CT_REPO, CT_COMMIT, f"{CT21}/data/subtask-1a--english/v1.zip"),
        "free for general research use (clef2021-checkthat-lab README); tweets under X/Twitter terms",
        "Shaar et al. Overview of the CLEF-2021 CheckThat! Lab Task 1. CLEF 2021 Working Notes.",
    ),
    "checkthat2021_1b": DatasetSource(
        "CLEF-2021 CheckThat! task 1B (English debates and speeches)",
        github_raw(CT_REPO, CT_COMMIT, f"{CT21}/data/subtask-1b--english/v1.zip"),
        "free for general research use (clef2021-checkthat-lab README)",
        "Shaar et al. Overview of the CLEF-2021 CheckThat! Lab Task 1. CLEF 2021 Working Notes.",
    ),
    "checkthat2022_1a": DatasetSource(
        "CLEF-2022 CheckThat! task 1A (English tweets, check-worthy)",
        github_raw(CT_REPO, CT_COMMIT, f"{CT22}/CT22_english_1A_checkworthy.zip"),
        "free for general research use (clef2022-checkthat-lab README); tweets under X/Twitter terms",
        "Nakov et al. Overview of the CLEF-2022 CheckThat! Lab Task 1. CLEF 2022 Working Notes.",
    ),
    "checkthat2022_1b": DatasetSource(
        "CLEF-2022 CheckThat! task 1B (English tweets, verifiable claim)",
        github_raw(CT_REPO, CT_COMMIT, f"{CT22}/CT22_english_1B_claim.zip"),
        "free for general research use (clef2022-checkthat-lab README); tweets under X/Twitter terms",
        "Nakov et al. Overview of the CLEF-2022 CheckThat! Lab Task 1. CLEF 2022 Working Notes.",
    ),
}
"""Each dataset's own source and licence (what a model card cites)."""

FOLDERS = {
    "claimbuster": "claimbuster",
    "checkthat2021_1a": "ct21_1a_en_tweets",
    "checkthat2021_1b": "ct21_1b_en_debates",
    "checkthat2022_1a": "ct22_1a_en_tweets",
    "checkthat2022_1b": "ct22_1b_en_tweets",
}
CLAIMBUSTER_FILES = {"crowdsourced": "crowdsourced.csv", "groundtruth": "groundtruth.csv"}
CT21_1A_FILES = {
    "train": "dataset_train_v1_english.tsv",
    "dev": "dataset_dev_v1_english.tsv",
    "test": "dataset_test_english.tsv",
}
_CT22_SUFFIX = {"train": "train", "dev": "dev", "dev_test": "dev_test", "test": "test_gold"}
CT22_1A_FILES = {s: f"CT22_english_1A_checkworthy_{x}.tsv" for s, x in _CT22_SUFFIX.items()}
CT22_1B_FILES = {s: f"CT22_english_1B_claim_{x}.tsv" for s, x in _CT22_SUFFIX.items()}

SAME_EVENTS = {
    "20121023_third_presidential_debate": "2012-10-22",
    "20160926_first_presidential_debate": "2016-09-26",
    "20161010_second_presidential_debate": "2016-10-09",
    "20161019_third_presidential_debate": "2016-10-19",
}
"""CheckThat! 2021 1B transcripts that are ClaimBuster debates (its ``File_id`` date)."""

FUSED_LINES = {
    ("test", "20170803_Trump_WV", 73): "Donald Trump's remarks, Governor Jim Justice's speech and the applause",
}
"""(split, transcript, line) of CheckThat! 2021 1B lines that fuse several turns (module docstring)."""


@dataclass(frozen=True, slots=True)
class CheckworthySentence:
    """One sentence (or tweet) with its check-worthiness.

    ``checkworthy`` is always set; ``label`` is the three-way verdict where the data has one,
    ``claim`` whether it holds a (verifiable) claim where known. Transcripts give ``speaker``,
    ``debate`` (the transcript) and ``line_number``; tweets ``tweet_id``. ``event`` names the
    debate across datasets (:data:`SAME_EVENTS`).
    """

    sentence_id: str
    text: str
    checkworthy: bool
    dataset: str
    split: str
    label: CheckworthyLabel | None = None
    claim: bool | None = None
    speaker: str | None = None
    debate: str | None = None
    line_number: int | None = None
    tweet_id: str | None = None
    event: str | None = None
    fused: bool = False
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.sentence_id:
            raise InputError("a check-worthiness sentence needs an id")
        if self.label is not None and (self.label == CHECK_WORTHY) != self.checkworthy:
            raise InputError(f"{self.sentence_id}: label {self.label!r} disagrees with checkworthy={self.checkworthy}")

    def as_claim(self) -> Claim:
        """The sentence as a :class:`~factscout.records.Claim` (its fields in ``meta``)."""
        meta = meta_dict(
            checkworthy=self.checkworthy,
            label=self.label,
            claim=self.claim,
            speaker=self.speaker,
            debate=self.debate,
            line_number=self.line_number,
            tweet_id=self.tweet_id,
            event=self.event,
            split=self.split,
        )
        if self.fused:
            meta["fused"] = True
        return Claim(self.sentence_id, self.text, None, meta)


def _binary(value: str, where: str) -> bool:
    if value not in ("0", "1"):
        raise InputError(f"{where}: expected a 0/1 label, got {value!r}")
    return value == "1"


def _three_way(claim: bool | None, checkworthy: bool) -> CheckworthyLabel | None:
    if checkworthy:
        return CHECK_WORTHY if claim is not False else None
    if claim is None:
        return None
    return UNIMPORTANT_FACTUAL if claim else NON_FACTUAL


# -- readers ------------------------------------------------------------------------------------

CLAIMBUSTER_HEADER = [
    "Sentence_id",
    "Text",
    "Speaker",
    "Speaker_title",
    "Speaker_party",
    "File_id",
    "Length",
    "Line_number",
    "Sentiment",
    "Verdict",
]


def _claimbuster(root: Path, split: str) -> list[CheckworthySentence]:
    path = require_file(root / FOLDER / FOLDERS["claimbuster"] / CLAIMBUSTER_FILES[split], "claimbuster")
    out = []
    for lineno, row in read_delimited(path, ",", fields=len(CLAIMBUSTER_HEADER), header=False):
        if lineno == 1:
            if row != CLAIMBUSTER_HEADER:
                raise InputError(f"{path}:1: expected the header {','.join(CLAIMBUSTER_HEADER)}")
            continue
        sid, text, speaker, title, party, file_id, _, line, sentiment, verdict = row
        where = f"{path}:{lineno}"
        if verdict not in VERDICTS or not sid.isdigit() or not line.isdigit():
            raise InputError(f"{where}: expected a numeric Sentence_id and Line_number and a Verdict of -1, 0, 1")
        label = VERDICTS[verdict]
        debate = file_id.removesuffix(".txt")
        out.append(
            CheckworthySentence(
                f"cb-{sid}",
                text.strip(),
                label == CHECK_WORTHY,
                "claimbuster",
                split,
                label=label,
                claim=label != NON_FACTUAL,
                speaker=speaker or None,
                debate=debate,
                line_number=int(line),
                event=f"us-debate-{debate}",
                meta=meta_dict(
                    speaker_title=title or None,
                    speaker_party=party or None,
                    sentiment=float(sentiment) if sentiment else None,
                ),
            )
        )
    return out


def _tweet_rows(path: Path, fields: int) -> Iterable[tuple[str, list[str]]]:
    for lineno, row in read_delimited(path, "\t", fields=fields, header=True, quoted=False):
        yield f"{path}:{lineno}", row


def _ct21_1a(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2021_1a"
    path = require_file(root / FOLDER / FOLDERS[name] / CT21_1A_FILES[split], name)
    out = []
    for where, (topic, tweet_id, url, text, claim_col, worthy) in _tweet_rows(path, 6):
        checkworthy = _binary(worthy, where)
        # dev's claim column is 0 for every row, as shipped: unknown there
        claim = None if split == "dev" else _binary(claim_col, where)
        out.append(
            CheckworthySentence(
                tweet_id,
                text.strip(),
                checkworthy,
                name,
                split,
                label=_three_way(claim, checkworthy),
                claim=claim,
                tweet_id=tweet_id,
                meta={"topic": topic, "url": url},
            )
        )
    return out


def _ct22_rows(root: Path, name: str, split: str) -> list[tuple[str, str, str, str, bool]]:
    files = CT22_1A_FILES if name == "checkthat2022_1a" else CT22_1B_FILES
    path = require_file(root / FOLDER / FOLDERS[name] / files[split], name)
    return [
        (tweet_id, text, topic, url, _binary(y, where))
        for where, (topic, tweet_id, url, text, y) in _tweet_rows(path, 5)
    ]


def _ct22_1a(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2022_1a"
    return [
        CheckworthySentence(
            tweet_id,
            text.strip(),
            y,
            name,
            split,
            label=CHECK_WORTHY if y else UNIMPORTANT_FACTUAL,
            claim=True,
            tweet_id=tweet_id,
            meta={"topic": topic, "url": url},
        )
        for tweet_id, text, topic, url, y in _ct22_rows(root, name, split)
    ]


def _ct22_1b(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2022_1b"
    worthy = {s.tweet_id: s.checkworthy for s in _ct22_1a(root, split)}
    out = []
    for tweet_id, text, topic, url, claim in _ct22_rows(root, name, split):
        if claim and tweet_id not in worthy:
            raise InputError(f"{name} {split}: tweet {tweet_id} holds a claim but is not in 1A {split}")
        checkworthy = claim and worthy[tweet_id]
        out.append(
            CheckworthySentence(
                tweet_id,
                text.strip(),
                checkworthy,
                name,
                split,
                label=_three_way(claim, checkworthy),
                claim=claim,
                tweet_id=tweet_id,
                meta={"topic": topic, "url": url},
            )
        )
    return out


def _ct21_1b(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2021_1b"
    folder = root / FOLDER / FOLDERS[name] / split
    files = sorted(folder.glob("*.tsv")) if folder.is_dir() else []
    if not files:
        require_file(folder / "*.tsv", name)
    out = []
    for path in files:
        out.extend(read_transcript(path, split=split))
    return out


def read_transcript(
    path: str | Path, *, split: str = "test", dataset: str = "checkthat2021_1b"
) -> list[CheckworthySentence]:
    """One CheckThat! 1B transcript (``line_number <TAB> speaker <TAB> text <TAB> label``, no header),
    one record a line; ids ``<file stem>:<line_number>``."""
    path = Path(path)
    debate = path.stem
    out = []
    for lineno, (number, speaker, text, label) in read_delimited(path, "\t", fields=4, header=False, quoted=False):
        where = f"{path}:{lineno}"
        if not number.strip().isdigit():
            raise InputError(f"{where}: expected a line number, got {number!r}")
        line = int(number)
        out.append(
            CheckworthySentence(
                f"{debate}:{line}",
                text.strip(),
                _binary(label.strip(), where),
                dataset,
                split,
                speaker=speaker.strip() or None,
                debate=debate,
                line_number=line,
                event=f"us-debate-{SAME_EVENTS[debate]}" if debate in SAME_EVENTS else f"{dataset}-{debate}",
                fused=(split, debate, line) in FUSED_LINES,
            )
        )
    return out


def read_tweets(
    path: str | Path, *, split: str = "test", dataset: str = "checkthat2022_1a"
) -> list[CheckworthySentence]:
    """A CheckThat! 2022 1A-format tweet file (``topic, tweet_id, tweet_url, tweet_text,
    class_label`` with a header), ``class_label`` read as check-worthy."""
    path = Path(path)
    return [
        CheckworthySentence(
            tweet_id, text.strip(), _binary(y, where), dataset, split, tweet_id=tweet_id, meta={"topic": topic}
        )
        for where, (topic, tweet_id, _url, text, y) in _tweet_rows(path, 5)
    ]


_READERS = {
    "claimbuster": _claimbuster,
    "checkthat2021_1a": _ct21_1a,
    "checkthat2021_1b": _ct21_1b,
    "checkthat2022_1a": _ct22_1a,
    "checkthat2022_1b": _ct22_1b,
}
SPLITS: dict[str, tuple[str, ...]] = {
    "claimbuster": ("crowdsourced", "groundtruth"),
    "checkthat2021_1a": ("train", "dev", "test"),
    "checkthat2021_1b": ("train", "dev", "test"),
    "checkthat2022_1a": ("train", "dev", "dev_test", "test"),
    "checkthat2022_1b": ("train", "dev", "dev_test", "test"),
}


def load_sentences(
    name: str, split: str | None = None, root: str | Path | None = None
) -> tuple[CheckworthySentence, ...]:
    """The sentences of split ``split`` (default: the first of :data:`SPLITS`) of dataset ``name``."""
    from factscout.datasets.base import data_root

    if name not in _READERS:
        from factscout.errors import UnknownName

        raise UnknownName("check-worthiness dataset", name, _READERS)
    split = SPLITS[name][0] if split is None else split
    if split not in SPLITS[name]:
        raise InputError(f"dataset {name!r} has no split {split!r}; valid splits: {', '.join(SPLITS[name])}")
    sentences = _READERS[name](Path(root) if root is not None else data_root(), split)
    seen: set[str] = set()
    for s in sentences:
        if s.sentence_id in seen:
            raise InputError(f"dataset {name!r} split {split!r} has sentence id {s.sentence_id!r} twice")
        seen.add(s.sentence_id)
    return tuple(sentences)


def _as_dataset(name: str, split: str, root: Path) -> Dataset:
    kept, skipped = [], []
    for s in load_sentences(name, split, root):
        if s.text:
            kept.append(s.as_claim())
        else:
            skipped.append(f"{s.sentence_id}: empty text")
    return Dataset(name, split, tuple(kept), source=SOURCES[name], skipped=tuple(skipped))


def _registered(name: str) -> None:
    def read(split: str, root: Path) -> Dataset:
        return _as_dataset(name, split, root)

    read.__module__ = __name__
    register_loader(name, SPLITS[name])(read)


for _name in SPLITS:
    _registered(_name)


__all__ = [
    "CHECKWORTHY_LABELS",
    "CHECK_WORTHY",
    "NON_FACTUAL",
    "UNIMPORTANT_FACTUAL",
    "CheckworthyLabel",
    "CheckworthySentence",
    "download",
    "load_sentences",
    "read_transcript",
    "read_tweets",
]
