"""Citation-Integrity: citation sentences checked against the abstract they cite.

Sarol, Ming, Alizadeh & Kilicoglu, 2024, "Assessing Citation Integrity in Biomedical
Publications: Corpus Annotation and NLP Models", Bioinformatics 40(7)
(https://doi.org/10.1093/bioinformatics/btae420). Each claim is a sentence of a citing paper
that cites one abstract; the abstract is labelled SUPPORT / REFUTE (SciFact's CONTRADICT) or
has no evidence (NEI), with rationale sentence indices. Claim ids are the published ones after
:data:`ID_PREFIX`. Read from the copy in SciFact's format
(``claims_train.jsonl``, ``claims_dev.jsonl``, ``corpus.jsonl``); the test split is kept aside here.

Claim texts keep their words but lose the citation markers (``[<|multi_cit|>]``, ``[<|cit|>,7]``,
``(<|cit|>)``): a stance model reads "... respiratory failure." rather than a placeholder; the
text as published is in ``meta['published_text']``. ``meta['label']`` uses SciFact's vocabulary
(SUPPORT / CONTRADICT / NEI), ``meta['evidence']`` and ``meta['cited_doc_ids']`` as SciFact's.
"""

from __future__ import annotations

import re
from pathlib import Path

from factscout.datasets.base import Dataset, DatasetSource, fetch_all, github_raw, register_loader
from factscout.datasets.scifact import read_scifact_format

_REPO, _COMMIT = "jedick/MLE-capstone-project", "667a81990e0613998e8c3856603487269f21e91d"
_FILES = ("claims_train.jsonl", "claims_dev.jsonl", "corpus.jsonl")
SOURCE = DatasetSource(
    name="Citation-Integrity",
    url=github_raw(_REPO, _COMMIT, "data/citint/claims_train.jsonl"),
    license="none stated in the copy read here; see the authors' repository ScienceNLP-Lab/Citation-Integrity",
    citation="Sarol, Ming, Alizadeh, Kilicoglu. Assessing Citation Integrity in Biomedical Publications: Corpus "
    "Annotation and NLP Models. Bioinformatics 2024.",
)
FOLDER = "citation-integrity"
ID_PREFIX = "ci"
"""Before each published claim id (numbers, as SciFact's): ``ci17`` is the file's claim 17."""

_MARKER = re.compile(r"\s*[\[(][^\[\]()]*<\|[a-z_]+\|>[^\[\]()]*[\])]|\s*<\|[a-z_]+\|>")


def clean_claim(text: str) -> str:
    """``text`` without its citation markers and the space they leave before punctuation."""
    out = _MARKER.sub("", text)
    out = re.sub(r"\s+([.,;:])", r"\1", out)
    return " ".join(out.split()) or text


def _map_refute(ds: Dataset) -> Dataset:
    """SciFact's label vocabulary: the published REFUTE is SciFact's CONTRADICT."""
    from dataclasses import replace

    from factscout.records import Claim

    claims = []
    for c in ds.claims:
        meta = dict(c.meta)
        if meta.get("label") == "REFUTE":
            meta["label"] = "CONTRADICT"
        claims.append(Claim(c.claim_id, c.text, c.date, meta))
    return replace(ds, claims=tuple(claims))


@register_loader("citint", ("train", "dev"))
def load(split: str, root: Path) -> Dataset:
    """Citation-Integrity ``train`` (2,138 claims) or ``dev`` (316), with the 3,063 cited abstracts."""
    ds = read_scifact_format(
        "citint", split, root / FOLDER, f"claims_{split}.jsonl", source=SOURCE, clean=clean_claim, id_prefix=ID_PREFIX
    )
    return _map_refute(ds)


def load_file(claims_path: str | Path, *, root: str | Path | None = None, split: str = "eval") -> Dataset:
    """Any claims file in SciFact's layout citing the Citation-Integrity corpus (e.g. its test split)."""
    from factscout.datasets.base import data_root, require_file

    path = require_file(Path(claims_path), "citint").resolve()  # an absolute name: the folder is ignored
    folder = Path(root or data_root()) / FOLDER
    return _map_refute(
        read_scifact_format("citint", split, folder, str(path), source=SOURCE, clean=clean_claim, id_prefix=ID_PREFIX)
    )


def load_abstract_sentences(root: str | Path | None = None) -> dict[str, list[str]]:
    """``{doc_id: [sentence, ...]}`` of the 3,063 cited abstracts (evidence indices index these lists)."""
    from factscout.datasets.base import data_root
    from factscout.datasets.scifact import corpus_path, read_abstracts

    folder = Path(root or data_root()) / FOLDER
    return {d: sentences for d, (_, sentences) in read_abstracts(corpus_path(folder, "citint")).items()}


def download(dest: str | Path) -> Path:
    """Fetch the three files into ``dest/citation-integrity``."""
    return fetch_all({name: github_raw(_REPO, _COMMIT, f"data/citint/{name}") for name in _FILES}, Path(dest) / FOLDER)
