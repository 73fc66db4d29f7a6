"""Pseudo-claims by the inverse cloze task: a claim-like sentence held out of its passage.

The inverse cloze task (Lee, Chang & Toutanova, ACL 2019, "Latent Retrieval for Weakly
Supervised Open Domain Question Answering", section 5) turns an unlabelled corpus into
query-passage pairs: one sentence of a passage becomes the query and the rest of the passage its
relevant context. ORQA keeps the sentence in its passage 10% of the time; here it never stays,
so a search for the pseudo-claim cannot succeed by matching the sentence verbatim and rewriting
policies learn on the same kind of task as real claims (the rewriting policies' BFS trajectories
are generated over pseudo-claims beside the real train claims).

:func:`inverse_cloze` takes a corpus and returns a :class:`PseudoClaimSet`:

- ``claims``: at most one pseudo-claim per passage, id ``"ict:<passage_id>"``, no date, its meta
  ``{"source": "ict", "passage_id": ..., "span": (start, end)}`` (the sentence's character
  offsets in the original ``passage.text``);
- ``qrels``: ``{claim_id: {passage_id: 1}}``, the source passage only;
- ``corpus``: the training copy of the corpus, every passage in the given order, each chosen
  passage's ``text`` with the held-out sentence cut out by its span (whitespace tidied at the cut
  only; the title, dates and url kept). Index this copy, never the original, for training.

Sentences come from :func:`factscout.text.sentences.sentence_spans`, the project's one
splitter. A sentence can be held out when it is claim-like (:func:`claim_like_reason`) and

- at least one *other* sentence of its passage has ``context_words`` (5) words or more, so the
  passage still says something after the cut;
- its text occurs nowhere else in the passage (text or title), so the cut removes it entirely;
- it is not a sentence of any other passage of the corpus (whitespace-normalised exact match):
  otherwise the training index still holds it verbatim under a passage the qrels do not name.
  A copy inside a longer sentence of another passage is not looked for.

A passage is eligible when it has such a sentence. Passages are taken in the order of a seeded
shuffle of the corpus until ``n`` pseudo-claims are made, and the held-out sentence is a
seeded-random choice among the passage's eligible sentences: no preference for "central"
sentences (for example the one sharing most words with the rest of the passage), which would
make pseudo-claims easier than real claims and cost more to compute. Fewer than ``n`` come back
when fewer passages are eligible; ``eligible`` and ``shortfall`` say so.

The whole corpus is split once, which also gives the eligibility figures: 0.6 ms per SciFact
abstract, 0.05 ms per MultiFC snippet on one core (7 s for MultiFC's 141,888 snippets).
Eligible shares (they do not depend on the seed): SciFact 98.4%, AVeriTeC BEIR 23.1% (half its answers are one sentence),
MultiFC 14.8% (most snippets are cut off with "..."), COVID-Fact 1.3% (single evidence sentences).
The filter has no parser, so verbless fragments ("Texas cell phone, car seat, seat belt, and child
safety laws.") still pass.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from factscout.errors import InputError
from factscout.records import Claim, Passage
from factscout.text.sentences import sentence_spans

__all__ = [
    "OPENERS",
    "SECTION_HEADINGS",
    "SOURCE",
    "TITLE_CASE_SHARE",
    "PseudoClaimSet",
    "claim_like_reason",
    "cut_span",
    "inverse_cloze",
    "is_claim_like",
]

SOURCE = "ict"
"""The ``source`` in each pseudo-claim's meta, and the prefix of its id."""

OPENERS: tuple[str, ...] = (
    # pronouns and determiners that point back at an earlier sentence
    "This", "These", "That", "Those", "It", "Its", "They", "Their", "Them", "He", "She", "His", "Her",
    "Such", "Both", "Another", "Other", "Others", "Each of these", "All of these", "One of these",
    # first person and the authors' own study
    "We", "Our", "I", "My", "Here", "Herein", "In this", "In the present", "In the current", "To our",
    # connectors and discourse markers
    "However", "Therefore", "Thus", "Hence", "Moreover", "Furthermore", "Additionally", "In addition",
    "Also", "But", "And", "Or", "So", "Yet", "Then", "Still", "Indeed", "Instead", "Rather", "Nevertheless",
    "Nonetheless", "Consequently", "Accordingly", "Similarly", "Likewise", "Conversely", "In contrast",
    "By contrast", "On the other hand", "As a result", "As such", "For example", "For instance",
    "In particular", "Specifically", "Importantly", "Notably", "Interestingly", "Overall", "Together",
    "Taken together", "Collectively", "Altogether", "In conclusion", "In summary", "To summarize",
    "Finally", "First", "Firstly", "Second", "Secondly", "Third", "Thirdly", "Lastly",
    "Meanwhile", "Subsequently", "Thereby", "Further", "Despite this", "Because of this",
)  # fmt: skip
"""Sentence openers that make a sentence lean on the ones before it (or speak for its authors):
a sentence starting with one of them, as a whole word, is not claim-like."""

SECTION_HEADINGS: frozenset[str] = frozenset((
    "ABSTRACT", "AIM", "AIMS", "ANALYSIS", "APPROACH", "AVAILABILITY", "BACKGROUND", "CASE",
    "CONCLUSION", "CONCLUSIONS", "CONTEXT", "DATA", "DESIGN", "DISCUSSION", "EVIDENCE", "EXPOSURE",
    "EXPOSURES", "FINDINGS", "FUNDING", "HYPOTHESIS", "IMPORTANCE", "INTERPRETATION", "INTERVENTION",
    "INTERVENTIONS", "INTRODUCTION", "LIMITATIONS", "MAIN", "MATERIALS", "MEASUREMENTS", "METHOD",
    "METHODS", "METHODOLOGY", "OBJECTIVE", "OBJECTIVES", "OUTCOME", "OUTCOMES", "PARTICIPANTS",
    "PATIENTS", "POPULATION", "PRINCIPAL", "PURPOSE", "RATIONALE", "RELEVANCE", "RESULT", "RESULTS",
    "REVIEW", "SEARCH", "SELECTION", "SETTING", "SETTINGS", "SIGNIFICANCE", "SOURCES", "STUDY",
    "SUBJECTS", "SUMMARY", "TRIAL", "UNLABELLED",
))  # fmt: skip
"""Upper-case section headings of structured abstracts ("RESULTS Of 300 patients..."): a sentence
whose first word is one of them carries the heading, so it is not claim-like."""

TITLE_CASE_SHARE = 0.6
"""A sentence with more than this share of capitalised words reads as a headline, not a claim."""

_OPENER = re.compile("(?:" + "|".join(re.escape(o) for o in sorted(OPENERS, key=len, reverse=True)) + r")(?![\w-])")
_BROKEN = re.compile(r"\.\.\.|\u2026|https?://|www\.")
_FIRST_PERSON = re.compile(r"\b(?:[Ww]e|[Oo]urs?|us|[Mm]y|me|I)\b")
_ROMAN_I_BEFORE = frozenset({"type", "phase", "class", "grade", "stage", "complex", "group", "category", "level"})
_CITATION = re.compile(r"\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\]|\(\s*(?:Fig|Figs|Figure|Table|Ref|Refs)\b|\bet al\.")
_WORD_BEFORE = re.compile(r"(\w+)\W*$")


def claim_like_reason(sentence: str, *, min_words: int = 8, max_words: int = 40) -> str | None:
    """``None`` when ``sentence`` reads like a stand-alone claim, else why not.

    Cheap rules, no parser (this runs over every sentence of corpora of 200k passages): between
    ``min_words`` and ``max_words`` words; starts with an upper-case letter and ends with ``.``;
    no ``?``; no elided text or URL (``...``, ``…``, ``http://``, ``www.``: cut-off search
    snippets as in MultiFC); does not start with one of :data:`OPENERS` or
    :data:`SECTION_HEADINGS`; not title case (more than :data:`TITLE_CASE_SHARE` of the words
    capitalised: headlines, reference strings, bylines, menus and name lists, frequent in news
    and COVID-Fact pages); no first
    person (we, our, ours, us, my, me, "I" except the Roman numeral after "type", "phase"...);
    no citation marks (``[12]``, ``(Fig.``, ``(Table``, ``et al.``); not mostly digits (more
    digits than letters).
    """
    words = sentence.split()
    if not min_words <= len(words) <= max_words:
        return f"{len(words)} words (claim-like: {min_words}-{max_words})"
    if not sentence[0].isupper():
        return "does not start with an upper-case letter"
    if not sentence.endswith("."):
        return "does not end with '.'"
    if "?" in sentence:
        return "has a question mark"
    broken = _BROKEN.search(sentence)
    if broken:
        return f"elided text or a URL {broken.group(0)!r}"
    opener = _OPENER.match(sentence)
    if opener:
        return f"starts with {opener.group(0)!r}"
    if words[0].rstrip(":") in SECTION_HEADINGS:
        return f"starts with the section heading {words[0]!r}"
    capitalised = sum(1 for w in words if w[0].isupper())
    if capitalised > TITLE_CASE_SHARE * len(words):
        return f"title case ({capitalised} of {len(words)} words capitalised)"
    for match in _FIRST_PERSON.finditer(sentence):
        if match.group(0) == "I":
            before = _WORD_BEFORE.search(sentence[: match.start()])
            if before and before.group(1).lower() in _ROMAN_I_BEFORE:
                continue
        return f"first person {match.group(0)!r}"
    citation = _CITATION.search(sentence)
    if citation:
        return f"citation mark {citation.group(0)!r}"
    digits = sum(map(str.isdigit, sentence))
    if digits and digits > sum(map(str.isalpha, sentence)):
        return "mostly digits"
    return None


def is_claim_like(sentence: str, *, min_words: int = 8, max_words: int = 40) -> bool:
    """Whether :func:`claim_like_reason` finds nothing against ``sentence``."""
    return claim_like_reason(sentence, min_words=min_words, max_words=max_words) is None


def cut_span(text: str, start: int, end: int) -> str:
    """``text`` without ``text[start:end]``, whitespace tidied at the cut only: the blanks on
    both sides become one space, or the longer run of line breaks when either side had one (a
    sentence on its own line leaves one line break), and nothing dangles at either end."""
    if not 0 <= start <= end <= len(text):
        raise InputError(f"span ({start}, {end}) is outside a text of {len(text)} characters")
    left, right = text[:start], text[end:]
    left_gap = left[len(left.rstrip()) :]
    right_gap = right[: len(right) - len(right.lstrip())]
    left, right = left.rstrip(), right.lstrip()
    if not left or not right:
        return left or right
    breaks = max(left_gap.count("\n"), right_gap.count("\n"))
    return left + ("\n" * breaks if breaks else " ") + right


def _tidy(sentence: str) -> str:
    return " ".join(sentence.split())


@dataclass(frozen=True, slots=True)
class PseudoClaimSet:
    """Pseudo-claims, their qrels and the training copy of the corpus they are searched in.

    ``requested`` is the ``n`` asked for, ``eligible`` how many passages of the corpus could give
    one (so ``len(claims) == min(requested, eligible)``).
    """

    claims: list[Claim]
    qrels: dict[str, dict[str, int]]
    corpus: list[Passage]
    requested: int
    eligible: int

    @property
    def shortfall(self) -> int:
        """How many fewer pseudo-claims than requested there are (0 when ``n`` were made)."""
        return self.requested - len(self.claims)

    @property
    def eligible_share(self) -> float:
        """The share of the corpus's passages that could give a pseudo-claim."""
        return self.eligible / len(self.corpus) if self.corpus else 0.0


def _check_int(name: str, value: object, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _candidates(
    passage: Passage, spans: list[tuple[int, int]], seen: Counter[str], min_words: int, max_words: int, context: int
) -> list[int]:
    """Indices into ``spans`` of the sentences of ``passage`` that can be held out."""
    text = passage.text
    sentences = [text[a:b] for a, b in spans]
    long_ones = [i for i, s in enumerate(sentences) if len(s.split()) >= context]
    out = []
    for i, sentence in enumerate(sentences):
        if not any(j != i for j in long_ones):
            continue
        if claim_like_reason(sentence, min_words=min_words, max_words=max_words) is not None:
            continue
        if seen[_tidy(sentence)] > 1 or text.count(sentence) > 1 or sentence in passage.title:
            continue
        out.append(i)
    return out


def inverse_cloze(
    passages: Iterable[Passage],
    n: int,
    *,
    seed: int = 0,
    min_words: int = 8,
    max_words: int = 40,
    context_words: int = 5,
) -> PseudoClaimSet:
    """At most ``n`` pseudo-claims from ``passages`` by the inverse cloze task (module docstring).

    ``min_words``/``max_words`` bound a claim-like sentence; ``context_words`` is the length an
    other sentence of the passage must reach for the passage to stay useful after the cut.
    Deterministic for a given corpus order and ``seed``. Raises :class:`InputError` for ``n`` < 1,
    a non-integer seed or bound, a non-:class:`Passage` item or a repeated passage id.
    """
    n = _check_int("n", n, 1)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise InputError(f"seed must be an integer, got {seed!r}")
    min_words = _check_int("min_words", min_words, 1)
    max_words = _check_int("max_words", max_words, min_words)
    context_words = _check_int("context_words", context_words, 1)
    corpus = list(passages)
    ids: set[str] = set()
    for p in corpus:
        if not isinstance(p, Passage):
            raise InputError(f"inverse_cloze expects Passage records, got {type(p).__name__}")
        if p.passage_id in ids:
            raise InputError(f"passage id {p.passage_id!r} occurs twice in the corpus")
        ids.add(p.passage_id)

    all_spans = [sentence_spans(p.text) for p in corpus]
    seen: Counter[str] = Counter(
        _tidy(p.text[a:b]) for p, spans in zip(corpus, all_spans, strict=True) for a, b in spans
    )
    candidates = [
        _candidates(p, spans, seen, min_words, max_words, context_words)
        for p, spans in zip(corpus, all_spans, strict=True)
    ]
    eligible = sum(1 for c in candidates if c)

    rng = random.Random(seed)
    order = list(range(len(corpus)))
    rng.shuffle(order)
    claims: list[Claim] = []
    qrels: dict[str, dict[str, int]] = {}
    training = list(corpus)
    for position in order:
        if len(claims) == n:
            break
        if not candidates[position]:
            continue
        passage = corpus[position]
        start, end = all_spans[position][rng.choice(candidates[position])]
        claim_id = f"{SOURCE}:{passage.passage_id}"
        meta = {"source": SOURCE, "passage_id": passage.passage_id, "span": (start, end)}
        claims.append(Claim(claim_id, _tidy(passage.text[start:end]), None, meta))
        qrels[claim_id] = {passage.passage_id: 1}
        training[position] = replace(passage, text=cut_span(passage.text, start, end))
    return PseudoClaimSet(claims=claims, qrels=qrels, corpus=training, requested=n, eligible=eligible)
