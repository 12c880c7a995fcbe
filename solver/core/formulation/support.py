"""Support plans in the objective (issue 49 Build 1): each provider's support fee, month by
month, the greater of its plan's minimum and the tiered percentage of the month's spend
with it, priced in the MIP exactly as the plan's support line charges it
(:mod:`solver.plan.costs`; docs/formulation/support_spend.md and the pages beside it).

- **Spend.** Month k's spend with provider p, as the plan bills it: the in-horizon compute
  charged in month k (rent and fleet fees by hours over their period's months; a
  reservation's or savings plan's fee by hours over the months of its term inside the
  horizon; a training job from its period's start for its hours; a capacity block
  upfront, all in the month its period starts), its default storage (a
  training choice's dataset and checkpoint at p, every month) and the egress p sends
  (where the model attributes it to p), plus the storage and egress the problem gives.
  Months of one class (same spend coefficients and share of a month) have the same fee:
  one set of variables per class, times its count (exact).
- **Tiers.** ``d[p,k,j]`` the spend inside band j (0 <= d <= the band's width x the
  month's share), ``support_spend``: sum_j d = spend. Falling rates (concave, AWS
  Business) need ``y[p,k,j]`` binary per band boundary: ``support_fill`` d_j >= width_j
  y_j and ``support_open`` d_{j+1} <= width_{j+1} y_j, so band j+1 fills only when band j
  is full. Rising or single rates need no binary (the LP fills the cheap band first).
- **Fee.** ``support_fee``: fee >= sum_j rate_j d_j and fee >= the minimum x the share
  (by default, x ``u[p]``: 1 when the plan spends anything with p, ``support_billed``:
  spend <= M u; a plan the problem gives is charged its minimum whatever it spends).

The objective and the budget row carry ``support_usd`` (the fees x each class's count).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from solver.core.clock import month_slices
from solver.core.compile import Compiled
from solver.core.formulation.state import State
from solver.core.matrix import Expression, LinearModel, Row, VarKind
from solver.inputs.cost_defaults import storage_price
from solver.inputs.costs import egress_gb, modelled_plans, resolve_problem_costs
from solver.inputs.egress import egress_in_model, egress_usd_per_token
from solver.inputs.problem import InferenceWorkload, TrainingWorkload
from solver.inputs.storage_size import storage_gb

#: a month's spend with a provider: var -> USD per unit, and a constant
Spend = tuple[dict[int, float], float]


def _month_shares(m: State) -> dict[int, float]:
    """Plan month -> its share inside the horizon (a month a period boundary cuts once)."""
    out: dict[int, float] = defaultdict(float)
    for t in range(m.n_t):
        begin, end = m.period_bounds[0][t], m.period_bounds[1][t]
        for a, b in month_slices(float(begin), float(end)):
            out[math.floor(a + 1e-9)] += b - a
    return dict(out)


def _spread(m: State, usd: float, begin: float, end: float, out: dict[int, float]) -> None:
    end = min(end, m.horizon_months)
    if usd and end > begin:
        for a, _, part in m.compiled.clock.spread(usd, begin, end):
            out[math.floor(a + 1e-9)] += part


def _var_months(
    m: State, i: int, shares: dict[int, float], runs: dict[int, list[tuple[int, float]]]
) -> dict[int, float]:
    """Month -> USD per unit of variable ``i`` charged in it inside the horizon, as the
    plan's charges spread it (module docstring); ``runs`` is the compiled problem's
    :meth:`~solver.core.compile.Compiled.training_runs`, read once per build."""
    var = m.B.vars[i]
    kind = var["kind"]
    begins, ends = m.period_bounds
    out: dict[int, float] = defaultdict(float)
    tau = int(var.get("period", -1) if var.get("period") is not None else -1)
    term = None
    if kind == VarKind.COMMIT.value:
        term = float(m.pools.iloc[int(var["pool"])]["term_months"])
    elif kind == VarKind.SAVINGS_PLAN.value:
        term = float(m.problem.savings_plans[int(var["plan"])].term_months)
    if term is not None and tau >= 0 and tau in shares:
        begin = float(begins[tau])
        first_end = min(float(ends[tau]), begin + term)
        rate = shares[tau] / m.compiled.clock.hours(begin, first_end)  # USD per hour
        total = rate * m.compiled.clock.hours(begin, min(begin + term, m.horizon_months))
        _spread(m, total, begin, begin + term, out)
        return out
    if kind == VarKind.BLOCK.value and tau >= 0:  # upfront: all in the month it starts
        out[math.floor(float(begins[tau]) + 1e-9)] += sum(shares.values())
        return out
    if kind == VarKind.Z.value:
        run = runs.get(int(var["option_id"]), [])
        if run:
            begin = float(begins[run[0][0]])
            hours = sum(h for _, h in run)
            end = m.compiled.clock.month_after(begin, hours)
            _spread(m, sum(shares.values()), begin, end, out)
            return out
    for t, usd in shares.items():
        _spread(m, usd, float(begins[t]), float(ends[t]), out)
    return out


def _storage_gb(m: State) -> dict[str, float]:
    """Training workload -> GB its default storage holds (dataset and checkpoint)."""
    catalog = m.compiled.inputs.catalog
    return {
        w.name: sum(storage_gb(w, catalog))
        for w in m.problem.workloads
        if isinstance(w, TrainingWorkload)
    }


def _given_spend(m: State, provider: str) -> dict[int, float]:
    """Month -> the storage and egress the problem's ``costs:`` gives at ``provider`` (they
    do not depend on the plan), as :func:`solver.plan.costs.cost_lines` charges them."""
    resolved = resolve_problem_costs(m.problem)
    out: dict[int, float] = defaultdict(float)
    names = list(m.periods["name"])
    for t in range(m.n_t):
        for a, b in month_slices(float(m.period_bounds[0][t]), float(m.period_bounds[1][t])):
            k = math.floor(a + 1e-9)
            for _, s, price, _ in resolved.storage:
                if s.provider == provider:
                    out[k] += s.gb * price * (b - a)
            for _, e, price, _ in resolved.egress:
                if e.provider == provider:
                    hours = m.compiled.clock.hours(a, b)
                    out[k] += egress_gb(e, m.problem, names[t], b - a, hours) * price
    return out


def _spend_by_month(
    m: State, provider: str, months: dict[int, float], storage_by_default: bool
) -> dict[int, Spend]:
    """Month -> the model's spend with ``provider`` in it (module docstring)."""
    coefs: dict[int, dict[int, float]] = {k: defaultdict(float) for k in months}
    const: dict[int, float] = defaultdict(float)
    expr = m.cost_by_provider.get(provider, Expression())
    gb = _storage_gb(m) if storage_by_default else {}
    price = storage_price(provider)[0]
    runs = m.compiled.training_runs()
    for i in expr.coefs:
        shares = {t: m.cost_by_period[t].coefs[i] for t in range(m.n_t)
                  if i in m.cost_by_period[t].coefs}  # fmt: skip
        for k, usd in _var_months(m, i, shares, runs).items():
            if k in coefs:
                coefs[k][i] += usd
        var = m.B.vars[i]
        if var["kind"] in (VarKind.Z.value, VarKind.BLOCK.value) and var.get("workload") in gb:
            for k, share in months.items():  # held every month of the horizon
                coefs[k][i] += gb[str(var["workload"])] * price * share
    for t, usd in m.const_by_provider_period.get(provider, {}).items():
        spread: dict[int, float] = defaultdict(float)
        _spread(m, usd, float(m.period_bounds[0][t]), float(m.period_bounds[1][t]), spread)
        for k, part in spread.items():
            const[k] += part
    for (p, t), e in m.egress_by_provider.items():
        if p != provider:
            continue
        begin, end = float(m.period_bounds[0][t]), float(m.period_bounds[1][t])
        hours = m.compiled.clock.hours(begin, end)
        for a, b in month_slices(begin, end):
            k, f = math.floor(a + 1e-9), m.compiled.clock.hours(a, b) / hours
            for i, usd in e.coefs.items():
                coefs[k][i] += usd * f
            const[k] += e.constant * f
    for k, usd in _given_spend(m, provider).items():
        const[k] += usd
    return {k: ({i: c for i, c in coefs[k].items() if c}, const[k]) for k in months}


def _classes(
    spend: dict[int, Spend], months: dict[int, float], month_period: dict[int, int]
) -> list[tuple[int, int, float, Spend]]:
    """(first month, count, share of a month, spend) per class of months of one period
    with one spend (the same fee)."""
    seen: dict[tuple, list] = {}
    for k in sorted(spend):
        coefs, const = spend[k]
        key = (
            month_period.get(k, -1),
            round(months[k], 9),
            round(const, 6),
            tuple(sorted((i, round(c, 9)) for i, c in coefs.items())),
        )
        if key in seen:
            seen[key][1] += 1
        else:
            seen[key] = [k, 1, months[k], spend[k]]
    return [(k, n, f, s) for k, n, f, s in seen.values()]


def _big_m(m: State, coefs: dict[int, float], const: float) -> float:
    """An upper bound of a month's spend: its variables at their bounds, else the budget
    (no plan's month spends past its all-in budget), else $1e8."""
    total = const
    for i, c in coefs.items():
        ub = float(m.B.vars[i]["ub"])
        if c > 0:
            total += c * ub
    if math.isfinite(total):
        return max(total, 1.0)
    return _no_bound(m)


def _no_bound(m: State) -> float:
    """A month's spend at most: the budget (no plan spends past its all-in budget), else
    $1e8."""
    return float(m.problem.budget_usd) if m.problem.budget_usd else 1e8


def support_providers(compiled: Compiled) -> set[str]:
    """The cloud providers of the pools some option runs on (the budget row's, too:
    :func:`solver.core.formulation.limits.budget_bound`)."""
    pools = compiled.pools
    if "pool_id" in compiled.options and len(compiled.options):
        pools = pools[pools["pool_id"].isin(set(compiled.options["pool_id"]))]
    return set(pools["provider"].astype(str)) - {"owned"}


def add_support(m: State) -> None:
    """Support fees of every provider with a modelled plan into ``m.support``,
    ``m.support_by_period`` and ``m.support_by_provider`` (module docstring); the rows
    ``support_spend``, ``support_fill``, ``support_open``, ``support_fee`` and
    ``support_billed``."""
    plans = modelled_plans(m.problem, support_providers(m.compiled))
    if not plans:
        return
    resolved = resolve_problem_costs(m.problem)
    by_default = "support" in resolved.defaults
    months = _month_shares(m)
    month_period: dict[int, int] = {}
    for t in range(m.n_t):
        for a, _ in month_slices(float(m.period_bounds[0][t]), float(m.period_bounds[1][t])):
            month_period.setdefault(math.floor(a + 1e-9), t)
    B = m.B
    for provider, plan in sorted(plans.items()):
        spend = _spend_by_month(m, provider, months, "storage" in resolved.defaults)
        fee_expr = Expression()
        u = None
        if by_default:
            u = B.var(f"support_billed[{provider}]", VarKind.SUPPORT, integer=True, ub=1.0)
            every: dict[int, float] = defaultdict(float)
            for coefs, _ in spend.values():
                for i, c in coefs.items():
                    every[i] += c
            for i, c in sorted(every.items()):
                if c <= 0:
                    continue
                ub = float(B.vars[i]["ub"])
                big = ub if math.isfinite(ub) else _no_bound(m) / c
                B.row("support_billed", (provider, i), {i: 1.0, u: -big}, "<=", 0.0)
        rates = [pc / 100.0 for _, pc in plan.bands]
        concave = any(b < a for a, b in zip(rates, rates[1:], strict=False))
        for k, count, share, (coefs, const) in _classes(spend, months, month_period):
            key = (provider, k)
            fee = B.var(f"support[{provider},{k}]", VarKind.SUPPORT, integer=False,
                        period=month_period[k])  # fmt: skip
            if plan.minimum_usd_per_month:
                minimum = plan.minimum_usd_per_month * share
                if u is None:
                    B.row("support_fee", (*key, "minimum"), {fee: 1.0}, ">=", minimum)
                else:
                    B.row("support_fee", (*key, "minimum"), {fee: 1.0, u: -minimum}, ">=", 0.0)
            lower = 0.0
            d: list[int] = []
            widths: list[float] = []
            for j, (up_to, _) in enumerate(plan.bands):
                width = math.inf if up_to is None else (up_to * share - lower)
                lower = math.inf if up_to is None else up_to * share
                d.append(B.var(f"support_band[{provider},{k},{j}]", VarKind.SUPPORT,
                               integer=False, ub=width, period=month_period[k]))  # fmt: skip
                widths.append(width)
            row = {v: 1.0 for v in d}
            for i, c in coefs.items():
                row[i] = row.get(i, 0.0) - c
            B.row("support_spend", key, row, "==", const)
            fee_row = {fee: 1.0}
            for v, r in zip(d, rates, strict=True):
                fee_row[v] = -r
            B.row("support_fee", (*key, "tiers"), fee_row, ">=", 0.0)
            if concave:
                big = _big_m(m, coefs, const)
                for j in range(len(d) - 1):
                    y = B.var(f"support_tier[{provider},{k},{j}]", VarKind.SUPPORT,
                              integer=True, ub=1.0, period=month_period[k])  # fmt: skip
                    B.row("support_fill", (*key, j), {d[j]: 1.0, y: -widths[j]}, ">=", 0.0)
                    nxt = widths[j + 1] if math.isfinite(widths[j + 1]) else big
                    B.row("support_open", (*key, j), {d[j + 1]: 1.0, y: -nxt}, "<=", 0.0)
            fee_expr.add(fee, float(count))
            m.support.add(fee, float(count))
            m.support_by_period[month_period[k]].add(fee, float(count))
        m.support_by_provider[provider] = fee_expr


def settle(model: LinearModel, x: np.ndarray) -> np.ndarray:
    """``x`` with every support variable set from the spend the other variables make (a
    MIP start rounded from an LP, :func:`solver.core.columns.rounded`): each month's bands
    filled in order, their binaries, the billed binary and the fee at the greater of the
    tiers and the minimum. Support variables are read by name and row (add_support)."""
    x = x.copy()
    kinds = model.variables["kind"].to_numpy()
    is_support = kinds == VarKind.SUPPORT.value
    if not is_support.any():
        return x
    names = model.variables["name"].to_numpy()
    index = {str(names[i]): int(i) for i in np.flatnonzero(is_support)}
    ub = model.variables["ub"].to_numpy(float)
    spent: dict[str, bool] = defaultdict(bool)
    fee_rows = {row.key: row for row in model.rows if row.family == "support_fee"}
    fees: list[tuple[int, Row | None]] = []  # (fee variable, its minimum's row)
    for row in model.rows:
        if row.family != "support_spend":
            continue
        provider, k = row.key
        spend = row.rhs - sum(c * x[i] for i, c in row.coefs.items() if not is_support[i])
        spent[provider] |= spend > 1e-9
        left, tiered, j = max(0.0, spend), 0.0, 0
        tiers = fee_rows[(provider, k, "tiers")]
        while f"support_band[{provider},{k},{j}]" in index:
            d = index[f"support_band[{provider},{k},{j}]"]
            x[d] = min(left, ub[d])
            left -= x[d]
            tiered -= tiers.coefs[d] * x[d]
            y = index.get(f"support_tier[{provider},{k},{j}]")
            if y is not None:
                x[y] = 1.0 if left > 1e-9 else 0.0
            j += 1
        fee = index[f"support[{provider},{k}]"]
        x[fee] = tiered
        fees.append((fee, fee_rows.get((provider, k, "minimum"))))
    for provider, billed in spent.items():
        u = index.get(f"support_billed[{provider}]")
        if u is not None:
            x[u] = 1.0 if billed else 0.0
    for fee, minimum in fees:
        if minimum is not None:  # fee + sum(coef x) >= rhs: the minimum (x billed)
            floor = minimum.rhs - sum(c * x[i] for i, c in minimum.coefs.items() if i != fee)
            x[fee] = max(x[fee], floor)
    return x


def support_modelled(compiled: Compiled) -> set[str]:
    """The providers whose support the model prices (column generation keeps their
    options in its master: the pricing has no support rows)."""
    return set(modelled_plans(compiled.problem, support_providers(compiled)))


def support_exact(compiled: Compiled) -> bool:
    """Whether the model's spend is each priced provider's whole spend: False where a
    serving workload whose egress the model prices has options at a priced provider and
    at another provider at the same positive egress price (the plan splits those tokens in
    proportion to capacity, which no linear expression of the model holds), and where a
    serving workload whose egress the model leaves out (a traffic mix, a disaggregated
    architecture, ``max_served``: :func:`~solver.inputs.egress.egress_in_model`) has
    options at a priced provider with a positive egress price, which the plan charges by
    default."""
    problem = compiled.problem
    plans = modelled_plans(problem, support_providers(compiled))
    opt = compiled.options
    if not plans or not len(opt):
        return True
    by_default = "egress" in resolve_problem_costs(problem).defaults
    serving = {w.name for w in problem.workloads if isinstance(w, InferenceWorkload)}
    for w, providers in opt.groupby("workload")["provider"].unique().items():
        prices = {str(p): egress_usd_per_token(str(p)) for p in providers}
        if not egress_in_model(problem, str(w)):
            if by_default and w in serving and any(prices.get(p, 0.0) > 0 for p in plans):
                return False
            continue
        for p in plans:
            if p in prices and prices[p] > 0:
                if any(q != p and prices[q] == prices[p] for q in prices):
                    return False
    return True


__all__ = [
    "add_support",
    "settle",
    "modelled_plans",
    "support_exact",
    "support_modelled",
    "support_providers",
]
