"""Check-COVID: news claims about COVID-19 checked against scientific abstracts.

Wang, Wu, Liu, Chen, Ren, Luo & McKeown, 2023, "Check-COVID: Fact-Checking COVID-19 News Claims
with Scientific Evidence", Findings of ACL 2023 (https://aclanthology.org/2023.findings-acl.888).
Claims as written by journalists (``is_auth``) or composed by annotators from them, each paired
with one of 347 CORD-19 abstracts and labelled SUPPORT / REFUTE / NOTENOUGHINFO with the
abstract's evidence sentence indices (PRIMARY or SUPPLEMENTARY). ``train`` and ``dev`` are here;
the test split is kept aside.

The view loaded here is the closed pool of the paper's end-to-end setting: one passage per
abstract (title + sentences), qrels = each claim's abstract. Metadata in SciFact's layout, so
every SciFact consumer reads it: ``label`` (SUPPORT / CONTRADICT / NEI), ``evidence``
(``{cord_id: [{"sentences": [...], "label": ...}]}``, empty for NEI claims as in SciFact),
``cited_doc_ids``; plus ``published_label``, ``nei_sentences`` (the indices an NEI claim's
annotators pointed at: on topic, not settling it), ``is_auth``. Licence: MIT.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch_all,
    github_raw,
    register_loader,
    require_file,
)
from factscout.errors import InputError
from factscout.formats.beir import Qrels
from factscout.formats.jsonl import read_jsonl
from factscout.records import Claim, Passage

_REPO, _COMMIT = "posuer/Check-COVID", "3ae70f8cac4df13a3ce56878e20d8e76790e422d"
SOURCE = DatasetSource(
    name="Check-COVID",
    url=github_raw(_REPO, _COMMIT, "Check-COVID/corpus.json"),
    license="MIT",
    citation="Wang, Wu, Liu, Chen, Ren, Luo, McKeown. Check-COVID: Fact-Checking COVID-19 News Claims with "
    "Scientific Evidence. Findings of ACL 2023.",
)
FOLDER = "check-covid"
_CLAIM_FILES = {s: f"{s}/covidCheck_{s}_composed+extracted.json" for s in ("train", "dev")}
_LABELS = {"SUPPORT": "SUPPORT", "REFUTE": "CONTRADICT", "NOTENOUGHINFO": "NEI"}


def load_abstract_sentences(root: str | Path | None = None) -> dict[str, list[str]]:
    """``{cord_id: [sentence, ...]}`` of the 347 abstracts (evidence indices index these lists)."""
    from factscout.datasets.base import data_root

    return {d: sents for d, (_, sents) in _abstracts((Path(root) if root else data_root()) / FOLDER).items()}


def _abstracts(folder: Path) -> dict[str, tuple[str, list[str]]]:
    path = require_file(folder / "corpus.json", "checkcovid")
    docs: dict[str, tuple[str, list[str]]] = {}
    for lineno, row in read_jsonl(path):
        doc_id, abstract = row.get("cord_id"), row.get("abstract")
        if not isinstance(doc_id, str) or not isinstance(abstract, list):
            raise InputError(f"{path}:{lineno}: expected 'cord_id' and 'abstract' (a list of sentences)")
        docs[doc_id] = (str(row.get("title") or ""), [str(s) for s in abstract])
    return docs


@register_loader("checkcovid", ("dev", "train"))
def load(split: str, root: Path) -> Dataset:
    """Check-COVID ``dev`` (207 claims) or ``train`` (1,068) with the pool of 347 abstracts."""
    return _read(split, require_file(root / FOLDER / _CLAIM_FILES[split], "checkcovid"), root / FOLDER)


def load_file(claims_path: str | Path, *, root: str | Path | None = None, split: str = "eval") -> Dataset:
    """Any claims file in Check-COVID's layout (e.g. its test split) against the 347 abstracts of
    ``root`` (default: the data folder)."""
    from factscout.datasets.base import data_root

    return _read(split, require_file(Path(claims_path), "checkcovid"), Path(root or data_root()) / FOLDER)


def _read(split: str, path: Path, folder: Path) -> Dataset:
    docs = _abstracts(folder)
    claims: list[Claim] = []
    qrels: Qrels = {}
    for lineno, row in read_jsonl(path):
        label, doc_id, text = row.get("label"), row.get("cord_id"), row.get("claim")
        if label not in _LABELS or not isinstance(doc_id, str) or not isinstance(text, str) or not text.strip():
            raise InputError(f"{path}:{lineno}: expected 'claim', 'cord_id' and a label in {sorted(_LABELS)}")
        if doc_id not in docs:
            raise InputError(f"{path}:{lineno}: cord_id {doc_id!r} is not in corpus.json")
        indices = sorted({int(e["sent_index"]) for e in row.get("evidence_set") or []})
        if any(not 0 <= i < len(docs[doc_id][1]) for i in indices):
            raise InputError(f"{path}:{lineno}: an evidence index is outside abstract {doc_id!r}")
        ours = _LABELS[label]
        meta: dict[str, Any] = {
            "label": ours,
            "published_label": label,
            "evidence": {} if ours == "NEI" else {doc_id: [{"sentences": indices, "label": ours}]},
            "cited_doc_ids": [doc_id],
            "is_auth": bool(row.get("is_auth")),
        }
        if ours == "NEI":
            meta["nei_sentences"] = indices
        claims.append(Claim(str(row.get("id")), " ".join(text.split()), None, meta))
        qrels[str(row.get("id"))] = {doc_id: 1}
    corpus = tuple(Passage(d, d, title, " ".join(sents)) for d, (title, sents) in docs.items())
    return Dataset("checkcovid", split, tuple(claims), corpus, qrels, SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the corpus, the train and dev claims and the LICENSE into ``dest/check-covid``."""
    folder = Path(dest) / FOLDER
    files = {"corpus.json": "Check-COVID/corpus.json", "LICENSE": "LICENSE"}
    files |= {name: f"Check-COVID/{name}" for name in _CLAIM_FILES.values()}
    return fetch_all({name: github_raw(_REPO, _COMMIT, path) for name, path in files.items()}, folder)
