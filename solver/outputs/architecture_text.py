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


def architecture_sentences(plan: Plan) -> list[str]:
    """One sentence per workload the plan serves with a chosen architecture (workloads of
    architecture ``auto`` or ``disaggregated``): which it runs, its pools (units at the
    busiest period, offering, tensor-parallel degree, replicas a unit, batch), the KV link
    and transfer it relies on, and what it saves against aggregated serving where the plan
    carries ``architecture_costs`` (``procure solve --compare-architectures``).

    Empty for a plan whose workloads all serve aggregated by default (no line states an
    architecture)."""
    pools: dict[str, dict[tuple[str, str, int, int], float]] = {}
    kv: dict[str, tuple[str, float, float]] = {}
    for i in plan.line_items:
        if not i.workload or i.architecture is None or i.units <= 0:
            continue
        role: str = i.pool_role or "aggregated"
        key = (role, f"{i.offering} ({i.mode})", int(i.tp_degree), int(i.batch))
        by = pools.setdefault(i.workload, {})
        by[key] = max(by.get(key, 0.0), float(i.units))
        if i.pool_role == "prefill" and i.kv_gb_per_request is not None:
            sent_s = float(i.kv_transfer_s or 0.0)
            kv[i.workload] = (str(i.kv_link), float(i.kv_gb_per_request), sent_s)
    out = []
    for workload, by in sorted(pools.items()):
        roles = {r for r, _, _, _ in by}
        arch = "+".join(
            a for a in ("aggregated", "disaggregated")
            if (a == "aggregated" and "aggregated" in roles)
            or (a == "disaggregated" and roles & {"prefill", "decode"})
        )  # fmt: skip
        parts = []
        for (role, offering, tp, batch), units in sorted(by.items()):
            what = {"prefill": "prefill pool", "decode": "decode pool"}.get(role, "aggregated")
            tail = f", batch {batch}" if role != "prefill" and batch else ""
            parts.append(f"{what} {units:g} x {offering}, TP{tp}{tail}")
        text = f"{workload} runs {arch}: " + "; ".join(parts)
        if workload in kv:
            link, gb, sec = kv[workload]
            text += f"; KV cache {gb:.2f} GB a request over {link}, {sec * 1e3:.0f} ms of its TTFT"
        out.append(text + " (most units in any period).")
    costs = plan.architecture_costs
    if out and costs:
        agg = costs.get("aggregated")
        if agg:
            saved = agg - plan.total_cost_usd
            out.append(
                f"Against aggregated serving (${agg:,.0f}) this plan (${plan.total_cost_usd:,.0f}) "
                + (f"saves ${saved:,.0f} ({saved / agg:.1%})" if saved > 0.5
                   else f"costs ${-saved:,.0f} more" if saved < -0.5 else "costs the same")
                + "; "
                + (f"the best all-disaggregated plan costs ${costs['disaggregated']:,.0f}."
                   if costs.get("disaggregated") else "no all-disaggregated plan serves it.")
            )  # fmt: skip
    elif out:
        out.append(
            "What it saves against aggregated serving: solve with --compare-architectures "
            "(the plan's architecture_costs)."
        )
    return out
