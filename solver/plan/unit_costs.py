"""Dollars per million tokens: the plan's serving cost at the tokens it serves.

Served tokens come from the demand and the load curve, the same figures the model sizes
capacity for (docs/concepts/unit-costs.md):

- a serving workload's output tokens in a period are its average output tokens/s
  (:func:`solver.inputs.costs.served_tokens_per_s`: the traffic mix's average) x the
  period's demand factor x the period's hours x 3,600 x the share served
  (``served_fraction``, 1 under ``min_cost``); its input tokens are the output tokens x
  the prompt tokens per output token of its requests (the mix's averages);
- a deployment (one offering and mode of a workload) serves, in each period and load
  block, the block's tokens in proportion to its capacity there (load balanced by
  capacity); a block's tokens are the period's x the block's share of the day's demand
  on the load curve (the hourly factors of its hours over 24; without clock hours, its
  factor x its hours over the sum of both).

Costs: a workload's is its line items' (``totals.by_workload``); a deployment's its lines';
the plan's is ``total_cost_usd`` (training included) over every served token. All-in
adds each row's share of the cost lines: a provider's lines in proportion to the row's
compute at that provider, the lines of no provider (staff, contingency) in proportion to
all compute.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TypeVar

from solver.core.compile.periods import build_calendar
from solver.inputs.costs import served_tokens_per_s
from solver.inputs.egress import block_shares, egress_in_model, route_tokens, served_per_capacity
from solver.inputs.load import LoadBlocks, resolve_load
from solver.inputs.problem import CompareApi, InferenceWorkload, Problem
from solver.plan.lines import LineItem, Plan
from solver.plan.lines.unit_cost import UnitCost

#: tokens per million
MILLION = 1e6
SECONDS_PER_HOUR = 3600.0


def prompt_per_output(w: InferenceWorkload) -> float:
    """Prompt tokens per output token of a workload's requests (the traffic mix's
    averages when it has one)."""
    if w.traffic_mix:
        prompt = sum(b.share * b.prompt_tokens for b in w.traffic_mix)
        output = sum(b.share * b.output_tokens for b in w.traffic_mix)
        return prompt / output
    return w.prompt_tokens / w.output_tokens


def period_hours(problem: Problem) -> dict[str, float]:
    """Period -> its hours (the problem's calendar)."""
    periods = build_calendar(problem).periods
    return dict(zip(periods["name"], periods["hours"].astype(float), strict=True))


def period_output_tokens(plan: Plan, problem: Problem) -> dict[str, dict[str, float]]:
    """Serving workload -> period -> output tokens served in it (module docstring)."""
    hours = period_hours(problem)
    out: dict[str, dict[str, float]] = {}
    for w in problem.workloads:
        if not isinstance(w, InferenceWorkload):
            continue
        tps = served_tokens_per_s(w) * plan.served_fraction.get(w.name, 1.0)
        names = w.periods or list(hours)
        out[w.name] = {
            n: tps * w.demand_by_period.get(n, 1.0) * hours[n] * SECONDS_PER_HOUR for n in names
        }
    return out


K = TypeVar("K")
DeploymentKey = tuple[str, str, str, str, str]  # workload, provider, region, offering, mode


def _key(item: LineItem) -> DeploymentKey:
    return (item.workload, item.provider, item.region, item.offering, item.mode)


def deployment_output_tokens(
    plan: Plan,
    problem: Problem,
    by_period: dict[str, dict[str, float]],
    *,
    load: LoadBlocks | None = None,
    by_workload: dict[str, list[LineItem]] | None = None,
) -> dict[DeploymentKey, float]:
    """(workload, provider, region, offering, mode) -> output tokens it serves: each
    period and block's tokens split in proportion to capacity (a line of no block serves
    every block), or, where the model prices egress
    (:func:`solver.inputs.egress.egress_in_model`), cheapest egress first
    (:func:`solver.inputs.egress.route_tokens`). ``load`` (the problem's
    :func:`resolve_load`) and ``by_workload`` (the plan's line items by workload) spare a
    caller that asks period by period from working them out again on every call."""
    load = resolve_load(problem) if load is None else load
    hours = period_hours(problem)
    out: dict[DeploymentKey, float] = defaultdict(float)
    for w, periods in by_period.items():
        shares = block_shares(load, w)
        routed = egress_in_model(problem, w)
        items = (
            [i for i in plan.line_items if i.workload == w]
            if by_workload is None
            else by_workload.get(w, [])
        )
        lines = [i for i in items if i.capacity_tokens_per_s > 0]
        for period, tokens in periods.items():
            for b, (block, share) in enumerate(shares.items()):
                here = [i for i in lines if i.period == period and i.block in ("", block)]
                if routed:
                    seconds = hours[period] * load.hours_per_day[b] / 24.0 * SECONDS_PER_HOUR
                    caps = [
                        (n, i.provider, i.capacity_tokens_per_s * seconds)
                        for n, i in enumerate(here)
                    ]
                    r = served_per_capacity(problem, load, w, b)
                    for n, t in route_tokens(tokens * share, caps, r).items():
                        out[_key(here[n])] += t
                    continue
                capacity = sum(i.capacity_tokens_per_s for i in here)
                for i in here:
                    out[_key(i)] += tokens * share * i.capacity_tokens_per_s / capacity
    return dict(out)


def _per_million(usd: float | None, tokens: float) -> float | None:
    return None if usd is None or tokens <= 0 else usd / tokens * MILLION


def _row(
    scope: str,
    input_tokens: float,
    output_tokens: float,
    cost_usd: float,
    all_in_usd: float | None,
    api: CompareApi | None,
    **where: str,
) -> UnitCost:
    tokens = input_tokens + output_tokens
    extra: dict[str, object] = {}
    if all_in_usd is not None:
        extra["all_in_cost_usd"] = all_in_usd
        extra["all_in_usd_per_1m_output_tokens"] = _per_million(all_in_usd, output_tokens)
        extra["all_in_usd_per_1m_tokens"] = _per_million(all_in_usd, tokens)
    if api is not None and output_tokens > 0:
        api_usd = (
            input_tokens * api.usd_per_1m_input_tokens
            + output_tokens * api.usd_per_1m_output_tokens
        ) / MILLION
        ratio = (cost_usd if all_in_usd is None else all_in_usd) / api_usd
        extra |= {
            "api_name": api.name,
            "api_cost_usd": api_usd,
            "api_cost_ratio": ratio,
            "usd_per_1m_input_tokens_at_api_mix": api.usd_per_1m_input_tokens * ratio,
            "usd_per_1m_output_tokens_at_api_mix": api.usd_per_1m_output_tokens * ratio,
        }
    return UnitCost.model_validate(
        {
            "scope": scope,
            **where,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": cost_usd,
            "usd_per_1m_output_tokens": _per_million(cost_usd, output_tokens),
            "usd_per_1m_tokens": _per_million(cost_usd, tokens),
            **extra,
        }
    )


def _all_in_shares(plan: Plan, groups: Mapping[K, Iterable[LineItem]]) -> dict[K, float]:
    """Group -> its share of the cost lines in USD (module docstring)."""
    by_provider: dict[str, float] = defaultdict(float)
    for i in plan.line_items:
        by_provider[i.provider] += i.cost_usd
    total = sum(by_provider.values())
    out: dict[K, float] = {}
    for g, items in groups.items():
        mine: dict[str, float] = defaultdict(float)
        for i in items:
            mine[i.provider] += i.cost_usd
        usd = 0.0
        for line in plan.cost_lines:
            if line.provider and by_provider.get(line.provider, 0.0) > 0:
                usd += line.cost_usd * mine.get(line.provider, 0.0) / by_provider[line.provider]
            elif total > 0:
                usd += line.cost_usd * sum(mine.values()) / total
        out[g] = usd
    return out


def unit_costs(plan: Plan, problem: Problem) -> list[UnitCost] | None:
    """The plan's unit costs: the plan, then each serving workload and its deployments
    (module docstring); None when it serves no tokens."""
    by_period = period_output_tokens(plan, problem)
    if not by_period:
        return None
    api = problem.compare_api
    ratio = {
        w.name: prompt_per_output(w) for w in problem.workloads if isinstance(w, InferenceWorkload)
    }
    deployments = deployment_output_tokens(plan, problem, by_period)
    of_workload: dict[str, list[LineItem]] = defaultdict(list)
    of_deployment: dict[DeploymentKey, list[LineItem]] = defaultdict(list)
    for i in plan.line_items:
        if i.workload in by_period:
            of_workload[i.workload].append(i)
            of_deployment[_key(i)].append(i)
    costed = bool(plan.cost_lines)
    extra_w = _all_in_shares(plan, of_workload) if costed else {}
    extra_d = _all_in_shares(plan, of_deployment) if costed else {}

    rows: list[UnitCost] = []
    out_total = sum(sum(p.values()) for p in by_period.values())
    in_total = sum(sum(p.values()) * ratio[w] for w, p in by_period.items())
    plan_all_in = plan.all_in_cost_usd if costed else None
    rows.append(_row("plan", in_total, out_total, plan.total_cost_usd, plan_all_in, api))
    for w, periods in by_period.items():
        out_w = sum(periods.values())
        cost = sum(i.cost_usd for i in of_workload.get(w, []))
        all_in_w = cost + extra_w.get(w, 0.0) if costed else None
        rows.append(_row("workload", out_w * ratio[w], out_w, cost, all_in_w, api, workload=w))
        for key in sorted(k for k in of_deployment if k[0] == w):
            out_d = deployments.get(key, 0.0)
            cost_d = sum(i.cost_usd for i in of_deployment[key])
            all_in_d = cost_d + extra_d.get(key, 0.0) if costed else None
            _, provider, region, offering, mode = key
            rows.append(
                _row(
                    "deployment",
                    out_d * ratio[w],
                    out_d,
                    cost_d,
                    all_in_d,
                    api,
                    workload=w,
                    provider=provider,
                    region=region,
                    offering=offering,
                    mode=mode,
                )
            )
    return rows


def with_unit_costs(plan: Plan, problem: Problem) -> Plan:
    """The plan with its ``unit_costs`` (left out when it serves no tokens)."""
    return plan.model_copy(update={"unit_costs": unit_costs(plan, problem)})


__all__ = [
    "block_shares",
    "deployment_output_tokens",
    "period_output_tokens",
    "prompt_per_output",
    "unit_costs",
    "with_unit_costs",
]
