"""Oracle plans: a dataset's gold sub-questions as the queries.

AVeriTeC's annotator questions, ClaimDecomp's yes/no sub-questions and QuanTemp's generated
sub-questions are all loaded into ``claim.meta["questions"]``; this planner reads them. It is
an upper bound for query planning (QuanTemp++ reports it as such), never a deployable method.
"""

from __future__ import annotations

from factscout.errors import InputError
from factscout.plan.base import PLANNERS, finalize
from factscout.records import Claim, Query


@PLANNERS.register("oracle")
class OraclePlanner:
    name = "oracle"

    def __init__(self, include_claim: bool = False, field: str = "questions") -> None:
        self.include_claim, self.field = include_claim, field

    def plan(self, claim: Claim) -> list[Query]:
        questions = claim.meta.get(self.field)
        if not isinstance(questions, (list, tuple)):
            raise InputError(
                f"claim {claim.claim_id!r} has no gold sub-questions in meta[{self.field!r}]; "
                "the oracle planner needs a dataset with them (AVeriTeC, ClaimDecomp, QuanTemp)"
            )
        return finalize(claim, [str(q) for q in questions], "oracle", include_claim=self.include_claim)
