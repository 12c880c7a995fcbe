"""The Plan: line items and totals read from a solved model.

A plan is plain data (pydantic), the stable JSON contract of ``procure solve``:
``status``, ``objective``, ``total_cost_usd``, ``total_co2e_t``, ``verified``,
``gap``, ``solver``, ``solve_seconds``, ``line_items[]`` and the totals.

Line items, by ``item``:

- ``rent``: rented (on-demand/spot) units serving a workload in a period and
  load block; cost = price x units x hours.
- ``reservation``: a 1-/3-year commitment starting in a period; cost = price x
  units x term hours (used or not).
- ``purchase``: servers bought in a period; cost = capex (or amortised) plus
  hosting until the horizon ends; CO2e = embodied.
- ``use``: owned or reserved units serving a workload (cost = owned electricity).
- ``training``: a training job's cluster (cost = rent or owned electricity).
- ``existing``: fixed costs of the existing fleet and reservations.
- ``staff_scale``: the staff saving of a site whose owned fleet passes 1,000 servers in a
  period (fewer administrators per server; solver/core/staff.py), a negative cost.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from typing import Any, Literal, cast

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, computed_field

from solver.core import ledger
from solver.core.compile import Compiled
from solver.core.model import LinearModel
from solver.inputs.catalog import Catalog, catalog_sha256
from solver.inputs.problem import Problem, TrainingWorkload
from solver.inputs.tables import row_tuples
from solver.plan.assumptions import Assumption, assumptions_of
from solver.plan.warnings import PlanWarning
from solver.units import RENTED_MODES, Item, Mode

#: A row of a compiled table as :func:`solver.inputs.tables.row_tuples` gives it: a named
#: tuple whose fields are the frame's columns, built at run time, so not typed statically.
FrameRow = Any


class LineItem(BaseModel):
    """One thing to pay for or run."""

    # savings_plan: a spend-based commitment (units are USD per hour); savings_plan_cover:
    # on-demand usage a savings plan pays for (a credit of its on-demand charge);
    # staff_scale: the staff saving of a site past 1,000 owned servers (units: its average
    # fleet in the period; cost_usd <= 0)
    item: str = Field(
        description="rent | reservation | purchase | use | training | existing | savings_plan "
        "| savings_plan_cover | staff_scale"
    )
    period: str
    block: str = Field("", description="Load block ('' = every block of the period)")
    provider: str
    region: str
    offering: str = Field(description="offering_id, or server@site for owned")
    instance_type: str = ""
    accelerator: str
    mode: str
    units: float
    accelerators: float
    workload: str = ""
    hours: float = Field(description="Hours the units run (or the term, for reservations)")
    cost_usd: float
    co2e_t: float
    start_period: str = ""
    tp_degree: int = 0
    batch: int = 0
    capacity_tokens_per_s: float = 0.0
    capacity_source: str = Field(
        "",
        description="Where the serving capacity comes from: measured (the workload's profile), "
        "calibrated (physics x the factor fitted on the measured cards) or physics",
    )
    bucket_requests_per_s: dict[int, float] = Field(default_factory=dict)
    job_hours: float = 0.0
    residual_value_usd: float = Field(
        0.0, description="Purchases: value of the servers' remaining life credited at the horizon"
    )
    term_end_month: float = Field(
        0.0, description="Reservations: month (from the start) when the term ends; 0 otherwise"
    )
    months_after_horizon: float = Field(
        0.0, description="Reservations: months of the term that run past the horizon"
    )
    liability_after_horizon_usd: float = Field(
        0.0,
        description="Reservations: USD still owed for the months after the horizon (charged "
        "to the last period under the cash policy, not counted under amortised)",
    )
    cost_by_period_usd: dict[str, float] = Field(
        default_factory=dict,
        description="When a cost spans periods (reservations, hosting): its part in each",
    )
    price_date: str = Field(
        "",
        description="When the price this line rests on was observed: YYYY-MM-DD or unknown "
        "(owned lines: their server's price)",
    )
    price_source: str = Field("", description="Where that price comes from (the catalog's)")
    price_confidence: str = Field(
        "", description="quote, list, third_party or unverified (solver/inputs/provenance.py)"
    )
    price_currency: str = Field(
        "",
        description="The currency the source states that price in (cost_usd is in USD, at the "
        "catalog's rate)",
    )
    tier: str = Field(
        "",
        description="The provider's tier (catalogs/providers.csv): hyperscaler, neocloud or "
        "marketplace; owned for servers you own",
    )
    sla: str = Field(
        "", description="The provider's SLA in words (catalogs/providers.csv); '' for owned"
    )
    mfu: float | None = Field(
        None,
        description="Training: the model FLOPs utilisation the cluster is sized at (the "
        "training_margin's point of the band), a fraction of the dense peak",
    )
    mfu_low: float | None = Field(None, description="Training: low end of the published band")
    mfu_high: float | None = Field(None, description="Training: high end of the published band")
    mfu_point: float | None = Field(
        None, description="Training: the published point figure (or the workload's own mfu)"
    )
    mfu_source: str = Field("", description="Training: where the point MFU comes from")
    mfu_band_source: str = Field("", description="Training: where the MFU band comes from")
    training_margin: str = Field(
        "", description="Training: the margin the cluster is sized at (low, point or a number)"
    )
    window_hours: float = Field(
        0.0, description="Training: hours the job may take from its start (window or deadline)"
    )
    slack_fraction: float | None = Field(
        None,
        description="Training: 1 - job_hours / window_hours at the MFU used, the share of "
        "the window left spare (0.15: the job may run 1 / 0.85 = 1.18x slower and finish)",
    )
    units_at_point_mfu: int | None = Field(
        None,
        description="Training: the fewest units of the same offering that finish within the "
        "window at the point MFU (0: none do); differs from units when the margin moved it",
    )
    category: Literal["compute"] = Field(
        "compute",
        description="The line's cost category: compute for every line item (storage, egress, "
        "support, staff, tax and contingency are the plan's cost_lines)",
    )
    served_months: list[float] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="[from, to): the months from the plan's start this line covers, when "
        "it covers only part of its period (the solver split the period where a server's "
        "life or a reservation's term ends); left out when the line covers its whole period",
    )

    @property
    def unit_price_usd_per_hour(self) -> float:
        """USD per unit-hour: ``cost_usd / (units x hours)``, 0 without unit-hours.

        The one place a line item's unit price is derived (the price the ledger charged
        for rent, reservations and rented training; power for owned use; hosting for the
        existing fleet). A property, not a field, so the plan's JSON is unchanged and a
        plan read from a file or re-priced (``model_copy``) has it right too.
        """
        unit_hours = self.units * self.hours
        return self.cost_usd / unit_hours if unit_hours else 0.0


class CostLine(BaseModel):
    """A cost beside compute (issue 29 part 5; solver/plan/costs.py): one per category and
    provider (storage and egress: per entry of the problem's ``costs:``)."""

    category: Literal["storage", "egress", "support", "staff", "tax", "contingency"]
    provider: str = Field("", description="Catalog provider id ('' for staff, contingency)")
    entry: int = Field(-1, description="Index of the problem's costs entry (-1: none)")
    quantity: float = Field(description="In quantity_unit")
    quantity_unit: str = Field(
        description="GB-months (storage), GB (egress), USD (support: the spend it is on; "
        "tax and contingency: the amount taxed or reserved on), instance-hours (staff)"
    )
    unit_price_usd: float = Field(
        description="USD per quantity unit (support: the effective rate over the plan)"
    )
    cost_usd: float
    cost_by_month_usd: dict[int, float] = Field(
        default_factory=dict, description="Plan month (0 = the first) -> USD"
    )
    cost_by_period_usd: dict[str, float] = Field(
        default_factory=dict,
        description="Period -> USD: each month in the period it starts in (months past the "
        "horizon in the last)",
    )
    basis: str = Field("", description="How the line is worked out, in words")
    source: str = Field("", description="Where its price or rate comes from")


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


class PlanInputs(BaseModel):
    """What a plan was solved for: digests of the problem and catalog, and where they are.

    ``export``, ``diff`` and ``resolve`` reload the problem and catalog, check the digests
    and re-verify the plan before using it: an edited, foreign or stale plan is refused.
    """

    problem_sha256: str = Field(description="SHA-256 of the parsed problem (canonical JSON)")
    catalog_sha256: str = Field(description="SHA-256 of the catalog tables (canonical CSV)")
    problem: dict = Field(
        default_factory=dict,
        description="The parsed problem itself (after re-basing, for a re-solved plan), so "
        "that the plan can be re-verified without its YAML",
    )
    problem_file: str | None = Field(None, description="The problem file, when it is on disk")
    catalog_dir: str | None = Field(None, description="The catalog folder; None = shipped")
    prices: list[dict] = Field(
        default_factory=list,
        description="A re-solved plan: the price files applied over catalog_dir, in order, "
        "with their options",
    )
    quotes: dict | None = Field(
        None,
        description="The vendor quotes file applied last (``path``) and the day its quotes "
        "were checked against (``on``), when the plan was solved with one",
    )


#: problem fields added after plans were first recorded, left out of the canonical JSON
#: while at their default (empty): a problem that does not use them keeps the digest, and
#: the plan files, it had before they existed
LATER_FIELDS = ("savings_plans", "costs")


def problem_json(problem: Problem) -> str:
    """The canonical JSON of a parsed problem (what its digest is taken of)."""
    data = problem.model_dump(mode="json")
    for name in LATER_FIELDS:
        if not data.get(name):
            data.pop(name, None)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def input_digests(problem: Problem, catalog: Catalog) -> PlanInputs:
    """The digests of a problem and a catalog (no paths: the CLI adds those).

    The problem is hashed as its parsed model in JSON, so comments, key order and
    whitespace in the YAML do not matter; the catalog by :func:`catalog_sha256`.
    """
    problem_text = problem_json(problem)
    return PlanInputs(
        problem_sha256=hashlib.sha256(problem_text.encode()).hexdigest(),
        problem=json.loads(problem_text),
        catalog_sha256=catalog_sha256(catalog),
    )


class Deployment(BaseModel):
    """One rented offering a serving workload runs in a period: the units it keeps all
    day (``base_units``, the fewest in any load block) and the most at once
    (``peak_units``); ``units_by_block`` per load block (0 where it does not run)."""

    workload: str
    period: str
    provider: str
    region: str
    offering: str
    accelerator: str
    mode: str
    base_units: float
    peak_units: float
    units_by_block: dict[str, float]
    served_months: list[float] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="[from, to): the months it runs, when only part of its period (as on "
        "its line items); left out for the whole period",
    )


def deployments_of(items: list[LineItem]) -> list[Deployment]:
    """The rented serving lines as deployments (:class:`Deployment`), in line order."""
    blocks: list[str] = []
    found: dict[tuple[object, ...], dict[str, float]] = {}
    first: dict[tuple[object, ...], LineItem] = {}
    for item in items:
        if item.item != Item.RENT or not item.block or not item.workload:
            continue
        if item.block not in blocks:
            blocks.append(item.block)
        key: tuple[object, ...] = (
            item.workload,
            item.period,
            item.provider,
            item.region,
            item.offering,
            item.mode,
        )
        key += (tuple(item.served_months or ()),)
        first.setdefault(key, item)
        found.setdefault(key, {})
        found[key][item.block] = found[key].get(item.block, 0.0) + item.units
    out = []
    for key, by_block in found.items():
        units = {b: by_block.get(b, 0.0) for b in blocks}
        item = first[key]
        out.append(
            Deployment(
                workload=item.workload,
                period=item.period,
                provider=item.provider,
                region=item.region,
                offering=item.offering,
                accelerator=item.accelerator,
                mode=item.mode,
                base_units=min(units.values()),
                peak_units=max(units.values()),
                units_by_block=units,
                served_months=item.served_months,
            )
        )
    return out


class Plan(BaseModel):
    """A solved plan. ``verified`` is set only by :func:`solver.verify.verify_plan`."""

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
    switching_penalty_usd: float = Field(
        0.0,
        description="The serving workloads' switching_cost_usd times the units started "
        "within the day, over the horizon: in the objective, not in total_cost_usd",
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
    not_included: list[str] = Field(
        default_factory=list, description="What the plan's cost does not hold, in words"
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


def _pool_fields(pool: FrameRow) -> dict[str, object]:
    return {
        "provider": pool.provider,
        "region": pool.region,
        "offering": pool.offering_id,
        "instance_type": pool.instance_type,
        "accelerator": pool.accelerator_id,
        "mode": pool.mode,
        "price_date": pool.price_date,
        "price_source": pool.price_source,
        "price_confidence": pool.price_confidence,
        "price_currency": pool.price_currency,
        "tier": pool.tier,
        "sla": pool.sla,
    }


class _Reading:
    """The compiled tables a solution is read against, looked up once."""

    def __init__(self, compiled: Compiled) -> None:
        self.compiled = compiled
        self.periods, self.blocks = compiled.periods, compiled.blocks
        self.options = compiled.options.set_index("option_id")
        self.p_names = list(self.periods["name"])
        self.b_names = list(self.blocks["name"])
        self.p_hours = self.periods["hours"].to_numpy()
        self.b_frac = self.blocks["fraction"].to_numpy()
        self.horizon = float(self.periods["end_month"].to_numpy()[-1])
        self.clock = compiled.clock
        self.pool_rows: list[FrameRow] = row_tuples(compiled.pools)
        self.training_runs = compiled.training_runs()


def extract_plan(
    compiled: Compiled,
    model: LinearModel,
    values: np.ndarray,
    *,
    status: str,
    objective: float | None,
    gap: float | None,
    solver: str,
    solve_seconds: float,
) -> Plan:
    """Read line items from a solution; totals are sums of the line items.

    One reader per variable kind (x: serving, z: training, buy: purchase, commit:
    reservation) and one for the fleet held at the start; costs come from the ledger.
    """
    rd = _Reading(compiled)
    var = model.variables.assign(value=values)
    var = var[var["value"] > 1e-7]
    mix_alloc: dict[tuple[int, int, int], dict[int, float]] = defaultdict(dict)
    mix_rows: list[FrameRow] = row_tuples(var[var["kind"] == "y"])
    for r in mix_rows:
        mix_alloc[(r.option_id, r.period, r.block)][int(r.bucket)] = float(r.value)
    items: list[LineItem] = []
    var_rows: list[FrameRow] = row_tuples(var)
    for r in var_rows:
        if r.kind == "x":
            items += _serving_items(rd, r, mix_alloc)
        elif r.kind == "z":
            items += _training_items(rd, r)
        elif r.kind == "buy":
            items.append(_purchase_item(rd, r))
        elif r.kind == "commit":
            items.append(_reservation_item(rd, r))
        elif r.kind == "savings_plan":
            items.append(_savings_plan_item(rd, r))
        elif r.kind == "sp_cover":
            items.append(_savings_plan_cover_item(rd, r))
    items += _existing_items(rd)
    items += _staff_scale_items(rd, model, var)
    order = {name: i for i, name in enumerate(rd.p_names)}
    items.sort(
        key=lambda i: (
            order[i.period],
            i.provider,
            i.region,
            i.offering,
            i.mode,
            i.item,
            i.workload,
            i.block,
        )
    )
    totals = totals_of(items, rd.p_names)
    binding = binding_rows(model, values, compiled.pools)
    binding_pools = {str(b.key.get("pool")) for b in binding if b.family == "availability"}
    npv = None
    if compiled.problem.discount_rate is not None:
        factors = ledger.discount_factors(rd.periods, compiled.problem.discount_rate)
        npv = float(
            sum(f * totals.by_period.get(n, 0.0) for f, n in zip(factors, rd.p_names, strict=True))
        )
    switching = model.expressions.get("switching_penalty_usd")
    return Plan(
        problem=compiled.problem.name,
        status=status,
        objective=objective,
        switching_penalty_usd=switching.value(values) if switching is not None else 0.0,
        objective_kind=compiled.problem.objective,
        total_cost_usd=sum(i.cost_usd for i in items),
        total_co2e_t=sum(i.co2e_t for i in items),
        npv_usd=npv,
        gap=gap,
        solver=solver,
        solve_seconds=solve_seconds,
        line_items=items,
        totals=totals,
        owned_utilisation=owned_utilisation(items, compiled),
        binding=binding,
        assumptions=assumptions_of(compiled, items, binding_pools),
        served_fraction=served_fraction(compiled, model, values),
        compile_report=compiled.report.as_dict(),
    )


def _serving_items(
    rd: _Reading, r: FrameRow, mix_alloc: dict[tuple[int, int, int], dict[int, float]]
) -> list[LineItem]:
    """x: serving units of an option in a period, one line per load block it covers
    (rented: its own block; owned and reserved: every block of the day)."""
    k = rd.options.loc[r.option_id]
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    rented = k["mode"] in RENTED_MODES
    out = []
    for b in [r.block] if r.block >= 0 else list(range(len(rd.b_names))):
        hours = rd.p_hours[r.period] * rd.b_frac[b]
        if rented:
            cost = ledger.rent_usd(k["price_usd_per_hour"], units, hours)
        else:
            cost = k["energy_usd_per_unit_hour"] * units * hours
        out.append(
            LineItem(
                item="rent" if rented else "use",
                period=rd.p_names[r.period],
                block=rd.b_names[b],
                **_pool_fields(pool),
                units=units,
                accelerators=units * pool.accels_per_unit,
                workload=r.workload,
                hours=hours,
                cost_usd=cost,
                co2e_t=k["kgco2e_per_unit_hour"] * units * hours / 1000.0,
                tp_degree=int(k["tp_degree"]),
                batch=int(k["batch"]),
                capacity_tokens_per_s=float(k["tokens_per_s_per_unit"]) * units,
                capacity_source=str(k["capacity_source"]),
                bucket_requests_per_s=mix_alloc.get((r.option_id, r.period, b), {}),
            )
        )
    return out


def _training_items(rd: _Reading, r: FrameRow) -> list[LineItem]:
    """z: a training cluster, one line per period the job runs in."""
    k = rd.options.loc[r.option_id]
    pool = rd.pool_rows[r.pool]
    out = []
    for t, h in rd.training_runs[int(r.option_id)]:
        share = h / k["job_hours"]
        out.append(
            LineItem(
                item="training",
                period=rd.p_names[t],
                **_pool_fields(pool),
                units=float(k["n_units"]),
                accelerators=float(k["n_accelerators"]),
                workload=r.workload,
                hours=h,
                cost_usd=(k["rent_usd"] + k["energy_usd"]) * share,
                co2e_t=k["kgco2e"] * share / 1000.0,
                start_period=rd.p_names[int(k["start_period"])],
                job_hours=float(k["job_hours"]),
                **_mfu_fields(k, rd.compiled.problem),
            )
        )
    return out


def _mfu_fields(k: pd.Series, problem: Problem) -> dict:
    """A training option's MFU, its band and source, and the schedule's slack."""
    window_h = float(k["window_hours"])
    workload = problem.workload(k["workload"])
    assert isinstance(workload, TrainingWorkload), "a training option's workload trains"
    margin = problem.training_margin_of(workload)
    return {
        "mfu": float(k["mfu"]),
        "mfu_low": float(k["mfu_low"]),
        "mfu_high": float(k["mfu_high"]),
        "mfu_point": float(k["mfu_point"]),
        "mfu_source": str(k["mfu_source"]),
        "mfu_band_source": str(k["mfu_band"]),
        "training_margin": str(margin),
        "window_hours": window_h,
        "slack_fraction": 1.0 - float(k["job_hours"]) / window_h if window_h > 0 else None,
        "units_at_point_mfu": int(k["units_at_point_mfu"]),
    }


def _purchase_item(rd: _Reading, r: FrameRow) -> LineItem:
    """buy: servers bought in a period; hours in service from delivery."""
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    charge = ledger.pool_purchase(pool, r.period, rd.periods, rd.horizon, rd.compiled.problem)
    arrival = float(rd.periods["start_month"].to_numpy()[r.period]) + pool.lead_months
    return LineItem(
        item="purchase",
        period=rd.p_names[r.period],
        **_pool_fields(pool),
        units=units,
        accelerators=units * pool.accels_per_unit,
        hours=rd.clock.hours(arrival, arrival + charge.in_service_months),
        cost_usd=units * charge.total_usd,
        co2e_t=units
        * (
            pool.embodied_kgco2e_unit * charge.capex_fraction
            + pool.idle_kgco2e_per_month * charge.in_service_months
        )
        / 1000.0,
        start_period=rd.p_names[r.period],
        cost_by_period_usd=_by_name(rd.p_names, charge, units),
        residual_value_usd=units * charge.residual_usd,
    )


def _reservation_item(rd: _Reading, r: FrameRow) -> LineItem:
    """commit: instances reserved from a period for the term; what runs past the horizon."""
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    charge = ledger.reservation(
        price_usd_per_hour=pool.price_usd_per_hour,
        term_months=pool.term_months,
        begins_in=r.period,
        periods=rd.periods,
        clock=rd.clock,
        policy=rd.compiled.problem.owned_cost_policy,
    )
    begin = float(rd.periods["start_month"].to_numpy()[r.period])
    term_end = begin + float(pool.term_months)
    return LineItem(
        item="reservation",
        period=rd.p_names[r.period],
        **_pool_fields(pool),
        units=units,
        accelerators=units * pool.accels_per_unit,
        hours=rd.clock.hours(begin, term_end),
        cost_usd=units * charge.total_usd,
        co2e_t=0.0,
        start_period=rd.p_names[r.period],
        cost_by_period_usd=_by_name(rd.p_names, charge, units),
        term_end_month=term_end,
        months_after_horizon=max(0.0, term_end - rd.horizon),
        liability_after_horizon_usd=units * charge.beyond_horizon_usd,
    )


def savings_plan_offering(provider: str, term: str) -> str:
    """The ``offering`` of a savings plan's lines: ``savings_plan/<provider>/<term>``."""
    return f"savings_plan/{provider}/{term}"


def _savings_plan_item(rd: _Reading, r: FrameRow) -> LineItem:
    """savings_plan: USD per hour committed from a period for the term (``units`` is the
    commitment in USD/h, at $1 per unit-hour), charged every hour of it, used or not."""
    sp = rd.compiled.problem.savings_plans[int(r.plan)]
    usd_per_hour = float(r.value)
    charge = ledger.reservation(
        price_usd_per_hour=1.0,
        term_months=sp.term_months,
        begins_in=r.period,
        periods=rd.periods,
        clock=rd.clock,
        policy=rd.compiled.problem.owned_cost_policy,
    )
    begin = float(rd.periods["start_month"].to_numpy()[r.period])
    term_end = begin + sp.term_months
    return LineItem(
        item="savings_plan",
        period=rd.p_names[r.period],
        provider=sp.provider,
        region="",
        offering=savings_plan_offering(sp.provider, sp.term),
        accelerator="",
        mode=f"savings_plan_{sp.term}",
        units=usd_per_hour,
        accelerators=0.0,
        hours=rd.clock.hours(begin, term_end),
        cost_usd=usd_per_hour * charge.total_usd,
        co2e_t=0.0,
        start_period=rd.p_names[r.period],
        cost_by_period_usd=_by_name(rd.p_names, charge, usd_per_hour),
        term_end_month=term_end,
        months_after_horizon=max(0.0, term_end - rd.horizon),
        liability_after_horizon_usd=usd_per_hour * charge.beyond_horizon_usd,
        price_source=sp.source,
        price_date=sp.price_date,
        price_confidence=sp.confidence,
        price_currency="USD",
        **_provider_terms(rd, sp.provider),
    )


def _provider_terms(rd: _Reading, provider: str) -> dict:
    """The provider's tier and SLA as its pools carry them ('' when it has none)."""
    pools = rd.compiled.pools
    rows = pools[pools["provider"] == provider]
    if rows.empty:
        return {}
    return {"tier": str(rows["tier"].iat[0]), "sla": str(rows["sla"].iat[0])}


def _savings_plan_cover_item(rd: _Reading, r: FrameRow) -> LineItem:
    """sp_cover: on-demand units of an offering a savings plan pays for in a load block;
    a credit of their on-demand charge (the plan's commitment pays for them)."""
    sp = rd.compiled.problem.savings_plans[int(r.plan)]
    pool = rd.pool_rows[r.pool]
    units = float(r.value)
    hours = rd.p_hours[r.period] * rd.b_frac[r.block]
    return LineItem(
        item="savings_plan_cover",
        period=rd.p_names[r.period],
        block=rd.b_names[r.block],
        **{**_pool_fields(pool), "mode": f"savings_plan_{sp.term}"},
        units=units,
        accelerators=units * pool.accels_per_unit,
        hours=hours,
        cost_usd=-ledger.rent_usd(pool.price_usd_per_hour, units, hours),
        co2e_t=0.0,
        start_period=rd.p_names[r.period],
    )


def _existing_items(rd: _Reading) -> list[LineItem]:
    """The fleet held at the start: servers' hosting over the horizon, the rest of each
    reservation's term inside it."""
    out = []
    clock, horizon, p_names = rd.clock, rd.horizon, rd.p_names
    for pool in rd.pool_rows:
        if not pool.existing_units:
            continue
        if pool.kind == "owned":
            charge = ledger.existing_server(
                hosting_usd_per_month=pool.hosting_usd_per_month, periods=rd.periods
            )
            by_period = _by_name(p_names, charge, float(pool.existing_units))
            hours = clock.hours(0.0, horizon)
            idle_t = pool.idle_kgco2e_per_month * horizon * pool.existing_units / 1000.0
        else:
            by_period, hours, idle_t = {}, 0.0, 0.0
            for res in rd.compiled.problem.existing_reservations:
                if res.offering == pool.offering_id and res.mode == pool.mode:
                    charge = ledger.existing_reservation(
                        price_usd_per_hour=pool.price_usd_per_hour,
                        months_remaining=res.months_remaining,
                        periods=rd.periods,
                        clock=clock,
                    )
                    for name, usd in _by_name(p_names, charge, float(res.units)).items():
                        by_period[name] = by_period.get(name, 0.0) + usd
                    hours = max(hours, clock.hours(0.0, min(res.months_remaining, horizon)))
        out.append(
            LineItem(
                item="existing",
                period=p_names[0],
                **_pool_fields(pool),
                units=float(pool.existing_units),
                accelerators=float(pool.existing_units * pool.accels_per_unit),
                hours=hours,
                cost_usd=float(sum(by_period.values())),
                co2e_t=idle_t,
                cost_by_period_usd=by_period,
            )
        )
    return out


def _staff_scale_items(rd: _Reading, model: LinearModel, var: pd.DataFrame) -> list[LineItem]:
    """The staff saving of a site past 1,000 servers in a period (solver/core/staff.py):
    one ``staff_scale`` line per site and period where it is not zero; ``units`` is the
    site's average owned fleet in the period, ``cost_usd`` the saving (negative)."""
    staff = var[var["kind"] == "staff"]
    if staff.empty:
        return []
    cost = model.expressions["total_cost_usd"].coefs
    fleet: dict[tuple[int, int], float] = defaultdict(float)
    usd: dict[tuple[int, int], float] = defaultdict(float)
    r: FrameRow
    for i, r in zip(staff.index, staff.itertuples(index=False), strict=True):
        fleet[(int(r.pool), int(r.period))] += float(r.value)
        usd[(int(r.pool), int(r.period))] += cost.get(int(i), 0.0) * float(r.value)
    out = []
    for (p, t), saving in sorted(usd.items()):
        if abs(saving) < 1e-6:
            continue
        pool = rd.pool_rows[p]
        name = rd.p_names[t]
        out.append(
            LineItem(
                item="staff_scale",
                period=name,
                provider="owned",
                region=pool.site_id,
                offering=f"staff@{pool.site_id}",
                accelerator="",
                mode=Mode.OWNED,
                units=fleet[(p, t)],
                accelerators=0.0,
                hours=0.0,
                cost_usd=saving,
                co2e_t=0.0,
                cost_by_period_usd={name: saving},
                tier="owned",
            )
        )
    return out


def _by_name(names: list[str], charge: ledger.Charge, units: float) -> dict[str, float]:
    """A ledger charge for ``units`` units as cost per period name (zero periods left out)."""
    return {names[t]: usd * units for t, usd in sorted(charge.by_period_usd.items()) if usd}


def totals_of(items: list[LineItem], period_names: list[str]) -> Totals:
    """Sums of line-item costs by period, provider, mode and workload."""
    by: dict[str, defaultdict[str, float]] = {
        key: defaultdict(float) for key in ("period", "provider", "mode", "workload")
    }
    co2_w: dict[str, float] = defaultdict(float)
    for i in items:
        for period, usd in (i.cost_by_period_usd or {i.period: i.cost_usd}).items():
            by["period"][period] += usd
        by["provider"][i.provider] += i.cost_usd
        by["mode"][i.mode] += i.cost_usd
        by["workload"][i.workload or "(fleet)"] += i.cost_usd
        co2_w[i.workload or "(fleet)"] += i.co2e_t
    return Totals(
        by_period={p: by["period"].get(p, 0.0) for p in period_names},
        by_provider=dict(sorted(by["provider"].items())),
        by_mode=dict(sorted(by["mode"].items())),
        by_workload=dict(sorted(by["workload"].items())),
        co2e_t_by_workload=dict(sorted(co2_w.items())),
    )


def owned_utilisation(items: list[LineItem], compiled: Compiled) -> dict[str, float]:
    """Per owned server type and site: unit-hours in use / unit-hours owned."""
    p_hours = dict(zip(compiled.periods["name"], compiled.periods["hours"], strict=True))
    horizon_h = float(compiled.periods["hours"].sum())
    owned: dict[str, float] = defaultdict(float)
    used: dict[str, float] = defaultdict(float)
    for i in items:
        if i.mode != Mode.OWNED:
            continue
        if i.item in {Item.PURCHASE, Item.EXISTING}:
            owned[i.offering] += i.units * (i.hours if i.item == Item.PURCHASE else horizon_h)
        elif i.item == Item.USE:
            used[i.offering] += i.units * i.hours
        elif i.item == Item.TRAINING:
            used[i.offering] += i.units * p_hours[i.period]
    # a server in use in several blocks is counted once per block's hours: that is its use
    return {o: min(1.0, used[o] / owned[o]) for o in sorted(owned) if owned[o] > 0}


def binding_rows(
    model: LinearModel,
    values: np.ndarray,
    pools: pd.DataFrame | None = None,
    tol: float = 1e-6,
) -> list[Binding]:
    """Rows that hold with equality, of the families reported as binding (what binds:
    ``FAMILIES[family].binds``; demand, capacity links and cuts are not).

    Each carries its key by name (the family's ``keys``, never parsed from the row's name);
    with ``pools`` (the compiled pools), an availability row also names the offering and
    mode it caps, the cap and where the cap comes from.
    """
    from solver.core.model import FAMILIES

    by_pool = pools.set_index("pool_id") if pools is not None else None
    out = []
    for row in model.rows:
        family = FAMILIES[row.family]
        if not family.binds:
            continue
        lhs = sum(c * values[i] for i, c in row.coefs.items())
        slack = row.rhs - lhs if row.sense == "<=" else lhs - row.rhs
        if abs(slack) > tol * max(1.0, abs(row.rhs)):
            continue
        names = [k.rstrip("?") for k in family.keys]
        key = {
            n: v if isinstance(v, str | float) else int(v)
            for n, v in zip(names, row.key, strict=False)
        }
        extra: dict = {}
        pool_id = key.get("pool")
        if row.family == "availability" and by_pool is not None and pool_id in by_pool.index:
            # pool_id is unique in the pools table, so .loc gives one row (a Series); the
            # stubs cannot know the index is unique.
            pool = cast(pd.Series, by_pool.loc[pool_id])
            extra = {
                "offering": str(pool["offering_id"]),
                "mode": str(pool["mode"]),
                "limit": float(pool["availability_cap"]),
                "limit_basis": str(pool["availability_cap_basis"]),
            }
        out.append(
            Binding(
                name=row.name,
                family=row.family,
                description=family.description,
                slack=slack,
                key=key,
                **extra,
            )
        )
    return out


def _block_hours(compiled: Compiled, rows: pd.DataFrame) -> np.ndarray:
    """Hours of each row's (period, block): the period's hours x the block's fraction."""
    return (
        compiled.periods["hours"].to_numpy()[rows["period"].to_numpy()]
        * compiled.blocks["fraction"].to_numpy()[rows["block"].to_numpy()]
    )


def served_fraction(compiled: Compiled, model: LinearModel, values: np.ndarray) -> dict[str, float]:
    """Per online workload: served / demanded (1.0 unless shortfall is allowed)."""
    var = model.variables.assign(value=values)
    short = var[var["kind"] == "shortfall"]
    out: dict[str, float] = {}
    dem = compiled.demand.copy()
    if dem.empty:
        return out
    dem["tokens"] = dem["demand"] * dem["tokens_per_unit"] * _block_hours(compiled, dem)
    for w, group in dem.groupby("workload"):
        total = float(group["tokens"].sum())
        s = short[short["workload"] == w]
        if s.empty:
            out[str(w)] = 1.0
            continue
        h = _block_hours(compiled, s)
        tok = compiled.demand.set_index(["workload", "period", "block", "bucket"])
        per = [
            float(tok.loc[(w, p, b, j), "tokens_per_unit"])
            for p, b, j in zip(s["period"], s["block"], s["bucket"], strict=True)
        ]
        missing = float((s["value"].to_numpy() * np.array(per) * h).sum())
        out[str(w)] = max(0.0, 1.0 - missing / total) if total > 0 else 1.0
    return out
