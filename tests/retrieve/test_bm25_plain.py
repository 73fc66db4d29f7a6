"""bm25-plain: Elasticsearch-default BM25 (standard analyzer, Lucene BM25, k1=1.2, b=0.75)."""

import math

import pytest
from typer.testing import CliRunner

from factscout.errors import InputError
from factscout.formats.beir import write_corpus
from factscout.records import Passage, Query
from factscout.retrieve import build_retriever, load_index, save_index
from factscout.retrieve.bm25_plain import Bm25PlainRetriever

TOY = [
    Passage("d1", "d1", "", "The cat sat on the mat"),  # 6 tokens
    Passage("d2", "d2", "", "The dog ran"),  # 3 tokens
    Passage("d3", "d3", "", "A cat and a dog"),  # 5 tokens
]


def q(text: str, qid: str = "q") -> Query:
    return Query(qid, qid, text)


def lucene_bm25(tf: int, df: int, dl: int, n_docs: int = 3, avgdl: float = 14 / 3, k1=1.2, b=0.75) -> float:
    """One term's Lucene BM25 score, written out from the formula."""
    idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def scores(ranking) -> dict[str, float]:
    return {h.passage_id: h.score for h in ranking.hits}


def test_scores_equal_a_hand_computation_of_lucene_bm25():
    plain = build_retriever(TOY, "bm25-plain")
    (ranking,) = plain.search([q("the cat")], 10)
    # "the": in d1 twice and d2 once (df 2); "cat": in d1 and d3 (df 2); avgdl = 14 / 3
    expected = {
        "d1": math.log(1.6) * 2 / (2 + 1.2 * (0.25 + 0.75 * 6 / (14 / 3)))
        + math.log(1.6) * 1 / (1 + 1.2 * (0.25 + 0.75 * 6 / (14 / 3))),
        "d2": math.log(1.6) * 1 / (1 + 1.2 * (0.25 + 0.75 * 3 / (14 / 3))),
        "d3": math.log(1.6) * 1 / (1 + 1.2 * (0.25 + 0.75 * 5 / (14 / 3))),
    }
    assert scores(ranking) == pytest.approx(expected, rel=1e-6)
    assert expected["d1"] == pytest.approx(lucene_bm25(2, 2, 6) + lucene_bm25(1, 2, 6))
    assert [h.passage_id for h in ranking.hits] == sorted(expected, key=lambda d: -expected[d])


def test_single_letter_words_and_rare_terms():
    (ranking,) = build_retriever(TOY, "bm25-plain").search([q("a mat")], 10)
    # "a" twice in d3 only (df 1), "mat" once in d1 only (df 1)
    assert scores(ranking) == pytest.approx({"d3": lucene_bm25(2, 1, 5), "d1": lucene_bm25(1, 1, 6)}, rel=1e-6)


def test_a_repeated_query_term_counts_twice_as_in_lucene():
    plain = build_retriever(TOY, "bm25-plain")
    once, twice = plain.search([q("dog"), q("dog dog")], 10)
    assert scores(twice) == pytest.approx({d: 2 * s for d, s in scores(once).items()}, rel=1e-6)


def test_keeps_stop_words_and_does_not_stem():
    corpus = [Passage("a", "a", "", "The runners ran"), Passage("b", "b", "", "A runner runs")]
    plain, tuned = build_retriever(corpus, "bm25-plain"), build_retriever(corpus, "bm25")
    assert plain.tokenize(["the runners"]) == [["the", "runners"]]
    (the,) = plain.search([q("the")], 5)
    assert [h.passage_id for h in the.hits] == ["a"]
    (tuned_the,) = tuned.search([q("the")], 5)
    assert len(tuned_the) == 0  # the tuned bm25 drops the stop word
    (runners,) = plain.search([q("runners")], 5)
    assert [h.passage_id for h in runners.hits] == ["a"]  # no stemming: "runner" does not match
    (tuned_runners,) = tuned.search([q("runners")], 5)
    assert {h.passage_id for h in tuned_runners.hits} == {"a", "b"}  # Snowball: runners = runner


def test_elasticsearch_parameters_by_default_and_only_k1_b_undated_settable():
    plain = build_retriever(TOY, "bm25-plain", {"bm25": {"k1": 0.9, "b": 0.4}})  # the tuned bm25's settings
    assert (plain.config.k1, plain.config.b, plain.config.method) == (1.2, 0.75, "lucene")
    assert plain.config.stemmer is None and plain.config.stopwords is None
    custom = build_retriever(TOY, "bm25-plain", {"bm25-plain": {"k1": 2.0, "b": 0.5}})
    assert (custom.config.k1, custom.config.b) == (2.0, 0.5)
    with pytest.raises(InputError, match="bad settings for retriever 'bm25-plain'"):
        build_retriever(TOY, "bm25-plain", {"bm25-plain": {"stemmer": "english"}})
    with pytest.raises(InputError, match="k1 >= 0"):
        build_retriever(TOY, "bm25-plain", {"bm25-plain": {"k1": -1.0}})


def test_load_refuses_a_stemmer_override(tmp_path):
    save_index(build_retriever(TOY, "bm25-plain"), tmp_path / "idx")
    with pytest.raises(InputError, match="standard analyzer"):
        load_index(tmp_path / "idx", stemmer="english")


def test_save_load_round_trip(tmp_path):
    plain = build_retriever(TOY, "bm25-plain")
    gen = save_index(plain, tmp_path / "idx")
    assert (gen / "bm25-plain" / "bm25.json").is_file()
    loaded = load_index(tmp_path / "idx")
    assert isinstance(loaded, Bm25PlainRetriever) and loaded.name == "bm25-plain"
    assert loaded.config == plain.config
    queries = [q("the cat", "a"), q("a dog", "b"), q("zebra", "c")]
    for before, after in zip(plain.search(queries, 3), loaded.search(queries, 3), strict=True):
        assert before.passage_ids == after.passage_ids
        assert [h.score for h in before.hits] == [h.score for h in after.hits]


def test_cli_index_and_search(tmp_path):
    from factscout.cli.main import app

    write_corpus(tmp_path / "corpus.jsonl", TOY)
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "index",
            "--corpus",
            str(tmp_path / "corpus.jsonl"),
            "--index",
            str(tmp_path / "idx"),
            "--retriever",
            "bm25-plain",
        ],
    )
    assert result.exit_code == 0, result.output
    loaded = load_index(tmp_path / "idx")
    assert loaded.name == "bm25-plain" and (loaded.config.k1, loaded.config.b) == (1.2, 0.75)
    result = runner.invoke(
        app,
        [
            "index",
            "--corpus",
            str(tmp_path / "corpus.jsonl"),
            "--index",
            str(tmp_path / "idx2"),
            "--retriever",
            "bm25-and",
            "--k1",
            "1.5",
        ],
    )
    assert result.exit_code == 0, result.output
    loaded = load_index(tmp_path / "idx2")
    assert loaded.name == "bm25-and" and (loaded.config.k1, loaded.config.b) == (1.5, 0.75)
    result = runner.invoke(
        app,
        ["index", "--corpus", str(tmp_path / "corpus.jsonl"), "--index", str(tmp_path / "idx3"), "--retriever", "bm25"],
    )
    assert result.exit_code == 0, result.output
    assert (load_index(tmp_path / "idx3").config.k1, load_index(tmp_path / "idx3").config.b) == (0.9, 0.4)


def test_scores_equal_lucene_bm25_written_out_on_scifact_mini():
    """Differential: every hit's score against Lucene's BM25 computed here from term counts."""
    from collections import Counter

    from factscout.datasets import load_dataset
    from factscout.retrieve.standard_analyzer import standard_tokens

    ds = load_dataset("scifact_mini")
    corpus = list(ds.corpus)
    plain = build_retriever(corpus, "bm25-plain")
    counts = [Counter(standard_tokens(p.contents)) for p in corpus]
    lengths = [sum(c.values()) for c in counts]
    n_docs, avgdl = len(corpus), sum(lengths) / len(corpus)
    df = Counter(t for c in counts for t in c)
    queries = ds.queries()[:20]
    for query, ranking in zip(queries, plain.search(queries, 20), strict=True):
        terms = standard_tokens(query.text)
        expected = {}
        for p, c, dl in zip(corpus, counts, lengths, strict=True):
            s = sum(lucene_bm25(c[t], df[t], dl, n_docs, avgdl) for t in terms if c[t])
            if s > 0:
                expected[p.passage_id] = s
        top = sorted(expected, key=lambda d: (-expected[d], d))[:20]
        assert list(ranking.passage_ids) == top
        assert [h.score for h in ranking.hits] == pytest.approx([expected[d] for d in top], rel=1e-5)
