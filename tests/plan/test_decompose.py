"""The offline linguistic decomposer: hand-checked decompositions and plan invariants."""

import datetime as dt
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factscout.errors import InputError, MissingDependency
from factscout.plan import decompose as dc
from factscout.plan import make_planner
from factscout.plan.decompose import DecomposePlanner
from factscout.records import Claim

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def nlp():
    return dc.load_nlp()


@pytest.fixture(scope="module")
def planner(nlp):
    return DecomposePlanner()


def texts(aspects, kind=None):
    return [a.text for a in aspects if kind is None or a.kind == kind]


def key(text):
    return text.lower().rstrip("?.! ")


# -- hand-written decompositions -------------------------------------------------------------


def test_coordinated_predicates_share_their_subject(nlp):
    assert texts(dc.clause_aspects(nlp("The governor raised taxes and cut spending."))) == [
        "governor raised taxes",
        "governor cut spending",
    ]


def test_coordinated_objects_become_one_statement_each(nlp):
    assert texts(dc.clause_aspects(nlp("The city banned plastic bags and straws."))) == [
        "city banned plastic bags",
        "city banned straws",
    ]


def test_relative_clause_gets_the_noun_it_modifies_as_subject(nlp):
    clauses = texts(dc.clause_aspects(nlp("Photo shows Nigerian soldiers who fled from Boko Haram in 2019.")))
    assert "Nigerian soldiers fled Boko Haram 2019" in clauses


def test_a_single_statement_has_no_clause_aspects(nlp):
    assert dc.clause_aspects(nlp("Kenya has the highest unemployment rate in East Africa.")) == []


def test_percentage_query_keeps_the_number_its_unit_and_subject(nlp):
    quantities = texts(dc.quantity_aspects(nlp("Unemployment in Kenya rose by 20% between 2010 and 2015.")))
    assert any("20%" in q and "Unemployment" in q and "Kenya" in q for q in quantities), quantities


def test_money_query_keeps_the_amount_and_who_spent_it(nlp):
    quantities = texts(dc.quantity_aspects(nlp("Since 2010, the US has spent more than $2 trillion on the war.")))
    assert any("$2 trillion" in q and "US" in q and "spent" in q for q in quantities), quantities


def test_comparison_verb_is_a_quantity_aspect(nlp):
    quantities = texts(dc.quantity_aspects(nlp("Crime doubled in Chicago.")))
    assert "Crime doubled Chicago" in quantities


def test_date_interval_is_kept_with_its_statement(nlp):
    dates = texts(dc.date_aspects(nlp("Unemployment in Kenya rose by 20% between 2010 and 2015.")))
    assert dates == ["Unemployment Kenya rose between 2010 and 2015"]


def test_relative_date_gets_the_absolute_year_from_the_claim_date(nlp):
    dates = texts(dc.date_aspects(nlp("Says that crime doubled last year in Chicago."), dt.date(2020, 5, 1)))
    assert dates == ["crime doubled last year 2019"]


def test_entity_pair_with_its_linking_predicate(nlp):
    entities = texts(dc.entity_aspects(nlp("Joe Biden visited Kenya in 2019.")))
    assert "Joe Biden visited Kenya" in entities


def test_focus_halves_never_split_a_name(nlp):
    focus = texts(dc.focus_aspects(nlp("Kenya has the highest unemployment rate in East Africa.")))
    assert focus == ["Kenya highest unemployment rate", "East Africa"]


def test_drop_leaves_out_each_of_three_parts(nlp):
    doc = nlp("Unemployment in Kenya rose by 20% between 2010 and 2015.")
    parts = dc.phrase_parts(doc, 3)
    assert [dc.keywords(p) for p in parts] == ["Unemployment Kenya", "rose 20%", "2010 2015"]
    assert texts(dc.drop_aspects(doc)) == [
        "rose 20% 2010 2015",
        "Unemployment Kenya 2010 2015",
        "Unemployment Kenya rose 20%",
    ]


def test_keywords_drop_function_words_but_keep_names_numbers_and_signs(nlp):
    assert dc.keywords(nlp("The US has spent 20% of $4 billion on it.")) == "US spent 20% $4 billion"


# -- plans -----------------------------------------------------------------------------------


def test_plan_puts_the_claim_first_then_decompose_queries(planner):
    claim = Claim("c1", "The governor raised taxes and cut spending in 2019.", dt.date(2020, 1, 2))
    plan = planner.plan(claim)
    assert plan[0].text == claim.text and plan[0].query_id == "c1" and plan[0].origin == "claim"
    assert [q.query_id for q in plan[1:]] == [f"c1#{i}" for i in range(1, len(plan))]
    assert all(q.origin == "decompose" and q.claim_id == "c1" and q.date == claim.date for q in plan[1:])
    assert 2 <= len(plan) <= 8


def test_plan_shows_the_clause_split_when_there_is_room():
    claim = Claim("c2", "The governor raised taxes and cut spending.")
    plan = DecomposePlanner(max_queries=20).plan(claim)
    assert {"governor raised taxes", "governor cut spending"} <= {q.text for q in plan}


def test_plan_is_deterministic_and_plan_many_agrees(planner):
    claims = [
        Claim("a", "Unemployment in Kenya rose by 20% between 2010 and 2015."),
        Claim("b", "Joe Biden wants to ban fracking, raise taxes by $4 trillion and abolish private insurance."),
    ]
    first = [planner.plan(c) for c in claims]
    assert [planner.plan(c) for c in claims] == first
    assert planner.plan_many(claims) == first


def test_max_queries_and_include_claim():
    claim = Claim("c", "The governor raised taxes and cut spending in 2019.")
    assert [q.text for q in DecomposePlanner(max_queries=1).plan(claim)] == [claim.text]
    plan = DecomposePlanner(include_claim=False, max_queries=3).plan(claim)
    assert len(plan) == 3 and all(q.origin == "decompose" for q in plan)


def test_kinds_restrict_the_aspects():
    claim = Claim("c", "Unemployment in Kenya rose by 20% between 2010 and 2015.")
    plan = DecomposePlanner(kinds=["date"]).plan(claim)
    assert [q.text for q in plan[1:]] == ["Unemployment Kenya rose between 2010 and 2015"]


def test_bad_options_are_rejected():
    with pytest.raises(InputError, match="max_queries"):
        DecomposePlanner(max_queries=0)
    with pytest.raises(InputError, match="known: focus"):
        DecomposePlanner(kinds=["clauses"])


def test_registered_as_decompose():
    planner = make_planner("decompose", max_queries=4)
    assert isinstance(planner, DecomposePlanner) and planner.name == "decompose"


@pytest.mark.parametrize(
    "text",
    [
        "123 456",
        "!!!",
        "???",
        "日本語のテキストです",
        "Le gouvernement a augmenté les impôts de 20% en 2019.",
        "x",
        "🙂🙂 vaccine 🙂",
        '"""',
        "and and and or or",
        "50%",
        " ".join(["The senator said that the bill, which passed in 2019, cut taxes by $4 billion"] * 60),
    ],
)
def test_odd_input_never_crashes(planner, text):
    plan = planner.plan(Claim("odd", text))
    assert plan and plan[0].text == text
    assert len({key(q.text) for q in plan}) == len(plan)


def test_missing_spacy_model_names_the_install_command(monkeypatch):
    import spacy

    def fail(name, **_):
        raise OSError(f"[E050] Can't find model '{name}'")

    monkeypatch.setattr(spacy, "load", fail)
    with pytest.raises(MissingDependency, match=r"factscout\[nlp\]"):
        DecomposePlanner(model="no_such_model_xyz").plan(Claim("c", "A claim."))


def test_missing_spacy_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.raises(MissingDependency, match=r"pip install 'factscout\[nlp\]'"):
        dc.load_nlp("another_missing_model")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=160).filter(lambda s: s.strip()))
def test_property_never_crashes_never_empty_no_duplicates(planner, text):
    plan = planner.plan(Claim("p", text))
    assert plan and plan[0].query_id == "p"
    assert len(plan) <= 8
    assert len({key(q.text) for q in plan}) == len(plan)
    assert all(q.text.strip() for q in plan)


def test_a_rule_that_trips_on_a_parse_is_skipped_with_a_warning_and_a_bug_propagates(nlp, monkeypatch, caplog):
    import logging

    from factscout.plan import aspects

    doc = nlp("Vitamin D prevents falls in the elderly.")

    def trips(doc, _):
        raise IndexError("token 99")

    monkeypatch.setitem(aspects._RULES, "focus", trips)
    with caplog.at_level(logging.WARNING, logger="factscout.plan.aspects"):
        found = aspects.decompose_doc(doc)
    assert found, "the other rules still apply"
    assert "decompose rule focus skipped" in caplog.text and "IndexError: token 99" in caplog.text

    def bug(doc, _):
        raise RuntimeError("a bug")

    monkeypatch.setitem(aspects._RULES, "focus", bug)
    with pytest.raises(RuntimeError, match="a bug"):
        aspects.decompose_doc(doc)


def test_a_text_spacy_fails_on_is_a_recorded_failure_not_a_silent_claim_only_plan(monkeypatch):
    """issue 48: the planner's failure reaches the report (plan_all's failures -> provenance.planner_error)."""
    from factscout.plan import decompose
    from factscout.plan.base import plan_all
    from factscout.records import Claim

    planner = decompose.DecomposePlanner()
    real = planner.nlp

    class Fussy:
        def __call__(self, text):
            if "POISON" in text:
                raise RecursionError("maximum recursion depth exceeded")
            return real(text)

        def pipe(self, texts, batch_size=64):
            return [self(t) for t in texts]

    monkeypatch.setattr(decompose.DecomposePlanner, "nlp", property(lambda self: Fussy()))
    claims = [Claim("ok", "Vitamin D reduces the risk of falls in older adults."), Claim("bad", "POISON claim text")]
    queries, failures = plan_all(planner, claims)
    assert [f.claim_id for f in failures] == ["bad"]
    assert "spaCy could not parse the claim: RecursionError" in failures[0].error
    assert [q.text for q in queries if q.claim_id == "bad"] == ["POISON claim text"]  # searched alone
    assert len([q for q in queries if q.claim_id == "ok"]) > 1  # the other claim keeps its plan
