"""The part of the stance cross-encoder's model card that the report stage cannot write alone:
where every training pair came from (all origins of stage 1, with their licences), the stance
macro-F1 on each domain's dev pairs and the consistency suite's rates, read from the runs of
``benchmarks/stance_domains.py`` and ``benchmarks/consistency.py``.

    python -m factscout.training.stance.card_domains --card CARD.md --counts pairs.jsonl.counts.json \\
        --domains benchmarks/results/stance_domains/manifest.json \\
        --consistency benchmarks/results/consistency/manifest.json --model cross

rewrites the section between its markers (appended the first time), so running it twice changes nothing.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- domains:begin -->", "<!-- domains:end -->"
DOMAINS = ("scifact", "healthver", "checkcovid", "citint")
KINDS = ("self", "paraphrase", "negation", "direction", "unrelated", "subject_decided", "challenge_decided")


def section(counts: Mapping[str, Any], domains: Mapping[str, Any], consistency: Mapping[str, Any], model: str) -> str:
    """The card section: pairs and licences per origin, per-domain dev macro-F1 and consistency
    of ``model`` (a key of both benchmarks' headlines) beside the other models they scored."""
    licences: dict[str, list[str]] = counts["licences"]
    rows = []
    for origin, sources in counts["by_origin"].items():
        own = [s for s in sources if not s.startswith(("aug:", "consistency:"))]
        names = sorted({lic for s in own for lic in licences.get(s, [])})
        rows.append(f"| {origin} | {sum(sources.values()):,} | {'; '.join(names)} |")
    lines = [
        BEGIN,
        "## Every origin of the training pairs (stage 1) and its licence",
        "",
        "| origin (with its edits and consistency pairs) | pairs | licence |",
        "|---|---:|---|",
        *rows,
        "",
        "ANLI (CC BY-NC 4.0), SICK (CC BY-NC-SA 3.0) and AVeriTeC (CC BY-NC 4.0) are non-commercial: a model "
        "trained on them inherits that restriction for commercial use.",
        "",
        "## Stance macro-F1 per domain (dev pairs; the mean chooses)",
        "",
        "| model | " + " | ".join(DOMAINS) + " | mean |",
        "|---|" + "---:|" * (len(DOMAINS) + 1),
    ]
    for name, h in domains.items():
        if isinstance(h, Mapping) and "mean_dev" in h:
            mark = " (this model)" if name == model else ""
            lines.append(
                f"| `{name}`{mark} | " + " | ".join(f"{h[d]:.4f}" for d in DOMAINS) + f" | {h['mean_dev']:.4f} |"
            )
    lines += [
        "",
        "## Consistency suite (held-out claims of the four domains)",
        "",
        "| model | " + " | ".join(KINDS) + " |",
        "|---|" + "---:|" * len(KINDS),
    ]
    for name, rates in consistency.get("models", {}).items():
        mark = " (this model)" if name == model else ""
        lines.append(f"| `{name}`{mark} | " + " | ".join(f"{100 * rates[k]:.1f}%" for k in KINDS) + " |")
    lines += [
        "",
        "Bars: self ≥ 98 %, unrelated ≥ 98 %, negation ≥ 80 %, swapped subject decided ≤ 10 %.",
        "Reproduce: `python benchmarks/stance_domains.py --stance cross` and "
        "`python benchmarks/consistency.py --stance cross --per-domain 60`.",
        END,
    ]
    return "\n".join(lines)


def rewrite(card: str, text: str) -> str:
    """``card`` with its section replaced by ``text`` (appended when it has none)."""
    if BEGIN in card and END in card:
        return card[: card.index(BEGIN)] + text + card[card.index(END) + len(END) :]
    return card.rstrip("\n") + "\n\n" + text + "\n"


def _headline(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    return dict(data.get("headline", data))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--card", type=Path, required=True)
    parser.add_argument("--counts", type=Path, required=True, help="<pairs>.counts.json of train stance-pairs")
    parser.add_argument("--domains", type=Path, required=True, help="stance_domains manifest (or headline JSON)")
    parser.add_argument("--consistency", type=Path, required=True, help="consistency manifest (or headline JSON)")
    parser.add_argument("--model", default="cross", help="the card's model as the benchmarks name it")
    args = parser.parse_args(argv)
    text = section(
        json.loads(args.counts.read_text()), _headline(args.domains), _headline(args.consistency), args.model
    )
    args.card.write_text(rewrite(args.card.read_text(), text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
