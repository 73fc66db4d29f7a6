"""``factscout check --document FILE`` (issue 49, item 3): the most check-worthy sentences of a document
checked into one document report: JSON (--json, --output), the terminal, a self-contained HTML page with
the sentences highlighted in place and linked to their reports (--html); hostile documents refused
before anything loads (binary, over 500,000 characters) or handled (100,000+ characters, <script>)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from html import unescape

import pytest
from typer.testing import CliRunner

from factscout.claims.report import DocumentReport
from factscout.cli.main import app
from factscout.datasets import load_dataset
from factscout.retrieve import build_index

runner = CliRunner()
FOLATE = "A deficiency of folate increases blood levels of homocysteine."
DOCUMENT = (
    "The minister spoke on Tuesday about school meals.\n"
    "I think it was a lovely speech.\n"
    f"{FOLATE}\n"
    "<script>alert('xss')</script> Folic acid lowered homocysteine by 25 percent in the 2005 trial.\n"
)
FAST = ("--planner", "claim", "--stance", "head", "--passages", "3")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    path = tmp_path_factory.mktemp("check-document") / "idx"
    build_index(load_dataset("scifact_mini").corpus, path, "bm25", show_progress=False)
    return path


@pytest.fixture(scope="module")
def document(tmp_path_factory):
    path = tmp_path_factory.mktemp("docs") / "article.txt"
    path.write_text(DOCUMENT, encoding="utf-8")
    return path


def check(*args: object):
    return runner.invoke(app, ["check", *map(str, args), *FAST])


@pytest.fixture(scope="module")
def written(index, document, tmp_path_factory):
    folder = tmp_path_factory.mktemp("written")
    r = check("--document", document, "--index", index, "--top", "2", "--date", "2016-06-01",
              "--output", folder / "report.json", "--html", folder / "report.html")  # fmt: skip
    assert r.exit_code == 0, r.output
    return r, folder


def test_the_json_report_keeps_every_span(written):
    r, folder = written
    report = DocumentReport.from_dict(json.loads((folder / "report.json").read_text(encoding="utf-8")))
    assert report.text == DOCUMENT and report.document_format == "text" and report.date.isoformat() == "2016-06-01"
    assert 1 <= len(report.claims) <= 2 and report.top == 2
    for s in report.sentences:
        assert DOCUMENT[s.start : s.end] == s.text
    for c in report.claims:
        assert DOCUMENT[c.start : c.end] == c.sentence and c.report.claim == c.claim and c.report.date == report.date
    assert "I think it was a lovely speech." not in [c.sentence for c in report.claims]
    # the terminal: one section per claim under a header with its sentence, span and score, then its report
    first = report.claims[0]
    assert f"Claim 1 of {len(report.claims)}: {first.sentence_id} (characters {first.start}-{first.end}" in r.stdout
    assert "Verdict" in r.stdout and "Evidence" in r.stdout
    assert "wrote the document report to" in r.stderr and "check-worthy" in r.stderr


def test_json_on_stdout_is_the_same_report(index, document, written):
    _, folder = written
    r = check("--document", document, "--index", index, "--top", "2", "--date", "2016-06-01", "--json")
    assert r.exit_code == 0, r.output
    printed, saved = json.loads(r.stdout), json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert printed["format"] == "factscout-document-report/1"
    assert printed["sentences"] == saved["sentences"]
    assert [c["report"]["verdict"] for c in printed["claims"]] == [c["report"]["verdict"] for c in saved["claims"]]


def test_the_html_report_highlights_the_sentences_and_escapes_the_script(written):
    _, folder = written
    html = (folder / "report.html").read_text(encoding="utf-8")
    report = DocumentReport.from_dict(json.loads((folder / "report.json").read_text(encoding="utf-8")))
    assert "default-src 'none'" in unescape(html)  # nothing may load or run
    assert "<script" not in html and "&lt;script&gt;alert(" in html
    for n, c in enumerate(report.claims, start=1):
        link = f'<a class="cw checked {c.report.verdict.label.replace(" ", "-")}" id="sentence-{c.sentence_id}" '
        assert link + f'href="#claim-{c.sentence_id}"' in html  # the sentence in the text, linked to its report
        assert f'<article class="claim-report document-claim" id="claim-{c.sentence_id}"' in html
        assert f"{n}: {c.report.verdict.label}</span>" in html
    assert unescape(html).count("I think it was a lovely speech.") == 1  # in the text, and not as a claim


def test_a_document_of_100_000_characters_is_handled(index, tmp_path):
    line = "Folate intake in adults rose by 12 percent between 2001 and 2010 in the national survey.\n"
    long = tmp_path / "long.txt"
    long.write_text(line * (100_000 // len(line) + 1), encoding="utf-8")
    assert len(long.read_text()) > 100_000
    r = check("--document", long, "--index", index, "--top", "1", "--output", tmp_path / "long.json")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "long.json").read_text())
    assert report["chars"] > 100_000 and len(report["sentences"]) > 1000 and len(report["claims"]) == 1


def test_option_mistakes_are_named(index, document):
    cases = {
        "give exactly one of a CLAIM argument, --input FILE (--claims) or --document FILE": ["a claim", "--document", document],
        "--top, --min-score apply to --document FILE": ["a claim", "--top", "3", "--min-score", "0.5"],
        "--document is checked here: drop --server": ["--document", document, "--server", "http://localhost:1"],
        "no document format 'pdf'": ["--document", document, "--format", "pdf"],
    }  # fmt: skip
    for message, args in cases.items():
        r = check(*args, "--index", index)
        assert r.exit_code == 2, (args, r.output)
        assert message in " ".join(r.output.replace("│", " ").split()), (message, r.output)


DRIVER = textwrap.dedent(
    """
    import json, sys
    from factscout.cli.main import app
    HEAVY = ("torch", "transformers", "onnxruntime", "spacy", "faiss", "sentence_transformers")
    results = []
    for args in json.loads(sys.argv[1]):
        try:
            app(args=args, prog_name="factscout")
            code = 0
        except SystemExit as exc:
            code = exc.code
        results.append({"code": code, "heavy": [m for m in HEAVY if m in sys.modules]})
    print(json.dumps(results))
    """
)


def test_hostile_documents_are_refused_before_anything_loads(index, document, tmp_path):
    binary = tmp_path / "photo.txt"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("Caf\xe9 prices rose 40 percent.".encode("latin-1"))
    huge = tmp_path / "huge.txt"
    huge.write_text("a" * 500_001, encoding="utf-8")
    docx = tmp_path / "notes.docx"
    docx.write_text("It rose by 40 percent.", encoding="utf-8")
    control = tmp_path / "control.txt"
    control.write_text("It rose\x07 by 40 percent.", encoding="utf-8")
    cases = {
        "looks binary (a NUL byte": ["check", "--document", str(binary), "--index", str(index)],
        "is not UTF-8 text": ["check", "--document", str(latin), "--index", str(index)],
        "more than the 500,000 a document may have": ["check", "--document", str(huge), "--index", str(index)],
        "the control character U+0007": ["check", "--document", str(control), "--index", str(index)],
        "none.txt: no such file": ["check", "--document", str(tmp_path / "none.txt"), "--index", str(index)],
        "is a folder, not a file": ["check", "--document", str(tmp_path), "--index", str(index)],
        "no index at": ["check", "--document", str(document), "--index", str(tmp_path / "no-index")],
        "cannot tell the format": ["check", "--document", str(docx), "--index", str(index)],
    }
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(list(cases.values()))], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for args, result in zip(cases.values(), results, strict=True):
        assert result["code"] == 2, (args, result)
        assert not result["heavy"], f"{args[:3]} imported {result['heavy']} before refusing its input"
    stderr = " ".join(done.stderr.split())
    for message in cases:
        assert message in stderr, f"no {message!r} in:\n{done.stderr}"
    assert "Traceback" not in done.stderr
