"""Every command checks what the user gave before it loads anything heavy: each bad input below
is refused with exit status 2 and a message naming the problem, in a process where torch,
transformers, ONNX Runtime, spaCy and faiss were never imported (how fast that is, is measured
by ``benchmarks/first_hour.py``, not here)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

HEAVY = ("torch", "transformers", "onnxruntime", "spacy", "faiss", "sentence_transformers")

DRIVER = textwrap.dedent(
    """
    import json, sys
    from factscout.cli.main import app
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
).replace("HEAVY", repr(HEAVY))


def run_cases(cases: list[list[str]]) -> tuple[list[dict], str]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(cases)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_bad_input_is_refused_before_anything_loads(tmp_path):
    index = tmp_path / "no-index"
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text('{"_id": "1", "text": "a"}\n{"_id": "2", "text": "b"}\n{"_id": 3, text}\n')
    no_text = tmp_path / "no-text.jsonl"
    no_text.write_text('{"_id": "1"}\n{"_id": "2", "claim": "wrong field"}\n')
    bad_date = tmp_path / "bad-date.jsonl"
    bad_date.write_text('{"_id": "q1", "text": "a query", "date": "06/01/2019"}\n')
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"claim": "a claim"}\n')
    out = str(tmp_path / "out.jsonl")
    cases = {
        "bad.jsonl:3": ["check", "-i", str(bad_json), "-o", out, "--index", str(index)],
        "no claim in": ["check", "-i", str(no_text), "-o", out, "--index", str(index)],
        "it is empty": ["check", " \u200b ", "--index", str(index)],
        "(got 2001": ["check", "x" * 2001, "--index", str(index)],
        "--date must be an ISO date": ["check", "a claim", "--date", "06/01/2019", "--index", str(index)],
        "no index at": ["check", "a claim", "--date", "2019-06-01", "--index", str(index)],
        "no such file": ["check", "-i", str(tmp_path / "none.jsonl"), "-o", out, "--index", str(index)],
        "does not exist": ["check", "-i", str(no_text), "-o", str(tmp_path / "nowhere" / "o.jsonl")],
        "--query must be 1 to": ["search", "--index", str(index), "--query", ""],
        "bad-date.jsonl:1: date": ["search", "--index", str(index), "-i", str(bad_date)],
        "can be planned": ["plan", "-i", str(no_text), "-o", out],
        "pairs.jsonl:1": ["stance", "-i", str(pairs), "-o", out],
        "is a folder: give a file name": ["stance", "-i", str(pairs), "-o", str(tmp_path)],
    }
    results, stderr = run_cases(list(cases.values()))
    for args, result in zip(cases.values(), results, strict=True):
        assert result["code"] == 2, (args, result)
        assert not result["heavy"], f"{args[:3]} imported {result['heavy']} before refusing its input"
    for message in cases:
        assert message in stderr, f"no {message!r} in:\n{stderr}"
    assert "Traceback" not in stderr
