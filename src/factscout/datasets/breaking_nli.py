"""Breaking NLI: SNLI premises with one word replaced, testing lexical inference.

Glockner, Shwartz & Goldberg, 2018, "Breaking NLI Systems with Sentences that Require Simple
Lexical Inferences", ACL 2018 (https://aclanthology.org/P18-2103). 8,193 pairs whose hypothesis is
the premise with one word or phrase replaced (antonyms, co-hyponyms such as colours, countries,
drinks, cardinals; synonyms), labelled by three annotators: 7,164 contradiction, 982 entailment,
47 neutral. Read from ``data/dataset.jsonl`` inside the published ``breaking_nli_dataset.zip``
(never extracted).

As a stance dataset: the hypothesis is the claim, the premise the evidence (entailment ->
supports, contradiction -> refutes, neutral -> not enough info). One split, ``test`` (the dataset
is a test set); ids ``breaking_nli-<pairID>``. ``meta``: ``premise``, ``label``, ``stance``,
``category`` (what kind of word was replaced), ``annotator_labels``. Licence CC BY-SA 4.0.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from factscout.datasets.base import Dataset, DatasetSource, fetch, github_raw, register_loader, require_file
from factscout.errors import InputError
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim

_REPO, _COMMIT = "BIU-NLP/Breaking_NLI", "8a7658c1ce6b732f4e8af3b06560f1a13b8b18b0"
SOURCE = DatasetSource(
    name="Breaking NLI",
    url=github_raw(_REPO, _COMMIT, "breaking_nli_dataset.zip"),
    license="CC BY-SA 4.0",
    citation="Glockner, Shwartz, Goldberg. Breaking NLI Systems with Sentences that Require Simple Lexical "
    "Inferences. ACL 2018.",
)
SHA256 = {SOURCE.url: "b209e8d4ab15bcd8a5fc76be1c70452e4e253a92eaccb1c66c0b1b973e445371"}
FOLDER = "breaking-nli"
ARCHIVE, MEMBER = "breaking_nli_dataset.zip", "data/dataset.jsonl"
STANCE = {"entailment": SUPPORTS, "contradiction": REFUTES, "neutral": NOT_ENOUGH_INFO}


def _rows(path: Path) -> list[str]:
    try:
        with zipfile.ZipFile(path) as z:
            return z.read(MEMBER).decode("utf-8").split("\n")
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read {MEMBER} ({exc})") from None


@register_loader("breaking_nli", ("test",))
def load(split: str, root: Path) -> Dataset:
    """Breaking NLI's 8,193 pairs (``test``)."""
    path = require_file(root / FOLDER / ARCHIVE, "breaking_nli")
    claims = []
    for lineno, line in enumerate(_rows(path), start=1):
        if not line.strip():
            continue
        where = f"{path}:{MEMBER}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: malformed JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object")
        label, pair_id = row.get("gold_label"), row.get("pairID")
        premise, hypothesis = (" ".join(str(row.get(k) or "").split()) for k in ("sentence1", "sentence2"))
        if label not in STANCE or not premise or not hypothesis or pair_id in (None, ""):
            raise InputError(f"{where}: expected pairID, sentence1, sentence2 and a gold_label of {', '.join(STANCE)}")
        meta = {
            "premise": premise,
            "label": label,
            "stance": STANCE[label],
            "category": row.get("category") or "",
            "annotator_labels": list(row.get("annotator_labels") or []),
        }
        claims.append(Claim(f"breaking_nli-{pair_id}", hypothesis, None, meta))
    return Dataset("breaking_nli", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch ``breaking_nli_dataset.zip`` into ``dest/breaking-nli`` (the loader reads it zipped)."""
    folder = Path(dest) / FOLDER
    fetch(SOURCE.url, folder / ARCHIVE)
    return folder
