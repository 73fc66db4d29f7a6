"""``factscout index``: build a search index over a BEIR corpus."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from factscout.cli.common import (
    INPUT,
    OUTPUT,
    RayOption,
    bars_off,
    counted,
    err,
    friendly,
    one_of,
    out,
    quiet_libraries,
    status,
)
from factscout.datasets import DATASETS
from factscout.errors import MissingDependency
from factscout.retrieve import RETRIEVERS
from factscout.retrieve.hybrid import HYBRID_FUSIONS

_LOCAL = [name for name in RETRIEVERS if not name.startswith("pg-")]
_POSTGRES = [name for name in RETRIEVERS if name.startswith("pg-")]


@friendly
def index(
    index: Annotated[
        Path, typer.Option("--index", *OUTPUT, help="index directory to write (created or replaced atomically)")
    ],
    corpus: Annotated[
        Path | None,
        typer.Option(*INPUT, "--corpus", help="BEIR JSONL corpus (_id, title, text, published?, url?); .gz ok"),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(help=f"instead of --input: the passage pool of a dataset under the data root: {one_of(DATASETS)}"),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(help="with --dataset: the data root (default: $FACTSCOUT_DATA or ../shared/data)"),
    ] = None,
    retriever: Annotated[
        str,
        typer.Option(help=f"{one_of(_LOCAL)}, or {one_of(_POSTGRES)} in PostgreSQL ($FACTSCOUT_PG_DSN)"),
    ] = "bm25",
    k1: Annotated[
        float | None, typer.Option(help="BM25 k1 (default: 0.9 for bm25, Elasticsearch's 1.2 for bm25-plain/bm25-and)")
    ] = None,
    b: Annotated[
        float | None, typer.Option(help="BM25 b (default: 0.4 for bm25, Elasticsearch's 0.75 for bm25-plain/bm25-and)")
    ] = None,
    encoder: Annotated[
        str,
        typer.Option(
            help="dense encoder: 'minilm' (offline), 'minilm-int8' (the same, int8 on ONNX Runtime: faster),"
            " 'minilm-ft' or a sentence-transformers name/path"
        ),
    ] = "minilm",
    fusion: Annotated[str, typer.Option(help=f"hybrid fusion: {one_of(HYBRID_FUSIONS)}")] = "linear",
    alpha: Annotated[
        float, typer.Option(help="hybrid weight of BM25 in the linear fusion (0.6: tuned on SciFact train)")
    ] = 0.6,
    window: Annotated[int, typer.Option(help="split documents into windows of this many sentences (0: whole)")] = 0,
    stride: Annotated[int, typer.Option(help="sentences between window starts (with --window)")] = 3,
    shards: Annotated[int, typer.Option(help="split a BM25 index into N shards (global statistics); 0: one index")] = 0,
    ray: RayOption = None,
    encode_batch: Annotated[
        int | None, typer.Option(help="dense: passages per encoding call, also per Ray Data task (default 256)")
    ] = None,
    pg_name: Annotated[str, typer.Option(help="index name on the PostgreSQL server (pg-* retrievers)")] = "factscout",
    sentences: Annotated[
        bool,
        typer.Option(
            "--sentences/--no-sentences",
            help="also split every passage into sentences and store their vectors, for an index made for `check`"
            " (it then embeds only the claim and its queries; on Ray with --ray). Off by default: an index for"
            " retrieval does not pay for them, and `check` on such an index embeds the sentences of the passages"
            " it reads",
        ),
    ] = False,
    add_sentences: Annotated[
        bool,
        typer.Option(
            "--add-sentences",
            help="instead of building: store sentence vectors in the existing index at --index (built without"
            " --sentences), as a new generation that goes live atomically; the index answers meanwhile",
        ),
    ] = False,
) -> None:
    """Index a corpus (a BEIR JSONL file, or --dataset NAME) for search."""
    quiet_libraries()
    from factscout.datasets.passages import split_passages
    from factscout.retrieve import build_retriever, save_index
    from factscout.retrieve.index import index_sentences

    if add_sentences:
        if corpus is not None or dataset is not None:
            raise typer.BadParameter("--add-sentences adds to the index at --index: give no --input or --dataset")
        _add_sentences(index, ray)
        return
    if (corpus is None) == (dataset is None):
        raise typer.BadParameter("give exactly one of --input FILE (--corpus) or --dataset NAME")
    RETRIEVERS[retriever]
    dense: dict[str, Any] = {"encoder": encoder, **({"encode_batch": encode_batch} if encode_batch is not None else {})}
    bm25 = {name: value for name, value in (("k1", k1), ("b", b)) if value is not None}  # else each kind's defaults
    settings: dict[str, Any] = {"bm25": bm25, "bm25-plain": bm25, "bm25-and": bm25, "dense": dense}
    settings["hybrid"] = {"fusion": fusion, "alpha": alpha}
    if ray and not shards and retriever in ("dense", "hybrid"):
        dense["ray"] = ray  # the corpus is encoded on Ray Data actors
    elif shards or ray:
        if retriever not in ("bm25", "sharded") or shards < 1:
            raise typer.BadParameter(
                "--shards N (N >= 1) shards a BM25 index; --ray builds those shards on Ray, or encodes a dense"
                " or hybrid corpus on Ray"
            )
        retriever, settings["sharded"] = "sharded", {"shards": shards, "ray": ray}
    settings["postgres"] = {"name": pg_name}
    passages = read_passages(corpus) if corpus is not None else dataset_passages(str(dataset), data)
    if window:
        passages = split_passages(passages, window, min(stride, window))
    with status(f"indexing {len(passages)} passages with {retriever} (dense encoding shows its own bar)"):
        built = build_retriever(passages, retriever, settings, show_progress=not bars_off(err))
    sentence_data = None
    if sentences and not retriever.startswith("pg-"):
        try:
            with status(f"splitting and embedding the sentences of {len(built.store)} passages"):
                sentence_data = index_sentences(built.store.passages, show_progress=not bars_off(err), ray=ray)
        except MissingDependency as exc:  # a BM25-only install: the index works, check embeds per claim
            err.print(f"[yellow]no sentence vectors stored[/] ({exc})")
    with status("writing the index"):
        source = str(corpus) if corpus is not None else f"dataset {dataset}"
        gen = save_index(built, index, source=source, sentences=sentence_data)
    stored = f", {len(sentence_data.spans)} sentences" if sentence_data is not None else ""
    out.print(
        f"indexed {len(built.store)} passages ({built.store.n_dated} dated{stored}) with {retriever} into {index}"
        f" ({gen.name})"
    )
    if sentence_data is not None:
        err.print(f"sentence vectors stored ({sentence_data.encoder}): `check` embeds only the claim and its queries")
    elif not retriever.startswith("pg-"):
        err.print(
            "no sentence vectors stored: `check` on this index embeds the sentences of the passages it reads"
            " (slower per claim); add --sentences to store them"
        )


def _add_sentences(index: Path, ray: str | None) -> None:
    from factscout.retrieve.index import add_sentences, read_manifest, sentence_lock

    read_manifest(index)  # a clear error for a missing or foreign index, before any model loads
    started = time.perf_counter()
    with sentence_lock(index), status(f"splitting and embedding the sentences of the passages in {index}"):
        gen, written = add_sentences(index, show_progress=not bars_off(err), ray=ray)
    if written:
        out.print(f"sentence vectors added to {index} ({gen.name}) in {time.perf_counter() - started:.0f} s")
    else:
        out.print(f"{index} already stores sentence vectors ({gen.name}): nothing to do")


def read_passages(corpus: Path) -> list[Any]:
    """The corpus's passages, counted against its non-blank lines (one passage each)."""
    from factscout.formats.beir import read_corpus
    from factscout.formats.jsonl import read_lines

    total = sum(1 for _, line in read_lines(corpus) if line.strip())
    passages = []
    with counted(f"reading {corpus.name}", total) as bar:
        for passage in read_corpus(corpus):
            passages.append(passage)
            bar.advance()
    return passages


def dataset_passages(name: str, data: Path | None) -> list[Any]:
    from factscout.datasets import load_dataset
    from factscout.errors import InputError

    DATASETS[name]
    with status(f"reading dataset {name}"):
        found = load_dataset(name, root=data)
    if not found.corpus:
        raise InputError(f"dataset {name!r} has no passage pool to index; give a BEIR corpus with --input FILE")
    return list(found.corpus)
