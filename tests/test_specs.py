"""Every figure of the README and docs has a reproduction spec (issue 48, item 4): ``benchmarks/specs.toml``
names the command that regenerates its table, the JSON key that holds it, the value the page shows and
a tolerance; ``benchmarks/reproduce.py`` runs them (``make bench``) and :func:`reproduce.check` is the
checker these tests run on this checkout and on pages made wrong on purpose."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import reproduce  # noqa: E402  (benchmarks/ is not a package)

EXTRA_ROW = (
    "| Retrieval: a method no benchmark ran | SciFact | nDCG@10 0.9999 | BM25 0.6945 | [results](docs/results.md) |"
)


@pytest.fixture(scope="module")
def specs() -> dict[str, reproduce.Spec]:
    return reproduce.load_specs()


@pytest.fixture(scope="module")
def pages() -> tuple[str, dict[str, str]]:
    return reproduce.README.read_text(), {p.name: p.read_text() for p in sorted(reproduce.DOCS.glob("*.md"))}


def test_every_figure_of_the_readme_and_docs_has_a_spec_that_agrees_with_its_table(specs, pages):
    readme, docs = pages
    assert reproduce.check(specs, readme, docs) == []


def test_the_checker_reports_a_readme_headline_row_without_a_spec(specs, pages):
    readme, docs = pages
    end = "<!-- /generated:headline -->"
    assert end in readme
    with_row = readme.replace(end, EXTRA_ROW + "\n" + end)
    problems = reproduce.check(specs, with_row, docs)
    assert problems == [
        "README headline row 'Retrieval: a method no benchmark ran': no spec (no HEADLINES entry reads it from a table)"
    ]


def test_the_checker_reports_a_headline_figure_whose_spec_is_gone(specs, pages):
    readme, docs = pages
    without = dict(specs)
    del without["web_collection"]
    problems = reproduce.check(without, readme, docs)
    assert "docs/results.md: results block web_collection has no spec (add one to benchmarks/specs.toml)" in problems
    assert any(p.startswith("README headline row 'Web collection") and "no spec figure" in p for p in problems)


def test_the_checker_reports_a_number_written_into_a_headline_row(specs, pages):
    readme, docs = pages
    unquoted = dict(specs)
    unquoted["claim_matching"] = reproduce.Spec(**{**vars(specs["claim_matching"]), "quoted": {}})
    problems = reproduce.check(unquoted, readme, docs)
    assert any("'0.8179' is written, not measured" in p for p in problems)


def test_the_checker_reports_a_results_block_and_a_prose_value_without_a_spec(specs, pages):
    readme, docs = pages
    page = "<!-- results:nobench -->\ntable\n<!-- /results:nobench -->\n"
    page += "It is <!-- value:nobench|nDCG@10|retriever=x -->0.5<!-- /value --> now.\n"
    problems = reproduce.check(specs, readme, {**docs, "new.md": page})
    assert "docs/new.md: results block nobench has no spec (add one to benchmarks/specs.toml)" in problems
    assert any(p.startswith("docs/new.md: value '0.5' (nobench 'nDCG@10'") for p in problems)


def test_the_checker_reports_a_missing_script_an_absolute_path_and_a_drifted_expectation(specs, pages):
    readme, docs = pages
    spec = specs["retrieval_quality"]
    figure = spec.figures[0]
    drifted = reproduce.Figure(**{**vars(figure), "expected": figure.expected + 0.01})
    wrong = reproduce.Spec(
        **{
            **vars(spec),
            "command": "python benchmarks/retrieval_quality_v2.py --cache /tmp/x",
            "figures": (drifted, *spec.figures[1:]),
        }
    )
    problems = reproduce.check({**specs, "retrieval_quality": wrong}, readme, docs)
    assert "spec retrieval_quality: command runs benchmarks/retrieval_quality_v2.py, which does not exist" in problems
    assert any("absolute path '/tmp/x'" in p for p in problems)
    assert any(
        p.startswith(f"spec retrieval_quality: expected {drifted.expected:g}") and "table shows" in p for p in problems
    )


def test_every_spec_names_its_figures_json_key_or_reads_its_printed_table(specs):
    for spec in specs.values():
        for figure in spec.figures:
            assert figure.key is not None or figure.column, spec.name
        assert spec.minutes > 0


def test_a_run_is_compared_with_the_last_json_line_and_the_printed_tables():
    spec = reproduce.Spec(
        "demo",
        "python benchmarks/demo.py",
        1,
        (
            reproduce.Figure("nDCG@10", {"retriever": "bm25"}, 0.70, key=("bm25", "ndcg"), abs=0.01),
            reproduce.Figure("share", {"retriever": "bm25"}, 98.8, key=("share",), scale=100, abs=0.1),
            reproduce.Figure("ms", {"retriever": "bm25"}, 10.0, rel=0.5),
        ),
    )
    stdout = '| retriever | ms |\n|---|---|\n| bm25 | 14.9 |\n{"x": 1}\nnot json\n{"bm25": {"ndcg": 0.705}, "share": 0.9875}\n'
    rows, ok = reproduce.measure(spec, stdout)
    assert ok and [r[3] for r in rows] == ["0.705", "98.75", "14.9"]
    rows, ok = reproduce.measure(spec, '{"bm25": {"ndcg": 0.72}}\n')
    assert not ok and [r[-1] for r in rows] == ["NO", "NO", "NO"] and rows[1][3] == "missing"


def test_cell_figures_skip_numbers_inside_words():
    assert reproduce.numbers("stop-word removal 0.2884; top-8 IDF 0.2809; KeyBERT-8 0.2734") == [0.2884, 0.2809, 0.2734]
    assert reproduce.numbers("0.5022 [0.451, 0.551]") == [0.5022, 0.451, 0.551]
    assert (
        reproduce.number("2.72x") == 2.72 and reproduce.number("1,000,000") == 1e6 and reproduce.number("98.8%") == 98.8
    )
    assert reproduce.number("[-0.0051, +0.0006]", 1) == 0.0006 and reproduce.number("-") is None


def test_specs_run_after_the_specs_they_read(specs):
    names = [s.name for s in reproduce.ordered(specs.values())]
    for spec in specs.values():
        for before in spec.after:
            assert names.index(before) < names.index(spec.name)


def test_make_bench_and_bench_headline_split_the_specs_at_an_hour(specs):
    short = {s.name for s in reproduce.select(specs, _args(max_minutes=60), None)}
    long = {s.name for s in reproduce.select(specs, _args(longer_than=60), None)}
    assert short | long == set(specs) and not short & long
    assert all(specs[n].minutes <= 60 for n in short) and all(specs[n].minutes > 60 for n in long)


def _args(**kw):
    return argparse.Namespace(**{"names": [], "max_minutes": None, "longer_than": None, **kw})
