"""The honest protocol for the time-aware models: choices on a validation split of MultiFC train,
figures as the mean over seeds with a paired test against ``base``.

* MultiFC train is split by claim id (:func:`~factscout.training.temporal.data.validation_split`,
  15% by default) into a *fit* split the models train on and a *validation* split.
* Every seed trains its own BiLSTM encoders and every method's model on the fit split
  (:func:`run_protocol`), and scores the validation split and the *scored* split (MultiFC dev,
  or another file).
* The only choice made from results, which domains use the time-aware model and which fall back
  to ``base`` (:func:`choose_domains`), sees the validation results alone; the mixture weights are
  learned on the fit split by the veracity loss. The scored split never reaches either
  (``tests/training/temporal/test_temporal_protocol.py`` poisons its labels and checks nothing changes).
* Figures: each method's domain-averaged micro-F1 per seed, their mean and sd, the seed ensemble
  (mean label probabilities over the seeds' models), and a paired sign-flip permutation test
  over claims (:func:`paired_test`) of the per-claim correctness averaged over seeds.
"""

from __future__ import annotations

import dataclasses
import logging
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from factscout.errors import InputError
from factscout.training.temporal.data import VALIDATION_SHARE, published_before_claim, validation_split
from factscout.training.temporal.trainer import (
    ALL_METHODS,
    DomainResult,
    Example,
    Featurizer,
    TrainSettings,
    bilstm_vectors,
    f1_scores,
    labels_of,
    run_method,
    train_bilstm_encoders,
)

log = logging.getLogger(__name__)

TIME_AWARE = "time-aware"
SHIPPED = "shipped (time-aware where it gains on validation, else base)"
LEAKAGE_SUFFIX = " (published before claim)"
Results = dict[str, dict[str, dict[str, DomainResult]]]  # {method: {split: {domain: result}}}


def domain_average(results: Mapping[str, DomainResult]) -> float:
    """Micro-F1 averaged over the domains (the MultiFC papers' figure)."""
    return sum(r.micro_f1 for r in results.values()) / len(results) if results else 0.0


def choose_domains(validation: Mapping[str, Sequence[Mapping[str, DomainResult]]]) -> dict[str, str]:
    """Per domain, ``time-aware`` where its validation micro-F1, averaged over the seeds, is
    strictly above ``base``'s, else ``base``. ``validation``: ``{method: [per seed {domain:
    result}]}`` for ``base`` and ``time-aware``, all on the validation split."""
    if "base" not in validation or TIME_AWARE not in validation:
        raise InputError("choose_domains needs the validation results of 'base' and 'time-aware'")
    choice = {}
    for domain in sorted({d for seed in validation["base"] for d in seed}):
        base = statistics.mean(seed[domain].micro_f1 for seed in validation["base"] if domain in seed)
        timed = [seed[domain].micro_f1 for seed in validation[TIME_AWARE] if domain in seed]
        choice[domain] = TIME_AWARE if timed and statistics.mean(timed) > base else "base"
    return choice


def correctness(results: Mapping[str, DomainResult]) -> dict[str, tuple[str, bool]]:
    """``{claim_id: (domain, predicted == gold)}``."""
    return {
        c: (r.domain, p == g)
        for r in results.values()
        for c, p, g in zip(r.claim_ids, r.predicted, r.gold, strict=True)
    }


def paired_test(
    a: Sequence[Mapping[str, DomainResult]],
    b: Sequence[Mapping[str, DomainResult]],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float]:
    """(difference, two-sided p) of domain-averaged micro-F1, B minus A, averaged over seeds.

    Paired sign-flip permutation test over claims: each claim's correctness is averaged over the
    seeds for A and for B, and the statistic is the domain-averaged difference (each claim
    weighted 1 / (domains x claims in its domain), so the statistic is exactly the difference of
    the domain-averaged micro-F1 means); under the null the sign of each claim's difference is
    exchangeable. p counts the observed statistic among the resamples ((k + 1) / (n + 1))."""
    if not a or len(a) != len(b):
        raise InputError("paired_test needs the same number (>= 1) of seeds for both methods")
    per_a = [correctness(r) for r in a]
    per_b = [correctness(r) for r in b]
    claims = sorted(per_a[0])
    if any(set(r) != set(claims) for r in (*per_a, *per_b)):
        raise InputError("paired_test: both methods must score the same claims in every seed")
    domain = [per_a[0][c][0] for c in claims]
    sizes: dict[str, int] = {}
    for d in domain:
        sizes[d] = sizes.get(d, 0) + 1
    weight = np.array([1.0 / (len(sizes) * sizes[d]) for d in domain])
    ca = np.array([[r[c][1] for c in claims] for r in per_a], dtype=float).mean(axis=0)
    cb = np.array([[r[c][1] for c in claims] for r in per_b], dtype=float).mean(axis=0)
    diff = (cb - ca) * weight
    observed = float(diff.sum())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 1000):
        size = min(1000, n_resamples - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(size, len(diff)))
        hits += int((np.abs(signs @ diff) >= abs(observed) - 1e-12).sum())
    return observed, (hits + 1) / (n_resamples + 1)


def ensemble(per_seed: Sequence[Mapping[str, DomainResult]], featurizer: Featurizer) -> dict[str, DomainResult]:
    """The seeds' models as one: per claim the mean of their label probabilities, then argmax."""
    out = {}
    for domain, first in per_seed[0].items():
        probas = [seed[domain].proba for seed in per_seed]
        if any(p is None for p in probas):
            raise InputError("ensemble needs the label probabilities of every seed (DomainResult.proba)")
        mean = np.mean(np.stack(probas), axis=0)  # type: ignore[arg-type]
        predicted = labels_of(mean, featurizer.labels)
        micro, macro = f1_scores(first.gold, predicted)
        out[domain] = dataclasses.replace(first, micro_f1=micro, macro_f1=macro, predicted=tuple(predicted), proba=mean)
    return out


def gated(
    base: Mapping[str, DomainResult], timed: Mapping[str, DomainResult], choice: Mapping[str, str]
) -> dict[str, DomainResult]:
    """Per domain the result of the method ``choice`` names (domains missing from it: base)."""
    return {d: (timed[d] if choice.get(d) == TIME_AWARE and d in timed else r) for d, r in base.items()}


@dataclass
class ProtocolResult:
    seeds: list[int]
    featurizer: Featurizer
    runs: list[Results]  # one per seed
    choice: dict[str, str]  # domain -> time-aware | base, from validation only
    mixture: dict[str, list[float]]  # domain -> mean π over seeds (METHODS order), learned on fit
    n_fit: int
    n_validation: int
    n_scored: int
    seconds: list[float] = field(default_factory=list)

    def per_seed(self, method: str, split: str) -> list[dict[str, DomainResult]]:
        if method == SHIPPED:
            return [gated(r["base"][split], r[TIME_AWARE][split], self.choice) for r in self.runs]
        return [r[method][split] for r in self.runs]

    def methods(self) -> list[str]:
        names = list(self.runs[0])
        return [*names, SHIPPED] if TIME_AWARE in names else names


def run_protocol(
    train: Sequence[Example],
    scored: Sequence[Example],
    *,
    seeds: Sequence[int],
    settings: TrainSettings,
    methods: Sequence[str] = ("base", "search rank", "random", "delta-t", TIME_AWARE),
    leakage_methods: Sequence[str] = ("base", TIME_AWARE),
    share: float = VALIDATION_SHARE,
    chooser: Callable[[Mapping[str, Sequence[Mapping[str, DomainResult]]]], dict[str, str]] = choose_domains,
    progress: Callable[[str], None] | None = None,
    encoder: str = "bilstm",
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
) -> ProtocolResult:
    """Train every method with every seed on the fit split of ``train``, score the validation split
    and ``scored``; ``leakage_methods`` are trained and scored once more with the evidence dated on
    or after the claim removed everywhere (method name + :data:`LEAKAGE_SUFFIX`). ``encoder``:
    ``bilstm`` (BiLSTM claim and evidence encoders trained per seed, the paper's) or ``minilm``
    (fixed MiniLM vectors from ``embed``, e.g. :meth:`~factscout.temporal.embeddings.EmbeddingStore.embed`)."""
    unknown = [m for m in (*methods, *leakage_methods) if m not in ALL_METHODS]
    if unknown:
        raise InputError(f"no joint-model method {unknown[0]!r}; known: {', '.join(ALL_METHODS)}")
    if "base" not in methods or len(seeds) < 1:
        raise InputError("the protocol needs 'base' among the methods and at least one seed")
    scored_ids = {e.claim_id for e in scored}
    fit, validation = validation_split(train, share)
    if scored_ids & {e.claim_id for e in train}:
        raise InputError("the scored claims overlap the training claims")
    featurizer = Featurizer.fit(encoder, fit, embed=embed)
    splits = {"validation": validation, "scored": list(scored)}
    tensors = {"fit": featurizer.transform(fit), **{k: featurizer.transform(v) for k, v in splits.items()}}
    leak = {}
    if leakage_methods:
        leak = {
            "fit": featurizer.transform([published_before_claim(e) for e in fit]),
            **{k: featurizer.transform([published_before_claim(e) for e in v]) for k, v in splits.items()},
        }
    say = progress or (lambda _: None)
    runs: list[Results] = []
    seconds = []
    for seed in seeds:
        start = time.perf_counter()
        s = dataclasses.replace(settings, seed=seed)
        if encoder == "bilstm":
            encoders = train_bilstm_encoders(featurizer, tensors["fit"], s)
            vec = {k: bilstm_vectors(encoders, t, threads=s.threads) for k, t in tensors.items()}
        else:  # the featurizer's MiniLM vectors are the text vectors
            vec = tensors
        run: Results = {}
        for method in methods:
            run[method] = run_method(featurizer, method, vec["fit"], {k: vec[k] for k in splits}, s)
            say(f"seed {seed} {method}: validation {domain_average(run[method]['validation']):.4f}")
        if leak:
            lvec = (
                {k: bilstm_vectors(encoders, t, threads=s.threads) for k, t in leak.items()}
                if encoder == "bilstm"
                else leak
            )
            for method in leakage_methods:
                run[method + LEAKAGE_SUFFIX] = run_method(
                    featurizer, method, lvec["fit"], {k: lvec[k] for k in splits}, s
                )
                say(f"seed {seed} {method}{LEAKAGE_SUFFIX}: done")
        runs.append(run)
        seconds.append(time.perf_counter() - start)
        say(f"seed {seed}: {seconds[-1]:.0f} s")
    choice: dict[str, str] = {}
    mixture: dict[str, list[float]] = {}
    if TIME_AWARE in methods:
        # the one choice made from results: validation results only
        choice = chooser({m: [r[m]["validation"] for r in runs] for m in ("base", TIME_AWARE)})
        for domain in sorted(runs[0][TIME_AWARE]["validation"]):
            weights = [r[TIME_AWARE]["validation"][domain].mixture for r in runs]
            mixture[domain] = [float(x) for x in np.mean(np.array(weights), axis=0)]
    return ProtocolResult(
        list(seeds), featurizer, runs, choice, mixture, len(fit), len(validation), len(scored), seconds
    )


def summary_rows(result: ProtocolResult, split: str) -> list[dict[str, object]]:
    """Per method: per-seed domain-averaged micro-F1, mean, sd, ensemble, paired test vs base."""
    base = result.per_seed("base", split)
    rows = []
    for method in result.methods():
        per_seed = result.per_seed(method, split)
        values = [domain_average(r) for r in per_seed]
        reference = base
        if method.endswith(LEAKAGE_SUFFIX):
            reference = result.per_seed("base" + LEAKAGE_SUFFIX, split)
        delta, p = paired_test(reference, per_seed) if method not in ("base", "base" + LEAKAGE_SUFFIX) else (0.0, 1.0)
        ens = (
            domain_average(ensemble(per_seed, result.featurizer))
            if method != SHIPPED
            else domain_average(
                gated(
                    ensemble(base, result.featurizer),
                    ensemble(result.per_seed(TIME_AWARE, split), result.featurizer),
                    result.choice,
                )
            )
        )
        rows.append(
            {
                "method": method,
                "seeds": values,
                "mean": statistics.mean(values),
                "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
                "ensemble": ens,
                "delta_vs_base": delta,
                "p_vs_base": p,
            }
        )
    return rows
