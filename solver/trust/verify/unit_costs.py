"""The plan's unit costs ($/1M tokens) recomputed from the problem and the line items.

Worked here from the verifier's own clock (:meth:`_Context.period_hours`) and demand
(:func:`solver.trust.verify.capacity._average_tps`), not from
:mod:`solver.plan.unit_costs`: the served tokens, each row's cost, its per-million
figures, the deployments adding up to their workload, and the API comparison.
"""

from __future__ import annotations

from solver.inputs.problem import InferenceWorkload
from solver.plan.lines.unit_cost import UnitCost
from solver.trust.verify.capacity import _average_tps, _mix_output_factor
from solver.trust.verify.context import _close
from solver.trust.verify.run import _Run


def _tokens(run: _Run, w: InferenceWorkload) -> tuple[float, float]:
    """(input, output) tokens a serving workload is planned to serve over the horizon."""
    ctx = run.ctx
    tps = (
        w.demand.tokens_per_s
        if w.demand.tokens_per_s is not None
        else _average_tps(w) * _mix_output_factor(w)
    )
    tps *= run.plan.served_fraction.get(w.name, 1.0)
    out = sum(
        tps * w.demand_by_period.get(n, 1.0) * ctx.period_hours(n) * 3600.0
        for n in (w.periods or ctx.period_names)
    )
    if w.traffic_mix:
        per_request_in = sum(b.share * b.prompt_tokens for b in w.traffic_mix)
        per_request_out = sum(b.share * b.output_tokens for b in w.traffic_mix)
    else:
        per_request_in, per_request_out = w.prompt_tokens, w.output_tokens
    return out * per_request_in / per_request_out, out


def _check_row(run: _Run, row: UnitCost, tokens_in: float, tokens_out: float, usd: float) -> None:
    """One row's tokens, cost, per-million figures and API comparison."""
    c = run.c
    what = f"{row.scope} {row.workload} {row.offering}".strip()
    c.check("unit cost: output tokens", _close(row.output_tokens, tokens_out), what)
    c.check("unit cost: input tokens", _close(row.input_tokens, tokens_in), what)
    c.check("unit cost: cost", _close(row.cost_usd, usd), what)
    per_out = row.usd_per_1m_output_tokens
    c.check(
        "unit cost: $/1M output tokens",
        (per_out is None and tokens_out <= 0)
        or (per_out is not None and _close(per_out * tokens_out / 1e6, usd)),
        what,
    )
    per_all = row.usd_per_1m_tokens
    c.check(
        "unit cost: $/1M tokens",
        (per_all is None and tokens_out <= 0)
        or (per_all is not None and _close(per_all * (tokens_in + tokens_out) / 1e6, usd)),
        what,
    )
    api = run.p.compare_api
    if api is None or tokens_out <= 0:
        c.check("unit cost: no API comparison asked", row.api_cost_usd is None, what)
        return
    api_usd = (
        tokens_in * api.usd_per_1m_input_tokens + tokens_out * api.usd_per_1m_output_tokens
    ) / 1e6
    basis = usd if row.all_in_cost_usd is None else row.all_in_cost_usd
    ok = (
        row.api_cost_usd is not None
        and row.api_cost_ratio is not None
        and _close(row.api_cost_usd, api_usd)
        and _close(row.api_cost_ratio * api_usd, basis)
        and _close(
            (row.usd_per_1m_input_tokens_at_api_mix or 0.0) * tokens_in
            + (row.usd_per_1m_output_tokens_at_api_mix or 0.0) * tokens_out,
            basis * 1e6,
        )
    )
    c.check("unit cost: against compare_api", ok, what)


def _check_unit_costs(run: _Run) -> None:
    """``unit_costs`` recomputed (module docstring); absent when nothing is served (or
    the plan is not dated yet)."""
    c, plan, p = run.c, run.plan, run.p
    serving = [w for w in p.workloads if isinstance(w, InferenceWorkload)]
    rows = plan.unit_costs
    if rows is None:
        # a plan that is dated (cash flow worked out) carries them; a scenario's plan
        # inside a two-stage solve is not
        finished = bool(plan.cash_flow)
        c.check("unit costs present when serving", not (serving and finished), "unit_costs absent")
        return
    tokens = {w.name: _tokens(run, w) for w in serving}
    plans = [r for r in rows if r.scope == "plan"]
    c.check("unit costs: one plan row", len(plans) == 1, f"{len(plans)} rows")
    tin = sum(t[0] for t in tokens.values())
    tout = sum(t[1] for t in tokens.values())
    for r in plans:
        _check_row(run, r, tin, tout, plan.total_cost_usd)
        if plan.cost_lines:
            c.check(
                "unit cost: plan all-in",
                r.all_in_cost_usd is not None
                and _close(r.all_in_cost_usd, plan.all_in_cost_usd or 0.0),
                "",
            )
    for w in serving:
        mine = [r for r in rows if r.scope == "workload" and r.workload == w.name]
        c.check("unit costs: one row per serving workload", len(mine) == 1, w.name)
        usd = sum(i.cost_usd for i in plan.line_items if i.workload == w.name)
        for r in mine:
            _check_row(run, r, *tokens[w.name], usd)
        deps = [r for r in rows if r.scope == "deployment" and r.workload == w.name]
        for r in deps:
            lines = [
                i
                for i in plan.line_items
                if (i.workload, i.provider, i.region, i.offering, i.mode)
                == (w.name, r.provider, r.region, r.offering, r.mode)
            ]
            c.check("unit cost: deployment has lines", bool(lines), r.offering)
            share = r.output_tokens / tokens[w.name][1] if tokens[w.name][1] > 0 else 0.0
            _check_row(
                run, r, tokens[w.name][0] * share, r.output_tokens, sum(i.cost_usd for i in lines)
            )
        c.check(
            "unit costs: deployments serve the workload's tokens",
            _close(sum(r.output_tokens for r in deps), tokens[w.name][1]),
            w.name,
        )
        c.check(
            "unit costs: deployments add up to the workload's cost",
            _close(sum(r.cost_usd for r in deps), usd),
            w.name,
        )
        if plan.cost_lines:
            c.check(
                "unit costs: deployments' all-in adds up to the workload's",
                all(r.all_in_cost_usd is not None for r in deps + mine)
                and _close(
                    sum(r.all_in_cost_usd or 0.0 for r in deps),
                    sum(r.all_in_cost_usd or 0.0 for r in mine),
                ),
                w.name,
            )
