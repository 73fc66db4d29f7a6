"""HoVer: multi-hop claims over Wikipedia, each needing 2 to 4 documents.

Jiang et al., 2020, "HoVer: A Dataset for Many-Hop Fact Extraction And Claim Verification",
Findings of EMNLP (https://aclanthology.org/2020.findings-emnlp.309). Good for asking how many
sub-queries a claim needs; the Wikipedia corpus (HotpotQA 2017 abstracts) is not loaded.

Claim ids are the data's ``uid``. Metadata: ``label`` (SUPPORTED / NOT_SUPPORTED),
``num_hops``, ``supporting_facts`` (``[[wikipedia_title, sentence_index], ...]``),
``hpqa_id``; the test split has claims only.
"""

from __future__ import annotations

from pathlib import Path

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch_all,
    github_raw,
    meta_dict,
    read_json,
    register_loader,
    require_file,
)
from factscout.errors import InputError
from factscout.records import Claim

_REPO, _COMMIT = "hover-nlp/hover", "39b84697f196308f398a251a7aea9b82ae0f0562"
SOURCE = DatasetSource(
    name="HoVer",
    url=github_raw(_REPO, _COMMIT, "data/hover/hover_dev_release_v1.1.json"),
    license="CC BY-SA 4.0 (data); MIT (code)",
    citation="Jiang, Bordia, Zhong, Dognin, Singh, Bansal. HoVer: A Dataset for Many-Hop Fact Extraction And Claim "
    "Verification. Findings of EMNLP 2020.",
)
FOLDER = "hover"


def _file(split: str) -> str:
    return f"hover_{split}_release_v1.1.json"


@register_loader("hover", ("dev", "test", "train"))
def load(split: str, root: Path) -> Dataset:
    """HoVer ``dev`` (4,000 labelled claims), ``test`` (4,000 unlabelled); ``train`` where downloaded."""
    path = require_file(root / FOLDER / _file(split), "hover")
    rows = read_json(path)
    if not isinstance(rows, list):
        raise InputError(f"{path}: expected a JSON list of claims")
    claims = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not row.get("uid") or not isinstance(row.get("claim"), str):
            raise InputError(f"{path}: claim #{i} needs 'uid' and 'claim'")
        meta = meta_dict(
            label=row.get("label"),
            num_hops=row.get("num_hops"),
            supporting_facts=row.get("supporting_facts"),
            hpqa_id=row.get("hpqa_id"),
        )
        claims.append(Claim(str(row["uid"]), row["claim"], None, meta))
    return Dataset("hover", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the HoVer train, dev and test releases into ``dest/hover``."""
    urls = {_file(s): github_raw(_REPO, _COMMIT, f"data/hover/{_file(s)}") for s in ("train", "dev", "test")}
    return fetch_all(urls, Path(dest) / FOLDER)
