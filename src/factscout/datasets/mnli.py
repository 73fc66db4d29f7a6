"""MultiNLI dev-matched (MNLI): premise / hypothesis pairs from ten genres of written and spoken English.

Williams, Nangia & Bowman, 2018, "A Broad-Coverage Challenge Corpus for Sentence Understanding
through Inference", NAACL 2018 (https://aclanthology.org/N18-1101). Read from the copy McCoy et al.
published with HANS ("BERTs of a feather do not generalize together", 2020): a TSV of ``index``,
``premise``, ``hypothesis``, ``gold_label`` and how many of 100 BERT fine-tuning runs got the pair
right. That copy has no genre column, so no claim carries a genre; ``correct`` (0-100) and
``difficulty`` (``hard`` < 50 runs right, ``medium`` 50-89, ``easy`` >= 90) stand in for it where a
sample is stratified. ``mnli_contradicting_examples`` (same repository, premise / hypothesis /
label, no header) holds 261 short pairs built around negation: 179 contradiction and 82 neutral
(not all contradictions).

As a stance dataset: the hypothesis is the claim, the premise the evidence (entailment ->
supports, contradiction -> refutes, neutral -> not enough info). Splits ``dev_matched`` (9,815
pairs, ids ``mnli-<index>``), ``contradicting`` (261, ``mnli-contra-<line>``), ``all`` (both).
``meta``: ``premise``, ``label``, ``stance``, ``correct`` and ``difficulty`` (dev_matched only).
Licence: MultiNLI's texts are under the OANC's licence (free use, modification and sharing) and,
for the fiction genre, permissive licences including CC BY-SA 3.0; the HANS repository is MIT.
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

_REPO, _COMMIT = "tommccoy1/hans", "7299f6f657089ce06a0f98e7e81f8d0f5b7741ce"
_PATHS = {
    "mnli_development_set_number_of_correct_responses.txt": "berts_of_a_feather/"
    "mnli_development_set_number_of_correct_responses.txt",
    "mnli_contradicting_examples": "mnli_contradicting_examples",
}
SOURCE = DatasetSource(
    name="MultiNLI dev-matched (HANS copy)",
    url=github_raw(_REPO, _COMMIT, _PATHS["mnli_development_set_number_of_correct_responses.txt"]),
    license="OANC licence (MultiNLI texts; fiction genre under permissive licences incl. CC BY-SA 3.0); "
    "HANS repository MIT",
    citation="Williams, Nangia, Bowman. A Broad-Coverage Challenge Corpus for Sentence Understanding through "
    "Inference. NAACL 2018.",
)
SHA256 = {  # from the data folder's SOURCE.txt
    github_raw(_REPO, _COMMIT, _PATHS["mnli_development_set_number_of_correct_responses.txt"]): (
        "d4f852835e0a2b57dae7da09c23a1c2031bebe3ffea900642d91833677e18051"
    ),
    github_raw(_REPO, _COMMIT, _PATHS["mnli_contradicting_examples"]): (
        "6bb2dd7cb1f9640e53f1c75b76fef32ed392c4643f6c698292d735cc9ae4e940"
    ),
}
FOLDER = "mnli-dev-matched"
DEV_FILE, CONTRADICTING_FILE = _PATHS
HEADER = ["index", "premise", "hypothesis", "gold_label", "number of correct responses (out of 100)"]
STANCE = {"entailment": SUPPORTS, "contradiction": REFUTES, "neutral": NOT_ENOUGH_INFO}


def difficulty(correct: int) -> str:
    """``hard`` (fewer than 50 of 100 BERT runs right), ``medium`` (50-89) or ``easy`` (90-100)."""
    return "hard" if correct < 50 else "medium" if correct < 90 else "easy"


def _pair(claim_id: str, premise: str, hypothesis: str, label: str, where: str, **extra: object) -> Claim:
    premise, hypothesis = " ".join(premise.split()), " ".join(hypothesis.split())
    if label not in STANCE or not premise or not hypothesis:
        raise InputError(f"{where}: expected a premise, a hypothesis and a gold_label of {', '.join(STANCE)}")
    meta = {"premise": premise, "label": label, "stance": STANCE[label], **extra}
    return Claim(claim_id, hypothesis, None, meta)


def _dev(folder: Path) -> list[Claim]:
    path = require_file(folder / DEV_FILE, "mnli")
    claims = []
    for lineno, row in read_delimited(path, "\t", fields=5, header=False, quoted=False):
        if lineno == 1:
            if row != HEADER:
                raise InputError(f"{path}:1: expected the header {' / '.join(HEADER)}")
            continue
        index, premise, hypothesis, label, correct = row
        where = f"{path}:{lineno}"
        if not index.isdigit() or not correct.isdigit() or int(correct) > 100:
            raise InputError(f"{where}: expected a numeric index and a count of correct responses 0-100")
        n = int(correct)
        claims.append(_pair(f"mnli-{index}", premise, hypothesis, label, where, correct=n, difficulty=difficulty(n)))
    return claims


def _contradicting(folder: Path) -> list[Claim]:
    path = require_file(folder / CONTRADICTING_FILE, "mnli")
    return [
        _pair(f"mnli-contra-{lineno}", premise, hypothesis, label, f"{path}:{lineno}")
        for lineno, (premise, hypothesis, label) in read_delimited(path, "\t", fields=3, header=False, quoted=False)
    ]


@register_loader("mnli", ("dev_matched", "contradicting", "all"))
def load(split: str, root: Path) -> Dataset:
    """MNLI ``dev_matched`` (9,815 pairs), ``contradicting`` (261) or ``all`` (both)."""
    folder = root / FOLDER
    claims = []
    if split in ("dev_matched", "all"):
        claims += _dev(folder)
    if split in ("contradicting", "all"):
        claims += _contradicting(folder)
    return Dataset("mnli", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch both files into ``dest/mnli-dev-matched``."""
    return fetch_all({name: github_raw(_REPO, _COMMIT, path) for name, path in _PATHS.items()}, Path(dest) / FOLDER)
