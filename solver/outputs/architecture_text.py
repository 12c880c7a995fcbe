"""The line comparing serving architectures under a plan's table (``procure solve
--compare-architectures``; the costs come from :mod:`solver.analyses.architectures`)."""

from __future__ import annotations

from solver.plan import Plan


def architecture_line(plan: Plan) -> str | None:
    """'architectures: aggregated $X; disaggregated best $Y; this plan $Z (chat:
    aggregated)', or None when the plan has no comparison."""
    costs = plan.architecture_costs
    if not costs:
        return None

    def usd(v: float | None) -> str:
        return "no plan" if v is None else f"${v:,.0f}"

    chosen: dict[str, set[str]] = {}
    for i in plan.line_items:
        if i.workload and i.architecture is not None:
            chosen.setdefault(i.workload, set()).add(i.architecture)
    which = ", ".join(f"{w}: {'+'.join(sorted(a))}" for w, a in sorted(chosen.items()))
    return (
        f"architectures: aggregated {usd(costs.get('aggregated'))}; disaggregated best "
        f"{usd(costs.get('disaggregated'))}; this plan ${plan.total_cost_usd:,.0f}"
        + (f" ({which})" if which else "")
    )
