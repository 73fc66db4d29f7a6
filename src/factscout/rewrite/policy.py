"""Rewrite policies and the rewriting loop (Kazemi et al., "Query Rewriting for Effective
Misinformation Discovery", AACL 2023, Sections 3.3-3.4), under one import.

The parts live in modules with one job each; this module re-exports them so that
``from factscout.rewrite.policy import X`` keeps working:

* :mod:`.base` — :class:`Episode`, the :class:`RewritePolicy` protocol, ``REWRITE_POLICIES``;
* :mod:`.state` — state encoders (``minilm``, ``hashing``);
* :mod:`.networks` — the decision transformer and classifier networks and their configs;
* :mod:`.policies` — the four policies (``dt``, ``classifier``, ``random``, ``original``);
* :mod:`.rewriter` — ``rewrite(claim, policy, env?) -> RewriteTrace`` and ``rewrite_all``;
* :mod:`.io` — ``save_policy``/``load_policy``, shipped policies and ``make_policy``.
"""

from factscout.rewrite.base import DEFAULT_MAX_STEPS, REWARD_MODES, REWRITE_POLICIES, Episode, RewardMode, RewritePolicy
from factscout.rewrite.io import (
    BASELINES,
    CONFIG_FILE,
    POLICIES,
    POLICY_FORMAT,
    POLICY_VERSION,
    SHIPPED_DIR,
    WEIGHTS_FILE,
    load_policy,
    make_policy,
    save_policy,
    shipped_policies,
)
from factscout.rewrite.networks import ClassifierConfig, DtConfig, build_net, dt_logits, masked_logits, one_hot_actions
from factscout.rewrite.policies import (
    DecisionTransformerPolicy,
    LearnedPolicy,
    OneActionClassifier,
    OriginalPolicy,
    RandomEditPolicy,
    returns_to_go,
)
from factscout.rewrite.rewriter import RewriteStep, RewriteTrace, rewrite, rewrite_all
from factscout.rewrite.state import STATE_ENCODERS, HashingStateEncoder, MiniLmStateEncoder, StateEncoder, state_encoder

__all__ = [
    "BASELINES",
    "CONFIG_FILE",
    "DEFAULT_MAX_STEPS",
    "POLICIES",
    "POLICY_FORMAT",
    "POLICY_VERSION",
    "REWARD_MODES",
    "REWRITE_POLICIES",
    "SHIPPED_DIR",
    "STATE_ENCODERS",
    "WEIGHTS_FILE",
    "ClassifierConfig",
    "DecisionTransformerPolicy",
    "DtConfig",
    "Episode",
    "HashingStateEncoder",
    "LearnedPolicy",
    "MiniLmStateEncoder",
    "OneActionClassifier",
    "OriginalPolicy",
    "RandomEditPolicy",
    "RewardMode",
    "RewritePolicy",
    "RewriteStep",
    "RewriteTrace",
    "StateEncoder",
    "build_net",
    "dt_logits",
    "load_policy",
    "make_policy",
    "masked_logits",
    "one_hot_actions",
    "returns_to_go",
    "rewrite",
    "rewrite_all",
    "save_policy",
    "shipped_policies",
    "state_encoder",
]
