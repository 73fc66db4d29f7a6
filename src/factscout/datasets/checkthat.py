"""CLEF CheckThat! 2022 task 2A (English): find the previously fact-checked claim behind a tweet.

Nakov et al., 2022, "Overview of the CLEF-2022 CheckThat! Lab Task 2 on Detecting Previously
Fact-Checked Claims" (CLEF Working Notes); data as in Hövelmeyer, Boland & Dietze, 2022,
"SimBa at CheckThat! 2022" (github Alihoe/CLEFCheckThat2aSimBa).

Claims are the tweets (ids ``tweet-sno-<n>``); ``train`` and ``dev`` share one queries file and
are told apart by their qrels files, ``dev-test`` has its own. Tweets carry no date field, so
``Claim.date`` is ``None``; when the tweet text ends with the embed signature
"— Name (@handle) January 14, 2020", that date is kept in ``meta['tweet_date']`` (not as the
claim date: a fact-check is often published after the tweet it debunks, and a
published-before filter would then hide the answer).

Corpus: the 14,231 Snopes verified claims, ``passage_id`` = ``doc_id`` = ``vclaim_id``,
``title`` = the article title, ``text`` = the verified claim followed by the article subtitle
(omitted when empty or equal to the claim), ``published`` = the article date (290 have none),
``url`` = the article page. The subtitle is a one-line summary that adds context: BM25 over
title + text ranks the verified claims better with it than over title + claim alone. Qrels come from the TREC files (the dev
file lists one pair twice; it counts once).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch,
    github_archive,
    keep_qrels,
    read_delimited,
    read_json,
    register_loader,
    require_file,
)
from factscout.dates import parse_date
from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl, write_jsonl
from factscout.formats.trec import read_qrels
from factscout.records import Claim, Passage

log = logging.getLogger(__name__)

_REPO, _COMMIT = "Alihoe/CLEFCheckThat2aSimBa", "5d6917807a5a472e9f7c7867b09204899b08d721"
SOURCE = DatasetSource(
    name="CLEF CheckThat! 2022 task 2A (English)",
    url=github_archive(_REPO, _COMMIT),
    license="lab data terms not restated by the host repository (its own work CC BY-SA 3.0 DE); tweets under "
    "X/Twitter terms",
    citation="Nakov, Da San Martino, Alam, Shaar, Mubarak, Babulkov. Overview of the CLEF-2022 CheckThat! Lab Task 2 "
    "on Detecting Previously Fact-Checked Claims. CLEF 2022 Working Notes.",
)
FOLDER = "checkthat2022-2a"
_PREFIX = "CT2022-Task2A-EN-"
# split -> (queries file, qrels file)
FILES = {
    "train": (f"{_PREFIX}Train-Dev_Queries.tsv", f"{_PREFIX}Train_QRELs.tsv"),
    "dev": (f"{_PREFIX}Train-Dev_Queries.tsv", f"{_PREFIX}Dev_QRELs.tsv"),
    "dev-test": (f"{_PREFIX}Dev-Test_Queries.tsv", f"{_PREFIX}Dev-Test_QRELs.tsv"),
}
_HEADER_IDS = {"iclaim_id", "tweet_id", "id", "qid", "query_id"}
_TWEET_DATE = re.compile(r"\(@\w+\)\s+([A-Z][a-z]+ \d{1,2}, \d{4})\s*$")


def tweet_date(text: str) -> dt.date | None:
    """The date of the embed signature that ends a tweet ("— Name (@handle) January 14, 2020"), or None."""
    m = _TWEET_DATE.search(text)
    if m is None:
        return None
    try:
        return parse_date(m.group(1))
    except InputError:
        return None


def _vclaim_passage(path: Path, lineno: int, row: dict[str, Any]) -> Passage:
    vid, vclaim = row.get("vclaim_id"), row.get("vclaim")
    if not isinstance(vid, str) or not vid or not isinstance(vclaim, str):
        raise InputError(f"{path}:{lineno}: expected 'vclaim_id' and 'vclaim'")
    subtitle = str(row.get("subtitle") or "").strip()
    text = vclaim.strip()
    if subtitle and subtitle != text:
        text = f"{text}\n{subtitle}"
    published = parse_date(row.get("date_iso"), field=f"{path}:{lineno}: date_iso")
    return Passage(vid, vid, str(row.get("title") or "").strip(), text, published, row.get("page_url") or None)


@register_loader("checkthat2022", ("train", "dev", "dev-test"))
def load(split: str, root: Path) -> Dataset:
    """Tweets of ``train`` (997), ``dev`` (199) or ``dev-test`` (202) with the Snopes claim pool."""
    folder = root / FOLDER
    queries_file, qrels_file = FILES[split]
    qrels = read_qrels(require_file(folder / qrels_file, "checkthat2022"))
    queries_path = require_file(folder / queries_file, "checkthat2022")
    claims = []
    for lineno, (tweet_id, text) in read_delimited(queries_path, "\t", fields=2, header=False):
        if lineno == 1 and tweet_id.strip().lower() in _HEADER_IDS:
            continue
        if tweet_id not in qrels and split != "dev-test":
            continue  # the other split of the shared train/dev queries file
        meta = {"tweet_date": d} if (d := tweet_date(text)) else {}
        claims.append(Claim(tweet_id, text, None, meta))
    corpus_path = require_file(folder / "vclaims.jsonl", "checkthat2022")
    corpus = tuple(_vclaim_passage(corpus_path, lineno, row) for lineno, row in read_jsonl(corpus_path))
    kept = tuple(claims)
    missing = set(qrels) - {c.claim_id for c in kept}
    if missing:
        log.warning("%s: %d qrels queries have no tweet in %s", qrels_file, len(missing), queries_file)
    return Dataset("checkthat2022", split, kept, corpus, keep_qrels(qrels, kept), SOURCE)


def merge_vclaims(vclaims_dir: str | Path, dest: str | Path) -> Path:
    """Merge the per-claim ``vclaims/*.json`` files into one ``vclaims.jsonl`` (adding ``date_iso``)."""
    rows = []
    for path in sorted(Path(vclaims_dir).glob("*.json")):
        row = read_json(path)
        if not isinstance(row, dict):
            raise InputError(f"{path}: expected a JSON object")
        try:
            date = parse_date(row.get("date"))
        except InputError:
            date = None
        rows.append({**row, "date_iso": date.isoformat() if date else None})
    write_jsonl(dest, rows)
    return Path(dest)


def download(dest: str | Path) -> Path:
    """Fetch the repository archive holding the task 2A English data and lay it out in ``dest/checkthat2022-2a``."""
    folder = Path(dest) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {name for pair in FILES.values() for name in pair}
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        archive = fetch(SOURCE.url, Path(tmp) / "source.zip")
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
        placed: set[str] = set()
        for path in sorted(Path(tmp).rglob("*.tsv")):
            if path.name in wanted - placed:
                path.replace(folder / path.name)
                placed.add(path.name)
        if placed != wanted:
            raise InputError(f"{SOURCE.url}: archive lacks {', '.join(sorted(wanted - placed))}")
        vclaims = sorted(p for p in Path(tmp).rglob("vclaims") if p.is_dir() and any(p.glob("*.json")))
        if not vclaims:
            raise InputError(f"{SOURCE.url}: archive has no vclaims/ folder of JSON files")
        merge_vclaims(vclaims[0], folder / "vclaims.jsonl")
    return folder
