"""QuanTemp (partial): numerical claims with generated sub-questions and a taxonomy subset.

Venktesh V, Anand, Anand & Setty, 2024, "QuanTemp: A real-world open-domain benchmark for
fact-checking numerical claims", SIGIR (https://doi.org/10.1145/3626772.3657874). Only two files
of the benchmark are public in its repository: no verdict labels and no evidence corpus here.

``test``
    ``test_claimdecomp.csv``: 2,495 test claims with the ClaimDecomp-style yes/no sub-questions
    the authors generated, as ``meta['questions']`` (a clean list). The questions column is one
    string joined by "Next Question:" separators with irregular whitespace; one row runs on into
    sub-questions of other claims after a "Claim:" line, which are cut off.
``taxonomy``
    ``complex_num_facts_categorized_subset.csv``: numerical claims labelled ``statistical``,
    ``temporal``, ``comparison`` or ``interval`` in ``meta['taxonomy']``. The file's 309 rows
    hold only 157 distinct claims (most are repeated 2 to 9 times); each distinct claim is one
    :class:`Claim` with ``meta['rows']`` (its data rows) and ``meta['taxonomy_labels']`` (the label
    of every row, in order; one claim is labelled both temporal and statistical, its
    ``taxonomy`` is the first row's label).

Both files are '@'-separated with double-quoted fields. Claim ids are ``test-<row>`` and
``taxonomy-<row of first occurrence>`` (0-based data rows).
"""

from __future__ import annotations

import logging
import re
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
from factscout.records import Claim

log = logging.getLogger(__name__)

_REPO, _COMMIT = "factiverse/QuanTemp", "86278dbfac5fcbc1ce600052f9bcfc42aa75207a"
FILES = {
    "test": ("test_claimdecomp.csv", "data/decomposed_questions/test/test_claimdecomp.csv"),
    "taxonomy": ("complex_num_facts_categorized_subset.csv", "data/complex_num_facts_categorized_subset.csv"),
}
SOURCE = DatasetSource(
    name="QuanTemp (partial)",
    url=github_raw(_REPO, _COMMIT, FILES["test"][1]),
    license="CC BY-NC 4.0",
    citation="Venktesh V, Anand, Anand, Setty. QuanTemp: A real-world open-domain benchmark for fact-checking "
    "numerical claims. SIGIR 2024.",
)
FOLDER = "quantemp-partial"
TAXONOMY = ("statistical", "temporal", "comparison", "interval")

_NEXT_QUESTION = re.compile(r"next\s+questions?\s*:", re.IGNORECASE)
_RUN_ON_CLAIM = re.compile(r"^\s*claim\s*:", re.IGNORECASE | re.MULTILINE)
_LIST_MARK = re.compile(r"^(?:(?:sub-?)?questions?\s*\d*\s*[:.)]|\d+\s*[.):]|[-*•])\s*", re.IGNORECASE)


def parse_questions(text: str) -> list[str]:
    """The sub-questions in one generated-questions cell, whitespace-normalised and de-duplicated.

    Questions are separated by "Next Question:" (any case and spacing, also "Next Questions:");
    anything from a line starting "Claim:" on belongs to another claim and is dropped; list
    markers ("1.", "Question 2:", "-") are removed.
    """
    run_on = _RUN_ON_CLAIM.search(text)
    if run_on is not None:
        text = text[: run_on.start()]
    questions = []
    for part in _NEXT_QUESTION.split(text):
        question = _LIST_MARK.sub("", " ".join(part.split())).strip()
        if question:
            questions.append(question)
    return list(dict.fromkeys(questions))


def _test_claims(path: Path) -> list[Claim]:
    claims = []
    for row, (lineno, (claim, questions)) in enumerate(read_delimited(path, "@", fields=2, header=True)):
        parsed = parse_questions(questions)
        if not parsed:
            log.warning("%s:%d: no sub-questions", path, lineno)
        claims.append(Claim(f"test-{row}", claim.strip(), None, {"questions": parsed}))
    return claims


def _taxonomy_claims(path: Path) -> list[Claim]:
    first: dict[str, str] = {}
    rows: dict[str, list[int]] = {}
    labels: dict[str, list[str]] = {}
    for row, (lineno, (claim, label)) in enumerate(read_delimited(path, "@", fields=2, header=True)):
        text, tag = claim.strip(), label.strip().lower()
        if tag not in TAXONOMY:
            log.warning("%s:%d: unknown taxonomy label %r", path, lineno, label)
        first.setdefault(text, f"taxonomy-{row}")
        rows.setdefault(text, []).append(row)
        labels.setdefault(text, []).append(tag)
    claims = []
    for text, claim_id in first.items():
        if len(set(labels[text])) > 1:
            log.info("%s: claim %s has labels %s; keeping the first", path, claim_id, labels[text])
        meta = {"taxonomy": labels[text][0], "taxonomy_labels": labels[text], "rows": rows[text]}
        claims.append(Claim(claim_id, text, None, meta))
    return claims


@register_loader("quantemp", ("test", "taxonomy"))
def load(split: str, root: Path) -> Dataset:
    """QuanTemp ``test`` claims with generated sub-questions, or the ``taxonomy`` subset."""
    path = require_file(root / FOLDER / FILES[split][0], "quantemp")
    claims = _test_claims(path) if split == "test" else _taxonomy_claims(path)
    return Dataset("quantemp", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the two public QuanTemp files into ``dest/quantemp-partial``."""
    urls = {name: github_raw(_REPO, _COMMIT, path) for name, path in FILES.values()}
    return fetch_all(urls, Path(dest) / FOLDER)
