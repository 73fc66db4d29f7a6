"""The tables of a PostgreSQL index: generations built in one transaction, pinned reads.

A server index has a name (``factscout`` unless told otherwise). Each build writes a new
*generation*, the schema ``fs_<name>__<generation>``, holding

- ``passages(pos, passage_id, published[, embedding vector(d)])``, where ``pos`` is the rank
  of the passage id in sorted (code point) order, so ``ORDER BY score DESC, pos`` is the
  contract's tie rule without reading or collating the ids;
- ``vocab(term, term_id)`` and ``postings(term_id, pos, weight, day)``: BM25 term weights,
  with the passage's publication day (proleptic ordinal, ``-2**31`` when undated) repeated
  so that a date filter is read from the same index as the weights;
- ``meta(info)``: the kind, the passage count, a fingerprint of the passages, the settings.

The whole build (create, COPY, index, ANALYZE, drop older generations) is one transaction:
PostgreSQL's DDL is transactional, so a build that fails, or whose process or connection
dies at any point, is rolled back by the server. The previous generations stay as they
were, and no half-built schema is ever visible. The newest previous generation is kept, so
a process that loaded it keeps answering until the next build; older ones are dropped in the
same transaction. A retriever is pinned to the generation it built or loaded (its passage
store matches that generation: loading checks a fingerprint); once a later build has dropped
that generation, its searches raise :class:`BadIndex`.

Rows go in with binary COPY. The postings (one row per term and passage, tens of rows
per passage) are laid out by numpy in PostgreSQL's binary COPY format in one go:
psycopg's row writer is the right tool for the passages, but would spend most of a large
build in Python per posting.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
import secrets
import struct
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadIndex, InputError, MissingDependency, ServerError
from factscout.records import DateFilterStats, Query, Ranking
from factscout.retrieve.base import PassageStore

log = logging.getLogger(__name__)

DSN_ENV = "FACTSCOUT_PG_DSN"
_INSTALL_HINT = "the PostgreSQL backend needs: pip install 'factscout[pg]'"
_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*\Z")
_MAX_NAME = 30  # the schema name (fs_ + name + __ + 26-character generation) must fit in 63 bytes
_GENERATION = re.compile(r"\d{8}t\d{12}_[0-9a-f]{4}\Z")
_COPY_CHUNK = 1 << 20  # postings per COPY write


def psycopg_module():  # type: ignore[no-untyped-def]
    try:
        import psycopg
    except ImportError:
        raise MissingDependency(_INSTALL_HINT) from None
    return psycopg


@dataclass(frozen=True, slots=True)
class PgConfig:
    """Where a server index lives: ``dsn`` (a libpq connection string or URI; default
    ``$FACTSCOUT_PG_DSN``) and the index ``name``."""

    dsn: str | None = None
    name: str = "factscout"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or len(self.name) > _MAX_NAME or not _NAME.match(self.name):
            raise InputError(
                f"server index name must be lower-case letters and digits in words joined by single underscores,"
                f" starting with a letter, at most {_MAX_NAME} characters; got {self.name!r}"
            )


def resolve_dsn(dsn: str | None) -> str:
    """The DSN given, else ``$FACTSCOUT_PG_DSN``."""
    found = dsn or os.environ.get(DSN_ENV)
    if not found:
        raise InputError(
            f"no PostgreSQL server given: set ${DSN_ENV} (e.g. postgresql://user@localhost:5432/db)"
            " or settings['postgres']['dsn']"
        )
    return found


def redact(dsn: str) -> str:
    """The DSN without its password: what errors show and index directories record."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    psycopg = psycopg_module()
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise InputError(f"bad PostgreSQL connection string: {exc}") from None
    parts.pop("password", None)
    return make_conninfo("", **parts)


def connect(dsn: str, *, vectors: bool = False):  # type: ignore[no-untyped-def]
    """An autocommit connection (transactions are explicit); ``vectors``: adapt pgvector types."""
    psycopg = psycopg_module()
    try:
        conn = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise ServerError(f"cannot connect to PostgreSQL at {redact(dsn)}: {str(exc).strip()}") from None
    if vectors:
        from pgvector.psycopg import register_vector

        register_vector(conn)
    return conn


def fingerprint(store: PassageStore) -> str:
    """sha256 over the passages' ids, dates and texts, in store order."""
    digest = hashlib.sha256()
    for p in store.passages:
        digest.update(f"{p.passage_id}\0{p.published or ''}\0{p.contents}\0".encode())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Postings:
    """BM25 term weights in CSC layout: term ``t`` (``terms[t]``) has the weights
    ``weights[indptr[t]:indptr[t + 1]]`` in the passages at store positions ``docs[...]``."""

    terms: Sequence[str]
    indptr: np.ndarray
    docs: np.ndarray
    weights: np.ndarray


def new_generation() -> str:
    """Sortable by build time (microseconds), unique by its random suffix."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dt%H%M%S%f") + "_" + secrets.token_hex(2)


def _schema(name: str, generation: str) -> str:
    return f"fs_{name}__{generation}"


def list_generations(conn, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The generations of index ``name`` on the server, oldest first."""
    prefix = _schema(name, "")
    rows = conn.execute(
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (prefix.replace("_", "\\_") + "%",)
    ).fetchall()
    return sorted(r[0][len(prefix) :] for r in rows if _GENERATION.match(r[0][len(prefix) :]))


class PgGeneration:
    """One immutable generation of a server index, and the connection that reads it.

    The connection is opened on first use, one per process: a forked child (the BFS workers)
    opens its own, and a pickled generation (a batch job's task) travels without one.
    """

    def __init__(self, dsn: str, name: str, generation: str, *, vectors: bool) -> None:
        self.dsn, self.name, self.generation, self.vectors = dsn, name, generation, vectors
        self.schema = _schema(name, generation)
        self._conn: Any = None
        self._lock = threading.Lock()
        _LIVE.add(self)

    def __getstate__(self) -> dict[str, Any]:
        return {"dsn": self.dsn, "name": self.name, "generation": self.generation, "vectors": self.vectors}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["dsn"], state["name"], state["generation"], vectors=state["vectors"])  # type: ignore[misc]

    def _forget_connection(self) -> None:
        """In a forked child: the parent's session must be neither used nor ended from here, so
        the inherited socket is pointed at /dev/null before libpq says goodbye on it."""
        conn, self._conn, self._lock = self._conn, None, threading.Lock()
        if conn is not None and not conn.closed:
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, conn.fileno())
            os.close(devnull)
            conn.close()

    def table(self, table: str):  # type: ignore[no-untyped-def]
        from psycopg import sql

        return sql.Identifier(self.schema, table)

    def fetch(self, statement: Any, params: Any = None, *, local: dict[str, str] | None = None) -> list[tuple]:
        """Run one read statement in its own transaction, with ``local`` settings for it."""
        return self.fetch_many(statement, [params], local=local)[0]

    def fetch_many(
        self, statement: Any, params_seq: Sequence[Any], *, local: dict[str, str] | None = None
    ) -> list[list[tuple]]:
        """Run one read statement per parameter set, pipelined (one round trip), in one transaction."""
        psycopg = psycopg_module()
        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = connect(self.dsn, vectors=self.vectors)
                    weakref.finalize(self, self._conn.close)  # closed when this generation object goes
                with self._conn.transaction(), self._conn.cursor() as cur:
                    for key, value in (local or {}).items():
                        cur.execute("SELECT set_config(%s, %s, true)", (key, value))
                    if len(params_seq) == 1:
                        return [cur.execute(statement, params_seq[0]).fetchall()]
                    cur.executemany(statement, params_seq, returning=True)
                    out = [cur.fetchall()]
                    while cur.nextset():
                        out.append(cur.fetchall())
                    return out
            except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
                raise BadIndex(
                    f"generation {self.generation} of server index {self.name!r} is not on {redact(self.dsn)}"
                    " (a later build dropped it, or this is another server); load the index again or rebuild it"
                    " with 'factscout index'"
                ) from None
            except psycopg.OperationalError as exc:
                self.close()
                raise ServerError(f"PostgreSQL at {redact(self.dsn)} failed: {str(exc).strip()}") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @classmethod
    def open(cls, dsn: str, name: str, generation: str, store: PassageStore, *, vectors: bool) -> PgGeneration:
        """Attach to an existing generation, checking that it holds exactly ``store``."""
        if not _GENERATION.match(generation):
            raise BadIndex(f"bad server index generation {generation!r}")
        gen = cls(dsn, PgConfig(name=name).name, generation, vectors=vectors)
        from psycopg import sql

        (info,) = gen.fetch(sql.SQL("SELECT info FROM {}").format(gen.table("meta")))[0]
        if info.get("n_passages") != len(store) or info.get("fingerprint") != fingerprint(store):
            raise BadIndex(
                f"server index {name!r} generation {generation} holds {info.get('n_passages')} passages that"
                f" differ from the index directory's {len(store)}; rebuild it with 'factscout index'"
            )
        return gen


_LIVE: weakref.WeakSet[PgGeneration] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for generation in list(_LIVE):
        generation._forget_connection()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def build_generation(
    config: PgConfig,
    store: PassageStore,
    kind: str,
    settings: dict,
    *,
    postings: Postings | None = None,
    vectors: np.ndarray | None = None,
    hnsw: tuple[int, int] | None = None,
) -> PgGeneration:
    """Write ``store`` (and its postings and/or vectors) as a new generation, in one transaction.

    ``hnsw``: ``(m, ef_construction)`` of a pgvector HNSW index over the vectors; without it,
    kNN is exact. Generations older than the previous one are dropped when this one commits.
    """
    psycopg = psycopg_module()
    dsn = resolve_dsn(config.dsn)
    gen = PgGeneration(dsn, config.name, new_generation(), vectors=vectors is not None)
    with connect(dsn) as conn:
        try:
            with conn.transaction():
                # one build of a name at a time; readers are never blocked by it
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"factscout:{config.name}",))
                from psycopg import sql

                if vectors is not None:
                    _enable_pgvector(conn, dsn)
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(gen.schema)))
                write_passages(conn, gen, store, vectors)
                if postings is not None:
                    write_postings(conn, gen, store, postings)
                if vectors is not None and hnsw is not None:
                    m, ef_construction = hnsw
                    conn.execute(
                        sql.SQL(
                            "CREATE INDEX ON {} USING hnsw (embedding vector_ip_ops) WITH (m = {}, ef_construction = {})"
                        ).format(gen.table("passages"), sql.Literal(m), sql.Literal(ef_construction))
                    )
                info = {
                    "kind": kind,
                    "n_passages": len(store),
                    "fingerprint": fingerprint(store),
                    "settings": settings,
                    "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                }
                conn.execute(sql.SQL("CREATE TABLE {} (info jsonb NOT NULL)").format(gen.table("meta")))
                conn.execute(sql.SQL("INSERT INTO {} VALUES (%s)").format(gen.table("meta")), (json.dumps(info),))
                for table in ("passages", "vocab", "postings") if postings is not None else ("passages",):
                    conn.execute(sql.SQL("ANALYZE {}").format(gen.table(table)))
                older = [g for g in list_generations(conn, config.name) if g != gen.generation][:-1]
                for old in older:  # all but the newest previous generation
                    conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(_schema(config.name, old))))
        except psycopg.OperationalError as exc:
            raise ServerError(
                f"building server index {config.name!r} on {redact(dsn)} failed and was rolled back: {str(exc).strip()}"
            ) from None
    log.info("server index %r: generation %s built (%d passages)", config.name, gen.generation, len(store))
    return gen


def _enable_pgvector(conn, dsn: str) -> None:  # type: ignore[no-untyped-def]
    psycopg = psycopg_module()
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
        try:
            conn.execute("CREATE EXTENSION vector")  # on failure the whole build rolls back
        except psycopg.Error as exc:
            raise MissingDependency(
                f"the PostgreSQL server at {redact(dsn)} has no pgvector extension and it could not be created"
                f" ({str(exc).strip()}); install pgvector there (https://github.com/pgvector/pgvector)"
            ) from None
    from pgvector.psycopg import register_vector

    register_vector(conn)


def write_passages(conn, gen: PgGeneration, store: PassageStore, vectors: np.ndarray | None) -> None:  # type: ignore[no-untyped-def]
    from psycopg import sql

    columns = "pos int4 PRIMARY KEY, passage_id text NOT NULL, published date"
    types = ["int4", "text", "date"]
    if vectors is not None:
        columns += f", embedding vector({vectors.shape[1]}) NOT NULL"
        types.append("vector")
    conn.execute(sql.SQL("CREATE TABLE {} ({})").format(gen.table("passages"), sql.SQL(columns)))
    order = np.argsort(store.id_order)  # store positions in pos order
    with conn.cursor().copy(
        sql.SQL("COPY {} FROM STDIN (FORMAT BINARY, FREEZE)").format(gen.table("passages"))
    ) as copy:
        copy.set_types(types)
        for pos, i in enumerate(order.tolist()):
            p = store.passages[i]
            copy.write_row(
                (pos, p.passage_id, p.published, vectors[i])
                if vectors is not None
                else (pos, p.passage_id, p.published)
            )


_POSTINGS_COLUMNS = "term_id int4 NOT NULL, pos int4 NOT NULL, weight float4 NOT NULL, day int4 NOT NULL"
# one posting in PostgreSQL's binary COPY format: field count, then (length, big-endian value) per field
_POSTING = np.dtype(
    [
        ("fields", ">i2"),
        ("n_term", ">i4"),
        ("term", ">i4"),
        ("n_pos", ">i4"),
        ("pos", ">i4"),
        ("n_weight", ">i4"),
        ("weight", ">f4"),
        ("n_day", ">i4"),
        ("day", ">i4"),
    ]
)


def write_postings(conn, gen: PgGeneration, store: PassageStore, postings: Postings) -> None:  # type: ignore[no-untyped-def]
    from psycopg import sql

    n_terms = len(postings.indptr) - 1
    conn.execute(sql.SQL("CREATE TABLE {} (term text PRIMARY KEY, term_id int4 NOT NULL)").format(gen.table("vocab")))
    with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN (FORMAT BINARY, FREEZE)").format(gen.table("vocab"))) as copy:
        copy.set_types(["text", "int4"])
        for t in range(n_terms):
            copy.write_row((postings.terms[t], t))
    conn.execute(sql.SQL("CREATE TABLE {} ({})").format(gen.table("postings"), sql.SQL(_POSTINGS_COLUMNS)))
    term_of = np.repeat(np.arange(n_terms, dtype=np.int64), np.diff(postings.indptr[: n_terms + 1]))
    docs = postings.docs[: len(term_of)]
    with conn.cursor().copy(
        sql.SQL("COPY {} FROM STDIN (FORMAT BINARY, FREEZE)").format(gen.table("postings"))
    ) as copy:
        copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))  # signature, flags, no header extension
        for start in range(0, len(term_of), _COPY_CHUNK):
            end = min(start + _COPY_CHUNK, len(term_of))
            rows = np.empty(end - start, dtype=_POSTING)
            rows["fields"], rows["n_term"], rows["n_pos"], rows["n_weight"], rows["n_day"] = 4, 4, 4, 4, 4
            rows["term"], rows["weight"] = term_of[start:end], postings.weights[start:end]
            rows["pos"], rows["day"] = store.id_order[docs[start:end]], store.days[docs[start:end]]
            copy.write(rows.tobytes())
        copy.write(struct.pack(">h", -1))
    conn.execute(sql.SQL("CREATE INDEX ON {} (term_id) INCLUDE (pos, weight, day)").format(gen.table("postings")))


def ids_by_pos(store: PassageStore) -> np.ndarray:
    """Passage ids indexed by their server ``pos`` (sorted order)."""
    return np.array(sorted(store.ids), dtype=object)


def rankings_from_rows(
    queries: Sequence[Query], rows: Sequence[Sequence[tuple]], ids: np.ndarray, stats: DateFilterStats | None
) -> list[Ranking]:
    """Rankings from each query's ``(pos, score)`` rows, sorted by ``-score`` then ``pos``."""
    out = []
    for q, hits in zip(queries, rows, strict=True):
        positions = [h[0] for h in hits]
        scores = [float(h[1]) for h in hits]
        out.append(
            Ranking.from_sorted(q.query_id, ids[positions].tolist() if hits else [], scores, (q.query_id,), stats)
        )
    return out


def save_settings(directory: Path, kind: str, generation: PgGeneration, settings: dict) -> None:
    """An index directory records where its generation lives (the DSN without password)."""
    directory.mkdir(parents=True, exist_ok=True)
    where = {"kind": kind, "dsn": redact(generation.dsn), "name": generation.name, "generation": generation.generation}
    (directory / "postgres.json").write_text(json.dumps({**where, **settings}, indent=1))


def saved_config(directory: Path, saved: dict, section: str, config_cls: Any, overrides: dict[str, object]) -> Any:
    """``config_cls`` from the ``section`` of an index directory's settings, ``overrides`` on top."""
    try:
        return config_cls(**{**saved[section], **overrides})
    except (KeyError, ValueError) as exc:
        raise BadIndex(f"server index settings in {directory} are unreadable ({exc})") from None


def read_settings(directory: Path, kind: str, overrides: dict[str, object]) -> tuple[dict, str]:
    """An index directory's ``postgres.json`` and the DSN to use: the ``dsn`` override, else
    ``$FACTSCOUT_PG_DSN``, else the recorded one (a password then comes from ``PGPASSWORD`` or
    ``~/.pgpass``, as libpq does). Pops ``dsn`` from ``overrides``."""
    try:
        saved = json.loads((directory / "postgres.json").read_text())
        if saved.get("kind") != kind or not isinstance(saved.get("generation"), str):
            raise ValueError(f"expected a {kind} index, found {saved.get('kind')!r}")
    except (OSError, ValueError, AttributeError) as exc:
        raise BadIndex(f"server index settings in {directory} are unreadable ({exc}); rebuild it") from None
    dsn = overrides.pop("dsn", None) or os.environ.get(DSN_ENV) or saved.get("dsn")
    if not isinstance(dsn, str) or not dsn:
        raise BadIndex(f"no PostgreSQL server for the index in {directory}: set ${DSN_ENV}")
    return saved, dsn
