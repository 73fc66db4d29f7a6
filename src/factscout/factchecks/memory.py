"""The fact-check memory: published fact-checks on disk, searched by claim matching.

A memory is a folder written the way ``factscout index`` writes an index: every change is a new
generation folder (``gen-*``) holding the records (``factchecks.jsonl``), the BM25 index
(``bm25/``), the MiniLM vectors (``vectors.npy``, float32: float16 moves rankings) and ``memory.json`` (counts, sources,
the claim-match model and its shown-match threshold); the ``CURRENT`` file names the live one
and is replaced atomically, so a failed build or ``add`` leaves the memory as it was.

:meth:`FactCheckMemory.search` ranks fact-checks for a text; :meth:`FactCheckMemory.matches`
keeps only those published strictly before a date, the one rule factscout applies to evidence
and fact-checks alike, in ``check``, ``serve`` and ``factchecks search`` (undated ones are then
left out: nobody can say they were out before), and at or above the shipped threshold.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadIndex, InputError
from factscout.factchecks.clean import clean_tweet, signature_date
from factscout.factchecks.match import (
    FEATURES,
    MatchModel,
    candidate_features,
    content_words,
    score_candidates,
)
from factscout.factchecks.merge import merge_duplicates
from factscout.factchecks.record import FactCheck
from factscout.factchecks.verdicts import normalise_verdict
from factscout.formats.jsonl import read_jsonl, write_jsonl
from factscout.hashing import file_sha256
from factscout.records import Passage, Query
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever

log = logging.getLogger(__name__)

FORMAT, FORMAT_VERSION = "factscout-factchecks", 1


@dataclass(frozen=True, slots=True)
class Match:
    """A fact-check found for a text and its match score (higher: more likely the same claim)."""

    record: FactCheck
    score: float


def _passage(record: FactCheck) -> Passage:
    return Passage(record.fact_check_id, record.fact_check_id, "", record.contents, record.date, record.url)


def read_records(path: str | os.PathLike[str], *, source: str = "user") -> list[FactCheck]:
    """A user's fact-checks from a JSONL file of their fields (``fact_check_id``, ``claim`` and
    ``publisher`` required); the whole file is read and checked before anything is returned, and a
    bad row raises ``InputError`` naming the file, the line and the problem. A row without a
    normalised verdict gets the one its ``verdict`` maps to (:func:`~.verdicts.normalise_verdict`);
    a row without sources is from ``source``, under the licence "as stated by its publisher"."""
    out, seen = [], set()
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        record = FactCheck.from_json(row, where=where)
        if "normalised_verdict" not in row and record.verdict:
            record = dataclasses.replace(record, normalised_verdict=normalise_verdict(record.verdict))
        if not record.sources:
            record = dataclasses.replace(record, sources=(source,), licenses=("as stated by its publisher",))
        if record.fact_check_id in seen:
            raise InputError(f"{where}: fact_check_id {record.fact_check_id!r} repeats an earlier row")
        seen.add(record.fact_check_id)
        out.append(record)
    return out


def _encoder(name: str) -> Any:
    from factscout.text.encoder import Encoder

    return Encoder(name)


def encode_records(records: Sequence[FactCheck], encoder: Any, *, show_progress: bool = False) -> np.ndarray:
    """L2-normalised embeddings of the records' contents (through the corpus embedding cache)."""
    return np.asarray(encoder.encode_cached([r.contents for r in records], show_progress=show_progress))


class FactCheckMemory:
    """Published fact-checks with their BM25 index and vectors; see the module docstring."""

    def __init__(
        self, records: Sequence[FactCheck], vectors: np.ndarray, model: MatchModel, *, bm25: Bm25Retriever | None = None
    ) -> None:
        if len(vectors) != len(records):
            raise BadIndex(f"fact-check memory has {len(records)} records but {len(vectors)} vectors")
        self.records = tuple(records)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.model = model
        # undated fact-checks are dropped under a date filter: nobody can say they were out before
        store = PassageStore(_passage(r) for r in records)
        self.bm25 = bm25 or Bm25Retriever.build(store, Bm25Config(undated="drop"))
        self._row = {r.fact_check_id: i for i, r in enumerate(self.records)}
        self._days = np.array([r.date.toordinal() if r.date else -1 for r in self.records], dtype=np.int64)
        self._dates = [r.date for r in self.records]
        self._word_cache: dict[int, frozenset[str]] = {}
        self._encoder: Any = None

    # building and reading -------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        records: Iterable[FactCheck],
        *,
        model: MatchModel | None = None,
        encoder: Any = None,
        show_progress: bool = False,
    ) -> FactCheckMemory:
        """A memory of ``records`` (duplicates merged), encoded with the model's encoder."""
        model = model or MatchModel.load()
        given = list(records)
        merged = merge_duplicates(given)
        enc = encoder or _encoder(model.encoder)
        # encoded per source as read, so each source's embeddings are cached on their own; a
        # merged record keeps the vector of the record whose id it keeps
        by_source: dict[tuple[str, ...], list[FactCheck]] = {}
        for r in given:
            by_source.setdefault(r.sources[:1], []).append(r)
        vector_of: dict[str, np.ndarray] = {}
        for group in by_source.values():
            for r, v in zip(group, encode_records(group, enc, show_progress=show_progress), strict=True):
                vector_of.setdefault(r.fact_check_id, v)
        vectors = np.stack([vector_of[r.fact_check_id] for r in merged]) if merged else np.zeros((0, 384), np.float32)
        memory = cls(merged, vectors, model)
        memory._encoder = enc
        return memory

    @property
    def threshold(self) -> float:
        """The shipped shown-match threshold (chosen on CheckThat 2A dev for precision >= 0.9)."""
        return self.model.threshold

    def metadata(self) -> dict[str, Any]:
        sources: dict[str, int] = {}
        for r in self.records:
            for s in r.sources:
                sources[s] = sources.get(s, 0) + 1
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "n_records": len(self.records),
            "n_dated": int((self._days >= 0).sum()),
            "sources": sources,
            "encoder": self.model.encoder,
            "model": self.model.__class__.__name__,
            # the sha256 of the model as the shipped file is written (compare with the model card's)
            "model_sha256": self._model_sha256(),
            "learned": self.model.learned,
            "threshold": self.model.threshold,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }

    def _model_sha256(self) -> str | None:
        with tempfile.TemporaryDirectory() as tmp:
            self.model.save(Path(tmp) / "m.json")
            return file_sha256(Path(tmp) / "m.json")

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write this memory as a new generation of ``directory`` and switch ``CURRENT`` to it atomically."""
        from factscout.storage import new_generation

        with new_generation(directory, "fact-check memory") as gen:
            write_jsonl(gen / "factchecks.jsonl", (r.to_json() for r in self.records))
            np.save(gen / "vectors.npy", self.vectors.astype(np.float32))
            self.bm25.save(gen / "bm25")
            self.model.save(gen / "claim_match.json")
            (gen / "memory.json").write_text(json.dumps(self.metadata(), indent=1) + "\n")
        return gen

    @staticmethod
    def current(directory: str | os.PathLike[str]) -> Path:
        """The live generation folder of the memory at ``directory``."""
        root = Path(directory)
        try:
            gen = root / (root / "CURRENT").read_text().strip()
        except OSError:
            raise BadIndex(
                f"{root} is not a fact-check memory (no CURRENT); build one with 'factscout factchecks index'"
            ) from None
        if not (gen / "memory.json").is_file():
            raise BadIndex(f"fact-check memory {root}: generation {gen.name} is incomplete")
        return gen

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, encoder: Any = None) -> FactCheckMemory:
        """The memory written at ``directory`` by :meth:`save` (``factscout factchecks index``).

        ``encoder``: an already loaded sentence encoder of the memory's model (all-MiniLM-L6-v2,
        :class:`factscout.text.encoder.Encoder`) to share, e.g. the one ``check`` holds; by default
        one is loaded on the first search (several seconds cold)."""
        gen = cls.current(directory)
        meta = json.loads((gen / "memory.json").read_text())
        if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
            raise BadIndex(
                f"{directory}: unsupported memory format {meta.get('format')!r} v{meta.get('format_version')}"
            )
        records = [
            FactCheck.from_json(row, where=f"{gen}/factchecks.jsonl:{n}")
            for n, row in read_jsonl(gen / "factchecks.jsonl")
        ]
        vectors = np.load(gen / "vectors.npy").astype(np.float32)
        model = MatchModel.load(gen / "claim_match.json")
        bm25 = Bm25Retriever.load(PassageStore(_passage(r) for r in records), gen / "bm25")
        memory = cls(records, vectors, model, bm25=bm25)
        memory._encoder = encoder
        return memory

    def add(self, records: Iterable[FactCheck]) -> FactCheckMemory:
        """A new memory with ``records`` added (merged with duplicates); only new records are encoded."""
        merged = merge_duplicates([*self.records, *records])
        new = [r for r in merged if r.fact_check_id not in self._row]
        vectors = encode_records(new, self.encoder) if new else np.zeros((0, self.vectors.shape[1]), np.float32)
        new_row = {r.fact_check_id: i for i, r in enumerate(new)}
        stacked = np.stack(
            [
                self.vectors[self._row[r.fact_check_id]]
                if r.fact_check_id in self._row
                else vectors[new_row[r.fact_check_id]]
                for r in merged
            ]
        )
        memory = FactCheckMemory(merged, stacked, self.model)
        memory._encoder = self._encoder
        return memory

    # searching -----------------------------------------------------------------------------
    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = _encoder(self.model.encoder)
        return self._encoder

    def __len__(self) -> int:
        return len(self.records)

    def candidates(
        self,
        texts: Sequence[str],
        *,
        published_before: dt.date | None = None,
        dates: Sequence[dt.date | None] | None = None,
        clean: bool = True,
    ) -> list[tuple[list[int], np.ndarray]]:
        """For each text, the candidate record rows and their claim-match features
        (:func:`~.match.candidate_features`); ``published_before``: only records published strictly
        before that day (factscout's one date rule, as for evidence: a claim made on day D is
        matched with what was out by D - 1). A text's date (for the time features) is ``dates[i]``
        when given, else the date of a tweet's embed signature, else ``published_before``."""
        if not texts or not self.records:
            return [([], np.zeros((0, len(FEATURES)))) for _ in texts]
        if dates is not None and len(dates) != len(texts):
            raise InputError(f"{len(dates)} dates for {len(texts)} texts")
        queries = [clean_tweet(t) if clean else t.strip() for t in texts]
        allowed = None
        if published_before is not None:
            allowed = (self._days >= 0) & (self._days < published_before.toordinal())
        depth = self.model.depth
        q_vecs = np.asarray(self.encoder.encode(queries), dtype=np.float32)
        qs = [Query(f"q{i}", f"q{i}", q or t) for i, (q, t) in enumerate(zip(queries, texts, strict=True))]
        rankings = self.bm25.search(qs, depth, published_before=published_before)
        cos_all = q_vecs @ self.vectors.T
        out = []
        for qi, ranking in enumerate(rankings):
            cos = cos_all[qi]
            masked = np.where(allowed, cos, -np.inf) if allowed is not None else cos
            n_ok = int(allowed.sum()) if allowed is not None else len(cos)
            top = np.argpartition(-masked, min(depth, n_ok) - 1)[:depth] if n_ok else np.zeros(0, dtype=np.int64)
            dense = [int(r) for r in sorted(top, key=lambda r: (-masked[r], r)) if np.isfinite(masked[r])]
            bm25 = {self._row[h.passage_id]: h.score for h in ranking.hits}
            given = dates[qi] if dates is not None else None
            day = given or signature_date(texts[qi]) or published_before
            features = candidate_features(
                bm25, cos, dense, query_date=day, query_words=content_words(queries[qi]),
                record_dates=self._dates, record_words=self._words,
            )  # fmt: skip
            out.append(features)
        return out

    def _words(self, row: int) -> frozenset[str]:
        words = self._word_cache.get(row)
        if words is None:
            record = self.records[row]
            words = self._word_cache[row] = content_words(f"{record.claim} {record.title}")
        return words

    def search_many(
        self,
        texts: Sequence[str],
        k: int = 10,
        *,
        published_before: dt.date | None = None,
        dates: Sequence[dt.date | None] | None = None,
        clean: bool = True,
    ) -> list[list[Match]]:
        """The top ``k`` fact-checks for each text, best first (ties by id); ``published_before``:
        only those published strictly before that day. Texts are cleaned (:func:`clean_tweet`) unless
        ``clean`` is off."""
        if k < 1:
            raise InputError(f"k must be >= 1, got {k}")
        out = []
        for rows, X in self.candidates(texts, published_before=published_before, dates=dates, clean=clean):
            scores = score_candidates(self.model, X)
            order = sorted(range(len(rows)), key=lambda i: (-scores[i], self.records[rows[i]].fact_check_id))[:k]
            out.append([Match(self.records[rows[i]], float(scores[i])) for i in order])
        return out

    def search(
        self, text: str, k: int = 10, *, published_before: dt.date | None = None, date: dt.date | None = None
    ) -> list[Match]:
        """The top ``k`` fact-checks for ``text``, best first; ``date``: when the claim was made (else
        a tweet's signature date, else ``published_before``), for the time features."""
        return self.search_many([text], k, published_before=published_before, dates=[date])[0]

    def matches(
        self, text: str, *, published_before: dt.date | None = None, threshold: float | None = None, k: int = 5
    ) -> list[Match]:
        """The fact-checks to show for ``text``: published strictly before ``published_before`` when
        given (the claim's date: it also feeds the time features), and scoring at or above
        ``threshold`` (default: the shipped one, :attr:`threshold`)."""
        cut = self.threshold if threshold is None else threshold
        return [m for m in self.search(text, k, published_before=published_before) if m.score >= cut]
