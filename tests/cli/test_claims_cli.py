"""``factscout claims``: a document's sentences ranked with spans, speakers and context; the
``--sentences IN.jsonl --output OUT.jsonl`` form others call (input order, never re-split, a bad
line named); --top and --min-score; everything the user gave checked before the model loads."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from factscout.claims import checkworthy
from factscout.claims.checkworthy import SURFACE_FEATURES, LinearCheckworthy
from factscout.cli.main import app

runner = CliRunner()

TRANSCRIPT = (
    "1\tHOLT\tGood evening, and welcome.\n"
    "2\tSMITH\tI think we should all be kind.\n"
    "3\tSMITH\tExports of cars grew 12 % in 2016.\n"
    "4\tSMITH\tHe said it rose 40 % last year.\n"
    "5\tSYSTEM\t[Applause]\n"
    "6\tJONES\tThat is [bold]wrong[/bold].\n"
)


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def rows_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


WEIGHTS = np.zeros(384 + len(SURFACE_FEATURES), dtype=np.float32)
WEIGHTS[384 + SURFACE_FEATURES.index("has number")] = 2.0
WEIGHTS[384 + SURFACE_FEATURES.index("percent")] = 1.0
WEIGHTS[384 + SURFACE_FEATURES.index("opinion words")] = -20.0
SCALE = (np.zeros(len(SURFACE_FEATURES), np.float32), np.ones(len(SURFACE_FEATURES), np.float32))


def hand_weighted(encoder=None) -> LinearCheckworthy:
    """A linear check-worthiness model whose weights are read off by hand: a number or a percentage
    raises the probability, an opinion word lowers it, the sentence embedding counts for nothing
    (threshold 0.5): "Exports grew 12 % in 2016." scores sigmoid(-1 + 2 + 1)."""
    return LinearCheckworthy((WEIGHTS, -1.0), None, SCALE, threshold=0.5, encoder=encoder)


@pytest.fixture
def model(monkeypatch):
    """The hand-weighted model in place of the shipped one; its embeddings are zeros (their weights
    are), so no encoder runs: the real one is run by the tests of --model and of the shipped model."""
    loaded = hand_weighted(encoder=lambda texts: np.zeros((len(texts), 384), dtype=np.float32))
    monkeypatch.setattr(checkworthy, "load_checkworthy", lambda path=None: loaded)
    return loaded


@pytest.fixture
def no_model(monkeypatch):
    """Fail the test if the command gets as far as loading a model."""

    def refuse(path=None):
        raise AssertionError("the model was loaded before the input was checked")

    monkeypatch.setattr(checkworthy, "load_checkworthy", refuse)


# -- a document ------------------------------------------------------------------------------------------


def test_a_transcript_gives_ranked_sentences_with_spans_speakers_and_context(model, tmp_path):
    doc = tmp_path / "debate.tsv"
    doc.write_text(TRANSCRIPT, encoding="utf-8")
    r = invoke("claims", doc)
    assert r.exit_code == 0, r.output
    rows = rows_of(r.stdout)
    assert [row["id"] for row in rows] == ["s3", "s4", "s5", "s6", "s1", "s2"]  # ties in document order
    assert [row["rank"] for row in rows] == [1, 2, 3, 4, 5, 6]
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(1 / (1 + np.exp(-2.0)))
    assert [row["checkworthy"] for row in rows] == [True, True, False, False, False, False]
    text = doc.read_text(encoding="utf-8")
    for row in rows:
        assert text[row["start"] : row["end"]] == row["text"]
    he = rows[1]
    assert he["speaker"] == "SMITH" and he["line"] == 4 and he["context"] == ["s2", "s3"] and he["cue"] == "he"
    assert (
        he["claim"]
        == "I think we should all be kind. Exports of cars grew 12 % in 2016. He said it rose 40 % last year."
    )
    assert rows[0]["claim"] == rows[0]["text"]  # a sentence that stands alone carries nothing
    assert "[bold]wrong[/bold]" in r.stderr  # the table shows text as text, never as markup
    assert "6 of 6 sentences (2 check-worthy at the threshold 0.5; transcript)" in r.stderr


def test_top_and_min_score_keep_the_ranks(model, tmp_path):
    doc = tmp_path / "debate.tsv"
    doc.write_text(TRANSCRIPT, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    top = invoke("claims", doc, "--top", 2, "--output", out)
    assert top.exit_code == 0, top.output
    assert top.stdout == "" and [r["id"] for r in rows_of(out.read_text())] == ["s3", "s4"]
    some = rows_of(invoke("claims", doc, "--min-score", 0.3).stdout)
    assert [r["id"] for r in some] == ["s3", "s4"] and all(r["score"] >= 0.3 for r in some)
    both = rows_of(invoke("claims", doc, "--min-score", 0.2, "--top", 3).stdout)
    assert [(r["id"], r["rank"]) for r in both] == [("s3", 1), ("s4", 2), ("s5", 3)]
    none = invoke("claims", doc, "--min-score", 0.99)
    assert none.exit_code == 0 and none.stdout == "" and "0 of 6 sentences" in none.stderr
    bad = invoke("claims", doc, "--top", 0)
    assert bad.exit_code == 2 and "--top" in bad.output


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("page.html", "<html><body><p>Exports grew 12 % in 2016.</p><script>alert('Injected 99 %.')</script>"
         "<p>Caf&eacute; owners &amp; bakers were kind.</p></body></html>", None),
        ("notes.md", "# Trade\n\nExports **grew 12 %** in 2016.\n\n<script>alert('Injected 99 %.')</script>\n", None),
        ("notes.log", "Exports grew 12 % in 2016.\r\nOwners were kind.\r\n", "text"),
    ],
)  # fmt: skip
def test_other_formats_by_suffix_or_named(model, tmp_path, name, content, fmt):
    doc = tmp_path / name
    doc.write_text(content, encoding="utf-8", newline="")
    r = invoke("claims", doc, *(["--format", fmt] if fmt else []))
    assert r.exit_code == 0, r.output
    rows = rows_of(r.stdout)
    assert rows[0]["text"] == "Exports grew 12 % in 2016."
    assert not any("Injected" in row["text"] for row in rows)
    if name.endswith(".html"):
        assert rows[-1]["text"] == "Café owners & bakers were kind."
    else:
        assert content[rows[0]["start"] : rows[0]["end"]] in {
            "Exports grew 12 % in 2016.",
            "Exports **grew 12 %** in 2016.",
        }


def test_bad_documents_are_refused_before_the_model_loads(no_model, tmp_path):
    binary = tmp_path / "scan.txt"
    binary.write_bytes(b"%PDF-1.4\n\x00\x01\x02")
    r = invoke("claims", binary)
    assert r.exit_code == 2 and "looks binary (a NUL byte at offset 9)" in r.stderr
    unknown = tmp_path / "paper.pdf"
    unknown.write_text("text")
    r = invoke("claims", unknown)
    assert r.exit_code == 2 and "name one of text, markdown, html, transcript" in " ".join(r.stderr.split())
    r = invoke("claims", unknown, "--format", "docx")
    assert r.exit_code == 2 and "no document format 'docx'" in r.stderr
    huge = tmp_path / "huge.txt"
    huge.write_text("It rose. " * 60_000)  # 540,000 characters
    r = invoke("claims", huge)
    assert r.exit_code == 2 and "more than the 500,000 a document may have" in " ".join(r.stderr.split())
    r = invoke("claims", tmp_path / "missing.txt")
    assert r.exit_code == 2 and "no such file" in r.stderr


# -- sentences split already -----------------------------------------------------------------------------


def test_sentences_round_trip_in_input_order_never_split_again(model, tmp_path):
    given = [
        {"id": "b", "text": "I think we should all be kind."},
        {"id": 7, "text": "Exports grew 12 % in 2016. Imports fell. And more."},  # one sentence to us
        {"id": "a", "text": "Good evening.", "speaker": "HOLT"},
    ]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join(json.dumps(g) for g in given[:2]) + "\n\n" + json.dumps(given[2]) + "\n")
    r = invoke("claims", "--sentences", src, "--output", out)
    assert r.exit_code == 0, r.output
    rows = rows_of(out.read_text())
    assert [list(row) for row in rows] == [["id", "score", "checkworthy"]] * 3
    assert [row["id"] for row in rows] == ["b", 7, "a"]
    expected = model.score([g["text"] for g in given])
    assert [row["score"] for row in rows] == [s.probability for s in expected]
    assert [row["checkworthy"] for row in rows] == [s.probability >= model.threshold for s in expected]
    assert rows[1]["checkworthy"] and not rows[0]["checkworthy"]
    assert "wrote 3 sentences" in r.stderr
    stdout = invoke("claims", "--sentences", src)
    assert stdout.exit_code == 0 and rows_of(stdout.stdout) == rows


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "text": "Fine."}', '{"id": "b", "text": "Fine."', ""], "in.jsonl:2: malformed JSON"),
        (['{"id": "a", "text": "Fine."}', "", '{"text": "No id."}'], 'in.jsonl:3: no "id"'),
        (['{"id": "a"}'], 'in.jsonl:1: "text" must be a string, got nothing'),
        (['{"id": "a", "text": "  "}'], 'in.jsonl:1: "text" is empty'),
        (['{"id": 1.5, "text": "x"}'], 'in.jsonl:1: "id" must be a non-empty string or an integer'),
        (
            ['{"id": "a", "text": "x"}', '{"id": "a", "text": "y"}'],
            "in.jsonl:2: id 'a' is given twice (first on line 1)",
        ),
        (['["a", "x"]'], "in.jsonl:1: expected a JSON object"),
        ([""], "holds no sentence"),
    ],
)
def test_a_bad_sentences_line_is_named_before_the_model_loads(no_model, tmp_path, lines, message):
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    r = invoke("claims", "--sentences", src, "--output", tmp_path / "out.jsonl")
    assert r.exit_code == 2 and message in " ".join(r.stderr.split()), r.output
    assert not (tmp_path / "out.jsonl").exists()


def test_the_output_path_is_checked_before_any_work(no_model, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("not json\n")  # never read: the output is refused first
    r = invoke("claims", "--sentences", src, "--output", tmp_path)
    assert r.exit_code == 2 and "is a folder: give a file name" in r.stderr
    r = invoke("claims", "--sentences", src, "--output", tmp_path / "no" / "out.jsonl")
    assert r.exit_code == 2 and "does not exist" in r.stderr
    r = invoke("claims", "--sentences", tmp_path / "missing.jsonl", "--output", tmp_path / "out.jsonl")
    assert r.exit_code == 2 and "--sentences" in r.stderr and "no such file" in r.stderr


def test_one_input_at_a_time_and_no_document_options_with_sentences(no_model, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "text": "x"}\n')
    assert "exactly one of a DOCUMENT argument or --sentences" in " ".join(invoke("claims").output.split())
    both = invoke("claims", src, "--sentences", src)
    assert both.exit_code == 2 and "exactly one of" in " ".join(both.output.split())
    top = invoke("claims", "--sentences", src, "--top", 3, "--min-score", 0)
    assert top.exit_code == 2 and "--min-score, --top apply to a DOCUMENT" in " ".join(top.output.split())


@pytest.mark.encoder
def test_a_model_file_is_named_with_model(tmp_path):
    model_file = hand_weighted().save(tmp_path / "checkworthy.npz")
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text('{"id": "a", "text": "Exports grew 12 % in 2016."}\n')
    r = invoke("claims", "--sentences", src, "--output", out, "--model", model_file)
    assert r.exit_code == 0, r.output
    assert rows_of(out.read_text()) == [
        {"id": "a", "score": pytest.approx(1 / (1 + np.exp(-2.0))), "checkworthy": True}
    ]
    r = invoke("claims", "--sentences", src, "--output", out, "--model", tmp_path / "none.npz")
    assert r.exit_code == 2 and "--model" in r.stderr and "no such file" in r.stderr


@pytest.mark.encoder
def test_the_shipped_model_ranks_a_statistic_above_an_opinion(tmp_path):
    doc = tmp_path / "speech.txt"
    doc.write_text(
        "Thank you all for coming tonight, it is wonderful to be here.\n"
        "Unemployment fell from 10 percent in 2009 to 4.1 percent in 2017.\n"
        "I believe we are a great people.\n",
        encoding="utf-8",
    )
    r = invoke("claims", doc)
    assert r.exit_code == 0, r.output
    rows = rows_of(r.stdout)
    assert rows[0]["text"].startswith("Unemployment fell") and rows[0]["checkworthy"]
    assert all(not row["checkworthy"] for row in rows[1:])
