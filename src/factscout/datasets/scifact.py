"""SciFact: scientific claims checked against research abstracts.

Wadden et al., 2020, "Fact or Fiction: Verifying Scientific Claims", EMNLP
(https://aclanthology.org/2020.emnlp-main.609). Claims come with the abstracts their source
citation points to (``cited_doc_ids``) and, for SUPPORT/CONTRADICT claims, rationale sentence
indices per evidence abstract; NOT ENOUGH INFO claims have empty evidence.

The view loaded here is BEIR-style retrieval over the 5,183 abstracts: one passage per abstract
(title + the sentences joined), qrels = each claim's cited documents with relevance 1 (NEI
claims included, since their cited abstract is still the document the claim was written from).
Note that the BEIR benchmark's own SciFact qrels list only evidence documents, so scores are
not directly comparable with BEIR tables; ``meta['evidence']`` keeps what is needed for that.

Claim metadata: ``label`` (SUPPORT / CONTRADICT / NEI; absent on the unlabelled test split),
``evidence`` (``{doc_id: [{"sentences": [...], "label": ...}]}``), ``cited_doc_ids``.
"""

from __future__ import annotations

import logging
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factscout.datasets.base import Dataset, DatasetSource, data_root, fetch, register_loader, require_file
from factscout.errors import InputError
from factscout.formats.beir import Qrels
from factscout.formats.jsonl import read_jsonl
from factscout.records import Claim, Passage

log = logging.getLogger(__name__)

SOURCE = DatasetSource(
    name="SciFact",
    url="https://scifact.s3-us-west-2.amazonaws.com/release/latest/data.tar.gz",
    license="claims CC BY 4.0; abstracts ODC-By 1.0 (S2ORC)",
    citation="Wadden, Lin, Lo, Wang, van Zuylen, Cohan, Hajishirzi. Fact or Fiction: Verifying Scientific "
    "Claims. EMNLP 2020.",
)
FOLDER = "scifact"
MINI_FOLDER = "fixtures/scifact_mini"
LABELLED_SPLITS = frozenset({"train", "dev"})
_FILES = ("claims_train.jsonl", "claims_dev.jsonl", "claims_test.jsonl", "corpus.jsonl")


def corpus_path(folder: Path, name: str) -> Path:
    plain = folder / "corpus.jsonl"
    return plain if plain.is_file() else require_file(folder / "corpus.jsonl.gz", name)


def read_abstracts(path: Path) -> dict[str, tuple[str, list[str]]]:
    docs: dict[str, tuple[str, list[str]]] = {}
    for lineno, row in read_jsonl(path):
        doc_id, abstract = row.get("doc_id"), row.get("abstract")
        if doc_id is None or not isinstance(abstract, list) or not all(isinstance(s, str) for s in abstract):
            raise InputError(f"{path}:{lineno}: expected 'doc_id' and 'abstract' (a list of sentences)")
        key = str(doc_id)
        if key in docs:
            raise InputError(f"{path}:{lineno}: duplicate doc_id {key!r}")
        docs[key] = (str(row.get("title") or ""), abstract)
    return docs


def load_abstract_sentences(root: str | Path | None = None, *, mini: bool = False) -> dict[str, list[str]]:
    """``{doc_id: [sentence, ...]}`` of every SciFact abstract, for sentence selection (rationale
    indices in ``meta['evidence']`` index these lists)."""
    folder = (Path(root) if root is not None else data_root()) / (MINI_FOLDER if mini else FOLDER)
    return {doc_id: sentences for doc_id, (_, sentences) in read_abstracts(corpus_path(folder, "scifact")).items()}


def claim_label(path: Path, lineno: int, evidence: dict[str, Any]) -> str:
    labels = {e.get("label") for sets in evidence.values() for e in sets}
    if not labels:
        return "NEI"
    if len(labels) > 1:
        raise InputError(f"{path}:{lineno}: evidence mixes labels {sorted(map(str, labels))}")
    return str(labels.pop())


def read_scifact_format(
    name: str,
    split: str,
    folder: Path,
    claims_file: str,
    *,
    source: DatasetSource = SOURCE,
    labelled: bool = True,
    clean: Callable[[str], str] | None = None,
    id_prefix: str = "",
) -> Dataset:
    """A split in SciFact's layout (``claims_file`` + ``corpus.jsonl[.gz]`` in ``folder``): the
    reader of SciFact and of the datasets published in its format. ``clean`` rewrites each claim
    text (the text as published stays in ``meta['published_text']`` when it changes);
    ``id_prefix`` goes before each claim id (so another dataset's ids cannot collide with SciFact's)."""
    claims_path = require_file(folder / claims_file, name)
    docs = read_abstracts(corpus_path(folder, name))
    claims: list[Claim] = []
    qrels: Qrels = {}
    for lineno, row in read_jsonl(claims_path):
        if row.get("id") is None or not isinstance(row.get("claim"), str):
            raise InputError(f"{claims_path}:{lineno}: expected 'id' and 'claim'")
        claim_id = f"{id_prefix}{row['id']}"
        evidence = row.get("evidence") or {}
        if not isinstance(evidence, dict):
            raise InputError(f"{claims_path}:{lineno}: 'evidence' must be an object")
        cited = [str(d) for d in row.get("cited_doc_ids") or []]
        meta: dict[str, Any] = {"evidence": {str(d): sets for d, sets in evidence.items()}, "cited_doc_ids": cited}
        if labelled:
            meta["label"] = claim_label(claims_path, lineno, evidence)
        text = row["claim"]
        if clean is not None and clean(text) != text:
            meta["published_text"], text = text, clean(text)
        claims.append(Claim(claim_id, text, None, meta))
        missing = [d for d in cited if d not in docs]
        if missing:
            log.warning("%s:%d: cited documents %s are not in the corpus", claims_path, lineno, missing)
        if cited:
            qrels[claim_id] = {d: 1 for d in cited}
    corpus = tuple(Passage(doc_id, doc_id, title, " ".join(sents)) for doc_id, (title, sents) in docs.items())
    return Dataset(name, split, tuple(claims), corpus, qrels, source)


@register_loader("scifact", ("train", "dev", "test"))
def load(split: str, root: Path) -> Dataset:
    """SciFact ``train`` (809 labelled claims here), ``dev`` (kept aside here) or ``test`` (unlabelled)."""
    return read_scifact_format(
        "scifact", split, root / FOLDER, f"claims_{split}.jsonl", labelled=split in LABELLED_SPLITS
    )


@register_loader("scifact_mini", ("train",))
def load_mini(split: str, root: Path) -> Dataset:
    """30 SciFact train claims (10 per label) and 200 abstracts, for fast tests."""
    return read_scifact_format("scifact_mini", split, root / MINI_FOLDER, "claims.jsonl")


def download(dest: str | Path) -> Path:
    """Fetch the SciFact release tarball and unpack its claims and corpus into ``dest/scifact``."""
    folder = Path(dest) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        archive = fetch(SOURCE.url, Path(tmp) / "data.tar.gz")
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar.getmembers():
                name = Path(member.name).name
                if member.isfile() and name in _FILES:
                    extracted = tar.extractfile(member)
                    if extracted is None:
                        continue
                    part = Path(tmp) / name
                    part.write_bytes(extracted.read())
                    part.replace(folder / name)
    return folder
