"""Saving and loading rewrite policies, and choosing one by name.

A policy is saved to a folder: ``policy.json`` (format, version, the policy's registered name,
its configuration, training notes) and, for the learned ones, ``weights.safetensors`` (the torch
state dict in float16), or for the ``ranker`` ``ranker.npz`` (plain arrays, no pickles) with
``idf.json.gz``. A ranker searches the endpoint it rewrites for: :func:`make_policy` binds it to
the ``retriever`` it is given. :func:`make_policy` takes such a folder, the name of a policy that ships
in ``rewrite/models/`` (``<dataset>-<retriever>``) or a baseline's name.
"""

from __future__ import annotations

import gzip
import json
import os
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import DataNotFound, InputError, MissingDependency, UnknownName
from factscout.formats.npz import save_npz
from factscout.nn import require_torch
from factscout.rewrite.base import REWRITE_POLICIES, RewritePolicy
from factscout.rewrite.keywords import IdfTable
from factscout.rewrite.networks import ClassifierConfig, DtConfig, build_net
from factscout.rewrite.pointer import PointerConfig, PointerPolicy, build_pointer_net
from factscout.rewrite.policies import (
    DecisionTransformerPolicy,
    LearnedPolicy,
    OneActionClassifier,
    OriginalPolicy,
    RandomEditPolicy,
)
from factscout.rewrite.ranker import RankerConfig, RankerPolicy, TokenModel, Trees

POLICY_FORMAT = "factscout-rewrite-policy"
POLICY_VERSION = 1
CONFIG_FILE = "policy.json"
WEIGHTS_FILE = "weights.safetensors"
IDF_FILE = "idf.json.gz"  # a pointer or ranker policy's document frequencies of the corpus it was trained for
RANKER_FILE = "ranker.npz"  # a ranker policy's token model and trees
SHIPPED_DIR = Path(__file__).parent / "models"  # trained policies that ship, one folder per <dataset>-<retriever>
_TORCH_HINT = "learned rewrite policies need torch and transformers: pip install 'factscout[dense]'"


POLICIES: dict[str, type[DecisionTransformerPolicy] | type[OneActionClassifier] | type[PointerPolicy]] = {
    "dt": DecisionTransformerPolicy,
    "classifier": OneActionClassifier,
    "pointer": PointerPolicy,
}
_CONFIGS: dict[str, type[DtConfig] | type[ClassifierConfig] | type[PointerConfig]] = {
    "dt": DtConfig,
    "classifier": ClassifierConfig,
    "pointer": PointerConfig,
}
BASELINES: dict[str, type[RandomEditPolicy] | type[OriginalPolicy]] = {
    "random": RandomEditPolicy,
    "original": OriginalPolicy,
}


def save_policy(policy: RewritePolicy, directory: str | os.PathLike[str]) -> Path:
    """Write ``policy`` to ``directory``: ``policy.json`` and, for a learned policy,
    ``weights.safetensors`` (float16). Returns the folder."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {"format": POLICY_FORMAT, "version": POLICY_VERSION}
    if isinstance(policy, RankerPolicy):
        _save_ranker(policy, root)
        meta |= {"policy": "ranker", "config": asdict(policy.config), "weights": RANKER_FILE}
        meta["training"] = policy.training
    elif isinstance(policy, LearnedPolicy | PointerPolicy):
        from safetensors.torch import save_file

        state = {
            k: v.detach().to(require_torch("learned rewrite policies").float16).contiguous()
            for k, v in policy.net.state_dict().items()
            if not _frozen_encoder(policy, k)
        }
        save_file(state, str(root / WEIGHTS_FILE))
        meta |= {"policy": policy.kind, "config": asdict(policy.config), "weights": WEIGHTS_FILE}
        if isinstance(policy, PointerPolicy) and policy.idf is not None:
            _save_idf(policy.idf, root)
        meta["training"] = policy.training
    elif isinstance(policy, RandomEditPolicy):
        meta |= {"policy": "random", "config": {"seed": policy.seed}}
    elif isinstance(policy, OriginalPolicy):
        meta |= {"policy": "original", "config": {}}
    else:
        raise InputError(f"cannot save a policy of type {type(policy).__name__}")
    (root / CONFIG_FILE).write_text(json.dumps(meta, indent=1) + "\n")
    return root


def _save_idf(idf: IdfTable, root: Path) -> None:
    """The table as gzipped JSON with no time in the gzip header: the same table, the same bytes."""
    text = json.dumps({"n_docs": idf.n_docs, "df": dict(sorted(idf.df.items()))})
    (root / IDF_FILE).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))


def _save_ranker(policy: RankerPolicy, root: Path) -> None:
    tokens, trees = policy.tokens, policy.trees
    arrays = {
        "token_mean": tokens.mean,
        "token_scale": tokens.scale,
        "token_coef": tokens.coef,
        "token_intercept": np.array([tokens.intercept]),
        "tree_feature": trees.feature,
        "tree_threshold": trees.threshold,
        "tree_left": trees.left,
        "tree_right": trees.right,
        "tree_value": trees.value,
        "tree_roots": trees.roots,
        "tree_init_rate": np.array([trees.init, trees.rate]),
    }
    save_npz(root / RANKER_FILE, arrays)
    _save_idf(policy.idf, root)


def _load_ranker(config: RankerConfig, root: Path, training: dict[str, Any]) -> RankerPolicy:
    path = root / RANKER_FILE
    if not path.is_file():
        raise DataNotFound(f"rewrite policy weights {path} are missing")
    try:
        with np.load(path, allow_pickle=False) as z:
            a = {k: z[k] for k in z.files}
        tokens = TokenModel(a["token_mean"], a["token_scale"], a["token_coef"], float(a["token_intercept"][0]))
        init, rate = (float(v) for v in a["tree_init_rate"])
        trees = Trees(
            a["tree_feature"].astype(np.int32),
            a["tree_threshold"].astype(np.float64),
            a["tree_left"].astype(np.int32),
            a["tree_right"].astype(np.int32),
            a["tree_value"].astype(np.float64),
            a["tree_roots"].astype(np.int32),
            init,
            rate,
        )
    except InputError as exc:
        raise InputError(f"rewrite policy weights {path} do not fit a ranker: {exc}") from None
    except (OSError, ValueError, KeyError, IndexError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"rewrite policy weights {path} are corrupt: {exc}") from None
    return RankerPolicy(config, tokens, trees, _load_idf(root), training=training)


def _load_idf(root: Path) -> IdfTable:
    path = root / IDF_FILE
    if not path.is_file():
        raise DataNotFound(f"this policy uses idf features but {path} is missing")
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        return IdfTable(int(data["n_docs"]), {str(t): int(c) for t, c in data["df"].items()})
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"idf table {path} is corrupt: {exc}") from None


def _frozen_encoder(policy: RewritePolicy, key: str) -> bool:
    """A weight of a pointer policy's frozen MiniLM: not saved, the installed package has it."""
    return isinstance(policy, PointerPolicy) and not policy.config.finetune_encoder and key.startswith("encoder.")


def load_policy(path: str | os.PathLike[str]) -> RewritePolicy:
    """Load a policy saved by :func:`save_policy` (the folder or its ``policy.json``).

    :class:`DataNotFound` when a file is missing, :class:`InputError` when one is corrupt."""
    root = Path(path)
    config_path = root if root.suffix == ".json" else root / CONFIG_FILE
    if not config_path.is_file():
        raise DataNotFound(f"no rewrite policy at {root}: {config_path} is missing")
    try:
        meta = json.loads(config_path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"rewrite policy config {config_path} is unreadable: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != POLICY_FORMAT:
        raise InputError(f"{config_path} is not a factscout rewrite policy (format {POLICY_FORMAT!r} expected)")
    if meta.get("version") != POLICY_VERSION:
        raise InputError(f"rewrite policy {config_path} has version {meta.get('version')}, expected {POLICY_VERSION}")
    kind = str(meta.get("policy"))
    settings = meta.get("config") or {}
    if kind in BASELINES:
        return RandomEditPolicy(**settings) if kind == "random" else OriginalPolicy()
    if kind == "ranker":
        try:
            ranker_config = RankerConfig(**settings)
        except TypeError as exc:
            raise InputError(f"bad configuration in {config_path}: {exc}") from None
        return _load_ranker(ranker_config, config_path.parent, meta.get("training") or {})
    if kind not in POLICIES:
        REWRITE_POLICIES[kind]  # an unknown name: the registry's error lists the valid ones
        raise InputError(f"{config_path}: a {kind!r} policy is not saved in files")
    try:
        config = _CONFIGS[kind](**settings)
    except TypeError as exc:
        raise InputError(f"bad configuration in {config_path}: {exc}") from None
    weights = config_path.parent / str(meta.get("weights") or WEIGHTS_FILE)
    if not weights.is_file():
        raise DataNotFound(f"rewrite policy weights {weights} are missing")
    net = build_pointer_net(config) if isinstance(config, PointerConfig) else build_net(config)
    try:
        from safetensors import SafetensorError
        from safetensors.torch import load_file
    except ImportError:
        raise MissingDependency(_TORCH_HINT) from None
    try:
        state = {k: v.float() for k, v in load_file(str(weights)).items()}
        if isinstance(config, PointerConfig) and not config.finetune_encoder:  # the package's MiniLM
            state |= {k: v for k, v in net.state_dict().items() if k.startswith("encoder.")}
        net.load_state_dict(state)
    except (OSError, RuntimeError, ValueError, KeyError, SafetensorError) as exc:
        raise InputError(f"rewrite policy weights {weights} are corrupt or do not fit the config: {exc}") from None
    if isinstance(config, PointerConfig):
        return PointerPolicy(
            config, net, meta.get("training") or {}, _load_idf(config_path.parent) if config.idf else None
        )
    policy = POLICIES[kind](config, net, meta.get("training"))  # type: ignore[arg-type]
    return policy


def shipped_policies() -> tuple[str, ...]:
    """Names of the trained policies that ship with factscout (``<dataset>-<retriever>``)."""
    if not SHIPPED_DIR.is_dir():
        return ()
    return tuple(sorted(d.name for d in SHIPPED_DIR.iterdir() if (d / CONFIG_FILE).is_file()))


def policy_for_index(retriever: str | None, source: str | None = None) -> str | None:
    """The name of the shipped policy made for an index: ``<dataset>-<retriever>`` for the
    index's retriever, preferring the dataset its source names (``scifact`` in
    ``.../scifact/corpus.jsonl``); ``None`` when none ships for that retriever (never the
    ``random`` baseline: random edits are no suggestion)."""
    if not retriever:
        return None
    suffix = f"-{retriever}"
    # <dataset>-<retriever> exactly: a one-word dataset name before the retriever's name
    made_for = {n[: -len(suffix)]: n for n in shipped_policies() if n.endswith(suffix) and "-" not in n[: -len(suffix)]}
    made_for.pop("", None)
    if not made_for:
        return None
    named = [n for dataset, n in made_for.items() if source and dataset in source.lower()]
    made_for_list = list(made_for.values())
    return (named or made_for_list)[0]


def make_policy(spec: str | os.PathLike[str], *, seed: int = 0, retriever: Any = None) -> RewritePolicy:
    """A policy from a saved folder, a shipped policy by name (:func:`shipped_policies`), or a
    baseline by name (``original``, ``random``). A folder of that name in the working directory
    wins over a shipped name. A ``ranker`` policy is bound to ``retriever`` (the endpoint it
    searches while it plans); without one it refuses to rewrite, with a message saying so."""
    if isinstance(spec, str) and not Path(spec).exists():
        if spec in BASELINES:
            return RandomEditPolicy(seed) if spec == "random" else OriginalPolicy()
        if spec in shipped_policies():
            return _bound(load_policy(SHIPPED_DIR / spec), retriever)
        if os.sep not in spec and "." not in spec:
            raise UnknownName("rewrite policy", spec, [*shipped_policies(), *BASELINES])
    return _bound(load_policy(spec), retriever)


def _bound(policy: RewritePolicy, retriever: Any) -> RewritePolicy:
    return policy.bind(retriever) if isinstance(policy, RankerPolicy) and retriever is not None else policy
