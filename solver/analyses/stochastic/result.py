"""What a two-stage plan reports: the commitments, each scenario's outcome under them and
the figures they are compared by (RP, EEV, VSS, WS, EVPI; docs/guides/uncertainty.md).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from solver.inputs.problem import (
    CapacityScenario,
)
from solver.plan import LineItem


class ScenarioOutcome(BaseModel):
    """One scenario under the stochastic plan's commitments."""

    name: str
    probability: float
    total_cost_usd: float = Field(description="Commitments plus this scenario's rentals")
    total_co2e_t: float
    verified: bool = Field(description="Its plan passed the independent verifier")
    hindsight_cost_usd: float | None = Field(
        None, description="The best plan had this scenario been known (wait and see)"
    )
    deterministic_cost_usd: float | None = Field(
        None,
        description="The deterministic (EV) plan's commitments with this scenario's rentals "
        "re-planned; None when they leave it no feasible plan",
    )
    all_rented_cost_usd: float | None = Field(
        None,
        description="No new commitments, everything rented in this scenario; None when "
        "renting alone has no feasible plan",
    )
    saved_vs_all_rented_usd: float | None = Field(
        None,
        description="all_rented_cost_usd - total_cost_usd: what the commitments save in this "
        "scenario (negative: what they cost against renting everything)",
    )
    throughput: CapacityScenario | None = Field(
        None, description="The scenario's serving capacity (None: the estimates as they are)"
    )
    point_estimate_cost_usd: float | None = Field(
        None,
        description="With throughput scenarios: the point-estimate plan's commitments with "
        "this scenario's rentals re-planned; None when they leave it no feasible plan",
    )


class StochasticPlan(BaseModel):
    """The two-stage plan: commitments now, and what they lead to in each scenario."""

    problem: str
    status: str = Field(
        description="optimal (extensive form, proven) or feasible (decomposition: the best "
        "candidate commitments, with their gap to the lower bound)"
    )
    method: str = Field(description="extensive_form or decomposition")
    solver: str
    gap: float | None = Field(description="(objective - lower bound) / objective")
    lower_bound_usd: float | None = Field(
        None,
        description="A proven lower bound on the objective (the expected cost; with risk:, "
        "plus weight x CVaR) of any commitments",
    )
    caps: str = Field(description="every_scenario or expectation (budget and carbon cap)")
    expected_cost_usd: float = Field(description="RP: sum over scenarios of p x cost")
    objective_usd: float | None = Field(
        None, description="What was minimised: expected cost, plus weight x CVaR with risk:"
    )
    cvar_level: float | None = Field(None, description="risk: alpha of the CVaR")
    risk_weight: float | None = Field(None, description="risk: weight of the CVaR")
    cvar_usd: float | None = Field(
        None, description="CVaR at cvar_level of the cost: mean of the worst 1 - alpha"
    )
    commitments: list[LineItem] = Field(description="Reservations and purchases, signed now")
    scenarios: list[ScenarioOutcome]
    cost_percentiles_usd: dict[str, float] = Field(description="p5, p50, p95 of the cost")
    worst_case_usd: float
    worst_scenario: str
    deterministic_commitments: list[LineItem] = Field(
        description="The commitments of the plan at expected prices and demands (EV)"
    )
    deterministic_expected_cost_usd: float | None = Field(
        None, description="EEV: the EV commitments, rentals re-planned in each scenario"
    )
    value_of_stochastic_solution_usd: float | None = Field(None, description="VSS = EEV - RP")
    all_rented_expected_cost_usd: float | None = Field(
        None, description="No new commitments: sum of p x all-rented cost (None if one fails)"
    )
    wait_and_see_usd: float | None = Field(None, description="WS: sum of p x hindsight cost")
    expected_value_of_perfect_information_usd: float | None = Field(
        None, description="EVPI = RP - WS"
    )
    point_estimate_commitments: list[LineItem] | None = Field(
        None,
        description="With throughput scenarios: the commitments of the plan that takes every "
        "capacity estimate at face value (the problem as written, without uncertainty)",
    )
    point_estimate_expected_cost_usd: float | None = Field(
        None,
        description="Those commitments, rentals re-planned in each scenario: sum of p x cost "
        "(None if they leave some scenario no feasible plan)",
    )
    verified: bool
    seconds: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    stopped_at_time_limit: bool = Field(
        False,
        description="The time limit stopped the solve: the plan is the best of the "
        "candidates priced in time (verified, gap against the proven bound), and "
        "cut_at_time_limit says what was left out",
    )
    cut_at_time_limit: list[str] = Field(
        default_factory=list, description="What the time limit left out, in words"
    )
