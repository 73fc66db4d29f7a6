"""The claim itself as its only query: the baseline every planner is compared with."""

from __future__ import annotations

from factscout.plan.base import PLANNERS, finalize
from factscout.records import Claim, Query


@PLANNERS.register("claim")
class ClaimPlanner:
    name = "claim"

    def plan(self, claim: Claim) -> list[Query]:
        return finalize(claim, [], "claim", include_claim=True)
