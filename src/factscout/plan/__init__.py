"""Query planning: turn a claim into the queries that should find its evidence.

Planners: ``claim`` (the claim alone), ``oracle`` (a dataset's gold sub-questions),
``decompose`` (offline linguistic decomposition, the default), ``qgen`` (a query generator
trained on gold sub-questions), ``claimdecomp`` and ``programfc`` (LLM prompting through any
OpenAI-compatible endpoint). ``mmr`` filters a plan's queries as in QuanTemp++.
"""

from factscout.plan.base import PLANNERS, PlanFailure, Planner, finalize, make_planner, plan_all

__all__ = ["PLANNERS", "PlanFailure", "Planner", "finalize", "make_planner", "plan_all"]

# importing the planner modules registers them (heavy dependencies load only when planning)
from factscout.plan import claim_only, claimdecomp, decompose, oracle, programfc, qgen  # noqa: F401
