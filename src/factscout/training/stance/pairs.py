"""The stance training set: claim-sentence pairs labelled supports / refutes / not enough info
from every dataset in ``../shared/data``, each pair with its source and that source's licence.

Sources (the pair's ``source`` tag, counted and ablated separately):

``scifact`` / ``scifact:cited-nei`` / ``scifact:bm25-nei``
    SciFact (Wadden et al., EMNLP 2020) train claims: rationale sentences labelled by their
    evidence (SUPPORT -> supports, CONTRADICT -> refutes); every other sentence of the abstracts
    the claim cites, as not enough info (hard: same topic, often the same entities); and the
    top BM25 sentences (factscout's ``bm25`` retriever over every sentence of the corpus) of
    abstracts the claim does not cite, as not enough info. The held-out claims
    (:data:`~factscout.training.splits.HELDOUT_FILE`) and the dev claims that choose the
    cross-encoder's epoch (:func:`scifact_dev_ids`) give no pair, and the abstracts they cite
    are kept out of the BM25 pool, so no held-out sentence is trained on.
``covidfact``
    COVID-Fact (Saakyan et al., ACL 2021): each gold evidence sentence with the original claim
    (SUPPORTED -> supports) and with each of its counter-claims (REFUTED -> refutes). A
    counter-claim is an automatic edit of the original that keeps the original's evidence list,
    so the two are linked by that list; a REFUTED claim whose evidence list no SUPPORTED claim
    shares is kept too (its evidence is still the original's) and counted in the log.
``averitec``
    AVeriTeC (Schlichtkrull et al., NeurIPS 2023) train: each gold question-answer pair as
    "question answer" (a Boolean answer with its explanation), labelled by this rule:

    - Supported claim: supports, for every answered question except a bare Boolean "No" (a
      "No" can support a claim phrased as a negation, but can as well be a side fact; skipped);
    - Refuted claim: refutes only where the answer itself says the claim is wrong: a Boolean
      "No", or an answer with a contradiction cue ("no evidence", "false", "not", "never",
      "hoax", "fake", "misleading", "debunked"...); other answers of a refuted claim (background:
      "who is X?") are skipped;
    - Not Enough Evidence claim: every answered question, not enough info (the gold evidence
      was found not to settle the claim, so no single answer does);
    - Conflicting Evidence/Cherrypicking: skipped (the answers pull both ways, unlabelled);
    - "Unanswerable" answers: skipped.
``checkthat``
    CheckThat! 2022 task 2A (Nakov et al., CLEF 2022) train and dev: a tweet with the Snopes
    verified claim its qrels name (a paraphrase of the same claim: supports), and with the top
    BM25 verified claims the qrels do not name (not enough info: same topic, another claim).
    The dev-test split is not used.
``checkcovid`` / ``checkcovid:other-nei``
    Check-COVID (Wang et al., Findings of ACL 2023) train: each claim with its evidence
    sentences (SUPPORT -> supports, REFUTE -> refutes; an NEI claim's annotated on-topic
    sentences -> not enough info) and with the :data:`OTHER_NEI` sentences of its abstract that
    share most words with it (not enough info). The dev split is kept for choosing models.
``citint`` / ``citint:cited-nei``
    Citation-Integrity (Sarol et al., 2024) train, read as SciFact's: rationale sentences by
    label, the other sentences of the cited abstract as not enough info. Dev chooses models.
``healthver``
    HealthVer (Sarrouti et al., Findings of EMNLP 2021), the rows of the topics outside the dev
    part (:func:`factscout.datasets.healthver.fit_part_ids`): claim with its evidence text,
    Supports / Refutes / Neutral -> supports / refutes / not enough info.
``anli`` / ``sick``
    NLI pairs (ANLI dev rounds 1-3; SICK, both directions): the hypothesis is the claim, the
    premise the sentence; entailment / contradiction / neutral -> supports / refutes / not
    enough info. Not edited (:data:`NLI_SOURCES`): their contrasts are written by annotators.
``mnli`` / ``snli`` / ``snli_cf`` / ``breaking_nli`` / ``fever_symmetric`` / ``sufficient_facts`` / ``wice`` / ``rte``
    Selectable (``sources=``, ``--sources``), not in the default :data:`SOURCES`
    (:data:`EXTRA_SOURCES`; what each gives: :mod:`factscout.training.stance.nli_data`). The general
    NLI ones (and ``rte``) are in :data:`NLI_SOURCES`; none gives a pair of the NLI check set,
    of FEVER-Symmetric's test split or of WiCE's test split.
``consistency:self`` / ``consistency:unrelated``
    Up to :data:`CONSISTENCY_CLAIMS` claims of each source but the NLI ones paired with themselves
    (supports) and with two other claims of the same source whose content words overlap its own by
    at most 0.1 (Jaccard: a topic word may be shared; not enough info); the self pairs are edited like every supporting pair, so a claim paired with
    its own negation is refuted and with its subject swapped is not enough info. A model that
    calls a near-copy of the claim a contradiction fails this before it fails anything else.
``aug:<name>``
    Counterfactual edits of every supporting pair above (:mod:`factscout.training.stance.augment`);
    an augmented pair keeps the licence of the pair it was made from. ``aug:reflip`` (a refuting
    pair's claim negated: supports) is made only for :data:`CONTRADICTING_SOURCES`, whose
    refuting evidence contradicts the claim's predicate; an AVeriTeC claim is often refuted
    because the event never happened, which its negation does not make supported.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factscout.errors import InputError, UnknownName
from factscout.records import NOT_ENOUGH_INFO, REFUTES, STANCE_LABELS, SUPPORTS, Claim, Passage, Query, StanceLabel
from factscout.training.stance.data import Pair, covidfact_pairs
from factscout.training.stance.nli_data import EXTRA_SOURCES
from factscout.training.stance.sources import (  # noqa: F401  (the other sources' builders, re-exported)
    CONSISTENCY_CLAIMS,
    MAX_CHARS,
    OTHER_NEI,
    UNRELATED_OVERLAP,
    UNRELATED_PARTNERS,
    cited_docs,
    consistency_pairs,
    content_words,
    evidence_stance_pairs,
    make_pair,
    row_stance_pairs,
)

log = logging.getLogger(__name__)

SOURCES = ("scifact", "covidfact", "averitec", "checkthat", "checkcovid", "citint", "healthver", "anli", "sick")
"""The default sources."""
ALL_SOURCES = SOURCES + EXTRA_SOURCES
"""Every source ``sources=`` may name: the default ones and :data:`EXTRA_SOURCES`."""
CONTRADICTING_SOURCES = ("scifact", "covidfact", "checkcovid", "citint")
NLI_SOURCES = ("anli", "sick", "mnli", "snli", "snli_cf", "breaking_nli", "rte")
"""Sources whose pairs are not edited: written by annotators as contrasts already."""
DEV_FRACTION = 0.15  # the SciFact dev part cross.py chooses on (CrossConfig.dev_fraction)
BM25_NEI = 3  # BM25 sentences of non-cited abstracts per SciFact claim
CHECKTHAT_NEI = 2  # non-relevant top-BM25 verified claims per tweet


@dataclass(frozen=True, slots=True)
class StancePair:
    """One labelled claim-sentence pair as written to the JSONL file."""

    claim: str
    sentence: str
    label: str
    source: str
    licence: str
    claim_id: str
    origin: str = ""
    """The dataset the pair (or the pair it was edited from) comes from: one of :data:`ALL_SOURCES`."""

    def __post_init__(self) -> None:
        if self.label not in STANCE_LABELS:
            raise InputError(f"stance label {self.label!r} is not one of {', '.join(STANCE_LABELS)}")

    def row(self) -> dict[str, str]:
        return {
            "claim": self.claim,
            "sentence": self.sentence,
            "label": self.label,
            "source": self.source,
            "licence": self.licence,
            "claim_id": self.claim_id,
            "origin": self.origin,
        }


# -- SciFact -------------------------------------------------------------------------------------------


def scifact_dev_ids(claims: Sequence[Claim], heldout_ids: Collection[str]) -> set[str]:
    """The SciFact dev claims: the part of the non-held-out claims that ``stance_cross`` keeps to
    choose its epoch (:func:`~factscout.training.splits.split_scifact`, ``DEV_FRACTION``, seed 14)."""
    from factscout.training.splits import SEED, split_scifact

    train = [c for c in claims if c.claim_id not in heldout_ids]
    if len(train) < 2:
        return set()
    _, dev = split_scifact(train, heldout_fraction=DEV_FRACTION, seed=SEED + 1)
    return {c.claim_id for c in dev}


def scifact_stance_pairs(
    claims: Sequence[Claim],
    abstracts: Mapping[str, Sequence[str]],
    *,
    exclude_claim_ids: Collection[str] = (),
    bm25_nei: int = BM25_NEI,
) -> list[Pair]:
    """SciFact pairs (module docstring): rationales, other sentences of cited abstracts, and the
    top ``bm25_nei`` BM25 sentences of non-cited abstracts, for every claim not excluded."""
    kept = [c for c in claims if c.claim_id not in exclude_claim_ids]
    barred = {d for c in claims if c.claim_id in exclude_claim_ids for d in cited_docs(c)}
    pairs: list[Pair] = []
    for c in kept:
        evidence = c.meta.get("evidence") or {}
        for doc_id in cited_docs(c):
            if doc_id not in abstracts:
                continue
            gold: dict[int, StanceLabel] = {}
            for ev in evidence.get(doc_id, []):
                for i in ev["sentences"]:
                    gold[int(i)] = SUPPORTS if ev["label"] == "SUPPORT" else REFUTES
            for i, sentence in enumerate(abstracts[doc_id]):
                if i in gold:
                    pairs.append(make_pair("scifact", c, sentence, gold[i], doc_id, i))
                else:
                    pairs.append(make_pair("scifact:cited-nei", c, sentence, NOT_ENOUGH_INFO, doc_id, i))
    if bm25_nei > 0 and kept:
        pool = [
            Passage(f"{d}#{i}", d, "", s)
            for d, sentences in abstracts.items()
            if d not in barred
            for i, s in enumerate(sentences)
            if s.strip()
        ]
        hits = _bm25(pool, [(c.claim_id, c.text) for c in kept], bm25_nei + 40)
        text_of = {p.passage_id: p.text for p in pool}
        for c in kept:
            cited = set(cited_docs(c))
            taken = 0
            for pid in hits.get(c.claim_id, ()):
                doc_id, _, index = pid.rpartition("#")
                if doc_id in cited:
                    continue
                pairs.append(make_pair("scifact:bm25-nei", c, text_of[pid], NOT_ENOUGH_INFO, doc_id, int(index)))
                taken += 1
                if taken == bm25_nei:
                    break
    return pairs


def _bm25(pool: Sequence[Passage], queries: Sequence[tuple[str, str]], k: int) -> dict[str, tuple[str, ...]]:
    """Query id -> the ids of its top ``k`` passages of ``pool`` by factscout's ``bm25`` retriever."""
    from factscout.retrieve.index import build_retriever

    retriever = build_retriever(pool, "bm25")
    asked = [Query(qid, qid, text) for qid, text in queries if text.strip()]
    out: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(asked), 512):
        batch = asked[start : start + 512]
        for q, ranking in zip(batch, retriever.search(batch, k), strict=True):
            out[q.query_id] = ranking.passage_ids
    return out


# -- COVID-Fact ----------------------------------------------------------------------------------------


def covidfact_stance_pairs(claims: Sequence[Claim]) -> list[Pair]:
    """Each gold evidence sentence with the original claim (supports) and with the counter-claims
    (refutes) that share its evidence list (module docstring): the stance trainer's
    :func:`~factscout.training.stance.data.covidfact_pairs`, texts normalised as every source's."""
    originals = {tuple(c.meta.get("evidence") or []) for c in claims if c.meta.get("label") == "SUPPORTED"}
    unlinked = sum(
        1 for c in claims if c.meta.get("label") == "REFUTED" and tuple(c.meta.get("evidence") or []) not in originals
    )
    if unlinked:
        log.info("COVID-Fact: %d counter-claims share no original's evidence list (kept)", unlinked)
    by_id = {c.claim_id: c for c in claims}
    return [
        make_pair("covidfact", by_id[p.claim_id], p.sentence, STANCE_LABELS[p.label], "", p.index)
        for p in covidfact_pairs(claims)
    ]


# -- AVeriTeC ------------------------------------------------------------------------------------------

_CONTRADICTS = re.compile(
    r"\b(no|not|never|none|nothing|false|fake|hoax|untrue|incorrect|misleading|debunk\w*|fabricated|"
    r"denied|denies|doctored|satire|satirical|no evidence|n't)\b",
    re.I,
)


def averitec_stance_pairs(claims: Sequence[Claim]) -> list[Pair]:
    """Question-answer pairs labelled by the rule in the module docstring."""
    pairs = []
    for c in claims:
        verdict = str(c.meta.get("label"))
        for qi, qa in enumerate(c.meta.get("qa") or []):
            question = " ".join(str(qa.get("question") or "").split())
            for a in qa.get("answers") or []:
                kind, answer = a.get("answer_type"), " ".join(str(a.get("answer") or "").split())
                if kind == "Unanswerable" or not answer:
                    continue
                boolean_no = kind == "Boolean" and answer.lower().rstrip(".") == "no"
                text = answer
                if kind == "Boolean" and a.get("boolean_explanation"):
                    text = f"{answer}. {' '.join(str(a['boolean_explanation']).split())}"
                label = _averitec_label(verdict, boolean_no, text)
                if label is not None:
                    pairs.append(make_pair("averitec", c, f"{question} {text}".strip(), label, "", qi))
    return pairs


def _averitec_label(verdict: str, boolean_no: bool, answer: str) -> StanceLabel | None:
    if verdict == "Supported":
        return None if boolean_no else SUPPORTS
    if verdict == "Refuted":
        return REFUTES if boolean_no or _CONTRADICTS.search(answer) else None
    if verdict == "Not Enough Evidence":
        return NOT_ENOUGH_INFO
    return None


# -- CheckThat! 2022 2A --------------------------------------------------------------------------------


def checkthat_stance_pairs(
    tweets: Sequence[Claim],
    vclaims: Sequence[Passage],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    nei: int = CHECKTHAT_NEI,
) -> list[Pair]:
    """Tweet <-> its verified claim (supports) and <-> the top ``nei`` BM25 verified claims the
    qrels do not name (not enough info). The verified claim's text is its first line (the
    claim, without the article subtitle)."""
    claim_text = {p.passage_id: p.text.split("\n")[0] for p in vclaims}
    pairs = []
    for t in tweets:
        for vid, rel in sorted(qrels.get(t.claim_id, {}).items()):
            if rel > 0 and vid in claim_text:
                pairs.append(make_pair("checkthat", t, claim_text[vid], SUPPORTS, vid))
    if nei > 0 and tweets:
        pool = [Passage(p.passage_id, p.passage_id, "", claim_text[p.passage_id]) for p in vclaims]
        hits = _bm25(pool, [(t.claim_id, t.text) for t in tweets], nei + 10)
        for t in tweets:
            relevant = {v for v, r in qrels.get(t.claim_id, {}).items() if r > 0}
            others = [v for v in hits.get(t.claim_id, ()) if v not in relevant][:nei]
            pairs.extend(make_pair("checkthat", t, claim_text[v], NOT_ENOUGH_INFO, v) for v in others)
    return pairs


# -- the builder ---------------------------------------------------------------------------------------


def default_exclusions(data_root: str | Path | None = None, *, mini: bool = False) -> set[str]:
    """The claims no stance pair may come from: the SciFact held-out claims
    (:func:`~factscout.training.splits.read_heldout_ids`) and the SciFact dev claims
    (:func:`scifact_dev_ids` of the full SciFact train claims; only where those are missing and
    ``mini``, of the fixture's claims, which split differently)."""
    from factscout.datasets import load_dataset
    from factscout.errors import DataNotFound
    from factscout.training.splits import read_heldout_ids

    heldout = read_heldout_ids()
    try:
        claims = load_dataset("scifact", "train", data_root).claims
    except DataNotFound:
        if not mini:
            raise
        log.warning("full SciFact missing: the dev claims are split from the fixture's claims")
        claims = load_dataset("scifact_mini", "train", data_root).claims
    return heldout | scifact_dev_ids(claims, heldout)


def build_stance_pairs(
    data_root: str | Path | None = None,
    *,
    sources: Sequence[str] = SOURCES,
    augment: bool = True,
    augmentations: Sequence[str] | None = None,
    seed: int = 0,
    exclude_claim_ids: Collection[str] | None = None,
    mini: bool = False,
    consistency: int = CONSISTENCY_CLAIMS,
    unrelated_overlap: float = UNRELATED_OVERLAP,
    unrelated_partners: int = UNRELATED_PARTNERS,
    say: Callable[[str], None] = lambda _: None,
) -> list[StancePair]:
    """Every stance pair of ``sources`` (module docstring), augmented (:func:`augment_pairs`) when
    ``augment``, deterministic for a ``seed``. ``augmentations``: the edits by name (default
    :data:`~factscout.training.stance.augment.DEFAULT_AUGMENTATIONS`).

    ``exclude_claim_ids``: claims (of any source: the ids do not collide) that give no pair;
    default :func:`default_exclusions` (the SciFact held-out and dev claims). ``mini``: the SciFact
    and AVeriTeC fixtures (``fixtures/scifact_mini``, ``fixtures/averitec_mini``) instead of the
    full sets, for tests. ``consistency``: claims per source paired with themselves and with an
    unrelated claim (:func:`consistency_pairs`; 0: none), ``unrelated_partners`` unrelated claims
    each, overlapping it by at most ``unrelated_overlap`` (Jaccard of content words).
    """
    from factscout.datasets import load_dataset
    from factscout.datasets import scifact as scifact_data
    from factscout.training.cards import licence_of
    from factscout.training.stance.augment import AUGMENTATIONS, DEFAULT_AUGMENTATIONS

    for s in sources:
        if s not in ALL_SOURCES:
            raise UnknownName("stance pair source", s, ALL_SOURCES)
    edits = tuple(DEFAULT_AUGMENTATIONS if augmentations is None else augmentations)
    for e in edits:
        if e not in AUGMENTATIONS:
            raise UnknownName("augmentation", e, AUGMENTATIONS)
    root = Path(data_root) if data_root is not None else None
    excluded = set(default_exclusions(root, mini=mini) if exclude_claim_ids is None else exclude_claim_ids)
    groups: dict[str, tuple[str, list[Pair]]] = {}
    if "scifact" in sources:
        claims = list(load_dataset("scifact_mini" if mini else "scifact", "train", root).claims)
        abstracts = scifact_data.load_abstract_sentences(root, mini=mini)
        say(f"scifact: {len(claims)} claims, {len(excluded & {c.claim_id for c in claims})} excluded")
        pairs = scifact_stance_pairs(claims, abstracts, exclude_claim_ids=excluded)
        groups["scifact"] = (licence_of("scifact"), pairs)
    if "covidfact" in sources:
        pairs = covidfact_stance_pairs(load_dataset("covidfact", "all", root).claims)
        groups["covidfact"] = (licence_of("covidfact"), pairs)
    if "averitec" in sources:
        pairs = averitec_stance_pairs(load_dataset("averitec_mini" if mini else "averitec", "train", root).claims)
        groups["averitec"] = (licence_of("averitec"), pairs)
    if "checkthat" in sources:
        pairs = []
        for split in ("train", "dev"):
            ds = load_dataset("checkthat2022", split, root)
            pairs.extend(checkthat_stance_pairs(ds.claims, ds.corpus, ds.qrels))
        groups["checkthat"] = (licence_of("checkthat2022"), pairs)
    if "checkcovid" in sources:
        from factscout.datasets import checkcovid

        ds = load_dataset("checkcovid", "train", root)
        pairs = evidence_stance_pairs(
            "checkcovid", ds.claims, checkcovid.load_abstract_sentences(root), other_source="checkcovid:other-nei"
        )
        groups["checkcovid"] = (licence_of("checkcovid"), pairs)
    if "citint" in sources:
        ds = load_dataset("citint", "train", root)
        from factscout.datasets import citint

        sentences = citint.load_abstract_sentences(root)
        pairs = evidence_stance_pairs("citint", ds.claims, sentences, other_nei=-1, other_source="citint:cited-nei")
        groups["citint"] = (licence_of("citint"), pairs)
    if "healthver" in sources:
        from factscout.datasets.healthver import fit_part_ids

        fit = fit_part_ids(root)
        claims = [c for c in load_dataset("healthver", "dev", root).claims if c.claim_id in fit]
        groups["healthver"] = (licence_of("healthver"), row_stance_pairs("healthver", claims, "evidence"))
    for nli, split in (("anli", "dev"), ("sick", "all")):
        if nli in sources:
            claims = list(load_dataset(nli, split, root).claims)
            groups[nli] = (licence_of(nli), row_stance_pairs(nli, claims, "premise"))
    if any(s in EXTRA_SOURCES for s in sources):
        from factscout.training.stance.nli_data import extra_source_pairs

        extra = extra_source_pairs([s for s in sources if s in EXTRA_SOURCES], root)
        groups.update({name: (licence_of(name), pairs) for name, pairs in extra.items()})
    out: list[StancePair] = []
    for name, (licence, found) in groups.items():
        pairs = [p for p in found if p.claim_id not in excluded]
        say(
            f"{name}: {len(pairs)} pairs"
            + (f" ({len(found) - len(pairs)} of excluded claims left out)" * (len(found) > len(pairs)))
        )
        if consistency > 0 and name not in NLI_SOURCES:
            pairs += consistency_pairs(
                pairs, limit=consistency, seed=seed, max_overlap=unrelated_overlap, partners=unrelated_partners
            )
        made = list(pairs)
        if augment and name not in NLI_SOURCES:
            from factscout.training.stance.augment import augment_pairs

            # a tweet is rarely a declarative sentence: CheckThat's verified claim side is edited only
            names = [e for e in edits if e != "reflip" or name in CONTRADICTING_SOURCES]
            made += augment_pairs(pairs, seed=seed, names=names, claim_side=name != "checkthat")
            say(f"{name}: {len(made) - len(pairs)} augmented pairs")
        out.extend(
            StancePair(p.claim, p.sentence, STANCE_LABELS[p.label], p.source, licence, p.claim_id, name) for p in made
        )
    return out


def counts_of(pairs: Iterable[StancePair]) -> dict[str, dict[str, int]]:
    """Source -> label -> pair count, sources in first-seen order, labels in STANCE_LABELS order."""
    counts: dict[str, Counter[str]] = {}
    for p in pairs:
        counts.setdefault(p.source, Counter())[p.label] += 1
    return {s: {label: c[label] for label in STANCE_LABELS} for s, c in counts.items()}


def licences_of(pairs: Iterable[StancePair]) -> dict[str, list[str]]:
    """Source -> its licences (an augmentation carries those of the sources it edited)."""
    found: dict[str, dict[str, None]] = {}
    for p in pairs:
        found.setdefault(p.source, {})[p.licence] = None
    return {s: list(ls) for s, ls in found.items()}


def write_stance_pairs(path: str | Path, pairs: Sequence[StancePair]) -> tuple[Path, Path]:
    """Write ``pairs`` as JSONL to ``path`` (one :meth:`StancePair.row` a line) and the counts
    (source x label, totals, sources per origin, licences) to ``<path>.counts.json``."""
    import json

    from factscout.formats.jsonl import write_jsonl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(path, (p.row() for p in pairs))
    counts = counts_of(pairs)
    summary: dict[str, Any] = {
        "counts": counts,
        "total": {label: sum(c[label] for c in counts.values()) for label in STANCE_LABELS},
        "pairs": len(pairs),
        "licences": licences_of(pairs),
        "by_origin": {
            o: dict(Counter(p.source for p in pairs if p.origin == o)) for o in dict.fromkeys(p.origin for p in pairs)
        },
    }
    counts_path = path.with_name(path.name + ".counts.json")
    counts_path.write_text(json.dumps(summary, indent=2) + "\n")
    return path, counts_path
