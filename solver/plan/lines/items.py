"""What a plan pays for or runs: its line items (by ``item``: docs/reference/plan-json.md),
its costs beside compute, and the rented serving lines seen as deployments.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from solver.units import Item


class LineItem(BaseModel):
    """One thing to pay for or run."""

    # savings_plan: a spend-based commitment (units are USD per hour); savings_plan_cover:
    # on-demand usage a savings plan pays for (a credit of its on-demand charge);
    # staff_scale: the staff saving of a site past 1,000 owned servers (units: its average
    # fleet in the period; cost_usd <= 0)
    item: str = Field(
        description="rent | reservation | purchase | use | training | existing | savings_plan "
        "| savings_plan_cover | staff_scale | capacity_block"
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
    exchange_rate_usd_per_unit: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="US dollars per unit of price_currency the price was converted at (left "
        "out for a USD price)",
    )
    exchange_rate_date: str | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="That rate's date, YYYY-MM-DD (left out for a USD price)",
    )
    cost_in_price_currency: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Rented lines priced in another currency than USD: cost_usd in "
        "price_currency, what the provider bills (cost_usd / exchange_rate_usd_per_unit)",
    )
    unit_price_in_price_currency_per_hour: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Rented lines priced in another currency than USD: the price per "
        "unit-hour in price_currency (unit_price_usd_per_hour / exchange_rate_usd_per_unit)",
    )
    guard_band_fraction: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The guard's band of the line's price (price_guard band_top): the "
        "fraction of its price_confidence in catalogs/price_bands.csv; 0 for lines with no "
        "price of their own (existing, staff_scale); left out when the guard is none",
    )
    guarded_cost_usd: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="cost_usd at the top of its price's band, cost_usd x (1 + "
        "guard_band_fraction): what the objective counted (left out when the guard is none)",
    )
    market_index_usd_per_gpu_hour: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Rented lines (rent, reservation, training, capacity_block) whose "
        "accelerator has a published rental index (catalogs/market_index.csv): its level, "
        "USD per GPU-hour; left out otherwise",
    )
    market_index_date: str | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="That index level's date, YYYY-MM-DD (left out without an index)",
    )
    market_premium_fraction: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The line's price per GPU-hour (cost_usd / (accelerators x hours)) over "
        "its index, less 1: 0.2 is 20% above the market, -0.5 half of it; beyond 1.0 or "
        "below -0.5 the plan carries a market_index warning (left out without an index)",
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
    capacity_block: dict | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Capacity blocks (item capacity_block): the block offer, days, block "
        "sizes and instances, usd_per_instance_hour, start_day and end_day (days from the "
        "plan's start), book_from_day and book_by_day, days_after_horizon; left out otherwise",
    )
    architecture: Literal["aggregated", "disaggregated"] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Serving lines of a workload with architecture auto or disaggregated: "
        "how its replicas serve (left out for the default aggregated workloads)",
    )
    pool_role: Literal["prefill", "decode"] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Disaggregated lines: the pool's role (its units prefill prompts, or decode)",
    )
    kv_link: str | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Disaggregated lines: the link the KV cache crosses (network: the nodes' "
        "scale-out NICs within the provider and region)",
    )
    kv_gb_per_request: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Disaggregated lines: KV cache sent per request, GB (KV bytes per token x "
        "prompt tokens)",
    )
    kv_transfer_s: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Prefill lines: seconds to send one request's KV cache, within the TTFT",
    )
    zone_units: dict[str, float] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Serving units by availability zone (provider/region/zone; an offering "
        "whose zones the catalog does not list is in one zone, provider/region) when the "
        "workload must survive losing a zone; left out otherwise",
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
    """A cost beside compute (solver/plan/costs.py): one per category and
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
