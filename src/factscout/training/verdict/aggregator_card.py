"""The verdict aggregator's model card, from the report of a training run
(:func:`factscout.training.verdict.aggregator.run`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factscout.training.verdict.evidence import OOF_RECIPE


def _row(name: str, s: dict[str, Any], ci: Sequence[float] | None) -> str:
    interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
    per = " | ".join(f"{v:.3f}" for v in s["f1"].values())
    return f"| {name} | {s['accuracy']:.3f} | {s['macro_f1']:.3f}{interval} | {per} |"


def _stance_note(r: dict[str, Any]) -> str:
    if r["pipeline"].get("training_part_stances") == OOF_RECIPE:
        return (
            "The shipped head was trained on the whole training part, so the fitting and dev claims went through\n"
            f"{OOF_RECIPE}: heads that never saw them, whose stances look like the shipped head's on unseen\n"
            "claims. The held-out claims went through the shipped head, as `check` runs it."
        )
    return (
        "Caveat: a stance model trained on the fitting or dev claims gives those claims sharper probabilities\n"
        "than it gives unseen claims, so the aggregator is then fitted (fitting claims) and chosen and\n"
        "calibrated (dev claims) on in-sample stances; only the held-out figures below are free of that."
    )


def model_card(r: dict[str, Any]) -> str:
    """The Markdown model card of a training run's report."""
    labels = list(r["heldout"]["learned"]["f1"])
    names = {"learned": "learned aggregator", "rule": "count rule (same pipeline output)",
             "majority": f"majority class ({r['baselines']['majority_label']})",
             "claim-only": f"claim only (logistic regression on the claim embedding, C={r['baselines']['claim_only_C']})"}  # fmt: skip
    rows = [_row(names[n], s, r["heldout_ci95"].get(n)) for n, s in r["heldout"].items()]
    diffs = [f"- {name}: [{lo:.3f}, {hi:.3f}]" for name, (lo, hi) in r["heldout_ci95"].items() if " - " in name]
    grid = ", ".join(f"C={g['C']}/{g['class_weight']}: {g['dev_macro_f1']:.3f}" for g in r["grid"])
    cal, ch = r["calibration"], r["chosen"]
    return f"""# Verdict aggregator (`--verdict learned`)

A multinomial logistic regression over {r["features"]} features of a claim's top-{r["config"]["k"]}
sentence stances (stance probabilities per slot, relevance-weighted class aggregates, confident
counts), its fused retrieval scores and the count rule's own verdict
(`src/factscout/verify/aggregate.py`). Classes: {", ".join(labels)}. Weights: `verdict_aggregator.json`
(plain JSON, sha256 `{r["sha256"]}`).

## Data

SciFact (Wadden et al. 2020) train claims, licence: {r["licence"]}. The held-out split of the stance
models ({r["claims"]["heldout"]} claims) is never fitted or tuned on; the training part is split into
{r["claims"]["fit"]} fitting and {r["claims"]["dev"]} dev claims (seeded claim-group splits, as for the
stance cross-encoder). Gold verdicts: {r["gold"]}.

Every claim went through the real `check` pipeline: {r["pipeline"]["retriever"]} over the
{r["pipeline"]["corpus"]}, planner `{r["pipeline"]["settings"]["planner"]}`, fusion
`{r["pipeline"]["settings"]["fusion"]}`, {r["pipeline"]["settings"]["passages"]} passages read, selector
`{r["pipeline"]["settings"]["selector"]}`, stance model `{r["pipeline"]["settings"]["stance"]}`
({r["stance_model"]}), count rule {r["pipeline"]["rule"]}. Pass time: {r["seconds"]["pipeline_pass"]} s
(0 when read from the `--features` cache).

{_stance_note(r)}

## Model selection (dev macro-F1)

{grid}

Chosen: C={ch["C"]}, class weight {ch["class_weight"]}; temperature {ch["temperature"]} fitted on dev
(negative log-likelihood {cal["dev"]["nll_raw"]} -> {cal["dev"]["nll"]}).

## Held-out claims ({r["claims"]["heldout"]})

| system | accuracy | macro-F1 (95 % CI) | {" | ".join(f"F1 {x}" for x in labels)} |
|---|---|---|{"---|" * len(labels)}
{chr(10).join(rows)}

Differences of macro-F1 (95 % bootstrap intervals, claims resampled):

{chr(10).join(diffs)}

Calibration of the aggregator on held-out claims: expected calibration error (10 bins)
{cal["heldout"]["ece_raw"]} before the temperature, {cal["heldout"]["ece"]} after; negative
log-likelihood {cal["heldout"]["nll_raw"]} -> {cal["heldout"]["nll"]}.

## Reproduce

    {r["command"] or "factscout train verdict-aggregator --out DIR"}

({r["seconds"]["total"]} s in all.)
"""


__all__ = ["model_card"]
