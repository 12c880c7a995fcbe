"""The plan's unit costs ($/1M tokens) in words and as a table: the CLI, the report's
first screen, the workbook and the workspace show these."""

from __future__ import annotations

import pandas as pd

from solver.plan import Plan
from solver.plan.lines.unit_cost import UnitCost


def _tokens(n: float) -> str:
    """Tokens in words: 201.2B, 3.6B, 950M."""
    if n >= 1e9:
        return f"{n / 1e9:,.1f}B"
    if n >= 1e6:
        return f"{n / 1e6:,.1f}M"
    return f"{n:,.0f}"


def _per_m(usd: float | None) -> str:
    return "n/a" if usd is None else f"${usd:,.4f}"


def break_even_words(row: UnitCost) -> str:
    """The API comparison of one row in words ('' without compare_api)."""
    if row.api_cost_ratio is None or row.api_cost_usd is None:
        return ""
    ratio = row.api_cost_ratio
    basis = "all in" if row.all_in_cost_usd is not None else "compute"
    head = (
        f"{row.api_name} would bill ${row.api_cost_usd:,.2f} for the same tokens; the plan "
        f"({basis}) costs {ratio:.2f}x that, ${_per_m(row.usd_per_1m_input_tokens_at_api_mix)[1:]}"
        f" per 1M input and ${_per_m(row.usd_per_1m_output_tokens_at_api_mix)[1:]} per 1M "
        "output tokens at the API's mix"
    )
    if ratio < 1:
        return f"{head}: the API breaks even at a price cut of {1 - ratio:.1%}"
    return f"{head}: the plan breaks even if the API's prices rise {ratio - 1:.1%}"


def unit_cost_lines(plan: Plan) -> list[str]:
    """The unit costs in sentences: each serving workload, its deployments, the plan."""
    rows = plan.unit_costs or []
    if not rows:
        return []

    def figure(r: UnitCost) -> str:
        text = (
            f"{_per_m(r.usd_per_1m_output_tokens)} per 1M output tokens, "
            f"{_per_m(r.usd_per_1m_tokens)} per 1M tokens in and out"
        )
        if r.all_in_cost_usd is not None:
            text += (
                f"; all in {_per_m(r.all_in_usd_per_1m_output_tokens)} and "
                f"{_per_m(r.all_in_usd_per_1m_tokens)}"
            )
        return text

    out = ["unit costs at the tokens served over the horizon (from the load curve):"]
    for r in rows:
        if r.scope == "workload":
            out.append(
                f"  {r.workload}: {figure(r)} ({_tokens(r.input_tokens)} input and "
                f"{_tokens(r.output_tokens)} output tokens, ${r.cost_usd:,.2f})"
            )
            if words := break_even_words(r):
                out.append(f"    {words}")
        elif r.scope == "deployment":
            out.append(
                f"    {r.offering} {r.mode}: {figure(r)} ({_tokens(r.output_tokens)} output "
                f"tokens, ${r.cost_usd:,.2f})"
            )
    for r in rows:
        if r.scope == "plan":
            out.append(f"  the whole plan (training included): {figure(r)}")
    return out


def unit_cost_frame(plan: Plan) -> pd.DataFrame:
    """One row per unit cost, columns as in the plan JSON (the workbook's sheet)."""
    rows = [r.model_dump() for r in plan.unit_costs or []]
    return pd.DataFrame(rows)


__all__ = ["break_even_words", "unit_cost_frame", "unit_cost_lines"]
