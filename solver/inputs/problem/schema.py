"""The :class:`Problem` model: a procurement question, its horizon and periods, limits,
policies and workloads, checked as a whole (names that refer to each other agree)."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from solver.errors import closest
from solver.inputs.cost_defaults import TAX_RATE_PERCENT
from solver.inputs.costs import Costs
from solver.inputs.problem.fields import (
    ACCELERATORS_HELP,
    ALL_MODES,
    DEFAULT_TRAINING_MARGIN,
    EXCLUDE_ACCELERATORS_HELP,
    EXCLUDE_VENDORS_HELP,
    MAX_HORIZON_MONTHS,
    TRAINING_MARGIN_HELP,
    VENDORS_HELP,
    AcceleratorList,
    Fraction,
    HardwareName,
    Mode,
    NonNegative,
    PriceConfidence,
    StrictModel,
    Tier,
    TrainingMargin,
    VendorList,
    check_training_margin,
)
from solver.inputs.problem.fleet import (
    ExistingReservation,
    ExistingServer,
    Quota,
    SavingsPlan,
    Site,
    SiteEntry,
)
from solver.inputs.problem.scenarios import CapacityScenario, Uncertainty
from solver.inputs.problem.workloads import (
    BatchInferenceWorkload,
    InferenceWorkload,
    LoadBlock,
    LoadProfile,
    TrainingWorkload,
    Workload,
)


class Period(StrictModel):
    """A planning period (months)."""

    name: str
    months: float = Field(
        gt=0,
        description="Length of the period, months (calendar months from "
        "start with their real hours; 730 h each when the problem has no start)",
    )


class CompareApi(StrictModel):
    """A model API's price list to compare the plan's unit costs with (the same served
    tokens billed at its prices)."""

    name: str = Field(min_length=1, description="The API and model, e.g. 'provider model-x'")
    usd_per_1m_input_tokens: float = Field(ge=0, description="Its price per 1M input tokens, USD")
    usd_per_1m_output_tokens: float = Field(gt=0, description="Its price per 1M output tokens, USD")
    source: str = Field("", description="Where the prices come from (a URL) and their date")


class Problem(StrictModel):
    """A procurement question: workloads and the constraints around them."""

    name: str
    description: str = ""
    horizon_months: float = Field(
        gt=0, le=MAX_HORIZON_MONTHS, description="Planning horizon, months (at most 50 years)"
    )
    start: date | None = Field(
        None,
        description="First day of the plan (YYYY-MM for the first of a month, or YYYY-MM-DD): "
        "dates the cash flow, orders and FOCUS rows. Default: the first of next month",
    )
    periods: list[Period] | None = Field(None, description="Default: one period of the horizon")
    load_blocks: list[LoadBlock] | None = Field(
        None,
        description="Explicit model blocks (older form; wins over the derived ones). Default: "
        "blocks derived from each workload's daily load curve (load_profile)",
    )
    load_profile: LoadProfile | None = Field(
        None,
        description="Daily load curve for every online workload without its own: "
        "{hourly: [24 factors]} or {blocks: [{name, hours_per_day, factor}]}. Default: a "
        "diurnal shape from each workload's peak_to_average (solver/load.py)",
    )
    budget_usd: float | None = Field(None, gt=0, description="Total spend cap, USD")
    capex_budget_usd: float | None = Field(None, ge=0, description="Cap on purchases, USD")
    period_budget_usd: dict[str, NonNegative] = Field(default_factory=dict)
    carbon_cap_tco2e: float | None = Field(None, gt=0, description="Total CO2e cap, tonnes")
    objective: Literal[
        "min_cost", "min_carbon", "max_served", "cost_plus_carbon", "lexicographic", "min_npv"
    ] = Field(
        "min_cost",
        description="What the plan minimises (or maximises): min_cost (default), min_carbon "
        "within the budget, max_served within the budget, cost_plus_carbon at "
        "carbon_price_usd_per_tco2e, lexicographic (cost, then carbon) or min_npv",
    )
    carbon_price_usd_per_tco2e: float = Field(0.0, ge=0, description="For cost_plus_carbon")
    shortfall_penalty_usd_per_mtoken: float = Field(
        1000.0, gt=0, description="Penalty per 1M unserved output tokens (max_served)"
    )
    lexicographic_cost_tolerance: float = Field(
        0.0, ge=0, description="Cost slack for carbon stage"
    )
    providers: list[str] | None = Field(
        None,
        description="Allowed cloud providers; default all (owned servers are allowed by modes)",
    )
    regions: list[str] | None = Field(None, description="Allowed regions; default all")
    residency: list[str] | None = Field(None, description="Allowed residency zones")
    min_tier: Tier | None = Field(
        None,
        description="Lowest provider tier for every workload (marketplace < neocloud < "
        "hyperscaler)",
    )
    accelerators: AcceleratorList | None = Field(
        None, description=ACCELERATORS_HELP + "; a workload's list narrows it"
    )
    vendors: VendorList | None = Field(
        None, description=VENDORS_HELP + "; a workload's list narrows it"
    )
    exclude_accelerators: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_ACCELERATORS_HELP + ", for every workload"
    )
    exclude_vendors: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_VENDORS_HELP + ", for every workload"
    )
    modes: list[Mode] = Field(
        default_factory=lambda: list(ALL_MODES),
        min_length=1,
        description="Purchase modes allowed (on_demand, spot, reserved_1y, reserved_3y, "
        "owned). Default: all five",
    )
    sites: list[SiteEntry] | None = Field(
        None,
        description="The sites owned servers may be in; default every catalog site. Each "
        "entry is a catalog site's id (colo-us-ashburn) or a site of your own described in "
        "full ({name, location, region, pue, electricity_usd_per_kwh, colocation, staff, "
        "power_cap_kw}), which existing_fleet may name. Listing only your own site keeps "
        "servers there; list catalog ids too to allow those",
    )
    currency: str = Field(
        "USD",
        description="ISO 4217 code the plan's totals are also given in (in_currency), at the "
        "catalog's latest rate (catalogs/exchange_rates.csv). Costs are computed in USD, and "
        "every *_usd figure of the problem (budget_usd, ...) is in USD",
    )
    quotes: str | None = Field(
        None,
        exclude=True,
        description="A vendor quotes file (CSV; docs/concepts/prices.md, Vendor quotes), "
        "relative to the problem file: negotiated prices of confidence quote, applied over the "
        "catalog. Not part of the problem's digest (the quoted prices are part of the catalog's)",
    )
    exchange_rates: str | None = Field(
        None,
        exclude=True,
        description="An exchange-rate file (the columns of catalogs/exchange_rates.csv: date, "
        "currency, usd_per_unit, source), relative to the problem file: each currency it names "
        "replaces the catalog's rates of that currency, and the prices in it are converted "
        "again. Not part of the problem's digest (the rates are part of the catalog's)",
    )
    max_price_age_days: float | None = Field(
        None,
        gt=0,
        description="Oldest price a plan may rest on, in days from its date to the plan's "
        "start; a price of unknown date counts as too old",
    )
    min_price_confidence: PriceConfidence | None = Field(
        None,
        description="Weakest price a plan may rest on: unverified < third_party < list = "
        "quote (catalogs/SOURCES.md says which price is which)",
    )
    weak_price_policy: Literal["refuse", "exclude"] = Field(
        "refuse",
        description="What max_price_age_days and min_price_confidence do: refuse (solve over "
        "every price; a plan resting on a weaker or older one is refused, its lines named) or "
        "exclude (leave those prices out before solving; the plan says how many)",
    )
    price_guard: Literal["band_top", "none"] = Field(
        "band_top",
        description="The guard against the optimiser's curse (on by default: the bands in "
        "catalogs/price_bands.csv are measured, bench/quality/price_bands.py): band_top (the "
        "objective prices "
        "each charge at the top of its price confidence's band, price x (1 + band), "
        "catalogs/price_bands.csv, so a weak price wins only by more than its band; budgets "
        "and total_cost_usd stay at catalog prices) or none (the objective at catalog prices). "
        "docs/concepts/price-guard.md",
    )
    owned_cost_policy: Literal["cash", "amortised"] = Field(
        "cash",
        description="cash: a server's capex counts when bought and a reservation's whole term "
        "is owed; amortised: straight-line over a server's life and a reservation's term, only "
        "the months before the horizon (the rest is shown as remaining liability)",
    )
    residual_value: Literal["none", "straight_line"] = Field(
        "none",
        description="Under the cash policy, credit at the horizon what a server bought inside "
        "it is still worth: none, or straight_line (capex x remaining life / life)",
    )
    discount_rate: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Annual discount rate for the plan's net present value (npv_usd) and the "
        "min_npv objective; e.g. 0.08",
    )
    costs: Costs | Literal["none", "default"] | None = Field(
        None,
        description="Cost categories beside compute: storage, egress, support, "
        "operations_staff, taxes, contingency_percent, each off until given; 'default' (or "
        "defaults: true beside the categories given) puts every category not given at its "
        "sourced default (solver/inputs/cost_defaults.py), an empty list zeroes one; "
        "'none' is none (docs/concepts/cost-categories.md)",
    )
    tax_jurisdiction: str | None = Field(
        None,
        description="The country whose VAT or consumption tax the buyer pays on cloud "
        "bills (ISO 3166 code: DE, FR, GB, IE, IT, NL, ES, SE, PL, NO, JP): the tax "
        "category's default, on every cloud provider's bills "
        "(solver/inputs/cost_defaults.py TAX_RATE_PERCENT, docs/concepts/cost-categories.md)",
    )
    compare_api: CompareApi | None = Field(
        None,
        description="A model API's list price to set the plan's $/1M tokens beside: name, "
        "usd_per_1m_input_tokens, usd_per_1m_output_tokens (docs/concepts/unit-costs.md)",
    )
    existing_fleet: list[ExistingServer] = Field(default_factory=list)
    existing_reservations: list[ExistingReservation] = Field(default_factory=list)
    provider_share_max: dict[str, Fraction] = Field(default_factory=dict)
    quotas: list[Quota] = Field(default_factory=list)
    savings_plans: list[SavingsPlan] = Field(
        default_factory=list,
        description="Spend-based commitments the plan may buy (savings plans): each a "
        "provider, a term, its rate per offering and an optional limit; none by default",
    )
    availability_caps: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict, description="offering_id -> max instances (overrides the catalog)"
    )
    training_margin: TrainingMargin = Field(
        DEFAULT_TRAINING_MARGIN,
        description=TRAINING_MARGIN_HELP + "; a training workload's own training_margin wins",
    )
    demand_headroom: float = Field(0.0, ge=0, le=2, description="Extra capacity over demand")
    capacity_confidence: float | None = Field(
        None,
        ge=0.5,
        lt=1,
        description="Plan serving capacity that meets peak with this probability (e.g. 0.9): "
        "each capacity figure is derated by its error band's quantile, exp(-z x band), the "
        "band being the accuracy table's RMS log error for its source and runtime "
        "(solver/physics/constants.py CAPACITY_BAND_LOG). Default: the point estimate",
    )
    capacity_optimism: float = Field(
        1.0,
        ge=1,
        le=10,
        description="Plan as if every serving capacity estimate were this many times too high "
        "(1.5: capacity / 1.5), to see how the plan changes if estimates are optimistic. "
        "Default 1",
    )
    capacity_scenario: CapacityScenario | None = Field(
        None,
        description="Plan for one throughput scenario: serving capacity x factor, or at a "
        "quantile of each estimate's error band ({factor: 0.8} or {band_quantile: 0.1}). A "
        "two-stage plan sets it on each scenario's problem (uncertainty.throughput_scenarios). "
        "Default: the estimates as they are",
    )
    memory_headroom: float = Field(
        0.10,
        ge=0,
        lt=1,
        description="Fraction of each device's memory kept out of use: 1 - vLLM's "
        "gpu_memory_utilization (0.90 by default, so 0.10)",
    )
    workloads: list[Workload] = Field(min_length=1)
    uncertainty: Uncertainty | None = Field(
        None,
        description="Scenarios of prices and demand: solve plans commitments now and "
        "rentals per scenario (two-stage, solver/stochastic.py)",
    )

    @field_validator("currency", mode="before")
    @classmethod
    def _currency_code(cls, value: object) -> object:
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z]{3}", value.strip()):
            return value.strip().upper()
        raise ValueError(f"currency {value!r} is not an ISO 4217 code; write e.g. USD or EUR")

    @field_validator("tax_jurisdiction", mode="before")
    @classmethod
    def _jurisdiction(cls, value: object) -> object:
        if value is None:
            return None
        known = ", ".join(sorted(TAX_RATE_PERCENT))
        code = value.strip().upper() if isinstance(value, str) else ""
        if code not in TAX_RATE_PERCENT:
            raise ValueError(
                f"no published tax rate for jurisdiction {value!r}\nfix: name one of {known}, "
                "or leave tax_jurisdiction out and give costs.taxes with a provider and "
                "rate_percent"
            )
        return code

    @field_validator("training_margin", mode="before")
    @classmethod
    def _margin(cls, value: object) -> object:
        if value is None:
            raise ValueError(
                "training_margin is empty; write 'low' (the default), 'point' or a number in "
                "(0, 1], or remove the key"
            )
        return check_training_margin(value)

    def workload(self, name: str) -> TrainingWorkload | InferenceWorkload | BatchInferenceWorkload:
        """The workload of that name.

        Raises
        ------
        KeyError
            No workload has it.
        """
        for w in self.workloads:
            if w.name == name:
                return w
        raise KeyError(name)

    def training_margin_of(self, workload: TrainingWorkload) -> str | float:
        """The margin a training workload is sized at: its own, else the problem's."""
        own = workload.training_margin
        return own if own is not None else self.training_margin

    @field_validator("start", mode="before")
    @classmethod
    def _month(cls, value: object) -> object:
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}", value.strip()):
            return value.strip() + "-01"  # a month means its first day
        return value

    @field_validator("savings_plans")
    @classmethod
    def _one_plan_per_term(cls, plans: list[SavingsPlan]) -> list[SavingsPlan]:
        seen = [(sp.provider, sp.term) for sp in plans]
        dupes = sorted({f"{p} {t}" for p, t in seen if seen.count((p, t)) > 1})
        if dupes:
            raise ValueError(
                f"savings_plans lists {', '.join(dupes)} more than once; give each provider "
                "and term once (merge their rates)"
            )
        return plans

    @field_validator("sites")
    @classmethod
    def _sites_once(cls, sites: list[str | Site] | None) -> list[str | Site] | None:
        own = [s.name for s in sites or [] if isinstance(s, Site)]
        repeated = sorted({n for n in own if own.count(n) > 1})
        if repeated:
            raise ValueError(f"sites describes {repeated} more than once; keep one of each")
        return sites

    @model_validator(mode="after")
    def _consistent(self) -> Problem:
        names = [w.name for w in self.workloads]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"workload names must be unique; repeated: {dupes}")
        if self.objective == "min_npv" and self.discount_rate is None:
            raise ValueError("objective min_npv needs a discount_rate (annual, e.g. 0.08)")
        total = sum(p.months for p in self.resolved_periods)
        if abs(total - self.horizon_months) > 1e-6:
            raise ValueError(
                f"periods add up to {total:g} months but horizon_months is {self.horizon_months:g}"
            )
        period_names = [p.name for p in self.resolved_periods]
        if len(set(period_names)) != len(period_names):
            raise ValueError("period names must be unique")
        if self.load_blocks is not None:
            hours = sum(b.hours_per_day for b in self.load_blocks)
            if abs(hours - 24.0) > 1e-6:
                raise ValueError(f"load_blocks cover {hours:g} h/day; they must cover 24")
            if all(b.demand_factor == 0 for b in self.load_blocks):
                raise ValueError(
                    "load_blocks have demand_factor 0 in every block, so no hour of the day "
                    "would carry the workloads' demand; give at least one block a "
                    "demand_factor > 0 (or leave it out: each workload's peak_to_average)"
                )
            profiled = [w.name for w in self.workloads if getattr(w, "load_profile", None)]
            if self.load_profile is not None or profiled:
                where = "load_profile" if self.load_profile is not None else str(profiled)
                raise ValueError(
                    f"load_blocks and a load_profile ({where}) both shape the day; give one"
                )
        for key in self.period_budget_usd:
            if key not in period_names:
                raise ValueError(
                    f"period_budget_usd names period {key!r}; periods are {period_names}"
                )
        for w in self.workloads:
            refs: list[str | None] = []
            if isinstance(w, TrainingWorkload):
                refs = [w.start_period, w.end_period]
            elif w.periods is not None:
                refs = list(w.periods)
            refs += list(getattr(w, "demand_by_period", {}))
            for ref in refs:
                if ref is not None and ref not in period_names:
                    hint = closest(ref, period_names)
                    raise ValueError(
                        f"workload {w.name!r} names period {ref!r}, which is not in periods "
                        f"{period_names}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    )
        self._check_scenario_names(period_names)
        u = self.uncertainty
        if self.capacity_scenario is not None and u is not None:
            if u.throughput_scenarios or any(x.throughput for x in u.scenarios or []):
                raise ValueError(
                    "capacity_scenario and throughput scenarios under uncertainty both set "
                    "the capacity: keep one of them"
                )
        if self.savings_plans and self.uncertainty is not None:
            raise ValueError(
                "savings_plans with uncertainty is not modelled yet (a two-stage plan "
                "commits reservations and purchases only); solve without uncertainty"
            )
        return self

    def _check_scenario_names(self, period_names: list[str]) -> None:
        """Scenario demand multipliers name online workloads and periods that exist."""
        if self.uncertainty is None or self.uncertainty.scenarios is None:
            return
        online = [w.name for w in self.workloads if isinstance(w, InferenceWorkload)]
        for s in self.uncertainty.scenarios:
            for d in s.demand:
                if d.workload is not None and d.workload not in online:
                    hint = closest(d.workload, online)
                    raise ValueError(
                        f"scenario {s.name!r} scales workload {d.workload!r}, which is not an "
                        f"online workload of the problem {online}"
                        + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    )
                if d.period is not None and d.period not in period_names:
                    raise ValueError(
                        f"scenario {s.name!r} scales period {d.period!r}, which is not in "
                        f"periods {period_names}"
                    )

    @property
    def site_ids(self) -> list[str] | None:
        """Ids of the sites owned servers may be in (None: every catalog site)."""
        if self.sites is None:
            return None
        return [s if isinstance(s, str) else s.name for s in self.sites]

    @property
    def own_sites(self) -> list[Site]:
        """The sites this problem describes itself (they join the catalog's)."""
        return [s for s in self.sites or [] if isinstance(s, Site)]

    @property
    def resolved_periods(self) -> list[Period]:
        return self.periods or [Period(name="all", months=self.horizon_months)]

    @property
    def resolved_blocks(self) -> list[LoadBlock]:
        """Explicit load_blocks, else one 24 h block (the model's blocks: solver.inputs.load)."""
        return self.load_blocks or [LoadBlock(name="peak", hours_per_day=24.0)]
