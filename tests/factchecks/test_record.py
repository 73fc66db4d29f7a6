import datetime as dt

import pytest

from factscout.errors import InputError
from factscout.factchecks import FactCheck, normalise_verdict


def test_a_record_survives_its_json_form():
    record = FactCheck(
        "x1", "The claim.", "politifact.com", "Pants on Fire", "refuted", "https://p.org/a", dt.date(2020, 4, 9),
        "Title", "Summary.", ("claimdecomp", "averitec"), ("none stated", "CC BY-NC 4.0"),
    )  # fmt: skip
    assert FactCheck.from_json(record.to_json()) == record
    assert record.contents == "Title\nThe claim.\nSummary."


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"claim": "c", "publisher": "p"}, "fact_check_id"),
        ({"fact_check_id": "a", "claim": " ", "publisher": "p"}, "claim"),
        ({"fact_check_id": "a", "claim": "c", "publisher": "p", "date": "09/04/2020"}, "date"),
        ({"fact_check_id": "a", "claim": "c", "publisher": "p", "normalised_verdict": "fake"}, "normalised verdict"),
        ({"fact_check_id": "a", "claim": "c", "publisher": "p", "rating": "x"}, "unknown field"),
    ],
)
def test_a_bad_row_names_where_and_what(row, problem):
    with pytest.raises(InputError, match=rf"^f\.jsonl:3: .*{problem}"):
        FactCheck.from_json(row, where="f.jsonl:3")


@pytest.mark.parametrize(
    ("published", "expected"),
    [
        ("false", "refuted"), ("Pants on Fire!", "refuted"), ("fiction!", "refuted"), ("4 Pinnochios", "refuted"),
        ("mostly false", "refuted"), ("barely-true", "mixed"), ("half-true", "mixed"), ("truth! & fiction!", "mixed"),
        ("2 pinnochios", "mixed"), ("mostly true", "supported"), ("Supported", "supported"), ("truth!", "supported"),
        ("unproven", "unverifiable"), ("Not Enough Evidence", "unverifiable"), ("0", "refuted"), ("10", "supported"),
        ("none", "unknown"), ("", "unknown"), ("opinion!", "other"), ("statirical reports", "other"),
        ("Conflicting Evidence/Cherrypicking", "mixed"), ("determination: false", "refuted"),
    ],
)  # fmt: skip
def test_published_verdicts_map_onto_one_scale(published, expected):
    assert normalise_verdict(published) == expected
