"""A tiny randomly initialised BERT NLI cross-encoder saved to a folder, for testing the
``nli:<folder>`` loader offline (no download): one layer, 32 hidden units, a vocabulary of the
test sentences' words. Its class ``bias`` decides what it predicts, since its random weights
give nearly equal logits."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

NLI_ORDER = ("contradiction", "entailment", "neutral")

# real SciFact claims and rationale sentences (claims CC BY 4.0, abstracts ODC-By 1.0)
PAIRS = [
    {
        "id": "scifact-support",
        "claim": "76-85% of people with severe mental disorder receive no treatment in low and middle income countries.",
        "sentence": "35.5% to 50.3% of serious cases in developed countries and 76.3% to 85.4% in less-developed "
        "countries received no treatment in the 12 months before the interview.",
    },
    {
        "id": "scifact-contradict",
        "claim": "1 in 5 million in UK have abnormal PrP positivity.",
        "sentence": "Of the 32,441 appendix samples 16 were positive for abnormal PrP, indicating an overall "
        "prevalence of 493 per million population.",
    },
    {
        "claim": "A breast cancer patient's capacity to metabolize tamoxifen influences treatment outcome.",
        "sentence": "The committee approved the new parking regulations for the city centre.",
    },
]

EXTRA_WORDS = [
    "vitamin",
    "d",
    "reduces",
    "fractures",
    "supplementation",
    "reduced",
    "fracture",
    "risk",
    "by",
    "20",
    "did",
    "not",
    "reduce",
    "the",
    "of",
]


def _words(texts: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts:
        for w in re.findall(r"[a-z]+|[0-9]+|[^\sa-z0-9]", text.lower()):
            seen.setdefault(w, None)
    return list(seen)


def tiny_nli_model(
    folder: Path,
    labels: Sequence[str] = NLI_ORDER,
    bias: Sequence[float] | None = None,
    *,
    seed: int = 0,
) -> Path:
    """Save a tiny BERT sequence classifier with ``id2label`` = ``labels`` (by index) and class
    biases ``bias`` (default zeros) to ``folder``; the other weights depend only on ``seed``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    texts = [p["claim"] for p in PAIRS] + [p["sentence"] for p in PAIRS] + EXTRA_WORDS
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_words(texts)]
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.bias.copy_(
            torch.tensor(list(bias) if bias is not None else [0.0] * len(labels), dtype=torch.float32)
        )
    model.save_pretrained(folder)
    BertTokenizer(str(vocab_file)).save_pretrained(folder)
    return folder


# -- tiny backbones for cross-encoders (tests/nn/test_pair_segments.py) --

BACKBONE_WORDS = ["vitamin", "d", "reduces", "falls", "increases", "in", "elderly", "people", "trial"]


def _vocab(folder: Path, specials: list[str]) -> dict[str, int]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join([*specials, *BACKBONE_WORDS]) + "\n", encoding="utf-8")
    return {token: i for i, token in enumerate([*specials, *BACKBONE_WORDS])}


def tiny_mpnet(folder: Path) -> Path:
    """A tiny randomly initialised MPNet backbone (no segment embeddings) and its fast tokenizer."""
    import torch
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizerFast

    vocab = _vocab(folder, ["<s>", "<pad>", "</s>", "<unk>", "<mask>", "[UNK]"])  # as in all-mpnet-base-v2
    config = MPNetConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=37, max_position_embeddings=64)  # fmt: skip
    torch.manual_seed(0)
    MPNetModel(config).save_pretrained(folder)
    MPNetTokenizerFast(vocab=vocab).save_pretrained(folder)
    return folder


def tiny_bert(folder: Path) -> Path:
    """A tiny randomly initialised BERT backbone and its fast tokenizer."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab = _vocab(folder, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=64)  # fmt: skip
    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    return folder
