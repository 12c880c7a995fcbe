"""Limits on the whole plan: cloud quotas, site power caps, budgets (total, capex, per
period), the carbon cap and provider shares.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from solver.core import ledger
from solver.core.compile import Compiled
from solver.core.formulation.state import State
from solver.core.matrix import Expression
from solver.inputs.cost_defaults import (
    OUTPUT_BYTES_PER_TOKEN,
    egress_price,
    storage_price,
    support_default,
)
from solver.inputs.costs import (
    SUPPORT_PLANS,
    SupportPlan,
    modelled_plans,
    resolve_problem_costs,
    served_tokens_per_s,
)
from solver.inputs.problem import InferenceWorkload, TrainingWorkload
from solver.inputs.storage_size import storage_gb


def add_quotas(m: State) -> None:
    """``quota``: cloud accelerators of a provider (region, type) in use <= the quota."""
    pools = m.pools
    for qi, q in enumerate(m.problem.quotas):
        match = (pools["kind"] == "cloud") & (pools["provider"] == q.provider)
        if q.region:
            match &= pools["region"] == q.region
        if m.compiled.quota_accelerators[qi]:
            match &= pools["accelerator_id"] == m.compiled.quota_accelerators[qi]
        for t in range(m.n_t):
            for b in range(m.n_b):
                coefs: dict[int, float] = defaultdict(float)
                for p in np.flatnonzero(match.to_numpy()).tolist():
                    for v, n in m.usage.get(p, {}).get((t, b), {}).items():
                        # pandas-stubs type .iat as any scalar; the column is numeric
                        coefs[v] += n * float(pools["accels_per_unit"].iat[p])  # type: ignore[arg-type]
                m.B.row("quota", (qi, t, b), coefs, "<=", float(q.max_accelerators))


def add_power_caps(m: State) -> None:
    """``power_cap``: kW of owned servers in service at a site <= its power cap."""
    owned = m.pools[m.pools["kind"] == "owned"]
    site_cap_kw = owned.groupby("site_id")["site_power_cap_kw"].first()
    for site_id, t in sorted(set(m.fleet_by_site) | set(m.fleet_const_kw)):
        m.B.row(
            "power_cap",
            (site_id, t),
            m.fleet_by_site.get((site_id, t), {}),
            "<=",
            float(site_cap_kw[site_id]) - m.fleet_const_kw.get((site_id, t), 0.0),
        )


def add_budgets(m: State) -> None:
    """``budget`` (total cost), ``capex_budget`` (purchases), ``period_budget``."""
    problem, cost = m.problem, m.cost
    if problem.budget_usd is not None:
        # the categories beside compute (problem.costs) are charged after the solve; the
        # row holds them at a linear bound (ledger.extras_bound), scaled so its
        # coefficients stay the compute cost's (column pricing and dominance read them)
        bound = budget_bound(m.compiled)
        rhs = (problem.budget_usd - bound.constant_usd) / bound.multiplier - cost.constant
        coefs = dict(cost.coefs)
        # support priced by the model (formulation.support): its fees exactly, with the
        # provider's tax and the contingency, in the row's compute-dollar scale
        resolved = resolve_problem_costs(problem)
        for provider, fees in m.support_by_provider.items():
            tax = resolved.tax_rate.get(provider, resolved.tax_default_rate)
            scale = (1.0 + resolved.contingency_rate) * (1.0 + tax) / bound.multiplier
            for i, c in fees.coefs.items():
                coefs[i] = coefs.get(i, 0.0) + c * scale
            rhs -= fees.constant * scale
        m.B.row("budget", (), coefs, "<=", rhs)
    if problem.capex_budget_usd is not None:
        m.B.row("capex_budget", (), m.capex.coefs, "<=", problem.capex_budget_usd)
    names = list(m.periods["name"])
    for pname, cap in problem.period_budget_usd.items():
        e = m.cost_by_period[names.index(pname)]
        m.B.row("period_budget", (pname,), e.coefs, "<=", cap - e.constant)


def budget_bound(compiled: Compiled) -> ledger.ExtrasBound:
    """The budget row's bound of the costs beside compute (1 x compute + 0 without any)."""
    resolved = resolve_problem_costs(compiled.problem)
    if not resolved.any:
        return ledger.ExtrasBound(1.0, 0.0, "")
    pools = compiled.pools
    # only pools some option runs on hold instance-hours (staff is per instance-hour)
    if "pool_id" in compiled.options and len(compiled.options):
        pools = pools[pools["pool_id"].isin(set(compiled.options["pool_id"]))]
    cloud = pools[(pools["mode"] != "owned") & (pools["price_usd_per_hour"] > 0)]
    cheapest = float(cloud["price_usd_per_hour"].min()) if len(cloud) else None
    providers = set(pools["provider"].astype(str)) - {"owned"}
    fixed, support = default_extras(compiled, resolved.defaults, providers)
    modelled = frozenset(modelled_plans(compiled.problem, providers))
    return ledger.extras_bound(
        resolved, compiled.problem, compiled.periods, cheapest, fixed, support, modelled
    )


def default_extras(
    compiled: Compiled, defaults: frozenset[str], providers: set[str]
) -> tuple[float, dict[str, SupportPlan]]:
    """The budget row's share of the categories by default (all-in by default): storage
    and egress at the dearest default price of any provider the problem may use (USD),
    and the default support plan of each such provider that bills one."""
    problem = compiled.problem
    fixed = 0.0
    if "storage" in defaults:
        dearest = max((storage_price(p)[0] for p in providers | {"owned"}), default=0.0)
        months = float(compiled.periods["months"].sum())
        for w in problem.workloads:
            if isinstance(w, TrainingWorkload):
                fixed += sum(storage_gb(w, compiled.inputs.catalog)) * months * dearest
    if "egress" in defaults:
        dearest = max((egress_price(p)[0] for p in providers), default=0.0)
        hours = dict(zip(compiled.periods["name"], compiled.periods["hours"], strict=True))
        for w in problem.workloads:
            if isinstance(w, InferenceWorkload):
                tokens = sum(
                    served_tokens_per_s(w) * w.demand_by_period.get(n, 1.0) * float(h) * 3600.0
                    for n, h in hours.items()
                    if w.periods is None or n in w.periods
                )
                fixed += tokens * OUTPUT_BYTES_PER_TOKEN / 1e9 * dearest
    support: dict[str, SupportPlan] = {}
    if "support" in defaults:
        for p in sorted(providers):
            name = support_default(p)[0]
            if name:
                support[p] = SUPPORT_PLANS[(p, name)]
    return fixed, support


def add_carbon_cap(m: State) -> None:
    """``carbon_cap``: total tCO2e (operational and embodied) <= the cap."""
    cap = m.problem.carbon_cap_tco2e
    if cap is not None:
        coefs = {i: c / 1000.0 for i, c in m.co2_kg.coefs.items()}
        m.B.row("carbon_cap", (), coefs, "<=", cap - m.co2_kg.constant / 1000.0)


def add_provider_shares(m: State) -> None:
    """``provider_share``: cost on a provider <= share x total cost."""
    for provider, share in m.problem.provider_share_max.items():
        e = m.cost_by_provider.get(provider, Expression())
        coefs: dict[int, float] = defaultdict(float)
        for i, c in e.coefs.items():
            coefs[i] += c
        for i, c in m.cost.coefs.items():
            coefs[i] -= share * c
        m.B.row(
            "provider_share",
            (provider,),
            {i: c for i, c in coefs.items() if c},
            "<=",
            share * m.cost.constant - e.constant,
        )
