"""COVID-Fact: COVID-19 claims from Reddit with gold evidence sentences and counter-claims.

Saakyan, Chakrabarty & Muresan, 2021, "COVID-Fact: Fact Extraction and Verification of
Real-World Claims on COVID-19 Pandemic", ACL (https://aclanthology.org/2021.acl-long.165).
REFUTED claims are automatically generated counter-claims that share the evidence of the
original SUPPORTED claim.

One split, ``all`` (4,086 claims, ids ``cf<line index>``). The corpus is the closed pool of
the BEIR view (``beir/``): every distinct gold evidence sentence once (3,219, ids = the first
12 hex digits of the sentence's SHA-1), qrels = each claim's own evidence sentences.
Metadata: ``label`` (SUPPORTED / REFUTED), ``evidence`` (the sentences), ``gold_source``
(the claim's source, not the evidence's), ``flair`` (the subreddit flair).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch,
    github_raw,
    keep_qrels,
    meta_dict,
    register_loader,
    require_file,
)
from factscout.errors import InputError
from factscout.formats.beir import read_corpus, read_qrels, write_qrels
from factscout.formats.jsonl import read_jsonl, write_jsonl
from factscout.records import Claim

_REPO, _COMMIT = "asaakyan/covidfact", "ceeb613cde5a6c19dea4f2c165654e510ff52b10"
SOURCE = DatasetSource(
    name="COVID-Fact",
    url=github_raw(_REPO, _COMMIT, "COVIDFACT_dataset.jsonl"),
    license="none stated",
    citation="Saakyan, Chakrabarty, Muresan. COVID-Fact: Fact Extraction and Verification of Real-World Claims on "
    "COVID-19 Pandemic. ACL 2021.",
)
FOLDER = "covidfact"
DATA_FILE = "COVIDFACT_dataset.jsonl"


def sentence_id(sentence: str) -> str:
    """The pool id of an evidence sentence: the first 12 hex digits of its SHA-1."""
    return hashlib.sha1(sentence.encode()).hexdigest()[:12]


@register_loader("covidfact", ("all",))
def load(split: str, root: Path) -> Dataset:
    """All 4,086 COVID-Fact claims with the pool of their 3,219 gold evidence sentences."""
    folder = root / FOLDER
    path = require_file(folder / DATA_FILE, "covidfact")
    claims = []
    for lineno, row in read_jsonl(path):
        if not isinstance(row.get("claim"), str) or not isinstance(row.get("evidence", []), list):
            raise InputError(f"{path}:{lineno}: expected 'claim' and an 'evidence' list")
        meta = meta_dict(
            label=row.get("label"),
            evidence=row.get("evidence"),
            gold_source=row.get("gold_source"),
            flair=row.get("flair"),
        )
        claims.append(Claim(f"cf{lineno - 1}", row["claim"], None, meta))
    corpus = tuple(read_corpus(require_file(folder / "beir" / "corpus.jsonl", "covidfact")))
    kept = tuple(claims)
    qrels = keep_qrels(read_qrels(require_file(folder / "beir" / "qrels" / "test.tsv", "covidfact")), kept)
    return Dataset("covidfact", split, kept, corpus, qrels, SOURCE)


def write_beir_view(folder: str | Path) -> Path:
    """Write ``folder/beir/`` (sentence pool, queries, qrels) from ``folder/COVIDFACT_dataset.jsonl``."""
    folder = Path(folder)
    corpus: dict[str, dict[str, Any]] = {}
    queries: list[dict[str, Any]] = []
    qrels: dict[str, dict[str, int]] = {}
    for lineno, c in read_jsonl(folder / DATA_FILE):
        qid = f"cf{lineno - 1}"
        meta = {"label": c.get("label"), "flair": c.get("flair"), "gold_source": c.get("gold_source")}
        queries.append({"_id": qid, "text": c.get("claim"), "metadata": meta})
        for sentence in dict.fromkeys(c.get("evidence") or []):
            sid = sentence_id(sentence)
            corpus.setdefault(sid, {"_id": sid, "title": "", "text": sentence})
            qrels.setdefault(qid, {})[sid] = 1
    write_jsonl(folder / "beir" / "corpus.jsonl", corpus.values())
    write_jsonl(folder / "beir" / "queries.jsonl", queries)
    write_qrels(folder / "beir" / "qrels" / "test.tsv", qrels)
    return folder / "beir"


def download(dest: str | Path) -> Path:
    """Fetch ``COVIDFACT_dataset.jsonl`` into ``dest/covidfact`` and write the BEIR view."""
    folder = Path(dest) / FOLDER
    fetch(SOURCE.url, folder / DATA_FILE)
    write_beir_view(folder)
    return folder
