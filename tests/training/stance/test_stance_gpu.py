"""The GPU training script's CPU dry run on a tiny backbone: the whole plan runs, keeps the models
it should, logs every job with its per-domain dev scores, and skips what no longer fits the time."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.tiny_nli import PAIRS, tiny_bert

pytestmark = pytest.mark.encoder


def _bundle(path):
    rows = []
    for i, p in enumerate(PAIRS):
        for origin in ("scifact", "covidfact", "citint", "sick"):
            rows.append([p["claim"], p["sentence"], i % 3, origin if origin != "sick" else "sick", origin])
            rows.append([p["claim"], p["claim"], 0, "consistency:self", origin])
    dev = [[p["claim"], p["sentence"], i % 3] for i, p in enumerate(PAIRS)]
    bundle = {"format": "factscout-stance-cross-bundle", "pairs": rows, "dev": dev,
              "dev_sets": {"scifact": dev, "healthver": dev[:2]}, "claims": {}}  # fmt: skip
    with gzip.open(path, "wt") as f:
        json.dump(bundle, f)
    return path


def test_dry_run_runs_the_plan(tmp_path, monkeypatch):
    from factscout.training.stance import gpu as stance_gpu
    from factscout.verify.cross_stance import CrossStanceModel

    monkeypatch.setenv("FACTSCOUT_MINILM_DIR", str(tiny_bert(tmp_path / "bert")))
    out = tmp_path / "out"
    plan = [
        stance_gpu.Job("main", max_length=32),
        stance_gpu.Job("loso-consistency", stage2=False, leave_out="consistency", keep=False),
    ]
    bundle = stance_gpu.read_bundle(_bundle(tmp_path / "bundle.json.gz"))
    import time

    logs = stance_gpu.run_plan(bundle, plan, out, deadline=time.monotonic() + 600, device="cpu", dry_run=True)
    assert sorted(p.name for p in out.iterdir()) == ["logs.json", "main-s1.npz", "main.npz"]
    assert set(logs["jobs"]) == {"main", "loso-consistency"}
    main = logs["jobs"]["main"]
    assert set(main["stage2"]["dev_per_domain"][0]) == {"scifact", "healthver"}
    assert main["stage2"]["pairs"] == 12  # stage 2: the in-domain origins only (scifact, citint)
    assert logs["jobs"]["loso-consistency"]["stage1"]["pairs"] == 12  # the self pairs left out
    model = CrossStanceModel.load(out / "main.npz")
    probs = model.predict_pairs([PAIRS[0]["claim"]], [PAIRS[0]["sentence"]])
    assert probs.shape == (1, 3)


def test_a_job_that_no_longer_fits_is_skipped(tmp_path, monkeypatch):
    import time

    from factscout.training.stance import gpu as stance_gpu

    monkeypatch.setenv("FACTSCOUT_MINILM_DIR", str(tiny_bert(tmp_path / "bert")))
    bundle = stance_gpu.read_bundle(_bundle(tmp_path / "bundle.json.gz"))
    plan = [stance_gpu.Job("a", max_length=32, stage2=False), stance_gpu.Job("b", max_length=32, stage2=False)]
    logs = stance_gpu.run_plan(bundle, plan, tmp_path / "out", deadline=time.monotonic() + 0.5, device="cpu")
    assert list(logs["jobs"]) == ["a"]
    assert logs["skipped"][0]["job"] == "b"
