"""The rewrite-policy role: what a policy sees (:class:`Episode`), what it must do
(:class:`RewritePolicy`) and the registry of policies by name (:data:`REWRITE_POLICIES`).

A policy picks the next edit (an action id of :mod:`.actions`) for the query rewritten so far, or
None to stop; :func:`factscout.rewrite.rewriter.rewrite` runs it on a claim. The policies that
ship (:mod:`.policies`) register here under the names their saved ``policy.json`` uses: ``dt``
(decision transformer), ``classifier`` (one-action classifier), ``random`` and ``original``.
A policy with its own default number of edits declares it (:class:`LimitedPolicy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from factscout.errors import InputError
from factscout.registry import Registry

RewardMode = Literal["dense", "sparse"]
REWARD_MODES: tuple[str, ...] = ("dense", "sparse")
DEFAULT_MAX_STEPS = 4


@dataclass(frozen=True, slots=True)
class Episode:
    """What a policy sees before choosing: the queries so far (the claim first, the current
    query last), the actions taken, one return-to-go per query and the current action mask."""

    queries: tuple[str, ...]
    actions: tuple[int, ...]
    returns_to_go: tuple[float, ...]
    mask: tuple[bool, ...]

    @property
    def step(self) -> int:
        return len(self.actions)


class RewritePolicy(Protocol):
    """Chooses the next edit of a query; None ends the rewrite."""

    @property
    def name(self) -> str: ...

    @property
    def reward(self) -> RewardMode: ...

    @property
    def target_return(self) -> float: ...

    def choose(self, episode: Episode) -> int | None: ...


@runtime_checkable
class LimitedPolicy(Protocol):
    """A policy that knows how many edits it should make by default (a positive integer), as
    the token-pointing, keyword and ranker policies do; others get ``DEFAULT_MAX_STEPS``."""

    @property
    def step_limit(self) -> int: ...


REWRITE_POLICIES: Registry[Any] = Registry("rewrite policy")
"""Policy classes by the ``policy`` name of their saved ``policy.json``."""


def check_positive(owner: str, **values: int) -> None:
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(f"{owner}: {name} must be a positive integer, got {value!r}")
