"""The cost ledger: every charge the plan can incur, computed in one place.

Model (the objective's coefficients and per-period splits), plan (line-item costs), the
re-solve (capex already spent) and the exports read their money from here, so the same
purchase or reservation is charged the same everywhere. The verifier does NOT import
this module: it recomputes every charge from the catalog on its own (solver/trust/),
which is what makes its check independent.

Charges are per unit (one instance, one server) and split over the problem's periods
(a DataFrame with ``start_month``, ``end_month`` and ``months`` per period, as
:func:`solver.core.compile.build_periods` makes it). Money in USD, time in months from
the plan's start; hours of a span of months come from the problem's
:class:`solver.core.clock.Clock` (calendar hours when the problem states its start, else
730-hour months).

- Rent (on-demand, spot): price x units x hours, in the period it runs.
- Reservation: price x term hours, used or not; each period pays the months of the term
  it holds; what the term runs past the horizon is still owed and is charged to the last
  period (``beyond_horizon_usd`` says how much).
- Purchase (owned server): capex, counted whole (``cash``, less the straight-line value of
  its remaining life at the horizon when ``residual_value`` asks for it) or as the
  fraction of its life in service before the horizon (``amortised``), in the period it
  is bought; hosting per month from delivery (after the lead time) to the end of its
  life or the horizon. A server serves only until its life ends: later periods need a
  new purchase.
- Present value: each period's charges discounted at its middle month
  (:func:`discount_factors`) when the problem has a ``discount_rate``.
- Existing fleet: hosting of servers owned at the start, and the remaining months of
  reservations held at the start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from solver.core.clock import Clock
from solver.inputs.costs import Resolved, SupportPlan, egress_gb, top_rate
from solver.units import PRICE_COLUMN  # noqa: F401  (re-exported)

if TYPE_CHECKING:
    from solver.inputs.problem import Problem


@dataclass(frozen=True)
class Charge:
    """One charge per unit: the total, its split by period index, and its parts."""

    total_usd: float
    by_period_usd: dict[int, float] = field(default_factory=dict)
    capex_usd: float = 0.0  # the part that is a purchase (capex budget, cash flow)
    capex_fraction: float = 0.0  # share of a server's capex (and embodied CO2e) counted
    beyond_horizon_usd: float = 0.0  # owed for months after the horizon (reservations)
    in_service_months: float = 0.0  # months a server serves before the horizon
    residual_usd: float = 0.0  # credited at the horizon for a server's remaining life


def overlap_months(periods: pd.DataFrame, begin: float, end: float) -> np.ndarray:
    """Months of [begin, end) that fall in each period (array over periods)."""
    s = periods["start_month"].to_numpy(dtype=float)
    e = periods["end_month"].to_numpy(dtype=float)
    return np.clip(np.minimum(e, end) - np.maximum(s, begin), 0.0, None)


def rent_usd(price_usd_per_hour: float, units: float, hours: float) -> float:
    """Pay-per-use: price x units x hours."""
    return price_usd_per_hour * units * hours


def capex_fraction(policy: str, in_service_months: float, lifetime_months: float) -> float:
    """Share of a server's capex counted inside the horizon.

    ``cash``: all of it when bought. ``amortised``: straight-line over its life, the
    months in service before the horizon over the lifetime (at most 1).
    """
    if policy == "amortised":
        return min(1.0, max(0.0, in_service_months) / lifetime_months) if lifetime_months else 1.0
    return 1.0


def residual_value_usd(
    residual: str, capex_usd: float, life_left_months: float, lifetime_months: float
) -> float:
    """What a server is worth at the horizon: straight-line, capex x life left / life."""
    if residual != "straight_line" or not lifetime_months:
        return 0.0
    return capex_usd * min(1.0, max(0.0, life_left_months) / lifetime_months)


def purchase(
    *,
    capex_usd: float,
    hosting_usd_per_month: float,
    lifetime_months: float,
    lead_months: float,
    bought_in: int,
    periods: pd.DataFrame,
    horizon_months: float,
    policy: str,
    residual: str = "none",
) -> Charge:
    """One server bought in period ``bought_in``.

    It is delivered ``lead_months`` after the period starts and serves until the end of
    its life or the horizon, whichever comes first (a server that wears out inside the
    horizon is replaced by another purchase). Charges: the capex share of ``policy`` in
    the period it is bought; hosting for every month in service; under the cash policy
    with ``residual`` straight_line, a credit at the horizon of what its remaining life
    is worth (the amortised policy already counts only the life used).
    """
    arrival = float(periods["start_month"].iloc[bought_in]) + lead_months
    retired = arrival + lifetime_months if lifetime_months else np.inf
    in_service = max(0.0, min(horizon_months, retired) - arrival)
    frac = capex_fraction(policy, in_service, lifetime_months)
    split = {bought_in: capex_usd * frac}
    months = overlap_months(periods, arrival, min(horizon_months, retired))
    for t in np.flatnonzero(months > 0):
        split[int(t)] = split.get(int(t), 0.0) + hosting_usd_per_month * float(months[t])
    credit = 0.0
    if policy == "cash":
        credit = residual_value_usd(residual, capex_usd, retired - horizon_months, lifetime_months)
        last = len(periods) - 1
        split[last] = split.get(last, 0.0) - credit
    return Charge(
        total_usd=capex_usd * frac + hosting_usd_per_month * in_service - credit,
        by_period_usd=split,
        capex_usd=capex_usd * frac,
        capex_fraction=frac,
        in_service_months=in_service,
        residual_usd=credit,
    )


def pool_purchase(
    pool: Any,  # a pools-table row tuple (solver.inputs.tables.row_tuples), untyped
    bought_in: int,
    periods: pd.DataFrame,
    horizon_months: float,
    problem: Problem,
) -> Charge:
    """:func:`purchase` for one server of an owned pool (a compiled pools-table row) under
    the problem's cost policy and residual value."""
    return purchase(
        capex_usd=pool.capex_usd,
        hosting_usd_per_month=pool.hosting_usd_per_month,
        lifetime_months=pool.lifetime_months,
        lead_months=pool.lead_months,
        bought_in=bought_in,
        periods=periods,
        horizon_months=horizon_months,
        policy=problem.owned_cost_policy,
        residual=problem.residual_value,
    )


def discount_factors(periods: pd.DataFrame, annual_rate: float | None) -> np.ndarray:
    """Present-value factor per period, at its middle month: (1 + r) ** -(month / 12)."""
    if not annual_rate:
        return np.ones(len(periods))
    mid = periods["start_month"].to_numpy(dtype=float) + periods["months"].to_numpy(dtype=float) / 2
    return (1.0 + annual_rate) ** (-mid / 12.0)


def _hours_by_period(periods: pd.DataFrame, begin: float, end: float, clock: Clock) -> dict:
    """Period index -> hours of [begin, end) inside it (periods it does not reach left out)."""
    s = periods["start_month"].to_numpy(dtype=float)
    e = periods["end_month"].to_numpy(dtype=float)
    out = {}
    for t in range(len(periods)):
        hours = clock.hours(max(s[t], begin), min(e[t], end))
        if hours > 0:
            out[t] = hours
    return out


def reservation(
    *,
    price_usd_per_hour: float,
    term_months: float,
    begins_in: int,
    periods: pd.DataFrame,
    clock: Clock,
    policy: str = "cash",
) -> Charge:
    """One instance reserved from the start of period ``begins_in`` for its whole term.

    Each period pays the months of the term it holds. The months past the horizon are
    still owed (``beyond_horizon_usd``): the cash policy charges them to the last period,
    as it charges a server's whole capex; the amortised policy counts only the months
    inside the horizon, as it counts only the part of a server's life used inside it.
    """
    begin = float(periods["start_month"].iloc[begins_in])
    total = price_usd_per_hour * clock.hours(begin, begin + term_months)
    split = {
        t: price_usd_per_hour * hours
        for t, hours in _hours_by_period(periods, begin, begin + term_months, clock).items()
    }
    beyond = total - sum(split.values())
    if policy == "amortised":
        return Charge(total_usd=total - beyond, by_period_usd=split, beyond_horizon_usd=beyond)
    last = len(periods) - 1
    split[last] = split.get(last, 0.0) + beyond
    return Charge(total_usd=total, by_period_usd=split, beyond_horizon_usd=beyond)


def existing_reservation(
    *, price_usd_per_hour: float, months_remaining: float, periods: pd.DataFrame, clock: Clock
) -> Charge:
    """One instance reserved before the start, for the months of its term still inside."""
    split = {
        t: price_usd_per_hour * hours
        for t, hours in _hours_by_period(periods, 0.0, months_remaining, clock).items()
    }
    return Charge(total_usd=sum(split.values()), by_period_usd=split)


def existing_server(*, hosting_usd_per_month: float, periods: pd.DataFrame) -> Charge:
    """One server owned at the start: its hosting for every month of the horizon."""
    months = periods["months"].to_numpy(dtype=float)
    split = {int(t): hosting_usd_per_month * float(months[t]) for t in range(len(months))}
    return Charge(total_usd=sum(split.values()), by_period_usd=split)


@dataclass(frozen=True)
class ExtrasBound:
    """What the budget row holds for the cost categories beside compute:
    ``all-in <= multiplier x compute + constant_usd``, for any plan.

    The categories are charged after the solve (:mod:`solver.plan.costs`); this bound is
    linear in the plan's compute cost, so the budget row stays one linear row and the
    plan's all-in total never exceeds the budget:

    - support: max(minimum, tiered %) <= minimum + the top band's % x spend, each month
      (only for providers whose support the model does not price: ``modelled_support``);
    - staff: USD per instance-hour x instance-hours <= (that / the cheapest cloud pool's
      price per instance-hour) x compute cost;
    - taxes at the highest rate any provider carries; contingency on everything.
    """

    multiplier: float
    constant_usd: float
    basis: str


def extras_bound(
    resolved: Resolved,
    problem: Problem,
    periods: pd.DataFrame,
    cloud_min_usd_per_hour: float | None,
    default_fixed_usd: float = 0.0,
    default_support: dict[str, SupportPlan] | None = None,
    modelled_support: frozenset[str] = frozenset(),
) -> ExtrasBound:
    """The linear bound of :class:`ExtrasBound` for a problem's resolved ``costs``.

    Parameters
    ----------
    resolved
        :class:`solver.inputs.costs.Resolved`.
    problem
        The problem (egress by tokens reads its workloads' demand).
    periods
        name, months, hours per period.
    cloud_min_usd_per_hour
        The cheapest price per instance-hour of the model's cloud pools (None: none).
    default_fixed_usd
        Storage and egress by default at the dearest price of any provider the problem
        may use (:func:`solver.core.formulation.limits.budget_bound`), USD.
    default_support
        Support by default: provider -> its default plan, for each provider the problem
        may use that bills one.
    modelled_support
        Providers whose support the model prices exactly (solver.core.formulation.support):
        the budget row carries their fees, so the bound leaves them out (storage and egress
        at no provider in particular keep the top rate of every plan).
    """
    horizon_months = float(periods["months"].sum())
    fixed: dict[str, float] = {}
    for _, s, price, _ in resolved.storage:
        fixed[s.provider] = fixed.get(s.provider, 0.0) + s.gb * price * horizon_months
    for _, e, price, _ in resolved.egress:
        gb = sum(
            # stubs type a row field as any Scalar; months and hours are float columns
            egress_gb(e, problem, str(p.name), float(p.months), float(p.hours))  # type: ignore[arg-type,misc]
            for p in periods.itertuples(index=False)
        )
        fixed[e.provider] = fixed.get(e.provider, 0.0) + gb * price
    # tax by default (a tax_jurisdiction) is on every cloud provider's bills
    tax_max = max([*resolved.tax_rate.values(), resolved.tax_default_rate])
    every = {**(default_support or {}), **resolved.support}
    plans = {p: plan for p, plan in every.items() if p not in modelled_support}
    rate = {p: top_rate(plan) for p, plan in plans.items()}
    constant = 0.0
    if default_fixed_usd:  # at no provider in particular: at the top support rate
        fixed[""] = default_fixed_usd
        rate[""] = max((top_rate(plan) for plan in every.values()), default=0.0)
    for provider in set(fixed) | set(plans):
        support_min = (
            plans[provider].minimum_usd_per_month * horizon_months if provider in plans else 0.0
        )
        tax = resolved.tax_rate.get(
            provider, tax_max if provider == "" else resolved.tax_default_rate
        )
        constant += (1.0 + tax) * ((1.0 + rate.get(provider, 0.0)) * fixed.get(provider, 0.0))
        constant += (1.0 + tax) * support_min
    staff = 0.0
    if resolved.staff_usd_per_instance_hour and cloud_min_usd_per_hour:
        staff = resolved.staff_usd_per_instance_hour / cloud_min_usd_per_hour
    rate_max = max((r for p, r in rate.items() if p), default=0.0)  # providers' plans
    c = 1.0 + resolved.contingency_rate
    multiplier = c * ((1.0 + tax_max) * (1.0 + rate_max) + staff)
    basis = (
        f"all-in <= {multiplier:.6g} x compute + ${c * constant:,.2f}: compute x (1 + "
        f"{resolved.contingency_rate:.4g} contingency) x ((1 + {tax_max:.4g} top tax) x "
        f"(1 + {rate_max:.4g} top support band) + {staff:.4g} staff per compute dollar at "
        "the cheapest cloud price), plus storage, egress and support minimums with their "
        "tax, support and contingency"
    )
    if modelled_support:
        basis += (
            "; support of " + ", ".join(sorted(modelled_support)) + " exact in the row (each "
            "month's fee as the model prices it, with its tax and contingency)"
        )
    return ExtrasBound(multiplier, c * constant, basis)
