"""The cost categories beside compute: the problem's ``costs:`` block,
the published defaults it may lean on, and what is still not modelled.

Every category is off until the problem gives it, or asks for the sourced defaults
(``costs: default``, or ``defaults: true`` beside the categories it gives: those not
given take their defaults from the plan, :mod:`solver.inputs.cost_defaults`,
``Resolved.defaults``). A category given:

- ``storage``: GB held each month per provider and storage class, at the class's
  published $/GB-month (:data:`STORAGE_USD_PER_GB_MONTH`) or the entry's own price.
- ``egress``: GB leaving a provider, per month or per million output tokens a serving
  workload serves, at the provider's published $/GB (:data:`EGRESS_USD_PER_GB`) or the
  entry's own.
- ``support``: a provider's support plan, the greater of a monthly minimum and a tiered
  percentage of the month's spend with that provider (:data:`SUPPORT_PLANS`, or the
  entry's own minimum and bands).
- ``operations_staff``: people who run the rented fleet, USD per instance-year (default
  one administrator per 140 servers at the loaded US median pay, catalogs/SOURCES.md
  STAFF_BY_SIZE and STAFF_LOADING), charged per instance-hour rented or reserved in use.
- ``taxes``: a sales tax or VAT rate on everything a provider bills.
- ``contingency_percent``: a stated reserve on top of everything else.

Figures and their sources are in catalogs/SOURCES.md ("Cost categories beside compute").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from solver.errors import ProcureError, suggestion
from solver.inputs.cost_defaults import (
    STAFF_DEFAULT_SOURCE,
    STAFF_USD_PER_INSTANCE_YEAR,
    TAX_NONE,
    support_default,
    tax_rate,
)

#: (provider, storage class) -> (USD per GB-month, source). Only prices read from the
#: provider's own page; any other provider or class needs the entry's usd_per_gb_month.
STORAGE_USD_PER_GB_MONTH: dict[tuple[str, str], tuple[float, str]] = {
    ("aws", "s3_standard"): (
        0.023,
        "aws.amazon.com/s3/pricing: S3 Standard, first 50 TB/month, US East (N. Virginia)",
    ),
}
#: provider -> (USD per GB to the internet, source): the first published band.
EGRESS_USD_PER_GB: dict[str, tuple[float, str]] = {
    "aws": (
        0.09,
        "aws.amazon.com/ec2/pricing/on-demand: data transfer out from EC2 to the internet, "
        "first 10 TB/month (the first 100 GB/month free across services is not taken off)",
    ),
}


@dataclass(frozen=True)
class SupportPlan:
    """A support plan as published: the monthly fee is the greater of ``minimum_usd`` and
    ``percent`` of the month's spend in each band (bands up to ``up_to_usd``, the last
    open)."""

    minimum_usd_per_month: float
    bands: tuple[tuple[float | None, float], ...]  # (up_to_usd or None, percent)
    source: str


_AWS_SUPPORT = "aws.amazon.com/premiumsupport/pricing (read 2026-11-25 from a stored copy)"
#: (provider, plan) -> the published plan
SUPPORT_PLANS: dict[tuple[str, str], SupportPlan] = {
    ("aws", "developer"): SupportPlan(29.0, ((None, 3.0),), _AWS_SUPPORT),
    ("aws", "business"): SupportPlan(
        100.0, ((10_000.0, 10.0), (80_000.0, 7.0), (250_000.0, 5.0), (None, 3.0)), _AWS_SUPPORT
    ),
    ("aws", "enterprise"): SupportPlan(
        15_000.0,
        ((150_000.0, 10.0), (500_000.0, 7.0), (1_000_000.0, 5.0), (None, 3.0)),
        _AWS_SUPPORT,
    ),
}
#: the problem's own staff rate (costs.operations_staff.usd_per_instance_year)
STAFF_SOURCE = "the problem's costs.operations_staff.usd_per_instance_year"
HOURS_PER_YEAR = 8760.0

#: what no plan models yet, whatever the problem says (the plan's ``not_included``)
NOT_MODELLED: tuple[str, ...] = (
    "networking inside and between clouds (inter-zone and inter-region transfer, load "
    "balancers, public IPs, dedicated interconnects)",
    "storage requests, retrieval and replication; volume bands past a price's first band "
    "and free allowances",
    "currency risk: exchange rates are the catalog's, fixed for the horizon",
    "software licences and managed services (orchestration, observability, model APIs)",
    "the choice of provider weighing staff and taxes: they are charged on the plan the "
    "solver chose by its compute, egress and support cost, and only the budget holds them "
    "(egress by default and support plans are in the objective; egress given under costs: "
    "is charged after)",
)
#: the categories a problem may opt in to, with what their absence means
CATEGORY_WORDS: dict[str, str] = {
    "storage": "storage (datasets, checkpoints): no costs.storage entries",
    "egress": "egress (data leaving a provider): no costs.egress entries",
    "support": "provider support plans: no costs.support entries",
    "staff": "operations staff for rented fleets: no costs.operations_staff",
    "tax": "sales taxes and VAT: no costs.taxes entries",
    "contingency": "contingency: costs.contingency_percent is 0",
}
Category = Literal["storage", "egress", "support", "staff", "tax", "contingency"]
CATEGORIES: tuple[str, ...] = ("storage", "egress", "support", "staff", "tax", "contingency")
#: a ``costs:`` field -> the category it gives
CATEGORY_OF_FIELD: dict[str, str] = {
    "storage": "storage",
    "egress": "egress",
    "support": "support",
    "operations_staff": "staff",
    "taxes": "tax",
    "contingency_percent": "contingency",
}


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _AsGiven(_Entry):
    """An entry written back as given (the fields set, no defaults filled in), so that a
    plan's problem echo reads back with the same fields given: which categories
    ``defaults: true`` leaves to their defaults, and whether a staff rate was given."""

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}


class StorageEntry(_Entry):
    """GB held with a provider every month of the horizon."""

    provider: str = Field(description="Catalog provider id (aws, coreweave, ...)")
    storage_class: str = Field(description="The provider's storage class, e.g. s3_standard")
    gb: float = Field(gt=0, description="GB (10^9 bytes) held every month of the horizon")
    usd_per_gb_month: float | None = Field(
        None, ge=0, description="Price; default the published one (catalogs/SOURCES.md)"
    )


class EgressEntry(_Entry):
    """GB leaving a provider: per month, or per million output tokens a workload serves."""

    provider: str = Field(description="Catalog provider id the data leaves")
    gb_per_month: float | None = Field(None, gt=0, description="GB every month of the horizon")
    workload: str | None = Field(None, description="Serving workload whose tokens leave")
    gb_per_million_tokens: float | None = Field(
        None, gt=0, description="GB per million output tokens the workload serves"
    )
    usd_per_gb: float | None = Field(
        None, ge=0, description="Price; default the published one (catalogs/SOURCES.md)"
    )

    @model_validator(mode="after")
    def _one_basis(self) -> EgressEntry:
        per_token = self.gb_per_million_tokens is not None or self.workload is not None
        if (self.gb_per_month is not None) == per_token:
            raise ValueError(
                "an egress entry needs gb_per_month, or workload with gb_per_million_tokens "
                "(not both)\nfix: give one of gb_per_month: 500 or workload: chat and "
                "gb_per_million_tokens: 0.004"
            )
        if per_token and (self.workload is None or self.gb_per_million_tokens is None):
            missing = "workload" if self.workload is None else "gb_per_million_tokens"
            raise ValueError(
                f"an egress entry by tokens needs {missing} too\nfix: give both workload "
                "and gb_per_million_tokens"
            )
        return self


class SupportBand(_Entry):
    up_to_usd: float | None = Field(
        None, gt=0, description="Upper end of the band (monthly spend, USD); none = the rest"
    )
    percent: float = Field(ge=0, le=100, description="Percent of the spend in the band")


class SupportEntry(_Entry):
    """A provider's support plan: a published one by name, or a minimum and bands."""

    provider: str = Field(description="Catalog provider id")
    plan: str | None = Field(None, description="A published plan: aws developer/business/...")
    minimum_usd_per_month: float | None = Field(None, ge=0)
    bands: list[SupportBand] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _plan_or_bands(self) -> SupportEntry:
        if (self.plan is None) == (self.bands is None):
            raise ValueError(
                "a support entry needs a published plan or its own bands (not both)\nfix: "
                "write plan: business, or bands: [{up_to_usd: 10000, percent: 10}, "
                "{percent: 3}] with minimum_usd_per_month"
            )
        if self.bands is not None:
            ends = [b.up_to_usd for b in self.bands]
            if ends[-1] is not None or any(e is None for e in ends[:-1]):
                raise ValueError(
                    "support bands need an up_to_usd on every band but the last, which has "
                    "none\nfix: end the bands with {percent: N} (the rest of the spend)"
                )
            inner = [e for e in ends[:-1] if e is not None]
            if any(b <= a for a, b in zip(inner, inner[1:], strict=False)):
                raise ValueError(
                    f"support bands' up_to_usd must rise: {inner}\nfix: list the bands "
                    "from the lowest spend up"
                )
        return self


class StaffEntry(_AsGiven):
    usd_per_instance_year: float = Field(
        STAFF_USD_PER_INSTANCE_YEAR,
        gt=0,
        description="Staff cost per rented instance per year, USD (default 966.16: one "
        "administrator per 140 servers at $135,262.41 a year, catalogs/SOURCES.md "
        "STAFF_BY_SIZE and STAFF_LOADING)",
    )


class TaxEntry(_Entry):
    provider: str = Field(description="Catalog provider id whose bills carry the tax")
    rate_percent: float = Field(gt=0, le=100, description="Sales tax or VAT, percent")


class Costs(_AsGiven):
    """The cost categories beside compute: each off until given, or, with ``defaults:
    true`` (``costs: default``), every category not given at its sourced default."""

    defaults: bool = Field(
        False,
        description="Every category not given takes its sourced default "
        "(solver/inputs/cost_defaults.py; costs: default is defaults: true alone)",
    )
    storage: list[StorageEntry] = Field(default_factory=list)
    egress: list[EgressEntry] = Field(default_factory=list)
    support: list[SupportEntry] = Field(default_factory=list)
    operations_staff: StaffEntry | None = None
    taxes: list[TaxEntry] = Field(default_factory=list)
    contingency_percent: float = Field(
        0.0, ge=0, le=100, description="Reserve on top of everything else, percent"
    )

    @model_validator(mode="after")
    def _once_per_provider(self) -> Costs:
        for name, entries in (("support", self.support), ("taxes", self.taxes)):
            seen = [e.provider for e in entries]
            twice = sorted({p for p in seen if seen.count(p) > 1})
            if twice:
                raise ValueError(
                    f"costs.{name} names {twice} more than once\nfix: keep one entry per provider"
                )
        return self


@dataclass(frozen=True)
class Resolved:
    """The problem's costs with every price and plan looked up (plain data for core/ and
    plan/): each list entry is (index in the problem's list, entry, price, source)."""

    storage: list[tuple[int, StorageEntry, float, str]] = field(default_factory=list)
    egress: list[tuple[int, EgressEntry, float, str]] = field(default_factory=list)
    support: dict[str, SupportPlan] = field(default_factory=dict)
    staff_usd_per_instance_hour: float = 0.0
    tax_rate: dict[str, float] = field(default_factory=dict)  # fraction, not percent
    contingency_rate: float = 0.0  # fraction
    staff_source: str = STAFF_SOURCE
    #: the categories (of :data:`CATEGORIES`) the problem did not give, which take their
    #: defaults from the plan (solver.inputs.cost_defaults); empty under ``costs: none``
    defaults: frozenset[str] = frozenset()
    #: tax by default (fraction): the problem's tax_jurisdiction's rate on every cloud
    #: provider's bills (0 where it names none), and its source
    tax_default_rate: float = 0.0
    tax_default_source: str = TAX_NONE

    @property
    def any(self) -> bool:
        return bool(
            self.storage
            or self.egress
            or self.support
            or self.staff_usd_per_instance_hour
            or self.tax_rate
            or self.contingency_rate
            or self.defaults
            or self.tax_default_rate
        )


def _provider(value: str, providers: set[str] | None, where: str) -> None:
    if providers is not None and value not in providers:
        raise ProcureError(
            f"unknown provider {value!r}",
            field=where,
            fix=f"{suggestion(value, sorted(providers))} Name a provider of the catalog",
        )


def resolve_costs(
    costs: Costs | Literal["none", "default"] | None,
    providers: set[str] | None,
    serving: set[str],
    other_workloads: set[str],
    tax_jurisdiction: str | None = None,
) -> Resolved:
    """Look up each entry's price or plan (the entry's own, else the published default).

    Parameters
    ----------
    costs
        The problem's ``costs:``: ``"none"``, nothing; None (no block) or ``"default"``,
        every category at its default (all-in by default); a block, its categories, and
        with ``defaults: true`` those not given at their defaults (``Resolved.defaults``).
    providers
        The catalog's provider ids (None: names not checked, as compile checked them).
    serving, other_workloads
        Names of the problem's online serving workloads, and of its other workloads.
    tax_jurisdiction
        The problem's ``tax_jurisdiction`` (ISO 3166 code): the tax by default on every
        cloud provider's bills (:func:`solver.inputs.cost_defaults.tax_rate`).

    Raises
    ------
    ProcureError
        An unknown provider or workload, or a price with no published default; the field
        named (``costs.storage[0].usd_per_gb_month``) with the fix.
    """
    if costs == "none":
        return Resolved()
    if costs is None or costs == "default":
        costs = Costs(defaults=True)
    given = {CATEGORY_OF_FIELD[f] for f in costs.model_fields_set if f in CATEGORY_OF_FIELD}
    by_default = frozenset(CATEGORIES) - given if costs.defaults else frozenset()
    tax_percent, tax_source = tax_rate(tax_jurisdiction) if "tax" in by_default else (0.0, "")
    staff_year = (
        costs.operations_staff.usd_per_instance_year
        if costs.operations_staff is not None
        else (STAFF_USD_PER_INSTANCE_YEAR if "staff" in by_default else 0.0)
    )
    out = Resolved(
        staff_usd_per_instance_hour=staff_year / HOURS_PER_YEAR,
        tax_rate={t.provider: t.rate_percent / 100.0 for t in costs.taxes},
        contingency_rate=costs.contingency_percent / 100.0,
        staff_source=STAFF_SOURCE
        if costs.operations_staff is not None
        and "usd_per_instance_year" in costs.operations_staff.model_fields_set
        else STAFF_DEFAULT_SOURCE,
        defaults=by_default,
        tax_default_rate=tax_percent / 100.0,
        tax_default_source=tax_source or TAX_NONE,
    )
    for i, s in enumerate(costs.storage):
        _provider(s.provider, providers, f"costs.storage[{i}].provider")
        price, source = s.usd_per_gb_month, "the problem's usd_per_gb_month"
        if price is None:
            known = STORAGE_USD_PER_GB_MONTH.get((s.provider, s.storage_class))
            if known is None:
                listed = sorted(c for p, c in STORAGE_USD_PER_GB_MONTH if p == s.provider)
                raise ProcureError(
                    f"no published price for {s.provider} storage class {s.storage_class!r}",
                    field=f"costs.storage[{i}].usd_per_gb_month",
                    fix="give usd_per_gb_month from the provider's price page"
                    + (f", or use a class with one: {listed}" if listed else ""),
                )
            price, source = known
        out.storage.append((i, s, price, source))
    for i, e in enumerate(costs.egress):
        _provider(e.provider, providers, f"costs.egress[{i}].provider")
        if e.workload is not None and e.workload not in serving:
            why = "is not an online serving workload" if e.workload in other_workloads else ""
            raise ProcureError(
                f"egress by tokens names workload {e.workload!r}, which "
                + (why or "the problem does not have"),
                field=f"costs.egress[{i}].workload",
                fix=f"name one of the serving workloads {sorted(serving)}, or give "
                "gb_per_month instead",
            )
        price, source = e.usd_per_gb, "the problem's usd_per_gb"
        if price is None:
            if e.provider not in EGRESS_USD_PER_GB:
                raise ProcureError(
                    f"no published egress price for {e.provider}",
                    field=f"costs.egress[{i}].usd_per_gb",
                    fix="give usd_per_gb from the provider's price page (0 if it charges none)",
                )
            price, source = EGRESS_USD_PER_GB[e.provider]
        out.egress.append((i, e, price, source))
    for i, sup in enumerate(costs.support):
        _provider(sup.provider, providers, f"costs.support[{i}].provider")
        if sup.plan is not None:
            plan = SUPPORT_PLANS.get((sup.provider, sup.plan))
            if plan is None:
                listed = sorted(n for p, n in SUPPORT_PLANS if p == sup.provider)
                raise ProcureError(
                    f"no published support plan {sup.plan!r} for {sup.provider}",
                    field=f"costs.support[{i}].plan",
                    fix=(f"use one of {listed}, or " if listed else "")
                    + "give minimum_usd_per_month and bands from the provider's page",
                )
        else:
            bands = tuple((b.up_to_usd, b.percent) for b in sup.bands or [])
            plan = SupportPlan(sup.minimum_usd_per_month or 0.0, bands, "the problem's bands")
        out.support[sup.provider] = plan
    for i, t in enumerate(costs.taxes):
        _provider(t.provider, providers, f"costs.taxes[{i}].provider")
    return out


def support_fee_usd(plan: SupportPlan, spend_usd: float, month_fraction: float = 1.0) -> float:
    """A month's support fee: the greater of the minimum and the tiered percentage of the
    spend (each band's percent on the spend inside it). A part month (``month_fraction``
    below 1) scales the minimum and the bands' ends alike (pro rata)."""
    tiered, lower = 0.0, 0.0
    for up_to, percent in plan.bands:
        upper = float("inf") if up_to is None else up_to * month_fraction
        inside = max(0.0, min(spend_usd, upper) - lower)
        tiered += inside * percent / 100.0
        lower = upper
    return max(plan.minimum_usd_per_month * month_fraction, tiered)


def top_rate(plan: SupportPlan) -> float:
    """The highest band's percent as a fraction: a linear bound of the tiered fee."""
    return max(p for _, p in plan.bands) / 100.0


class _Demand(Protocol):
    """What this module reads of a serving workload's demand (problem.Demand)."""

    @property
    def users(self) -> float | None: ...
    @property
    def requests_per_user_per_day(self) -> float | None: ...
    @property
    def tokens_per_s(self) -> float | None: ...
    @property
    def requests_per_s(self) -> float | None: ...


class _Workload(Protocol):
    """What this module reads of any workload (problem.Workload's kinds)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...


class _Serving(_Workload, Protocol):
    """What this module reads of a serving workload (problem.InferenceWorkload): output
    tokens per request, and its demand, periods and demand factor per period."""

    @property
    def demand(self) -> _Demand: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def periods(self) -> list[str] | None: ...
    @property
    def demand_by_period(self) -> dict[str, float]: ...


class _Problem(Protocol):
    """What this module reads of a problem (problem.Problem, which imports this module)."""

    @property
    def costs(self) -> Costs | Literal["none", "default"] | None: ...
    @property
    def workloads(self) -> Sequence[_Workload]: ...
    def workload(self, name: str) -> _Workload: ...


def served_tokens_per_s(workload: _Serving) -> float:
    """A serving workload's average output tokens/s, from its demand: tokens_per_s, else
    requests (per second, or users x requests per user per day / 86,400) x output tokens
    per request (the traffic mix's mean when it has one)."""
    dem = workload.demand
    if dem.tokens_per_s is not None:
        return float(dem.tokens_per_s)
    mix = getattr(workload, "traffic_mix", None)
    output = sum(b.share * b.output_tokens for b in mix) if mix else float(workload.output_tokens)
    if dem.requests_per_s is not None:
        return float(dem.requests_per_s) * output
    users = cast(float, dem.users)  # Demand._one_way: the third way, users with a rate
    per_user = cast(float, dem.requests_per_user_per_day)
    return float(users) * float(per_user) * output / 86_400.0


def resolve_problem_costs(problem: _Problem, providers: set[str] | None = None) -> Resolved:
    """:func:`resolve_costs` of a problem (its serving workloads named from its own)."""
    serving = {w.name for w in problem.workloads if w.kind == "inference"}
    others = {w.name for w in problem.workloads} - serving
    jurisdiction = getattr(problem, "tax_jurisdiction", None)
    return resolve_costs(problem.costs, providers, serving, others, jurisdiction)


def modelled_plans(problem: _Problem, providers: set[str]) -> dict[str, SupportPlan]:
    """Provider -> the support plan the model prices (solver.core.formulation.support):
    the problem's ``costs.support``, else (support by default) each of ``providers``'
    default plan that bills one (AWS Business); none without any cost category or for
    owned servers."""
    resolved = resolve_problem_costs(problem)
    if not resolved.any:
        return {}
    if "support" not in resolved.defaults:
        return dict(resolved.support)
    out: dict[str, SupportPlan] = {}
    for provider in sorted(providers - {"owned"}):
        name, source = support_default(provider)
        if name:
            out[provider] = replace(SUPPORT_PLANS[(provider, name)], source=source)
    return out


def egress_gb(
    entry: EgressEntry, problem: _Problem, period: str, months: float, hours: float
) -> float:
    """GB an egress entry sends in ``months`` months (``hours`` hours) of ``period``:
    gb_per_month x months, or GB per million tokens x the workload's served tokens (its
    average output tokens/s x its demand factor for the period x the hours; none in a
    period the workload does not run in)."""
    if entry.gb_per_month is not None:
        return entry.gb_per_month * months
    # resolve_costs checked that a by-tokens entry names a serving workload
    w = cast(_Serving, problem.workload(cast(str, entry.workload)))
    if w.periods is not None and period not in w.periods:
        return 0.0
    tokens = served_tokens_per_s(w) * w.demand_by_period.get(period, 1.0) * hours * 3600.0
    per_million_gb = cast(float, entry.gb_per_million_tokens)  # EgressEntry: one of the two
    return float(per_million_gb) * tokens / 1e6


__all__ = [
    "CATEGORIES",
    "CATEGORY_WORDS",
    "Costs",
    "EGRESS_USD_PER_GB",
    "NOT_MODELLED",
    "Resolved",
    "STORAGE_USD_PER_GB_MONTH",
    "SUPPORT_PLANS",
    "SupportPlan",
    "egress_gb",
    "modelled_plans",
    "resolve_problem_costs",
    "resolve_costs",
    "served_tokens_per_s",
    "support_fee_usd",
    "top_rate",
]
