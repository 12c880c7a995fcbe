"""What surviving each kind of loss costs, in sentences: the CLI and the report show
these (the plan's ``loss_costs``)."""

from __future__ import annotations

from solver.plan import Plan


def loss_cost_lines(plan: Plan) -> list[str]:
    """One sentence per kind of domain the plan survives, after a heading; none when no
    workload must survive a loss."""
    rows = plan.loss_costs or []
    if not rows:
        return []
    out = ["what surviving each loss costs (against the same problem solved without it):"]
    for r in rows:
        who = ", ".join(r.workloads)
        if r.cost_usd is None or r.without_total_usd is None:
            head = f"  losing a {r.kind} ({who}): not priced ({r.note})"
        else:
            gap = "" if r.without_gap is None else f", within {r.without_gap:.2%}"
            head = (
                f"  losing a {r.kind} ({who}): ${r.cost_usd:,.2f} "
                f"(${r.total_cost_usd:,.2f} against ${r.without_total_usd:,.2f} without{gap})"
            )
        if r.largest_domain is not None and r.largest_share_of_capacity is not None:
            head += (
                f"; largest single point of failure {r.largest_domain}, "
                f"{r.largest_share_of_capacity:.0%} of the serving capacity"
            )
        out.append(head)
    return out
