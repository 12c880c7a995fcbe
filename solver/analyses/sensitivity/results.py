"""The results of the sensitivity analyses, as plain data: shadow prices, reduced costs,
break-even prices, the report that holds them, and one point of a sweep.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from solver.plan.warnings import PlanWarning


class Dual(BaseModel):
    """The shadow price of one named constraint at the chosen plan."""

    constraint: str
    family: str
    meaning: str
    d_objective_d_rhs: float = Field(
        description="Change of the objective per unit increase of the right-hand side"
    )
    unit: str
    worth: float = Field(
        description="What one more unit of the limit saves (positive: relaxing helps)"
    )
    usd_per_mtoken: float | None = Field(
        None,
        description="Rows of tokens/s (demand, N+1) or requests/s (traffic-mix demand): the "
        "dual over the tokens one more token/s of the row's capacity yields in its block, "
        "dual / (block hours x 3600 x tokens per unit of the row) x 1e6: the marginal cost "
        "of 1M more output tokens of that capacity in that block",
    )
    workload: str | None = Field(None, description="The row's workload, where it has one")
    period: str | None = Field(None, description="The row's plan period, by name")
    block: str | None = Field(None, description="The row's load block, by name")
    pool: str | None = Field(None, description="The row's pool (offering#mode), where it has one")


class ReducedCost(BaseModel):
    """An option the plan does not use: how much dearer than worth it it is."""

    option: str
    pool_id: str
    workload: str
    mode: str
    reduced_cost: float = Field(description="Objective units per unit of the option")
    price_cut_usd_per_hour: float | None = Field(
        None, description="Rented options: hourly price cut that makes it break even in the LP"
    )


class BreakEven(BaseModel):
    """The price at which a pool would enter (or leave) the optimal plan."""

    pool_id: str
    provider: str
    region: str
    offering: str
    accelerator: str
    mode: str
    in_plan: bool
    price_unit: str
    current_price: float
    break_even_price: float | None = Field(
        None, description="None: no price makes it change (see note)"
    )
    change_pct: float | None = None
    direction: str = Field(description="'enters below' or 'leaves above'")
    solves: int = 0
    note: str = ""
    same_as: list[str] = Field(
        default_factory=list,
        description="Other pools of the same class (same mode, price, capacity for every "
        "workload and, where carbon counts, CO2e): interchangeable with this one, so their "
        "prices moved with it and the row stands for the class",
    )


class SensitivityReport(BaseModel):
    """Shadow prices and reduced costs at the chosen plan, and break-even prices."""

    problem: str
    objective_kind: str
    objective: float
    caveat: str
    duals: list[Dual]
    reduced_costs: list[ReducedCost]
    break_even: list[BreakEven] = Field(default_factory=list)
    break_even_tolerance: str = ""
    break_even_left_out: list[str] = Field(
        default_factory=list,
        description="Pools whose break-even price --time-limit left out (not started "
        "before its deadline)",
    )
    warnings: list[PlanWarning] = Field(
        default_factory=list,
        description="The warnings of the plan analysed (a period structure that forbade "
        "owning or reserving, an implausible value), as the plan carries them",
    )


class SweepPoint(BaseModel):
    """One solve of a sweep."""

    sweep: str
    value: float
    status: str
    objective: float | None = None
    total_cost_usd: float | None = None
    total_co2e_t: float | None = None
    served_fraction: float | None = None
    used: list[str] = Field(default_factory=list, description="pools in the plan")
    bound: float | None = Field(
        None,
        description="The solver's proven bound on the point's objective (no plan of the "
        "point's problem has a lower objective); None: no plan, or not known",
    )
    gap: float | None = Field(
        None,
        description="The point's proven relative gap, |objective - bound| / |objective| "
        "(a fraction): its plan is within this of the point's optimum; 0 for an LP",
    )
    plan_of: float | None = Field(
        None,
        description="Set when the plan shown is a tighter point's (its value: a tighter "
        "carbon cap, a smaller budget), better than the one this point's own solve found "
        "within its gap; the bound and gap are still this point's own",
    )
