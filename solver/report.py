"""Reports: sensitivity tables, purchase orders, frontier plots, HTML and XLSX.

Pure functions from plain data (a verified :class:`~solver.plan.Plan`, a
:class:`~solver.sensitivity.SensitivityReport`, sweep points) to text or bytes;
the CLI writes them to files.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel, Field

from solver.export import _stable_zip
from solver.outputs import workbook
from solver.plan import Plan
from solver.sensitivity import BreakEven, SensitivityReport, SweepPoint


class Analysis(BaseModel):
    """Everything ``procure report`` shows, as one JSON-able object."""

    plan: Plan
    sensitivity: SensitivityReport
    carbon_frontier: list[SweepPoint] = Field(default_factory=list)
    budget_sweep: list[SweepPoint] = Field(default_factory=list)
    demand_sweep: list[SweepPoint] = Field(default_factory=list)
    scenario_share: dict[str, float] = Field(
        default_factory=dict, description="pool -> share of price scenarios whose plan uses it"
    )
    scenario_spread: float = 0.0
    scenarios: int = 0
    budget_usd: float | None = Field(None, description="The problem's total budget")


# ------------------------------------------------------------------ tables


def purchase_orders(plan: Plan) -> pd.DataFrame:
    """One row per thing to order from a provider: what, where, mode, quantity, unit price.

    Rented units are summarised at their peak count per period (what to have
    running); reservations and purchases are orders as they stand.
    """
    rows = []
    for i in plan.line_items:
        if i.item in {"use", "existing"}:
            continue
        unit_price = i.cost_usd / (i.units * i.hours) if i.units and i.hours else 0.0
        if i.item == "purchase":
            unit_price = i.cost_usd / i.units if i.units else 0.0
        rows.append(
            {
                "provider": i.provider,
                "region": i.region,
                "item": i.item,
                "offering": i.offering,
                "instance_type": i.instance_type,
                "accelerator": i.accelerator,
                "mode": i.mode,
                "period": i.period,
                "block": i.block,
                "workload": i.workload,
                "units": i.units,
                "accelerators": i.accelerators,
                "hours": i.hours,
                "unit_price_usd": unit_price,
                "unit_price_basis": "per server (capex + hosting)"
                if i.item == "purchase"
                else "per instance-hour",
                "cost_usd": i.cost_usd,
            }
        )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values(["provider", "period", "region", "offering", "mode"], kind="stable")


def duals_frame(report: SensitivityReport) -> pd.DataFrame:
    return pd.DataFrame([d.model_dump() for d in report.duals])


def break_even_frame(rows: Sequence[BreakEven]) -> pd.DataFrame:
    return pd.DataFrame([b.model_dump() for b in rows])


def points_frame(points: Sequence[SweepPoint]) -> pd.DataFrame:
    frame = pd.DataFrame([p.model_dump() for p in points])
    if not frame.empty:
        frame["used"] = frame["used"].map(lambda u: "; ".join(u))
    return frame


def break_even_sentence(b: BreakEven) -> str:
    """'aws/us-east-1/p5.48xlarge on_demand enters the plan below $81.20/h (now $98.32, -17%)'."""
    unit = "/h" if "hour" in b.price_unit else " per server"
    if b.break_even_price is None:
        return f"{b.offering} {b.mode}: no price change moves it ({b.note})"
    verb = "leaves the plan above" if b.in_plan else "enters the plan below"
    return (
        f"{b.offering} {b.mode} {verb} ${b.break_even_price:,.2f}{unit} "
        f"(now ${b.current_price:,.2f}, {b.change_pct:+.1f}%)"
    )


def sensitivity_text(report: SensitivityReport, top: int = 25) -> str:
    """The sensitivity report for people."""
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(file=buffer, width=150, force_terminal=False, color_system=None)
    console.print(
        f"[bold]{report.problem}[/bold]: objective {report.objective_kind} = "
        f"{report.objective:,.2f}"
    )
    console.print(report.caveat)
    table = Table(title="shadow prices (largest first)", title_justify="left")
    for col in ("constraint", "worth of one more unit", "unit", "$ per 1M tokens"):
        table.add_column(col)
    nonzero = [d for d in report.duals if abs(d.d_objective_d_rhs) > 1e-9]
    for d in nonzero[:top]:
        table.add_row(
            d.constraint,
            f"{d.worth:,.4g}",
            d.unit,
            "" if d.usd_per_mtoken is None else f"{d.usd_per_mtoken:,.4f}",
        )
    console.print(table)
    console.print(
        f"{len(report.duals) - len(nonzero)} other constraints have a zero shadow price "
        "(they do not bind at this plan)"
    )
    if report.reduced_costs:
        rc = Table(title="options not used: reduced cost (closest first)", title_justify="left")
        for col in ("option", "reduced cost", "hourly price cut to break even (LP)"):
            rc.add_column(col)
        for r in report.reduced_costs[:top]:
            cut = "" if r.price_cut_usd_per_hour is None else f"${r.price_cut_usd_per_hour:,.3f}"
            rc.add_row(r.option, f"{r.reduced_cost:,.2f}", cut)
        console.print(rc)
    if report.break_even:
        console.print(f"break-even prices ({report.break_even_tolerance}):")
        for b in report.break_even[:top]:
            console.print("  " + break_even_sentence(b))
    return buffer.getvalue()


# ------------------------------------------------------------------ plots


def frontier_png(analysis: Analysis) -> bytes:
    """The cost-versus-CO2e frontier and the budget and demand sweeps, as one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("carbon_frontier", "total CO2e, t", "total cost, $", "total_co2e_t", "total_cost_usd"),
        ("budget_sweep", "budget, $", "share of demand served", "value", "served_fraction"),
        ("demand_sweep", "demand x today", "total cost, $", "value", "total_cost_usd"),
    ]
    panels = [p for p in panels if getattr(analysis, p[0])]
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(5.2 * max(1, len(panels)), 4))
    axes = [axes] if not hasattr(axes, "__len__") else list(axes)
    for ax, (name, xlabel, ylabel, xcol, ycol) in zip(axes, panels, strict=False):
        pts = [p for p in getattr(analysis, name) if getattr(p, ycol) is not None]
        xs = [getattr(p, xcol) for p in pts]
        ys = [getattr(p, ycol) for p in pts]
        ax.plot(xs, ys, marker="o")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(name.replace("_", " "))
        ax.grid(alpha=0.3)
    fig.suptitle(f"{analysis.plan.problem}: frontiers")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


# ------------------------------------------------------------------ HTML and XLSX


def _table_html(frame: pd.DataFrame, money: Sequence[str] = ()) -> str:
    if frame.empty:
        return "<p><em>none</em></p>"
    shown = frame.copy()
    for col in money:
        if col in shown:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:,.0f}")
    for col in shown.columns:
        if col not in money and pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:,.4g}")
    return shown.to_html(index=False, escape=True, border=0, classes="t", na_rep="")


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table.t{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}
table.t td,table.t th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
table.t th{background:#f4f4f4} .note{color:#555;font-size:0.9em}
.kpi{display:inline-block;margin-right:2em;font-size:1.1em} img{max-width:100%}
"""


def report_html(analysis: Analysis, png: bytes) -> str:
    """A self-contained HTML page (the plot is embedded as a data URI)."""
    plan, sens = analysis.plan, analysis.sensitivity
    esc = html.escape
    items = pd.DataFrame([i.model_dump() for i in plan.line_items])
    cols = [
        "period",
        "provider",
        "region",
        "item",
        "instance_type",
        "accelerator",
        "mode",
        "units",
        "workload",
        "block",
        "hours",
        "cost_usd",
        "co2e_t",
    ]
    totals = [
        (name, pd.DataFrame({"key": list(m), "cost_usd": list(m.values())}))
        for name, m in (
            ("period", plan.totals.by_period),
            ("provider", plan.totals.by_provider),
            ("mode", plan.totals.by_mode),
            ("workload", plan.totals.by_workload),
        )
    ]
    binding = pd.DataFrame([b.model_dump() for b in plan.binding])
    duals = duals_frame(sens)
    zero = 0
    if not duals.empty:
        keep = duals["d_objective_d_rhs"].abs() > 1e-9
        zero = int((~keep).sum())
        duals = duals[keep]
    be = [break_even_sentence(b) for b in sens.break_even]
    share = pd.DataFrame(
        {"pool": list(analysis.scenario_share), "share": list(analysis.scenario_share.values())}
    )
    img = base64.b64encode(png).decode("ascii")
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>procure report: {esc(plan.problem)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Procurement plan: {esc(plan.problem)}</h1>",
        f"<p><span class='kpi'>total cost <b>${plan.total_cost_usd:,.0f}</b></span>"
        f"<span class='kpi'>CO2e <b>{plan.total_co2e_t:,.1f} t</b></span>"
        f"<span class='kpi'>status <b>{esc(plan.status)}</b>, verified "
        f"<b>{str(plan.verified).lower()}</b></span>"
        f"<span class='kpi'>gap {'n/a' if plan.gap is None else f'{plan.gap:.4%}'}</span></p>",
        "<h2>Plan</h2>",
        _table_html(items[cols] if not items.empty else items, money=["cost_usd"]),
        "<h2>Totals</h2>",
        *[f"<h3>by {n}</h3>" + _table_html(f, money=["cost_usd"]) for n, f in totals],
        "<h2>What binds</h2>",
        _table_html(binding)
        if not binding.empty
        else "<p>No budget, carbon, availability, quota or share limit binds.</p>",
        "<h2>Shadow prices</h2>",
        f"<p class='note'>{esc(sens.caveat)}</p>",
        _table_html(duals[["constraint", "worth", "unit", "usd_per_mtoken"]])
        if not duals.empty
        else "<p><em>none</em></p>",
        f"<p class='note'>{zero} other constraints have a zero shadow price "
        "(they do not bind at this plan).</p>",
        "<h2>Break-even prices</h2>",
        f"<p class='note'>{esc(sens.break_even_tolerance)}</p>",
        "<ul>" + "".join(f"<li>{esc(s)}</li>" for s in be) + "</ul>",
        "<h2>Frontiers</h2>",
        f"<img alt='frontier plot' src='data:image/png;base64,{img}'>",
        "<h3>Cost versus CO2e</h3>",
        _table_html(points_frame(analysis.carbon_frontier), money=["total_cost_usd", "objective"]),
        "<h3>Budget sweep</h3>",
        _table_html(points_frame(analysis.budget_sweep), money=["total_cost_usd", "objective"]),
        "<h3>Demand growth</h3>",
        _table_html(points_frame(analysis.demand_sweep), money=["total_cost_usd", "objective"]),
        f"<h2>Price scenarios ({analysis.scenarios} draws, prices within "
        f"&plusmn;{analysis.scenario_spread:.0%})</h2>",
        "<p class='note'>How often each offering and mode is in the optimal plan.</p>",
        _table_html(share),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def summary_frame(plan: Plan, budget_usd: float | None) -> pd.DataFrame:
    """The workbook's first sheet: the headline figures, one per row."""
    capex = sum(m.capex_usd for m in plan.cash_flow)
    rows = [
        ("plan", plan.problem),
        ("status", f"{plan.status}, verified={str(plan.verified).lower()}"),
        ("first month", plan.start_date or ""),
        ("total cost (USD)", plan.total_cost_usd),
        ("budget (USD)", budget_usd),
        ("budget headroom (USD)", None if budget_usd is None else budget_usd - plan.total_cost_usd),
        ("capex (USD)", capex),
        ("opex and commitments (USD)", plan.total_cost_usd - capex),
        ("total CO2e (t)", plan.total_co2e_t),
        ("net present value (USD)", plan.npv_usd),
    ]
    return pd.DataFrame(rows, columns=["what", "value"])


def report_xlsx(analysis: Analysis) -> bytes:
    """The workbook: summary and monthly cash flow first, then the plan, purchase orders,
    sensitivity, break-even prices and the frontier."""
    plan, sens = analysis.plan, analysis.sensitivity
    items = pd.DataFrame([i.model_dump() for i in plan.line_items])
    items = items.drop(columns=["bucket_requests_per_s", "cost_by_period_usd"], errors="ignore")
    orders = purchase_orders(plan)
    frontier = pd.concat(
        [
            points_frame(analysis.carbon_frontier),
            points_frame(analysis.budget_sweep),
            points_frame(analysis.demand_sweep),
        ],
        ignore_index=True,
    )
    monthly = pd.DataFrame([m.model_dump() for m in plan.cash_flow])
    if not monthly.empty:
        monthly["new_commitments"] = monthly["new_commitments"].map("; ".join)
    sheets = {
        "summary": summary_frame(plan, analysis.budget_usd),
        "monthly": monthly if not monthly.empty else pd.DataFrame({"month": []}),
        "plan": items,
        "purchase plan": orders if not orders.empty else pd.DataFrame({"provider": []}),
        "sensitivity": duals_frame(sens),
        "break-even": break_even_frame(sens.break_even),
        "frontier": frontier,
    }
    money = ["rented_usd", "owned_opex_usd", "commitments_usd", "capex_usd", "total_usd"]
    totals = {"monthly": [*money, "billed_usd"], "plan": ["cost_usd", "co2e_t"]}
    return _stable_zip(workbook(sheets, totals))


def build_analysis(
    plan: Plan,
    solution,
    *,
    solver: str = "highspy",
    break_even_limit: int | None = 12,
    frontier_points: int = 8,
    budget_points: int = 6,
    demand_factors: Sequence[float] = (0.5, 1.0, 1.5, 2.0, 3.0),
    scenarios: int = 20,
    spread: float = 0.2,
    workers: int = 1,
    scheduler: str | None = None,
    progress=None,
) -> Analysis:
    """Run the sensitivity analysis and the sweeps behind ``procure report``.

    ``progress(stage, done, total)`` is called as each solve finishes.
    """
    import numpy as np

    from solver.sensitivity import (
        budget_sweep,
        carbon_frontier,
        demand_sweep,
        price_scenarios,
        sensitivity_report,
    )

    def tick(stage):
        return (lambda done, total: progress(stage, done, total)) if progress else None

    run = {"workers": workers, "scheduler": scheduler}
    compiled = solution.compiled
    sens = sensitivity_report(
        solution,
        break_even_limit=break_even_limit,
        solver=solver,
        progress=tick("break-even prices"),
        **run,
    )
    frontier = carbon_frontier(
        compiled, points=frontier_points, solver=solver, progress=tick("carbon frontier"), **run
    )
    base = plan.total_cost_usd
    budgets = np.linspace(0.5 * base, 1.25 * base, budget_points)
    budget = (
        budget_sweep(compiled, budgets, solver=solver, progress=tick("budget sweep"), **run)
        if any(getattr(w, "kind", "") != "training" for w in compiled.problem.workloads)
        else []
    )
    demand = demand_sweep(
        compiled, demand_factors, solver=solver, progress=tick("demand sweep"), **run
    )
    _, share = price_scenarios(
        compiled, n=scenarios, spread=spread, solver=solver, progress=tick("price scenarios"), **run
    )
    return Analysis(
        plan=plan,
        sensitivity=sens,
        carbon_frontier=frontier,
        budget_sweep=budget,
        demand_sweep=demand,
        scenario_share=share,
        scenario_spread=spread,
        scenarios=scenarios,
        budget_usd=compiled.problem.budget_usd,
    )
