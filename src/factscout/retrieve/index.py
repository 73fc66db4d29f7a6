"""Building, saving and loading retrieval indexes, crash-safely.

An index directory holds generations: ``DIR/gen-<time>-<pid>/`` with the passages, the
backend's files and ``manifest.json`` (written last), and ``DIR/CURRENT`` naming the live
generation. A build writes a new generation and then replaces ``CURRENT`` with one atomic
rename; only after that are older generations removed. A crash at any point leaves the
previous index usable, and a loader never sees a half-written generation.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from factscout.errors import BadIndex, InputError
from factscout.formats.beir import read_corpus, write_corpus
from factscout.records import Passage
from factscout.registry import Registry, where_to_run
from factscout.retrieve.base import PassageStore, Retriever
from factscout.retrieve.sentences import ENCODE_BATCH, SentenceData, build_sentence_data, save_sentence_data
from factscout.storage import new_generation
from factscout.text.encoder import CORPUS_ENCODERS

log = logging.getLogger(__name__)

FORMAT = "factscout-index"
FORMAT_VERSION = 1
RETRIEVERS: Registry[tuple[Callable[..., Any], Callable[..., Any]]] = Registry("retriever")


def _register() -> None:
    from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
    from factscout.retrieve.bm25_and import Bm25AndRetriever
    from factscout.retrieve.bm25_plain import Bm25PlainRetriever, plain_config
    from factscout.retrieve.dense import DenseConfig, DenseRetriever
    from factscout.retrieve.hybrid import HybridConfig, HybridRetriever
    from factscout.retrieve.sharded import ShardedConfig, ShardedRetriever

    def build_bm25(store: PassageStore, settings: dict, show_progress: bool) -> Bm25Retriever:
        return Bm25Retriever.build(store, Bm25Config(**settings.get("bm25", {})))

    # the Elasticsearch-default endpoints: settings under their own names (k1, b, undated), so the
    # tuned bm25's settings never leak into them
    def build_bm25_plain(store: PassageStore, settings: dict, show_progress: bool) -> Bm25PlainRetriever:
        return Bm25PlainRetriever.build(store, plain_config(**settings.get("bm25-plain", {})))

    def build_bm25_and(store: PassageStore, settings: dict, show_progress: bool) -> Bm25AndRetriever:
        return Bm25AndRetriever.build(store, plain_config(**settings.get("bm25-and", {})))  # type: ignore[return-value]

    def dense_settings(settings: dict) -> tuple[DenseConfig, str | None]:
        dense = dict(settings.get("dense", {}))
        ray = dense.pop("ray", None)  # "auto" or a cluster address: encode the corpus on Ray Data
        return DenseConfig(**dense), ray

    def build_dense(store: PassageStore, settings: dict, show_progress: bool) -> DenseRetriever:
        config, ray = dense_settings(settings)
        return DenseRetriever.build(store, config, show_progress=show_progress, ray=ray)

    def build_hybrid(store: PassageStore, settings: dict, show_progress: bool) -> HybridRetriever:
        config, ray = dense_settings(settings)
        return HybridRetriever.build(
            store,
            HybridConfig(**settings.get("hybrid", {})),
            bm25=Bm25Config(**settings.get("bm25", {})),
            dense=config,
            show_progress=show_progress,
            ray=ray,
        )

    def build_sharded(store: PassageStore, settings: dict, show_progress: bool) -> ShardedRetriever:
        sharded = dict(settings.get("sharded", {}))
        ray = sharded.pop("ray", None)  # "auto" or a cluster address: build the shards as Ray tasks
        return ShardedRetriever.build(store, ShardedConfig(**sharded), Bm25Config(**settings.get("bm25", {})), ray=ray)

    RETRIEVERS.register("bm25")((build_bm25, Bm25Retriever.load))
    RETRIEVERS.register("bm25-plain")((build_bm25_plain, Bm25PlainRetriever.load))
    RETRIEVERS.register("bm25-and")((build_bm25_and, Bm25AndRetriever.load))
    RETRIEVERS.register("dense")((build_dense, DenseRetriever.load))
    RETRIEVERS.register("hybrid")((build_hybrid, HybridRetriever.load))
    RETRIEVERS.register("sharded")((build_sharded, ShardedRetriever.load))
    _register_postgres()


def _register_postgres() -> None:
    """The same three retrievers inside a PostgreSQL server (``settings["postgres"]``: dsn, name)."""
    from factscout.retrieve.bm25 import Bm25Config
    from factscout.retrieve.dense import DenseConfig
    from factscout.retrieve.hybrid import HybridConfig
    from factscout.retrieve.postgres import PgBm25Retriever, PgConfig, PgDenseRetriever, PgHybridRetriever

    def build_pg_bm25(store: PassageStore, settings: dict, show_progress: bool) -> PgBm25Retriever:
        return PgBm25Retriever.build(
            store, Bm25Config(**settings.get("bm25", {})), PgConfig(**settings.get("postgres", {}))
        )

    def build_pg_dense(store: PassageStore, settings: dict, show_progress: bool) -> PgDenseRetriever:
        dense, pg = DenseConfig(**settings.get("dense", {})), PgConfig(**settings.get("postgres", {}))
        return PgDenseRetriever.build(store, dense, pg, show_progress=show_progress)

    def build_pg_hybrid(store: PassageStore, settings: dict, show_progress: bool) -> PgHybridRetriever:
        return PgHybridRetriever.build(
            store,
            HybridConfig(**settings.get("hybrid", {})),
            bm25=Bm25Config(**settings.get("bm25", {})),
            dense=DenseConfig(**settings.get("dense", {})),
            pg=PgConfig(**settings.get("postgres", {})),
            show_progress=show_progress,
        )

    RETRIEVERS.register("pg-bm25")((build_pg_bm25, PgBm25Retriever.load))
    RETRIEVERS.register("pg-dense")((build_pg_dense, PgDenseRetriever.load))
    RETRIEVERS.register("pg-hybrid")((build_pg_hybrid, PgHybridRetriever.load))


_register()


def build_retriever(
    passages: Iterable[Passage], retriever: str = "bm25", settings: dict | None = None, *, show_progress: bool = False
) -> Retriever:
    """Build an in-memory retriever of the named kind over ``passages``."""
    build, _ = RETRIEVERS[retriever]
    store = PassageStore(passages)
    if not len(store):
        raise InputError("the corpus is empty: nothing to index")
    try:
        return build(store, settings or {}, show_progress)
    except TypeError as exc:
        raise InputError(f"bad settings for retriever {retriever!r}: {exc}") from None


def save_index(
    retriever: Retriever,
    directory: str | os.PathLike[str],
    *,
    source: str | None = None,
    sentences: SentenceData | None = None,
) -> Path:
    """Write ``retriever`` (and the passages' ``sentences``: :mod:`factscout.retrieve.sentences`)
    as a new generation of the index at ``directory``, atomically."""
    with new_generation(directory, "factscout index") as gen:
        write_corpus(gen / "passages.jsonl", retriever.store.passages)
        retriever.save(gen / retriever.name)  # type: ignore[attr-defined]
        if sentences is not None:
            if sentences.n_passages != len(retriever.store):
                raise InputError(
                    f"sentence data covers {sentences.n_passages} passages, the index {len(retriever.store)}"
                )
            save_sentence_data(sentences, gen)
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "retriever": retriever.name,
            "n_passages": len(retriever.store),
            "n_dated": retriever.store.n_dated,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "source": source,
            "sentences": sentences is not None,
        }
        (gen / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return gen


def build_index(
    corpus: str | os.PathLike[str] | Iterable[Passage],
    directory: str | os.PathLike[str],
    retriever: str = "bm25",
    settings: dict | None = None,
    *,
    show_progress: bool = False,
    sentences: bool = False,
    ray: str | None = None,
) -> Retriever:
    """Read a corpus (a BEIR JSONL path or passages), build the retriever, save it atomically;
    ``sentences``: also split and embed every passage's sentences for ``check``
    (:func:`index_sentences`, on Ray with ``ray``)."""
    RETRIEVERS[retriever]  # fail on a bad name before reading anything
    source = str(corpus) if isinstance(corpus, (str, os.PathLike)) else None
    passages = read_corpus(corpus) if isinstance(corpus, (str, os.PathLike)) else corpus
    built = build_retriever(passages, retriever, settings, show_progress=show_progress)
    data = index_sentences(built.store.passages, show_progress=show_progress, ray=ray) if sentences else None
    save_index(built, directory, source=source, sentences=data)
    return built


def index_sentences(
    passages: Sequence[Passage], *, encoder: Any = None, show_progress: bool = False, ray: str | None = None
) -> SentenceData:
    """Sentence data for ``passages`` embedded with ``check``'s default selection encoder (the
    int8 MiniLM when installed: :func:`~factscout.text.onnx_encoder.int8_encoder`, what
    ``select.base.default_encoder`` gives the threshold selector) or ``encoder``, in this process
    or on Ray Data actors with ``ray``."""
    from factscout.text.onnx_encoder import int8_encoder

    encoder = encoder if encoder is not None else int8_encoder()
    run = where_to_run(CORPUS_ENCODERS, ray)

    def encode(texts: list[str]) -> Any:
        return run(encoder, texts, batch=ENCODE_BATCH, address=ray, show_progress=show_progress)

    return build_sentence_data(passages, encoder, encode=encode)


SENTENCE_LOCK = ".sentences.lock"  # in the index folder while add_sentences runs: its pid
_CLI = "from factscout.cli.main import app; app()"


def add_sentences(
    directory: str | os.PathLike[str], *, show_progress: bool = False, ray: str | None = None
) -> tuple[Path, bool]:
    """Store sentence vectors in an index built without them (the second stage of a staged build:
    the index answers from its passages first, ``check`` embedding per claim, and gains its
    sentence vectors here). The new generation holds the live one's files (hard links where the
    file system allows, else copies) plus ``sentences/``, and goes live atomically only if the
    live generation is still the one read: an index rebuilt meanwhile is left alone (an
    :class:`~factscout.errors.InputError` says so). Returns the live generation and whether it
    was written (``False``: the index already had them)."""
    from factscout.retrieve.sentences import load_sentence_data

    gen, manifest = read_manifest(directory)
    if str(manifest.get("retriever", "")).startswith("pg-"):
        raise InputError(f"index {directory} lives in PostgreSQL: its sentence vectors are not stored on disk")
    store = PassageStore(read_corpus(gen / "passages.jsonl"))
    if load_sentence_data(gen, len(store)) is not None:
        return gen, False
    data = index_sentences(store.passages, show_progress=show_progress, ray=ray)
    rebuilt = InputError(f"index {directory} was rebuilt while its sentence vectors were made; run again")
    try:
        with new_generation(directory, "factscout index") as new:
            for item in gen.iterdir():
                if item.name == "manifest.json":
                    continue
                if item.is_dir():
                    shutil.copytree(item, new / item.name, copy_function=_link_or_copy)
                else:
                    _link_or_copy(item, new / item.name)
            save_sentence_data(data, new)
            (new / "manifest.json").write_text(json.dumps({**manifest, "sentences": True}, indent=1))
            if (Path(directory) / "CURRENT").read_text().strip() != gen.name:
                raise rebuilt
    except (FileNotFoundError, shutil.Error):  # the generation read (or this one) was removed by a rebuild
        raise rebuilt from None
    return new, True


def _link_or_copy(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def sentences_in_background(directory: str | os.PathLike[str], log_file: str | os.PathLike[str]) -> int | None:
    """Start ``factscout index --index DIR --add-sentences`` as a detached process (it outlives
    the caller) writing to ``log_file``; ``None`` when one is already running for ``directory``
    (its pid is in ``DIR/.sentences.lock``), else the new process's pid."""
    import subprocess
    import sys

    if sentences_running(directory):
        return None
    with open(log_file, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CLI, "index", "--index", str(directory), "--add-sentences"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # not killed with the caller's terminal or process group
        )
    return proc.pid


def sentences_running(directory: str | os.PathLike[str]) -> int | None:
    """The pid of a live ``--add-sentences`` process for ``directory``, else ``None`` (a lock left by
    a process that died is ignored)."""
    try:
        pid = int((Path(directory) / SENTENCE_LOCK).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


@contextlib.contextmanager
def sentence_lock(directory: str | os.PathLike[str]) -> Iterator[None]:
    """Held by the process adding sentence vectors to ``directory`` (:func:`sentences_running`
    reads it); another live holder is an :class:`~factscout.errors.InputError`."""
    holder = sentences_running(directory)
    if holder is not None and holder != os.getpid():
        raise InputError(f"sentence vectors are already being added to {directory} (process {holder})")
    lock = Path(directory) / SENTENCE_LOCK
    lock.write_text(f"{os.getpid()}\n")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def read_manifest(directory: str | os.PathLike[str]) -> tuple[Path, dict]:
    """Locate the live generation of an index and read its manifest, with clear errors."""
    root = Path(directory)
    if not root.exists():
        raise BadIndex(f"no index at {root}: build one with 'factscout index --corpus ... --index {root}'")
    current = root / "CURRENT"
    if not current.is_file():
        raise BadIndex(f"{root} is not a factscout index (no CURRENT file)")
    gen = root / current.read_text().strip()
    manifest_path = gen / "manifest.json"
    if not manifest_path.is_file():
        raise BadIndex(f"index at {root} is incomplete: {manifest_path} is missing; rebuild it")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as exc:
        raise BadIndex(f"index manifest {manifest_path} is unreadable ({exc}); rebuild the index") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BadIndex(
            f"{root} holds a foreign index (format {manifest.get('format') if isinstance(manifest, dict) else '?'!r}, expected {FORMAT!r})"
        )
    if manifest.get("format_version") != FORMAT_VERSION:
        raise BadIndex(
            f"index {root} has format version {manifest.get('format_version')}, this factscout reads {FORMAT_VERSION}"
        )
    return gen, manifest


def load_index(directory: str | os.PathLike[str], **overrides: object) -> Retriever:
    """Load the live generation of an index; ``overrides`` adjust settings such as ``undated``."""
    gen, manifest = read_manifest(directory)
    _, load = RETRIEVERS[manifest.get("retriever", "?")]
    try:
        store = PassageStore(read_corpus(gen / "passages.jsonl"))
    except (OSError, InputError) as exc:
        raise BadIndex(f"passages of index {directory} are unreadable ({exc}); rebuild it") from None
    if len(store) != manifest.get("n_passages"):
        raise BadIndex(f"index {directory} lists {manifest.get('n_passages')} passages but holds {len(store)}")
    try:
        return load(store, gen / manifest["retriever"], **overrides)
    except TypeError as exc:
        raise InputError(f"bad override for a {manifest['retriever']} index: {exc}") from None
