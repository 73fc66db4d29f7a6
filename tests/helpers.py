"""Pieces several test modules share: a loopback HTTP server to build fakes on, the tiny
corpus of the query-rewriting tests, and texts that exercise the sentence splitter. (``tests/conftest.py`` puts this folder on ``sys.path``.)"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from factscout.records import Claim, Passage


class LoopbackHandler(BaseHTTPRequestHandler):
    """A quiet request handler with one way to answer."""

    content_type = "application/json"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str | None = None, **headers: str) -> None:
        """Answer ``status`` with ``body``; ``headers`` as keyword arguments (``retry_after``
        becomes ``Retry-After``). A client that gave up (a timeout test) is not an error."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type or self.content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass


class LoopbackServer(ThreadingHTTPServer):
    """An HTTP server on a free port of ``host`` (loopback), serving from a daemon thread from
    construction until :meth:`stop`. ``release`` frees handlers told to wait (slow answers)."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1") -> None:
        super().__init__((host, 0), handler)
        self.host = host
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.server_address[1]}"

    def stop(self) -> None:
        self.release.set()
        if self._thread.is_alive():
            self.shutdown()
            self._thread.join(timeout=5)
            self.server_close()


# The query-rewriting world (tests/rewrite, tests/scale): BM25 ranks "Committee report on solar
# weather" d2, d1, rel (AP 1/3); removing "Committee" or "weather" gives 1/2, both 1.
REWRITE_CORPUS = [
    Passage("rel", "rel", "", "Solar panels convert sunlight into electricity."),
    Passage("d1", "d1", "", "Annual report: the report of the report committee."),
    Passage("d2", "d2", "", "A report on the weather report."),
    Passage("d3", "d3", "", "The report was late."),
    Passage("f1", "f1", "", "Cats sleep most of the day."),
    Passage("f2", "f2", "", "Rivers flow to the sea."),
    Passage("f3", "f3", "", "Bread needs flour and water."),
    Passage("f4", "f4", "", "Trains run on rails."),
    Passage("t1", "t1", "", "Trains and rivers carry bread to the sea."),
]
REWRITE_CLAIM = Claim("c1", "Committee report on solar weather")
# The BFS world (tests/rewrite/test_bfs.py, and the same runs on Ray in tests/scale).
BFS_QRELS = {
    "c1": {"rel": 1},
    "c2": {"rel": 1},  # already first: skipped
    "c3": {"f2": 1},
    "c4": {"f3": 1},
    "c5": {"t1": 1},
}
BFS_CLAIMS = [
    REWRITE_CLAIM,
    Claim("c2", "sunlight"),
    Claim("c3", "Trains carry bread to the sea"),
    Claim("c4", "Bread and water on rails"),
    Claim("c5", "Rivers flow to the sea with trains"),
    Claim("c6", "no judgements for this one"),
]


def bfs_environment() -> Any:
    """The search environment of the BFS tests: BM25 over the rewrite corpus."""
    from factscout.retrieve import build_retriever
    from factscout.rewrite.environment import SearchEnvironment

    return SearchEnvironment(build_retriever(REWRITE_CORPUS, "bm25"), BFS_QRELS)


NOUNS = [
    "falcon",
    "granite",
    "harbor",
    "lantern",
    "meadow",
    "orchid",
    "pepper",
    "quartz",
    "saddle",
    "tunnel",
    "violin",
    "walnut",
    "anchor",
    "basket",
    "candle",
    "dolphin",
    "engine",
    "feather",
    "glacier",
    "hammer",
    "island",
    "jacket",
    "kettle",
    "ladder",
    "magnet",
    "needle",
    "oyster",
    "parrot",
    "rocket",
    "silver",
    "tomato",
    "umbrella",
    "velvet",
    "wagon",
    "yogurt",
    "zipper",
    "bamboo",
    "cactus",
]


def ranker_world() -> tuple[list[Passage], list[Claim], dict[str, dict[str, int]]]:
    """Passage i holds noun i; claim i names noun i with words no passage holds together, so the
    whole claim matches nothing on an AND endpoint and the noun alone finds passage i."""
    passages, claims, qrels = [], [], {}
    for i, noun in enumerate(NOUNS):
        other = NOUNS[(i + 7) % len(NOUNS)]
        passages.append(Passage(f"p{i}", f"p{i}", "", f"The {noun} report shows clear results for the region."))
        passages.append(Passage(f"d{i}", f"d{i}", "", f"A study of the {other} market and its results."))
        claims.append(Claim(f"c{i}", f"The {noun} report proves a {other} shortage."))
        qrels[f"c{i}"] = {f"p{i}": 1}
    return passages, claims, qrels


def ranker_cli_round_trip(tmp_path: Any, *options: str) -> tuple[Any, str, list[Claim]]:
    """Through the CLI on :func:`ranker_world`: ``train rewrite-ranker`` on the first 30 claims
    (with ``options``), ``index --retriever bm25-and``, then ``rewrite`` claim 33 with the trained
    policy. Returns the policy folder, the final query and the claims; each step must exit 0."""
    from typer.testing import CliRunner

    from factscout.cli.main import app
    from factscout.formats.beir import write_corpus, write_queries
    from factscout.records import Query

    passages, claims, qrels = ranker_world()
    write_corpus(tmp_path / "corpus.jsonl", passages)
    write_queries(tmp_path / "claims.jsonl", [Query(c.claim_id, c.claim_id, c.text) for c in claims[:30]])
    (tmp_path / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, ps in qrels.items() for p in ps)
    )
    corpus, folder, index = str(tmp_path / "corpus.jsonl"), tmp_path / "pol", str(tmp_path / "idx")
    runner = CliRunner()
    for args in (
        ["train", "rewrite-ranker", "--claims", str(tmp_path / "claims.jsonl"), "--qrels", str(tmp_path / "qrels.tsv"),
         "--corpus", corpus, "--out", str(folder), *options],
        ["index", "--corpus", corpus, "--index", index, "--retriever", "bm25-and"],
        ["rewrite", claims[33].text, "--index", index, "--policy", str(folder)],
    ):  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        if args[0] == "train":
            assert "cross-validated AP@50" in result.output and (folder / "ranker.npz").is_file()
    return folder, result.output.split("final query:")[1].strip(), claims


# texts that exercise the sentence splitter (abbreviations, line breaks, numbers, empty and blank)
TEXTS = [
    "Dr. Smith went to Washington. He arrived at 5 p.m. on Monday!  Then he left?",
    "Line one without a stop\nLine two. Line three.\n\n  Indented   line four.",
    "Vitamin D (e.g. 1,000 IU) reduced falls by 12.5%. The U.S. trial ran in 2019.",
    "",
    "   ",
    "One sentence only",
]
