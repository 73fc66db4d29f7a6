"""General NLI pairs for a first NLI stage before claim-evidence stance, the fixed NLI check set
that stage is scored on, and the stance pairs of the sources ``factscout train stance-pairs``
offers beyond its default set.

Every pair is the hypothesis as the claim and the premise as the sentence (cut to
:data:`~factscout.training.stance.sources.MAX_CHARS` like every stance pair), entailment /
contradiction / neutral -> supports / refutes / not enough info, ``source`` = the dataset's name.

:func:`nli_check_set` (seeded, the same on every call): 2,000 MultiNLI dev-matched pairs, a
stratified sample (proportional allocation, largest remainders) over label x genre, tagged
``check:mnli``, and all 2,000 pairs of counterfactual SNLI's test split, ``check:snli_cf``. The
MultiNLI copy here (the HANS repository's) has no genre column, so the second stratum is the
pair's ``difficulty`` (how many of 100 BERT runs got it right: hard < 50, medium 50-89, easy
>= 90); a copy that has ``genre`` in its metadata is stratified by genre instead.

:func:`nli_training_pairs`: every pair of :data:`GENERAL_NLI` (MultiNLI dev-matched and its
contradicting examples; SNLI dev and test; counterfactual SNLI train and dev, never its test;
Breaking NLI; SICK both directions; ANLI dev) less the check set: a pair goes if its id is a
check-set id, or if its premise and hypothesis, normalised (:func:`text_key`: lower case, only
letters and digits, so SNLI's tokenised "do n't ." meets "don't."), equal a check pair's in
either order. A pair whose normalised premise and hypothesis were already seen is dropped as a
duplicate (the first kept, in :data:`GENERAL_NLI` order), and every copy of a pair that appears
with two labels (counterfactual SNLI has 39 revisions that left the text unchanged) is dropped. :data:`NLI_SOURCES_CLEAN` are the
sources whose licences allow commercial use; :func:`licences` names each source's licence.

The other named sources (:func:`extra_source_pairs`, used by ``build_stance_pairs``):

``mnli`` / ``snli`` / ``snli_cf`` / ``breaking_nli``
    Their :func:`nli_training_pairs` (check set and duplicates out).
``fever_symmetric``
    :func:`factscout.datasets.fever_symmetric.training_claims`: dev, full and generated less every
    pair of the test split (v0.1 ``full`` / ``generated`` are v0.2 dev + test, so this is the dev
    pairs less the 3 equal to a test pair). The test split never gives a training pair.
``sufficient_facts``
    All three parts: NOT ENOUGH -> not enough info, ENOUGH -> the label before.
``wice``
    Dev only (test stays an evaluation set): supported -> supports, not_supported -> not enough
    info; partially supported claims and supported claims whose premise exceeds ``MAX_CHARS``
    (cutting it could cut the support) give no pair.
``rte``
    Train only, the entailment pairs (supports); "not entailment" mixes refutes and not enough info.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path

from factscout.errors import UnknownName
from factscout.records import STANCE_LABELS, SUPPORTS, Claim
from factscout.training.stance.data import Pair
from factscout.training.stance.sources import MAX_CHARS, row_stance_pairs

log = logging.getLogger(__name__)

GENERAL_NLI = ("mnli", "snli", "snli_cf", "breaking_nli", "sick", "anli")
"""The general NLI sources of :func:`nli_training_pairs`, in the order duplicates are resolved."""
NLI_SOURCES_CLEAN = ("mnli", "snli", "snli_cf", "breaking_nli")
"""The general NLI sources whose licences allow commercial use (SICK and ANLI are non-commercial)."""
TRAINING_SPLITS = {
    "mnli": ("dev_matched", "contradicting"),
    "snli": ("dev", "test"),
    "snli_cf": ("train", "dev"),
    "breaking_nli": ("test",),
    "sick": ("all",),
    "anli": ("dev",),
}
EXTRA_SOURCES = ("mnli", "snli", "snli_cf", "breaking_nli", "fever_symmetric", "sufficient_facts", "wice", "rte")
"""The stance-pair sources ``build_stance_pairs`` offers beside its default set."""
CHECK_MNLI = 2000
CHECK_SEED = 0


def licences(sources: Iterable[str] = GENERAL_NLI) -> dict[str, str]:
    """Source -> its licence, as the dataset loader's ``SOURCE`` states it."""
    from factscout.training.cards import licence_of

    return {s: licence_of(s) for s in sources}


def text_key(text: str) -> str:
    """``text`` lower-cased with everything but letters and digits removed (spaces too)."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def pair_key(p: Pair) -> tuple[str, str]:
    """The normalised (premise, hypothesis) of a pair."""
    return text_key(p.sentence), text_key(p.claim)


def stratified_sample(claims: Sequence[Claim], n: int, stratum: Callable[[Claim], Hashable], seed: int) -> list[Claim]:
    """``n`` of ``claims`` (in their order), each stratum given its proportional share rounded by
    largest remainder (ties: the larger stratum, then the stratum's sorted position), drawn with
    ``random.Random(seed)`` going through the strata in sorted order."""
    groups: dict[Hashable, list[Claim]] = {}
    for c in claims:
        groups.setdefault(stratum(c), []).append(c)
    keys = sorted(groups, key=repr)
    n = min(n, len(claims))
    quota = {k: n * len(groups[k]) // len(claims) for k in keys}
    by_remainder = sorted(keys, key=lambda k: (-(n * len(groups[k]) % len(claims)), -len(groups[k]), keys.index(k)))
    for k in by_remainder[: n - sum(quota.values())]:
        quota[k] += 1
    rng = random.Random(seed)
    chosen = {c.claim_id for k in keys for c in rng.sample(groups[k], quota[k])}
    return [c for c in claims if c.claim_id in chosen]


def _stratum(c: Claim) -> tuple[str, str]:
    return str(c.meta.get("genre") or c.meta.get("difficulty") or ""), str(c.meta["label"])


def nli_check_set(root: str | Path | None = None) -> list[Pair]:
    """The fixed NLI check set (module docstring): 2,000 MultiNLI dev-matched pairs then the 2,000
    pairs of counterfactual SNLI test."""
    from factscout.datasets import load_dataset

    mnli = stratified_sample(load_dataset("mnli", "dev_matched", root).claims, CHECK_MNLI, _stratum, CHECK_SEED)
    return row_stance_pairs("check:mnli", mnli, "premise") + row_stance_pairs(
        "check:snli_cf", load_dataset("snli_cf", "test", root).claims, "premise"
    )


def nli_training_pairs(
    sources: Sequence[str] = GENERAL_NLI, root: str | Path | None = None, *, check: Sequence[Pair] | None = None
) -> list[Pair]:
    """Every pair of ``sources`` (of :data:`GENERAL_NLI`) less the check set (``check``, default
    :func:`nli_check_set`) and duplicates (module docstring); what was dropped is logged."""
    from factscout.datasets import load_dataset

    for s in sources:
        if s not in GENERAL_NLI:
            raise UnknownName("general NLI source", s, GENERAL_NLI)
    check = nli_check_set(root) if check is None else check
    check_ids = {p.claim_id for p in check}
    barred = {pair_key(p) for p in check} | {pair_key(p)[::-1] for p in check}
    order = sorted(dict.fromkeys(sources), key=GENERAL_NLI.index)
    dropped: dict[str, Counter[str]] = {s: Counter() for s in order}
    candidates: list[Pair] = []
    for source in order:
        for split in TRAINING_SPLITS[source]:
            for p in row_stance_pairs(source, load_dataset(source, split, root).claims, "premise"):
                if p.claim_id in check_ids or pair_key(p) in barred:
                    dropped[source]["in the check set"] += 1
                else:
                    candidates.append(p)
    labels: dict[tuple[str, str], set[int]] = {}
    for p in candidates:
        labels.setdefault(pair_key(p), set()).add(p.label)
    seen: set[tuple[str, str]] = set()
    out: list[Pair] = []
    for p in candidates:
        key = pair_key(p)
        if len(labels[key]) > 1:
            dropped[p.source]["conflicting labels"] += 1
        elif key in seen:
            dropped[p.source]["duplicates"] += 1
        else:
            seen.add(key)
            out.append(p)
    for source in order:
        kept = sum(p.source == source for p in out)
        log.info("%s: %d pairs (dropped: %s)", source, kept, dict(dropped[source]) or "none")
    return out


def counts(pairs: Iterable[Pair]) -> dict[str, dict[str, int]]:
    """Source -> label -> pair count, sources in first-seen order, labels in STANCE_LABELS order."""
    found: dict[str, Counter[int]] = {}
    for p in pairs:
        found.setdefault(p.source, Counter())[p.label] += 1
    return {s: {label: c[i] for i, label in enumerate(STANCE_LABELS)} for s, c in found.items()}


def extra_source_pairs(names: Sequence[str], root: str | Path | None = None) -> dict[str, list[Pair]]:
    """Source -> its stance pairs, for each of ``names`` (of :data:`EXTRA_SOURCES`; module docstring)."""
    from factscout.datasets import fever_symmetric, load_dataset

    for s in names:
        if s not in EXTRA_SOURCES:
            raise UnknownName("stance pair source", s, EXTRA_SOURCES)
    out: dict[str, list[Pair]] = {}
    general = [s for s in names if s in GENERAL_NLI]
    if general:
        pairs = nli_training_pairs(general, root)
        out.update({s: [p for p in pairs if p.source == s] for s in general})
    if "fever_symmetric" in names:
        out["fever_symmetric"] = row_stance_pairs("fever_symmetric", fever_symmetric.training_claims(root), "premise")
    if "sufficient_facts" in names:
        claims = [
            c for split in ("fever", "hover", "vitaminc") for c in load_dataset("sufficient_facts", split, root).claims
        ]
        out["sufficient_facts"] = row_stance_pairs("sufficient_facts", claims, "premise")
    if "wice" in names:
        claims = [
            c
            for c in load_dataset("wice", "dev", root).claims
            if c.meta["stance"] is not None and (c.meta["stance"] != SUPPORTS or len(c.meta["premise"]) <= MAX_CHARS)
        ]
        out["wice"] = row_stance_pairs("wice", claims, "premise")
    if "rte" in names:
        claims = [c for c in load_dataset("rte", "train", root).claims if c.meta["stance"] == SUPPORTS]
        out["rte"] = row_stance_pairs("rte", claims, "premise")
    return {s: out[s] for s in names if s in out}
