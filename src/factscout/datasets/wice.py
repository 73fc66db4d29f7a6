"""WiCE: real Wikipedia claims checked against the web articles they cite.

Kamoi, Goyal, Rodriguez & Durrett, 2023, "WiCE: Real-World Entailment for Claims in Wikipedia",
EMNLP 2023 (https://aclanthology.org/2023.emnlp-main.470). Each row of ``dev.jsonl`` (349 claims) /
``test.jsonl`` (358) is a claim (``claim``, with its article title, section and context in
``meta``), the cited article as a list of sentences (``evidence``), the label ``supported`` /
``partially_supported`` / ``not_supported`` and ``supporting_sentences``: alternative sets of
sentence indices, each enough for what is supported. The oracle-chunk files of the folder (the
sub-claim view) are not read.

As a stance dataset the claim is the claim and its premise a few of the article's sentences:

- ``supported`` -> supports; premise = the smallest supporting set (fewest characters, the first
  such set on a tie), sentences in article order (7 of the 226 supported claims need more than
  :data:`MAX_PREMISE` characters, the budget a stance pair keeps);
- ``not_supported`` -> not enough info (the article does not back the claim; it need not
  contradict it); premise = up to three of the article's sentences sharing most content words
  with the claim (the earlier on a tie; sentences of five words or more, not the ``(meta data)``
  lines), in article order within :data:`MAX_PREMISE` characters (a longer first sentence is
  kept whole): related text that does not settle the claim (where no sentence shares a word, as
  for a dead citation, the article's first sentences). Most of these claims have no annotated
  sentence (60 of 75), so the annotation cannot give the premise;
- ``partially_supported`` -> no stance (``stance`` None, ``partial`` True; premise as for
  supported): part of the claim is backed and part is not, which is neither label. Stance pairs
  leave these out.

Splits ``dev``, ``test``; ids ``wice-<meta id>``. ``meta``: ``premise``, ``label``, ``stance``,
``partial``, ``premise_sentences`` (the indices used), ``supporting_sentences``, ``claim_title``,
``claim_section``, ``claim_context``. Licence: annotations ODC-BY 1.0; the text is Wikipedia's
(CC BY-SA) and Common Crawl's (its terms of use).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from factscout.datasets.base import Dataset, DatasetSource, fetch_all, github_raw, register_loader, require_file
from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl
from factscout.records import NOT_ENOUGH_INFO, SUPPORTS, Claim

_REPO, _COMMIT = "ryokamoi/wice", "ddeb6c183665e2a20c5f03c5aa07f03888b9870f"
_PATH = "data/entailment_retrieval/claim/{split}.jsonl"
SOURCE = DatasetSource(
    name="WiCE",
    url=github_raw(_REPO, _COMMIT, _PATH.format(split="dev")),
    license="ODC-BY 1.0 (annotations); text from Wikipedia (CC BY-SA) and Common Crawl (its terms of use)",
    citation="Kamoi, Goyal, Rodriguez, Durrett. WiCE: Real-World Entailment for Claims in Wikipedia. EMNLP 2023.",
)
SHA256 = {  # from the data folder's SOURCE.txt
    github_raw(
        _REPO, _COMMIT, _PATH.format(split="dev")
    ): "67531ca79bde4c81d3752fb69d9cb0d3d6763de5c3028f548b83ef053a6f8042",
    github_raw(
        _REPO, _COMMIT, _PATH.format(split="test")
    ): "4c91b9e9590cfcd8f8a0f7288b5ff315af8ade946d7bf26f50fbd671bb86dbe8",
}
FOLDER = "wice"
SPLITS = ("dev", "test")
STANCE = {"supported": SUPPORTS, "not_supported": NOT_ENOUGH_INFO, "partially_supported": None}
MAX_PREMISE = 600
OVERLAP_SENTENCES = 3
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset([
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "and", "or", "but", "is", "are", "was", "were",
    "be", "been", "by", "with", "as", "from", "that", "this", "it", "its", "his", "her", "their", "he", "she",
    "they", "which", "who", "has", "have", "had", "not", "no",
])  # fmt: skip


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def smallest_set(sets: Sequence[Sequence[int]], sentences: Sequence[str]) -> list[int]:
    """The non-empty supporting set with the fewest characters (the first on a tie), sorted."""
    candidates = [sorted(set(s)) for s in sets if s]
    if not candidates:
        return []
    return min(candidates, key=lambda s: sum(len(sentences[i]) for i in s))


def overlapping_sentences(claim: str, sentences: Sequence[str], *, limit: int = OVERLAP_SENTENCES) -> list[int]:
    """Up to ``limit`` sentences sharing most content words with ``claim`` (at least one where any
    does; the earlier on a tie; of five words or more, not the ``(meta data)`` lines), within
    :data:`MAX_PREMISE` characters (a longer first sentence is kept whole), sorted."""
    words = _words(claim)
    scored = []
    for i, s in enumerate(sentences):
        if s.startswith("(meta data)") or len(s.split()) < 5:
            continue
        scored.append((-len(words & _words(s)), i))
    if any(shared for shared, _ in scored):  # sentences sharing no word only when none shares one
        scored = [(shared, i) for shared, i in scored if shared]
    chosen: list[int] = []
    used = 0
    for _, i in sorted(scored):
        if len(chosen) == limit:
            break
        if chosen and used + 1 + len(sentences[i]) > MAX_PREMISE:
            continue
        chosen.append(i)
        used += len(sentences[i]) + (1 if used else 0)
    return sorted(chosen)


@register_loader("wice", SPLITS)
def load(split: str, root: Path) -> Dataset:
    """WiCE ``dev`` (349 claims) or ``test`` (358), with the premise chosen as the docstring says."""
    path = require_file(root / FOLDER / f"{split}.jsonl", "wice")
    claims = []
    for lineno, row in read_jsonl(path):
        label, evidence, sets, meta_in = (row.get(k) for k in ("label", "evidence", "supporting_sentences", "meta"))
        if not (
            isinstance(label, str)
            and label in STANCE
            and isinstance(row.get("claim"), str)
            and isinstance(evidence, list)
            and isinstance(sets, list)
            and all(isinstance(s, list) and all(isinstance(i, int) and 0 <= i < len(evidence) for i in s) for s in sets)
            and isinstance(meta_in, dict)
            and meta_in.get("id")
        ):
            raise InputError(
                f"{path}:{lineno}: expected claim, evidence (sentences), label supported / partially_supported / "
                "not_supported, supporting_sentences (lists of indices into evidence) and meta.id"
            )
        sentences = [" ".join(str(s).split()) for s in evidence]
        text = " ".join(row["claim"].split())
        chosen = overlapping_sentences(text, sentences) if label == "not_supported" else smallest_set(sets, sentences)
        premise = " ".join(sentences[i] for i in chosen)
        if not premise or not text:
            raise InputError(f"{path}:{lineno}: empty claim, or no premise sentence found")
        meta = {
            "premise": premise,
            "label": label,
            "stance": STANCE[label],
            "partial": label == "partially_supported",
            "premise_sentences": chosen,
            "supporting_sentences": sets,
            "claim_title": meta_in.get("claim_title") or "",
            "claim_section": meta_in.get("claim_section") or "",
            "claim_context": meta_in.get("claim_context") or "",
        }
        claims.append(Claim(f"wice-{meta_in['id']}", text, None, meta))
    return Dataset("wice", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch ``dev.jsonl`` and ``test.jsonl`` into ``dest/wice``."""
    urls = {f"{s}.jsonl": github_raw(_REPO, _COMMIT, _PATH.format(split=s)) for s in SPLITS}
    return fetch_all(urls, Path(dest) / FOLDER)
