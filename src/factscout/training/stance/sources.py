"""Stance pairs of the sources added for judgment beyond SciFact (Check-COVID, Citation-Integrity,
HealthVer, ANLI, SICK) and the consistency pairs, with the pair constructor every source shares;
:mod:`factscout.training.stance.pairs` assembles them (its docstring says what each source gives).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim, StanceLabel
from factscout.training.stance.data import LABEL_ID, Pair

MAX_CHARS = 600
CONSISTENCY_CLAIMS = 800  # claims per source paired with themselves and with unrelated claims
UNRELATED_OVERLAP = 0.1  # most content-word overlap (Jaccard) of an unrelated claim
UNRELATED_PARTNERS = 2  # unrelated claims per consistency claim
OTHER_NEI = 2  # non-evidence sentences of the claim's abstract per Check-COVID / Citation-Integrity claim


def make_pair(source: str, claim: Claim, sentence: str, label: StanceLabel, doc_id: str = "", index: int = -1) -> Pair:
    return Pair(
        source, claim.claim_id, claim.text, " ".join(sentence.split())[:MAX_CHARS], LABEL_ID[label], doc_id, index
    )


def cited_docs(c: Claim) -> list[str]:
    return list(dict.fromkeys([*map(str, c.meta.get("cited_doc_ids") or []), *(c.meta.get("evidence") or {})]))


_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "by",
        "with",
        "as",
        "from",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "not",
        "no",
        "than",
        "then",
        "there",
        "their",
        "they",
        "we",
        "our",
        "can",
        "could",
        "may",
        "might",
        "will",
        "would",
        "should",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "some",
        "more",
        "most",
        "less",
        "least",
        "such",
        "into",
        "about",
        "after",
        "before",
        "between",
    ]
)


def content_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` that are not stop words."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _overlap(a: set[str], text: str) -> int:
    return len(a & content_words(text))


def evidence_stance_pairs(
    source: str,
    claims: Sequence[Claim],
    abstracts: Mapping[str, Sequence[str]],
    *,
    other_nei: int = OTHER_NEI,
    other_source: str = "",
) -> list[Pair]:
    """Rationale sentences of SciFact-layout claims (``meta['evidence']``) by label; an NEI claim's
    ``meta['nei_sentences']`` as not enough info; and of the other sentences of each cited
    abstract, the ``other_nei`` sharing most content words with the claim (all of them when
    ``other_nei`` is negative) as not enough info, tagged ``other_source``."""
    pairs: list[Pair] = []
    for c in claims:
        evidence = c.meta.get("evidence") or {}
        words = content_words(c.text)
        for doc_id in cited_docs(c):
            sentences = abstracts.get(doc_id)
            if sentences is None:
                continue
            gold: dict[int, StanceLabel] = {}
            for ev in evidence.get(doc_id, []):
                for i in ev["sentences"]:
                    gold[int(i)] = SUPPORTS if ev["label"] == "SUPPORT" else REFUTES
            for i in c.meta.get("nei_sentences") or []:
                gold.setdefault(int(i), NOT_ENOUGH_INFO)
            for i, label in sorted(gold.items()):
                if 0 <= i < len(sentences):
                    pairs.append(make_pair(source, c, sentences[i], label, doc_id, i))
            others = [i for i in range(len(sentences)) if i not in gold and sentences[i].strip()]
            if other_nei >= 0:
                others = sorted(others, key=lambda i: (-_overlap(words, sentences[i]), i))[:other_nei]
            pairs.extend(make_pair(other_source or source, c, sentences[i], NOT_ENOUGH_INFO, doc_id, i) for i in others)
    return pairs


def row_stance_pairs(source: str, claims: Sequence[Claim], sentence_key: str) -> list[Pair]:
    """One pair per claim whose ``meta[sentence_key]`` is its evidence (HealthVer) or premise (NLI)
    and ``meta['stance']`` its label."""
    return [make_pair(source, c, str(c.meta[sentence_key]), c.meta["stance"]) for c in claims]


def jaccard(a: set[str], b: set[str]) -> float:
    """The Jaccard overlap of two word sets (0 when both are empty)."""
    return len(a & b) / len(a | b) if a | b else 0.0


def consistency_pairs(
    pairs: Sequence[Pair],
    *,
    limit: int = CONSISTENCY_CLAIMS,
    seed: int = 0,
    max_overlap: float = UNRELATED_OVERLAP,
    partners: int = UNRELATED_PARTNERS,
) -> list[Pair]:
    """Up to ``limit`` distinct claims of ``pairs`` (one source's) with themselves (supports) and
    with ``partners`` other claims of it whose content words overlap the claim's by at most
    ``max_overlap`` (Jaccard; 0: no shared word; the default lets a topic word such as "COVID-19" be shared) as not enough info; the pairs keep the claim's id
    and the source ``consistency:self`` / ``consistency:unrelated``."""
    import random

    by_claim: dict[str, Pair] = {}
    for p in pairs:
        by_claim.setdefault(p.claim, p)
    rng = random.Random(seed)
    out: list[Pair] = []
    claims = sorted(by_claim.values(), key=lambda p: p.claim)
    if len(claims) > 1:
        for p in rng.sample(claims, min(limit, len(claims))):
            claim = Claim(p.claim_id, p.claim)
            out.append(make_pair("consistency:self", claim, p.claim, SUPPORTS))
            words = content_words(p.claim)
            found: set[str] = set()
            for _ in range(20 * partners):
                other = rng.choice(claims).claim
                if other != p.claim and other not in found and jaccard(words, content_words(other)) <= max_overlap:
                    found.add(other)
                    out.append(make_pair("consistency:unrelated", claim, other, NOT_ENOUGH_INFO))
                    if len(found) == partners:
                        break
    return out
