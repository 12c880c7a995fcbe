"""Egress by default as the model prices it and the plan charges it: one price per output
token, one rule for which deployment serves which tokens (issue 49: egress in the
objective, docs/concepts/costs.md "Egress in the objective").

- :func:`egress_usd_per_token`: a provider's egress $/GB (its published figure,
  :func:`solver.inputs.cost_defaults.egress_price`) x bytes per output token / 1e9. The
  model's coefficient and the plan's egress line both read it.
- In each period and load block, a serving workload's output tokens (its average tokens/s
  x the period's demand factor x the block's share of the day on the load curve) are
  served cheapest egress first: each provider's deployments up to
  :func:`served_per_capacity` of their capacity (the utilisation its demand row sized the
  fleet for), deployments of one price in proportion to capacity
  (:func:`route_tokens`). That is the model's LP over the served tokens at its optimum, so
  the plan's egress line equals what the objective priced.
- :func:`egress_in_model`: which workloads the model prices so (under ``min_cost`` and
  the other objectives without a priced shortfall, egress by default, aggregated serving
  without a traffic mix); the others keep the plain split in proportion to capacity and
  are charged after the solve.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import TypeVar

from solver.inputs.cost_defaults import OUTPUT_BYTES_PER_TOKEN, egress_price
from solver.inputs.costs import resolve_problem_costs
from solver.inputs.load import LoadBlocks
from solver.inputs.problem import InferenceWorkload, Problem

GB = 1e9  # bytes
HOURS_PER_DAY = 24.0

K = TypeVar("K", bound=Hashable)


def egress_usd_per_token(provider: str) -> float:
    """USD of egress per output token sent from ``provider``: its $/GB by default x
    :data:`OUTPUT_BYTES_PER_TOKEN` / 1e9."""
    return egress_price(provider)[0] * OUTPUT_BYTES_PER_TOKEN / GB


def egress_in_model(problem: Problem, workload: str) -> bool:
    """Whether the model prices a serving workload's egress (module docstring)."""
    w = next((x for x in problem.workloads if x.name == workload), None)
    if not isinstance(w, InferenceWorkload) or w.traffic_mix:
        return False
    if w.architecture != "aggregated" or problem.objective == "max_served":
        return False
    return "egress" in resolve_problem_costs(problem).defaults


def block_shares(load: LoadBlocks, workload: str) -> dict[str, float]:
    """Block -> its share of a workload's daily tokens on the load curve (sums to 1)."""
    curve = load.hourly.get(workload)
    if curve and load.hours:
        raw = [sum(curve[h] for h in hours) for hours in load.hours]
    else:
        factors = load.factors.get(workload, tuple(1.0 for _ in load.names))
        raw = [f * h for f, h in zip(factors, load.hours_per_day, strict=True)]
    total = sum(raw) or 1.0
    return {b: r / total for b, r in zip(load.names, raw, strict=True)}


def block_average_factor(load: LoadBlocks, workload: str, block: int) -> float:
    """A block's average output tokens/s as a multiple of the day's average: its share
    of the day's tokens over its share of the day's hours."""
    share = block_shares(load, workload)[load.names[block]]
    return share / (load.hours_per_day[block] / HOURS_PER_DAY)


def served_per_capacity(problem: Problem, load: LoadBlocks, workload: str, block: int) -> float:
    """Tokens/s a deployment serves at most per token/s of its capacity in a block: the
    block's average over the demand the model sized for (the block's factor x (1 +
    demand_headroom) / max_utilisation), so no deployment runs above the utilisation the
    fleet was sized at; 0 where the block asks for nothing."""
    w = next(x for x in problem.workloads if x.name == workload)
    assert isinstance(w, InferenceWorkload)  # egress_in_model
    peak = load.factors[workload][block] * (1.0 + problem.demand_headroom) / w.max_utilisation
    return block_average_factor(load, workload, block) / peak if peak > 0 else 0.0


def route_tokens(
    tokens: float, deployments: Sequence[tuple[K, str, float]], served_share: float
) -> dict[K, float]:
    """Deployment -> tokens it serves of ``tokens``: ``deployments`` are (key, provider,
    capacity in tokens over the block), each serving at most ``served_share`` of its
    capacity, cheapest :func:`egress_usd_per_token` first, those of one price in
    proportion to capacity; what rounding leaves goes to the last price served."""
    groups: dict[float, list[tuple[K, float]]] = defaultdict(list)
    for key, provider, cap in deployments:
        groups[egress_usd_per_token(provider)].append((key, cap))
    out: dict[K, float] = defaultdict(float)
    left = tokens
    last: list[tuple[K, float]] = []
    for price in sorted(groups):
        members = groups[price]
        cap = sum(c for _, c in members)
        if cap <= 0:
            continue
        take = min(left, cap * served_share)
        for key, c in members:
            out[key] += take * c / cap
        left -= take
        last = members
        if left <= 0:
            break
    if left > 0 and last:  # float rounding, or capacity short of the tokens
        cap = sum(c for _, c in last)
        for key, c in last:
            out[key] += left * c / cap
    return dict(out)


__all__ = [
    "block_average_factor",
    "block_shares",
    "egress_in_model",
    "egress_usd_per_token",
    "route_tokens",
    "served_per_capacity",
]
