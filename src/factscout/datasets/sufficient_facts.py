"""SufficientFacts: fact-checking evidence with a part removed, judged still enough or not.

Atanasova, Simonsen, Lioma & Augenstein, 2022, "Fact Checking with Insufficient Evidence", TACL 10
(https://aclanthology.org/2022.tacl-1.43). Claims from FEVER (1,200), HoVer (1,200) and VitaminC
(600) whose gold evidence had a constituent or a sentence removed; crowd workers said whether what
is left is ``ENOUGH -- IRRELEVANT`` (the removed part did not matter), ``ENOUGH -- REPEATED`` (it
is said again in what is left) or ``NOT ENOUGH``. Fields (the folder's README.md): ``claim``,
``evidence`` (``[[title, sentence], ...]``, the reduced evidence), ``label_before`` (the original
SUPPORTS / REFUTES; HoVer writes SUPPORTED, read as SUPPORTS), ``label_after``, ``agreement``,
``type`` (what kind of constituent was removed), ``removed``, ``text_orig``.

As a stance dataset, the claim against its reduced evidence (the sentences, space-joined, as
given; their Wikipedia titles are in ``meta['titles']``): ``NOT ENOUGH`` -> not enough info;
``ENOUGH -- *`` -> the label before (SUPPORTS -> supports, REFUTES -> refutes). Splits ``fever``,
``hover``, ``vitaminc``; ids ``sufficient_facts-<split>-<line>``. ``meta``: ``premise``, ``label``
(label_after), ``label_before``, ``stance``, ``titles``, ``removed``, ``type``, ``agreement``.
Licence: none stated in the repository (research use); the evidence is Wikipedia text (CC BY-SA 3.0).
"""

from __future__ import annotations

from pathlib import Path

from factscout.datasets.base import Dataset, DatasetSource, fetch_all, github_raw, register_loader, require_file
from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim, StanceLabel

_REPO, _COMMIT = "copenlu/sufficient_facts", "1fbc36364f5639d294299784958599fda0978472"
_PATH = "data/sufficient_facts/{split}_sufficient_facts.jsonl"
SOURCE = DatasetSource(
    name="SufficientFacts",
    url=github_raw(_REPO, _COMMIT, _PATH.format(split="fever")),
    license="none stated (no licence file; research use); evidence from Wikipedia via FEVER, HoVer, VitaminC "
    "(CC BY-SA 3.0)",
    citation="Atanasova, Simonsen, Lioma, Augenstein. Fact Checking with Insufficient Evidence. TACL 2022.",
)
SHA256 = {  # from the data folder's SOURCE.txt
    github_raw(_REPO, _COMMIT, _PATH.format(split=split)): digest
    for split, digest in {
        "fever": "c6b8910a3d4a358140ed0bd4fdbb5f94acf957c37b80b4732a1c0577e5979532",
        "hover": "60ccd362b68fbb30f74f91c6a2240f0a35fe7fb9f48d59e914e15f33488d0950",
        "vitaminc": "be196f486a4cd0fbd63206c4d7b54ba3c6dbd5e5c1733a6ebc61b0d4986cde6d",
    }.items()
}
FOLDER = "sufficient-facts"
SPLITS = ("fever", "hover", "vitaminc")
BEFORE = {"SUPPORTS": SUPPORTS, "SUPPORTED": SUPPORTS, "REFUTES": REFUTES}
NOT_ENOUGH, ENOUGH = "NOT ENOUGH", ("ENOUGH -- IRRELEVANT", "ENOUGH -- REPEATED")


def stance_of(label_before: str, label_after: str) -> StanceLabel | None:
    """``NOT ENOUGH`` -> not enough info; ``ENOUGH -- *`` -> the label before; None if unknown."""
    if label_before not in BEFORE:
        return None
    if label_after == NOT_ENOUGH:
        return NOT_ENOUGH_INFO
    return BEFORE[label_before] if label_after in ENOUGH else None


@register_loader("sufficient_facts", SPLITS)
def load(split: str, root: Path) -> Dataset:
    """SufficientFacts ``fever`` (1,200 claims), ``hover`` (1,200) or ``vitaminc`` (600)."""
    path = require_file(root / FOLDER / Path(_PATH.format(split=split)).name, "sufficient_facts")
    claims = []
    for lineno, row in read_jsonl(path):
        before, after, evidence = row.get("label_before"), row.get("label_after"), row.get("evidence")
        stance = stance_of(str(before), str(after))
        if (
            stance is None
            or not isinstance(evidence, list)
            or not all(isinstance(e, list) and len(e) == 2 for e in evidence)
            or not isinstance(row.get("claim"), str)
        ):
            raise InputError(
                f"{path}:{lineno}: expected claim, evidence [[title, sentence], ...], label_before SUPPORTS / "
                f"REFUTES and label_after NOT ENOUGH / {' / '.join(ENOUGH)}"
            )
        premise, text = " ".join(" ".join(str(s) for _, s in evidence).split()), " ".join(row["claim"].split())
        if not premise or not text:
            raise InputError(f"{path}:{lineno}: empty claim or evidence")
        meta = {
            "premise": premise,
            "label": after,
            "label_before": before,
            "stance": stance,
            "titles": [str(t) for t, _ in evidence],
            "removed": list(row.get("removed") or []),
            "type": row.get("type") or "",
            "agreement": row.get("agreement") or "",
        }
        claims.append(Claim(f"sufficient_facts-{split}-{lineno}", text, None, meta))
    return Dataset("sufficient_facts", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the three files into ``dest/sufficient-facts``."""
    urls = {Path(_PATH.format(split=s)).name: github_raw(_REPO, _COMMIT, _PATH.format(split=s)) for s in SPLITS}
    return fetch_all(urls, Path(dest) / FOLDER)
