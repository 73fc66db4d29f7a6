"""HealthVer: COVID-19 health claims checked against sentences of scientific articles.

Sarrouti, Ben Abacha, M'rabet & Demner-Fushman, 2021, "Evidence-based Fact-Checking of
Health-related Claims", Findings of EMNLP 2021 (https://aclanthology.org/2021.findings-emnlp.297).
Each row pairs a claim (from a web answer to one of 58 health questions, ``topic_ip``) with
evidence from a CORD-19 article, labelled Supports / Refutes / Neutral by experts. Only the
``dev`` file (1,917 rows) is here; train and test are kept aside.

One :class:`Claim` per row (id ``hv<row id>``; a claim text recurs across rows with different
evidence), ``meta``: ``label`` (as published), ``stance`` (factscout's stance label),
``evidence`` (the evidence text), ``topic`` and ``question``. The corpus is the pool of distinct
evidence texts (ids: first 12 hex digits of their SHA-1), qrels = each row's evidence.

Since only dev is here, factscout both trains and chooses on it: :func:`dev_part_ids` keeps a
fixed share of the *topics* (never of rows, so no claim text or evidence crosses the line) as
the part models are chosen on; :func:`fit_part_ids` is the rest, the part training may use.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch,
    github_raw,
    read_delimited,
    register_loader,
    require_file,
)
from factscout.errors import InputError
from factscout.formats.beir import Qrels
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim, Passage

_REPO, _COMMIT = "sarrouti/HealthVer", "b20ac99ceed62f5264a319fa25a854df1668d85b"
SOURCE = DatasetSource(
    name="HealthVer",
    url=github_raw(_REPO, _COMMIT, "data/healthver_dev.csv"),
    license="none stated in the repository (research data of the NIH/NLM authors)",
    citation="Sarrouti, Ben Abacha, M'rabet, Demner-Fushman. Evidence-based Fact-Checking of Health-related "
    "Claims. Findings of EMNLP 2021.",
)
FOLDER = "healthver"
DATA_FILE = "healthver_dev.csv"
STANCE = {"Supports": SUPPORTS, "Refutes": REFUTES, "Neutral": NOT_ENOUGH_INFO}
DEV_PART_SHARE = 0.4
"""The share of topics whose rows form the dev part (chosen on), by a hash of the topic id."""


def evidence_id(text: str) -> str:
    """The pool id of an evidence text: the first 12 hex digits of its SHA-1."""
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def in_dev_part(topic: str) -> bool:
    """Whether ``topic``'s rows belong to the dev part (a fixed hash, so every run agrees)."""
    return int(hashlib.sha1(f"healthver-topic-{topic}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < DEV_PART_SHARE


@register_loader("healthver", ("dev",))
def load(split: str, root: Path) -> Dataset:
    """The 1,917 HealthVer dev rows as claims, with the pool of their evidence texts."""
    return _read(split, require_file(root / FOLDER / DATA_FILE, "healthver"))


def load_file(path: str | Path, *, split: str = "eval") -> Dataset:
    """Any CSV in HealthVer's columns (e.g. its test split), read as :func:`load` reads dev."""
    return _read(split, require_file(Path(path), "healthver"))


def _read(split: str, path: Path) -> Dataset:
    claims: list[Claim] = []
    corpus: dict[str, Passage] = {}
    qrels: Qrels = {}
    for lineno, row in read_delimited(path, ",", fields=6, header=True):
        row_id, evidence, claim, label, topic, question = (cell.strip() for cell in row)
        if label not in STANCE or not claim or not evidence:
            raise InputError(f"{path}:{lineno}: expected a claim, an evidence text and a label in {sorted(STANCE)}")
        claim_id, eid = f"hv{row_id}", evidence_id(evidence)
        meta = {"label": label, "stance": STANCE[label], "evidence": evidence, "topic": topic, "question": question}
        claims.append(Claim(claim_id, " ".join(claim.split()), None, meta))
        corpus.setdefault(eid, Passage(eid, eid, "", evidence))
        qrels[claim_id] = {eid: 1}
    return Dataset("healthver", split, tuple(claims), tuple(corpus.values()), qrels, SOURCE)


@lru_cache(maxsize=4)
def _parts(root: str | None) -> tuple[frozenset[str], frozenset[str]]:
    from factscout.datasets.base import load_dataset

    claims = load_dataset("healthver", "dev", root).claims
    dev = frozenset(c.claim_id for c in claims if in_dev_part(str(c.meta["topic"])))
    return dev, frozenset(c.claim_id for c in claims) - dev


def dev_part_ids(root: str | Path | None = None) -> frozenset[str]:
    """The claim ids of the dev part (:data:`DEV_PART_SHARE` of the topics): never trained on."""
    return _parts(None if root is None else str(root))[0]


def fit_part_ids(root: str | Path | None = None) -> frozenset[str]:
    """The claim ids of the other topics: what training may use."""
    return _parts(None if root is None else str(root))[1]


def download(dest: str | Path) -> Path:
    """Fetch ``healthver_dev.csv`` into ``dest/healthver`` (the dataset's other files stay where they are)."""
    folder = Path(dest) / FOLDER
    fetch(SOURCE.url, folder / DATA_FILE)
    return folder
