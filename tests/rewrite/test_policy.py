"""Rewrite policies: the decision transformer, the one-action classifier, the baselines, the
rewrite trace, save/load and the `factscout rewrite` command, on a tiny corpus with a
hand-made BFS file. States use the model-free hashing encoder so the tests stay fast."""

import json

import pytest
import torch
from helpers import REWRITE_CLAIM, REWRITE_CORPUS
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.errors import DataNotFound, InputError, UnknownName
from factscout.formats.beir import write_qrels
from factscout.formats.jsonl import write_jsonl
from factscout.records import Claim
from factscout.retrieve import build_index, build_retriever
from factscout.rewrite.actions import N_ACTIONS, action_mask
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.policy import (
    ClassifierConfig,
    DecisionTransformerPolicy,
    DtConfig,
    Episode,
    OneActionClassifier,
    OriginalPolicy,
    RandomEditPolicy,
    load_policy,
    make_policy,
    returns_to_go,
    rewrite,
    rewrite_all,
    save_policy,
)
from factscout.rewrite.trajectories import read_trajectories
from factscout.training.rewrite.trainer import TrainSettings, train_classifier, train_decision_transformer

CORPUS = REWRITE_CORPUS
QRELS = {"c1": {"rel": 1}, "c3": {"f2": 1}, "c5": {"t1": 1}}
C1 = REWRITE_CLAIM
C3 = Claim("c3", "Trains carry bread to the sea")  # no edit improves it
C5 = Claim("c5", "Rivers flow to the sea with trains")


def _row(cid, seq, step, query, action, text, nxt, reward, next_reward):
    return {
        "claim_id": cid,
        "sequence": seq,
        "step": step,
        "query": query,
        "action": action,
        "action_text": text,
        "next_query": nxt,
        "reward": reward,
        "next_reward": next_reward,
    }


# BM25 on CORPUS: removing "Committee" then "weather" takes c1 from AP 1/3 to 1/2 to 1;
# removing "flow" takes c5 from 1/2 to 1 (as tests/rewrite/test_bfs.py's BFS finds).
BFS_ROWS = [
    _row("c1", 0, 0, C1.text, 96, "remove 'Committee' at 0", "report on solar weather", 1 / 3, 0.5),
    _row("c1", 0, 1, "report on solar weather", 99, "remove 'weather' at 3", "report on solar", 0.5, 1.0),
    _row("c5", 0, 0, C5.text, 97, "remove 'flow' at 1", "Rivers to the sea with trains", 0.5, 1.0),
]
TINY_DT = DtConfig(hidden_size=32, n_layer=1, n_head=2, dropout=0.0, encoder="hashing")
FAST = TrainSettings(epochs=40, lr=3e-3, batch_size=8, seed=0)
SENTENCES = [C1.text, C3.text, C5.text, "The senator voted against the new budget.", "Prices rose sharply in 2020"]


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Tiny models train ~30x faster on one thread than on two busy shared cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def bfs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bfs") / "bfs.jsonl"
    write_jsonl(path, BFS_ROWS)
    return path


@pytest.fixture(scope="module")
def trajectories(bfs_file):
    return read_trajectories(bfs_file)


@pytest.fixture(scope="module")
def env():
    return SearchEnvironment(build_retriever(CORPUS, "bm25"), QRELS)


@pytest.fixture(scope="module")
def trained(trajectories):
    return train_decision_transformer(trajectories, TINY_DT, FAST)


def test_returns_to_go_dense_and_sparse():
    assert returns_to_go([0.2, 0.5], [0.5, 0.9], "dense") == pytest.approx([0.7, 0.4])
    assert returns_to_go([0.2, 0.5], [0.5, 0.9], "sparse") == pytest.approx([0.7, 0.7])
    with pytest.raises(UnknownName):
        returns_to_go([0.1], [0.2], "delayed")  # type: ignore[arg-type]


class TestDecisionTransformer:
    def test_loss_falls_on_a_toy_set(self, trained):
        assert trained.examples == 2 and trained.skipped == 0
        assert trained.losses[-1] < 0.25 * trained.losses[0]
        assert trained.losses[0] > 1.0

    def test_learns_the_toy_actions(self, trained):
        assert rewrite(C1, trained.policy).actions[:2] == (96, 99)
        assert rewrite(C5, trained.policy).actions[0] == 97

    def test_deterministic_with_a_fixed_seed(self, trajectories, trained):
        again = train_decision_transformer(trajectories, TINY_DT, FAST)
        assert again.losses == trained.losses
        a, b = trained.policy.net.state_dict(), again.policy.net.state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a)
        other = train_decision_transformer(trajectories, TINY_DT, TrainSettings(epochs=40, lr=3e-3, seed=1))
        assert other.losses != trained.losses

    def test_sparse_variant_trains(self, trajectories):
        sparse = DtConfig(hidden_size=32, n_layer=1, n_head=2, dropout=0.0, encoder="hashing", reward="sparse")
        result = train_decision_transformer(trajectories, sparse, FAST)
        assert result.policy.reward == "sparse" and result.losses[-1] < result.losses[0]

    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_masking_never_yields_an_invalid_action(self, seed):
        torch.manual_seed(seed)
        policy = DecisionTransformerPolicy(TINY_DT)  # untrained: arbitrary logits
        for text in SENTENCES:
            mask = action_mask(text)
            for rtg in (1.0, 0.0, -5.0):
                choice = policy.choose(Episode((text,), (), (rtg,), mask))
                assert choice is not None and mask[choice]
            only = tuple(i == 100 for i in range(N_ACTIONS))
            assert policy.choose(Episode((text,), (), (1.0,), only)) == 100
            assert policy.choose(Episode((text,), (), (1.0,), (False,) * N_ACTIONS)) is None
            trace = rewrite(text, policy)
            assert len(trace.steps) <= 4
            for before, step in zip((text, *(s.query for s in trace.steps)), trace.steps, strict=False):
                assert action_mask(before)[step.action]

    def test_bad_configs(self):
        with pytest.raises(InputError, match="divisible"):
            DtConfig(hidden_size=30, n_head=4)
        with pytest.raises(UnknownName, match="reward mode"):
            DtConfig(reward="delayed")  # type: ignore[arg-type]
        with pytest.raises(UnknownName, match="hashing, minilm"):
            DtConfig(encoder="bert")
        with pytest.raises(InputError, match="fine-tuned"):
            DtConfig(encoder="hashing", finetune_encoder=True)


class TestClassifierAndBaselines:
    def test_classifier_trains_on_a_toy_set(self, trajectories):
        result = train_classifier(
            trajectories, ClassifierConfig(hidden=32, encoder="hashing"), TrainSettings(epochs=60, lr=1e-2)
        )
        assert result.examples == 2 and result.losses[-1] < 0.25 * result.losses[0]
        trace = rewrite(C1, result.policy)
        assert trace.actions == (96,)  # one edit only
        assert rewrite(C5, result.policy).actions == (97,)

    def test_negative_sequences_train_the_dt_but_not_the_classifier(self, bfs_file, tmp_path):
        # a random edit that hurt c1: "add synonym" somewhere, reward 1/3 -> 0.1
        bad = {**_row("c1", 1, 0, C1.text, 97, "remove 'report' at 1", "Committee on solar weather", 1 / 3, 0.1)}
        bad["negative"] = True
        path = tmp_path / "neg.jsonl"
        write_jsonl(path, [*BFS_ROWS, bad])
        with_neg = read_trajectories(path)
        assert [t.negative for t in with_neg] == [False, False, True]  # file order: c1, c5, then c1 again
        small = ClassifierConfig(hidden=32, encoder="hashing")
        assert train_classifier(with_neg, small, TrainSettings(epochs=2)).examples == 2  # negatives left out
        assert train_decision_transformer(with_neg, TINY_DT, TrainSettings(epochs=2)).examples == 3

    def test_random_policy_only_picks_valid_actions_and_is_seeded(self):
        for text in SENTENCES:
            for seed in range(5):
                trace = rewrite(text, RandomEditPolicy(seed))
                assert len(trace.steps) == 4
                query = text
                for step in trace.steps:
                    assert action_mask(query)[step.action]
                    query = step.query
                assert trace == rewrite(text, RandomEditPolicy(seed))
        assert rewrite(C1, RandomEditPolicy(0)) != rewrite(C1, RandomEditPolicy(1))

    def test_original_policy_makes_no_edit(self, env):
        trace = rewrite(C1, OriginalPolicy(), env)
        assert trace.steps == () and trace.final == C1.text
        assert trace.original_reward == pytest.approx(1 / 3) == trace.final_reward


class TestRewriteTrace:
    def test_trace_with_environment(self, trained, env):
        trace = rewrite(C1, trained.policy, env)
        assert trace.claim_id == "c1" and trace.original == C1.text and trace.measure == "AP@50"
        assert trace.original_reward == pytest.approx(1 / 3)
        assert [s.reward for s in trace.steps] == pytest.approx([0.5, 1.0])
        assert [s.label for s in trace.steps] == ["remove 'Committee' @0", "remove 'weather' @3"]
        assert trace.final == "report on solar" == trace.steps[-1].query
        assert trace.to_dict()["final_reward"] == 1.0
        json.dumps(trace.to_dict())

    def test_stops_when_no_edit_improves(self, env):
        assert rewrite(C3, RandomEditPolicy(0), env).steps == ()
        assert len(rewrite(C3, RandomEditPolicy(0)).steps) == 4  # no environment: max steps

    def test_max_steps_and_string_claims(self):
        trace = rewrite("Committee report on solar weather", RandomEditPolicy(3), max_steps=2)
        assert trace.claim_id == "claim" and len(trace.steps) == 2
        assert all(s.reward is None for s in trace.steps) and trace.measure is None
        with pytest.raises(InputError):
            rewrite("  ", OriginalPolicy())

    def test_rewrite_all_writes_plan_rows(self, trained, env):
        queries, failures = rewrite_all([C1, C5], trained.policy, env)
        assert failures == []
        assert [(q.query_id, q.claim_id, q.origin) for q in queries] == [
            ("c1", "c1", "rewrite"),
            ("c5", "c5", "rewrite"),
        ]
        assert queries[0].text == "report on solar"


class TestSaveLoad:
    def test_round_trip(self, trained, tmp_path):
        folder = save_policy(trained.policy, tmp_path / "dt")
        assert (folder / "policy.json").is_file() and (folder / "weights.safetensors").is_file()
        loaded = load_policy(folder)
        assert isinstance(loaded, DecisionTransformerPolicy) and loaded.config == TINY_DT
        for key, value in trained.policy.net.state_dict().items():
            assert torch.allclose(loaded.net.state_dict()[key], value.half().float())
        for text in SENTENCES:
            assert rewrite(text, loaded) == rewrite(text, trained.policy)
        assert json.loads((folder / "policy.json").read_text())["training"]["losses"][0] > 1.0

    def test_baselines_round_trip(self, tmp_path):
        assert load_policy(save_policy(RandomEditPolicy(7), tmp_path / "r")) == RandomEditPolicy(7)
        assert isinstance(load_policy(save_policy(OriginalPolicy(), tmp_path / "o")), OriginalPolicy)
        assert make_policy("random", seed=2) == RandomEditPolicy(2)

    def test_shipped_policies_by_name(self, trained, tmp_path, monkeypatch):
        import factscout.rewrite.io as policy_module

        monkeypatch.setattr(policy_module, "SHIPPED_DIR", tmp_path)
        save_policy(trained.policy, tmp_path / "toy-bm25")
        (tmp_path / "not-a-policy").mkdir()
        assert policy_module.shipped_policies() == ("toy-bm25",)
        loaded = make_policy("toy-bm25")
        assert isinstance(loaded, DecisionTransformerPolicy)
        assert rewrite(SENTENCES[0], loaded) == rewrite(SENTENCES[0], trained.policy)
        with pytest.raises(UnknownName, match="no rewrite policy 'toy-dense'; known: original, random, toy-bm25"):
            make_policy("toy-dense")

    def test_missing_and_corrupt_files(self, trained, tmp_path):
        with pytest.raises(DataNotFound, match="no rewrite policy"):
            load_policy(tmp_path / "nowhere")
        folder = save_policy(trained.policy, tmp_path / "dt")
        (folder / "weights.safetensors").write_bytes(b"not safetensors")
        with pytest.raises(InputError, match="corrupt"):
            load_policy(folder)
        (folder / "weights.safetensors").unlink()
        with pytest.raises(DataNotFound, match="weights"):
            load_policy(folder)
        (folder / "policy.json").write_text("{not json")
        with pytest.raises(InputError, match="unreadable"):
            load_policy(folder)
        (folder / "policy.json").write_text(
            json.dumps({"format": "factscout-rewrite-policy", "version": 1, "policy": "x"})
        )
        with pytest.raises(UnknownName, match="classifier, dt, original, pointer, random, ranker"):
            load_policy(folder)


@pytest.fixture(scope="module")
def cli_root(tmp_path_factory, trained):
    root = tmp_path_factory.mktemp("cli")
    build_index(CORPUS, root / "idx", "bm25")
    write_qrels(root / "qrels.tsv", QRELS)
    save_policy(trained.policy, root / "policy")
    write_jsonl(root / "claims.jsonl", [{"_id": c.claim_id, "text": c.text} for c in (C1, C3, C5)])
    return root


class TestCommandLine:
    def invoke(self, *args):
        return CliRunner().invoke(app, ["rewrite", *[str(a) for a in args]])

    def test_single_claim_with_rewards(self, cli_root):
        r = self.invoke(
            C1.text, "--index", cli_root / "idx", "--policy", cli_root / "policy", "--qrels", cli_root / "qrels.tsv",
            "--claim-id", "c1",
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        assert "remove 'Committee' @0: AP@50 0.33 → 0.50" in r.output
        assert "remove 'weather' @3: AP@50 0.50 → 1.00" in r.output
        assert "final query: report on solar" in r.output

    def test_single_claim_edits_only(self, cli_root):
        r = self.invoke(C1.text, "--index", cli_root / "idx", "--policy", cli_root / "policy")
        assert r.exit_code == 0, r.output
        assert "remove 'Committee' @0\n" in r.output and "AP@50" not in r.output
        assert "final query:" in r.output

    def test_missing_policy_is_a_clear_error(self, cli_root):
        r = self.invoke(C1.text, "--index", cli_root / "idx")
        assert r.exit_code == 2 and "no rewrite policy given" in r.output and "averitec-bm25" in r.output
        r = self.invoke(C1.text, "--index", cli_root / "idx", "--policy", cli_root / "nowhere")
        assert r.exit_code == 2 and "no rewrite policy at" in r.output

    def test_shipped_policy_by_name(self, cli_root):
        from factscout.rewrite.policy import shipped_policies

        assert {"averitec-bm25-classifier", "averitec-bm25-dt", "scifact-dense"} <= set(shipped_policies())
        assert isinstance(make_policy("averitec-bm25-classifier"), OneActionClassifier)
        r = self.invoke(C1.text, "--index", cli_root / "idx", "--policy", "averitec-bm25-classifier")
        assert r.exit_code == 0, r.output
        assert r.output.count(" @") == 1 and "final query:" in r.output  # one edit, described

    def test_claims_file_to_plan_rows(self, cli_root):
        out = cli_root / "queries.jsonl"
        r = self.invoke("--claims", cli_root / "claims.jsonl", "--index", cli_root / "idx", "--policy", cli_root / "policy",
                        "--out", out)  # fmt: skip
        assert r.exit_code == 0, r.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [(row["_id"], row["claim_id"], row["origin"]) for row in rows] == [
            ("c1", "c1", "rewrite"),
            ("c3", "c3", "rewrite"),
            ("c5", "c5", "rewrite"),
        ]
        # no qrels, no environment: the policy edits up to max steps
        assert rows[0]["text"] == rewrite(C1, load_policy(cli_root / "policy")).final
        r = self.invoke("--claims", cli_root / "claims.jsonl", "--index", cli_root / "idx", "--policy", cli_root / "policy",
                        "--out", out, "--qrels", cli_root / "qrels.tsv")  # fmt: skip
        assert r.exit_code == 0, r.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [row["text"] for row in rows] == ["report on solar", C3.text, "Rivers to the sea with trains"]

    def test_trainer_sub_command(self, bfs_file, tmp_path):
        r = CliRunner().invoke(app, ["train", "rewrite", "--trajectories", str(bfs_file), "--out", str(tmp_path / "clf"),
                                     "--policy", "classifier", "--encoder", "hashing", "--hidden", "16", "--epochs", "3"])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert "wrote classifier policy" in r.output
        assert load_policy(tmp_path / "clf").name == "classifier"
        r = CliRunner().invoke(app, ["train", "rewrite", "--trajectories", str(tmp_path / "none.jsonl"),
                                     "--out", str(tmp_path / "x")])  # fmt: skip
        assert r.exit_code == 2 and "no trajectories file" in r.output


@pytest.mark.slow
def test_finetuned_minilm_encoder_round_trip(trajectories, tmp_path):
    """The issue's joint training: MiniLM states fine-tuned with the transformer, saved with it."""
    config = DtConfig(hidden_size=32, n_layer=1, n_head=2, dropout=0.0, finetune_encoder=True)
    result = train_decision_transformer(trajectories, config, TrainSettings(epochs=8, lr=3e-3))
    assert result.losses[-1] < result.losses[0]
    loaded = load_policy(save_policy(result.policy, tmp_path / "ft"))
    assert loaded.net.encoder is not None
    assert any(k.startswith("encoder.") for k in loaded.net.state_dict())
    assert rewrite(C1, loaded).actions == rewrite(C1, result.policy).actions
