"""The PostgreSQL backend against a live server on loopback (the ``pg_server`` fixture).

The retriever contract runs in test_contract.py. Here: equality with the embedded backends
(BM25 on the whole SciFact corpus, dense on tiny corpora), atomic builds, generations,
connection settings and the command line.
"""

import dataclasses
import datetime as dt
import zlib

import numpy as np
import pytest
from typer.testing import CliRunner

from factscout.datasets import load_dataset
from factscout.errors import BadIndex, InputError, ServerError
from factscout.records import Query
from factscout.retrieve import build_retriever, load_index, save_index
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
from factscout.retrieve.dense import DenseConfig, DenseRetriever
from factscout.retrieve.postgres import DSN_ENV, PgBm25Retriever, PgConfig, PgDenseRetriever
from factscout.retrieve.postgres import server as pg_tables
from factscout.retrieve.postgres.server import PgGeneration, connect, list_generations
from factscout.text.encoder import Encoder

pytestmark = pytest.mark.usefixtures("pg_server")


def q(text: str, qid: str = "q1") -> Query:
    return Query(qid, qid, text, "test")


def dated(passages):
    """Deterministic publication days, one passage in five undated."""
    return [
        dataclasses.replace(p, published=None if i % 5 == 0 else dt.date(2000 + i % 20, 1 + i % 12, 1 + i % 28))
        for i, p in enumerate(passages)
    ]


def assert_same_rankings(expected, found, rel=1e-6):
    """Same hits, scores within float32 rounding; at the cut-off, engines may keep different
    passages among those tied with the last score, so tied hits at the boundary are not compared."""
    for a, b in zip(expected, found, strict=True):
        assert len(a) == len(b), a.query_id
        sa, sb = [h.score for h in a.hits], [h.score for h in b.hits]
        assert sb == pytest.approx(sa, rel=rel, abs=1e-9), a.query_id
        if not sa:
            continue
        last = sa[-1]

        def key(h):
            return (-round(h.score, 5), h.passage_id)

        above_a = sorted((h for h in a.hits if h.score > last * (1 + rel) + 1e-9), key=key)
        above_b = sorted((h for h in b.hits if h.score > last * (1 + rel) + 1e-9), key=key)
        assert [h.passage_id for h in above_a] == [h.passage_id for h in above_b], a.query_id
        keys = [(-h.score, h.passage_id) for h in b.hits]
        assert keys == sorted(keys), "the server ranking keeps the tie rule"


@pytest.fixture(scope="module")
def scifact():
    ds = load_dataset("scifact", "train")
    return PassageStore(dated(ds.corpus)), ds.queries()[:200]


@pytest.mark.slow
def test_bm25_equals_embedded_bm25_on_scifact(scifact):
    store, queries = scifact
    embedded = Bm25Retriever.build(store)
    server = PgBm25Retriever.upload(embedded, PgConfig(name="scifact"))  # build() = embedded build + upload
    day = dt.date(2010, 1, 1)
    for undated in ("keep", "drop"):
        embedded.config = server.config = Bm25Config(undated=undated)
        for before in (None, day) if undated == "keep" else (day,):
            expected = embedded.search(queries, 100, published_before=before)
            found = server.search(queries, 100, published_before=before)
            assert_same_rankings(expected, found)
            assert [r.date_filter for r in found] == [r.date_filter for r in expected]
    assert sum(len(r) for r in found) > 150 * 50  # the comparison is not vacuous


class HashEncoder(Encoder):
    """A stand-in for MiniLM: hashed bags of words, L2-normalised (no model to load)."""

    def __init__(self) -> None:
        super().__init__("test-hash-64", max_seq_length=None)

    @property
    def dimension(self) -> int:
        return 64

    def encode(self, texts, *, show_progress=False):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, zlib.crc32(word.encode()) % 64] += 1.0
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        return out


@pytest.fixture(scope="module")
def mini():
    ds = load_dataset("scifact_mini")
    return PassageStore(dated(ds.corpus)), ds.queries()


@pytest.mark.parametrize("undated", ["keep", "drop"])
def test_exact_knn_equals_embedded_dense(mini, undated):
    store, queries = mini
    config = DenseConfig(undated=undated)
    embedded = DenseRetriever.build(store, config, encoder=HashEncoder())
    server = PgDenseRetriever.build(store, config, PgConfig(name="knn"), encoder=HashEncoder())
    assert not server.hnsw
    for before in (None, dt.date(2012, 1, 1), dt.date(2001, 6, 1)):
        expected = embedded.search(queries, 20, published_before=before)
        assert_same_rankings(expected, server.search(queries, 20, published_before=before), rel=1e-5)


def test_hnsw_falls_back_to_exact_when_the_candidates_run_out(scifact, monkeypatch):
    """pgvector's HNSW scan filters its ef_search (here k) candidates afterwards: under a
    selective filter queries come back short and must be answered exactly. (2,000 passages:
    over a few hundred the planner would not use the HNSW index at all.)"""
    store, queries = PassageStore(scifact[0].passages[:2000]), scifact[1][:20]
    config = DenseConfig(undated="drop")
    exact = PgDenseRetriever.build(store, config, PgConfig(name="knn"), encoder=HashEncoder())
    starved_config = dataclasses.replace(config, exact_below=0, ef_search=1, hnsw_m=4)
    starved = PgDenseRetriever.build(store, starved_config, PgConfig(name="hnsw"), encoder=HashEncoder())
    assert starved.hnsw
    before = dt.date(2002, 1, 1)  # 5% of the passages
    expected = exact.search(queries, 10, published_before=before)
    assert expected[0].date_filter.allowed == 100
    calls = []
    knn = starved._knn
    monkeypatch.setattr(starved, "_knn", lambda *a, **kw: calls.append(kw["exact"]) or knn(*a, **kw))
    found = starved.search(queries, 10, published_before=before)
    assert calls == [False, True], "HNSW first, then the exact fallback"
    assert [list(r.passage_ids) for r in found] == [list(r.passage_ids) for r in expected]
    assert all(len(r) == 10 for r in found)


def test_hnsw_recall_against_exact(mini):
    store, queries = mini
    exact = PgDenseRetriever.build(store, DenseConfig(), PgConfig(name="knn"), encoder=HashEncoder())
    hnsw = PgDenseRetriever.build(store, DenseConfig(exact_below=0), PgConfig(name="hnsw"), encoder=HashEncoder())
    truth = [set(r.passage_ids) for r in exact.search(queries, 10)]
    found = [set(r.passage_ids) for r in hnsw.search(queries, 10)]
    recall = np.mean([len(t & f) / len(t) for t, f in zip(truth, found, strict=True)])
    assert recall >= 0.95


@pytest.mark.slow
def test_minilm_rankings_equal_embedded_dense(tiny_corpus):
    encoder = Encoder()  # one MiniLM for both
    store = PassageStore(tiny_corpus)
    embedded = DenseRetriever.build(store, encoder=encoder)
    server = PgDenseRetriever.build(store, pg=PgConfig(name="minilm"), encoder=encoder)
    queries = [q(t, str(i)) for i, t in enumerate(["vaccine side effects", "sea levels", "jobs", "school", "myths"])]
    for before in (None, dt.date(2021, 1, 15)):
        assert_same_rankings(
            embedded.search(queries, 8, published_before=before),
            server.search(queries, 8, published_before=before),
            rel=1e-5,
        )


def _generations(name: str) -> list[str]:
    with connect(pg_tables.resolve_dsn(None)) as conn:
        return list_generations(conn, name)


def _kill_own_session(conn) -> None:
    with connect(pg_tables.resolve_dsn(None)) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))


@pytest.mark.parametrize("crash", ["connection killed", "exception"])
def test_a_build_that_dies_halfway_leaves_the_previous_index(tiny_corpus, tmp_path, monkeypatch, crash):
    settings = {"postgres": {"name": "atomic"}}
    first = build_retriever(tiny_corpus[:6], "pg-bm25", settings)
    save_index(first, tmp_path / "idx")
    before = first.search([q("report")], 10)
    write_postings = pg_tables.write_postings

    def dies(conn, gen, store, postings):
        write_postings(conn, gen, store, postings)  # the new tables are written, then the build dies
        if crash == "exception":
            raise RuntimeError("disk full")
        _kill_own_session(conn)

    monkeypatch.setattr(pg_tables, "write_postings", dies)
    expected = (RuntimeError, "disk full") if crash == "exception" else (ServerError, "rolled back")
    generations = _generations("atomic")
    with pytest.raises(expected[0], match=expected[1]):
        build_retriever(tiny_corpus, "pg-bm25", settings)
    monkeypatch.undo()
    assert _generations("atomic") == generations, "nothing of the failed build is left, nothing dropped"
    assert first.search([q("report")], 10) == before
    assert len(load_index(tmp_path / "idx").search([q("report")], 10)[0]) == 6


def test_rebuilds_keep_the_previous_generation_and_drop_older_ones(tiny_corpus, tmp_path):
    settings = {"postgres": {"name": "rebuilt"}}
    first = build_retriever(tiny_corpus, "pg-bm25", settings)
    save_index(first, tmp_path / "first")
    second = build_retriever(tiny_corpus[:8], "pg-bm25", settings)
    assert len(first.search([q("report")], 12)[0]) == 12, "the previous generation still answers"
    third = build_retriever(tiny_corpus[:4], "pg-bm25", settings)
    assert _generations("rebuilt") == [second.generation.generation, third.generation.generation]
    with pytest.raises(BadIndex, match="later build dropped it"):
        first.search([q("report")], 5)
    with pytest.raises(BadIndex, match="later build dropped it"):
        load_index(tmp_path / "first")
    assert len(second.search([q("report")], 12)[0]) == 8
    assert len(third.search([q("report")], 12)[0]) == 4


def test_loading_checks_the_passages_match_the_generation(tiny_corpus):
    built = build_retriever(tiny_corpus, "pg-bm25", {"postgres": {"name": "checked"}})
    g = built.generation
    with pytest.raises(BadIndex, match="differ from the index directory"):
        PgGeneration.open(g.dsn, g.name, g.generation, PassageStore(tiny_corpus[:5]), vectors=False)


def test_index_directory_records_the_server_but_never_the_password(tiny_corpus, tmp_path, monkeypatch):
    dsn = pg_tables.resolve_dsn(None).replace("postgres@", "postgres:s3cret@")  # trust auth ignores it
    built = build_retriever(tiny_corpus, "pg-dense", {"postgres": {"dsn": dsn, "name": "secret"}})
    save_index(built, tmp_path / "idx")
    (recorded,) = (tmp_path / "idx").glob("gen-*/pg-dense/postgres.json")
    assert "s3cret" not in recorded.read_text() and "127.0.0.1" in recorded.read_text()
    monkeypatch.delenv(DSN_ENV)  # the recorded server is used
    loaded = load_index(tmp_path / "idx", undated="drop")
    (ranking,) = loaded.search([q("vaccine")], 3, published_before=dt.date(2030, 1, 1))
    assert ranking.date_filter.undated_dropped == 2
    with pytest.raises(ServerError, match="cannot connect to PostgreSQL at"):
        load_index(tmp_path / "idx", dsn="postgresql://postgres@127.0.0.1:1/postgres")


def test_unreachable_server_and_missing_settings(tiny_corpus, monkeypatch):
    with pytest.raises(ServerError, match=r"cannot connect to PostgreSQL at .*127\.0\.0\.1.*port=1"):
        build_retriever(tiny_corpus, "pg-bm25", {"postgres": {"dsn": "postgresql://postgres:pw@127.0.0.1:1/x"}})
    monkeypatch.delenv(DSN_ENV)
    with pytest.raises(InputError, match="set \\$FACTSCOUT_PG_DSN"):
        build_retriever(tiny_corpus, "pg-bm25")
    with pytest.raises(InputError, match="server index name"):
        build_retriever(tiny_corpus, "pg-bm25", {"postgres": {"name": "Robert'); DROP TABLE"}})
    with pytest.raises(InputError, match="PostgreSQL backend supports lucene, robertson, atire"):
        build_retriever(tiny_corpus, "pg-bm25", {"bm25": {"method": "bm25l"}})


def _search_in_child(retriever, out):
    ids = [list(retriever.search([q("vaccine report")], 5)[0].passage_ids) for _ in range(20)]
    out.put((ids[-1], retriever.generation._conn.info.backend_pid))


def test_forked_and_pickled_retrievers_use_their_own_connection(tiny_corpus):
    import multiprocessing as mp
    import pickle

    retriever = build_retriever(tiny_corpus, "pg-bm25", {"postgres": {"name": "forked"}})
    expected = list(retriever.search([q("vaccine report")], 5)[0].passage_ids)  # the parent's session is open
    parent_pid = retriever.generation._conn.info.backend_pid
    ctx = mp.get_context("fork")  # as the BFS workers: two children search at once
    out = ctx.Queue()
    children = [ctx.Process(target=_search_in_child, args=(retriever, out)) for _ in range(2)]
    for child in children:
        child.start()
    found = [out.get(timeout=60) for _ in children]
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    assert [ids for ids, _ in found] == [expected, expected]
    assert len({pid for _, pid in found} | {parent_pid}) == 3, "each process has its own session"
    assert list(retriever.search([q("vaccine report")], 5)[0].passage_ids) == expected
    assert retriever.generation._conn.info.backend_pid == parent_pid, "the parent's session survived the child"
    copy = pickle.loads(pickle.dumps(retriever))
    assert list(copy.search([q("vaccine report")], 5)[0].passage_ids) == expected


def test_command_line_index_and_search(tiny_corpus, tmp_path):
    from factscout.cli.main import app
    from factscout.formats.beir import write_corpus

    write_corpus(tmp_path / "c.jsonl", tiny_corpus)
    runner = CliRunner()
    args = ["index", "--corpus", tmp_path / "c.jsonl", "--index", tmp_path / "idx", "--retriever", "pg-bm25"]
    r = runner.invoke(app, [str(a) for a in [*args, "--pg-name", "cli"]])
    assert r.exit_code == 0, r.output
    assert _generations("cli")
    r = runner.invoke(app, ["search", "--index", str(tmp_path / "idx"), "--query", "sea levels", "--k", "2"])
    assert r.exit_code == 0, r.output
    assert "p08" in r.output
