"""Regenerate the generated parts of README.md and docs/*.md from benchmarks/results and the registries.

* Result blocks: a section ``<!-- results:NAME -->`` ... ``<!-- /results:NAME -->`` in README.md or any
  docs/*.md is replaced by the content of ``benchmarks/results/NAME.md`` (the result tables live in
  docs/results.md; run after the benchmark scripts, ``make bench``).
* The README's headline table (``<!-- generated:headline -->``): each figure is read from a table in
  ``benchmarks/results`` (:data:`HEADLINES` says which row and column), so it cannot drift from them.
* Prose figures: ``<!-- value:NAME|COLUMN|KEY=VALUE -->2.72x<!-- /value -->`` in README.md or docs/*.md is
  refilled with that cell of ``benchmarks/results/NAME.md`` (:class:`ValueRef`), so a sentence quoting a
  table cannot drift from it either. Every figure these three parts show has a reproduction spec in
  ``benchmarks/specs.toml`` (``benchmarks/reproduce.py``; tests/test_specs.py checks it).
* Run records: each result block and each headline row links the ``manifest.json`` that its benchmark
  wrote beside its run files (``benchmarks/results/NAME/``), when that run has one; a result whose
  benchmark has not run since manifests were introduced gets no link until its next run.
* The README's components table (``<!-- generated:components -->``): every
  :class:`factscout.registry.Registry` found by importing the modules of the ``factscout`` package, with
  its registered names; a registry added anywhere in the package appears without editing this script.

``--check`` writes nothing and exits 1 if a file would change (tests/test_readme.py runs it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# result files summarised elsewhere rather than copied
NOT_COPIED: set[str] = set()


# -- markdown tables in the result files ---------------------------------------------------------------


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every pipe table of a markdown text as (header, rows)."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header, rows, i = _cells(lines[i]), [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            found.append((header, rows))
        else:
            i += 1
    return found


def locate(text: str, column: str, where: Mapping[str, str]) -> tuple[int, int] | None:
    """(table, row) of the first row of a markdown text's tables that has a ``column`` column and whose
    cells match ``where`` (column -> value; a column name ending in ``^`` matches a cell that starts with
    the value, for values a page cannot spell, such as ``--fast`` inside an HTML comment), or None."""
    for t, (header, rows) in enumerate(tables(text)):
        names = {k: k.removesuffix("^") for k in where}
        if column not in header or any(n not in header for n in names.values()):
            continue
        for r, row in enumerate(rows):
            cells = {k: row[header.index(n)] for k, n in names.items()} if len(row) == len(header) else None
            if cells is not None and all(
                cells[k].startswith(v) if k.endswith("^") else cells[k] == v for k, v in where.items()
            ):
                return t, r
    return None


def table_cell(text: str, column: str, where: Mapping[str, str]) -> str | None:
    """The ``column`` cell of the row :func:`locate` finds, or None."""
    found = locate(text, column, where)
    if found is None:
        return None
    header, rows = tables(text)[found[0]]
    return rows[found[1]][header.index(column)]


def find_cell(result: str, column: str, where: Mapping[str, str], *, results: Path = RESULTS) -> str | None:
    """:func:`table_cell` of ``<results>/<result>.md`` (None when the file or the row is missing)."""
    path = results / f"{result}.md"
    return table_cell(path.read_text(), column, where) if path.is_file() else None


def cell(result: str, column: str, **where: str) -> str:
    """The ``column`` cell of the first row of ``benchmarks/results/<result>.md`` whose cells match
    ``where`` (column -> value; underscores in keyword names stand for spaces)."""
    conditions = {k.replace("_", " "): v for k, v in where.items()}
    found = find_cell(result, column, conditions)
    if found is None:
        raise SystemExit(f"{result}.md: no table row with {conditions} and a {column!r} column")
    return found


# -- prose values filled from the result tables -----------------------------------------------------------

# ``<!-- value:NAME|COLUMN|KEY=VALUE|... -->figure<!-- /value -->``: the figure is the COLUMN cell of the
# first row of benchmarks/results/NAME.md whose KEY column holds VALUE (each KEY=VALUE), as cell() reads
# it; a trailing ``|number`` keeps only the cell's leading number ("0.5589" of "0.5589 [0.486, 0.628]").
VALUE = re.compile(r"<!-- value:(?P<ref>[^\n]*?) -->(?P<text>(?:(?!<!--)[^\n])*)<!-- /value -->")
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class ValueRef:
    """A prose figure's source: a cell of ``benchmarks/results/<result>.md``."""

    result: str
    column: str
    where: dict[str, str]
    number: bool = False

    @classmethod
    def parse(cls, ref: str) -> ValueRef:
        parts = ref.split("|")
        if len(parts) < 3:
            raise ValueError(f"value marker {ref!r}: want NAME|COLUMN|KEY=VALUE[|KEY=VALUE...][|number]")
        where, number = {}, False
        for part in parts[2:]:
            if part == "number":
                number = True
            elif "=" in part:
                key, _, value = part.partition("=")
                where[key] = value
            else:
                raise ValueError(f"value marker {ref!r}: {part!r} is neither KEY=VALUE nor 'number'")
        return cls(parts[0], parts[1], where, number)

    def text(self) -> str:
        found = find_cell(self.result, self.column, self.where)
        if found is None:
            raise SystemExit(f"{self.result}.md: no table row with {self.where} and a {self.column!r} column")
        if self.number:
            match = _NUMBER.search(found)
            if match is None:
                raise SystemExit(f"{self.result}.md: the {self.column!r} cell of {self.where} has no number: {found!r}")
            return match.group()
        return found


def value_refs(text: str) -> list[ValueRef]:
    """Every prose value marker of a markdown text."""
    return [ValueRef.parse(m["ref"]) for m in VALUE.finditer(text)]


def fill_values(text: str) -> str:
    """The text with every prose value marker's figure read again from its result table."""
    return VALUE.sub(lambda m: f"<!-- value:{m['ref']} -->{ValueRef.parse(m['ref']).text()}<!-- /value -->", text)


# -- the README's headline table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    what: str
    data: str
    result: str  # format string over the cells
    against: str
    link: str  # docs/results.md anchor
    cells: dict[str, Callable[[], str]] = field(default_factory=dict)

    def row(self) -> str:
        values = {name: get() for name, get in self.cells.items()}
        link = f"[{self.link.split('#')[0].removesuffix('.md')}](docs/{self.link})"
        results = sorted({c.result for c in self.cells.values() if isinstance(c, Cell)})
        records = [f"[run record]({manifest_link(r, README)})" for r in results if manifest_link(r, README)]
        details = " · ".join([link, *records])
        return f"| {self.what} | {self.data} | {self.result.format(**values)} | {self.against.format(**values)} | {details} |"


@dataclass(frozen=True)
class Cell:
    """One figure of a headline row: a cell of ``benchmarks/results/<result>.md`` (see :func:`cell`)."""

    result: str
    column: str
    where: dict[str, str]

    def __call__(self) -> str:
        return cell(self.result, self.column, **self.where)

    @property
    def conditions(self) -> dict[str, str]:
        """``where`` with the column names spelled as in the table (underscores are spaces)."""
        return {k.replace("_", " "): v for k, v in self.where.items()}


def _c(result: str, column: str, **where: str) -> Callable[[], str]:
    return Cell(result, column, where)


def manifest_link(result: str, page: Path) -> str | None:
    """The relative link from ``page`` to ``benchmarks/results/<result>/manifest.json``, if it exists."""
    manifest = RESULTS / result / "manifest.json"
    if not manifest.is_file():
        return None
    return Path(os.path.relpath(manifest, page.parent)).as_posix()


def with_run_record(result: str, text: str, page: Path) -> str:
    """A result block's text plus the line that links its run record, when there is one."""
    link = manifest_link(result, page)
    if link is None:
        return text
    folder = Path(link).parent.as_posix()
    return (
        f"{text.rstrip()}\n\nRun record: [manifest]({link}) (package versions, git commit, data sha256s, machine, "
        f"command; the run files it lists are written to `{folder}/` by a run, not committed)."
    )


_RANKER = "candidate ranker (learned; observes the endpoint's results)"
_DEFAULT_PATH = "factscout check, the default path (`Checker.from_index`, sentence vectors stored)"
_SHIPPED = "classifier, top-3 evidence > 0.5 (shipped)"
HEADLINES = [
    Headline(
        "Retrieval: hybrid BM25 + MiniLM",
        "SciFact train, 809 claims",
        "nDCG@10 {hybrid}",
        "BM25 {bm25}",
        "results.md#retrieval",
        {
            "hybrid": _c("retrieval_quality", "nDCG@10", retriever="hybrid linear, 2-fold CV (alpha=0.6/0.6)"),
            "bm25": _c("retrieval_quality", "nDCG@10", retriever="BM25 (k1=0.9, b=0.4; default)"),
        },
    ),
    Headline(
        "Query planning: `decompose` sub-queries, CombSUM-norm, published-before filter",
        "AVeriTeC train, 3,067 claims",
        "R@100 {plan}",
        "the claim alone {claim}",
        "results.md#query-planning-and-fusion-quantemp",
        {
            "plan": _c("query_planning_bm25", "R@100", planner="decompose", date_filter="yes", fusion="combsum-norm"),
            "claim": _c("query_planning_bm25", "R@100", planner="claim", date_filter="yes", fusion="combsum-norm"),
        },
    ),
    Headline(
        "Verdict: `check` end to end, its default path (`Checker.from_index(index, CheckSettings())`)",
        "SciFact, 202 held-out claims",
        "macro-F1 {check}",
        "claim only {claim}, majority {majority}",
        "results.md#evidence-selection-stance-and-verdict-factscouts-own-models-trained-offline",
        {
            "check": _c("verdict", "macro-F1", system=_DEFAULT_PATH, passages_read="5"),
            "claim": _c("verdict", "macro-F1", system="claim only (logistic regression on the claim embedding)"),
            "majority": _c("verdict", "macro-F1", system="majority class (supported)"),
        },
    ),
    Headline(
        "Stance across four domains: the default cross-encoder (`factscout stance`)",
        "dev pairs of SciFact, HealthVer, Check-COVID, Citation-Integrity",
        "mean macro-F1 {cross} (HealthVer {healthver}, Check-COVID {checkcovid})",
        "the model it replaced {old}",
        "results.md#judgment-beyond-scifact-issue-38-five-more-datasets-four-domains-choose-a-consistency-suite",
        {
            "cross": _c("stance_domains", "mean (chooses)", stance_model="cross"),
            "healthver": _c("stance_domains", "healthver dev", stance_model="cross"),
            "checkcovid": _c("stance_domains", "checkcovid dev", stance_model="cross"),
            "old": _c("stance_domains", "mean (chooses)", stance_model="cross:.factscout/cross_issue16.npz"),
        },
    ),
    Headline(
        "Stance consistency: a claim with itself, an unrelated claim, a swapped subject",
        "held-out claims of four domains",
        "supports {self}, not enough info {unrelated}, decided {subject}",
        "the model it replaced: {old_self}, {old_unrelated}, {old_subject}",
        "results.md#judgment-beyond-scifact-issue-38-five-more-datasets-four-domains-choose-a-consistency-suite",
        {
            "self": _c("consistency", "self → supports", stance_model="`cross`"),
            "unrelated": _c("consistency", "unrelated → not enough info", stance_model="`cross`"),
            "subject": _c("consistency", "subject: supports/refutes", stance_model="`cross`"),
            "old_self": _c("consistency", "self → supports", stance_model="`cross:.factscout/cross_issue16.npz`"),
            "old_unrelated": _c(
                "consistency", "unrelated → not enough info", stance_model="`cross:.factscout/cross_issue16.npz`"
            ),
            "old_subject": _c(
                "consistency", "subject: supports/refutes", stance_model="`cross:.factscout/cross_issue16.npz`"
            ),
        },
    ),
    Headline(
        "Stance stage 0: NLI pre-training on 67,275 general NLI pairs, one epoch on 2 CPU cores",
        "NLI check set: 2,000 MultiNLI dev-matched + 2,000 counterfactual-SNLI test pairs",
        "MNLI accuracy {s0_mnli}, counterfactual SNLI {s0_cf}",
        "the default stance model (no NLI stage) {today_mnli}, {today_cf}",
        "results.md#nli-stage-0-and-the-stance-ablation-issue-46",
        {
            "s0_mnli": _c("stance_ablation", "NLI check: MNLI acc", model="stage0"),
            "s0_cf": _c("stance_ablation", "NLI check: SNLI-CF acc", model="stage0"),
            "today_mnli": _c("stance_ablation", "NLI check: MNLI acc", model="today"),
            "today_cf": _c("stance_ablation", "NLI check: SNLI-CF acc", model="today"),
        },
    ),
    Headline(
        "Verdict: `check` end to end on news claims (Check-COVID, closed pool of 347 abstracts)",
        "Check-COVID dev, 207 claims",
        "macro-F1 {check}",
        "majority {majority}",
        "results.md#judgment-beyond-scifact-issue-38-five-more-datasets-four-domains-choose-a-consistency-suite",
        {
            "check": _c("verdict_domains", "macro-F1", system="factscout check, stance `cross`", passages_read="5"),
            "majority": _c("verdict_domains", "macro-F1", system="majority class of train (supported)"),
        },
    ),
    Headline(
        "Verdict classifier (QuanTemp++, 4 labels)",
        "AVeriTeC train, 5-fold CV",
        "macro-F1 {shipped}",
        "claim only {claim}, majority {majority}",
        "results.md#evidence-selection-stance-and-verdict-factscouts-own-models-trained-offline",
        {
            "shipped": _c("verdict_classifier", "macro-F1", system=_SHIPPED),
            "claim": _c("verdict_classifier", "macro-F1", system="claim only (same head, claim embedding)"),
            "majority": _c("verdict_classifier", "macro-F1", system="majority class (each fold's training majority)"),
        },
    ),
    Headline(
        "Query rewriting (Kazemi et al.) on tuned BM25: one-action classifier",
        "SciFact, 202 held-out claims",
        "mAP@50 {policy}",
        "the original claim {original} (on tuned BM25 no policy trained on BFS trajectories beats the claim; "
        "on bm25-and they do: rows below)",
        "results.md#query-rewriting-kazemi-et-al",
        {
            "policy": _c("rewriting", "mAP@50", policy="one-action classifier"),
            "original": _c("rewriting", "mAP@50", policy="original claim"),
        },
    ),
    Headline(
        "Query rewriting on a conjunctive search box (bm25-and): candidate ranker (`--policy scifact-bm25-and`)",
        "SciFact, 202 held-out claims (a whole claim finds nothing for 97%)",
        "mAP@50 {policy}",
        "the claim {original}; top-1 IDF keyword {keyword}; token-pointing policy {pointer}; oracle {oracle}",
        "results.md#query-rewriting-kazemi-et-al",
        {
            "policy": _c("rewriting_bm25_and", "mAP@50", policy=_RANKER),
            "original": _c("rewriting_bm25_and", "mAP@50", policy="original claim"),
            "keyword": _c("rewriting_bm25_and", "mAP@50", policy="top-1 IDF terms (k tuned on train)"),
            "pointer": _c("rewriting_bm25_and", "mAP@50", policy="token-pointing policy, learned stop"),
            "oracle": _c(
                "rewriting_bm25_and", "mAP@50", policy="oracle: best of the ranker's candidates (reads qrels)"
            ),
        },
    ),
    Headline(
        "Query rewriting on a conjunctive search box (bm25-and): candidate ranker (`--policy averitec-bm25-and`)",
        "AVeriTeC, 400 held-out claims",
        "mAP@50 {policy}",
        "the claim {original}; top-1 IDF keyword {keyword}; token-pointing policy {pointer}; oracle {oracle}",
        "results.md#query-rewriting-kazemi-et-al",
        {
            "policy": _c("rewriting_averitec_bm25_and", "mAP@50", policy=_RANKER),
            "original": _c("rewriting_averitec_bm25_and", "mAP@50", policy="original claim"),
            "keyword": _c("rewriting_averitec_bm25_and", "mAP@50", policy="top-1 IDF terms (k tuned on train)"),
            "pointer": _c("rewriting_averitec_bm25_and", "mAP@50", policy="token-pointing policy, learned stop"),
            "oracle": _c(
                "rewriting_averitec_bm25_and", "mAP@50", policy="oracle: best of the ranker's candidates (reads qrels)"
            ),
        },
    ),
    Headline(
        "Query rewriting on Elasticsearch's default BM25 (bm25-plain, the paper's endpoint): candidate ranker "
        "reading the returned passages (`--policy averitec-bm25-plain`)",
        "AVeriTeC, 400 held-out claims",
        "mAP@50 {policy} ({ratio} the claim, p {p})",
        "the claim {original}; random edit {random}; {keywords}; oracle over its candidates {oracle}",
        "results.md#query-rewriting-kazemi-et-al",
        {
            "policy": _c("rewriting_semantic", "ranker", dataset="averitec", endpoint="bm25-plain"),
            "random": _c(
                "rewriting_grid_baselines_bm25",
                "random edit (1 edit, seed 0)",
                dataset="averitec",
                endpoint="bm25-plain",
            ),
            "keywords": _c(
                "rewriting_grid_baselines_bm25", "keyword baselines", dataset="averitec", endpoint="bm25-plain"
            ),
            "ratio": _c("rewriting_semantic", "ranker vs claim", dataset="averitec", endpoint="bm25-plain"),
            "p": _c("rewriting_semantic", "p vs claim", dataset="averitec", endpoint="bm25-plain"),
            "original": _c("rewriting_semantic", "claim", dataset="averitec", endpoint="bm25-plain"),
            "oracle": _c("rewriting_semantic", "oracle over its candidates", dataset="averitec", endpoint="bm25-plain"),
        },
    ),
    Headline(
        "Time-aware evidence ranking (Allein et al.): Δt features + learned mixture of the 4 rankings",
        "MultiFC dev, BiLSTM, mean of 5 seeds; schedule and every choice on a validation split of train",
        "micro-F1 {aware} ({gain}, paired p {p})",
        "base {base}; random weights {random}",
        "results.md#time-aware-evidence-ranking-allein-et-al-2021-multifc",
        {
            "aware": _c("temporal_light", "mean micro-F1", method="time-aware"),
            "gain": _c("temporal_light", "vs base", method="time-aware"),
            "p": _c("temporal_light", "paired p", method="time-aware"),
            "base": _c("temporal_light", "mean micro-F1", method="base"),
            "random": _c("temporal_light", "mean micro-F1", method="random"),
        },
    ),
    Headline(
        "Web collection: leaked evidence removed before fetching",
        "MultiFC dev, 200 claims, real Google results",
        "fact-check sites {factcheck}% and later pages {later}% of the results",
        "kept as relevant: {kept}%",
        "results.md#web-collection",
        {
            "kept": _c("web_collection", "% of results", what_happened_to_each_result="kept: relevant (qrels)"),
            "factcheck": _c("web_collection", "% of results", what_happened_to_each_result="fact-check site (leakage)"),
            "later": _c(
                "web_collection", "% of results", what_happened_to_each_result="published on or after the claim date"
            ),
        },
    ),
    Headline(
        "`check` CPU per claim: sentence vectors stored at index time, int8 stance and query encoder",
        "SciFact, hybrid index, 300 claims, 2 cores",
        "{fast} s ({ratio}x); fp32 path {fp32} s",
        "sentences embedded per claim, fp32 {slow} s",
        "results.md#check-speed-sentence-work-at-index-time",
        {
            "fast": _c("check_speed", "CPU s / claim", path="stored sentence vectors, int8 default"),
            "ratio": _c("check_speed", "ratio to before", path="stored sentence vectors, int8 default"),
            "fp32": _c("check_speed", "CPU s / claim", path="stored sentence vectors, fp32 (`--no-fast`)"),
            "slow": _c("check_speed", "CPU s / claim", path="sentences embedded per claim, fp32 (before)"),
        },
    ),
    Headline(
        "The first hour: a cold `check`, `check --server`, an index with sentence vectors",
        "SciFact (5,183 abstracts), demo hybrid index, 2 cores",
        "cold check {cold} s, through a server {server} s; input errors within {errors} s; bm25 index {bm25} s;"
        " hybrid + 44k sentence vectors {hybrid} s",
        "before: cold check 14.4 s, input errors after 30-56 s, bm25 index over 20 min",
        "results.md#the-first-hour-input-checked-first-a-cold-check-in-seconds-index-work-in-proportion-to-need",
        {
            "cold": _c("first_hour", "wall s", step="cold `check CLAIM --index`"),
            "server": _c("first_hour", "wall s", step="`check CLAIM --server URL`"),
            "errors": _c("first_hour", "wall s", step="worst input error (of 8)"),
            "bm25": _c("first_hour", "wall s", step="`index --retriever bm25`"),
            "hybrid": _c("first_hour", "wall s", step="`index --retriever hybrid --sentences` (cold embedding cache)"),
        },
    ),
    Headline(
        "A fresh clone's `make demo` (set-up, index, checks; sentence vectors then added in the background)",
        "SciFact (5,183 abstracts), clean clone, new venv, empty caches, 2 cores",
        "{fresh} s (set-up {setup} s, passage index {index} s); again: {again} s",
        "target <= 300 s and <= 60 s; before: 376 s here, 2,032 s on the reporter's machine",
        "results.md#a-fresh-clones-first-run-issue-47",
        {
            "fresh": _c("first_hour_fresh", "wall s", step="`make demo`, fresh clone"),
            "setup": _c("first_hour_fresh", "wall s", step="set-up (venv, torch CPU, the demo's extras)"),
            "index": _c("first_hour_fresh", "wall s", step="index (passages: BM25 + int8 MiniLM vectors)"),
            "again": _c("first_hour_fresh", "wall s", step="`make demo` again"),
        },
    ),
    Headline(
        "Interactive checks beside a batch job: `/v1/check` while 200 `/v1/checks` claims run",
        "SciFact, hybrid index, 2 clients, 2 cores",
        "p99 {busy} s (p50 {busy50} s)",
        "idle server p99 {idle} s; target <= 2x idle",
        "results.md#interactive-checks-first-issue-47",
        {
            "busy": _c("priority", "p99 s", **{"/v1/check": "beside a 200-claim batch job"}),
            "busy50": _c("priority", "p50 s", **{"/v1/check": "beside a 200-claim batch job"}),
            "idle": _c("priority", "p99 s", **{"/v1/check": "idle server"}),
        },
    ),
    Headline(
        "Checked before: claim matching over published fact-checks (`factscout factchecks`, `check --factchecks`)",
        "CheckThat! 2022 2A dev-test, 202 tweets",
        "MAP@5 {cm}, MAP@1 {cm1}",
        "BM25 {bm25}; lab baseline on test 0.8179",
        "results.md#checked-before-claim-matching-checkthat-2022-2a",
        {
            "cm": _c("claim_matching", "MAP@5", method="re-ranked (claim-match model)"),
            "cm1": _c("claim_matching", "MAP@1", method="re-ranked (claim-match model)"),
            "bm25": _c("claim_matching", "MAP@5", method="BM25, raw tweet (reference: factscout index + search)"),
        },
    ),
    Headline(
        "Check-worthiness: `factscout claims` (a MiniLM fine-tune trained on CPU)",
        "CheckThat! 2022 1A test (149 tweets); 2021 1B test (5,300 debate sentences)",
        "F1 {f1a}; MAP {map}, F1 {f1b}",
        "all check-worthy {all1a}; linear model on MiniLM embeddings {lin1a}, MAP {linmap}",
        "results.md#from-a-document-to-checked-claims-issue-49",
        {
            "f1a": _c("checkworthy", "F1", model="minilm (default)"),
            "map": _c("checkworthy", "MAP", model="minilm (default)"),
            "f1b": Cell("checkworthy", "F1", {"model": "minilm (default)", "MAP^": ""}),  # the table with MAP: 1B
            "all1a": _c("checkworthy", "F1", model="all check-worthy"),
            "lin1a": _c("checkworthy", "F1", model="linear"),
            "linmap": _c("checkworthy", "MAP", model="linear"),
        },
    ),
    Headline(
        "From a document: `factscout claims`, `check --document`, MCP `check_claim` (cold CLI; warm server)",
        "a 5,011-word debate transcript; a 1,119-word article; SciFact, 40 claims",
        "{claims} s; {doc} s; +{mcp} ms",
        "targets 10 s, 60 s, 50 ms; the article's 5 claims alone {same} s",
        "results.md#from-a-document-to-checked-claims-issue-49",
        {
            "claims": _c("claims_speed", "median s", command="factscout claims TRANSCRIPT.tsv -o OUT.jsonl"),
            "doc": _c("document_check", "median s", command="factscout check --document ARTICLE.txt -o REPORT.json"),
            "same": _c(
                "document_check",
                "median s",
                command="factscout check --claims CLAIMS.jsonl -o OUT.jsonl (5 claims, the same texts)",
            ),
            "mcp": _c(
                "mcp_overhead", "median ms", overhead_per_claim="round trip - the server's own check of that call"
            ),
        },
    ),
    Headline(
        "Int8 inference (ONNX Runtime): the stance cross-encoder and MiniLM queries, `check`'s default",
        "SciFact: 202 held-out claims (stance), 809 train claims (hybrid search)",
        "stance macro-F1 {s8} at {ms8} ms/pair; hybrid nDCG@10 {q8}, queries {qspeed} faster",
        "fp32: {s32} at {ms32} ms/pair; {q32}",
        "results.md#quantised-inference-int8-on-onnx-runtime",
        {
            "s8": _c("fast_stance", "macro-F1 [95% CI]", model="int8"),
            "ms8": _c("fast_stance", "CPU ms / pair", model="int8"),
            "s32": _c("fast_stance", "macro-F1 [95% CI]", model="fp32"),
            "ms32": _c("fast_stance", "CPU ms / pair", model="fp32"),
            "q8": _c("fast_queries", "nDCG@10", search="hybrid", encoder="int8 queries (--fast)"),
            "q32": _c("fast_queries", "nDCG@10", search="hybrid", encoder="fp32"),
            "qspeed": _c("fast_queries", "speed-up", texts="claims"),
        },
    ),
    Headline(
        "Web service, 50 concurrent clients: `/v1/check` and `/v1/search`",
        "SciFact, hybrid index, 2 cores",
        "check {crps} claims/s (p50 {cp50} s); search p99 {p99} s at {rps} requests/s",
        "check fp32 path {c32} claims/s; search target p99 <= 2 s",
        "results.md#service-load",
        {
            "crps": _c("load", "requests/s", endpoint="/v1/check", index="hybrid"),
            "cp50": _c("load", "p50 s", endpoint="/v1/check", index="hybrid"),
            "c32": _c("load", "requests/s", endpoint="/v1/check", index="hybrid, `--no-fast` (fp32 reference)"),
            "p99": _c("load", "p99 s", endpoint="/v1/search", index="hybrid"),
            "rps": _c("load", "requests/s", endpoint="/v1/search", index="hybrid"),
        },
    ),
    Headline(
        "Scale-out: BFS trajectories on Ray, 2 workers",
        "SciFact train, 100 claims",
        "speed-up {speedup}x, same output",
        "1 worker",
        "results.md#scale-out-on-ray",
        {"speedup": _c("scale", "speed-up", BFS_run="2 Ray workers")},
    ),
    Headline(
        "Cost of `check` as the corpus grows (2 cores)",
        "SciFact + MultiFC snippets + perturbed copies, 5k to 1M passages (vectors beyond the encoded ones synthetic)",
        "CPU/claim at 1M: BM25 {bm25} s, hybrid (HNSW) {hybrid} s",
        "at 5k: BM25 {bm25_small} s, hybrid {hybrid_small} s",
        "results.md#cost-of-check-as-the-corpus-grows-bm25-and-hybrid-indexes-2-cores",
        {
            "bm25": _c("scale_check", "check CPU s / claim", passages="1,000,000", index="bm25"),
            "hybrid": _c("scale_check", "check CPU s / claim", passages="1,000,000", index="hybrid (HNSW)"),
            "bm25_small": _c("scale_check", "check CPU s / claim", passages="5,000", index="bm25"),
            "hybrid_small": _c("scale_check", "check CPU s / claim", passages="5,000", index="hybrid (flat)"),
        },
    ),
    Headline(
        "Server backend: BM25 in PostgreSQL",
        "SciFact train, 809 queries",
        "nDCG@10 {server}, {server_qps} queries/s",
        "embedded {embedded}, {embedded_qps} queries/s",
        "results.md#server-backend-postgresql--pgvector",
        {
            "server": _c("server_backend", "nDCG@10 server", retrieval="BM25"),
            "server_qps": _c("server_backend", "server q/s", retrieval="BM25"),
            "embedded": _c("server_backend", "nDCG@10 emb.", retrieval="BM25"),
            "embedded_qps": _c("server_backend", "embedded q/s", retrieval="BM25"),
        },
    ),
]


def headline_table() -> str:
    rows = [
        "| what | data | factscout | against | details |",
        "|---|---|---|---|---|",
        *(h.row() for h in HEADLINES),
    ]
    return "\n".join(rows)


# -- the README's components table ----------------------------------------------------------------------

# packages in pipeline order (docs/design.md); others follow alphabetically
ORDER = ["plan", "rewrite", "retrieve", "fuse", "rerank", "temporal", "select", "verify", "datasets", "collect"]


def registries() -> list[tuple[str, str, str, list[str]]]:
    """(role, defining module, variable, names) of every Registry in the factscout package. Importing
    every module also runs the registrations made outside a registry's own module (``scale`` adds
    its Ray implementations that way)."""
    import factscout
    from factscout.registry import Registry

    if Path(factscout.__file__ or "").resolve().parents[1] != ROOT / "src":
        raise SystemExit(
            f"imported factscout from {factscout.__file__}, not from {ROOT / 'src'}: "
            "install this checkout (pip install -e .)"
        )

    failed: list[str] = []
    modules = []
    for info in pkgutil.walk_packages(factscout.__path__, "factscout.", onerror=failed.append):
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError as exc:  # an optional dependency not installed: its names are missing
            failed.append(f"{info.name} ({exc})")
    for name in failed:
        print(f"could not import {name}; the components table may miss its names", file=sys.stderr)
    found: dict[int, tuple[str, str, str, list[str]]] = {}
    for module in modules:
        source = Path(module.__file__ or "").read_text() if module.__file__ else ""
        for attr, value in vars(module).items():
            defined_here = re.search(rf"^{re.escape(attr)}\s*(?::[^=\n]*)?=\s*Registry\(", source, re.M)
            if isinstance(value, Registry) and defined_here:
                found[id(value)] = (value.kind, module.__name__, attr, value.names())

    def key(row: tuple[str, str, str, list[str]]) -> tuple[int, str, str]:
        package = row[1].split(".")[1]
        return (ORDER.index(package) if package in ORDER else len(ORDER), row[1], row[2])

    return sorted(found.values(), key=key)


def components_table() -> str:
    rows = ["| role | registry | names |", "|---|---|---|"]
    for kind, module, attr, names in registries():
        path = module.removeprefix("factscout.").replace(".", "/") + ".py"
        listed = ", ".join(f"`{n}`" for n in names) or "-"
        rows.append(f"| {kind} | `{attr}` (`{path}`) | {listed} |")
    return "\n".join(rows)


# -- writing ----------------------------------------------------------------------------------------------


def _replace(text: str, tag: str, content: str) -> tuple[str, int]:
    pattern = re.compile(rf"<!-- {tag} -->.*?<!-- /{tag} -->", re.S)
    block = f"<!-- {tag} -->\n{content.strip()}\n<!-- /{tag} -->"
    return pattern.subn(lambda _: block, text)


def render() -> dict[Path, str]:
    """The new text of every file with a generated part."""
    files = [README, *sorted(DOCS.glob("*.md"))]
    texts = {path: path.read_text() for path in files}
    placed: set[str] = set()
    for result in sorted(RESULTS.glob("*.md")):
        for path in files:
            content = with_run_record(result.stem, result.read_text(), path)
            texts[path], n = _replace(texts[path], f"results:{result.stem}", content)
            if n:
                placed.add(result.stem)
    for result in sorted(RESULTS.glob("*.md")):
        if result.stem not in placed and result.stem not in NOT_COPIED:
            print(f"no file has a marker for {result.stem}; skipped", file=sys.stderr)
    for tag, make in (("generated:headline", headline_table), ("generated:components", components_table)):
        texts[README], n = _replace(texts[README], tag, make())
        if n == 0:
            raise SystemExit(f"README.md has no <!-- {tag} --> block")
    return {path: fill_values(text) for path, text in texts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file would change")
    args = parser.parse_args(argv)
    changed = []
    for path, text in render().items():
        if path.read_text() != text:
            changed.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(text)
    if args.check and changed:
        print("out of date (run python tools/update_readme.py): " + ", ".join(map(str, changed)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
