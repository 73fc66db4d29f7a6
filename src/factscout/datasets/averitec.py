"""AVeriTeC: real-world claims with dates, question-answer decompositions and four verdicts.

Schlichtkrull, Guo & Vlachos, 2023, "AVeriTeC: A Dataset for Real-world Claim Verification with
Evidence from the Web", NeurIPS Datasets and Benchmarks (https://arxiv.org/abs/2305.13117).

Three loaders:

``averitec``
    ``train.json`` (``dev.json`` where downloaded). Claim ids ``"<split>-<index>"`` (the same ids
    as the BEIR view), ``Claim.date`` from the day-first ``claim_date``. No corpus: the web
    knowledge store is not part of this loader.
``averitec_mini``
    25 train claims stratified by label (``fixtures/averitec_mini``), same ids as the full set.
``averitec_beir``
    the gold answers as a closed passage pool (``beir/``): each non-"Unanswerable" answer is a
    passage (its text is the answer, plus the explanation of a Boolean answer), qrels link each
    claim to its own answers. The question an answer belongs to stays out of the passage (it is
    metadata in the file): putting it in would leak the gold decomposition into retrieval.
    Passages carry the answer's ``source_url`` and, when that URL's path holds a full date
    (``/2020/aug/26/``; a minority of the pool), that date as ``published``. The archive.org
    capture date is never used: it is when the page was saved, usually after the claim.

Claim metadata: ``label``, ``questions`` (the gold question strings), ``speaker``,
``claim_types``, ``location_ISO_code``; the full loaders add ``qa`` (questions with answers and
sources), ``justification``, ``fact_checking_strategies``, ``reporting_source``,
``original_claim_url``, ``fact_checking_article``, ``required_reannotation``.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch_all,
    github_raw,
    keep_qrels,
    meta_dict,
    read_json,
    register_loader,
    require_file,
)
from factscout.dates import date_from_url, parse_date
from factscout.errors import InputError
from factscout.formats.beir import read_qrels, write_qrels
from factscout.formats.jsonl import read_jsonl, write_jsonl
from factscout.records import Claim, Passage

log = logging.getLogger(__name__)

_REPO, _COMMIT = "MichSchli/AVeriTeC", "7c62d1ec8df3fb560d6efe2b85fa191135636f81"
SOURCE = DatasetSource(
    name="AVeriTeC",
    url=github_raw(_REPO, _COMMIT, "data/train.json"),
    license="CC BY-NC 4.0",
    citation="Schlichtkrull, Guo, Vlachos. AVeriTeC: A Dataset for Real-world Claim Verification with Evidence "
    "from the Web. NeurIPS 2023 Datasets and Benchmarks.",
)
# known sha256 of the fetched files: train.json's git blob id (0f190e11...) equals the official tree's
# data/train.json, so the raw URL serves exactly these bytes (dev.json has none known)
SHA256 = {SOURCE.url: "ae5eda7c42ddf1695ef185a7ba1bc716928f5adf57103e4f78aae5f9afe00f9c"}
FOLDER = "averitec"
MINI_FOLDER = "fixtures/averitec_mini"
MINI_FILE = f"{MINI_FOLDER}/train_subset.json"
# split -> (queries file, qrels file) inside averitec/beir/, as the BEIR view writer names them
BEIR_FILES = {"train": ("queries_train.jsonl", "qrels/train.tsv"), "dev": ("queries.jsonl", "qrels/test.tsv")}
_ARCHIVE_DATE = re.compile(r"web\.archive\.org/web/(\d{4})(\d{2})(\d{2})")


def _claim(where: str, claim_id: str, row: dict[str, Any]) -> Claim:
    questions = row.get("questions") or []
    if not isinstance(questions, list):
        raise InputError(f"{where}: 'questions' must be a list")
    meta = meta_dict(
        label=row.get("label"),
        questions=[str(q.get("question", "")) for q in questions if isinstance(q, dict)],
        qa=questions,
        justification=row.get("justification"),
        speaker=row.get("speaker"),
        claim_types=row.get("claim_types"),
        fact_checking_strategies=row.get("fact_checking_strategies"),
        location_ISO_code=row.get("location_ISO_code"),
        reporting_source=row.get("reporting_source"),
        original_claim_url=row.get("original_claim_url"),
        fact_checking_article=row.get("fact_checking_article"),
        required_reannotation=row.get("required_reannotation"),
    )
    date = parse_date(row.get("claim_date"), field=f"{where}: claim_date")
    return Claim(claim_id, str(row.get("claim") or ""), date, meta)


def _claims_from_json(path: Path, rows: list[dict[str, Any]], ids: list[str]) -> tuple[list[Claim], list[str]]:
    claims, skipped = [], []
    for claim_id, row in zip(ids, rows, strict=True):
        where = f"{path}: claim {claim_id}"
        if not str(row.get("claim") or "").strip():
            skipped.append(f"{where}: empty claim text")
            log.warning("%s: empty claim text, skipped", where)
            continue
        claims.append(_claim(where, claim_id, row))
    return claims, skipped


def _json_list(path: Path) -> list[dict[str, Any]]:
    rows = read_json(path)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError(f"{path}: expected a JSON list of claim objects")
    return rows


@register_loader("averitec", ("train", "dev"))
def load(split: str, root: Path) -> Dataset:
    """AVeriTeC ``train`` (3,068 claims) or ``dev`` (kept aside here)."""
    path = require_file(root / FOLDER / f"{split}.json", "averitec")
    rows = _json_list(path)
    claims, skipped = _claims_from_json(path, rows, [f"{split}-{i}" for i in range(len(rows))])
    return Dataset("averitec", split, tuple(claims), source=SOURCE, skipped=tuple(skipped))


@register_loader("averitec_mini", ("train",))
def load_mini(split: str, root: Path) -> Dataset:
    """25 AVeriTeC train claims (10 refuted, 7 supported, 4 NEE, 4 conflicting), ids as in the full set."""
    path = require_file(root / MINI_FILE, "averitec_mini")
    rows = _json_list(path)
    if any("source_index" not in r for r in rows):
        raise InputError(f"{path}: every claim needs its 'source_index' in train.json")
    claims, skipped = _claims_from_json(path, rows, [f"train-{r['source_index']}" for r in rows])
    return Dataset("averitec_mini", split, tuple(claims), source=SOURCE, skipped=tuple(skipped))


def _beir_corpus(path: Path) -> tuple[Passage, ...]:
    passages = []
    for lineno, row in read_jsonl(path):
        pid, text = row.get("_id"), row.get("text")
        if not isinstance(pid, str) or not pid or not isinstance(text, str):
            raise InputError(f"{path}:{lineno}: expected '_id' and 'text'")
        meta = row.get("metadata") or {}
        # title + text only: the question in the metadata must not reach the indexed text
        url = meta.get("source_url") or None
        passages.append(Passage(pid, pid, str(row.get("title") or ""), text, date_from_url(url), url))
    return tuple(passages)


@register_loader("averitec_beir", ("train", "dev"))
def load_beir(split: str, root: Path) -> Dataset:
    """The AVeriTeC closed answer pool (train+dev answers) with the ``split``'s claims and qrels."""
    folder = root / FOLDER / "beir"
    queries_file, qrels_file = BEIR_FILES[split]
    queries_path = require_file(folder / queries_file, "averitec_beir")
    claims, skipped = [], []
    for lineno, row in read_jsonl(queries_path):
        qid, text = row.get("_id"), row.get("text")
        if not isinstance(qid, str) or not qid or not isinstance(text, str):
            raise InputError(f"{queries_path}:{lineno}: expected '_id' and 'text'")
        if not text.strip():
            skipped.append(f"{queries_path}:{lineno}: claim {qid}: empty claim text")
            log.warning("%s:%d: claim %s has empty text, skipped", queries_path, lineno, qid)
            continue
        meta = dict(row.get("metadata") or {})
        date = parse_date(meta.pop("claim_date", None), field=f"{queries_path}:{lineno}: claim_date")
        claims.append(Claim(qid, text, date, meta_dict(**meta)))
    corpus = _beir_corpus(require_file(folder / "corpus.jsonl", "averitec_beir"))
    kept = tuple(claims)
    qrels = keep_qrels(read_qrels(require_file(folder / qrels_file, "averitec_beir")), kept)
    return Dataset("averitec_beir", split, kept, corpus, qrels, SOURCE, tuple(skipped))


def write_beir_view(folder: str | Path) -> Path:
    """Write ``folder/beir/`` (answer pool, queries, qrels) from ``train.json``/``dev.json`` in ``folder``.

    The pool holds the answers of every split found; each split's queries and qrels cover its
    own claims. Passage ids are ``"<claim_id>-q<question>-a<answer>"``.
    """
    folder = Path(folder)
    corpus: list[dict[str, Any]] = []
    for split, (queries_file, qrels_file) in BEIR_FILES.items():
        path = folder / f"{split}.json"
        if not path.is_file():
            continue
        queries: list[dict[str, Any]] = []
        qrels: dict[str, dict[str, int]] = {}
        for i, c in enumerate(_json_list(path)):
            qid = f"{split}-{i}"
            questions = [q for q in c.get("questions") or [] if isinstance(q, dict)]
            queries.append(
                {
                    "_id": qid,
                    "text": c.get("claim") or "",
                    "metadata": {
                        "label": c.get("label"),
                        "claim_date": c.get("claim_date"),
                        "claim_types": c.get("claim_types"),
                        "speaker": c.get("speaker"),
                        "location_ISO_code": c.get("location_ISO_code"),
                        "questions": [q.get("question") for q in questions],
                    },
                }
            )
            qrels[qid] = _answer_passages(qid, questions, corpus)
        write_jsonl(folder / "beir" / queries_file, queries)
        write_qrels(folder / "beir" / qrels_file, {q: d for q, d in qrels.items() if d})
    write_jsonl(folder / "beir" / "corpus.jsonl", corpus)
    return folder / "beir"


def _answer_passages(qid: str, questions: list[dict[str, Any]], corpus: list[dict[str, Any]]) -> dict[str, int]:
    relevant = {}
    for qi, q in enumerate(questions):
        for ai, a in enumerate(q.get("answers") or []):
            if a.get("answer_type") == "Unanswerable":
                continue
            text = a.get("answer") or ""
            if a.get("answer_type") == "Boolean" and a.get("boolean_explanation"):
                text += ". " + a["boolean_explanation"]
            pid = f"{qid}-q{qi}-a{ai}"
            capture = _ARCHIVE_DATE.search(a.get("source_url") or "")
            corpus.append(
                {
                    "_id": pid,
                    "title": "",
                    "text": text,
                    "metadata": {
                        "question": q.get("question"),
                        "source_url": a.get("source_url"),
                        "source_medium": a.get("source_medium"),
                        "archive_capture_date": "-".join(capture.groups()) if capture else None,
                    },
                }
            )
            relevant[pid] = 1
    return relevant


def download(dest: str | Path) -> Path:
    """Fetch AVeriTeC ``train.json`` and ``dev.json`` into ``dest/averitec`` and write the BEIR view."""
    folder = fetch_all(
        {f"{s}.json": github_raw(_REPO, _COMMIT, f"data/{s}.json") for s in ("train", "dev")}, Path(dest) / FOLDER
    )
    write_beir_view(folder)
    return folder
