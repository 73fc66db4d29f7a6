"""What fuzzing found (issue 19), one test per bug: each was an exception other than a
FactscoutError (a crash with a traceback in the CLI, a 500 in the service)."""

from __future__ import annotations

import gzip

import pytest

from factscout.errors import InputError
from factscout.formats.beir import read_corpus, read_qrels
from factscout.formats.jsonl import read_jsonl
from factscout.formats.trec import read_qrels as read_trec_qrels
from factscout.formats.trec import read_run


@pytest.mark.parametrize("relevance", ["inf", "-inf", "1e400"])
def test_qrels_with_an_infinite_relevance(tmp_path, relevance):
    """Was OverflowError: int(float('inf'))."""
    beir = tmp_path / "qrels.tsv"
    beir.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{relevance}\n")
    with pytest.raises(InputError, match=rf"qrels.tsv:2: relevance '{relevance}' is not a finite number"):
        read_qrels(beir)
    trec = tmp_path / "qrels.txt"
    trec.write_text(f"q1 0 d1 1\nq1 0 d2 {relevance}\n")
    with pytest.raises(InputError, match=r"qrels.txt:2: relevance .* is not a finite number"):
        read_trec_qrels(trec)


def test_a_file_that_is_not_utf8(tmp_path):
    """Was UnicodeDecodeError from every reader."""
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"corpus.jsonl:2: not UTF-8 text"):
        list(read_corpus(path))
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 d\xff 1 2.0 tag\n")
    with pytest.raises(InputError, match="not UTF-8 text"):
        read_run(run)


def test_a_truncated_or_fake_gzip_file(tmp_path):
    """Was EOFError (truncated) and gzip.BadGzipFile (not gzip at all)."""
    truncated = tmp_path / "queries.jsonl.gz"
    truncated.write_bytes(gzip.compress(b'{"_id": "q1", "text": "a claim"}\n' * 50)[:-12])
    with pytest.raises(InputError, match="not a readable gzip file"):
        list(read_jsonl(truncated))
    fake = tmp_path / "qrels.gz"
    fake.write_bytes(b"q1\td1\t1\n")
    with pytest.raises(InputError, match="not a readable gzip file"):
        read_trec_qrels(fake)


def test_a_good_gzip_file_still_reads(tmp_path):
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress('{"_id": "d1", "text": "café"}\n'.encode()))
    assert [p.text for p in read_corpus(path)] == ["café"]


def test_a_query_with_a_lone_surrogate_is_refused_by_the_edit_actions():
    """Was UnicodeEncodeError from inside spaCy."""
    pytest.importorskip("spacy")
    from factscout.rewrite.actions import apply_action, valid_edits

    with pytest.raises(InputError, match="lone surrogate"):
        valid_edits("folate \ud800 homocysteine")
    with pytest.raises(InputError, match="lone surrogate"):
        apply_action("\udfff folate", 0)


def test_json_nested_too_deeply(tmp_path):
    """json.loads raises RecursionError (not JSONDecodeError) on deep nesting."""
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "\n")
    with pytest.raises(InputError, match=r"deep\.jsonl:1: JSON nested too deeply"):
        list(read_jsonl(path))


def test_line_numbers_follow_text_mode(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\r{"b": 2}\r{"c": 3}\nnot json\n')
    with pytest.raises(InputError, match=r"mixed.jsonl:5: malformed JSON"):
        list(read_jsonl(path))
