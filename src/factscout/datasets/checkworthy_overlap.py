"""The overlap between check-worthiness editions (ClaimBuster, CheckThat! 2021 and 2022): the same
tweet, the same sentence, or the same debate under another dataset's name. Never train on one and
score on another (each folder's SOURCE.txt lists the overlaps); the trainer drops what a dev or test
set shares and the benchmark refuses a test set that shares training sentences."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from factscout.datasets.checkworthy import MIN_TEXT_TOKENS, CheckworthySentence
from factscout.errors import InputError

_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalised_text(text: str) -> str:
    """Lower case, runs of anything but letters and digits as one space (the overlap key of a text)."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def overlap_keys(sentence: CheckworthySentence) -> set[str]:
    """What makes two sentences the same: the tweet id, the normalised text (of
    :data:`MIN_TEXT_TOKENS` tokens or more) and (compared across datasets only) the event."""
    keys = set()
    if sentence.tweet_id:
        keys.add(f"tweet:{sentence.tweet_id}")
    text = normalised_text(sentence.text)
    if len(text.split()) >= MIN_TEXT_TOKENS:
        keys.add(f"text:{text}")
    return keys


class Overlap(InputError):
    """A training set shares sentences with the set it is scored on; the message counts them."""


@dataclass(frozen=True, slots=True)
class OverlapReport:
    """What a training set shares with an evaluation set: training sentence ids by reason
    (``tweet``: the same tweet id, ``text``: the same normalised text, ``event``: a debate
    another dataset holds as well)."""

    by_reason: dict[str, tuple[str, ...]]

    @property
    def sentence_ids(self) -> set[str]:
        return {i for ids in self.by_reason.values() for i in ids}

    def __bool__(self) -> bool:
        return any(self.by_reason.values())

    def describe(self) -> str:
        parts = [f"{len(ids)} by {reason}" for reason, ids in sorted(self.by_reason.items()) if ids]
        return ", ".join(parts) or "none"


def overlap(train: Sequence[CheckworthySentence], evaluation: Sequence[CheckworthySentence]) -> OverlapReport:
    """The training sentences that are also in ``evaluation`` (by :func:`overlap_keys`), and those
    of a debate that ``evaluation`` holds under another dataset's name (:data:`factscout.datasets.checkworthy.SAME_EVENTS`)."""
    held = {k for s in evaluation for k in overlap_keys(s)}
    events = {(s.event, s.dataset) for s in evaluation if s.event}
    found: dict[str, list[str]] = {"tweet": [], "text": [], "event": []}
    for s in train:
        hits = {k.split(":", 1)[0] for k in overlap_keys(s) if k in held}
        if s.event and any(e == s.event and d != s.dataset for e, d in events):
            hits.add("event")
        for reason in hits:
            found[reason].append(s.sentence_id)
    return OverlapReport({r: tuple(ids) for r, ids in found.items()})


def without_overlap(
    train: Sequence[CheckworthySentence], evaluation: Sequence[CheckworthySentence], *, refuse: bool = False
) -> list[CheckworthySentence]:
    """``train`` without what it shares with ``evaluation`` (:func:`overlap`); with ``refuse``,
    an :class:`Overlap` error instead when it shares anything."""
    found = overlap(train, evaluation)
    if found and refuse:
        example = next(iter(sorted(found.sentence_ids)))
        raise Overlap(
            f"the training sentences share {len(found.sentence_ids)} sentences with the evaluation set "
            f"({found.describe()}; e.g. {example}): remove them first, or score another split"
        )
    drop = found.sentence_ids
    return [s for s in train if s.sentence_id not in drop]


__all__ = ["Overlap", "OverlapReport", "normalised_text", "overlap", "overlap_keys", "without_overlap"]
