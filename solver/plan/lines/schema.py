"""The Plan: plain data (pydantic), the stable JSON contract of ``procure solve``, with its
totals, binding rows, checks, cash flow and currency view.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import BaseModel, Field, computed_field

from solver.plan.assumptions import Assumption
from solver.plan.exposure import LossCost, PointOfFailure
from solver.plan.lines.digests import PlanInputs
from solver.plan.lines.items import CostLine, Deployment, LineItem, deployments_of
from solver.plan.lines.unit_cost import UnitCost
from solver.plan.warnings import PlanWarning


class Totals(BaseModel):
    by_period: dict[str, float]
    by_provider: dict[str, float]
    by_mode: dict[str, float]
    by_workload: dict[str, float]
    co2e_t_by_workload: dict[str, float]


class Binding(BaseModel):
    """A constraint that holds with (near) equality at the optimum."""

    name: str
    family: str
    description: str
    slack: float
    key: dict[str, str | int | float] = Field(
        default_factory=dict,
        description="The row's key by the names its family gives them (FAMILIES[family].keys)",
    )
    offering: str = Field("", description="availability: the offering held at its cap")
    mode: str = Field("", description="availability: its mode")
    limit: float | None = Field(None, description="availability: the cap, units")
    limit_basis: str = Field(
        "",
        description="availability: where the cap comes from: problem (availability_caps), "
        "listed (counted in the catalog's source) or assumed (catalogs/SOURCES.md)",
    )


class Check(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class CashFlowMonth(BaseModel):
    """One calendar month of the plan (USD; costs as the plan counts them)."""

    month: str = Field(description="YYYY-MM")
    period: str = Field(description="The plan period the month falls in")
    rented_usd: float = Field(description="On-demand and spot instances, training included")
    owned_opex_usd: float = Field(description="Owned servers' hosting, power, staff")
    commitments_usd: float = Field(
        description="Reservation fees for the month (used or not), under the problem's policy"
    )
    capex_usd: float = Field(description="Servers bought (less residual value at the horizon)")
    total_usd: float = Field(
        description="Everything the plan's line items count in this month (compute; the "
        "cost lines are in the fields below and all_in_usd)"
    )
    storage_usd: float = Field(0.0, description="Cost lines: storage")
    egress_usd: float = Field(0.0, description="Cost lines: egress")
    support_usd: float = Field(0.0, description="Cost lines: provider support plans")
    staff_usd: float = Field(0.0, description="Cost lines: operations staff")
    tax_usd: float = Field(0.0, description="Cost lines: sales tax and VAT")
    contingency_usd: float = Field(0.0, description="Cost lines: contingency")
    all_in_usd: float | None = Field(
        None, description="total_usd plus the cost lines (sums to all_in_cost_usd)"
    )
    billed_usd: float = Field(
        description="What is invoiced in the month (a purchase in full when bought)"
    )
    cumulative_usd: float = Field(description="all_in_usd of this month and those before")
    budget_headroom_usd: float | None = Field(
        None, description="budget_usd minus cumulative_usd (no budget: null)"
    )
    new_commitments: list[str] = Field(
        default_factory=list, description="Reservations and purchases made this month, with end"
    )


class CurrencyView(BaseModel):
    """A plan's totals in the problem's currency (``currency:``), at the catalog's rate."""

    currency: str = Field(description="ISO 4217 code")
    usd_per_unit: float = Field(description="US dollars per unit of the currency")
    rate_date: str = Field(description="The rate's date, YYYY-MM-DD")
    rate_source: str = Field(description="Where the rate comes from (catalogs/exchange_rates.csv)")
    total_cost: float = Field(description="total_cost_usd in the currency")
    all_in_cost: float | None = Field(None, description="all_in_cost_usd in the currency")
    budget: float | None = Field(None, description="budget_usd in the currency")
    by_period: dict[str, float] = Field(default_factory=dict, description="in the currency")
    by_provider: dict[str, float] = Field(default_factory=dict, description="in the currency")


class RateUsed(BaseModel):
    """An exchange rate a plan's prices were converted at, and the spend priced in it."""

    currency: str = Field(description="ISO 4217 code the prices are billed in")
    usd_per_unit: float = Field(description="US dollars per unit of the currency")
    rate_date: str = Field(description="The rate's date, YYYY-MM-DD")
    rate_source: str = Field(description="Where the rate comes from (its table or file)")
    cost_usd: float = Field(description="The line items' cost priced in the currency, in USD")
    cost: float = Field(description="cost_usd in the currency (cost_usd / usd_per_unit)")


class Plan(BaseModel):
    """A solved plan. ``verified`` is set only by :func:`solver.trust.verify.verify_plan`."""

    problem: str
    status: str
    objective: float | None
    objective_kind: str
    total_cost_usd: float
    total_co2e_t: float
    npv_usd: float | None = Field(
        None, description="Net present value of the costs at the problem's discount_rate"
    )
    verified: bool = False
    gap: float | None
    price_guard: str | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The guard against the optimiser's curse the plan was solved under "
        "(band_top: the objective priced every line at the top of its price's band; "
        "docs/concepts/price-guard.md); left out when the guard is none",
    )
    guarded_total_usd: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The line items at guarded prices, the sum of their guarded_cost_usd "
        "(total_cost_usd is at catalog prices; budgets hold that); left out when the guard "
        "is none",
    )
    switching_penalty_usd: float = Field(
        0.0,
        description="The serving workloads' switching_cost_usd times the units started "
        "within the day, over the horizon: in the objective, not in total_cost_usd",
    )
    migration_penalty_usd: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The serving workloads' moves into a provider and region they did not "
        "serve from the period before, each at its migration cost (work plus data copied): "
        "in the objective, not in total_cost_usd; left out when no workload's moves are "
        "charged",
    )
    egress_in_objective_usd: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Egress by default the objective priced (the served tokens routed "
        "cheapest egress first, docs/concepts/cost-categories.md): in the objective beside "
        "total_cost_usd, and the plan's egress cost lines for the same workloads to the "
        "cent; left out when no workload's egress is in the objective",
    )
    support_in_objective_usd: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Support plans the objective priced (each provider's monthly fee, the "
        "greater of its minimum and tiered percentage of the month's spend, "
        "docs/concepts/cost-categories.md): in the objective beside total_cost_usd, and the "
        "plan's support cost lines of the same providers to the cent; left out when no "
        "provider's support is in the objective",
    )
    points_of_failure: list[PointOfFailure] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Per serving workload with survive_loss_of and kind of domain (zone, "
        "region, provider): the domain holding the largest share of its serving capacity in "
        "any period and block, and the capacity its loss leaves; left out when no workload "
        "must survive a loss",
    )
    loss_costs: list[LossCost] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Per kind of domain some serving workload must survive (survive_loss_of): "
        "the plan's cost against the same problem solved without that kind (verified), the "
        "difference, and the plan's largest single point of failure of that kind; left out "
        "when no workload must survive a loss",
    )
    gap_asked: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The relative gap the solve was asked to prove, when not the default "
        "(1e-4): an optimal plan is proven within it",
    )
    stopped_at_time_limit: bool = Field(
        False,
        description="The solver was stopped by the time limit with this plan, the best it "
        "had found: verified like any plan, and within ``gap`` of the optimum (proven), not "
        "proven optimal",
    )
    solver: str
    solve_seconds: float
    compile_seconds: float = 0.0
    line_items: list[LineItem]
    totals: Totals
    owned_utilisation: dict[str, float] = Field(default_factory=dict)
    binding: list[Binding] = Field(default_factory=list)
    served_fraction: dict[str, float] = Field(default_factory=dict)
    compile_report: dict = Field(default_factory=dict)
    checks: list[Check] = Field(default_factory=list)
    inputs: PlanInputs | None = Field(
        None, description="Digests of the problem and catalog the plan was solved for"
    )
    start_date: str | None = Field(None, description="First day of the plan, YYYY-MM-DD")
    month_hours: Literal["calendar", "average_730"] = Field(
        "average_730",
        description="How hours were counted: calendar (the problem states its start: each "
        "month has its real hours, 672-744) or average_730 (no start: 730-hour months)",
    )
    cash_flow: list[CashFlowMonth] = Field(
        default_factory=list,
        description="Money by calendar month from start_date (sums to total_cost_usd)",
    )
    currency: str = Field(
        "USD", description="The problem's currency (every *_usd figure is in USD)"
    )
    in_currency: CurrencyView | None = Field(
        None, description="The totals in the problem's currency when it is not USD"
    )
    exchange_rates: list[RateUsed] = Field(
        default_factory=list,
        exclude_if=lambda v: not v,
        description="The exchange rates the line items' prices were converted to USD at, one "
        "per currency other than USD (left out when every price is in USD)",
    )
    cost_lines: list[CostLine] = Field(
        default_factory=list,
        description="Costs beside compute the problem's costs: block asks for (storage, "
        "egress, support, staff, tax, contingency), each with its category",
    )
    all_in_cost_usd: float | None = Field(
        None,
        description="total_cost_usd plus every cost line: what the budget holds (None: not "
        "worked out yet)",
    )
    architecture_costs: dict[str, float | None] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="With solve --compare-architectures: total cost (USD) of the verified "
        "optimal plan with every online workload aggregated, and with every one "
        "disaggregated (null: no such plan); left out otherwise",
    )
    not_included: list[str] = Field(
        default_factory=list, description="What the plan's cost does not hold, in words"
    )
    unit_costs: list[UnitCost] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Dollars per million tokens served: the plan, each serving workload, "
        "each deployment, and beside them the problem's compare_api (solver.plan.unit_costs); "
        "left out when the plan serves no tokens",
    )
    budget_basis: str = Field(
        "",
        description="How the budget row held the costs beside compute (ledger.extras_bound)",
    )
    assumptions: list[Assumption] = Field(
        default_factory=list,
        description="What the plan's choice rests on: MFU and serving efficiencies with "
        "their sources, availability caps that are assumed, provider tiers and SLAs, and "
        "the settings that decided it (solver.plan.assumptions)",
    )
    warnings: list[PlanWarning] = Field(
        default_factory=list,
        description="What the plan says that the user did not ask for: restrictions the "
        "period structure imposed (with the cost of lifting them) and implausible values "
        "in the problem (solver.plan.warnings)",
    )

    @computed_field(  # type: ignore[prop-decorator]  # mypy cannot see pydantic's property
        description="Rented serving offerings per workload and period: the units kept all "
        "day (base) and the most at once (peak), by load block"
    )
    @property
    def deployments(self) -> list[Deployment]:
        return deployments_of(self.line_items)

    def to_frame(self) -> pd.DataFrame:
        """The line items as a DataFrame, one row each, columns as in the JSON."""
        return pd.DataFrame([i.model_dump() for i in self.line_items])

    def _repr_html_(self) -> str:
        """A compact view for notebooks: the headline, then the line items."""
        import html

        columns = ["period", "block", "provider", "offering", "mode", "units", "workload"]
        columns += ["hours", "cost_usd", "co2e_t"]
        frame = self.to_frame()
        table = frame[columns].to_html(index=False, border=0) if not frame.empty else ""
        gap = "n/a" if self.gap is None else f"{self.gap:.4%}"
        return (
            f"<p><b>{html.escape(self.problem)}</b>: {html.escape(self.status)}, verified "
            f"{str(self.verified).lower()}, total <b>${self.total_cost_usd:,.0f}</b>, "
            f"{self.total_co2e_t:,.1f} tCO2e, gap {gap}</p>{table}"
        )
