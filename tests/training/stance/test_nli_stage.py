"""Stage 0 (NLI pre-training) on a tiny backbone: a run stopped and started again ends with the
same weights as one never interrupted; a checkpoint of another run is refused; the check set is
scored each epoch; the later stages start from its weights."""

from __future__ import annotations

import numpy as np
import pytest

from factscout.errors import InputError
from factscout.training.stance.cross_config import CrossConfig
from factscout.training.stance.data import Pair
from tests.tiny_nli import EXTRA_WORDS, PAIRS, tiny_bert

pytestmark = pytest.mark.encoder


def _pairs(n: int = 40) -> list[Pair]:
    texts = [(p["claim"], p["sentence"]) for p in PAIRS] + [(" ".join(EXTRA_WORDS[:k]), "the risk") for k in (3, 6, 9)]
    return [Pair("mnli", f"p{i}", *texts[i % len(texts)], i % 3) for i in range(n)]


def _config(**kw):
    return CrossConfig(epochs=2, batch_size=4, max_length=32, finetune="full", **kw)


def _weights(folder):
    import torch

    from factscout.training.stance.nli_stage import WEIGHTS

    return {k: v.numpy() for k, v in torch.load(folder / WEIGHTS, weights_only=True).items()}


def test_length_batches_cover_every_pair_once_and_group_similar_lengths():
    from factscout.training.loop import length_batches

    lengths = [(i * 37) % 101 for i in range(1000)]
    batches = length_batches(lengths, 10, seed=3)
    assert sorted(i for b in batches for i in b) == list(range(1000))
    assert batches == length_batches(lengths, 10, seed=3) != length_batches(lengths, 10, seed=4)
    spread = np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches])
    assert spread < 10  # random batches of 10 would spread over ~80


def test_a_resumed_run_ends_with_the_same_weights(tmp_path, monkeypatch):
    from factscout.training.stance.nli_stage import CHECKPOINT, LOG, MODEL, train_nli

    monkeypatch.setenv("FACTSCOUT_MINILM_DIR", str(tiny_bert(tmp_path / "bert")))
    pairs, check = _pairs(), [Pair("check:mnli", "c0", PAIRS[0]["claim"], PAIRS[0]["sentence"], 0)]
    whole = train_nli(pairs, check, _config(), tmp_path / "whole", checkpoint_every=3)
    parted = tmp_path / "parted"
    first = train_nli(pairs, check, _config(), parted, checkpoint_every=3, stop_after_steps=7)
    assert first["stopped_at"] == 7 and (parted / CHECKPOINT).exists() and not (parted / MODEL).exists()
    said: list[str] = []
    second = train_nli(pairs, check, _config(), parted, say=said.append, checkpoint_every=3)
    assert any("resumed" in s and "at step 6/20" in s for s in said)  # the last checkpoint before the stop
    a, b = _weights(tmp_path / "whole"), _weights(parted)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert [e["epoch"] for e in whole["epochs"]] == [e["epoch"] for e in second["epochs"]] == [1, 2]
    assert {"mnli_accuracy", "all_accuracy", "pairs_per_second", "seconds"} <= set(second["epochs"][-1])
    assert (parted / LOG).exists() and (parted / MODEL).exists()


def test_a_checkpoint_of_another_run_is_refused(tmp_path, monkeypatch):
    from factscout.training.stance.nli_stage import train_nli

    monkeypatch.setenv("FACTSCOUT_MINILM_DIR", str(tiny_bert(tmp_path / "bert")))
    train_nli(_pairs(), [], _config(), tmp_path / "o", checkpoint_every=2, stop_after_steps=2)
    with pytest.raises(InputError, match="another run"):
        train_nli(_pairs(), [], _config(lr=1e-4), tmp_path / "o")


def test_the_claim_evidence_stage_starts_from_stage_0(tmp_path, monkeypatch):
    import torch

    from factscout.nn.backbone import build_network
    from factscout.training.stance.cross import _load_weights
    from factscout.training.stance.nli_stage import WEIGHTS, train_nli

    monkeypatch.setenv("FACTSCOUT_MINILM_DIR", str(tiny_bert(tmp_path / "bert")))
    config = _config()
    train_nli(_pairs(12), [], config, tmp_path / "s0")
    network = build_network(config.network())
    _load_weights(network, str(tmp_path / "s0" / WEIGHTS), config.network())
    stage0 = _weights(tmp_path / "s0")
    own = network.state_dict()
    assert all(torch.equal(own[k], torch.from_numpy(v)) for k, v in stage0.items())
    lora = CrossConfig(finetune="lora").network()
    with pytest.raises(Exception, match="not in this network"):
        _load_weights(build_network(lora), str(tmp_path / "s0" / WEIGHTS), lora)


def test_the_model_card_names_stage_0s_data_licences_and_check_accuracy(tmp_path):
    import json

    from factscout.training.stance.cross_report import _stage0_lines, stage0_summary
    from factscout.training.stance.nli_stage import LOG, WEIGHTS

    log = {"pairs": 30, "training_pairs": {"mnli/supports": 10, "mnli/refutes": 5, "sick/supports": 15},
           "epochs": [{"epoch": 1, "mnli_accuracy": 0.75, "snli_cf_accuracy": 0.7, "pairs_per_second": 31.0}],
           "train_seconds": 2100.0, "config": {"epochs": 1, "lr": 4e-5, "batch_size": 32, "max_length": 128}}  # fmt: skip
    (tmp_path / LOG).write_text(json.dumps(log))
    assert stage0_summary(None) is None and stage0_summary(str(tmp_path / "model.npz")) is None
    s0 = stage0_summary(str(tmp_path / WEIGHTS))
    assert s0["per_source"] == {"mnli": 15, "sick": 15} and s0["clean"] == ["mnli"]
    text = "\n".join(_stage0_lines({"stage0": s0}))
    assert "| mnli | 15 |" in text and "| sick | 15 |" in text and "CC BY-NC" in text  # SICK's licence
    assert "mnli_accuracy 0.750" in text and "leaves out sick" in text
