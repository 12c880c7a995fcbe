"""Commitments recomputed: servers bought, reservations, savings plans and the fleet held
at the start.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import cast

from solver.inputs.problem import (
    BatchInferenceWorkload,
    InferenceWorkload,
    SavingsPlan,
    TrainingWorkload,
)
from solver.plan import LineItem
from solver.trust.verify.context import _close, _le
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _owned_month
from solver.units import DAYS_PER_MONTH, PRICE_COLUMN, RESERVED_TERM_MONTHS, Item, Mode


def _check_purchase(
    run: _Run,
    item: LineItem,
    u: dict,
    owned: bool,
    w: TrainingWorkload | InferenceWorkload | BatchInferenceWorkload | None,
) -> None:
    """A server bought: capex share, hosting over its life in service, residual value, hours."""
    c = run.c
    ctx = run.ctx
    p = run.p
    period_cost = run.period_cost
    provider_cost = run.provider_cost
    bought = run.bought
    srv = u["server"]
    lead = float(srv["lead_time_days"]) / DAYS_PER_MONTH
    life = float(srv["lifetime_years"]) * 12
    arrival = ctx.start_month[item.period] + lead
    retired = arrival + life
    in_service = max(0.0, min(ctx.horizon, retired) - arrival)
    frac = min(1.0, in_service / life) if p.owned_cost_policy == "amortised" else 1.0
    # cash policy with a straight-line residual: the life left at the horizon
    residual = (
        float(srv["capex_usd"]) * min(1.0, max(0.0, retired - ctx.horizon) / life)
        if p.owned_cost_policy == "cash" and p.residual_value == "straight_line"
        else 0.0
    )
    hosting, idle_kg = _owned_month(srv, u["site"])
    c.check(
        "line hours",
        _close(item.hours, ctx.hours_at(arrival + in_service) - ctx.hours_at(arrival)),
        f"purchase {item.offering}",
    )
    cost = item.units * (float(srv["capex_usd"]) * frac + hosting * in_service - residual)
    run.residuals[id(item)] = item.units * residual
    c.check(
        "line cost recomputed",
        _close(cost, item.cost_usd, 1e-5),
        f"purchase {item.offering}",
    )
    run.capex += item.units * float(srv["capex_usd"]) * frac
    run.total_cost += cost
    run.total_kg += item.units * (float(srv["embodied_kgco2e"]) * frac + idle_kg * in_service)
    provider_cost["owned"] += cost
    bought[item.offering].append((item.period, item.units))
    for name in ctx.period_names:
        overlap = ctx.overlap_months(name, arrival, min(ctx.horizon, retired))
        period_cost[name] += item.units * hosting * overlap
    period_cost[item.period] += item.units * float(srv["capex_usd"]) * frac
    period_cost[ctx.period_names[-1]] -= item.units * residual


def _check_reservation(
    run: _Run,
    item: LineItem,
    u: dict,
    owned: bool,
    w: TrainingWorkload | InferenceWorkload | BatchInferenceWorkload | None,
) -> None:
    """A reservation: its whole term's hours at the reserved price (amortised: the part inside)."""
    c = run.c
    ctx = run.ctx
    p = run.p
    period_cost = run.period_cost
    provider_cost = run.provider_cost
    committed = run.committed
    # the whole term is owed (cash); amortised counts the months inside the horizon
    term = RESERVED_TERM_MONTHS[item.mode]
    begin = ctx.start_month[item.period]
    inside = 0.0
    for name in ctx.period_names:
        part = u["price"] * item.units * ctx.overlap_hours(name, begin, begin + term)
        period_cost[name] += part
        inside += part
    term_h = ctx.hours_at(begin + term) - ctx.hours_at(begin)
    c.check("line hours", _close(item.hours, term_h), f"reservation {item.offering}")
    cost = u["price"] * item.units * term_h
    if p.owned_cost_policy == "amortised":
        cost = inside
    period_cost[ctx.period_names[-1]] += cost - inside
    c.check(
        "line cost recomputed",
        _close(cost, item.cost_usd, 1e-5),
        f"reservation {item.offering}",
    )
    run.total_cost += cost
    provider_cost[item.provider] += cost
    committed[(item.offering, item.mode)].append((item.period, item.units))


#: line items of savings plans: the commitment and the on-demand usage it pays for
SAVINGS_PLAN_ITEMS = ("savings_plan", "savings_plan_cover")


def _savings_plan_of(run: _Run, item: LineItem) -> SavingsPlan | None:
    """The problem's savings plan a line belongs to (by provider and ``savings_plan_<term>``
    mode), or None."""
    for sp in run.p.savings_plans:
        if sp.provider == item.provider and item.mode == f"savings_plan_{sp.term}":
            return sp
    return None


def _check_savings_plan_line(run: _Run, item: LineItem) -> None:
    """A savings plan's commitment (USD/h for the whole term, used or not) or the
    on-demand usage it pays for (credited at the catalog's on-demand price), recomputed
    from the problem and the catalog; sums kept for :func:`_check_savings_plans`."""
    c, ctx = run.c, run.ctx
    sp = _savings_plan_of(run, item)
    c.check("savings plan in the problem", sp is not None, f"{item.provider} {item.mode}")
    finite = all(math.isfinite(v) and v >= 0 for v in (item.units, item.hours))
    c.check(
        "numbers are finite and not negative",
        finite and math.isfinite(item.cost_usd),
        f"{item.offering}: units {item.units}, hours {item.hours}, cost {item.cost_usd}",
    )
    if sp is None or not finite:
        return
    if item.item == "savings_plan":
        begin = ctx.start_month[item.period]
        inside = 0.0
        for name in ctx.period_names:
            part = item.units * ctx.overlap_hours(name, begin, begin + sp.term_months)
            run.period_cost[name] += part
            inside += part
        term_h = ctx.hours_at(begin + sp.term_months) - ctx.hours_at(begin)
        c.check("line hours", _close(item.hours, term_h), f"savings plan {item.offering}")
        cost = inside if run.p.owned_cost_policy == "amortised" else item.units * term_h
        run.period_cost[ctx.period_names[-1]] += cost - inside
        run.savings_plans[(sp.provider, sp.term)].append((item.period, item.units))
    else:
        known = item.offering in run.catalog.offerings.index and item.offering in sp.rates
        c.check("savings plan covers an offering it has a rate for", known, item.offering)
        if not known:
            return
        block = ctx.blocks.get(item.block)
        hours = ctx.period_hours(item.period) * (block.hours_per_day / 24.0 if block else 0.0)
        c.check("line hours", _close(item.hours, hours), f"savings plan cover {item.offering}")
        # a price cell: a number (the stubs type a cell as any scalar)
        price = float(
            cast(float, run.catalog.offerings.at[item.offering, PRICE_COLUMN[Mode.ON_DEMAND]])
        )
        cost = -price * item.units * hours
        run.period_cost[item.period] += cost
        key = (sp.provider, sp.term, item.period, item.block)
        run.sp_covered[key] += sp.rates[item.offering] * item.units
        run.sp_cover_units[(item.offering, item.period, item.block)] += item.units
    c.check("line cost recomputed", _close(cost, item.cost_usd, 1e-5), f"{item.offering}")
    run.total_cost += cost
    run.provider_cost[item.provider] += cost


def _check_savings_plans(run: _Run) -> None:
    """Savings plans: in each hour (load block) the plan-rate spend of the usage a plan
    covers <= its commitment active then; the units it covers <= on-demand serving units
    rented then; the commitment active in a period <= ``max_usd_per_hour``."""
    c, ctx, p = run.c, run.ctx, run.p
    if not p.savings_plans:
        return
    rented: dict[tuple, float] = defaultdict(float)
    for item in run.plan.line_items:
        if item.item == Item.RENT and item.mode == Mode.ON_DEMAND:
            rented[(item.offering, item.period, item.block)] += item.units
    for key, units in run.sp_cover_units.items():
        c.check(
            "savings plan covers only units in use",
            _le(units, rented.get(key, 0.0)),
            f"{key}: {units:g} covered of {rented.get(key, 0.0):g} rented",
        )
    for sp in p.savings_plans:
        commits = run.savings_plans.get((sp.provider, sp.term), [])
        for name in ctx.period_names:
            s = ctx.start_month[name]
            active = sum(
                usd_h
                for start, usd_h in commits
                if ctx.start_month[start] <= s + 1e-9
                and s + ctx.months[name] <= ctx.start_month[start] + sp.term_months + 1e-9
            )
            if sp.max_usd_per_hour is not None:
                c.check(
                    "savings plan within max_usd_per_hour",
                    _le(active, sp.max_usd_per_hour),
                    f"{sp.provider} {sp.term} {name}: ${active:g}/h",
                )
            for bname in ctx.blocks:
                spent = run.sp_covered.get((sp.provider, sp.term, name, bname), 0.0)
                c.check(
                    "savings plan covers at most its commitment",
                    _le(spent, active),
                    f"{sp.provider} {sp.term} {name} {bname}: ${spent:g}/h of ${active:g}/h",
                )


def _check_existing(
    run: _Run,
    item: LineItem,
    u: dict,
    owned: bool,
    w: TrainingWorkload | InferenceWorkload | BatchInferenceWorkload | None,
) -> None:
    """The fleet held at the start: hosting of owned servers, the rest of reservations."""
    c = run.c
    ctx = run.ctx
    p = run.p
    period_cost = run.period_cost
    provider_cost = run.provider_cost
    # recomputed from the catalog: hosting of servers owned at the start for the
    # whole horizon; the months of existing reservations still inside it
    cost = 0.0
    if item.mode == Mode.OWNED:
        hosting, idle_kg = _owned_month(u["server"], u["site"])
        run.total_kg += idle_kg * item.units * ctx.horizon
        for name in ctx.period_names:
            part = hosting * item.units * ctx.months[name]
            period_cost[name] += part
            cost += part
    else:
        for r in p.existing_reservations:
            if r.offering == item.offering and r.mode == item.mode:
                for name in ctx.period_names:
                    hours = ctx.overlap_hours(name, 0.0, r.months_remaining)
                    part = u["price"] * r.units * hours
                    period_cost[name] += part
                    cost += part
    c.check(
        "line cost recomputed",
        _close(cost, item.cost_usd, 1e-5),
        f"existing {item.offering}: {item.cost_usd:.2f} vs {cost:.2f}",
    )
    run.total_cost += cost
    provider_cost[item.provider] += cost
