import itertools
import math

import numpy as np
import pytest
import torch

from factscout.temporal.listmle import listmle_loss


def brute_force_probability(scores, permutation):
    """Plackett–Luce probability of ``permutation`` (best first), computed term by term."""
    p = 1.0
    rest = list(permutation)
    for item in permutation:
        p *= math.exp(scores[item]) / sum(math.exp(scores[j]) for j in rest)
        rest.remove(item)
    return p


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_matches_brute_force_on_every_permutation(n):
    rng = np.random.default_rng(n)
    scores = rng.normal(size=n) * 2
    total = 0.0
    for perm in itertools.permutations(range(n)):
        target = np.zeros(n)
        for pos, item in enumerate(perm):
            target[item] = n - pos  # the item at position 0 has the highest relevance
        loss = listmle_loss(torch.tensor(scores), torch.tensor(target), reduction="none")
        p = brute_force_probability(scores, perm)
        assert loss.item() == pytest.approx(-math.log(p), rel=1e-9, abs=1e-9)
        total += p
    assert total == pytest.approx(1.0)


def test_mask_drops_items_from_ranking_and_denominators():
    scores = torch.tensor([0.3, -1.2, 2.0, 0.7, 5.0])
    target = torch.tensor([2.0, 3.0, 1.0, 0.0, 9.0])
    mask = torch.tensor([True, True, True, False, False])
    got = listmle_loss(scores, target, mask, reduction="none").item()
    # ranked items 0, 1, 2 by target: 1, 0, 2
    want = -math.log(brute_force_probability([0.3, -1.2, 2.0], (1, 0, 2)))
    assert got == pytest.approx(want, rel=1e-6)


def test_ties_keep_list_order():
    scores = torch.tensor([1.0, 2.0, 0.5])
    target = torch.tensor([1.0, 1.0, 0.0])
    got = listmle_loss(scores, target, reduction="none").item()
    assert got == pytest.approx(-math.log(brute_force_probability([1.0, 2.0, 0.5], (0, 1, 2))), rel=1e-6)


def test_fully_masked_and_single_item_lists_give_zero_and_no_nan_gradient():
    scores = torch.tensor([[0.1, 0.2, 0.3], [1.0, 2.0, 3.0]], requires_grad=True)
    target = torch.tensor([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]])
    mask = torch.tensor([[False, False, False], [True, False, False]])
    per_list = listmle_loss(scores, target, mask, reduction="none")
    assert per_list.tolist() == [0.0, 0.0]
    loss = listmle_loss(scores, target, mask)
    loss.backward()
    assert loss.item() == 0.0
    assert torch.isfinite(scores.grad).all()


def test_mean_averages_only_lists_that_rank_something():
    scores = torch.tensor([[0.0, 1.0], [0.0, 1.0]])
    target = torch.tensor([[2.0, 1.0], [2.0, 1.0]])
    mask = torch.tensor([[True, True], [False, True]])
    one = listmle_loss(scores[:1], target[:1], reduction="none").item()
    assert listmle_loss(scores, target, mask).item() == pytest.approx(one)


def test_gradient_descent_learns_the_target_order():
    torch.manual_seed(0)
    scores = torch.zeros(6, requires_grad=True)
    target = torch.tensor([3.0, 1.0, 6.0, 2.0, 5.0, 4.0])
    opt = torch.optim.SGD([scores], lr=0.5)
    for _ in range(200):
        opt.zero_grad()
        listmle_loss(scores, target).backward()
        opt.step()
    assert torch.argsort(scores, descending=True).tolist() == [2, 4, 5, 0, 3, 1]


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        listmle_loss(torch.zeros(3), torch.zeros(4))
