"""Reports: sensitivity tables, purchase orders, frontier plots, HTML and XLSX.

Pure functions from plain data (the :class:`~solver.analyses.report_analysis.Analysis`
that :func:`~solver.analyses.report_analysis.build_analysis` returns: a verified plan, its
sensitivity report, sweep points) to text or bytes; they run no analysis, and the CLI
writes what they make to files.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from solver.analyses.report_analysis import Analysis
from solver.analyses.sensitivity.results import BreakEven, Dual, SensitivityReport, SweepPoint
from solver.money import whole_usd
from solver.outputs import live_workbook as lw
from solver.outputs.architecture_text import architecture_sentences
from solver.outputs.files import PERCENT_FORMAT, TONNES_FORMAT, USD_FORMAT, workbook
from solver.outputs.html_tables import table_html
from solver.outputs.live_workbook import INPUTS, inputs_formats, inputs_frame, subtotals
from solver.outputs.loss_cost_text import loss_cost_lines
from solver.outputs.orders import purchase_orders
from solver.outputs.report_sweep_views import SWEEPS as SWEEPS
from solver.outputs.report_sweep_views import frontier_png as frontier_png
from solver.outputs.report_sweep_views import sweep_frame, sweep_note, sweep_table
from solver.outputs.scenario_spread import histogram_png, scenario_frame, total_percentiles
from solver.outputs.sensitivity_views import (
    ENTERING_TOP,
    about_the_plan,
    entering,
    leaving,
    lp_cuts,
    plan_pools,
    shown_duals,
)
from solver.outputs.text import (
    binding_sentence,
    fleet_lines,
    hardware_sentences,
    training_sentences,
)
from solver.outputs.two_stage import (
    two_stage_distribution,
    two_stage_frame,
    two_stage_html,
    two_stage_summary_rows,
)
from solver.outputs.unit_costs_text import unit_cost_frame, unit_cost_lines
from solver.plan import Plan
from solver.plan.provenance import (
    NOT_STATED,
    line_age_days,
    spend_by_confidence,
    spend_by_price_age,
)


def analysis_json(analysis: Analysis) -> str:
    """``analysis.json``: the analysis as JSON (``two_stage`` only when there is one, so a
    problem without uncertainty gives the same file as before)."""
    exclude: set[str] = {"two_stage"} if analysis.two_stage is None else set()
    exclude |= set() if analysis.cut_at_time_limit else {"cut_at_time_limit"}
    dumped = analysis.model_dump(mode="json", exclude=exclude or None)
    return json.dumps(dumped, indent=2) + "\n"


# ------------------------------------------------------------------ tables


def duals_frame(report: SensitivityReport) -> pd.DataFrame:
    return pd.DataFrame([d.model_dump() for d in report.duals])


def break_even_frame(rows: Sequence[BreakEven]) -> pd.DataFrame:
    return pd.DataFrame([b.model_dump() for b in rows])


def points_frame(points: Sequence[SweepPoint]) -> pd.DataFrame:
    frame = pd.DataFrame([p.model_dump() for p in points])
    if not frame.empty:
        frame["used"] = frame["used"].map(lambda u: "; ".join(u))
    return frame


#: constraint families in words (the rest: the family's own description)
FAMILY_WORDS = {
    "demand": "demand",
    "demand_bucket": "demand of a traffic-mix bucket",
    "mix_capacity": "unit time (traffic mix)",
    "n_plus_1": "N+1 capacity",
    "n_plus_1_units": "two serving units (N+1)",
    "redundancy": "minimum serving units",
    "availability": "availability",
    "quota": "quota",
    "owned_capacity": "owned servers",
    "reserved_capacity": "reserved instances",
    "budget": "the budget",
    "capex_budget": "the capex budget",
    "period_budget": "the period budget",
    "carbon_cap": "the carbon cap",
    "provider_share": "the provider share",
    "power_cap": "the power cap",
    "scenario_cost_cap": "a scenario's cost cap",
    "max_changes": "the limit on changes",
}


def dual_name(d: Dual) -> str:
    """A shadow price's row in words with what it is about: 'N+1 capacity for
    chat-13b in m04-15, peak block'."""
    what = FAMILY_WORDS.get(d.family, d.meaning)
    if d.pool:
        what += f" of {d.pool}"
    if d.workload:
        what += f" for {d.workload}"
    if d.period:
        what += f" in {d.period}"
    if d.block:
        what += f", {d.block} block"
    return what


def _amount(value: float, unit: str) -> str:
    """``value`` in the unit of the objective (a dual's unit's first word): dollars to the
    cent below $1,000, whole dollars above; tonnes of CO2e to 4 significant digits."""
    if unit.startswith("tCO2e"):
        return f"{value:,.4g} t CO2e"
    if abs(value) >= 1000:
        return whole_usd(value)
    return f"{'-' if value < 0 else ''}${abs(value):,.2f}"


def dual_sentence(d: Dual) -> str:
    """A shadow price in words, named by its workload, period and block: 'N+1 capacity for
    chat-13b in m04-15, base block: one more token/s of capacity over the block costs
    $6.13, $0.39 per 1M tokens of capacity'."""
    per = d.unit.partition(" per ")[2] or "unit"
    per = per.replace("(token/s)", "token/s of capacity").replace("(request/s)", "request/s")
    if d.usd_per_mtoken is not None:
        return (
            f"{dual_name(d)}: one more {per} costs {_amount(d.d_objective_d_rhs, d.unit)}, "
            f"{_amount(d.usd_per_mtoken, d.unit)} per 1M tokens of capacity"
        )
    return f"{dual_name(d)}: one more {per} is worth {_amount(d.worth, d.unit)}"


def is_tie(b: BreakEven) -> bool:
    """A break-even row that is no price move: none found, or at (within 0.05% or half a
    cent of) today's price, a tie between interchangeable pools."""
    if b.break_even_price is None or b.change_pct is None:
        return True
    return abs(b.change_pct) < 0.05 or abs(b.break_even_price - b.current_price) < 0.005


def price_movers(report: SensitivityReport, plan: Plan | None = None, top: int = 3) -> list[str]:
    """What moves the plan most: the ``top`` smallest non-zero price moves that change the
    plan (break-even rows, ties left out, :func:`is_tie`), a pool in the plan named with
    the workloads and periods it serves there (from ``plan``)."""
    # a row that is no tie has a change (is_tie)
    rows = sorted(
        (b for b in report.break_even if not is_tie(b)), key=lambda b: abs(b.change_pct or 0.0)
    )
    return [break_even_sentence(b) + _serves(b, plan) for b in rows[:top]]


def _serves(b: BreakEven, plan: Plan | None) -> str:
    """'; in the plan it serves chat-13b in m04-15, m16-27': what a pool's class does in the
    plan."""
    if plan is None or not b.in_plan:
        return ""
    pools = {b.pool_id, *b.same_as}
    where: dict[str, list[str]] = {}
    for i in plan.line_items:
        if f"{i.offering}#{i.mode}" in pools and i.workload:
            periods = where.setdefault(i.workload, [])
            if i.period and i.period not in periods:
                periods.append(i.period)
    if not where:
        return ""
    parts = [f"{w} in {', '.join(p)}" if p else w for w, p in sorted(where.items())]
    return "; in the plan it serves " + " and ".join(parts)


def break_even_sentence(b: BreakEven) -> str:
    """'aws/us-east-1/p5.48xlarge (h100) on_demand enters the plan below $81.20/h (now
    $98.32, -17.4%)'; a class of interchangeable pools is one row ('and 11 more ...')."""
    unit = "/h" if "hour" in b.price_unit else " per server"
    accel = f" ({b.accelerator})" if b.accelerator else ""
    name = f"{b.offering}{accel} {b.mode}"
    if b.same_as:
        name += f" (and {len(b.same_as)} more at the same price and capacity)"
    if b.break_even_price is None:
        return f"{name}: no price change moves it ({b.note})"
    verb = "leaves the plan above" if b.in_plan else "enters the plan below"
    return (
        f"{name} {verb} ${b.break_even_price:,.2f}{unit} "
        f"(now ${b.current_price:,.2f}, {b.change_pct:+.1f}%)"
    )


def break_even_in_order(rows: Sequence[BreakEven]) -> list[BreakEven]:
    """Break-even rows, the price moves (smallest first) before the rows that are none."""
    moving = sorted((b for b in rows if not is_tie(b)), key=lambda b: abs(b.change_pct or 0.0))
    return moving + [b for b in rows if is_tie(b)]


def sensitivity_text(report: SensitivityReport, top: int = 25, used: set[str] | None = None) -> str:
    """The sensitivity report for people: shadow prices named by workload, period and
    block ($ per 1M tokens on serving capacity), none of a pool outside ``used`` (the
    plan's pools, :func:`solver.outputs.sensitivity_views.plan_pools`; None: every pool);
    then the break-even prices of the plan's pools, and the unused pools only as what
    would have to change for them to enter, a handful, one number each (the exact
    break-even where it was worked out, else the LP's hourly price cut)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(file=buffer, width=170, force_terminal=False, color_system=None)
    console.print(
        f"[bold]{escape(report.problem)}[/bold]: objective {report.objective_kind} = "
        f"{report.objective:,.2f}"
    )
    for w in report.warnings:  # said before the tables, as the plan's text does
        console.print(f"WARNING ({w.kind}, {w.field}): {w.detail}", markup=False)
    console.print(escape(report.caveat))
    table = Table(title="shadow prices of what the plan uses (largest first)", title_justify="left")
    table.add_column("what", min_width=20)
    for col in ("workload / pool", "period", "block", "worth of +1 unit", "$ per 1M tokens"):
        table.add_column(col, no_wrap=True)
    table.add_column("unit")
    shown = shown_duals(report, used)
    longest = max((len(d.constraint) for d in shown[:top]), default=10)
    table.add_column("constraint", no_wrap=True, min_width=min(longest, 60))
    for d in shown[:top]:
        table.add_row(
            FAMILY_WORDS.get(d.family, d.family),
            escape(d.workload or d.pool or ""),
            escape(d.period or ""),
            escape(d.block or ""),
            f"{d.worth:,.4g}",
            "" if d.usd_per_mtoken is None else f"${d.usd_per_mtoken:,.4f}",
            escape(d.unit),
            escape(d.constraint),  # 'n_plus_1[chat,1,0]' is not markup
        )
    console.print(table)
    nonzero = sum(1 for d in report.duals if abs(d.d_objective_d_rhs) > 1e-9)
    console.print(
        f"{len(report.duals) - nonzero} other constraints have a zero shadow price "
        "(they do not bind at this plan)"
        + (
            f"; {nonzero - len(shown)} rows of pools the plan does not use are left out "
            "(below: what would have to change for them to enter)"
            if nonzero > len(shown)
            else ""
        )
    )
    mine = leaving(report.break_even)
    if mine:
        console.print(
            "the plan's pools: the price at which each leaves the plan "
            f"({report.break_even_tolerance}):"
        )
        for b in mine[:top]:
            console.print("  " + escape(break_even_sentence(b)))
    enter = entering(report.break_even)
    cuts = lp_cuts(report, max(0, ENTERING_TOP - len(enter)))
    if enter or cuts:
        console.print(
            f"pools the plan does not use: what would have to change for one to enter "
            f"(the {ENTERING_TOP} closest):"
        )
        for b in enter:
            console.print("  " + escape(break_even_sentence(b)))
        for r in cuts:
            console.print(
                f"  {escape(r.option)} enters below an hourly price cut of "
                f"${r.price_cut_usd_per_hour:,.3f} (LP estimate, no exact break-even worked out)"
            )
    return buffer.getvalue()


# ------------------------------------------------------------------ price provenance


def provenance_frames(plan: Plan) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Spend by price confidence (strongest first) and by price age at the plan's start
    (youngest first, then unknown dates): ``cost_usd`` and ``share`` (a fraction)."""
    total = plan.total_cost_usd or 1.0
    frames = []
    for key, spend in (
        ("price confidence", spend_by_confidence(plan.line_items)),
        ("price age at the start", spend_by_price_age(plan)),
    ):
        frames.append(
            pd.DataFrame(
                {
                    key: list(spend),
                    "cost_usd": list(spend.values()),
                    "share": [v / total for v in spend.values()],
                }
            )
        )
    return frames[0], frames[1]


def weakest_prices(plan: Plan, top: int = 10) -> pd.DataFrame:
    """The prices the plan rests on that are neither list prices nor quotes, dearest first:
    offering, mode, confidence, date, age at the start, source, and the spend on them."""
    start = pd.Timestamp(plan.start_date).date() if plan.start_date else None
    rows: dict[tuple[str, str], dict] = {}
    for i in plan.line_items:
        if i.price_confidence in ("list", "quote") or not i.cost_usd:
            continue
        row = rows.setdefault(
            (i.offering, i.mode),
            {
                "offering": i.offering,
                "mode": i.mode,
                "price_confidence": i.price_confidence or NOT_STATED,
                "price_date": i.price_date,
                "age_days": line_age_days(i, start),
                "price_source": i.price_source,
                "cost_usd": 0.0,
            },
        )
        row["cost_usd"] += i.cost_usd
    frame = pd.DataFrame(list(rows.values()))
    if frame.empty:
        return frame
    return frame.sort_values(["cost_usd", "offering"], ascending=[False, True]).head(top)


def provenance_sentence(plan: Plan) -> str:
    """'96.8% of the spend rests on unverified prices; 56.7% on prices of unknown date.'"""
    total = plan.total_cost_usd or 1.0
    by_level = spend_by_confidence(plan.line_items)
    strong = sum(v for k, v in by_level.items() if k in ("list", "quote"))
    weak = by_level.get("unverified", 0.0)
    undated = spend_by_price_age(plan).get("date unknown", 0.0)
    return (
        f"{strong / total:.1%} of the spend rests on list prices or quotes, "
        f"{weak / total:.1%} on unverified prices; {undated / total:.1%} on prices of "
        "unknown date."
    )


# ------------------------------------------------------------------ HTML and XLSX


def cost_by_month_png(plan: Plan) -> bytes:
    """Stacked monthly cost (rented, owned opex, commitments, capex) with a $ axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    months = [m.month for m in plan.cash_flow]
    fig, ax = plt.subplots(figsize=(10, 3.4))
    bottom = np.zeros(len(months))
    for field, label, color in (
        ("rented_usd", "rented", "#4472c4"),
        ("owned_opex_usd", "owned opex", "#70ad47"),
        ("commitments_usd", "commitments", "#ffc000"),
        ("capex_usd", "capex", "#c00000"),
    ):
        values = np.array([getattr(m, field) for m in plan.cash_flow])
        if values.any():
            ax.bar(months, values, bottom=bottom, label=label, color=color)
            bottom += values
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:,.0f}"))
    ax.set_ylabel("cost per month")
    step = max(1, len(months) // 12)
    ax.set_xticks(range(0, len(months), step), months[::step], rotation=45, ha="right")
    ax.legend(loc="upper right")
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


#: The line-item columns the report adds when a line is priced in another currency than USD.
FOREIGN_PRICE_COLUMNS = (
    "price_currency",
    "cost_in_price_currency",
    "exchange_rate_usd_per_unit",
    "exchange_rate_date",
)


def _plan_by_workload(plan: Plan) -> list[tuple[str, str, float]]:
    """Per workload: its name, its line items as an HTML table (training lines with their
    MFU and slack) and its cost."""
    items = pd.DataFrame([i.model_dump() for i in plan.line_items])
    cols = ["period", "block", "provider", "tier", "sla", "region", "item", "instance_type"]
    cols += ["accelerator", "mode", "units", "hours", "cost_usd", "co2e_t"]
    cols += ["price_confidence", "price_date"]
    # a line priced in another currency: its code, its cost in it and the rate applied
    cols += [c for c in FOREIGN_PRICE_COLUMNS if c in items.columns and items[c].notna().any()]
    training_cols = ["mfu", "mfu_low", "mfu_high", "slack_fraction"]
    out: list[tuple[str, str, float]] = []
    if items.empty:
        return out
    items["workload"] = items["workload"].replace("", "(shared: reservations, purchases)")
    for name, rows in items.groupby("workload", sort=True):
        shown = cols + (training_cols if (rows["item"] == "training").any() else [])
        table = table_html(rows[shown], money=["cost_usd"], percent=["slack_fraction"])
        out.append((str(name), table, float(rows["cost_usd"].sum())))
    return out


def _quarters(plan: Plan) -> tuple[pd.DataFrame, list[str]]:
    """The cash flow by quarter, and its money columns."""
    quarters = pd.DataFrame(
        [
            {
                "quarter": f"{m.month[:4]}-Q{(int(m.month[5:]) - 1) // 3 + 1}",
                "rented_usd": m.rented_usd,
                "owned_opex_usd": m.owned_opex_usd,
                "commitments_usd": m.commitments_usd,
                "capex_usd": m.capex_usd,
                "total_usd": m.total_usd,
            }
            for m in plan.cash_flow
        ]
    )
    money = ["rented_usd", "owned_opex_usd", "commitments_usd", "capex_usd", "total_usd"]
    if not quarters.empty:
        quarters = quarters.groupby("quarter", sort=True)[money].sum().reset_index()
    return quarters, money


def report_html(analysis: Analysis, png: bytes, replay: str = "") -> str:
    """A self-contained HTML page, finance first (template ``templates/report.html.j2``):
    summary in words and numbers, cost by month, capex and opex, commitments, the plan by
    workload (serving deployments first) and ``replay`` beside it (:mod:`.replay_html`),
    then the sensitivity in words and the frontiers (plots embedded)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    plan, sens = analysis.plan, analysis.sensitivity
    budget = analysis.budget_usd
    capex = sum(m.capex_usd for m in plan.cash_flow)
    by_workload = _plan_by_workload(plan)
    duals = shown_duals(sens, plan_pools(plan))
    movers = price_movers(sens, plan, top=3)
    movers += [dual_sentence(d) for d in duals[: max(0, 3 - len(movers))]]
    carbon = next((d for d in duals if d.family == "carbon"), None)
    quarters, money = _quarters(plan)
    spend = f"The plan costs {whole_usd(plan.total_cost_usd)}"
    if budget is not None:
        spend += (
            f", {plan.total_cost_usd / budget:.0%} of the {whole_usd(budget)} budget, leaving "
            f"{whole_usd(budget - plan.total_cost_usd)}"
        )
    spend += (
        f"; {whole_usd(capex)} of it is capex and {whole_usd(plan.total_cost_usd - capex)} opex."
    )
    binds = "; ".join(binding_sentence(b) for b in plan.binding[:5]) or (
        "no budget, carbon, availability, quota or share limit: demand and prices decide"
    )
    env = Environment(
        loader=PackageLoader("solver.outputs", "templates"), autoescape=select_autoescape(["j2"])
    )
    by_confidence, by_age = provenance_frames(plan)
    return env.get_template("report.html.j2").render(
        plan=plan,
        provenance_sentence=provenance_sentence(plan),
        by_confidence=table_html(by_confidence, money=["cost_usd"], percent=["share"]),
        by_age=table_html(by_age, money=["cost_usd"], percent=["share"]),
        weakest=table_html(weakest_prices(plan), money=["cost_usd"]),
        cost_lines=table_html(cost_lines_frame(plan), money=["cost_usd"]),
        gap="n/a" if plan.gap is None else f"{plan.gap:.4%}",
        usd=whole_usd,
        pct=lambda v: f"{v:.0%}",
        budget=budget,
        capex=capex,
        spend_sentence=spend,
        binds_sentence=binds,
        hardware_sentences=hardware_sentences(plan.compile_report),
        training_sentences=training_sentences(plan),
        fleet_sentences=fleet_lines(plan),
        architecture_sentences=architecture_sentences(plan),
        assumptions=table_html(assumptions_frame(plan, settings=False)),
        settings=table_html(assumptions_frame(plan, settings=True)),
        carbon_sentence=dual_sentence(carbon) if carbon is not None else "",
        unit_kpis=[
            u
            for u in plan.unit_costs or []
            if u.scope == "workload" and u.usd_per_1m_output_tokens is not None
        ],
        unit_cost_lines=unit_cost_lines(plan),
        loss_cost_lines=loss_cost_lines(plan),
        movers=movers,
        monthly_png=base64.b64encode(cost_by_month_png(plan)).decode("ascii")
        if plan.cash_flow
        else "",
        quarters=table_html(quarters, money=money),
        capex_opex=table_html(
            pd.DataFrame(
                {
                    "kind": ["capex (servers bought)", "commitments", "rented", "owned opex"],
                    "cost_usd": [
                        capex,
                        sum(m.commitments_usd for m in plan.cash_flow),
                        sum(m.rented_usd for m in plan.cash_flow),
                        sum(m.owned_opex_usd for m in plan.cash_flow),
                    ],
                }
            ),
            money=["cost_usd"],
        ),
        commitments=[(m.month, t) for m in plan.cash_flow for t in m.new_commitments],
        by_workload=by_workload,
        replay=replay,
        two_stage=two_stage_html(analysis.two_stage),
        caveat=sens.caveat,
        cut_note=(
            "Stopped at the time limit: left out, not started before its deadline: "
            + ", ".join(analysis.cut_at_time_limit)
            + " (give the report more time, --time-limit S, for them)."
            if analysis.cut_at_time_limit
            else ""
        ),
        dual_sentences=[dual_sentence(d) for d in duals[:15]],
        break_even_note=sens.break_even_tolerance,
        break_even=[break_even_sentence(b) for b in leaving(sens.break_even)],
        entering=[break_even_sentence(b) for b in entering(sens.break_even)],
        frontier_png=base64.b64encode(png).decode("ascii"),
        sweep_note=sweep_note(analysis),
        carbon_table=table_html(sweep_table(analysis.carbon_frontier)),
        budget_table=table_html(sweep_table(analysis.budget_sweep)),
        demand_table=table_html(sweep_table(analysis.demand_sweep)),
        scenarios=analysis.scenarios,
        scenario_pcts=total_percentiles(analysis.scenario_points),
        scenario_png=base64.b64encode(histogram_png(analysis.scenario_points)).decode("ascii"),
        spread=analysis.scenario_spread,
        share_table=table_html(
            pd.DataFrame(
                {
                    "pool": list(analysis.scenario_share),
                    "share": list(analysis.scenario_share.values()),
                }
            ),
            percent=["share"],
        ),
    )


def cost_lines_frame(plan: Plan) -> pd.DataFrame:
    """The plan's costs beside compute: category, provider, cost_usd and how each is
    worked out (basis, source)."""
    return pd.DataFrame(
        [
            {
                "category": c.category,
                "provider": c.provider,
                "cost_usd": c.cost_usd,
                "basis": c.basis,
                "source": c.source,
            }
            for c in plan.cost_lines
        ],
        columns=["category", "provider", "cost_usd", "basis", "source"],
    )


def assumptions_frame(plan: Plan, *, settings: bool) -> pd.DataFrame:
    """The plan's assumptions (MFU, serving efficiencies, assumed caps, tiers and SLAs) or,
    with ``settings``, the settings that decided it, one row each."""
    rows = [a for a in plan.assumptions if (a.kind == "default") == settings]
    if settings:
        return pd.DataFrame(
            {
                "setting": [a.name for a in rows],
                "workload": [a.workload or "(problem)" for a in rows],
                "value": [_cell(a.value) for a in rows],
                "set by": [a.basis for a in rows],
                "meaning": [a.source for a in rows],
            }
        )
    return pd.DataFrame(
        {
            "what": [a.kind for a in rows],
            "applies to": [" ".join(x for x in (a.workload, a.subject) if x) for a in rows],
            "name": [a.name for a in rows],
            "value": [_cell(a.value) + (f" {a.unit}" if a.unit else "") for a in rows],
            "band": [
                f"{a.low:.3g}-{a.high:.3g}" if a.low is not None and a.high is not None else ""
                for a in rows
            ],
            "basis": [a.basis for a in rows],
            "binds": ["yes" if a.binds else "" for a in rows],
            "source": [a.source for a in rows],
        }
    )


def _cell(value: object) -> str:
    """A setting's value as a table cell: lists joined, floats to 4 digits, unset shown."""
    if value is None:
        return "(unset)"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "(none)"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def summary_frame(plan: Plan, budget_usd: float | None) -> pd.DataFrame:
    """The workbook's first sheet: the headline figures, one per row (the unit in the
    label: (USD), (t), (share))."""
    capex, held = sum(m.capex_usd for m in plan.cash_flow), lw.budget_held_usd(plan)
    rows = [
        ("plan", plan.problem),
        ("status", f"{plan.status}, verified={str(plan.verified).lower()}"),
        ("first month", plan.start_date or ""),
        *lw.all_in_rows(plan),
        ("total cost (USD)", plan.total_cost_usd),
        ("budget (USD)", budget_usd),
        ("budget headroom (USD)", None if budget_usd is None else budget_usd - held),
        ("share of the budget used (share)", None if not budget_usd else held / budget_usd),
        ("capex (USD)", capex),
        ("opex and commitments (USD)", plan.total_cost_usd - capex),
        ("total CO2e (t)", plan.total_co2e_t),
        ("net present value (USD)", plan.npv_usd),
    ]  # fmt: skip
    for w in plan.warnings:  # what the plan did not ask for, as the HTML says it
        rows.append((f"WARNING ({w.kind}, {w.field})", w.detail))
        if w.alternative_cost_usd is not None:
            rows.append((f"{w.kind}: cost with it lifted (USD)", w.alternative_cost_usd))
    if plan.in_currency is not None:
        view = plan.in_currency
        rows.append((f"total cost in {view.currency} ({view.usd_per_unit:g} USD each, "
                     f"{view.rate_date})", view.total_cost))  # fmt: skip
    for r in plan.exchange_rates:
        rows.append((f"spend priced in {r.currency} ({r.usd_per_unit:g} USD each, "
                     f"{r.rate_date}; {r.rate_source})", r.cost))  # fmt: skip
    by_confidence, by_age = provenance_frames(plan)
    rows += [
        (f"spend on {k} prices (USD)", v)
        for k, v in zip(by_confidence.iloc[:, 0], by_confidence["cost_usd"], strict=True)
    ]
    rows += [(f"spend on prices {k} old at the start (USD)"
              if k != "date unknown" else "spend on prices of unknown date (USD)", v)
             for k, v in zip(by_age.iloc[:, 0], by_age["cost_usd"], strict=True)]  # fmt: skip
    return pd.DataFrame(rows, columns=["what", "value"])


def summary_formats(summary: pd.DataFrame) -> list[str | None]:
    """The summary's value formats, row by row, from the unit in each label."""
    by_unit = {"(USD)": USD_FORMAT, "(t)": TONNES_FORMAT, "(share)": PERCENT_FORMAT}
    return [
        next((f for unit, f in by_unit.items() if str(what).endswith(unit)), None)
        for what in summary["what"]
    ]


def break_even_sheet(rows: Sequence[BreakEven]) -> pd.DataFrame:
    """The break-even sheet: the JSON rows, the smallest price moves first, with the move
    as a fraction (``change``, under a percent format) instead of percent points."""
    frame = break_even_frame(break_even_in_order(rows))
    if frame.empty:
        return frame
    at = list(frame.columns).index("change_pct")
    frame.insert(at, "change", frame.pop("change_pct") / 100.0)
    frame["same_as"] = frame["same_as"].map("; ".join)
    return frame


#: the monthly sheet's columns beside compute, totalled below it
MONTH_CATEGORIES = (
    "storage_usd",
    "egress_usd",
    "support_usd",
    "staff_usd",
    "tax_usd",
    "contingency_usd",
    "all_in_usd",
)


def report_xlsx(analysis: Analysis) -> bytes:
    """The workbook: summary and monthly cash flow first, then the plan, purchase orders,
    sensitivity, break-even prices and the frontier. Money in currency on every sheet,
    percentages stored as fractions, hours to a tenth (:func:`solver.outputs.files.workbook`);
    totals below the data of the monthly cash flow, the plan and the purchase plan."""
    plan, sens = analysis.plan, analysis.sensitivity
    items = pd.DataFrame([i.model_dump() for i in plan.line_items])
    items = items.drop(columns=["bucket_requests_per_s", "cost_by_period_usd"], errors="ignore")
    orders = purchase_orders(plan)
    frontier = sweep_frame(
        [*analysis.carbon_frontier, *analysis.budget_sweep, *analysis.demand_sweep]
    )
    monthly = pd.DataFrame([m.model_dump() for m in plan.cash_flow])
    if not monthly.empty:
        monthly["new_commitments"] = monthly["new_commitments"].map("; ".join)
    summary = summary_frame(plan, analysis.budget_usd)
    extra: list[tuple[str, float | None]] = [
        (f"price scenarios: {name} of the total (USD)", value)
        for name, value in total_percentiles(analysis.scenario_points).items()
    ]
    extra += [
        (f"{u.workload}: per 1M output tokens (USD)", u.usd_per_1m_output_tokens)
        for u in plan.unit_costs or []
        if u.scope == "workload"
    ]
    if extra:
        summary = pd.concat(
            [summary, pd.DataFrame(extra, columns=["what", "value"])], ignore_index=True
        )
    if analysis.two_stage is not None:
        summary = pd.concat(
            [summary, pd.DataFrame(two_stage_summary_rows(analysis.two_stage),
                                   columns=["what", "value"])],
            ignore_index=True,
        )  # fmt: skip
    duals = pd.DataFrame([d.model_dump() for d in about_the_plan(sens.duals, plan_pools(plan))])
    if not duals.empty:  # the row's names first: what, for whom, when
        first = ["constraint", "family", "workload", "period", "block", "pool"]
        duals = duals[first + [c for c in duals.columns if c not in first]]
    plan_columns = [str(c) for c in items.columns]
    inputs = inputs_frame(plan)
    subtotal_frame, subtotal_formulas = subtotals(plan, plan_columns)
    sheets = {
        "summary": summary,
        "monthly": monthly if not monthly.empty else pd.DataFrame({"month": []}),
        INPUTS: inputs,
        "plan": items,
        **lw.beside_sheet(plan),
        "subtotals": subtotal_frame,
        "purchase plan": orders if not orders.empty else pd.DataFrame({"provider": []}),
        "sensitivity": duals,
        "break-even": break_even_sheet(sens.break_even),
        "frontier": frontier,
    }
    if plan.unit_costs:
        sheets["unit costs"] = unit_cost_frame(plan)
    if analysis.scenario_points:
        sheets["price scenarios"] = scenario_frame(analysis.scenario_points)
    if analysis.two_stage is not None:
        sheets["two-stage"] = two_stage_frame(analysis.two_stage)
        sheets["two-stage distribution"] = two_stage_distribution(analysis.two_stage)
    money = ["rented_usd", "owned_opex_usd", "commitments_usd", "capex_usd", "total_usd"]
    totals = {
        "monthly": [*money, *MONTH_CATEGORIES, "billed_usd"],
        "plan": ["cost_usd", "co2e_t"],
        **lw.beside_totals(plan),
        "purchase plan": ["cost_usd"],
    }
    formats: dict[str, dict[str, str | list[str | None]]] = {
        "summary": {"value": summary_formats(summary)},
        "break-even": {"change": PERCENT_FORMAT},
        INPUTS: inputs_formats(inputs),
    }
    formulas = lw.live_formulas(plan, plan_columns, summary, subtotal_formulas)
    return workbook(sheets, totals, formats, formulas)
