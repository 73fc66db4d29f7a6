"""Check jobs that survive a restart: the SQLite store behind ``POST /v1/checks``.

A job is one claim or a batch of claims accepted by ``POST /v1/checks``; it is written to the
database before the ``202`` answer, so an accepted job is never lost. Each claim's report (or
error) is written the moment that claim finishes (the reports of a batch in the same core call
that checked them, in one transaction), so after a crash (``kill -9``) the restarted server runs
only the claims that have no stored outcome: none lost, none checked to the end twice; only the
claims that were inside the core when it died are begun a second time.

Why hand-written: the state is two small tables read and written by one process, and the
standard library's ``sqlite3`` gives durable, atomic writes (WAL journal: a committed
transaction survives the process being killed; ``synchronous=NORMAL`` only risks the last
transactions on a power loss, not on a crash). An ORM or a queue server would add a dependency
and a second process for what is five SQL statements. All SQL of the service lives here.

Tables (``PRAGMA user_version`` = 1):

* ``jobs``: one row per job: ``id`` (random hex), ``seq`` (acceptance order), ``created`` and
  ``finished`` (ISO-8601 UTC), ``status`` (``queued`` -> ``running`` -> ``done`` | ``failed``),
  ``settings`` (JSON: planner, date filter) and ``total`` claims;
* ``claims``: one row per claim of a job (primary key ``job_id, position``): the claim as JSON,
  ``attempts`` (how many times the core began checking it: counted on the worker thread right
  before the core call, so a check cut short by a crash still counts), and its outcome, written
  once: ``report`` (the ``factscout-report/1`` JSON) or ``error`` (why the core refused it).

* ``documents``: one row per document job (``POST /v1/documents``; a table added to version 1,
  made when a database is opened): ``document``, the document report without its claims' reports
  (the ``factscout-document-report/1`` layout, each claim's ``report`` null: the job's claims are
  its checked sentences, in the same order), or ``error``, why the core refused the document.

A job is ``done`` when every claim has a report, ``failed`` when every claim has an outcome and
at least one is an error (the other reports are still given). A document job with no sentence to
check is ``done`` when it is made, and a refused document ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factscout.errors import FactscoutError, InputError
from factscout.serve.runner import CoreRunner

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
DATABASE_NAME = "jobs.sqlite3"
STATUSES = ("queued", "running", "done", "failed")
UNFINISHED = ("queued", "running")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL UNIQUE,
    created TEXT NOT NULL,
    finished TEXT,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    settings TEXT NOT NULL,
    total INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS claims (
    job_id TEXT NOT NULL REFERENCES jobs (id),
    position INTEGER NOT NULL,
    claim TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    report TEXT,
    error TEXT,
    PRIMARY KEY (job_id, position)
);
CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs (status, seq);
CREATE TABLE IF NOT EXISTS documents (
    job_id TEXT PRIMARY KEY REFERENCES jobs (id),
    document TEXT,
    error TEXT
);
"""


class JobStateError(FactscoutError):
    """The job database cannot be opened or written (a read-only folder, another program's file)."""


@dataclass(frozen=True, slots=True)
class ClaimTask:
    """One claim of a job still to be checked: where its outcome goes and what to check."""

    job_id: str
    position: int
    claim_id: str
    claim: str
    date: str | None
    planner: str
    date_filter: bool

    @property
    def key(self) -> tuple[str, int]:
        return (self.job_id, self.position)


class JobStore:
    """The jobs database at ``folder/jobs.sqlite3`` (``folder=None``: in memory, lost on exit).

    Thread-safe: one connection behind a lock (the event loop writes jobs and outcomes, the
    core's worker thread counts attempts)."""

    def __init__(self, folder: Path | str | None) -> None:
        self.path = None if folder is None else Path(folder) / DATABASE_NAME
        self._lock = threading.Lock()
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                ":memory:" if self.path is None else str(self.path), check_same_thread=False, isolation_level=None
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=5000")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise JobStateError(
                    f"{self.path}: job database version {version}, this factscout reads {SCHEMA_VERSION}"
                )
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except (sqlite3.Error, OSError) as exc:
            raise JobStateError(
                f"cannot keep check jobs in {self.path or 'memory'}: {exc} (choose a writable folder with --state)"
            ) from exc

    # ---------------------------------------------------------------- writes

    def create(self, claims: Sequence[dict[str, Any]], *, planner: str, date_filter: bool) -> str:
        """Store a new queued job of ``claims`` (``{"claim_id"?, "claim", "date"?}``; a missing
        ``claim_id`` becomes ``<job id>-<n>``) and return its id. Committed before it returns."""
        if not claims:
            raise InputError("a check job needs at least one claim")
        with self._write() as db:
            return _insert_job(db, claims, planner, date_filter)

    def create_document(
        self,
        document: dict[str, Any] | None,
        claims: Sequence[dict[str, Any]],
        *,
        planner: str,
        date_filter: bool,
        error: str | None = None,
    ) -> str:
        """Store a new document job: ``document`` (its report without the claims' reports) and the
        ``claims`` to check, one per claim of the document, in order (none: the job is done at once);
        or, with ``error`` (why the core refused the document) and no claims, a job failed at once."""
        if (document is None) == (error is None) or (error is not None and claims):
            raise InputError("a document job holds a document and its claims, or the error that refused it")
        status = "failed" if error is not None else "queued" if claims else "done"
        with self._write() as db:
            job_id = _insert_job(db, claims, planner, date_filter, status=status)
            db.execute(
                "INSERT INTO documents (job_id, document, error) VALUES (?, ?, ?)",
                (job_id, None if document is None else json.dumps(document), error),
            )
        return job_id

    def count_attempts(self, tasks: Iterable[ClaimTask]) -> None:
        """Record that the core is about to check ``tasks`` (and mark their jobs running)."""
        keys = [t.key for t in tasks]
        with self._write() as db:
            db.executemany("UPDATE claims SET attempts = attempts + 1 WHERE job_id = ? AND position = ?", keys)
            db.executemany(
                "UPDATE jobs SET status = 'running' WHERE id = ? AND status = 'queued'", {(k[0],) for k in keys}
            )

    def finish(self, task: ClaimTask, *, report: dict[str, Any] | None = None, error: str | None = None) -> None:
        """Store one claim's outcome (once: a second outcome for the same claim is a bug and
        raises); the job ends when it was its last claim."""
        if (report is None) == (error is None):
            raise InputError("a claim's outcome is a report or an error")
        with self._write() as db:
            _store_outcome(db, task, None if report is None else json.dumps(report), error)

    def finish_reports(self, tasks: Sequence[ClaimTask], reports: Sequence[dict[str, Any]]) -> None:
        """Store the reports of a batch the core has just checked, in one transaction."""
        if len(tasks) != len(reports):
            raise InputError(f"{len(reports)} reports for {len(tasks)} claims")
        encoded = [json.dumps(r) for r in reports]  # before the lock: the slow part
        with self._write() as db:
            for task, report in zip(tasks, encoded, strict=True):
                _store_outcome(db, task, report, None)

    # ---------------------------------------------------------------- reads

    def pending(
        self, limit: int, *, skip: set[tuple[str, int]] | frozenset[tuple[str, int]] = frozenset()
    ) -> list[ClaimTask]:
        """Up to ``limit`` claims without an outcome, oldest job first, leaving out ``skip``
        (claims already handed to the core). After a restart these are exactly the claims whose
        reports were never stored."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.job_id, c.position, c.claim, j.settings FROM claims c JOIN jobs j ON j.id = c.job_id"
                " WHERE j.status IN ('queued', 'running') AND c.report IS NULL AND c.error IS NULL"
                " ORDER BY j.seq, c.position LIMIT ?",
                (limit + len(skip),),
            ).fetchall()
        tasks = []
        for job_id, position, claim_json, settings_json in rows:
            if (job_id, position) in skip:
                continue
            claim, settings = json.loads(claim_json), json.loads(settings_json)
            tasks.append(
                ClaimTask(
                    job_id,
                    position,
                    claim["claim_id"],
                    claim["claim"],
                    claim["date"],
                    settings["planner"],
                    settings["date_filter"],
                )
            )
        return tasks[:limit]

    def get(self, job_id: str) -> dict[str, Any] | None:
        """The job's status view (``JobResponse`` of :mod:`factscout.serve.responses`), or ``None``."""
        with self._lock:
            job = self._db.execute(
                "SELECT id, status, created, finished, total FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            if job is None:
                return None
            claims = self._db.execute(
                "SELECT position, claim, report, error FROM claims WHERE job_id = ? ORDER BY position", (job_id,)
            ).fetchall()
        job_id, status, created, finished, total = job
        ended = status in ("done", "failed")
        errors = [
            {"position": position, "claim_id": json.loads(claim)["claim_id"], "error": error}
            for position, claim, _, error in claims
            if error is not None
        ]
        return {
            "id": job_id,
            "status": status,
            "total": total,
            "done": sum(report is not None or error is not None for _, _, report, error in claims),
            "failed": len(errors),
            "created": created,
            "finished": finished,
            "reports": [None if r is None else json.loads(r) for _, _, r, _ in claims] if ended else None,
            "errors": errors,
        }

    def document(self, job_id: str) -> tuple[dict[str, Any] | None, str | None] | None:
        """A document job's stored document (its report without the claims' reports) and the error
        that refused it (one of the two is ``None``); ``None`` when ``job_id`` is no document job."""
        with self._lock:
            row = self._db.execute("SELECT document, error FROM documents WHERE job_id = ?", (job_id,)).fetchone()
        if row is None:
            return None
        return (None if row[0] is None else json.loads(row[0])), row[1]

    def attempts(self) -> dict[tuple[str, int], int]:
        """How many times the core began checking each claim (for tests and audits)."""
        with self._lock:
            rows = self._db.execute("SELECT job_id, position, attempts FROM claims").fetchall()
        return {(j, p): n for j, p, n in rows}

    def unfinished(self) -> int:
        """Jobs queued or running."""
        with self._lock:
            return int(
                self._db.execute("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')").fetchone()[0]
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ---------------------------------------------------------------- internals

    def _write(self) -> _Transaction:
        return _Transaction(self._lock, self._db)


class _Transaction:
    """``with store._write() as db:`` one ``BEGIN IMMEDIATE`` ... ``COMMIT`` under the lock
    (rolled back if the block raises); sqlite errors become :class:`JobStateError`."""

    def __init__(self, lock: threading.Lock, db: sqlite3.Connection) -> None:
        self.lock, self.db = lock, db

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            self.lock.release()
            raise JobStateError(f"cannot write the job database: {exc}") from exc
        return self.db

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        try:
            if kind is None:
                self.db.execute("COMMIT")
            else:
                self.db.execute("ROLLBACK")
        except sqlite3.Error as error:
            raise JobStateError(f"cannot write the job database: {error}") from error
        finally:
            self.lock.release()


class JobWorker:
    """The background task that runs stored claims through the service's
    :class:`~factscout.serve.runner.CoreRunner` (job kind ``"job"``, a background kind there: it
    waits behind every interactive request): up to ``batch`` claims in flight at a time, oldest job
    first. The runner's ``"job"`` handler checks a batch and stores its reports
    (:meth:`JobStore.finish_reports`); a claim the core refuses gets its error stored here. Started
    with the app, it first resumes what a previous server left unfinished."""

    def __init__(self, store: JobStore, runner: CoreRunner, *, batch: int = 16) -> None:
        self.store, self.runner, self.batch = store, runner, max(1, batch)
        self._wake = asyncio.Event()
        self._inflight: set[tuple[str, int]] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._wake = asyncio.Event()
        self._inflight.clear()  # after a stop, nothing is in the core any more
        self._task = asyncio.get_running_loop().create_task(self._run(), name="factscout-jobs")

    def notify(self) -> None:
        """A job was added: look for work now."""
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                tasks = self.store.pending(self.batch, skip=self._inflight)
            except FactscoutError:
                log.exception("cannot read the job database; retrying in 1 s")
                await asyncio.sleep(1)
                continue
            if not tasks:
                await self._wake.wait()
                continue
            self._inflight.update(t.key for t in tasks)
            await asyncio.gather(*(self._one(t) for t in tasks))

    async def _one(self, task: ClaimTask) -> None:
        try:  # the core call (``check_claims``) stores the reports itself, with the batch
            await self.runner.submit("job", task, group=(task.planner, task.date_filter), uid=task.claim_id)
        except FactscoutError as exc:
            error: str | None = str(exc)
        except Exception as exc:
            log.exception("check job %s claim %d failed", task.job_id, task.position)
            error = f"internal error: {type(exc).__name__}"
        else:
            error = None
        if error is not None:
            try:
                self.store.finish(task, error=error)
            except Exception:  # left in flight here: a restarted server checks it again
                log.exception("cannot store the outcome of job %s claim %d", task.job_id, task.position)
                return
        self._inflight.discard(task.key)


def _insert_job(
    db: sqlite3.Connection,
    claims: Sequence[dict[str, Any]],
    planner: str,
    date_filter: bool,
    *,
    status: str = "queued",
) -> str:
    """Inside a transaction: a new job of ``claims`` with ``status`` (an ended one finished now); its id."""
    job_id = secrets.token_hex(8)
    rows = [
        (
            job_id,
            i,
            json.dumps(
                {"claim_id": c.get("claim_id") or f"{job_id}-{i + 1}", "claim": c["claim"], "date": c.get("date")}
            ),
        )
        for i, c in enumerate(claims)
    ]
    settings = json.dumps({"planner": planner, "date_filter": date_filter})
    finished = None if status in UNFINISHED else _now()
    seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()[0]
    db.execute(
        "INSERT INTO jobs (id, seq, created, finished, status, settings, total) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (job_id, seq, _now(), finished, status, settings, len(rows)),
    )
    db.executemany("INSERT INTO claims (job_id, position, claim) VALUES (?, ?, ?)", rows)
    return job_id


def _store_outcome(db: sqlite3.Connection, task: ClaimTask, report: str | None, error: str | None) -> None:
    """Inside a transaction: one claim's outcome, and the job's end when it was the last one."""
    cursor = db.execute(
        "UPDATE claims SET report = ?, error = ? WHERE job_id = ? AND position = ? AND report IS NULL AND error IS NULL",
        (report, error, task.job_id, task.position),
    )
    if cursor.rowcount != 1:
        raise RuntimeError(f"claim {task.position} of job {task.job_id} already has an outcome")
    left, errors = db.execute(
        "SELECT SUM(report IS NULL AND error IS NULL), SUM(error IS NOT NULL) FROM claims WHERE job_id = ?",
        (task.job_id,),
    ).fetchone()
    if left == 0:
        db.execute(
            "UPDATE jobs SET status = ?, finished = ? WHERE id = ?",
            ("failed" if errors else "done", _now(), task.job_id),
        )


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
