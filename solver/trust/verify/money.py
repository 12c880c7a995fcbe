"""Money recomputed: totals, NPV, cash flow, CO2e, budgets and provider shares, and every
cost line (storage, egress, staff, support).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import date

import numpy as np

from solver.inputs.cost_defaults import TAX_RATE_PERCENT
from solver.inputs.costs import EGRESS_USD_PER_GB, STORAGE_USD_PER_GB_MONTH, SUPPORT_PLANS, Costs
from solver.inputs.problem import InferenceWorkload
from solver.plan.charges import line_charges
from solver.plan.lines import CostLine
from solver.trust.verify.capacity import _average_tps, _mix_output_factor
from solver.trust.verify.context import _close, _le
from solver.trust.verify.default_costs import (
    check_default_egress,
    default_support_plans,
    defaulted,
    expected_default_lines,
)
from solver.trust.verify.run import _Run
from solver.units import Item, Mode


def _check_money(run: _Run) -> None:
    """Totals, NPV, cash flow, CO2e, budgets, carbon cap and provider shares recomputed."""
    c = run.c
    ctx = run.ctx
    p = run.p
    period_cost = run.period_cost
    provider_cost = run.provider_cost
    plan = run.plan
    total_cost, total_kg, capex = run.total_cost, run.total_kg, run.capex
    c.check(
        "total cost recomputed",
        _close(total_cost, plan.total_cost_usd, 1e-6),
        f"{plan.total_cost_usd:.2f} vs recomputed {total_cost:.2f}",
    )
    if p.discount_rate is not None:
        npv = sum(
            period_cost[name]
            * (1.0 + p.discount_rate) ** (-(ctx.start_month[name] + ctx.months[name] / 2) / 12)
            for name in ctx.period_names
        )
        c.check(
            "net present value recomputed",
            plan.npv_usd is not None and _close(npv, plan.npv_usd, 1e-6),
            f"{plan.npv_usd} vs recomputed {npv:.2f}",
        )
    listed = sum(i.cost_usd for i in plan.line_items)
    c.check(
        "total cost = sum of line items",
        _close(listed, plan.total_cost_usd, 1e-6),
        f"{plan.total_cost_usd:.2f} vs {listed:.2f}",
    )
    if plan.cash_flow:
        months = [m.total_usd for m in plan.cash_flow]
        parts_ok = all(
            _close(m.rented_usd + m.owned_opex_usd + m.commitments_usd + m.capex_usd, m.total_usd)
            for m in plan.cash_flow
        )
        c.check(
            "cash flow sums to the total (to the cent)",
            abs(sum(months) - plan.total_cost_usd) <= 0.005 + 1e-9 * abs(plan.total_cost_usd)
            and parts_ok,
            f"${sum(months):,.2f} over {len(months)} months vs ${plan.total_cost_usd:,.2f}",
        )
    c.check(
        "total CO2e recomputed",
        _close(total_kg / 1000.0, plan.total_co2e_t, 1e-6),
        f"{plan.total_co2e_t:.3f} t vs {total_kg / 1000:.3f} t",
    )
    if p.budget_usd is not None:
        all_in = total_cost + sum(line.cost_usd for line in plan.cost_lines)
        c.check(
            "budget",
            _le(all_in, p.budget_usd),
            f"${all_in:,.0f} > ${p.budget_usd:,.0f}",
        )
    if p.capex_budget_usd is not None:
        c.check(
            "capex budget",
            _le(capex, p.capex_budget_usd),
            f"${capex:,.0f} > ${p.capex_budget_usd:,.0f}",
        )
    for name, cap in p.period_budget_usd.items():
        c.check(
            "period budget",
            _le(period_cost[name], cap),
            f"{name}: ${period_cost[name]:,.0f} > ${cap:,.0f}",
        )
    if p.carbon_cap_tco2e is not None:
        c.check(
            "carbon cap",
            _le(total_kg / 1000.0, p.carbon_cap_tco2e),
            f"{total_kg / 1000:.2f} t > {p.carbon_cap_tco2e} t",
        )
    for provider, share in p.provider_share_max.items():
        c.check(
            "provider share",
            _le(provider_cost.get(provider, 0.0), share * total_cost),
            f"{provider}: ${provider_cost.get(provider, 0):,.0f} > {share:.0%} of "
            f"${total_cost:,.0f}",
        )


def _tiered_fee(
    minimum: float, bands: Sequence[tuple[float | None, float]], spend: float, fraction: float
) -> float:
    """A support fee re-derived: each band's percent on the spend inside it (bands' ends
    and the minimum pro rata for a part month), at least the minimum."""
    fee, lower = 0.0, 0.0
    for up_to, percent in bands:
        upper = math.inf if up_to is None else up_to * fraction
        if spend > lower:
            fee += (min(spend, upper) - lower) * percent / 100.0
        lower = upper
    return max(fee, minimum * fraction)


def _expected_cost_lines(run: _Run) -> dict[tuple[str, str, int], float]:
    """(category, provider, entry) -> USD of every cost line but support, tax and
    contingency, recomputed from the problem and the published figures."""
    ctx = run.ctx
    costs = _costs(run)
    out: dict[tuple[str, str, int], float] = expected_default_lines(run, defaulted(_given(run)))
    for i, s in enumerate(costs.storage):
        price = s.usd_per_gb_month
        if price is None:
            price = STORAGE_USD_PER_GB_MONTH[(s.provider, s.storage_class)][0]
        out[("storage", s.provider, i)] = s.gb * price * ctx.horizon
    for i, e in enumerate(costs.egress):
        price = EGRESS_USD_PER_GB[e.provider][0] if e.usd_per_gb is None else e.usd_per_gb
        if e.gb_per_month is not None:
            gb = e.gb_per_month * ctx.horizon
        else:
            assert e.workload is not None and e.gb_per_million_tokens is not None  # validated
            w = ctx.workloads[e.workload]
            assert isinstance(w, InferenceWorkload)  # the problem checks egress names one
            tps = (
                _average_tps(w) * _mix_output_factor(w)
                if w.demand.tokens_per_s is None
                else (w.demand.tokens_per_s)
            )
            gb = (
                sum(
                    tps * w.demand_by_period.get(n, 1.0) * ctx.period_hours(n) * 3600.0 / 1e6
                    for n in (w.periods or ctx.period_names)
                )
                * e.gb_per_million_tokens
            )
        out[("egress", e.provider, i)] = gb * price
    if costs.operations_staff is not None:
        instance_hours = sum(
            i.units * i.hours
            for i in run.plan.line_items
            if i.item in {Item.RENT, Item.USE, Item.TRAINING} and i.mode != Mode.OWNED
        )
        if instance_hours:
            rate = costs.operations_staff.usd_per_instance_year / 8760.0
            out[("staff", "", -1)] = instance_hours * rate
    return out


def _check_cost_lines(run: _Run) -> None:
    """Each cost line recomputed (storage, egress, staff from the problem and the line
    items; support from each month's spend with its provider, its tiers re-derived; tax on
    the provider's recomputed cost and its cost lines; contingency on everything), its
    months adding up to it, and the all-in total and cash flow against them."""
    c, plan, p, ctx = run.c, run.plan, run.p, run.ctx
    lines: dict[tuple[str, str, int], CostLine] = {
        (x.category, x.provider, x.entry): x for x in plan.cost_lines
    }
    for x in plan.cost_lines:
        c.check(
            "cost line months add up",
            _close(sum(x.cost_by_month_usd.values()), x.cost_usd, 1e-9),
            f"{x.category} {x.provider}",
        )
    if p.costs == "none":
        c.check("no cost lines under costs: none", not plan.cost_lines, f"{len(plan.cost_lines)}")
        return
    costs, by_default = _costs(run), defaulted(_given(run))
    expected = _expected_cost_lines(run)
    by_provider: dict[str, float] = defaultdict(float)
    for key, usd in expected.items():
        line = lines.get(key)
        c.check(
            f"{key[0]} cost recomputed",
            line is not None and _close(line.cost_usd, usd, 1e-6),
            f"{key}: {line.cost_usd if line else None} vs recomputed {usd:.2f}",
        )
        by_provider[key[1]] += usd
    if "egress" in by_default:
        check_default_egress(run, plan.cost_lines)
        for x in plan.cost_lines:
            if x.category == "egress":
                by_provider[x.provider] += x.cost_usd
    _check_support(run, lines, by_provider, "support" in by_default)
    jurisdiction = p.tax_jurisdiction if "tax" in by_default else None
    if jurisdiction is not None:
        _check_jurisdiction_tax(run, lines, by_provider, jurisdiction)
    for category in ("tax", "contingency"):
        if category in by_default and not (category == "tax" and jurisdiction):
            zero = lines.get((category, "", -1))
            c.check(
                f"{category} 0 by default",
                zero is not None and zero.cost_usd == 0.0,
                f"{zero.cost_usd if zero else None}",
            )
    for t in costs.taxes:
        line = lines.get(("tax", t.provider, -1))
        base = run.provider_cost.get(t.provider, 0.0) + by_provider.get(t.provider, 0.0)
        usd = base * t.rate_percent / 100.0
        c.check(
            "tax recomputed",
            line is not None and _close(line.cost_usd, usd, 1e-6),
            f"{t.provider}: {line.cost_usd if line else None} vs recomputed {usd:.2f}",
        )
        by_provider[t.provider] += usd
    if costs.contingency_percent:
        line = lines.get(("contingency", "", -1))
        usd = (run.total_cost + sum(by_provider.values())) * costs.contingency_percent / 100
        c.check(
            "contingency recomputed",
            line is not None and _close(line.cost_usd, usd, 1e-6),
            f"{line.cost_usd if line else None} vs recomputed {usd:.2f}",
        )
    listed = plan.total_cost_usd + sum(x.cost_usd for x in plan.cost_lines)
    c.check(
        "all-in total = compute + cost lines",
        plan.all_in_cost_usd is not None and _close(plan.all_in_cost_usd, listed, 1e-9),
        f"{plan.all_in_cost_usd} vs {listed:.2f}",
    )
    if plan.cash_flow:
        months = sum(m.all_in_usd or 0.0 for m in plan.cash_flow)
        c.check(
            "cash flow sums to the all-in total (to the cent)",
            abs(months - listed) <= 0.005 + 1e-9 * abs(listed),
            f"${months:,.2f} vs ${listed:,.2f}",
        )
    del ctx


def _check_jurisdiction_tax(
    run: _Run, lines: dict, by_provider: dict[str, float], jurisdiction: str
) -> None:
    """Tax by default where the problem names a jurisdiction: each cloud provider's line
    its published rate (:data:`solver.inputs.cost_defaults.TAX_RATE_PERCENT`) x the
    provider's recomputed compute and its storage, egress and support lines; no tax line
    of a provider that bills nothing."""
    c = run.c
    rate = TAX_RATE_PERCENT[jurisdiction][0] / 100.0
    billed = {
        x: run.provider_cost.get(x, 0.0) + by_provider.get(x, 0.0)
        for x in set(run.provider_cost) | set(by_provider)
        if x not in ("owned", "")
    }
    for provider, base in sorted(billed.items()):
        line = lines.get(("tax", provider, -1))
        if not base:
            c.check("no tax on a provider billing nothing", line is None, provider)
            continue
        usd = base * rate
        c.check(
            f"tax at {jurisdiction}'s rate recomputed",
            line is not None and _close(line.cost_usd, usd, 1e-6),
            f"{provider}: {line.cost_usd if line else None} vs recomputed {usd:.2f}",
        )
        by_provider[provider] += usd
    extra = {k[1] for k in lines if k[0] == "tax"} - set(billed)
    c.check("tax lines only for providers billing", not extra, f"{sorted(extra)}")


def _check_support(
    run: _Run, lines: dict, by_provider: dict[str, float], by_default: bool = False
) -> None:
    """Each support line: its fee month by month from that month's spend with the provider
    (its compute charges inside the horizon, its storage and egress lines' months); by
    default, every provider the plan spends with at its default plan (0 where it bills
    none)."""
    c, plan, ctx = run.c, run.plan, run.ctx
    costs = _costs(run)
    plans: dict[str, tuple[float, Sequence[tuple[float | None, float]]] | None] = {}
    if by_default:
        spent = {i.provider for i in plan.line_items if i.cost_usd > 0} - {"owned"}
        plans = default_support_plans(spent)
    for s in costs.support:
        published = SUPPORT_PLANS.get((s.provider, s.plan)) if s.plan else None
        minimum = published.minimum_usd_per_month if published else s.minimum_usd_per_month or 0
        if published:
            plans[s.provider] = (minimum, published.bands)
        else:
            assert s.bands is not None  # SupportEntry holds a published plan or its own bands
            plans[s.provider] = (minimum, [(b.up_to_usd, b.percent) for b in s.bands])
    if not plans:
        _check_support_priced(run, 0.0)
        return
    start = date.fromisoformat(plan.start_date) if plan.start_date else date(2000, 1, 1)
    table = line_charges(plan, run.p, run.catalog, start)
    recomputed = 0.0
    for provider, terms in sorted(plans.items()):
        line = lines.get(("support", provider, -1))
        if terms is None:
            c.check(
                "support 0 where the provider bills none",
                line is not None and line.cost_usd == 0.0,
                f"{provider}: {line.cost_usd if line else None}",
            )
            continue
        minimum, bands = terms
        spend: dict[int, float] = defaultdict(float)
        mine = [plan.line_items[n].provider == provider for n in table["line"]]
        rows = table[np.array(mine, dtype=bool) & (table["begin_month"] < ctx.horizon - 1e-9)]
        for month, usd in zip(rows["month"], rows["usd"], strict=True):
            spend[int(month)] += float(usd)
        for x in plan.cost_lines:
            if x.provider == provider and x.category in ("storage", "egress"):
                for k, usd in x.cost_by_month_usd.items():
                    spend[int(k)] += usd
        fee = sum(
            _tiered_fee(minimum, bands, spend.get(k, 0.0), min(1.0, ctx.horizon - k))
            for k in range(math.ceil(ctx.horizon - 1e-9))
        )
        c.check(
            "support recomputed",
            line is not None and _close(line.cost_usd, fee, 1e-6),
            f"{provider}: {line.cost_usd if line else None} vs recomputed {fee:.2f}",
        )
        by_provider[provider] += fee
        recomputed += fee
    _check_support_priced(run, recomputed, {p for p, t in plans.items() if t is not None})


def _check_support_priced(run: _Run, recomputed: float, priced: set[str] | None = None) -> None:
    """The support the objective priced (``support_in_objective_usd``) against the fees
    recomputed from the plan's own line items: equal to the cent, so a plan edited to
    another provider mix cannot carry the support figure of the one solved. Where a
    provider with a plan sends egress (the model leaves out egress at a price another
    provider shares), the objective's figure may be below the fees, never above."""
    value = run.plan.support_in_objective_usd
    if value is None:
        return
    egress = any(
        x.category == "egress" and x.cost_usd > 0 and x.provider in (priced or set())
        for x in run.plan.cost_lines
    )
    ok = value <= recomputed + 0.005 if egress else abs(value - recomputed) <= 0.005
    run.c.check(
        "support priced in the objective",
        ok,
        f"objective {value:.2f} vs support recomputed {recomputed:.2f}"
        + (" (egress at a shared price may be outside the model's spend)" if egress else ""),
    )


def _given(run: _Run) -> Costs | str:
    """The problem's costs: (a block, or "default", which no block means: all-in by
    default; _check_cost_lines returns first under costs: none)."""
    costs = run.p.costs
    assert costs != "none"
    return "default" if costs is None else costs


def _costs(run: _Run) -> Costs:
    """The problem's costs: block (costs: default: an empty one, every category by
    default)."""
    given = _given(run)
    return given if isinstance(given, Costs) else Costs(defaults=True)
