"""FEVER-Symmetric: claim / evidence-sentence pairs where the claim alone gives nothing away.

Schuster, Shah, Yeo, Filizzola, Santus & Barzilay, 2019, "Towards Debiasing Fact Verification
Models", EMNLP 2019 (https://aclanthology.org/D19-1341). Each FEVER claim-evidence pair comes with a
synthetic counterpart (claim or evidence rewritten) so that every claim appears once supported and
once refuted. ``v0.2``: ``fever_symmetric_{dev,test}.jsonl`` (708 / 712 pairs; fields ``id``,
``claim``, ``evidence``, ``label``, with ``sentence1`` / ``sentence2`` / ``gold_label`` copies);
``v0.1``: ``fever_symmetric_full.jsonl`` (956, the original pairs and their counterparts) and
``fever_symmetric_generated.jsonl`` (717), fields ``id``, ``claim``, ``evidence_sentence``,
``label``. v0.2 is a dev / test split of v0.1: every v0.1 pair is a dev or a test pair (same id,
claim and evidence), so ``full`` and ``generated`` hold test pairs. Train only on what
:func:`training_claims` keeps; the test split is for evaluation only.

As a stance dataset: the claim is the claim, the evidence sentence its evidence, ``SUPPORTS`` ->
supports, ``REFUTES`` -> refutes. Evidence is FEVER's tokenised Wikipedia text; the bracket tokens
(``-LRB-`` ...) are turned back into brackets. Ids ``fever_symmetric-<split>-<id>``; ``meta``:
``premise``, ``label``, ``stance``, ``fever_id``. Licence: Wikipedia's terms, CC BY-SA 3.0 where
those are unavailable (DATA_LICENSE).
"""

from __future__ import annotations

import re
from pathlib import Path

from factscout.datasets.base import Dataset, DatasetSource, fetch_all, github_raw, register_loader, require_file
from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl
from factscout.records import REFUTES, SUPPORTS, Claim

_REPO, _COMMIT = "TalSchuster/FeverSymmetric", "fa25d17e73ea0694edc78133ec654b9f32f6db73"
_PATHS = {
    "dev": "symmetric_v0.2/fever_symmetric_dev.jsonl",
    "test": "symmetric_v0.2/fever_symmetric_test.jsonl",
    "full": "symmetric_v0.1/fever_symmetric_full.jsonl",
    "generated": "symmetric_v0.1/fever_symmetric_generated.jsonl",
}
SOURCE = DatasetSource(
    name="FEVER-Symmetric",
    url=github_raw(_REPO, _COMMIT, _PATHS["dev"]),
    license="Wikipedia terms; CC BY-SA 3.0 where those are unavailable (FEVER-based); code MIT",
    citation="Schuster, Shah, Yeo, Filizzola, Santus, Barzilay. Towards Debiasing Fact Verification Models. "
    "EMNLP 2019.",
)
SHA256 = {  # from the data folder's SOURCE.txt
    github_raw(_REPO, _COMMIT, _PATHS[split]): digest
    for split, digest in {
        "dev": "1d43d016da9264de2139cd10edd459ffbeac84f1fd85d60b70ab6ef63d283f81",
        "test": "b2ff560615bd3337c858bc5b09256d04f39aaa034aaae2351bb2d6345c110f83",
        "full": "6edf8b5bdc3f2fe470b98e94297ed31200a241c98b0318f905bf324345cf6897",
        "generated": "83a4aac042192ebc159b4478dc5316f9e25094e41ddc97c3b1cea825ad2943eb",
    }.items()
}
FOLDER = "fever-symmetric"
SPLITS = ("dev", "test", "full", "generated")
TRAINING_SPLITS = ("dev", "full", "generated")
STANCE = {"SUPPORTS": SUPPORTS, "REFUTES": REFUTES}
_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "-COLON-": ":"}
_BRACKET = re.compile("|".join(map(re.escape, _BRACKETS)))


def untokenise_brackets(text: str) -> str:
    """FEVER's ``-LRB-`` / ``-RRB-`` / ``-LSB-`` ... tokens as the brackets they stand for."""
    return " ".join(_BRACKET.sub(lambda m: _BRACKETS[m.group()], text).split())


@register_loader("fever_symmetric", SPLITS)
def load(split: str, root: Path) -> Dataset:
    """FEVER-Symmetric ``dev`` (708), ``test`` (712; evaluation only), ``full`` (956), ``generated`` (717)."""
    return _read(split, require_file(root / FOLDER / Path(_PATHS[split]).name, "fever_symmetric"))


def load_file(path: str | Path, *, split: str = "eval") -> Dataset:
    """Any JSONL file in FEVER-Symmetric's layout (e.g. another version's test split)."""
    return _read(split, require_file(Path(path), "fever_symmetric"))


def _read(split: str, path: Path) -> Dataset:
    claims = []
    for lineno, row in read_jsonl(path):
        evidence = row.get("evidence", row.get("evidence_sentence"))
        label, fever_id, claim = row.get("label", row.get("gold_label")), row.get("id"), row.get("claim")
        if label not in STANCE or not isinstance(evidence, str) or not isinstance(claim, str) or fever_id in (None, ""):
            raise InputError(
                f"{path}:{lineno}: expected id, claim, evidence (or evidence_sentence) and a label of SUPPORTS / REFUTES"
            )
        premise, text = untokenise_brackets(evidence), " ".join(claim.split())
        if not premise or not text:
            raise InputError(f"{path}:{lineno}: empty claim or evidence")
        meta = {"premise": premise, "label": label, "stance": STANCE[label], "fever_id": str(fever_id)}
        claims.append(Claim(f"fever_symmetric-{split}-{fever_id}", text, None, meta))
    return Dataset("fever_symmetric", split, tuple(claims), source=SOURCE)


def training_claims(root: str | Path | None = None) -> list[Claim]:
    """The pairs a model may train on: ``dev``, ``full`` and ``generated`` without any pair of
    ``test`` (same FEVER id, or the same claim and evidence once lower-cased and stripped of all but
    letters and digits), each pair once (the first seen, dev first). On this copy: the dev pairs
    less the 3 that equal a test pair; ``full`` and ``generated`` add nothing beyond dev and test."""
    from factscout.datasets.base import data_root

    base = Path(root) if root is not None else data_root()

    def key(c: Claim) -> tuple[str, str]:
        return _letters(c.text), _letters(str(c.meta["premise"]))

    test = load("test", base).claims
    barred_ids, seen = {c.meta["fever_id"] for c in test}, {key(c) for c in test}
    kept = []
    for split in TRAINING_SPLITS:
        for c in load(split, base).claims:
            if c.meta["fever_id"] not in barred_ids and key(c) not in seen:
                seen.add(key(c))
                kept.append(c)
    return kept


def _letters(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def download(dest: str | Path) -> Path:
    """Fetch the four files into ``dest/fever-symmetric``."""
    urls = {Path(p).name: github_raw(_REPO, _COMMIT, p) for p in _PATHS.values()}
    return fetch_all(urls, Path(dest) / FOLDER)
