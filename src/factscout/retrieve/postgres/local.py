"""A throwaway PostgreSQL server on 127.0.0.1: for the tests, the benchmark, and trying out.

The binaries are PostgreSQL 16 with pgvector 0.6 as shipped inside the ``pgserver`` wheel
(``pip install 'factscout[pg]'``), or any installation's ``bin`` folder that has pgvector
(``bin_dir``, or ``$FACTSCOUT_PG_BIN``).
pgserver's own launcher is not used: it listens on a Unix socket only, and as root it adds a
system user and changes folder permissions. This one runs ``initdb`` into a fresh temporary
folder and ``postgres`` listening on a free loopback TCP port, with durability switched off
(``fsync=off``: the data is thrown away), and removes everything on :meth:`stop`. PostgreSQL
refuses to run as root, so as root it runs as ``nobody``, with a copy of the binaries when
``nobody`` cannot read the originals.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from factscout.errors import MissingDependency, ServerError
from factscout.retrieve.postgres.server import psycopg_module

log = logging.getLogger(__name__)

BIN_ENV = "FACTSCOUT_PG_BIN"
_START_TIMEOUT_S = 60.0
_INITDB = ("-E", "UTF8", "--no-locale", "--no-sync")
# no Unix socket (-k ""), no durability: the data is thrown away
_THROWAWAY = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")


def pgserver_bin() -> Path:
    """The ``bin`` folder of the PostgreSQL inside the pgserver wheel (found without importing
    pgserver, whose import creates lock files)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise MissingDependency(
            f"a local PostgreSQL server needs pgserver (pip install 'factscout[pg]') or ${BIN_ENV} naming the bin"
            " folder of a PostgreSQL with pgvector"
        )
    return Path(spec.origin).parent / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """``with LocalPostgres() as server: ... server.dsn ...``"""

    def __init__(self, bin_dir: str | os.PathLike[str] | None = None) -> None:
        bin_dir = bin_dir or os.environ.get(BIN_ENV)
        self.bin_dir = Path(bin_dir) if bin_dir else pgserver_bin()
        self.dsn = ""
        self._folder: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> LocalPostgres:
        if self._process is not None:
            return self
        self._folder = folder = Path(tempfile.mkdtemp(prefix="factscout-pg-"))
        atexit.register(self.stop)
        try:
            run_as: dict[str, Any] = {}
            bin_dir = self.bin_dir
            if os.geteuid() == 0:
                import pwd

                nobody = pwd.getpwnam("nobody")
                run_as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
                os.chown(folder, nobody.pw_uid, nobody.pw_gid)
                bin_dir = self._runnable_bin(run_as, folder)
            data = folder / "data"
            done = subprocess.run(
                [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", *_INITDB],
                capture_output=True,
                check=False,
                **run_as,
            )
            if done.returncode:
                raise ServerError(f"initdb failed: {done.stderr.decode(errors='replace').strip()}")
            for _ in range(3):  # another process can take the free port before postgres binds it
                if self._launch(bin_dir, data, _free_port(), run_as, folder):
                    return self
            raise ServerError(f"PostgreSQL did not start; its log:\n{self._log_tail()}")
        except BaseException:
            self.stop()
            raise

    def _runnable_bin(self, run_as: dict[str, Any], folder: Path) -> Path:
        """The binaries if ``nobody`` can run them, else a copy that it can."""
        try:
            probe = subprocess.run([str(self.bin_dir / "postgres"), "--version"], capture_output=True, **run_as)
            if probe.returncode == 0:
                return self.bin_dir
        except OSError:  # the binary or a folder on its path is closed to nobody
            pass
        install = self.bin_dir.parent  # .../pgserver/pginstall
        copy = folder / "pg" / install.parent.name / install.name
        for part in ("bin", "lib", "share"):
            shutil.copytree(install / part, copy / part, symlinks=True)
        # the wheel's vendored libpq, found through RPATH $ORIGIN/../../../pgserver.libs
        libs = install.parent.parent / f"{install.parent.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, folder / "pg" / libs.name, symlinks=True)
        return copy / "bin"

    def _launch(self, bin_dir: Path, data: Path, port: int, run_as: dict[str, Any], folder: Path) -> bool:
        with open(folder / "postgres.log", "ab") as out:
            self._process = subprocess.Popen(
                [str(bin_dir / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port), "-k", "", *_THROWAWAY],
                stdout=out,
                stderr=subprocess.STDOUT,
                **run_as,
            )
        psycopg = psycopg_module()
        dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._process = None
                return False
            try:
                psycopg.connect(dsn, connect_timeout=5).close()
            except psycopg.OperationalError:
                time.sleep(0.05)
                continue
            self.dsn = dsn
            log.info("local PostgreSQL at %s (data in %s)", dsn, data)
            return True
        raise ServerError(f"PostgreSQL did not accept connections within {_START_TIMEOUT_S:.0f} s:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return (Path(self._folder or ".") / "postgres.log").read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Fast shutdown (open sessions are ended), then remove the data."""
        if self._process is not None:
            self._process.send_signal(signal.SIGINT)
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        self.dsn = ""
        atexit.unregister(self.stop)
