"""The aspects of a parsed claim: the rules of the offline decomposition planner
(:mod:`factscout.plan.decompose`), each a function of a spaCy ``Doc``.

From a claim's parse the planner builds *aspects*, each a short keyword query (content words, names and
numbers; function words are left out because a BM25 index with a short stop list would match
them everywhere). In plan order:

``focus``
    the claim's content split in two at the phrase boundary nearest its middle (never inside a
    name or a noun phrase): evidence often speaks to one half of a claim only, the who-did-what
    or the where-when-how-much, and a half ranks such evidence far higher than the whole does.
``drop``
    the claim without one of three phrase-aligned parts (leave one part out): a claim is often
    wrong in one detail, and evidence that matches the rest should not lose for missing it.
``topic``
    the claim's names, nouns and numbers: what it is about, without what it says about it.
``clause``
    one statement per predicate when the claim holds several: coordinated clauses and verb
    phrases ("X raised taxes and cut spending" -> "X raised taxes", "X cut spending"),
    relative clauses (the relative pronoun replaced by the noun it modifies), adverbial and
    reported clauses ("Says that ..." keeps only what is said); a missing subject is taken from
    the clause it hangs on (the shared subject of coordinated predicates), and a coordinated
    argument is split into one statement per conjunct ("banned A and B" -> "banned A",
    "banned B").
``quantity``
    each number, percentage, amount of money or measure, and each comparison ("more than",
    "doubled", "rose", comparatives, superlatives), with the noun it counts ("800,000 jobs"),
    its predicate and the predicate's subject and object.
``date``
    each time anchor ("in 2017", "between 2010 and 2015", "since March") with the statement it
    dates; a relative anchor ("last year") also gets the absolute year from the claim date.
``entity``
    each pair of salient named entities with the predicate linking them, and each entity with
    its predicate and object.

:func:`decompose_doc` applies the rules in plan order and drops repeats; a rule that fails on an
unforeseen parse is skipped, the others still apply.
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

log = logging.getLogger(__name__)

KINDS = ("focus", "drop", "topic", "clause", "quantity", "date", "entity")


@dataclass(frozen=True, slots=True)
class Aspect:
    """One checkable part of a claim: a short keyword query and the rule that found it."""

    text: str
    kind: str


# ---------------------------------------------------------------------------------------------
# vocabulary

_CONTENT_POS = {"NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV", "X"}
_SUBJ = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}
_SPLIT = {"conj", "ccomp", "advcl", "relcl", "parataxis"}  # clause heads below a clause
_REL_PRON = {"who", "whom", "which", "that", "whose", "where", "when"}
_REPORTING = {
    "say", "claim", "show", "state", "report", "reveal", "allege", "tweet", "post", "write", "announce", "suggest",
    "confirm", "declare", "insist", "warn", "argue", "share", "depict", "prove", "indicate", "add", "conclude",
}  # fmt: skip
_NUMERIC = {"PERCENT", "MONEY", "CARDINAL", "QUANTITY"}
_TIME = {"DATE", "TIME"}
_SALIENT = {"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "EVENT", "LAW", "PRODUCT", "WORK_OF_ART"}
_CHANGE = {
    "double", "triple", "quadruple", "halve", "increase", "decrease", "rise", "fall", "drop", "grow", "decline",
    "surge", "soar", "jump", "plunge", "plummet", "spike", "exceed", "surpass", "outnumber", "outpace", "cut",
    "reduce", "raise", "lower", "shrink", "climb", "slash", "boost",
}  # fmt: skip
_SYMBOLS = {"%", "$", "£", "€", "¥", "₹"}
_RELATIVE_YEAR = {"last year": -1, "this year": 0, "past year": -1, "next year": 1, "a year ago": -1}
_MAX_ENTITIES = 4  # entity pairs are formed among the first few salient entities only


# ---------------------------------------------------------------------------------------------
# tokens -> keyword query


def is_keyword(t: Token) -> bool:
    """A token worth searching for: a content word, a name or a number."""
    if not any(c.isalnum() for c in t.text):
        return False
    if t.like_num or (t.ent_type_ in _SALIENT and not t.is_punct and t.pos_ in {"PROPN", "NOUN", "ADJ"}):
        return True  # "US", "WHO" are names here, not stop words
    return t.pos_ in _CONTENT_POS and not t.is_stop and not t.is_punct and any(c.isalnum() for c in t.text)


def keywords(tokens: Iterable[Token]) -> str:
    """The keyword query of a token set: its keywords in claim order, with the claim's spacing
    between adjacent ones; a number keeps its percent or currency sign ("20%", "$4")."""
    chosen = {t for t in tokens if is_keyword(t) or (t.ent_type_ in _TIME and t.is_alpha)}
    for t in list(chosen):
        if t.like_num:
            doc = t.doc
            chosen |= {doc[j] for j in (t.i - 1, t.i + 1) if 0 <= j < len(doc) and doc[j].text in _SYMBOLS}
    kept = sorted(chosen, key=lambda t: t.i)
    parts: list[str] = []
    for a, b in zip(kept, [*kept[1:], None], strict=True):
        parts.append(a.text)
        if b is not None:
            parts.append(a.whitespace_ if b.i == a.i + 1 else " ")
    return "".join(parts).strip()


def _n_keywords(tokens: Iterable[Token]) -> int:
    return sum(1 for t in tokens if is_keyword(t))


def _same(a: Token, b: Token) -> bool:
    return a.i == b.i


def _is_root(t: Token) -> bool:
    return t.head.i == t.i


def _phrase(t: Token, limit: int = 6) -> set[Token]:
    """A phrase short enough to be part of a query: ``t``'s whole subtree, or its core."""
    full = set(t.subtree)
    if len(full) <= limit:
        return full
    core_deps = {"compound", "amod", "nummod", "poss", "nmod", "quantmod", "flat", "npadvmod"}
    core = {t}
    for c in t.children:
        if c.dep_ in core_deps:
            core |= {g for g in c.subtree if g.dep_ in core_deps or _same(g, c)}
    return core


# ---------------------------------------------------------------------------------------------
# clauses


def _is_clause_head(t: Token) -> bool:
    if t.dep_ == "ROOT":
        return True
    if t.dep_ in _SPLIT and t.pos_ in {"VERB", "AUX"}:
        return True
    # a coordinated predicate adjective/noun with its own subject ("X is rich and Y is poor")
    return t.dep_ == "conj" and any(c.dep_ in _SUBJ for c in t.children)


def _subject(v: Token, depth: int = 0) -> set[Token]:
    """The subject of clause head ``v``: its own, else the one it shares with the clause above."""
    for c in v.children:
        if c.dep_ in _SUBJ:
            if v.dep_ == "relcl" and c.lower_ in _REL_PRON:
                return _phrase(v.head)
            return _phrase(c, limit=10)
    if depth > 8 or _is_root(v):
        return set()
    if v.dep_ == "relcl" or (v.dep_ == "acl" and v.head.pos_ in {"NOUN", "PROPN"}):
        return _phrase(v.head)
    if v.dep_ in {"conj", "xcomp", "advcl"}:
        return _subject(v.head, depth + 1)
    return set()


def _inside_subclause(g: Token, top: Token) -> bool:
    """Whether ``g``, below ``top``, sits in a separate clause rooted between them."""
    t = g
    for _ in range(len(g.doc)):
        if _same(t, top) or _is_root(t):
            return False
        if t.dep_ in {"relcl", "advcl", "ccomp", "conj", "parataxis"} and t.pos_ in {"VERB", "AUX"}:
            return True
        t = t.head
    return False


def _own_tokens(v: Token) -> set[Token]:
    """Clause head ``v`` with its arguments, without the clauses that hang on it."""
    tokens = {v}
    for c in v.children:
        if _is_clause_head(c) and c.dep_ != "ROOT":
            continue
        if c.dep_ in {"cc", "mark", "preconj"} or (c.dep_ in _SUBJ and c.lower_ in _REL_PRON):
            continue
        tokens |= {g for g in c.subtree if not _inside_subclause(g, c)}
    return tokens


def _conjunct_variants(tokens: set[Token], head: Token) -> list[set[Token]]:
    """Split the first coordinated argument of a clause into one token set per conjunct."""
    for t in sorted(tokens, key=lambda x: x.i):
        if _same(t, head) or t.ent_type_ in _TIME | _NUMERIC:
            continue
        conjuncts = [c for c in t.children if c.dep_ == "conj" and c in tokens and c.pos_ not in {"VERB", "AUX"}]
        if not conjuncts:
            continue
        members = [t]
        while conjuncts:
            members += conjuncts
            conjuncts = [c for m in conjuncts for c in m.children if c.dep_ == "conj" and c in tokens]
        spans = [_own_span(m, members) for m in members]
        joints = {c for m in members for c in m.children if c.dep_ in {"cc", "preconj"} or (c.dep_ == "punct")}
        extent = set().union(*spans) | joints
        outside = tokens - extent
        shared = {c for c in t.children if c.dep_ in {"det", "poss"} and c.i < t.i}
        return [outside | span | shared for span in spans]
    return [tokens]


def _own_span(m: Token, members: Sequence[Token]) -> set[Token]:
    out = {m}
    for c in m.children:
        if c in members or c.dep_ in {"cc", "preconj", "punct"}:
            continue
        out |= set(c.subtree)
    return out


def _reporting_frame(v: Token) -> bool:
    """``v`` only frames the content ("Says ...", "Photo shows ...", "X concluded that ...")."""
    return v.lemma_.lower() in _REPORTING and any(c.dep_ in {"ccomp", "parataxis"} for c in v.children)


def clause_aspects(doc: Doc) -> list[Aspect]:
    """One statement per predicate, with its (shared) subject; coordinated arguments split.

    Empty when the claim is a single statement (that statement is the claim itself).
    """
    out: list[Aspect] = []
    for v in doc:
        if not _is_clause_head(v) or _reporting_frame(v):
            continue
        own = _own_tokens(v)
        subject = set() if any(c.dep_ in _SUBJ and c.lower_ not in _REL_PRON for c in v.children) else _subject(v)
        for variant in _conjunct_variants(own, v):
            tokens = variant | subject
            if _n_keywords(tokens) >= 2:
                out.append(Aspect(keywords(tokens), "clause"))
    return out if len({a.text.lower() for a in out}) > 1 else []


# ---------------------------------------------------------------------------------------------
# quantities and comparisons


def _governor(t: Token) -> Token:
    """The nearest predicate above ``t`` (``t`` itself when it is one)."""
    g = t
    for _ in range(len(t.doc)):
        if g.pos_ in {"VERB", "AUX"} or _is_root(g):
            return g
        g = g.head
    return g


def _arguments(v: Token, exclude: set[Token]) -> set[Token]:
    """The cores of ``v``'s subject and object (not the whole clause)."""
    out = _subject(v)
    for c in v.children:
        if c.dep_ in {"dobj", "attr", "oprd", "acomp"} and c not in exclude:
            out |= _phrase(c, limit=4)
    return out


def quantity_aspects(doc: Doc) -> list[Aspect]:
    """A query per number and per comparison: the quantity, what it counts, who and what does."""
    out: list[Aspect] = []
    numeric = [e for e in doc.ents if e.label_ in _NUMERIC]
    in_entity = {t.i for e in numeric for t in e}
    loose = [t for t in doc if t.like_num and t.i not in in_entity and t.ent_type_ not in _TIME]
    spans: list[tuple[set[Token], Token]] = [(set(e), e.root) for e in numeric] + [({t}, t) for t in loose]
    for tokens, root in spans:
        counted = root.head if root.dep_ in {"nummod", "quantmod", "compound", "amod", "npadvmod"} else root
        phrase = set(tokens) | set(root.subtree)
        if not _same(counted, root):
            phrase |= _phrase(counted, limit=4)
        v = _governor(counted)
        parts = phrase | {v} | _arguments(v, phrase) | _time_in(v)
        if _n_keywords(parts) >= 2:
            out.append(Aspect(keywords(parts), "quantity"))
    for t in doc:
        comparative = t.tag_ in {"JJR", "RBR", "JJS", "RBS"} and t.lower_ not in {"more", "most", "less", "least"}
        change = t.pos_ == "VERB" and t.lemma_.lower() in _CHANGE
        if not (comparative or change) or t.ent_type_ in _NUMERIC:
            continue
        noun = t.head if t.dep_ == "amod" else t
        parts = {t} | (_phrase(noun, limit=4) if not _same(noun, t) else set())
        for c in noun.children:
            if c.dep_ == "prep" and c.lower_ in {"than", "in", "of", "since", "by", "from", "to"}:
                parts |= {g for g in c.subtree if not _inside_subclause(g, c)}
        v = _governor(noun)
        parts |= {v} | _arguments(v, parts)
        if _n_keywords(parts) >= 2:
            out.append(Aspect(keywords(parts), "quantity"))
    return out


# ---------------------------------------------------------------------------------------------
# dates


def _time_in(v: Token) -> set[Token]:
    """The time anchors attached to predicate ``v``, with their preposition."""
    out: set[Token] = set()
    for c in v.children:
        sub = set(c.subtree)
        if len(sub) <= 8 and any(g.ent_type_ in _TIME for g in sub):
            out |= sub
    return out


def _absolute_year(span_text: str, claim_date: dt.date | None) -> str:
    if claim_date is None:
        return ""
    low = span_text.lower()
    for phrase, delta in _RELATIVE_YEAR.items():
        if phrase in low:
            return str(claim_date.year + delta)
    return ""


def date_aspects(doc: Doc, claim_date: dt.date | None = None) -> list[Aspect]:
    """The statement each time anchor dates: the anchor (with "in", "since", "between"...), the
    predicate, its subject and object."""
    out: list[Aspect] = []
    for e in doc.ents:
        if e.label_ not in _TIME:
            continue
        anchor = set(e)
        head = e.root.head
        if head.dep_ == "prep" or head.pos_ == "ADP":
            anchor.add(head)
            holder = head.head
        else:
            holder = head
        v = _governor(holder)
        parts = anchor | {v} | _arguments(v, anchor)
        if not _same(holder, v) and holder.pos_ in {"NOUN", "PROPN"}:
            parts |= _phrase(holder, limit=4)
        text = keywords(parts)
        year = _absolute_year(e.text, claim_date)
        if year and year not in text:
            text = f"{text} {year}".strip()
        if _n_keywords(parts) >= 2 or (year and text != year):
            out.append(Aspect(text, "date"))
    return out


# ---------------------------------------------------------------------------------------------
# focus and drop: the claim's content in phrase-aligned parts


def cut_points(doc: Doc, kept: Sequence[Token]) -> list[int]:
    """Positions ``i`` between ``kept[i-1]`` and ``kept[i]`` that do not split a name or noun phrase."""
    unit: dict[int, tuple[str, int]] = {}
    if doc.has_annotation("DEP"):
        for nc in doc.noun_chunks:
            for t in nc:
                unit[t.i] = ("np", nc.start)
    for e in doc.ents:
        for t in e:
            unit[t.i] = ("ent", e.start)
    return [i for i in range(1, len(kept)) if kept[i].i not in unit or unit.get(kept[i - 1].i) != unit[kept[i].i]]


def phrase_parts(doc: Doc, n: int) -> list[list[Token]]:
    """The claim's keywords in ``n`` consecutive parts of about equal size, cut only between
    phrases; empty when the claim is too short or has too few phrase boundaries."""
    kept = [t for t in doc if is_keyword(t)]
    if len(kept) < 2 * n:
        return []
    cuts = cut_points(doc, kept)
    points: list[int] = []
    for j in range(1, n):
        target = len(kept) * j / n
        options = [c for c in cuts if not points or c > points[-1]]
        if not options:
            return []
        points.append(min(options, key=lambda c: (abs(c - target), c)))
    bounds = [0, *points, len(kept)]
    parts = [kept[a:b] for a, b in itertools.pairwise(bounds)]
    return parts if all(parts) else []


def focus_aspects(doc: Doc) -> list[Aspect]:
    """Each half of the claim, split at the phrase boundary nearest the middle."""
    return [Aspect(keywords(p), "focus") for p in phrase_parts(doc, 2)]


def drop_aspects(doc: Doc) -> list[Aspect]:
    """The claim without one of its three phrase-aligned parts, for each part."""
    parts = phrase_parts(doc, 3)
    return [Aspect(keywords(t for j, p in enumerate(parts) if j != i for t in p), "drop") for i in range(len(parts))]


def topic_aspects(doc: Doc) -> list[Aspect]:
    """The claim's names, nouns and numbers (when that leaves out something)."""
    kept = [t for t in doc if is_keyword(t)]
    nouns = [t for t in kept if t.pos_ in {"NOUN", "PROPN", "NUM"} or t.like_num]
    if len(kept) < 4 or len(nouns) < 2 or len(nouns) == len(kept):
        return []
    return [Aspect(keywords(nouns), "topic")]


# ---------------------------------------------------------------------------------------------
# entities


def entity_aspects(doc: Doc) -> list[Aspect]:
    """Each salient entity pair with the predicate linking them, then each salient entity with
    its predicate and that predicate's other arguments."""
    unique = []
    seen: set[str] = set()
    for e in doc.ents:
        if e.label_ in _SALIENT and any(c.isalpha() for c in e.text) and e.text.lower() not in seen:
            seen.add(e.text.lower())
            unique.append(e)
    unique = unique[:_MAX_ENTITIES]
    out: list[Aspect] = []
    for i, a in enumerate(unique):
        for b in unique[i + 1 :]:
            va, vb = _governor(a.root), _governor(b.root)
            link = {va} if _same(va, vb) and va.pos_ == "VERB" else set()
            out.append(Aspect(keywords(set(a) | set(b) | link), "entity"))
    for e in unique:
        v = _governor(e.root)
        parts = set(e) | {v}
        for c in v.children:
            if c.dep_ in {"dobj", "attr", "oprd", "acomp", "nsubj", "nsubjpass"} and c not in e:
                parts |= _phrase(c, limit=3)
        if _n_keywords(parts) >= 2:
            out.append(Aspect(keywords(parts), "entity"))
    return out


# ---------------------------------------------------------------------------------------------
# the planner


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


_RULES: dict[str, Callable[[Doc, dt.date | None], list[Aspect]]] = {
    "clause": lambda doc, _: clause_aspects(doc),
    "quantity": lambda doc, _: quantity_aspects(doc),
    "date": date_aspects,
    "focus": lambda doc, _: focus_aspects(doc),
    "drop": lambda doc, _: drop_aspects(doc),
    "topic": lambda doc, _: topic_aspects(doc),
    "entity": lambda doc, _: entity_aspects(doc),
}


PARSE_SHAPE_ERRORS = (IndexError, KeyError, ValueError, AttributeError, TypeError)


def decompose_doc(doc: Doc, claim_date: dt.date | None = None, kinds: Sequence[str] = KINDS) -> list[Aspect]:
    """The aspects of a parsed claim in plan order (``kinds`` order), without repeats.

    A rule that fails on an unforeseen parse shape (an index, key, value, attribute or type error
    from walking the parse) is skipped with a warning naming the rule and the claim; the others
    still apply. Any other exception is a bug and propagates.
    """
    seen = {_key(doc.text)}
    out: list[Aspect] = []
    for kind in kinds:
        try:
            found = _RULES[kind](doc, claim_date)
        except PARSE_SHAPE_ERRORS as exc:  # a parse shape no rule foresaw must not sink a batch
            log.warning("decompose rule %s skipped on %r: %s: %s", kind, doc.text[:80], type(exc).__name__, exc)
            continue
        for aspect in found:
            key = _key(aspect.text)
            if key and key not in seen:
                seen.add(key)
                out.append(aspect)
    return out
