"""A real two-node Ray cluster on this machine for the scale-out tests.

``ray start --head`` plus a second ``ray start --address=...`` node, one CPU and a small object
store each, in a short temporary directory (Ray's socket paths must stay under 107 bytes), no
dashboard, no usage stats, token authentication with a fresh token. Each node is started in a
new session, and teardown kills the processes of those sessions (only processes this fixture
started, found by session id). Without ray installed the tests skip
locally and fail in CI (CI=true), so they never pass by not running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_bin() -> str:
    exe = Path(sys.executable).with_name("ray")
    return str(exe) if exe.exists() else (shutil.which("ray") or "ray")


@dataclass(frozen=True)
class RayCluster:
    address: str
    sessions: tuple[int, ...]  # the nodes' sessions: gcs, raylets and every worker they start

    def processes(self, title: str = "") -> list[int]:
        """Ids of this cluster's live processes whose command line starts with ``title`` (Ray
        names actor processes ``ray::Class`` / ``ray::Class.method``)."""
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                stat = (proc / "stat").read_text()
                cmdline = (proc / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[3]) in self.sessions and fields[0] != "Z" and cmdline.startswith(title):
                found.append(int(proc.name))
        return found


@pytest.fixture(scope="session")
def ray_cluster():
    """The address of a running two-node local cluster, with this process connected to it."""
    # token authentication with a fresh token, so other users of this machine cannot join or
    # submit; set before ray is imported (ray reads it once), the driver (this process) uses it too
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    saved = {name: os.environ.get(name) for name in auth}
    os.environ.update(auth)
    try:
        import ray
    except ImportError:
        os.environ.update({k: v for k, v in saved.items() if v is not None})
        if os.environ.get("CI"):
            raise
        pytest.skip("ray is not installed: pip install 'factscout[ray]'")
    temp = Path(tempfile.mkdtemp(prefix="fsray", dir="/tmp"))
    log = temp / "start.log"
    port = _free_port()
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    common = ["--num-cpus=1", "--object-store-memory=80000000", "--disable-usage-stats"]
    sessions: list[int] = []
    address = f"127.0.0.1:{port}"
    try:
        sessions.append(
            _popen_group(
                [
                    "--head",
                    f"--port={port}",
                    "--node-ip-address=127.0.0.1",
                    "--include-dashboard=false",
                    f"--temp-dir={temp}",
                    *common,
                ],
                env,
                log,
            )
        )
        sessions.append(_popen_group([f"--address={address}", "--node-ip-address=127.0.0.1", *common], env, log))
        ray.init(address=address, logging_level=logging.ERROR)
        deadline = time.monotonic() + 60
        while sum(1 for n in ray.nodes() if n["Alive"]) < 2:
            if time.monotonic() > deadline:
                raise RuntimeError("the second Ray node did not join")
            time.sleep(0.2)
        yield RayCluster(address, tuple(sessions))
    finally:
        if ray.is_initialized():
            ray.shutdown()
        for pid in RayCluster(address, tuple(sessions)).processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _popen_group(args: list[str], env: dict[str, str], log: Path) -> int:
    """Start ``ray start ARGS`` as the leader of a new session; returns the session id."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [_ray_bin(), "start", *args], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        code = proc.wait(timeout=120)
    if code != 0:
        raise RuntimeError(f"ray start {' '.join(args)} failed ({code}): {log.read_text()[-2000:]}")
    return proc.pid
