"""The check-worthiness training, dev and test sets, with the overlaps between editions removed
from the training side (:func:`factscout.datasets.checkworthy_overlap.without_overlap`).

Training: ClaimBuster crowdsourced (three-way), CheckThat! 2022 1B train (three-way for tweets:
no claim / claim / check-worthy claim), CheckThat! 2021 1A train, and optionally CheckThat! 2021
1B train (transcripts, ~1% positive). Dev (chooses the model kind, the epoch and the threshold):
CheckThat! 2022 1A dev + dev_test (tweets), CheckThat! 2021 1B dev (transcripts) and ClaimBuster
groundtruth (debates, expert labels). Test: CheckThat! 2022 1A test gold and CheckThat! 2021 1B
test. Every training sentence that a dev or test sentence shares (the same tweet, the same text, a
debate held under another dataset's name) is dropped, and CheckThat! 2021 1B train transcripts
that ClaimBuster holds too are dropped (ClaimBuster's labels are kept: they are three-way).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from factscout.datasets.checkworthy import CheckworthySentence, load_sentences
from factscout.datasets.checkworthy_overlap import overlap, without_overlap
from factscout.errors import DataNotFound, InputError, UnknownName

Part = tuple[str, str]  # (dataset, split)

TRAIN_PARTS: tuple[Part, ...] = (
    ("claimbuster", "crowdsourced"),
    ("checkthat2022_1b", "train"),
    ("checkthat2021_1a", "train"),
    ("checkthat2021_1b", "train"),
)
DEV_SETS: dict[str, tuple[Part, ...]] = {
    "tweets (CT22 1A dev+dev_test)": (("checkthat2022_1a", "dev"), ("checkthat2022_1a", "dev_test")),
    "debates (CT21 1B dev)": (("checkthat2021_1b", "dev"),),
    "ClaimBuster groundtruth": (("claimbuster", "groundtruth"),),
}
TEST_SETS: dict[str, tuple[Part, ...]] = {
    "CT22 1A test (tweets)": (("checkthat2022_1a", "test"),),
    "CT21 1B test (transcripts)": (("checkthat2021_1b", "test"),),
}

Say = Callable[[str], None]


@dataclass
class Splits:
    """The training sentences (overlaps removed) and the dev and test sets by name, plus what was
    removed from training and why."""

    train: list[CheckworthySentence]
    dev: dict[str, list[CheckworthySentence]]
    test: dict[str, list[CheckworthySentence]]
    removed: dict[str, int] = field(default_factory=dict)


def read_parts(parts: Sequence[Part], root: str | Path | None = None) -> list[CheckworthySentence]:
    out: list[CheckworthySentence] = []
    for name, split in parts:
        out.extend(load_sentences(name, split, root))
    return out


def build_splits(
    train_parts: Sequence[Part] = TRAIN_PARTS,
    *,
    root: str | Path | None = None,
    limit: int | None = None,
    say: Say = lambda _: None,
) -> Splits:
    """The training sentences of ``train_parts`` without anything a dev or test set shares, the
        dev and test sets (``limit``: the first that many sentences of each part and a quarter as many
    check-worthy ones after them, for smoke runs)."""

    def cut(items: list[CheckworthySentence]) -> list[CheckworthySentence]:
        if not limit:
            return items
        later = [s for s in items[limit:] if s.checkworthy][: max(1, limit // 4)]
        return items[:limit] + later  # a few check-worthy ones in every part

    dev = {name: cut(read_parts(parts, root)) for name, parts in DEV_SETS.items()}
    test = {name: cut(read_parts(parts, root)) for name, parts in TEST_SETS.items()}
    train: list[CheckworthySentence] = []
    removed: dict[str, int] = {}
    for part in train_parts:
        items = cut(read_parts([part], root))
        before = len(items)
        for held in (*dev.values(), *test.values()):
            items = without_overlap(items, held)
        if part[0] == "checkthat2021_1b" and any(p[0] == "claimbuster" for p in train_parts):
            # the same debates under ClaimBuster's (three-way) labels: keep those
            cb = [s for p in train_parts if p[0] == "claimbuster" for s in cut(read_parts([p], root))]
            shared = overlap(items, cb).by_reason.get("event", ())
            items = [s for s in items if s.sentence_id not in set(shared)]
        removed[f"{part[0]}:{part[1]}"] = before - len(items)
        say(f"train {part[0]} {part[1]}: {len(items)} sentences ({before - len(items)} removed: overlap)")
        train.extend(items)
    return Splits(train, dev, test, removed)


def embed(
    encoder: object,
    sentences: Sequence[CheckworthySentence],
    *,
    root: str | Path | None = None,
    show_progress: bool = False,
) -> np.ndarray:
    """The sentence vectors, in order. Sentences of a registered split that make up most of it
    are embedded as the whole split (one cached call, the rows picked by id), so a split's
    vectors come from the on-disk embedding cache however the training side was filtered."""
    from factscout.nn.encoding import CachingEncoder
    from factscout.text.encoder import embed_fn

    def encode(texts: list[str]) -> np.ndarray:
        texts = [t or " " for t in texts]
        if isinstance(encoder, CachingEncoder):
            return encoder.encode_cached(texts, show_progress=show_progress)
        return embed_fn(encoder)(texts)

    groups: dict[tuple[str, str], list[int]] = {}
    for i, s in enumerate(sentences):
        groups.setdefault((s.dataset, s.split), []).append(i)
    out: np.ndarray | None = None
    for (dataset, split), idx in groups.items():
        full: tuple[CheckworthySentence, ...] = ()
        with contextlib.suppress(InputError, UnknownName, DataNotFound):
            full = load_sentences(dataset, split, root)
        position = {s.sentence_id: j for j, s in enumerate(full)}
        if full and len(idx) * 2 >= len(full) and all(sentences[i].sentence_id in position for i in idx):
            vectors = encode([s.text for s in full])[[position[sentences[i].sentence_id] for i in idx]]
        else:
            vectors = encode([sentences[i].text for i in idx])
        if out is None:
            out = np.zeros((len(sentences), vectors.shape[1]), dtype=np.float32)
        out[idx] = vectors
    return out if out is not None else np.zeros((0, 384), dtype=np.float32)


def counts(sentences: Sequence[CheckworthySentence]) -> Mapping[str, int]:
    return {"sentences": len(sentences), "check-worthy": sum(s.checkworthy for s in sentences)}
