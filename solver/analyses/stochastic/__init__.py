"""Commit now, adapt later: two-stage planning under price, demand and capacity uncertainty.

Reservations and purchases are decided now, shared by every scenario; rentals follow each
scenario. How the scenarios are built, solved and compared: docs/guides/uncertainty.md.
"""

from solver.analyses.stochastic.benders import MAX_BENDERS_ITERATIONS
from solver.analyses.stochastic.decomposition import MAX_OWN_CANDIDATES
from solver.analyses.stochastic.extensive import (
    FIRST_STAGE,
    add_cvar,
    cvar_of,
    extensive_form,
    risk_objective,
)
from solver.analyses.stochastic.result import ScenarioOutcome, StochasticPlan
from solver.analyses.stochastic.scenarios import (
    demand_factors,
    has_throughput,
    keep_pools,
    pools_kept_in_any,
    price_factors,
    scenario_catalog,
    scenario_compiled,
    scenario_problem,
    scenarios_of,
    throughput_shares,
    with_throughput,
)
from solver.analyses.stochastic.solve import solve_stochastic
from solver.analyses.stochastic.summary import with_period_notes, with_point_estimate

__all__ = [
    "FIRST_STAGE",
    "MAX_BENDERS_ITERATIONS",
    "MAX_OWN_CANDIDATES",
    "ScenarioOutcome",
    "StochasticPlan",
    "add_cvar",
    "cvar_of",
    "demand_factors",
    "extensive_form",
    "has_throughput",
    "keep_pools",
    "pools_kept_in_any",
    "price_factors",
    "risk_objective",
    "scenario_catalog",
    "scenario_compiled",
    "scenario_problem",
    "scenarios_of",
    "solve_stochastic",
    "throughput_shares",
    "with_period_notes",
    "with_point_estimate",
    "with_throughput",
]
