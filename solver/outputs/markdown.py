"""Markdown for people: the plan diff, to paste into a review.

Pure functions from the data the analyses return to ``str``; plain text is in
:mod:`solver.outputs.text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from solver.outputs.text import price_per_hour, signed_usd

if TYPE_CHECKING:
    from solver.analyses.diff import PlanDiff


def diff_markdown(d: PlanDiff) -> str:
    """The diff as Markdown, to paste into a review: summary, the cost bridge, and one
    table of every line added, removed, changed or re-priced (``procure diff --format
    markdown``)."""
    pct = f" ({d.total_change_usd / d.old_total_usd:+.1%})" if d.old_total_usd else ""
    out = [f"> **Warning:** {d.problem_warning}", ""] if d.problem_warning else []
    out += [
        f"### Plan diff: {d.old_problem}",
        "",
        f"**Total** ${d.old_total_usd:,.2f} -> ${d.new_total_usd:,.2f}: "
        f"{signed_usd(d.total_change_usd)}{pct}",
        "",
        "| step | USD |",
        "|---|---:|",
        f"| old plan, old prices | {d.old_total_usd:,.2f} |",
        f"| price effect | {signed_usd(d.price_effect_usd)} |",
        f"| plan effect | {signed_usd(d.plan_effect_usd)} |",
        f"| new plan, new prices | {d.new_total_usd:,.2f} |",
        "",
        f"{d.n_changes} line item(s) added, removed or changed; {len(d.repriced)} "
        f"re-priced; {d.unchanged} kept ({d.price_basis}).",
        "",
    ]
    rows = d.added + d.removed + d.changed + d.repriced
    if rows:
        out += [
            "| change | item | offering | mode | period | block | workload | units | "
            "unit price $/h | cost $ | delta $ |",
            "|---|---|---|---|---|---|---|---|---|---:|---:|",
        ]
        for c in rows:
            units = (
                f"{c.old_units:g} -> {c.new_units:g}"
                if c.change == "changed"
                else f"{c.new_units or c.old_units:g}"
            )
            price = (
                f"{price_per_hour(c.old_unit_price_usd_per_hour)} -> "
                f"{price_per_hour(c.new_unit_price_usd_per_hour)}"
                if c.change == "repriced"
                else price_per_hour(c.new_unit_price_usd_per_hour or c.old_unit_price_usd_per_hour)
            )
            cells = [
                c.change,
                c.item,
                c.offering,
                c.new_mode or c.old_mode,
                c.period,
                c.block,
                c.workload,
                units,
                price,
                f"{c.old_cost_usd:,.2f} -> {c.new_cost_usd:,.2f}",
                signed_usd(c.delta_usd),
            ]
            out.append("| " + " | ".join(_md_cell(x) for x in cells) + " |")
    out += [f"- note: {_md_cell(n)}" for n in d.notes]
    return "\n".join(out) + "\n"


def _md_cell(value: object) -> str:
    """Text safe in a Markdown table cell (pipes escaped, no line breaks)."""
    return str(value).replace("|", "\\|").replace("\n", " ")
