"""The plan's ``loss_costs``, checked from the plan and the problem: one entry per kind of
domain some workload must survive (and no other), each at the plan's total, its cost the
difference of the two totals, and its largest single point of failure the domain of that
kind that holds the largest share of a surviving workload's serving capacity in any period
and load block, recomputed here from the serving lines. The plans without each rule are
verified when they are solved (:func:`solver.solve.solve_verified`)."""

from __future__ import annotations

from collections import defaultdict

from solver.inputs.problem import InferenceWorkload
from solver.plan import LineItem
from solver.trust.verify.context import REL_TOL
from solver.trust.verify.run import _Run
from solver.units import Item


def _shares(item: LineItem, kind: str) -> dict[str, float]:
    """Domain of ``kind`` -> share of the line's units in it."""
    if kind == "provider":
        return {item.provider: 1.0}
    if kind == "region" or not item.zone_units:
        return {f"{item.provider}/{item.region}": 1.0}
    total = sum(item.zone_units.values()) or 1.0
    return {z: n / total for z, n in item.zone_units.items()}


def largest_share(run: _Run, kind: str, workloads: set[str]) -> dict[str, float]:
    """Domain -> its largest share of a workload's serving capacity in one period and
    block, over the domains of ``kind`` that hold the largest share anywhere (ties: all)."""
    blocks = list(run.ctx.blocks)
    held: dict[tuple, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for item in run.plan.line_items:
        if item.workload not in workloads or item.item not in {Item.RENT, Item.USE}:
            continue
        for block in [item.block] if item.block else blocks:
            for domain, share in _shares(item, kind).items():
                held[(item.workload, item.period, block)][domain] += (
                    item.capacity_tokens_per_s * share
                )
    best: dict[str, float] = {}
    top = 0.0
    for by_domain in held.values():
        total = sum(by_domain.values())
        for domain, tps in by_domain.items():
            share = tps / total if total > 0 else 0.0
            if share > top + 1e-9:
                best, top = {domain: share}, share
            elif abs(share - top) <= 1e-9:
                best[domain] = share
    return best


def _check_loss_costs(run: _Run) -> None:
    """``loss costs``: the entries above, when the plan carries them."""
    rows = run.plan.loss_costs
    if rows is None:
        return
    kinds = {
        k for w in run.p.workloads if isinstance(w, InferenceWorkload) for k in w.survive_loss_of
    }
    plan_total = run.plan.total_cost_usd
    run.c.check(
        "loss costs",
        sorted(r.kind for r in rows) == sorted(kinds),
        f"kinds {sorted(r.kind for r in rows)}, the problem survives {sorted(kinds)}",
    )
    for r in rows:
        tol = REL_TOL * max(1.0, abs(plan_total)) + 0.005
        run.c.check(
            "loss costs",
            abs(r.total_cost_usd - plan_total) <= tol,
            f"{r.kind}: ${r.total_cost_usd:,.2f} is not the plan's ${plan_total:,.2f}",
        )
        if r.cost_usd is not None or r.without_total_usd is not None:
            diff = None if r.without_total_usd is None else plan_total - r.without_total_usd
            run.c.check(
                "loss costs",
                diff is not None and r.cost_usd is not None and abs(r.cost_usd - diff) <= tol,
                f"{r.kind}: cost ${r.cost_usd or 0:,.2f}, the totals differ by ${diff or 0:,.2f}",
            )
        if r.largest_domain is not None:
            found = largest_share(run, r.kind, set(r.workloads))
            share = found.get(r.largest_domain)
            run.c.check(
                "loss costs",
                share is not None and abs(share - (r.largest_share_of_capacity or 0.0)) <= 1e-6,
                f"{r.kind}: {r.largest_domain} at {r.largest_share_of_capacity} is not the "
                f"largest (recomputed: {found})",
            )
