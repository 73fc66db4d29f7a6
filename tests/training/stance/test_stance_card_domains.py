"""The shipped stance cross-encoder's card: data and licences of every origin, metrics per domain,
the consistency rates, the file's sha256 and the reproduce commands; and the section writer."""

from __future__ import annotations

import hashlib
from pathlib import Path

from factscout.training.stance.card_domains import BEGIN, END, rewrite, section

MODELS = Path(__file__).resolve().parents[3] / "src" / "factscout" / "verify" / "models"


def test_shipped_card_says_data_licences_domains_sha256_and_command():
    card = (MODELS / "STANCE_CROSS_CARD.md").read_text()
    sha = hashlib.sha256((MODELS / "stance_cross_minilm.npz").read_bytes()).hexdigest()
    assert sha in card
    for origin in (
        "scifact",
        "covidfact",
        "averitec",
        "checkthat",
        "checkcovid",
        "citint",
        "healthver",
        "anli",
        "sick",
    ):
        assert f"| {origin} |" in card
    for licence in ("CC BY-NC 4.0", "CC BY-NC-SA 3.0", "MIT", "CC BY 4.0"):
        assert licence in card
    assert "| model | scifact | healthver | checkcovid | citint | mean |" in card
    assert "(this model)" in card and "subject_decided" in card
    assert "factscout train stance-cross" in card and "stance_gpu" in card


def test_section_is_rewritten_in_place():
    counts = {
        "licences": {"sick": ["CC BY-NC-SA 3.0"], "aug:negation": ["x"]},
        "by_origin": {"sick": {"sick": 10, "aug:negation": 2}},
    }
    domains = {"cross": {"mean_dev": 0.5, "scifact": 0.4, "healthver": 0.5, "checkcovid": 0.6, "citint": 0.5}}
    rates = dict.fromkeys(
        ("self", "paraphrase", "negation", "direction", "unrelated", "subject_decided", "challenge_decided"), 0.5
    )
    text = section(counts, domains, {"models": {"cross": rates}}, "cross")
    assert "| sick | 12 | CC BY-NC-SA 3.0 |" in text
    assert "| `cross` (this model) | 0.4000 | 0.5000 | 0.6000 | 0.5000 | 0.5000 |" in text
    once = rewrite("# card\n", text)
    assert once.count(BEGIN) == 1 and rewrite(once, text) == once
    assert rewrite(once, text.replace("0.4000", "0.4100")).count(END) == 1
