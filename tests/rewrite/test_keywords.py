"""Keyword baselines of query rewriting as remove-edit policies: stop words, top-k IDF, KeyBERT."""

import math

import numpy as np
import pytest

from factscout.errors import InputError, MissingDependency
from factscout.records import Claim, Passage
from factscout.retrieve import build_retriever
from factscout.rewrite.actions import parse
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.keywords import (
    IdfTable,
    KeyBertPolicy,
    StopwordPolicy,
    TopIdfPolicy,
    align,
    tune_k,
)
from factscout.rewrite.rewriter import rewrite
from factscout.rewrite.state import state_encoder

try:  # the edit actions need spaCy's tagger and WordNet
    from factscout.rewrite.actions import action_mask

    action_mask("Aspirin reduces pain.")
except (ImportError, MissingDependency) as exc:  # pragma: no cover - depends on the environment
    pytest.skip(f"query rewriting needs spaCy and WordNet: {exc}", allow_module_level=True)

VITAMIN = "Vitamin D supplementation reduces the risk of respiratory infections in elderly patients."
ASPIRIN = "Aspirin inhibits the production of prostaglandins, which are involved in inflammation."
STATINS = "Statins lower cholesterol and statins reduce the risk of heart attacks."
STEPS = 64


def texts(query: str) -> list[str]:
    return [t.text for t in parse(query).tokens]


def kept(claim: str, keep: frozenset[int]) -> list[str]:
    return [t.text for i, t in enumerate(parse(claim).tokens) if i in keep]


class TestStopwords:
    def test_keep_set_drops_stop_words_and_punctuation(self):
        policy = StopwordPolicy()
        assert policy.name == "stopwords"
        # the(4), of(6), in(9), .(12) go
        assert policy.keep(VITAMIN) == frozenset({0, 1, 2, 3, 5, 7, 8, 10, 11})

    def test_removes_leftmost_first_and_ends_on_the_kept_tokens(self):
        trace = rewrite(VITAMIN, StopwordPolicy(), max_steps=STEPS)
        # "the" at 4; then "of" has moved to 5, "in" to 7, the full stop to 9
        assert trace.actions == (96 + 4, 96 + 5, 96 + 7, 96 + 9)
        assert trace.final == "Vitamin D supplementation reduces risk respiratory infections elderly patients"

    def test_removing_a_comma_glues_no_words(self):
        # the remove edit puts a space back between two words it would join ("prostaglandins,
        # which" minus the comma is "prostaglandins which", not "prostaglandinswhich")
        trace = rewrite(ASPIRIN, StopwordPolicy(), max_steps=STEPS)
        assert trace.final == "Aspirin inhibits production prostaglandins involved inflammation"
        assert all("prostaglandinswhich" not in step.query for step in trace.steps)

    def test_contractions_split_by_spacy_go_like_other_stop_words(self):
        # "don't" is spaCy's "do" + "n't", both stop words; removing them glues nothing
        trace = rewrite("Smokers don't know the risk of lung cancer.", StopwordPolicy(), max_steps=STEPS)
        assert trace.final == "Smokers know risk lung cancer"

    def test_no_unkept_word_is_trapped_in_a_kept_token(self):
        # regression: removing ")" from "RLS) -40%" wrote "RLS-40%", which spaCy reads as the one
        # token "RLS-40", so "40" could never go; now the bracket waits until "40" is gone
        claim = "Glucose restriction reduces RLS (replicative life span) by 20-40% in S. cerevisiae."
        policy = TopIdfPolicy(1, IdfTable.from_texts(["rls", "glucose restriction", "glucose restriction", "x"]))
        assert kept(claim, policy.keep(claim)) == ["RLS"]
        final = rewrite(claim, policy, max_steps=STEPS).final
        assert "40" not in final and final.startswith("RLS")
        assert [w for w in final.split() if any(ch.isalnum() for ch in w)] == [final.split()[0]]

    def test_a_claim_of_stop_words_only_is_left_as_it_is(self):
        trace = rewrite("It is what it is.", StopwordPolicy(), max_steps=STEPS)
        assert trace.steps == () and trace.final == "It is what it is."

    def test_never_empties_the_query(self):
        assert rewrite("Aspirin.", StopwordPolicy(), max_steps=STEPS).final == "Aspirin"
        assert rewrite("The aspirin", StopwordPolicy(), max_steps=STEPS).final == "aspirin"


class TestIdfTable:
    TABLE = IdfTable.from_texts(["the cat sat", "the dog", "a cat, a cat", "COVID-19 cases"])

    def test_lucene_idf_by_hand(self):
        n = 4
        assert self.TABLE.n_docs == n
        assert self.TABLE.df == {"the": 2, "cat": 2, "sat": 1, "dog": 1, "a": 1, "covid": 1, "19": 1, "cases": 1}
        assert self.TABLE.idf("dog") == pytest.approx(math.log(1 + (n - 1 + 0.5) / (1 + 0.5)))
        assert self.TABLE.idf("the") == pytest.approx(math.log(1 + (n - 2 + 0.5) / (2 + 0.5)))

    def test_a_word_is_analysed_like_the_index(self):
        # the standard analyzer lower-cases and splits COVID-19 in two; a word takes its best term
        assert self.TABLE.word_idf("Dog") == self.TABLE.idf("dog")
        assert self.TABLE.word_idf("COVID-19") == max(self.TABLE.idf("covid"), self.TABLE.idf("19"))
        assert self.TABLE.word_idf("—") == 0.0  # no term at all

    def test_absent_words_get_zero_below_every_present_word(self):
        assert self.TABLE.idf("unicorn") == 0.0
        common = IdfTable.from_texts(["the"] * 10)
        assert common.idf("the") > 0.0  # even a term in every document stays above an absent one

    def test_bad_input(self):
        with pytest.raises(InputError, match="empty corpus"):
            IdfTable.from_texts([])
        with pytest.raises(InputError, match="document frequencies"):
            IdfTable(2, {"cat": 3})
        with pytest.raises(InputError):
            IdfTable.from_texts([None])  # type: ignore[list-item]


class TestTopIdf:
    # df: vitamin 1, d 1, risk 1, respiratory 1, infections 1, elderly 2, patients 3; the claim's
    # "supplementation" and "reduces" are absent from this corpus
    TABLE = IdfTable.from_texts(
        [
            "vitamin d levels in patients",
            "respiratory infections rise",
            "the patients",
            "elderly patients",
            "risk in the elderly",
            "nothing here",
        ]
    )

    def test_keeps_the_rarest_words_ties_to_the_earlier(self):
        # vitamin, D, risk, respiratory, infections tie at df 1: the earliest win
        assert kept(VITAMIN, TopIdfPolicy(1, self.TABLE).keep(VITAMIN)) == ["Vitamin"]
        assert kept(VITAMIN, TopIdfPolicy(3, self.TABLE).keep(VITAMIN)) == ["Vitamin", "D", "risk"]
        assert kept(VITAMIN, TopIdfPolicy(6, self.TABLE).keep(VITAMIN)) == [
            "Vitamin",
            "D",
            "risk",
            "respiratory",
            "infections",
            "elderly",
        ]

    def test_absent_words_come_after_every_present_one(self):
        # 7 present content words, then the absent "supplementation" (2) before "reduces" (3)
        keep7 = TopIdfPolicy(7, self.TABLE).keep(VITAMIN)
        assert "supplementation" not in kept(VITAMIN, keep7) and "patients" in kept(VITAMIN, keep7)
        assert kept(VITAMIN, TopIdfPolicy(8, self.TABLE).keep(VITAMIN))[2] == "supplementation"
        assert TopIdfPolicy(9, self.TABLE).keep(VITAMIN) == StopwordPolicy().keep(VITAMIN)
        assert TopIdfPolicy(50, self.TABLE).keep(VITAMIN) == StopwordPolicy().keep(VITAMIN)

    def test_a_repeated_word_counts_once(self):
        table = IdfTable.from_texts(["statins", "heart disease", "heart", "risk", "risk", "cholesterol", "x"])
        # statins (df 1) is the rarest and written twice: k=2 keeps its first occurrence and cholesterol
        assert kept(STATINS, TopIdfPolicy(2, table).keep(STATINS)) == ["Statins", "cholesterol"]

    @pytest.mark.parametrize("k", [1, 3, 5, 8])
    def test_the_final_query_is_the_kept_tokens_in_order(self, k):
        policy = TopIdfPolicy(k, self.TABLE)
        assert policy.name == f"top-idf-{k}"
        trace = rewrite(VITAMIN, policy, max_steps=STEPS)
        assert all(s.text.startswith("remove ") for s in trace.steps)
        assert texts(trace.final) == kept(VITAMIN, policy.keep(VITAMIN))

    def test_a_full_stop_glued_to_a_kept_word_stays(self):
        # "Vitamin D patients." minus "patients" is "Vitamin D.": spaCy reads "D." as one token,
        # which cannot lose its full stop alone
        assert rewrite(VITAMIN, TopIdfPolicy(2, self.TABLE), max_steps=STEPS).final == "Vitamin D."

    def test_a_full_stop_glued_to_the_only_kept_word_stays(self):
        trace = rewrite("Patients given vitamin D.", TopIdfPolicy(1, IdfTable.from_texts(["d", "x"])), max_steps=STEPS)
        assert trace.final == "D."

    def test_bad_k(self):
        with pytest.raises(InputError, match="k must be a positive integer"):
            TopIdfPolicy(0, self.TABLE)
        with pytest.raises(InputError, match="IdfTable"):
            TopIdfPolicy(2, {"a": 1})  # type: ignore[arg-type]


class CountingEncoder:
    """The hashing state encoder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = state_encoder("hashing")
        self.asked: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        return self.inner.encode(texts)


class TestKeyBert:
    def test_keeps_the_words_closest_to_the_claim(self):
        # hashed bag of words: "statins" is written twice, so it is closest to the claim; the other
        # words tie (one occurrence each) and go by position
        policy = KeyBertPolicy(3, state_encoder("hashing"))
        assert policy.name == "keybert-3"
        assert kept(STATINS, policy.keep(STATINS)) == ["Statins", "lower", "cholesterol"]
        assert rewrite(STATINS, policy, max_steps=STEPS).final == "Statins lower cholesterol"

    def test_candidates_are_alphanumeric_content_words(self):
        claim = "COVID-19 vaccines reduce the risk of death by 90%."
        policy = KeyBertPolicy(10, state_encoder("hashing"))
        assert kept(claim, policy.keep(claim)) == ["vaccines", "reduce", "risk", "death", "90"]

    def test_word_embeddings_are_cached(self):
        encoder = CountingEncoder()
        policy = KeyBertPolicy(2, encoder)
        rewrite(STATINS, policy, max_steps=STEPS)
        assert sorted(encoder.asked) == sorted(
            ["statins", "lower", "cholesterol", "reduce", "risk", "heart", "attacks", STATINS]
        )
        encoder.asked.clear()
        policy.keep("Statins reduce strokes.")
        assert encoder.asked == ["strokes", "Statins reduce strokes."]

    def test_no_candidate_leaves_the_claim(self):
        assert rewrite("It is what it is.", KeyBertPolicy(2, state_encoder("hashing")), max_steps=STEPS).steps == ()

    def test_bad_encoder(self):
        with pytest.raises(InputError, match="encode"):
            KeyBertPolicy(2, object())  # type: ignore[arg-type]


class TestAlignment:
    def test_removed_tokens_are_the_earliest_unkept(self):
        # "a a b" keeping the second a, minus the first: positions 1 and 2, not 0 and 2
        assert align(["a", "a", "b"], ["a", "b"], frozenset({1})) == [(1,), (2,)]
        assert align(["a", "a", "c"], ["a", "c"], frozenset({0, 2})) == [(0,), (2,)]

    def test_retokenised_and_foreign_queries(self):
        assert align(["D", "patients", "."], ["D."], frozenset({0})) == [(0, 2)]
        assert align(["x", "y"], ["z"]) is None

    def test_repeated_words_keep_the_right_one(self):
        claim = "the cat and the dog saw the cat"
        policy = StopwordPolicy()
        trace = rewrite(claim, policy, max_steps=STEPS)
        assert trace.final == "cat dog saw cat"


# 40 content tokens with stop words spread across them: tokens past position 31 become reachable
LONG = (
    "In a trial of the elderly the use of aspirin and of statins in the care of the patients with the disease "
    "reduced the rate of the stroke and of the heart attack in the group of the women and of the men over the "
    "age of sixty."
)
DRUGS = (
    "aspirin statins metformin insulin warfarin heparin ibuprofen paracetamol codeine morphine penicillin "
    "amoxicillin tetracycline doxycycline vancomycin rifampicin isoniazid lithium clozapine haloperidol diazepam "
    "lorazepam melatonin cortisol estrogen testosterone progesterone thyroxine dopamine serotonin histamine "
    "adrenaline in the blood."
)


class TestLongClaims:
    def test_tokens_past_position_31_become_reachable(self):
        assert len(parse(LONG).tokens) > 32
        policy = StopwordPolicy()
        trace = rewrite(LONG, policy, max_steps=STEPS)
        assert texts(trace.final) == kept(LONG, policy.keep(LONG))
        assert "sixty" not in trace.final and trace.final.endswith("age")

    def test_a_tail_behind_32_kept_tokens_stays(self):
        tokens = parse(DRUGS).tokens
        assert not any(t.is_stop for t in tokens[:32]) and tokens[32].text == "in"
        trace = rewrite(DRUGS, StopwordPolicy(), max_steps=STEPS)
        assert trace.steps == () and trace.final == DRUGS


# tune_k on a tiny AND endpoint: aspirin and prostaglandins are the rarest words (df 2 each),
# "reduces" (df 3) and "inflammation" (df 4) follow. k=1 keeps "Aspirin": the short d2 ranks above
# the relevant passage (AP 1/2); k=2 keeps "Aspirin prostaglandins": only the relevant one (AP 1);
# k=3 adds "reduces", which the relevant passage lacks: nothing matches (AP 0).
TUNE_CORPUS = [
    Passage("rel", "rel", "", "Aspirin blocks the synthesis of prostaglandins in platelets."),
    Passage("d1", "d1", "", "Prostaglandins signal pain and reduces inflammation."),
    Passage("d2", "d2", "", "Aspirin, aspirin."),
    Passage("d3", "d3", "", "Exercise reduces inflammation."),
    Passage("d4", "d4", "", "Diet reduces inflammation markers."),
    Passage("d5", "d5", "", "Inflammation of the joints."),
]
TUNE_CLAIM = Claim("c1", "Aspirin reduces prostaglandins in inflammation.")


class TestTuneK:
    @pytest.fixture(scope="class")
    def env(self):
        return SearchEnvironment(build_retriever(TUNE_CORPUS, "bm25-and"), {"c1": {"rel": 1}}, "AP@50")

    def test_picks_the_k_that_retrieves_best(self, env):
        table = IdfTable.from_passages(TUNE_CORPUS)
        assert env.reward(TUNE_CLAIM, TUNE_CLAIM.text) == 0.0  # the full claim matches nothing
        best, means = tune_k(lambda k: TopIdfPolicy(k, table), [TUNE_CLAIM], env, ks=(1, 2, 3, 4))
        assert means == pytest.approx({1: 0.5, 2: 1.0, 3: 0.0, 4: 0.0})
        assert best == 2

    def test_ties_go_to_the_smaller_k(self, env):
        table = IdfTable.from_passages(TUNE_CORPUS)
        best, means = tune_k(lambda k: TopIdfPolicy(k, table), [TUNE_CLAIM], env, ks=(4, 3))
        assert means == {3: 0.0, 4: 0.0} and best == 3

    def test_plain_endpoint(self):
        env = SearchEnvironment(build_retriever(TUNE_CORPUS, "bm25-plain"), {"c1": {"rel": 1}}, "AP@50")
        table = IdfTable.from_passages(TUNE_CORPUS)
        # any word matches here: "Aspirin, aspirin." (tf 2, short) outranks the relevant passage for
        # k = 1..3 (AP 1/2 each, a three-way tie: the smallest k wins); k=4 adds "inflammation",
        # which pulls d1 above it too (AP 1/3)
        best, means = tune_k(lambda k: TopIdfPolicy(k, table), [TUNE_CLAIM], env, ks=(1, 2, 3, 4))
        assert means == pytest.approx({1: 0.5, 2: 0.5, 3: 0.5, 4: 1 / 3})
        assert best == 1

    def test_bad_input(self, env):
        with pytest.raises(InputError, match="training claim"):
            tune_k(lambda k: StopwordPolicy(), [], env)
        with pytest.raises(InputError, match="k to try"):
            tune_k(lambda k: StopwordPolicy(), [TUNE_CLAIM], env, ks=())
        with pytest.raises(InputError, match="k must be a positive integer"):
            tune_k(lambda k: StopwordPolicy(), [TUNE_CLAIM], env, ks=(0,))
