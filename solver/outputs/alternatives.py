"""The text and JSON of ``procure alternatives``: the optimum and its near-optimal
alternatives side by side, and the price of each preference in one table."""

from __future__ import annotations

import json

from solver.analyses.alternatives import Alternatives, Preferences
from solver.money import usd
from solver.outputs.grid import Page, Table, escape
from solver.plan import Plan
from solver.plan.exposure import largest_domains
from solver.units import Item

#: What one group of each measure or kind of preference is, in words.
_LABELS: dict[str, str] = {
    "providers": "provider",
    "accelerators": "accelerator",
    "regions": "provider/region",
    "commitments": "purchase mode",
    "region_groups": "region group",
}
#: Line items whose reservations and purchases are a plan's commitments.
_COMMITTED = frozenset({Item.RESERVATION, Item.PURCHASE, Item.CAPACITY_BLOCK, Item.SAVINGS_PLAN})


def plan_summary(plan: Plan) -> dict[str, object]:
    """What a column of the side-by-side table shows of one plan: its cost (USD), CO2e
    (t), providers, accelerators, purchase modes, commitments (reservations and purchases:
    units x offering and mode) and largest failure domain: the provider holding the largest
    share of a serving workload's capacity in any period and block."""
    units = [i for i in plan.line_items if i.units > 0 and i.item != Item.SAVINGS_PLAN_COVER]
    commitments: dict[str, float] = {}
    for i in units:
        if i.item in _COMMITTED:
            key = f"{i.offering} {i.mode}"
            commitments[key] = commitments.get(key, 0.0) + i.units
    serving = sorted({i.workload for i in units if i.item in (Item.RENT, Item.USE)})
    points = plan.points_of_failure or largest_domains(plan.line_items, serving)
    largest = "; ".join(
        f"{p.domain} {p.share_of_capacity:.0%} of {p.workload}"
        for p in points
        if p.kind == "provider"
    )
    return {
        "total_cost_usd": plan.total_cost_usd,
        "objective_usd": plan.objective,
        "total_co2e_t": plan.total_co2e_t,
        "providers": sorted({i.provider for i in units}),
        "accelerators": sorted({i.accelerator for i in units}),
        "modes": sorted({i.mode for i in units}),
        "commitments": {k: commitments[k] for k in sorted(commitments)},
        "largest_failure_domain": largest,
        "verified": plan.verified,
    }


def alternatives_text(found: Alternatives) -> str:
    """The optimum and each alternative side by side (one column each)."""
    page = Page(width=170)
    opt = found.optimum
    page.print(
        f"{opt.problem}: {len(found.alternatives)} of {found.asked} alternative(s) within "
        f"{found.slack:.1%} of the optimum ({usd(found.cap_usd)} at most), differing in "
        f"{found.measure} ({_LABELS[found.measure]} sets), in {found.seconds:.1f} s",
        markup=False,
    )
    table = Table()
    table.add_column("")
    plans = [("optimum", opt, "")] + [
        (f"alternative {k + 1}", a.plan, "" if a.proven else " (not proven)")
        for k, a in enumerate(found.alternatives)
    ]
    for name, _, note in plans:
        table.add_column(name + note, justify="left", overflow="fold")
    summaries = [plan_summary(p) for _, p, _ in plans]
    base = opt.total_cost_usd

    def row(label: str, cells: list[str]) -> None:
        table.add_row(label, *(escape(c) for c in cells))

    row("total cost", [usd(s["total_cost_usd"], cents=False) for s in summaries])  # type: ignore[arg-type]
    row(
        "vs optimum",
        [""]
        + [
            f"{usd(p.total_cost_usd - base, cents=False, signed=True)} "
            f"({(p.total_cost_usd - base) / base:+.2%})"
            if base
            else usd(p.total_cost_usd - base, signed=True)
            for _, p, _ in plans[1:]
        ],
    )
    row("providers", [", ".join(s["providers"]) for s in summaries])  # type: ignore[arg-type]
    row("accelerators", [", ".join(s["accelerators"]) for s in summaries])  # type: ignore[arg-type]
    row("purchase modes", [", ".join(s["modes"]) for s in summaries])  # type: ignore[arg-type]
    row(
        "commitments",
        [
            ", ".join(f"{n:g} x {k}" for k, n in s["commitments"].items()) or "none"  # type: ignore[attr-defined]
            for s in summaries
        ],
    )
    row("CO2e (t)", [f"{s['total_co2e_t']:,.1f}" for s in summaries])
    row(
        "largest failure domain",
        [str(s["largest_failure_domain"]) or "no serving" for s in summaries],
    )
    row("verified", ["yes" if s["verified"] else "no" for s in summaries])
    page.print(table)
    if found.stopped:
        page.print(f"stopped: {found.stopped}", markup=False)
    page.print(
        "each alternative reuses as few of the earlier plans' "
        f"{found.measure} as it can (modelling to generate alternatives, Hop-Skip-Jump); "
        "'not proven': the time limit stopped the search with a plan within the slack",
        markup=False,
    )
    return page.text()


def alternatives_json(found: Alternatives) -> str:
    """The analysis as JSON: the summaries, and each plan in full."""
    data = {
        "problem": found.optimum.problem,
        "measure": found.measure,
        "slack": found.slack,
        "cap_usd": found.cap_usd,
        "asked": found.asked,
        "stopped": found.stopped,
        "seconds": found.seconds,
        "optimum": {
            "groups": sorted(found.optimum_groups),
            "summary": plan_summary(found.optimum),
            "plan": found.optimum.model_dump(mode="json"),
        },
        "alternatives": [
            {
                "groups": sorted(a.groups),
                "reused": a.reused,
                "proven": a.proven,
                "delta_usd": a.plan.total_cost_usd - found.optimum.total_cost_usd,
                "summary": plan_summary(a.plan),
                "plan": a.plan.model_dump(mode="json"),
            }
            for a in found.alternatives
        ],
    }
    return json.dumps(data, indent=2) + "\n"


def preferences_text(found: Preferences) -> str:
    """One table: per kind and group, excluding it (in the optimum) or requiring it (not),
    the plan's cost and what the preference costs against the optimum."""
    page = Page(width=170)
    opt = found.optimum
    page.print(
        f"{opt.problem}: the price of each preference against the optimum "
        f"({usd(opt.total_cost_usd, cents=False)}), {len(found.rows)} re-solves in "
        f"{found.seconds:.1f} s",
        markup=False,
    )
    table = Table()
    for name, justify in (
        ("kind", "left"),
        ("group", "left"),
        ("preference", "left"),
        ("plan cost", "right"),
        ("preference costs", "right"),
        ("vs optimum", "right"),
        ("status", "left"),
    ):
        table.add_column(name, justify=justify)
    for p in found.rows:
        share = (
            f"{p.delta_usd / opt.total_cost_usd:+.2%}"
            if p.delta_usd is not None and opt.total_cost_usd
            else ""
        )
        table.add_row(
            _LABELS.get(p.kind, p.kind),
            escape(p.group),
            f"{p.action} it",
            usd(p.cost_usd, cents=False, missing="none"),
            usd(p.delta_usd, cents=False, signed=True, missing="none"),
            share,
            p.status,
        )
    page.print(table)
    page.print(
        "exclude: the group is in the optimum; require: at least one unit of it. Each "
        "re-solve is verified and proven within the solver's gap (0.01% by default); 'not "
        "proven': the time limit stopped it, its cost is an upper bound; 'infeasible': no "
        "plan keeps the preference",
        markup=False,
    )
    return page.text()


def preferences_json(found: Preferences) -> str:
    """The table as JSON (each re-solve's plan summarised, not in full)."""
    rows = [
        {
            "kind": p.kind,
            "group": p.group,
            "action": p.action,
            "status": p.status,
            "cost_usd": p.cost_usd,
            "delta_usd": p.delta_usd,
            "summary": None if p.plan is None else plan_summary(p.plan),
        }
        for p in found.rows
    ]
    data = {
        "problem": found.optimum.problem,
        "optimum_cost_usd": found.optimum.total_cost_usd,
        "seconds": found.seconds,
        "preferences": rows,
    }
    return json.dumps(data, indent=2) + "\n"
