"""Counterfactually-augmented SNLI: SNLI pairs and minimal human revisions that flip their label.

Kaushik, Hovy & Lipton, 2020, "Learning the Difference that Makes a Difference with
Counterfactually-Augmented Data", ICLR 2020 (https://openreview.net/forum?id=Sklgs0NFvr). The
``NLI/all_combined`` files: each sampled SNLI pair with four revisions (premise or hypothesis edited
so that the label changes), ``sentence1`` (premise), ``sentence2`` (hypothesis), ``gold_label``.
The originals come from SNLI, so some pairs may equal SNLI dev / test pairs.

As a stance dataset: the hypothesis is the claim, the premise the evidence (entailment ->
supports, contradiction -> refutes, neutral -> not enough info). Splits ``train`` (8,330 pairs),
``dev`` (1,000), ``test`` (2,000); ids ``snli_cf-<split>-<line>``. ``meta``: ``premise``,
``label``, ``stance``. Licence Apache-2.0 (the repository), texts derived from SNLI (CC BY-SA 4.0).
"""

from __future__ import annotations

from pathlib import Path

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch_all,
    github_raw,
    read_delimited,
    register_loader,
    require_file,
)
from factscout.errors import InputError
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim

_REPO, _COMMIT = "acmi-lab/counterfactually-augmented-data", "6f232a1d2a11462a30ce08fb4825b734ab30828e"
_PATH = "NLI/all_combined/{split}.tsv"
SOURCE = DatasetSource(
    name="Counterfactually-augmented SNLI",
    url=github_raw(_REPO, _COMMIT, _PATH.format(split="train")),
    license="Apache-2.0 (texts derived from SNLI, CC BY-SA 4.0)",
    citation="Kaushik, Hovy, Lipton. Learning the Difference that Makes a Difference with Counterfactually-Augmented "
    "Data. ICLR 2020.",
)
FOLDER = "snli-counterfactual"
SPLITS = ("train", "dev", "test")
HEADER = ["sentence1", "sentence2", "gold_label"]
STANCE = {"entailment": SUPPORTS, "contradiction": REFUTES, "neutral": NOT_ENOUGH_INFO}
SHA256 = {  # from the data folder's SOURCE.txt
    github_raw(_REPO, _COMMIT, _PATH.format(split=split)): digest
    for split, digest in {
        "train": "b04c0e249b71949345afc20f8c31c355533a705a68805492f21cddc49d27234f",
        "dev": "35c585cef5fc68e3713ee4bac83242aa7c4bfc6b51f16e9745b674c358ebd500",
        "test": "585ea3630ed64f6976d5ce1fd8c519c46c102659a012b7e9cbe48ec03503d977",
    }.items()
}


@register_loader("snli_cf", SPLITS)
def load(split: str, root: Path) -> Dataset:
    """Counterfactual SNLI ``train`` (8,330 pairs), ``dev`` (1,000) or ``test`` (2,000)."""
    path = require_file(root / FOLDER / f"{split}.tsv", "snli_cf")
    claims = []
    for lineno, row in read_delimited(path, "\t", fields=3, header=False, quoted=False):
        if lineno == 1:
            if row != HEADER:
                raise InputError(f"{path}:1: expected the header {' / '.join(HEADER)}")
            continue
        premise, hypothesis, label = (" ".join(cell.split()) for cell in row)
        if label not in STANCE or not premise or not hypothesis:
            raise InputError(f"{path}:{lineno}: expected sentence1, sentence2 and a gold_label of {', '.join(STANCE)}")
        meta = {"premise": premise, "label": label, "stance": STANCE[label]}
        claims.append(Claim(f"snli_cf-{split}-{lineno}", hypothesis, None, meta))
    return Dataset("snli_cf", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the three ``all_combined`` files into ``dest/snli-counterfactual``."""
    urls = {f"{s}.tsv": github_raw(_REPO, _COMMIT, _PATH.format(split=s)) for s in SPLITS}
    return fetch_all(urls, Path(dest) / FOLDER)
