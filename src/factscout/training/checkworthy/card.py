"""The model card of the check-worthiness models (``claims/models/CHECKWORTHY_CARD.md``)."""

from __future__ import annotations

from typing import Any

from factscout.datasets.checkworthy import SOURCES

_NAMES = {
    "linear": "linear (logistic regression on int8 MiniLM embeddings + surface features)",
    "minilm": "MiniLM fine-tune (int8)",
}


def _row(name: str, m: dict[str, Any]) -> str:
    ranking = f"{m['MAP']:.3f} | {m['P@10']:.3f}" if "MAP" in m else "- | -"
    return (
        f"| {name} | {int(m['sentences'])} ({int(m['check-worthy'])}) | **{m['F1']:.3f}** | {m['precision']:.3f} | "
        f"{m['recall']:.3f} | {m['oracle F1']:.3f} | {ranking} |"
    )


def _table(result: dict[str, Any], part: str) -> str:
    head = (
        "| set | sentences (check-worthy) | F1 | precision | recall | best F1 at any threshold | MAP | P@10 |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(_row(n, m) for n, m in result[part].items())


def model_card(metrics: dict[str, Any]) -> str:
    kinds = metrics["kinds"]
    default = metrics["default"]
    sections = []
    for kind, result in kinds.items():
        extra = ""
        if kind == "linear":
            extra = (
                f"L2 inverse strength C = {result['C']} (chosen on dev among "
                f"{', '.join(str(t['C']) for t in result['C tried'])}); encoder {result['encoder']}; "
                f"fitted in {result['fit seconds']:.0f} s after {result['embed seconds']:.0f} s of embedding (vectors "
                "from the on-disk cache when it holds them)."
            )
        else:
            fit = result["fit"]
            net = fit["network"]
            what = (
                "full fine-tune of all-MiniLM-L6-v2 (every weight but the vocabulary table, stored as int4 "
                "differences from the backbone)"
                if net["finetune"] == "full"
                else f"LoRA (rank {net['rank']}) fine-tune of all-MiniLM-L6-v2"
            )
            extra = (
                f"{what}, best epoch {fit['best epoch']} of {len(fit['history'])}, temperature "
                f"{fit['temperature']:.2f}; {fit['train sentences per epoch']} sentences per epoch at "
                f"{fit['sentences per second']:.1f} sentences/s on 2 shared CPU cores "
                f"({fit['train seconds'] / 60:.0f} min of training); int8 inference "
                f"{result['int8 sentences per second']:.0f} sentences/s."
            )
        sections.append(
            f"""### {_NAMES.get(kind, kind)}{" (default)" if kind == default else ""}

Labels: {", ".join(result["labels"])}. Threshold **{result["threshold"]:.3f}** (dev mean F1
{result["dev mean F1"]:.3f}). File `{kind_file(kind)}`, {result.get("bytes", 0):,} bytes, sha256
`{result.get("sha256", "?")}`. {extra}

Dev (chooses everything):

{_table(result, "dev")}

Test (scored once, after every choice):

{_table(result, "test")}
"""
        )
    licences = "\n".join(f"- {s.name}: {s.license}." for s in SOURCES.values())
    commands = "\n".join(dict.fromkeys(r.get("command", metrics["command"]) for r in kinds.values()))
    removed = ", ".join(f"{k} {v}" for k, v in metrics["removed for overlap"].items())
    return f"""# Check-worthiness models

Score how worth fact-checking a sentence is: `factscout.claims.load_checkworthy().score(texts)`
gives each text the probability that it is check-worthy, a label at the shipped threshold and
the probability of each label.

Default: **{_NAMES.get(default, default)}**, chosen by the mean check-worthy F1 over the three
dev sets (`load_checkworthy(kind="linear")` or `kind="minilm"` loads either).

## Data

- **Training** ({metrics["train"]["sentences"]:,} sentences, {metrics["train"]["check-worthy"]:,} check-worthy):
  {", ".join(metrics["train"]["parts"])}. Removed from training because a dev or test set holds the
  same tweet, the same sentence text, or (across datasets) the same debate: {removed}.
- **Dev**: {", ".join(f"{n} ({v['sentences']})" for n, v in metrics["dev sets"].items())}.
- **Test**: {", ".join(f"{n} ({v['sentences']})" for n, v in metrics["test sets"].items())}.
  The CheckThat! 2023 and 2024 English test sets are kept aside (not here).
- Three-way labels where the data has them (ClaimBuster's verdicts; CheckThat! 2022 1B/1A and
  2021 1A tweets: no claim / claim / check-worthy claim); binary elsewhere.

Licences of the data:

{licences}

These models are for research use, as the CheckThat! data terms say.

## Models

{chr(10).join(sections)}
F1 is of the check-worthy class at the shipped threshold; "best F1 at any threshold" is an
oracle for reference (the threshold chosen on that very set). MAP and P@k: each transcript a
query, as in CheckThat! 2021 1B.

## Reproduce

```
{commands}
```

Then `python benchmarks/checkworthy.py` scores both kinds and the baselines on the test sets.
"""


FILES = {"linear": "checkworthy_linear.npz", "minilm": "checkworthy_minilm.npz"}  # each kind's model file


def kind_file(kind: str) -> str:
    return FILES[kind]
