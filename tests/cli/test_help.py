"""Every command's ``--help`` works, keeps its options, and lists the names its registries know."""

import pytest
import typer.main
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.collect.providers import PROVIDERS
from factscout.datasets import DATASETS
from factscout.fuse import FUSIONS
from factscout.plan import PLANNERS
from factscout.retrieve import RETRIEVERS
from factscout.rewrite.io import BASELINES, shipped_policies
from factscout.select import SELECTORS
from factscout.verify import STANCE_MODELS, VERDICT_METHODS

runner = CliRunner()

# the CLI's options, command by command (--no-x forms included): a refactor must not add, drop or rename one;
# the names before the one vocabulary (--claims, --queries, --corpus, --pairs; --out, --run) stay as aliases
OPTIONS = {
    "index": "--add-sentences --alpha --b --corpus --data --dataset --encode-batch --encoder --fusion --index --input --k1 --no-sentences --output "
    "--pg-name --ray --retriever --sentences --shards --stride --window -i -o",
    "search": "--batch-size --by-doc --date --date-filter --fast --fusion --fusion-weights --index --input --k --no-date-filter "
    "--output --queries --query --ray --run --undated -i -o",
    "plan": "--alpha --claims --gamma --input --justification --lambda --mmr --out --output --planner -i -o",
    "evaluate": "--compare --input --json --metrics --per-query --qrels --run -i",
    # check and serve: one option per CheckSettings field (--max-queries ... --threshold came with them)
    "check": "--claims --date --date-filter --depth --document --factchecks --fast --format --fusion --html --index --input --json --max-queries "
    "--min-confidence --min-evidence --min-score --min-share --min-stance-confidence --min-verdict-confidence --no-date-filter --no-fast --out --output "
    "--passages --planner --ray --rerank --rerank-depth --selector --server --stance --temporal --temporal-weight --threshold --top --verdict --workers "
    "-i -o claim",
    "claims": "--batch-size --format --min-score --model --output --sentences --top -o document",
    "stance": "--batch-size --device --input --out --output --pairs --stance -i -o",
    "trajectories": "--claims --depth --index --input --keep-set --negatives --no-keep-set --out --output --qrels --ray --reward --seed --top-n "
    "--workers -i -o",
    "rewrite": "--claim-id --claims --index --input --max-steps --out --output --policy --qrels --reward --seed -i -o claim",
    "demo": "--claims --dataset --heldout --index --k --planner --retriever --timings --wait-for-sentences",
    "serve": "--depth --factchecks --fast --fusion --host --index --max-pending --max-queries --min-confidence --min-evidence "
    "--min-share --min-stance-confidence --min-verdict-confidence --no-fast --passages --planner --policy --port --qrels --rerank --rerank-depth --selector --stance "
    "--state --temporal --temporal-weight --threads --threshold --token --verdict",
    "mcp": "--depth --factchecks --fast --fusion --host --http --index --max-pending --max-queries --min-confidence --min-evidence "
    "--min-share --min-stance-confidence --min-verdict-confidence --no-fast --passages --planner --port --rerank --rerank-depth "
    "--selector --stance --temporal --temporal-weight --threads --threshold --token --verdict",
    "collect": "--allow-host --base-url --claims --distractors --drift-from --exclude-domain --host-interval --input "
    "--min-interval --no-crawl --no-mmr --out --output --planner --provider --replay --results --threshold -i -o",
}
COMMANDS = [*OPTIONS, "train"]


def help_of(*args: str) -> str:
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


def option_help(command: str, option: str) -> str:
    (param,) = [p for p in typer.main.get_command(app).commands[command].params if option in p.opts]
    return param.help or ""


def test_the_root_help_lists_every_command_in_order():
    text = help_of()
    assert [c for c in COMMANDS if c in text] == COMMANDS
    positions = [
        text.index(f" {c} ") for c in ["index", "search", "plan", "evaluate", "check", "stance", "trajectories"]
    ]
    assert positions == sorted(positions)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    assert "usage" in help_of(command).lower()


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_options_are_unchanged(command):
    params = typer.main.get_command(app).commands[command].params
    assert sorted(o for p in params for o in [*p.opts, *getattr(p, "secondary_opts", [])]) == OPTIONS[command].split()


@pytest.mark.parametrize(
    ("command", "option", "names"),
    [
        ("index", "--retriever", RETRIEVERS.names()),
        ("plan", "--planner", PLANNERS.names()),
        ("check", "--planner", PLANNERS.names()),
        ("search", "--fusion", FUSIONS.names()),
        ("check", "--fusion", FUSIONS.names()),
        ("check", "--selector", SELECTORS.names()),
        ("check", "--stance", STANCE_MODELS.names()),
        ("stance", "--stance", STANCE_MODELS.names()),
        ("check", "--verdict", VERDICT_METHODS.names()),
        ("rewrite", "--policy", [*shipped_policies(), *BASELINES]),
        ("serve", "--policy", [*shipped_policies(), *BASELINES]),
        ("collect", "--provider", PROVIDERS.names()),
        ("demo", "--retriever", [n for n in RETRIEVERS.names() if not n.startswith("pg-")]),
        ("demo", "--dataset", [n for n in DATASETS.names() if n.startswith("scifact")]),
    ],
)
def test_help_lists_the_registered_names(command, option, names):
    words = set(option_help(command, option).replace(",", " ").split())
    assert names and set(names) <= words
    text = help_of(command)
    assert all(name in text for name in names)


def test_min_confidence_help_states_the_shipped_threshold():
    import json
    from pathlib import Path

    import factscout.verify

    shipped = Path(factscout.verify.__file__).parent / "models" / "verdict_confidence.json"
    threshold = json.loads(shipped.read_text())["threshold"]
    words = " ".join(option_help("check", "--min-confidence").split())
    if threshold is None:
        assert "The shipped model has none" in words and "nothing is withheld" in words
    else:  # a shipped threshold must be named in the help
        assert f"{threshold:g}" in words
