"""Cross-encoders over backbones without segment embeddings (MPNet, RoBERTa): the pair encoder
still marks the second text, and the network pools the two texts apart without passing segment
ids to a backbone that has none. Tiny randomly initialised models saved to a temporary folder."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tiny_nli import tiny_bert, tiny_mpnet  # noqa: E402

from factscout.nn.backbone import build_network  # noqa: E402
from factscout.nn.pairs import encode_pairs, run_pairs  # noqa: E402


def _network(folder):
    return build_network({"backbone": str(folder), "finetune": "full", "num_labels": 3}).eval()


def test_an_mpnet_pair_marks_the_second_text_from_the_sequence_ids(tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_mpnet(tmp_path / "mpnet"))
    assert "token_type_ids" not in tok("vitamin d", "falls")  # the tokenizer gives none of its own
    enc = encode_pairs(tok, ["vitamin d reduces falls", "trial"], ["in elderly people", "d"], max_length=32)
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
    assert tokens == ["<s>", "vitamin", "d", "reduces", "falls", "</s>", "</s>", "in", "elderly", "people", "</s>"]
    assert enc["token_type_ids"][0].tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0]
    assert enc["token_type_ids"][1].tolist() == [0, 0, 0, 0, 1, 0] + [0] * 5  # padding is not the second text
    np_enc = encode_pairs(tok, ["trial"], ["d"], max_length=32, tensors="np")
    assert np_enc["token_type_ids"].tolist() == [[0, 0, 0, 0, 1, 0]]


def test_a_bert_pair_keeps_the_tokenizers_own_segment_ids(tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_bert(tmp_path / "bert"))
    enc = encode_pairs(tok, ["vitamin d"], ["falls in elderly"], max_length=32)
    assert (
        enc["token_type_ids"].tolist()
        == tok("vitamin d", "falls in elderly", return_tensors="pt")["token_type_ids"].tolist()
    )


@pytest.mark.parametrize("make", [tiny_mpnet, tiny_bert])
def test_the_stance_network_runs_on_either_backbone_and_reads_the_second_text(tmp_path, make):
    from transformers import AutoTokenizer

    folder = make(tmp_path / "m")
    network, tok = _network(folder), AutoTokenizer.from_pretrained(folder)
    assert network.typed == (make is tiny_bert)  # segment ids go only to a backbone that has them
    claims = ["vitamin d reduces falls"] * 2
    logits = run_pairs(network, tok, claims, ["in elderly people", "increases falls"], max_length=32, batch_size=2)
    assert logits.shape == (2, 3) and abs(float(logits[0, 0] - logits[1, 0])) > 0
