#!/usr/bin/env bash
# Train stance cross-encoders on a lent GPU (factscout.training.stance_gpu): prepare here, run there.
#
#   scripts/gpu-stance.sh prepare      # here: pairs, bundle (gzipped) and an fp16 MiniLM into .gpu/ (about 45 MB)
#   scripts/gpu-stance.sh command      # prints the command to run on the GPU machine (carry .gpu)
#
# On the GPU machine (python3 with torch and transformers; no factscout install, no network):
#   FACTSCOUT_MINILM_DIR=.gpu/minilm16 PYTHONPATH=src python3 -m factscout.training.stance_gpu \
#       --bundle .gpu/bundle.json.gz --out "$OUT" --seconds 470
# It writes <job>.npz (int4 deltas, about 5 MB each) and logs.json; score them here with
# benchmarks/stance_domains.py and benchmarks/consistency.py.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
GPU=.gpu
case "${1:-}" in
prepare)
    mkdir -p "$GPU" .factscout
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >>.git/info/exclude
    PAIRS=${PAIRS:-.factscout/stance-pairs.jsonl}
    [ -s "$PAIRS" ] || .venv/bin/factscout train stance-pairs --out "$PAIRS"
    .venv/bin/factscout train stance-cross --out "$GPU/prepare" --stage prepare --bundle "$GPU/bundle.json" --pairs "$PAIRS"
    gzip -9 -f "$GPU/bundle.json"
    "$PY" - "$GPU/minilm16" <<'PYEOF'
import shutil, sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from factscout.nn.backbone import backbone_path

src, dst = Path(backbone_path("minilm")), Path(sys.argv[1])
dst.mkdir(parents=True, exist_ok=True)
for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
    shutil.copy(src / name, dst / name)
weights = {k: v.to(torch.float16).contiguous() for k, v in load_file(src / "model.safetensors").items()}
save_file(weights, dst / "model.safetensors", metadata={"format": "pt"})
print(f"fp16 backbone: {sum(p.stat().st_size for p in dst.iterdir()) / 1e6:.1f} MB in {dst}")
PYEOF
    du -sh "$GPU"/bundle.json.gz "$GPU"/minilm16
    ;;
command)
    echo "FACTSCOUT_MINILM_DIR=$GPU/minilm16 PYTHONPATH=src PYTHONUNBUFFERED=1 python3 -m factscout.training.stance_gpu --bundle $GPU/bundle.json.gz --out \"\$OUT\" --seconds 470"
    ;;
*)
    echo "usage: $0 prepare|command" >&2
    exit 2
    ;;
esac
