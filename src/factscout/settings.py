"""The settings of a check: one :class:`CheckSettings` field per knob of the pipeline, each
with the help text and command-line flag its options are generated from.

``factscout check`` and ``factscout serve`` (:mod:`factscout.cli.settings`) read their check
options from these fields, and ``check --server`` refuses the ones a server decides, so a new
step is one registry entry and one field here. The module stays light (the registries and no
models): the CLI imports it before any input is read.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from factscout.errors import InputError
from factscout.fuse import FUSIONS
from factscout.plan import PLANNERS
from factscout.registry import Registry
from factscout.select import SELECTORS
from factscout.verify import STANCE_MODELS, VERDICT_METHODS
from factscout.verify.base import HasInt8Form, split_stance_name

# the settings a client sends with each request (``/v1/check``'s ``planner`` and ``date_filter``);
# a server decides every other one
PER_REQUEST = ("planner", "date_filter")
# settings renamed so that a field's name is its flag's (old name -> new); read with a warning
RENAMED = {"min_confidence": "min_stance_confidence"}

DATE_FILTER_HELP = (
    "keep only passages published before the claim's (query's) date, for each claim or query that has one "
    "(--date or the file's date field); a claim or query without a date is not filtered. On by default; "
    "--no-date-filter also uses later passages"
)
STANCE_HELP = (
    "stance model: {choices} (nli:<hub model id or local folder>: any sentence-transformers CrossEncoder NLI model;"
    " needs internet for a hub id not yet cached; ensemble:A+B, each member optionally =weight: several models"
    " pooled)"
)


def option(
    help: str, *, flags: tuple[str, ...] = (), choices: Registry[Any] | None = None, metavar: str | None = None
) -> Any:
    """A setting's command-line face: ``help`` (``{choices}`` is replaced by the registered names
    of ``choices``), its ``flags`` (default ``--name``; ``--x/--no-x`` for a switch) and ``metavar``."""
    return {"help": help, "flags": flags, "choices": choices, "metavar": metavar}


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """The knobs of :class:`~factscout.check.Checker`; every one is recorded in each report's provenance.

    ``selector``, ``stance`` and ``verdict`` name entries of ``SELECTORS``, ``STANCE_MODELS`` and
    ``VERDICT_METHODS`` (``stance`` may be ``kind:arg``, as ``nli:<hub id or folder>``); ``rerank``
    turns on the ``cross-encoder`` re-ranker and ``temporal`` the ``time-aware`` one with that
    temporal ranking (both from ``RERANKERS``). ``fast`` chooses int8 inference: ``True``
    everywhere, ``False`` nowhere (the fp32 path), ``None`` where it measured within noise of fp32
    (the stance cross-encoder and a hybrid index's queries; docs/results.md).
    """

    planner: str = field(default="decompose", metadata=option("query planner: {choices}", choices=PLANNERS))
    fusion: str = field(
        default="combsum-norm", metadata=option("how sub-query rankings are fused: {choices}", choices=FUSIONS)
    )
    depth: int = field(default=100, metadata=option("passages retrieved per query"))
    # latency grows with the passages read (docs/results.md)
    passages: int = field(default=5, metadata=option("top passages read for evidence sentences"))
    rerank: bool = field(
        default=False,
        metadata=option("re-rank the top --rerank-depth with factscout's cross-encoder", flags=("--rerank",)),
    )
    rerank_depth: int = field(default=50, metadata=option("with --rerank: the fused top passages re-ranked"))
    date_filter: bool = field(
        default=True, metadata=option(DATE_FILTER_HELP, flags=("--date-filter/--no-date-filter",))
    )
    selector: str = field(
        default="threshold",
        metadata=option("evidence sentence selector: {choices} (bio: more precise, finds less)", choices=SELECTORS),
    )
    stance: str = field(default="cross", metadata=option(STANCE_HELP, choices=STANCE_MODELS))
    verdict: str = field(default="rule", metadata=option("verdict method: {choices}", choices=VERDICT_METHODS))
    threshold: float | None = field(
        default=None, metadata=option("the threshold selector's similarity cut-off [default: the tuned one]")
    )
    min_evidence: int | None = field(
        default=None, metadata=option("count rule: sentences needed for a definite verdict [default: tuned]")
    )
    min_share: float | None = field(
        default=None,
        metadata=option(
            "count rule: the share of the counted sentences the winning side needs (0.5: more wins; "
            "higher calls mixed evidence not enough evidence) [default: tuned]",
            metavar="S",
        ),
    )
    min_stance_confidence: float | None = field(
        default=None,
        metadata=option("count rule: a sentence's stance probability needed to count it [default: tuned]", metavar="P"),
    )
    min_verdict_confidence: float | None = field(
        default=None,
        metadata=option(
            "withhold a supported/refuted verdict whose confidence is below P (0 to 1): it becomes"
            " 'not enough evidence' and the report says why; default: the threshold stored with the shipped"
            " confidence model, chosen on dev claims for precision >= 0.80. The shipped model has none (no"
            " threshold reached 0.80 on its 177 dev calls), so by default nothing is withheld; 0: never withhold",
            flags=("--min-verdict-confidence", "--min-confidence"),
            metavar="P",
        ),
    )
    max_queries: int | None = field(default=None, metadata=option("most queries the planner makes per claim"))
    temporal: str | None = field(
        default=None, metadata=option("time-aware re-ranking with this temporal ranking (temporal/rerank.py)")
    )
    temporal_weight: float = field(default=0.3, metadata=option("with --temporal: the weight of the temporal score"))
    factchecks: str | None = field(
        default=None,
        metadata=option(
            "a fact-check memory (built with `factscout factchecks index`): its published fact-checks of the claim"
            " are shown under 'Checked before', apart from the evidence (the verdict does not use them)",
            metavar="DIR",
        ),
    )
    fast: bool | None = field(
        default=None,
        metadata=option(
            "int8 inference everywhere (--fast) or nowhere (--no-fast, the fp32 path); by default only where"
            " measured within noise of fp32: the stance cross-encoder and a hybrid index's queries",
            flags=("--fast/--no-fast",),
        ),
    )

    def __post_init__(self) -> None:
        from factscout.rerank.base import RERANKERS
        from factscout.verify.confidence import check_min_confidence

        for name in ("depth", "passages", "rerank_depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        PLANNERS[self.planner]  # an unknown name raises UnknownName listing the known ones
        FUSIONS[self.fusion]
        VERDICT_METHODS[self.verdict]
        SELECTORS[self.selector]
        split_stance_name(self.stance)  # a registered name, or kind:arg (nli:<model>)
        if self.passages > self.depth:
            raise InputError(f"passages ({self.passages}) cannot exceed the retrieval depth ({self.depth})")
        if self.temporal is not None:
            RERANKERS["time-aware"](self.temporal, self.temporal_weight)  # an unknown method lists the known ones
        if self.fast not in (None, True, False):
            raise InputError(f"fast must be true, false or null (the measured default), got {self.fast!r}")
        if self.min_verdict_confidence is not None:
            check_min_confidence(self.min_verdict_confidence, "min_verdict_confidence (--min-verdict-confidence)")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> CheckSettings:
        """Settings from a mapping of field names (a settings file, a stored provenance, options):
        a name retired in an earlier release is read as its new one with a ``DeprecationWarning``
        (:data:`RENAMED`), and an unknown name is an :class:`InputError` listing the known ones."""
        known = {f.name for f in fields(cls)}
        out: dict[str, Any] = {}
        for name, value in values.items():
            if name in RENAMED:
                new = RENAMED[name]
                warnings.warn(f"setting {name!r} is now {new!r}; the old name goes in a later release",
                              DeprecationWarning, stacklevel=2)  # fmt: skip
                if new in values:
                    raise InputError(f"give {new!r} or its old name {name!r}, not both")
                name = new
            if name not in known:
                raise InputError(f"unknown setting {name!r}; known: {', '.join(sorted(known))}")
            out[name] = value
        return cls(**out)

    @property
    def min_confidence(self) -> float | None:
        """Deprecated: :attr:`min_stance_confidence` (the name of its flag, ``--min-stance-confidence``)."""
        warnings.warn("CheckSettings.min_confidence is now min_stance_confidence", DeprecationWarning, stacklevel=2)
        return self.min_stance_confidence

    def int8_queries(self, retriever: str | None) -> bool:
        """Whether an index of this kind has its queries embedded by the int8 MiniLM: always with
        ``fast=True``; by default only on hybrid indexes (dense-only nDCG@10 moved by -0.005)."""
        kinds = ("dense", "hybrid") if self.fast else ("hybrid",) if self.fast is None else ()
        return retriever in kinds

    @property
    def stance_model_name(self) -> str:
        """The registered stance model loaded: a stance model's entry names its int8 form
        (``cross`` runs as ``cross-int8``, ``cross:<file>`` as ``cross-int8:<file>``), used unless
        ``fast=False``, inside an ensemble too."""
        from factscout.verify.ensemble import KIND as ENSEMBLE
        from factscout.verify.ensemble import rename_members

        if self.fast is False:
            return self.stance
        kind, colon, arg = self.stance.partition(":")
        if kind == ENSEMBLE:
            return f"{kind}{colon}{rename_members(arg, _int8)}"
        return _int8(self.stance)


def _int8(name: str) -> str:
    """The int8 form its stance model's entry names (``cross:<file>`` -> ``cross-int8:<file>``);
    a model without one as it is."""
    kind, colon, arg = name.partition(":")
    if kind in STANCE_MODELS and isinstance(factory := STANCE_MODELS[kind], HasInt8Form):
        return f"{factory.int8}{colon}{arg}"
    return name
