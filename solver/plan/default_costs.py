"""The default storage and egress of a plan (all-in by default, issue 49): sized from
its workloads and priced at the provider the plan chose (:mod:`solver.inputs.cost_defaults`).

- Storage, per training workload: its dataset (tokens x bytes per token) and its kept
  checkpoints (parameters x bytes per parameter of a checkpoint) in GB (1e9 bytes), held at
  the provider of its training line every month of the horizon.
- Egress, per serving deployment's provider: the output tokens it serves
  (:func:`solver.plan.unit_costs.deployment_output_tokens`, period by period) x bytes per
  output token, each period's spread over its months by hours.

Both return (provider, GB-months or GB by month, what, price, source) for
:func:`solver.plan.costs.cost_lines` to write as cost lines.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from solver.inputs.catalog import Catalog
from solver.inputs.cost_defaults import (
    BYTES_PER_TOKEN_SOURCE,
    CHECKPOINT_SOURCE,
    CHECKPOINTS_KEPT,
    DATASET_BYTES_PER_TOKEN,
    OUTPUT_BYTES_PER_TOKEN,
    egress_price,
    storage_price,
)
from solver.inputs.egress import egress_in_model, egress_usd_per_token
from solver.inputs.problem import Problem, TrainingWorkload
from solver.inputs.storage_size import storage_gb
from solver.plan.charges import PlanCalendar
from solver.plan.lines import LineItem, Plan
from solver.units import Item

GB = 1e9  # bytes


@dataclass(frozen=True)
class DefaultCharge:
    """One default storage or egress charge: the provider, GB (held every month, or sent
    by month), the price per GB(-month), what it is and its source."""

    provider: str
    gb_by_month: dict[int, float]  # storage: GB-months by month; egress: GB by month
    gb: float  # storage: GB held; egress: GB sent over the horizon
    usd_per_gb: float
    what: str
    source: str


def default_storage(
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    slices: list[tuple[str, float, float]],
) -> list[DefaultCharge]:
    """Per provider, the datasets and checkpoints of the training workloads its training
    lines run, every month of the horizon (``slices``: (period, begin month, end month))."""
    held: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
    for w in problem.workloads:
        if not isinstance(w, TrainingWorkload):
            continue
        lines = [i for i in plan.line_items if i.workload == w.name and i.item == Item.TRAINING]
        if lines:
            held[lines[0].provider].append((w.name, *storage_gb(w, catalog)))
    out = []
    for provider, sizes in sorted(held.items()):
        gb = sum(d + c for _, d, c in sizes)
        by_month: dict[int, float] = defaultdict(float)
        for _, a, b in slices:
            by_month[int(a + 1e-9)] += gb * (b - a)
        price, source = storage_price(provider)
        what = "; ".join(
            f"{name}: dataset {d:,.6g} GB ({DATASET_BYTES_PER_TOKEN:g} bytes/token) and "
            f"{CHECKPOINTS_KEPT} checkpoint {c:,.6g} GB" for name, d, c in sizes
        ) + f" ({gb:,.6g} GB)"  # fmt: skip
        sources = f"{source}; sizes: {BYTES_PER_TOKEN_SOURCE}; {CHECKPOINT_SOURCE}"
        out.append(DefaultCharge(provider, dict(by_month), gb, price, what, sources))
    return out


def default_egress(plan: Plan, problem: Problem, cal: PlanCalendar) -> list[DefaultCharge]:
    """Each provider's serving output tokens x bytes per token leaving it, by month."""
    from solver.inputs.load import resolve_load
    from solver.plan.unit_costs import deployment_output_tokens, period_output_tokens

    by_provider: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    load = resolve_load(problem)  # once: period by period below (10k x 200 x 12: 4.3 s)
    by_workload: dict[str, list[LineItem]] = defaultdict(list)
    for item in plan.line_items:
        by_workload[item.workload].append(item)
    for workload, periods in period_output_tokens(plan, problem).items():
        for period, tokens in periods.items():
            if period not in cal.start_month:
                continue
            split = deployment_output_tokens(
                plan, problem, {workload: {period: tokens}}, load=load, by_workload=by_workload
            )
            for (_, provider, *_rest), served in split.items():
                gb = served * OUTPUT_BYTES_PER_TOKEN / GB
                for m0, _, part in cal.period_slices(period, gb):
                    by_provider[provider][int(m0 + 1e-9)] += part
    out = []
    for provider, by_month in sorted(by_provider.items()):
        price, source = egress_price(provider)
        gb = sum(by_month.values())
        what = f"served output tokens x {OUTPUT_BYTES_PER_TOKEN:g} bytes per token"
        sources = f"{source}; size: {BYTES_PER_TOKEN_SOURCE}"
        out.append(DefaultCharge(provider, dict(by_month), gb, price, what, sources))
    return out


def priced_egress_usd(plan: Plan, problem: Problem) -> float:
    """USD of egress by default of the serving workloads whose egress the model priced
    (:func:`solver.inputs.egress.egress_in_model`), as the plan's egress lines charge it
    (the served tokens routed cheapest egress first x each provider's $/token): what the
    objective's ``egress_usd`` must equal at the plan's solution."""
    from solver.plan.unit_costs import deployment_output_tokens, period_output_tokens

    by_period = {
        w: periods
        for w, periods in period_output_tokens(plan, problem).items()
        if egress_in_model(problem, w)
    }
    split = deployment_output_tokens(plan, problem, by_period)
    return sum(tokens * egress_usd_per_token(key[1]) for key, tokens in split.items())


__all__ = ["DefaultCharge", "default_egress", "default_storage", "priced_egress_usd"]
