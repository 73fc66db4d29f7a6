"""The LLM planners (ClaimDecomp-style questions, ProgramFC-style programs): prompts, parsing, plans."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factscout.errors import InputError
from factscout.plan.base import PLANNERS, make_planner, plan_all
from factscout.plan.claimdecomp import (
    BUILTIN_EXAMPLES,
    ClaimDecompPlanner,
    DecompExample,
    ExampleSelector,
    build_messages,
    hashed_bag_of_words,
    load_examples,
    parse_questions,
)
from factscout.plan.llm import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ChatClient
from factscout.plan.programfc import ProgramFcPlanner, parse_program
from factscout.records import Claim

CLAIM = Claim(
    "c1",
    "Mail-in voting leads to thousands of fraudulent ballots.",
    dt.date(2020, 4, 7),
    {"person": "Donald Trump"},
)


class ScriptedClient(ChatClient):
    """A ChatClient whose endpoint is a canned answer; records what it was asked."""

    def __init__(self, answer: str) -> None:
        super().__init__("http://127.0.0.1:9/v1", model="scripted", use_cache=False)
        self.answer = answer
        self.asked: list[list[dict[str, str]]] = []

    def _request(self, messages: list[dict[str, str]]) -> str:
        self.asked.append(messages)
        return self.answer


POOL = [
    DecompExample("e-vote", "Voting by mail causes massive fraud.", ("Is mail voting fraud common?",), "A. Speaker"),
    DecompExample("e-jobs", "The state added 10,000 jobs last year.", ("Did the state add 10,000 jobs?",)),
    DecompExample("e-tax", "Taxes on families doubled under the governor.", ("Did family taxes double?",)),
    DecompExample("e-self", "Mail-in voting leads to THOUSANDS of fraudulent ballots", ("Is this the claim itself?",)),
]


def _selector() -> ExampleSelector:
    return ExampleSelector(POOL, embed=hashed_bag_of_words)


def _assert_valid_plan(queries, claim: Claim, origin: str) -> None:
    assert queries, "a plan is never empty"
    keys = [q.text.casefold().rstrip("?.! ") for q in queries]
    assert len(set(keys)) == len(keys), "a plan never repeats a query"
    assert all(q.claim_id == claim.claim_id and q.date == claim.date for q in queries)
    assert len({q.query_id for q in queries}) == len(queries)
    assert {q.origin for q in queries} <= {origin, "claim"}


# --- in-context example selection ----------------------------------------------------------


def test_selector_picks_the_most_similar_example_and_never_the_claim_itself():
    picked = _selector().select(CLAIM, 2)
    assert picked[0].example_id == "e-vote"
    assert "e-self" not in [e.example_id for e in picked]  # same text up to case and punctuation
    assert len(picked) == 2


def test_selector_excludes_the_example_with_the_claim_id():
    selector = _selector()
    same_id = Claim("e-jobs", "The state added 10,000 jobs last year, said the governor.")
    assert "e-jobs" not in [e.example_id for e in selector.select(same_id, 3)]
    assert selector.select("The state added 10,000 jobs", 1)[0].example_id == "e-jobs"


def test_selector_embeds_the_pool_once_and_lazily():
    calls: list[int] = []

    def embed(texts: Sequence[str]) -> np.ndarray:
        calls.append(len(texts))
        return hashed_bag_of_words(texts)

    selector = ExampleSelector(POOL, embed=embed)
    assert calls == []
    assert selector.select(CLAIM, 0) == [] and calls == []
    selector.select(CLAIM, 1)
    selector.select("Taxes doubled", 1)
    assert calls == [len(POOL), 1, 1]


def test_selector_with_fewer_examples_than_asked():
    assert len(_selector().select(CLAIM, 10)) == 3


@pytest.mark.slow
def test_selector_with_the_real_minilm_encoder_matches_meaning_not_words():
    from factscout.text.encoder import Encoder

    pool = [
        DecompExample("jobs", "The unemployment rate fell to a record low.", ("Is unemployment at a record low?",)),
        DecompExample("vax", "Vaccines cause autism in children.", ("Do vaccines cause autism?",)),
        DecompExample("bridge", "The city built three new bridges.", ("Did the city build three bridges?",)),
    ]
    selector = ExampleSelector(pool, embed=Encoder().encode)
    assert selector.select("Joblessness dropped to its lowest level ever.", 1)[0].example_id == "jobs"
    assert selector.select("Immunisation shots make kids autistic.", 1)[0].example_id == "vax"


def test_claimdecomp_dev_examples_load_with_their_questions():
    examples = load_examples("dev")
    assert len(examples) > 150
    assert all(e.questions and e.claim for e in examples)
    first = examples[0]
    assert first.speaker == "Donald Trump" and first.date == dt.date(2020, 4, 7)
    # planning a dev claim never shows that claim as its own example
    claim = Claim(first.example_id, first.claim, first.date)
    picked = ExampleSelector(examples, embed=hashed_bag_of_words).select(claim, 4)
    assert len(picked) == 4 and first.example_id not in [e.example_id for e in picked]


# --- prompts ---------------------------------------------------------------------------------


def test_claimdecomp_prompt_has_speaker_date_and_most_similar_example_last():
    examples = _selector().select(CLAIM, 2)
    messages = build_messages(CLAIM, examples)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "yes/no" in messages[0]["content"] and "implied" in messages[0]["content"]
    assert messages[-1]["content"] == (
        "Claim: Mail-in voting leads to thousands of fraudulent ballots.\n"
        "Speaker: Donald Trump\nDate: April 7, 2020\nQuestions:"
    )
    assert messages[-3]["content"].startswith("Claim: Voting by mail causes massive fraud.\nSpeaker: A. Speaker")
    assert messages[-2]["content"] == "Is mail voting fraud common?"


def test_undated_claim_prompt_has_no_date_or_speaker_lines():
    messages = build_messages(Claim("c2", "Taxes went up."), [])
    assert messages[-1]["content"] == "Claim: Taxes went up.\nQuestions:"


def test_programfc_prompt_follows_the_paper_format():
    planner = ProgramFcPlanner(ScriptedClient(""))
    system, user = planner.messages(CLAIM)
    assert "Question()" in system["content"] and "Verify()" in system["content"]
    assert user["content"].endswith(
        "# The claim is that Mail-in voting leads to thousands of fraudulent ballots.\n"
        "# Said by Donald Trump on April 7, 2020.\ndef program():"
    )
    assert user["content"].count("def program():") == 6  # five examples + the claim


# --- parsing messy answers --------------------------------------------------------------------

MESSY = """Sure! Here are the questions:

1. Did Donald Trump say that thousands of people sign ballots
   in living rooms?
2) **Is mail-in voting fraud widespread in the US?** (implied)
Q3: Are there documented cases of mass mail ballot fraud?
- [literal] Is there evidence of fraudulent ballots?
Question 5 - Is mail-in voting fraud widespread in the US?
These questions cover the literal and implied aspects of the claim.
"""


def test_parse_questions_from_a_messy_numbered_list():
    assert parse_questions(MESSY) == [
        "Did Donald Trump say that thousands of people sign ballots in living rooms?",
        "Is mail-in voting fraud widespread in the US?",
        "Are there documented cases of mass mail ballot fraud?",
        "Is there evidence of fraudulent ballots?",
    ]
    assert len(parse_questions(MESSY, max_questions=2)) == 2


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('```json\n["Is X true here?", "Does Y happen often?"]\n```', ["Is X true here?", "Does Y happen often?"]),
        ('{"questions": [{"question": "Is the sky blue?"}, "Did it rain?"]}', ["Is the sky blue?", "Did it rain?"]),
        ('["Is X true here?", "Does Y hap', ["Is X true here?"]),  # truncated JSON
        (
            "Literal: Is the rate 5 percent? Implied: Did the governor cause it?",
            ["Is the rate 5 percent?", "Did the governor cause it?"],
        ),
        ("Yes/no questions: 1) Is X true here? 2) Is Y true there?", ["Is X true here?", "Is Y true there?"]),
        ("Did he ask 'why not?' during the speech?", ["Did he ask 'why not?' during the speech?"]),
        (
            "<think>Is this a trick question?</think>\n1. Is the budget larger than last year",
            ["Is the budget larger than last year?"],
        ),
        ("Is the claim true?\nThis question checks the claim. Why? Because.", ["Is the claim true?"]),
        ("I cannot help with that.", []),
        ("", []),
    ],
)
def test_parse_questions_messy_formats(answer, expected):
    assert parse_questions(answer) == expected


PROGRAM = """Here is the program:
```python
def program():
    answer_1 = Question("Who directed the film Jaws?")
    fact_1 = Verify(f"{answer_1} was born in Ohio.")
    fact_2 = Verify('The film was released in 1975.'
    fact_3 = verify(claim="Spielberg won an Oscar for \\"Jaws\\".")
    answer_2 = Question("How many murders were recorded in 2019?")
    fact_4 = Verify(f"Murders doubled by 2021 ({answer_2}).")
    fact_5 = Verify(“Curly quotes are fine”)
    fact_6 = Verify("The film was released in 1975.")
    label = Predict(fact_1 and fact_2 and fact_3)
```
The program verifies each fact."""


def test_parse_program_from_messy_output():
    assert parse_program(PROGRAM) == [
        "Who directed the film Jaws?",
        "Who directed the film Jaws was born in Ohio.",
        "The film was released in 1975.",
        'Spielberg won an Oscar for "Jaws".',
        "How many murders were recorded in 2019?",
        "Murders doubled by 2021.",
        "Curly quotes are fine",
    ]
    assert len(parse_program(PROGRAM, max_queries=3)) == 3


def test_parse_program_missing_closing_paren_and_quote():
    answer = 'fact_1 = Verify("The bridge opened in 1932\nfact_2 = Verify("The bridge is in Sydney."\nlabel = Predict('
    assert parse_program(answer) == ["The bridge opened in 1932", "The bridge is in Sydney."]


def test_parse_program_falls_back_to_a_question_list():
    assert parse_program("1. Is X true here?\n2. Is Y true there?") == ["Is X true here?", "Is Y true there?"]
    assert parse_program("label = Predict(True)") == []


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_parsers_never_crash_and_return_questions(text):
    for question in parse_questions(text):
        assert question.endswith("?") and question.strip() == question
    assert all(isinstance(q, str) and q for q in parse_program(text))


# --- planners ---------------------------------------------------------------------------------


def test_claimdecomp_plan_is_the_claim_then_its_questions():
    client = ScriptedClient(MESSY)
    planner = ClaimDecompPlanner(client, selector=_selector(), n_examples=2)
    queries = planner.plan(CLAIM)
    _assert_valid_plan(queries, CLAIM, "claimdecomp")
    assert [q.query_id for q in queries] == ["c1", "c1#1", "c1#2", "c1#3", "c1#4"]
    assert queries[0].text == CLAIM.text and queries[0].origin == "claim"
    assert queries[1].text.startswith("Did Donald Trump say")
    (asked,) = client.asked
    assert len(asked) == 6 and "e-self" not in str(asked)


def test_claimdecomp_caps_questions_and_can_leave_out_the_claim():
    planner = ClaimDecompPlanner(ScriptedClient(MESSY), selector=_selector(), max_queries=2, include_claim=False)
    queries = planner.plan(CLAIM)
    _assert_valid_plan(queries, CLAIM, "claimdecomp")
    assert [q.origin for q in queries] == ["claimdecomp", "claimdecomp"]


@pytest.mark.parametrize("include_claim", [True, False])
def test_unusable_answers_fall_back_to_the_claim(include_claim):
    for planner in (
        ClaimDecompPlanner(ScriptedClient("Sorry, I can't."), selector=_selector(), include_claim=include_claim),
        ProgramFcPlanner(ScriptedClient("label = Predict(True)"), include_claim=include_claim),
    ):
        queries = planner.plan(CLAIM)
        assert [(q.query_id, q.text, q.origin) for q in queries] == [("c1", CLAIM.text, "claim")]


def test_claim_echoed_as_a_question_is_not_repeated():
    answer = f"{CLAIM.text}?\n{CLAIM.text.upper()}\nIs mail voting safe?"
    queries = ClaimDecompPlanner(ScriptedClient(answer), selector=_selector()).plan(CLAIM)
    _assert_valid_plan(queries, CLAIM, "claimdecomp")
    assert [q.text for q in queries] == [CLAIM.text, "Is mail voting safe?"]


def test_programfc_plan_is_the_claim_then_its_steps():
    queries = ProgramFcPlanner(ScriptedClient(PROGRAM), max_queries=4).plan(CLAIM)
    _assert_valid_plan(queries, CLAIM, "programfc")
    assert [q.text for q in queries] == [
        CLAIM.text,
        "Who directed the film Jaws?",
        "Who directed the film Jaws was born in Ohio.",
        "The film was released in 1975.",
        'Spielberg won an Oscar for "Jaws".',
    ]


def test_planners_are_registered():
    assert {"claimdecomp", "programfc"} <= set(PLANNERS)
    assert PLANNERS["claimdecomp"] is ClaimDecompPlanner and PLANNERS["programfc"] is ProgramFcPlanner
    assert make_planner("programfc", max_queries=3).name == "programfc"


def test_unconfigured_endpoint_fails_at_plan_time_with_a_clear_error(monkeypatch):
    for name in (ENV_BASE_URL, ENV_MODEL, ENV_API_KEY):
        monkeypatch.delenv(name, raising=False)
    claimdecomp = ClaimDecompPlanner(selector=_selector())  # constructing needs no endpoint
    programfc = ProgramFcPlanner()
    for planner in (claimdecomp, programfc):
        with pytest.raises(InputError, match=f"no LLM endpoint configured: set {ENV_BASE_URL}"):
            planner.plan(CLAIM)
    queries, failures = plan_all(programfc, [CLAIM])
    assert [q.text for q in queries] == [CLAIM.text]
    assert failures[0].claim_id == "c1" and ENV_BASE_URL in failures[0].error


def test_planner_endpoint_options_override_the_env(monkeypatch):
    monkeypatch.setenv(ENV_BASE_URL, "http://env.example/v1")
    monkeypatch.setenv(ENV_MODEL, "env-model")
    planner = ProgramFcPlanner(model="option-model")
    assert (planner.client.model, planner.client.base_url) == ("option-model", "http://env.example/v1")


@pytest.mark.parametrize(
    ("factory", "options"),
    [
        (ClaimDecompPlanner, {"n_examples": -1}),
        (ClaimDecompPlanner, {"max_queries": 0}),
        (ProgramFcPlanner, {"max_queries": 0}),
    ],
)
def test_bad_planner_options_are_rejected(factory, options):
    with pytest.raises(InputError):
        factory(**options)


def test_builtin_examples_are_usable():
    assert all(e.questions and all(q.endswith("?") for q in e.questions) for e in BUILTIN_EXAMPLES)
    picked = ExampleSelector(BUILTIN_EXAMPLES, embed=hashed_bag_of_words).select(CLAIM, 1)
    assert picked[0].example_id == "builtin-1"
