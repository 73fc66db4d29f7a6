"""Learned query rewriting (Kazemi et al., "Query Rewriting for Effective Misinformation
Discovery", AACL 2023): human-readable edit actions over a claim's tokens, a black-box search
environment that rewards a query by the quality of its ranking, and a BFS generator of improving
edit trajectories for offline RL.

* :mod:`.actions` — the 128 edits (4 kinds x 32 positions, the paper's Table 1), POS masks;
* :mod:`.environment` — :class:`SearchEnvironment` over any retriever, AP@k / R@k / RR rewards;
* :mod:`.bfs` — the breadth-first search of improving edits for one claim (:func:`search_claim`);
* :mod:`.trajectories` — trajectory records and their resumable JSONL files;
* :mod:`.generate` — :func:`generate_trajectories`, resumable and parallel over claims
  (processes, or Ray actors once :mod:`factscout.scale` is imported);
* :mod:`.base` — the :class:`~.base.RewritePolicy` protocol and ``REWRITE_POLICIES``;
  :mod:`.policies` the decision transformer, one-action classifier, random and original policies
  (networks in :mod:`.networks`, state encoders in :mod:`.state`); :mod:`.rewriter`
  ``rewrite(claim, policy, env) -> RewriteTrace``; :mod:`.io` saved and shipped policies;
  :mod:`.policy` all of these under one import (imported on demand: the learned ones need torch);
* :mod:`factscout.training.rewrite.trainer` — ``factscout train rewrite --trajectories bfs.jsonl --policy dt|classifier``.
"""

from factscout.rewrite.actions import (
    ACTIONS,
    EDIT_KINDS,
    MAX_POSITIONS,
    N_ACTIONS,
    Action,
    Edit,
    ParsedQuery,
    Token,
    action_mask,
    apply_action,
    parse,
    present_simple,
    synonym,
    valid_edits,
)
from factscout.rewrite.bfs import BfsConfig, search_claim
from factscout.rewrite.environment import REWARDS, SearchEnvironment
from factscout.rewrite.generate import BFS_POOLS, GenerationSummary, generate_trajectories
from factscout.rewrite.trajectories import ClaimResult, Step, Trajectory, read_trajectories

__all__ = [
    "ACTIONS",
    "BFS_POOLS",
    "EDIT_KINDS",
    "MAX_POSITIONS",
    "N_ACTIONS",
    "REWARDS",
    "Action",
    "BfsConfig",
    "ClaimResult",
    "Edit",
    "GenerationSummary",
    "ParsedQuery",
    "SearchEnvironment",
    "Step",
    "Token",
    "Trajectory",
    "action_mask",
    "apply_action",
    "generate_trajectories",
    "parse",
    "present_simple",
    "read_trajectories",
    "search_claim",
    "synonym",
    "valid_edits",
]
