"""The served page for a fact-checker, without a browser: each highlighted sentence says its stance
and probability under a legend, the verdict says its confidence, counts say their unit, sources link
only when the id is known to be a URL, DOI or PubMed id, the empty page offers example claims, a
favicon, and the query editor never suggests random edits."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from factscout.render.view import evidence_view, source_link
from factscout.serve import create_app
from factscout.serve.examples import EXAMPLES, Example, examples_for

from .conftest import CLAIM_ID


@pytest.fixture(scope="module")
def client(checker, mini):
    with TestClient(create_app(checker, qrels=mini.qrels)) as c:
        yield c


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.mark.parametrize(
    ("url", "doc_id", "href"),
    [
        ("https://example.org/a?b=1", "d1", "https://example.org/a?b=1"),
        ("http://example.org/", "d1", "http://example.org/"),
        (None, "10.1056/NEJMoa2034577", "https://doi.org/10.1056/NEJMoa2034577"),
        ("doi:10.1000/xyz123", "d1", "https://doi.org/10.1000/xyz123"),
        ("https://doi.org/10.1000/xyz123", "d1", "https://doi.org/10.1000/xyz123"),
        (None, "PMID:11705328", "https://pubmed.ncbi.nlm.nih.gov/11705328/"),
        ("pubmed:123", "d1", "https://pubmed.ncbi.nlm.nih.gov/123/"),
        (None, "11705328", None),  # a bare number (SciFact's S2ORC ids) is not taken for a PubMed id
        ("javascript:alert(1)", "d1", None),
        ("ftp://example.org/x", "d1", None),
        (None, "train-128-q0-a0", None),
        ("", "", None),
    ],
)
def test_source_links_only_for_known_kinds_of_id(url, doc_id, href):
    link = source_link(url, doc_id)
    assert (link["href"] if link else None) == href


def test_sentences_carry_their_stance_probability_and_passages_their_source():
    report = {
        "queries": [{"query_id": "q1", "text": "the claim", "origin": "claim"}],
        "evidence": [
            {
                "passage_id": "p1",
                "doc_id": "10.1000/xyz",
                "url": None,
                "stance": "refutes",
                "found_by": ["q1"],
                "sentences": [
                    {
                        "index": 0,
                        "text": "No.",
                        "stance": "refutes",
                        "probabilities": [0.1, 0.8, 0.1],
                        "counted": True,
                        "model_label": "refutes",
                    }
                ],
            }
        ],
    }
    groups = evidence_view(report, {})
    assert [g["title"] for g in groups] == ["Supporting passages", "Refuting passages", "Neutral passages"]
    (item,) = groups[1]["passages"]
    (sentence,) = item["passage_sentences"]
    assert {k: sentence[k] for k in ("text", "stance", "selected", "probability", "counted")} == {
        "text": "No.", "stance": "refutes", "selected": True, "probability": 0.8, "counted": True}  # fmt: skip
    assert (sentence["model_label"], sentence["model_probability"]) == ("refutes", 0.8)
    assert item["source"]["href"] == "https://doi.org/10.1000/xyz" and item["found_by_text"] == ["the claim"]


def test_examples_are_only_those_whose_evidence_is_in_the_index(mini):
    ids = {p.passage_id for p in mini.corpus}
    shown = examples_for(ids)
    assert 1 <= len(shown) <= 4 and all(set(x.evidence) <= ids for x in shown)
    assert examples_for(set()) == []
    assert examples_for({"a"}, [Example("x", None, ("a", "b"))]) == []
    claims = {c.text for c in mini.claims}
    assert all(x.claim in claims for x in EXAMPLES if set(x.evidence) <= ids)  # real claims of the fixture


def test_the_empty_page_offers_examples_and_a_favicon(client):
    html = client.get("/").text
    assert 'id="examples"' in html and html.count('class="example"') >= 1
    assert '<link rel="icon" href="/static/favicon.svg"' in html
    assert "Claim id" in html.split("<summary>Advanced</summary>")[1]  # the researcher field is under Advanced
    ico = client.get("/favicon.ico")
    assert ico.status_code == 200 and ico.headers["content-type"] == "image/x-icon" and ico.content[:4] == b"\0\0\1\0"
    svg = client.get("/static/favicon.svg")
    assert svg.status_code == 200 and svg.text.startswith("<svg")
    assert 'id="examples"' not in client.get("/", params={"claim": "Folate and homocysteine."}).text


def test_a_report_labels_stances_confidence_and_units(client, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    r = client.get("/", params={"claim": claim.text, "date": "2016-06-01", "evidence": "all"})
    assert r.status_code == 200
    html, text = r.text, _text(r.text)
    assert 'id="legend"' in html and "How to read the evidence" in text
    # every highlighted sentence is followed by the side the rule counted it for and its probability, or by
    # "not counted" and the model's own label
    counted = re.findall(
        r'class="sent hl ([a-z-]+)">[^<]*</span> <span class="stance-tag \1" title="counted by the verdict rule">'
        r"([a-z ]+) (\d\.\d\d)</span>",
        html,
    )
    uncounted = re.findall(
        r'class="sent hl not-enough-info">[^<]*</span> <span class="stance-tag not-enough-info" '
        r'title="not counted by the verdict rule">not counted · (?:model: (?:supports|refutes)|not enough info) \d\.\d\d</span>',
        html,
    )
    assert len(counted) + len(uncounted) == html.count('class="sent hl ') >= 1
    assert all(stance.replace(" ", "-") == cls and 0.0 <= float(p) <= 1.0 for cls, stance, p in counted)
    # the verdict counts sentences, the columns count passages, and both say so
    assert "Evidence sentences counted:" in text
    assert re.search(r"Supporting passages \(\d+\)", text) and re.search(r"Neutral passages \(\d+\)", text)
    # a threshold is not called a confidence; the confidence is the calibrated one, or said to be missing
    assert "confidence >=" not in text
    assert "stance probability is at least" in text
    assert (
        "probability that this call is right" in text
        or "Confidence not measured" in text
        or ("Why not a definite call" in text)
    )
    # the source link of the passage with a URL; research fields under Advanced
    assert 'href="https://example.org/late"' in html
    late = html.split('data-passage-id="late-folate"')[1].split("</article>")[0]
    assert late.index("<summary>Advanced</summary>") < late.index('class="found-by"')


def test_the_editor_never_suggests_random_edits(checker, mini, monkeypatch):
    import factscout.rewrite.io as io

    monkeypatch.setattr(io, "shipped_policies", lambda: ())  # no shipped policy fits this index
    with TestClient(create_app(checker, qrels=mini.qrels, warm_up=False)) as c:
        assert c.get("/v1/health").json()["policy"] is None
        claim = next(x for x in mini.claims if x.claim_id == CLAIM_ID).text
        body = c.post("/v1/rewrite", json={"query": claim, "suggest": True}).json()
        assert body["policy"] is None and body["suggestion"] is None and body["hits"]
        page = c.get("/", params={"claim": claim}).text
        assert 'id="no-suggestion"' in page and 'id="editor-suggestion"' not in page
        assert "never suggests random edits" in _text(page)


def test_the_page_and_the_html_report_share_one_stylesheet(client):
    from factscout.render.html import CSS

    r = client.get("/static/app.css")
    assert r.status_code == 200 and r.text == CSS.read_text(encoding="utf-8")
    assert client.get("/static/editor.js").status_code == 200  # the page's own files still served
