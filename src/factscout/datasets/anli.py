"""Adversarial NLI (ANLI), the dev sets of rounds 1-3 with their annotations.

Nie, Williams, Dinan, Bansal, Weston & Kiela, 2020, "Adversarial NLI: A New Benchmark for
Natural Language Understanding", ACL 2020 (https://aclanthology.org/2020.acl-main.441), and
Williams, Thrush & Kiela, 2022, "ANLIzing the Adversarial Natural Language Inference Dataset"
(the ``anli_annot_v0.2`` files read here). Premises (``context``) from Wikipedia and other text,
hypotheses (``statement``) written to fool strong NLI models; labels e / n / c.

As a stance dataset: the hypothesis is the claim, the premise the evidence (entailment ->
supports, contradiction -> refutes, neutral -> not enough info). Splits ``dev`` (all three
rounds, 3,200 pairs), ``r1``, ``r2``, ``r3``. One :class:`Claim` per pair (id = its ``uid``),
``meta``: ``premise``, ``label`` (e/n/c), ``stance``, ``reason``, ``round``, ``tags``. No corpus.
Licence CC BY-NC 4.0 (non-commercial: pairs made from it carry that licence).
"""

from __future__ import annotations

from pathlib import Path

from factscout.datasets.base import Dataset, DatasetSource, fetch_all, github_raw, register_loader, require_file
from factscout.errors import InputError
from factscout.formats.jsonl import open_text
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim

_REPO, _COMMIT = "facebookresearch/anli", "b5ce27af54a53bd495af7260fdc485000eed15f8"
_PATH = "anlizinganli/anli_annot_v0.2/ANLI_analysis_{r}_dev.csv"
SOURCE = DatasetSource(
    name="ANLI (dev, annotated)",
    url=github_raw(_REPO, _COMMIT, _PATH.format(r="r1")),
    license="CC BY-NC 4.0",
    citation="Nie, Williams, Dinan, Bansal, Weston, Kiela. Adversarial NLI: A New Benchmark for Natural Language "
    "Understanding. ACL 2020.",
)
FOLDER = "anli-dev"
ROUNDS = ("r1", "r2", "r3")
STANCE = {"e": SUPPORTS, "c": REFUTES, "n": NOT_ENOUGH_INFO}


def _file(r: str) -> str:
    return Path(_PATH.format(r=r)).name


def _read_round(folder: Path, r: str) -> list[Claim]:
    import csv

    path = require_file(folder / _file(r), "anli")
    claims = []
    with open_text(path) as f:
        for lineno, row in enumerate(csv.DictReader(f), start=2):
            label, premise, statement = row.get("gold_label"), row.get("context"), row.get("statement")
            if label not in STANCE or not premise or not statement or not row.get("uid"):
                raise InputError(f"{path}: record {lineno - 1}: expected uid, context, statement and gold_label e/n/c")
            meta = {
                "premise": " ".join(premise.split()),
                "label": label,
                "stance": STANCE[label],
                "reason": row.get("reason") or "",
                "round": r,
                "tags": row.get("tags") or "",
            }
            claims.append(Claim(str(row["uid"]), " ".join(statement.split()), None, meta))
    return claims


@register_loader("anli", ("dev", *ROUNDS))
def load(split: str, root: Path) -> Dataset:
    """ANLI dev, all rounds (``dev``) or one round (``r1``/``r2``/``r3``)."""
    rounds = ROUNDS if split == "dev" else (split,)
    claims = [c for r in rounds for c in _read_round(root / FOLDER, r)]
    return Dataset("anli", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the three annotated dev files into ``dest/anli-dev``."""
    return fetch_all({_file(r): github_raw(_REPO, _COMMIT, _PATH.format(r=r)) for r in ROUNDS}, Path(dest) / FOLDER)
