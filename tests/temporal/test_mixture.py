import datetime as dt
import math

import pytest
import torch

from factscout.errors import InputError
from factscout.records import Claim, Hit, Ranking
from factscout.temporal.joint import FrozenEncoder, JointModel
from factscout.temporal.listmle import listmle_loss
from factscout.temporal.mixture import (
    DELTA_FEATURES,
    delta_features,
    mixture_ranking,
    mixture_scores,
    normalized_scores,
    shipped_weights,
)
from factscout.temporal.rankings import METHODS, RANKINGS, temporal_scores
from factscout.temporal.rerank import TimeAwareReranker
from factscout.training.temporal.trainer import mixture_rank_loss

F = {name: i for i, name in enumerate(DELTA_FEATURES)}


def test_delta_features_on_hand_made_dates():
    claim = dt.date(2016, 3, 1)
    dates = [None, dt.date(2016, 3, 1), dt.date(2013, 3, 1), dt.date(2019, 3, 2), dt.date(2016, 2, 26)]
    deltas = [None if d is None else (d - claim).days for d in dates]
    assert deltas == [None, 0, -1096, 1096, -4]
    undated, same, years_before, years_after, days_before = delta_features(deltas)
    assert undated == [1.0] + [0.0] * (len(DELTA_FEATURES) - 1)
    assert same[F["same day"]] == 1.0 and sum(same) == 1.0  # no direction, no bucket, log1p(0) = 0
    assert years_before[F["before claim"]] == 1.0 and years_before[F["after claim"]] == 0.0
    assert years_before[F["|Δt| <= 3650 d"]] == 1.0  # 1096 days: past the 1095-day bucket
    assert years_before[F["|Δt| <= 1095 d"]] == 0.0
    assert years_before[-1] == pytest.approx(-math.log1p(1096) / 10)
    assert years_after[F["after claim"]] == 1.0 and years_after[-1] == pytest.approx(math.log1p(1096) / 10)
    assert days_before[F["|Δt| <= 7 d"]] == 1.0
    # exactly one distance bucket for dated evidence not from the claim's day
    buckets = [i for n, i in F.items() if n.startswith("|Δt|")]
    assert [sum(row[i] for i in buckets) for row in (undated, same, years_before, years_after)] == [0, 0, 1, 1]
    assert delta_features([40000])[0][F["|Δt| > 3650 d"]] == 1.0


def test_delta_features_reject_non_integer_days():
    with pytest.raises(InputError, match="whole days"):
        delta_features([1.5])  # type: ignore[list-item]


PAPER = (-3, 0, -8791, 95)  # the paper's worked example


@pytest.mark.parametrize("method", METHODS)
def test_one_hot_mixture_is_the_single_ranking(method):
    one_hot = {m: float(m == method) for m in METHODS}
    for deltas in (PAPER, (None, 5, -5, 0, None, -400), (None, None)):
        single = temporal_scores(method, deltas)
        mixed = mixture_ranking(deltas, one_hot)
        assert mixed.scores == single.scores
        assert mixed.mask == single.mask


def test_mixture_scores_by_hand():
    # normalised scores of PAPER: evidence-based (2,3,1,4)/4, claim-based (2,3,1,0)/3
    weights = {"evidence-based date": 0.5, "claim-based date": 0.5}
    assert mixture_scores(PAPER, weights) == pytest.approx(
        [(2 / 4 + 2 / 3) / 2, (3 / 4 + 1) / 2, (1 / 4 + 1 / 3) / 2, 0.5]
    )
    assert normalized_scores(PAPER)[1] == pytest.approx([3 / 4, 1.0, 1.0, 3 / 4])


def test_mixture_weights_are_checked():
    with pytest.raises(InputError, match="sum to 1"):
        mixture_scores(PAPER, {"evidence-based date": 0.5})
    with pytest.raises(InputError, match="known"):
        mixture_scores(PAPER, {"newest": 1.0})


def test_one_hot_mixture_loss_is_the_single_listmle():
    gen = torch.Generator().manual_seed(0)
    ranking = torch.randn(3, 4, generator=gen)
    rows = torch.arange(3)
    targets = {}
    for m in METHODS:
        s = [temporal_scores(m, d) for d in (PAPER, (None, 5, -5, 0), (1, 2, 3, None))]
        targets[m] = (torch.tensor([x.scores for x in s], dtype=torch.float32), torch.tensor([x.mask for x in s]))
    for k, m in enumerate(METHODS):
        weights = torch.nn.functional.one_hot(torch.tensor(k), len(METHODS)).float()
        expected = listmle_loss(ranking, *targets[m])
        assert float(mixture_rank_loss(ranking, targets, rows, weights)) == pytest.approx(float(expected))
    half = torch.tensor([0.5, 0.5, 0.0, 0.0])
    both = 0.5 * listmle_loss(ranking, *targets[METHODS[0]]) + 0.5 * listmle_loss(ranking, *targets[METHODS[1]])
    assert float(mixture_rank_loss(ranking, targets, rows, half)) == pytest.approx(float(both))


def test_joint_model_mixture_prior_with_one_hot_weights_follows_that_ranking():
    """With a zero ranking module and a one-hot π, the evidence weights are softmax(γ t_k): the
    order of that one ranking."""
    torch.manual_seed(0)
    model = JointModel(FrozenEncoder(4, 8), FrozenEncoder(4, 8), n_labels=2, meta_vocab=1, hidden=8, mixture=True)
    with torch.no_grad():
        for p in model.rank_mlp.parameters():
            p.zero_()
        model.mixture_logits.copy_(torch.tensor([0.0, 0.0, 50.0, 0.0]))  # claim-centered distance
        model.prior_scale.fill_(5.0)
    model.eval()
    captured = {}
    model.label_mlp.register_forward_hook(lambda _m, _i, out: captured.setdefault("o", out))
    temporal = torch.tensor([normalized_scores(PAPER)], dtype=torch.float32)
    batch = {
        "claim": torch.zeros(1, 4),
        "evidence": torch.zeros(1, 4, 4),
        "present": torch.ones(1, 4, dtype=torch.bool),
        "meta": torch.zeros(1, 1, dtype=torch.long),
        "label_mask": torch.ones(1, 2, dtype=torch.bool),
        "temporal": temporal,
    }
    logits, ranking = model(batch)
    assert torch.all(ranking == 0)  # ListMLE's scores are the module's alone
    weights = torch.softmax(5.0 * temporal[0, :, 2], dim=0)
    assert torch.allclose(logits[0], (weights.unsqueeze(-1) * captured["o"][0]).sum(0), atol=1e-5)
    assert model.mixture_weights()[2] == pytest.approx(1.0)


def test_learned_mixture_is_a_registered_ranking_check_can_use():
    assert "learned mixture" in RANKINGS
    weights = shipped_weights()
    assert set(weights) == set(METHODS) and sum(weights.values()) == pytest.approx(1.0)
    claim = Claim("c1", "x", date=dt.date(2020, 1, 10))
    ranking = Ranking("c1", [Hit("a", 1.0, 0), Hit("b", 0.5, 0), Hit("c", 0.2, 0)])
    published = {"a": dt.date(2010, 1, 1), "b": dt.date(2020, 1, 9), "c": None}
    out = TimeAwareReranker("learned mixture", 1.0).rerank(claim, ranking, published)
    expected = mixture_ranking([-3661, -1, None], weights).scores
    assert next(h.passage_id for h in out.hits) == ("b" if expected[1] > expected[0] else "a")


def test_check_settings_accept_the_learned_mixture():
    from factscout.check import CheckSettings

    assert CheckSettings(temporal="learned mixture").temporal == "learned mixture"
