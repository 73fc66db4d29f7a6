"""GLUE RTE: two-way textual entailment of news and Wikipedia text (PASCAL RTE 1-3 and 5).

Dagan, Glickman & Magnini, 2006, "The PASCAL Recognising Textual Entailment Challenge" (and RTE
2, 3, 5), as distributed by GLUE (Wang et al., 2019, "GLUE: A Multi-Task Benchmark and Analysis
Platform for Natural Language Understanding", ICLR 2019, https://openreview.net/forum?id=rJ4km2R5t7).
``train.tsv`` (2,490 pairs) and ``dev.tsv`` (277): ``sentence1`` (text), ``sentence2``
(hypothesis), ``label`` (0 = entailment, 1 = not entailment), ``idx``. Read from a public copy
of the GLUE files (the folder's SOURCE.txt).

As a stance dataset (auxiliary): the hypothesis is the claim, the text the evidence; entailment
-> supports. "Not entailment" joins contradiction and neutral, so it has no stance (``stance``
None); ``two_way`` says which side a pair is on. Splits ``train``, ``dev``; ids
``rte-<split>-<idx>``. ``meta``: ``premise``, ``label`` (0 / 1), ``two_way`` (entailment /
not_entailment), ``stance``. Licence: none stated (PASCAL / NIST data as distributed by GLUE,
research use).
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
from factscout.records import SUPPORTS, Claim

_REPO, _COMMIT = "Ji-Yishan/MIEC-FYP", "250635701007f7f2dc00b63ce2cbc3dfe104b4e0"
_PATH = "RTE/{split}.tsv"
SOURCE = DatasetSource(
    name="GLUE RTE",
    url=github_raw(_REPO, _COMMIT, _PATH.format(split="train")),
    license="none stated (RTE 1-3, 5 PASCAL / NIST data as distributed by GLUE; research use)",
    citation="Dagan, Glickman, Magnini. The PASCAL Recognising Textual Entailment Challenge. MLCW 2005; "
    "Wang, Singh, Michael, Hill, Levy, Bowman. GLUE: A Multi-Task Benchmark and Analysis Platform for Natural "
    "Language Understanding. ICLR 2019.",
)
SHA256 = {  # from the data folder's SOURCE.txt
    github_raw(
        _REPO, _COMMIT, _PATH.format(split="train")
    ): "0222fd1ea26f263d325d28f5bf5cee4c58dd91cf15f1efa87f79eb714a991dc4",
    github_raw(
        _REPO, _COMMIT, _PATH.format(split="dev")
    ): "e7e42b7ee79c36ebd780ebbdba525b939017da4ef9624c9e78b9ac2e69e36c28",
}
FOLDER = "glue-rte"
SPLITS = ("train", "dev")
HEADER = ["sentence1", "sentence2", "label", "idx"]
TWO_WAY = {"0": "entailment", "1": "not_entailment"}


@register_loader("rte", SPLITS)
def load(split: str, root: Path) -> Dataset:
    """RTE ``train`` (2,490 pairs) or ``dev`` (277)."""
    path = require_file(root / FOLDER / f"{split}.tsv", "rte")
    claims = []
    for lineno, row in read_delimited(path, "\t", fields=4, header=False, quoted=False):
        if lineno == 1:
            if row != HEADER:
                raise InputError(f"{path}:1: expected the header {' / '.join(HEADER)}")
            continue
        premise, hypothesis = (" ".join(cell.split()) for cell in row[:2])
        label, idx = row[2].strip(), row[3].strip()
        if label not in TWO_WAY or not idx.isdigit() or not premise or not hypothesis:
            raise InputError(f"{path}:{lineno}: expected sentence1, sentence2, a label 0 / 1 and a numeric idx")
        two_way = TWO_WAY[label]
        meta = {
            "premise": premise,
            "label": int(label),
            "two_way": two_way,
            "stance": SUPPORTS if label == "0" else None,
        }
        claims.append(Claim(f"rte-{split}-{idx}", hypothesis, None, meta))
    return Dataset("rte", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch ``train.tsv`` and ``dev.tsv`` into ``dest/glue-rte``."""
    urls = {f"{s}.tsv": github_raw(_REPO, _COMMIT, _PATH.format(split=s)) for s in SPLITS}
    return fetch_all(urls, Path(dest) / FOLDER)
