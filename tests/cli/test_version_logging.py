"""The top-level options: ``--version``, ``-v``/``--verbose`` and ``--log-level`` wired to logging."""

import json
import logging
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

import pytest
from typer.testing import CliRunner

import factscout
from factscout.cli import main as cli_main
from factscout.cli.main import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def restore_root_logger():
    """The callback sets the root logger's level and may add a handler: undo both after each test."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.setLevel(level)
    root.handlers[:] = handlers


@pytest.fixture
def run_files(tmp_path):
    """A one-query qrels and run, so that ``evaluate`` is a cheap real command to invoke."""
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    return ["evaluate", "--qrels", str(tmp_path / "qrels.tsv"), "--run", str(tmp_path / "run.trec"), "--json"]


def test_version_prints_the_installed_version_and_exits_0():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"factscout {version('factscout')}"
    assert version("factscout") == factscout.__version__


def test_version_falls_back_to_the_package_attribute(monkeypatch):
    def missing(name):
        raise PackageNotFoundError(name)

    monkeypatch.setattr(cli_main, "package_version", missing)
    monkeypatch.setattr(factscout, "__version__", "9.8.7")
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "factscout 9.8.7"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ([], logging.WARNING),
        (["-v"], logging.INFO),
        (["--verbose"], logging.INFO),
        (["-vv"], logging.DEBUG),
        (["-v", "-v", "-v"], logging.DEBUG),
        (["--log-level", "error"], logging.ERROR),
        (["-vv", "--log-level", "WARNING"], logging.WARNING),
    ],
)
def test_verbosity_sets_the_root_logger_level(run_files, options, expected):
    logging.getLogger().setLevel(logging.CRITICAL)  # so that the default case has something to change
    result = runner.invoke(app, [*options, *run_files])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["queries"] == 1  # the command itself still ran
    assert logging.getLogger().level == expected
    assert logging.getLogger("factscout.evaluate").getEffectiveLevel() == expected


def test_bad_log_level_is_a_usage_error_naming_the_levels(run_files):
    result = runner.invoke(app, ["--log-level", "nonsense", *run_files])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "nonsense" in text
    for name in ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]:
        assert name in text


# A fresh interpreter, where nothing has configured logging: the app with one extra command that
# logs through a library logger at INFO and DEBUG, so the stderr handler itself is exercised.
SCRIPT = """
import logging, sys
from factscout.cli.main import app

@app.command()
def ping() -> None:
    logging.getLogger("factscout.ping").info("pong at info")
    logging.getLogger("factscout.ping").debug("pong at debug")
    loud = logging.getLogger("loud_library")  # as bm25s does on import
    loud.setLevel(logging.DEBUG)
    loud.debug("library chatter")
    print("done")

sys.argv = ["factscout", *sys.argv[1:]]
app()
"""


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120)


def test_library_log_messages_reach_stderr_only_when_asked():
    quiet = run_cli("ping")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.strip() == "done"
    assert "pong" not in quiet.stderr
    assert "chatter" not in quiet.stderr  # a library that sets its own logger to DEBUG stays quiet

    info = run_cli("-v", "ping")
    assert info.returncode == 0, info.stderr
    assert "INFO factscout.ping: pong at info" in info.stderr
    assert "pong at debug" not in info.stderr
    assert "pong" not in info.stdout

    debug = run_cli("--log-level", "debug", "ping")
    assert debug.returncode == 0, debug.stderr
    assert "DEBUG factscout.ping: pong at debug" in debug.stderr
