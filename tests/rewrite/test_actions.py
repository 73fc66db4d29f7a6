"""The edit actions of Kazemi et al. (AACL 2023): Table 1's id layout, POS rules, masks, edits."""

import pytest

from factscout.errors import InputError, UnknownName
from factscout.rewrite.actions import (
    ACTIONS,
    EDIT_KINDS,
    MAX_POSITIONS,
    N_ACTIONS,
    Action,
    Token,
    action_mask,
    apply_action,
    parse,
    present_simple,
    synonym,
    valid_edits,
)

SENTENCE = "The government voted on the new budget."


class TestActionTable:
    def test_papers_examples(self):
        assert Action.from_id(33) == Action("add_synonym", 1)
        assert Action.from_id(33).label == "add synonym, position 1"
        assert Action.from_id(127) == Action("remove", 31)
        assert str(Action.from_id(127)) == "remove, position 31"

    @pytest.mark.parametrize(
        ("action_id", "kind", "position"),
        [
            (0, "swap_synonym", 0),
            (31, "swap_synonym", 31),
            (32, "add_synonym", 0),
            (63, "add_synonym", 31),
            (64, "present_simple", 0),
            (95, "present_simple", 31),
            (96, "remove", 0),
            (127, "remove", 31),
        ],
    )
    def test_block_boundaries(self, action_id, kind, position):
        action = Action.from_id(action_id)
        assert (action.kind, action.position) == (kind, position)
        assert Action(kind, position).action_id == action_id

    def test_all_ids_round_trip(self):
        assert N_ACTIONS == 128 and MAX_POSITIONS == 32 and len(ACTIONS) == 128
        assert [a.action_id for a in ACTIONS] == list(range(128))
        assert EDIT_KINDS == ("swap_synonym", "add_synonym", "present_simple", "remove")

    @pytest.mark.parametrize("bad", [-1, 128, 1.0, True, "3"])
    def test_bad_ids_raise(self, bad):
        with pytest.raises(InputError):
            Action.from_id(bad)

    def test_bad_action_fields_raise(self):
        with pytest.raises(InputError):
            Action("remove", 32)
        with pytest.raises(UnknownName, match="known: add_synonym, present_simple, remove, swap_synonym"):
            Action("delete", 0)  # type: ignore[arg-type]


def tok(pos: str, *, stop: bool = False, text: str = "word") -> Token:
    return Token(text, " ", pos, "", text, stop)


class TestPosRules:
    def test_verbs_allow_all_four(self):
        assert tok("VERB").allowed == set(EDIT_KINDS)

    @pytest.mark.parametrize("pos", ["NOUN", "ADJ", "ADV"])
    def test_content_words_allow_all_but_tense(self, pos):
        assert tok(pos).allowed == {"swap_synonym", "add_synonym", "remove"}

    @pytest.mark.parametrize("pos", ["DET", "ADP", "PUNCT", "NUM", "PROPN", "AUX", "PRON", "X"])
    def test_other_tags_only_remove(self, pos):
        assert tok(pos).allowed == {"remove"}

    def test_stop_words_only_remove_whatever_their_tag(self):
        assert tok("VERB", stop=True).allowed == {"remove"}
        assert tok("NOUN", stop=True).allowed == {"remove"}


class TestMask:
    def test_mask_on_a_real_sentence(self):
        parsed = parse(SENTENCE)
        assert [t.text for t in parsed.tokens] == ["The", "government", "voted", "on", "the", "new", "budget", "."]
        mask = action_mask(SENTENCE)
        assert len(mask) == 128
        valid = {i for i, ok in enumerate(mask) if ok}
        # every token can be removed; positions past the end (8..31) never are
        assert {96 + i for i in range(8)} <= valid
        assert not any(mask[96 + i] or mask[i] or mask[32 + i] or mask[64 + i] for i in range(8, 32))
        # present simple only on the verb "voted"
        assert {i for i in valid if 64 <= i < 96} == {64 + 2}
        # stop words and punctuation: removal only
        for position in (0, 3, 4, 7):
            assert not (mask[position] or mask[32 + position] or mask[64 + position])
        # synonyms where WordNet has one: government -> authorities, new -> fresh
        assert mask[1] and mask[32 + 1] and mask[5] and mask[32 + 5]

    def test_single_token_query_cannot_be_emptied(self):
        mask = action_mask("budget")
        assert not mask[96]

    def test_invalid_action_raises(self):
        with pytest.raises(InputError, match="not valid"):
            apply_action(SENTENCE, Action("present_simple", 1))  # a noun has no tense
        with pytest.raises(InputError, match="8-token query"):
            apply_action(SENTENCE, 96 + 8)  # position beyond the length

    def test_valid_edits_match_the_mask(self):
        edits = valid_edits(SENTENCE)
        mask = action_mask(SENTENCE)
        assert [e.action_id for e in edits] == [i for i, ok in enumerate(mask) if ok]
        assert all(e.next_query != SENTENCE for e in edits)


class TestEdits:
    def test_voted_becomes_votes(self):
        edit = apply_action(SENTENCE, 64 + 2)
        assert edit.next_query == "The government votes on the new budget."
        assert edit.description == "change 'voted' to 'votes' at 2"

    def test_remove_the_last_token(self):
        edit = apply_action("Prices grew quickly", 96 + 2)
        assert edit.next_query == "Prices grew"
        assert edit.description == "remove 'quickly' at 2"

    def test_remove_before_punctuation_leaves_no_space(self):
        assert apply_action(SENTENCE, 96 + 6).next_query == "The government voted on the new."

    def test_remove_hyphen_does_not_glue_words(self):
        assert apply_action("7-day-old adults", 96 + 1).next_query == "7 day-old adults"
        assert apply_action("IL-6 (interleukin) rises", 96 + 1).next_query == "IL-6 interleukin) rises"

    def test_remove_first_token(self):
        assert apply_action(SENTENCE, 96).next_query == "government voted on the new budget."

    def test_swap_and_add_synonym(self):
        swap = apply_action(SENTENCE, 1)
        assert swap.next_query == "The authorities voted on the new budget."
        assert swap.description == "swap 'government' with 'authorities' at 1"
        add = apply_action(SENTENCE, 32 + 5)
        assert add.next_query == "The government voted on the new fresh budget."
        assert add.description == "add 'fresh' after 'new' at 5"

    def test_synonym_keeps_inflection_and_case(self):
        assert apply_action("Prices rose quickly", 1).next_query == "Prices lifted quickly"
        assert apply_action("Quickly prices rose", 0).next_query == "Rapidly prices rose"


class TestWordFunctions:
    @pytest.mark.parametrize(
        ("word", "pos", "tag", "expected"),
        [
            ("government", "NOUN", "NN", "authorities"),  # first other lemma of government.n.01
            ("rose", "VERB", "VBD", "lifted"),  # rise.v.01: rise, lift -> inflected like "rose"
            ("quickly", "ADV", "RB", "rapidly"),
            ("new", "ADJ", "JJ", "fresh"),  # new.a.01 has no other lemma: next sense
            ("vote", "VERB", "VB", None),  # every sense of "vote" lists only "vote"
            ("the", "DET", "DT", None),
        ],
    )
    def test_synonyms_are_deterministic(self, word, pos, tag, expected):
        assert synonym(word, pos, tag) == expected
        synonym.cache_clear()
        assert synonym(word, pos, tag) == expected

    @pytest.mark.parametrize(
        ("word", "tag", "expected"),
        [
            ("voted", "VBD", "votes"),
            ("grew", "VBD", "grows"),
            ("was", "VBD", "is"),
            ("were", "VBD", "are"),
            ("taken", "VBN", "takes"),
            ("running", "VBG", "runs"),
            ("votes", "VBZ", None),  # already present
            ("vote", "VBP", None),
        ],
    )
    def test_present_simple(self, word, tag, expected):
        assert present_simple(word, tag) == expected

    def test_empty_query_raises(self):
        with pytest.raises(InputError):
            parse("   ")


class TestMissingWordNet:
    def test_missing_nltk_raises_with_the_install_hint(self, monkeypatch):
        import sys

        from factscout.errors import MissingDependency
        from factscout.rewrite.actions import wordnet

        monkeypatch.setitem(sys.modules, "nltk", None)
        wordnet.cache_clear()
        try:
            with pytest.raises(MissingDependency, match=r"install-wordnet\.sh"):
                wordnet()
        finally:
            monkeypatch.undo()
            wordnet.cache_clear()

    def test_missing_corpus_raises_with_the_install_hint(self, monkeypatch):
        from nltk.corpus import wordnet as wn

        from factscout.errors import MissingDependency
        from factscout.rewrite.actions import wordnet

        def missing():
            raise LookupError("Resource wordnet not found.")

        monkeypatch.setattr(wn, "ensure_loaded", missing)
        wordnet.cache_clear()
        try:
            with pytest.raises(MissingDependency, match=r"nltk\.download"):
                wordnet()
        finally:
            monkeypatch.undo()
            wordnet.cache_clear()

    def test_venv_share_folder_is_searched(self):
        import sys
        from pathlib import Path

        import nltk

        from factscout.rewrite.actions import wordnet

        wordnet()
        assert str(Path(sys.prefix) / "share" / "nltk_data") in nltk.data.path


def test_a_wordnet_entry_nltk_cannot_resolve_means_no_synonym(monkeypatch):
    from factscout.rewrite import actions

    class Broken:
        def synsets(self, lemma, pos):
            raise AttributeError("'NoneType' object has no attribute '_lemmas'")  # NLTK on a bad satellite

    monkeypatch.setattr(actions, "wordnet", lambda: Broken())
    assert actions.synonym("zzbrokenadjective", "ADJ", "JJ") is None
