"""Plain text for people: the plan table, the two-stage plan, the diff, what a re-solve
carried over, a price update, a calibration.

Pure functions from the data the analyses return to ``str``; ``procure`` prints them or
writes them (:mod:`solver.outputs.files`). Markdown is in :mod:`solver.outputs.markdown`.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import pandas as pd

from solver.inputs.hardware import VENDOR_HARDWARE
from solver.inputs.prices import OWNED
from solver.inputs.prices import isnan as _isnan
from solver.money import usd, whole_usd
from solver.outputs.architecture_text import architecture_line, architecture_sentences
from solver.outputs.files import csv_text, money_rounded
from solver.outputs.grid import Page, Table, escape
from solver.outputs.loss_cost_text import loss_cost_lines
from solver.outputs.unit_costs_text import unit_cost_lines
from solver.plan.provenance import spend_by_confidence, spend_by_price_age

if TYPE_CHECKING:  # the types only: printing a plan loads no analysis
    from solver.analyses.calibrate import Calibration
    from solver.analyses.diff import ItemChange, PlanDiff
    from solver.analyses.resolve import Rebased
    from solver.analyses.stochastic import StochasticPlan
    from solver.inputs.prices import PriceReport
    from solver.plan import Plan

# --------------------------------------------------------------------------- plan


def signed_usd(value_usd: float) -> str:
    """A change of money in USD with its sign, to the cent: ``+$1,234.50``, ``-$80.00``."""
    return usd(value_usd, signed=True)


#: The plan table's short names of price confidence levels (the JSON has the full words).
CONFIDENCE_ABBREVIATION = {"third_party": "3rd", "unverified": "unver."}


def price_cell(item) -> str:
    """A line's price provenance in one short cell: its confidence and date, '?' unknown
    (``3rd 2026-05-20``, ``unver. ?``, ``list 2026-10-10``)."""
    level = CONFIDENCE_ABBREVIATION.get(item.price_confidence, item.price_confidence or "-")
    when = "?" if item.price_date in ("", "unknown") else item.price_date
    foreign = f" {item.price_currency}" if item.price_currency not in ("", "USD") else ""
    if foreign and item.cost_in_price_currency is not None:
        foreign += f" {item.cost_in_price_currency:,.0f}"
    if foreign and item.exchange_rate_usd_per_unit is not None:
        foreign += f" @{item.exchange_rate_usd_per_unit:g} ({item.exchange_rate_date})"
    return f"{level} {when}{foreign}"


def exchange_rate_lines(plan: Plan) -> list[str]:
    """The exchange rates the plan's prices were converted to USD at, in words: per
    currency the rate, its date and source, and the spend priced in it (both currencies)."""
    return [
        f"prices in {r.currency}: {r.cost:,.0f} {r.currency} = ${r.cost_usd:,.0f} at "
        f"{r.usd_per_unit:g} USD per {r.currency} ({r.rate_date}; {r.rate_source})"
        for r in plan.exchange_rates
    ]


def price_provenance_lines(plan: Plan) -> list[str]:
    """What the plan's money rests on, in words: spend by price confidence and by price age
    at the start, the exchange rates its prices were converted at, and its totals in the
    problem's currency."""
    total = plan.total_cost_usd or 1.0
    by_level = spend_by_confidence(plan.line_items)
    by_age = spend_by_price_age(plan)
    lines = [
        "prices the plan rests on, by confidence: "
        + ", ".join(f"{k} ${v:,.0f} ({v / total:.0%})" for k, v in by_level.items()),
        f"  by age at the start ({plan.start_date}): "
        + ", ".join(f"{k} ${v:,.0f} ({v / total:.0%})" for k, v in by_age.items()),
    ]
    lines += exchange_rate_lines(plan)
    view = plan.in_currency
    if view is not None:
        lines.append(
            f"in {view.currency}: total {view.total_cost:,.0f} {view.currency} at "
            f"{view.usd_per_unit:g} USD per {view.currency} ({view.rate_date}; every figure "
            "above is in USD)"
            + (f"; budget {view.budget:,.0f} {view.currency}" if view.budget is not None else "")
        )
    return lines


def cash_flow_table(plan: Plan) -> Table:
    """The plan's cash flow by calendar quarter (the JSON has it by month)."""
    quarters: dict[str, list] = {}
    for m in plan.cash_flow:
        year, month = m.month.split("-")
        quarters.setdefault(f"{year}-Q{(int(month) - 1) // 3 + 1}", []).append(m)
    table = Table(
        title=f"cash flow by quarter from {plan.start_date} (USD)",
        title_justify="left",
    )
    fields = ["rented_usd", "owned_opex_usd", "commitments_usd", "capex_usd", "total_usd"]
    columns = ["quarter", "rented", "owned opex", "commitments", "capex", "total"]
    if plan.cost_lines:  # the costs beside compute, then everything
        columns[-1] = "compute"
        columns += ["beside compute", "all in"]
        fields += ["beside_usd", "all_in_usd"]
    for column in columns:
        table.add_column(column, justify="left" if column == "quarter" else "right")
    table.add_column("cumulative", justify="right")
    budgeted = plan.cash_flow[0].budget_headroom_usd is not None
    if budgeted:
        table.add_column("budget headroom", justify="right")
    for name, months in quarters.items():
        sums = [
            sum(
                (m.all_in_usd or 0.0) - m.total_usd if f == "beside_usd" else getattr(m, f)
                for m in months
            )
            for f in fields
        ]
        cells = [name, *(f"{v:,.0f}" for v in sums), f"{months[-1].cumulative_usd:,.0f}"]
        if budgeted:
            cells.append(f"{months[-1].budget_headroom_usd:,.0f}")
        table.add_row(*cells)
    return table


def _period_table(plan: Plan, period: str, rows: list) -> Table:
    """One period's line items, grouped by provider."""
    table = Table(
        title=f"period {period}  (${plan.totals.by_period[period]:,.0f})",
        title_justify="left",
    )
    for col, justify in [
        ("provider (tier)", "left"),
        ("region", "left"),
        ("what", "left"),
        ("accelerator", "left"),
        ("mode", "left"),
        ("units", "right"),
        ("GPUs", "right"),
        ("tok/s (source)", "right"),
        ("workload", "left"),
        ("block", "left"),
        ("hours", "right"),
        ("cost $", "right"),
        ("tCO2e", "right"),
        ("price as of", "left"),
    ]:
        table.add_column(col, justify=justify)
    last_provider = None
    for i in sorted(rows, key=lambda r: (r.provider, r.region, r.offering, r.item)):
        table.add_row(
            f"{i.provider}\n({i.tier})" if i.provider != last_provider else "",
            i.region,
            f"{i.item}: {i.instance_type}",
            i.accelerator,
            i.mode,
            f"{i.units:g}",
            f"{i.accelerators:g}",
            f"{i.capacity_tokens_per_s:,.0f} ({i.capacity_source})" if i.capacity_source else "",
            i.workload,
            i.block,
            f"{i.hours:,.0f}",
            f"{i.cost_usd:,.0f}",
            f"{i.co2e_t:,.2f}",
            price_cell(i),
        )
        last_provider = i.provider
    return table


def hardware_sentences(compile_report: dict) -> list[str]:
    """What each workload's accelerator and vendor lists and runtime left out, one
    sentence per list: ``runtime vllm-cuda (chat): 1,089 options on non-NVIDIA hardware
    left out``. An option is one (offering or server at a site, mode) for the workload;
    one left out by an earlier list is not counted again."""
    out = []
    for workload, notes in compile_report.get("hardware", {}).items():
        for note in notes:
            values, n = note["values"], note["options_left_out"]
            listed = f"{note['list']} [{', '.join(values)}]"
            options = f"{n:,} option" + ("" if n == 1 else "s")
            if note["list"] == "runtime":
                vendor = str(note.get("vendor"))
                hardware = VENDOR_HARDWARE.get(vendor, vendor)
                out.append(
                    f"runtime {values[0]} ({workload}): {options} on non-{hardware} "
                    "hardware left out"
                )
            elif note["list"] == "accelerators":
                out.append(f"{listed} ({workload}): {options} on other accelerators left out")
            elif note["list"] == "vendors":
                out.append(f"{listed} ({workload}): {options} of other vendors left out")
            else:
                out.append(f"{listed} ({workload}): {options} left out")
    return out


def headline(plan: Plan) -> str:
    """The plan's money in one line: the all-in total with compute and each category
    beside it (``total cost`` compute alone when the plan carries no cost lines)."""
    if plan.all_in_cost_usd is None or not plan.cost_lines:
        return f"total cost ${plan.total_cost_usd:,.0f}"
    by: dict[str, float] = {}
    for c in plan.cost_lines:
        by[c.category] = by.get(c.category, 0.0) + c.cost_usd
    parts = ", ".join(f"{k} ${v:,.0f}" for k, v in by.items())
    return (
        f"total cost ${plan.all_in_cost_usd:,.0f} all in: compute ${plan.total_cost_usd:,.0f}, "
        + parts
    )


def cost_lines_text(plan: Plan) -> list[str]:
    """The costs beside compute, the all-in total and what the plan leaves out (Not
    included)."""
    out = []
    if plan.cost_lines:
        out.append(f"all in ${plan.all_in_cost_usd:,.2f}: compute ${plan.total_cost_usd:,.2f} and")
        out += [
            f"  {c.category} {c.provider}".rstrip() + f" ${c.cost_usd:,.2f}: {c.basis}"
            for c in plan.cost_lines
        ]
        if plan.budget_basis:
            out.append(f"the budget held them as {plan.budget_basis}")
    if plan.not_included:
        out.append("Not included:")
        out += [f"  - {s}" for s in plan.not_included]
    return out


def plan_table(plan: Plan) -> str:
    """The plan for people: grouped by period and provider, totals, what binds."""
    console = Page(width=170)
    gap = "n/a" if plan.gap is None else f"{plan.gap:.4%}"
    console.print(
        f"[bold]{plan.problem}[/bold]: {plan.status} (objective {plan.objective_kind}), "
        f"verified={str(plan.verified).lower()}, solver {plan.solver}, gap {gap}, "
        f"compile {plan.compile_seconds:.2f} s, solve {plan.solve_seconds:.2f} s"
    )
    if plan.status != "optimal":
        console.print(
            f"stopped at a limit: the best plan found, NOT proven optimal (gap {gap}); "
            "give the solver more time (--time-limit) to prove it"
        )
    console.print(headline(plan) + f"   total CO2e {plan.total_co2e_t:,.1f} t")
    if plan.guarded_total_usd is not None:  # the price guard (docs/concepts/price-guard.md)
        console.print(
            f"at catalog prices ${plan.total_cost_usd:,.0f}, at guarded prices "
            f"${plan.guarded_total_usd:,.0f} (price_guard {plan.price_guard}: each price at "
            "the top of its confidence's band; the plan was chosen on these)"
        )
    for w in plan.warnings:  # said before the tables: what the plan did not ask for
        console.print(f"WARNING ({w.kind}, {w.field}): {w.detail}", markup=False)
    if plan.in_currency is not None:
        view = plan.in_currency
        console.print(
            f"total cost {view.total_cost:,.0f} {view.currency} (at {view.usd_per_unit:g} USD "
            f"per {view.currency}, {view.rate_date}); the tables below are in USD"
        )
    for line in cost_lines_text(plan):
        console.print(line)
    for line in unit_cost_lines(plan) + loss_cost_lines(plan):
        console.print(line, markup=False)
    if plan.cash_flow:
        console.print(cash_flow_table(plan))
    for period in plan.totals.by_period:
        rows = [i for i in plan.line_items if i.period == period]
        if rows:
            console.print(_period_table(plan, period, rows))
    totals = Table(title="totals", title_justify="left")
    totals.add_column("by")
    totals.add_column("key")
    totals.add_column("cost $", justify="right")
    for label, mapping in [
        ("provider", plan.totals.by_provider),
        ("mode", plan.totals.by_mode),
        ("workload", plan.totals.by_workload),
    ]:
        for key, value in mapping.items():
            totals.add_row(label, key, f"{value:,.0f}")
    console.print(totals)
    for line in price_provenance_lines(plan):
        console.print(line)
    console.print(
        "price as of: the confidence of the price a line rests on (quote, list, 3rd = "
        "third_party, unver. = unverified) and its date (? = unknown), then for a price in "
        "another currency its code, the line's cost in it and @ the rate (USD per unit, its "
        "date); the JSON gives price_date, price_source, price_confidence, price_currency, "
        "cost_in_price_currency, exchange_rate_usd_per_unit, exchange_rate_date"
    )
    past = [i for i in plan.line_items if i.item == "reservation" and i.months_after_horizon > 0]
    if past:
        console.print(
            "commitments running past the horizon: "
            + "; ".join(
                f"{i.units:g} x {i.offering} {i.mode} from {i.start_period}, term ends month "
                f"{i.term_end_month:g}: {i.months_after_horizon:g} months and "
                f"${i.liability_after_horizon_usd:,.0f} still owed after the horizon"
                for i in past
            )
            + f" (total ${sum(i.liability_after_horizon_usd for i in past):,.0f})"
        )
    if plan.owned_utilisation:
        console.print(
            "owned fleet utilisation: "
            + ", ".join(f"{k} {v:.0%}" for k, v in plan.owned_utilisation.items())
        )
    if plan.binding:
        console.print(
            "binds: " + "; ".join(binding_sentence(b) for b in plan.binding), markup=False
        )
    else:
        console.print(
            "binds: no budget, carbon, availability, quota or share limit binds; "
            "the plan is driven by demand and prices"
        )
    for line in fleet_lines(plan):
        console.print(line)
    for line in training_sentences(plan):
        console.print(line, markup=False)
    rep = plan.compile_report
    for sentence in hardware_sentences(rep):
        console.print(f"note: {sentence}", markup=False)  # [h100-sxm] is not markup
    for line in _capacity_notes(rep):
        console.print(line)
    compared = architecture_line(plan)
    if compared:
        console.print(compared)
    for sentence in architecture_sentences(plan)[: -1 if compared else None]:
        console.print(sentence, markup=False)
    console.print(
        f"options: {rep.get('options_generated', 0)} generated, {rep.get('options_kept', 0)} "
        f"kept from {rep.get('pools', 0)} pools; verifier: "
        f"{sum(c.ok for c in plan.checks)}/{len(plan.checks)} checks passed"
    )
    for table in assumption_tables(plan):
        console.print(table)
    return console.text()


def _capacity_notes(rep: dict) -> list[str]:
    """The compile report's calibration and load-curve notes under a plan's table."""
    lines: list[str] = []
    for workload, fit in rep.get("calibration", {}).items():
        lines.append(
            f"capacity: {workload}: cards without a profile are physics x {fit['factor']:.3f} "
            f"(calibrated: geometric mean of measured / physics over {fit['points']} points on "
            f"{', '.join(fit['measured_on'])}; worst point off by "
            f"x{math.exp(fit['spread_log_ratio']):.2f})"
        )
    curve = rep.get("load_curve") or {}
    if curve.get("blocks"):
        blocks = ", ".join(f"{b['name']} {b['hours_per_day']:g} h" for b in curve["blocks"])
        factors = "; ".join(
            f"{w} " + "/".join(f"{x:.2f}" for x in f) for w, f in curve["factors"].items()
        )
        lines.append(
            f"load curve: blocks {blocks} ({curve['source']}); demand factors, x the daily "
            f"average (profiles normalised to mean 1): {factors}"
        )
    return lines


def binding_sentence(b) -> str:
    """One binding row: its name and meaning; an availability cap names its offering, the
    cap and whether the figure is assumed (catalogs/SOURCES.md) or the problem's."""
    text = f"{b.name} ({b.description})"
    if b.family == "availability" and b.offering:
        basis = {
            "assumed": "an assumed figure, not a published one (availability_caps: in the "
            "problem sets your own)",
            "listed": "listings counted in the catalog's price snapshot",
            "problem": "the problem's availability_caps",
        }.get(b.limit_basis, b.limit_basis)
        text += f": {b.offering} {b.mode} held at its cap of {b.limit:g} units, {basis}"
    return text


def _fraction(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def training_sentences(plan: Plan) -> list[str]:
    """Per training line: the cluster, the MFU it is sized at with its band and source, the
    schedule's slack, and what the point MFU would have needed of the same offering."""
    out = []
    seen = set()
    for i in plan.line_items:
        if i.item != "training" or i.mfu is None or (i.workload, i.offering) in seen:
            continue
        seen.add((i.workload, i.offering))
        margin = i.training_margin
        at = (
            "the low end of its band"
            if margin == "low" and i.mfu_low != i.mfu_point
            else "its point figure"
            if margin in ("low", "point")
            else f"{margin} x its point figure"
        )
        line = (
            f"training {i.workload}: {i.units:g} x {i.offering} ({i.accelerators:g} "
            f"{i.accelerator}), {i.job_hours:,.0f} h of a {i.window_hours:,.0f} h window, "
            f"slack {i.slack_fraction:.1%}, at MFU {i.mfu:.3g}, {at} "
            f"{_fraction(i.mfu_low)}-{_fraction(i.mfu_high)} (training_margin {margin}; point "
            f"{_fraction(i.mfu_point)}: {i.mfu_source})"
        )
        point_units = i.units_at_point_mfu
        if point_units is not None and point_units != i.units and i.mfu != i.mfu_point:
            line += (
                f"; at the point MFU {point_units:g} units would finish in the window"
                if point_units
                else "; at the point MFU no cluster of this offering finishes in the window"
            )
            if point_units:
                line += (
                    f": the margin adds {i.units - point_units:g} "
                    f"unit{'s' if i.units - point_units != 1 else ''} "
                    "(training_margin: point sizes at the published figure)"
                )
        out.append(line)
    return out


_ASSUMPTION_NAMES = {
    "mfu": "MFU",
    "serving_efficiency": "serving",
    "capacity_band": "capacity band",
    "availability_cap": "cap",
    "provider_tier": "tier",
    "owned_staff": "staff",
}


def _value(a) -> str:
    if a.value is None:
        return "(unset)"
    if isinstance(a.value, bool):
        return str(a.value).lower()
    if isinstance(a.value, float):
        text = f"{a.value:.3g}"
    elif isinstance(a.value, list):
        text = "[" + ", ".join(str(v) for v in a.value) + "]"
    else:
        text = str(a.value)
    if a.low is not None and a.high is not None:
        text += f" (band {a.low:.3g}-{a.high:.3g})"
    return text + (f" {a.unit}" if a.unit else "")


def assumption_tables(plan: Plan) -> list[Table]:
    """Two tables under the plan: the assumptions its choice rests on (MFU, serving
    efficiencies, assumed availability caps, provider tiers and SLAs) with their sources,
    and the settings that decided it, each as the problem set it or by default."""
    figures = [a for a in plan.assumptions if a.kind != "default"]
    settings = [a for a in plan.assumptions if a.kind == "default"]
    out = []
    if figures:
        table = Table(title="assumptions the plan rests on", title_justify="left")
        for column in ("what", "applies to", "name", "value", "basis", "binds", "source"):
            table.add_column(column, overflow="fold")
        previous = None
        for a in figures:
            same = previous is not None and (a.kind, a.source) == previous
            previous = (a.kind, a.source)
            table.add_row(
                *(
                    escape(cell)
                    for cell in (
                        _ASSUMPTION_NAMES.get(a.kind, a.kind),
                        " ".join(x for x in (a.workload, a.subject) if x),
                        a.name,
                        _value(a),
                        a.basis,
                        "yes" if a.binds else "",
                        "as above" if same else a.source,
                    )
                )
            )
        out.append(table)
    if settings:
        table = Table(
            title="settings that decided the plan (default: not set in the problem file)",
            title_justify="left",
        )
        for column in ("setting", "workload", "value", "set by", "meaning"):
            table.add_column(column, overflow="fold")
        for a in settings:
            table.add_row(
                *(
                    escape(cell)
                    for cell in (
                        a.name,
                        a.workload or "(problem)",
                        _value(a),
                        "problem" if a.basis == "problem" else "default",
                        a.source,
                    )
                )
            )
        out.append(table)
    return out


def fleet_lines(plan: Plan) -> list[str]:
    """Per serving workload and period: its deployments as base + units added at peak,
    and whether offerings change between load blocks (a per-block fleet)."""
    by: dict[tuple[str, str], list] = {}
    for d in plan.deployments:
        by.setdefault((d.workload, d.period), []).append(d)
    order = [b["name"] for b in (plan.compile_report.get("load_curve") or {}).get("blocks", [])]
    lines = []
    for (workload, period), fleet in by.items():
        swaps = any(d.base_units == 0 for d in fleet)
        if swaps:  # units by block, in the load curve's order
            parts = "; ".join(
                f"{d.offering} "
                + ", ".join(
                    f"{b} {d.units_by_block[b]:g}"
                    for b in sorted(
                        d.units_by_block,
                        key=lambda b: (b not in order, order.index(b) if b in order else 0, b),
                    )
                )
                for d in fleet
            )
        else:  # "+N at" the block where it runs the most units (its peak, or not: traffic mix)
            parts = ", ".join(
                f"{d.offering} {d.base_units:g}"
                + (
                    f" +{d.peak_units - d.base_units:g} at "
                    + next(
                        b
                        for b in order + list(d.units_by_block)
                        if d.units_by_block.get(b) == d.peak_units
                    )
                    if d.peak_units > d.base_units
                    else ""
                )
                for d in fleet
            )
        lines.append(
            f"fleet {workload} {period}: {parts}"
            + (
                " (offerings change between load blocks; `fleet: autoscale` keeps them all day)"
                if swaps
                else ""
            )
        )
    penalty = getattr(plan, "switching_penalty_usd", 0.0)  # a plan file from before it
    if penalty > 0:
        lines.append(
            f"switching: ${penalty:,.2f} for the units started within the "
            "day (switching_cost_usd), in the objective, not in the cost"
        )
    return lines


def plan_csv(plan: Plan) -> str:
    """The plan's line items as CSV (cells neutralised against spreadsheet formulas), then
    its cost lines (item and category the cost line's category, its provider and cost;
    the cost_usd column sums to the all-in total)."""
    rows = [i.model_dump() for i in plan.line_items]
    rows += [
        {
            "item": c.category,
            "period": "",
            "provider": c.provider,
            "cost_usd": c.cost_usd,
            "co2e_t": 0.0,
            "category": c.category,
        }
        for c in plan.cost_lines
    ]
    return csv_text(money_rounded(pd.DataFrame(rows)))


def plan_json(plan: Plan) -> str:
    """The plan as one JSON document (what ``solve --format json`` writes)."""
    return json.dumps(plan.model_dump(mode="json"), indent=2, sort_keys=False) + "\n"


# --------------------------------------------------------------------------- two-stage plan


def _capacity_words(cs) -> str:
    """A scenario's serving capacity (a CapacityScenario or None) in a few words."""
    if cs is None:
        return "capacity as estimated"
    if cs.factor is not None:
        return f"capacity x {cs.factor:.4g}"
    return f"capacity at the {cs.band_quantile:g} quantile of each estimate's band"


def two_stage_text(sp: StochasticPlan) -> str:
    """The two-stage plan for people (``procure solve`` of a problem with ``uncertainty:``)."""
    usd = whole_usd  # whole dollars

    lines = [
        f"{sp.problem}: two-stage plan over {len(sp.scenarios)} scenarios ({sp.method}), "
        f"{sp.status}, verified={str(sp.verified).lower()}, solver {sp.solver}, caps {sp.caps}",
        f"lower bound {usd(sp.lower_bound_usd)}, gap "
        + ("n/a" if sp.gap is None else f"{sp.gap:.2%}"),
        f"expected cost {usd(sp.expected_cost_usd)}; p5 {usd(sp.cost_percentiles_usd['p5'])}, "
        f"median {usd(sp.cost_percentiles_usd['p50'])}, p95 "
        f"{usd(sp.cost_percentiles_usd['p95'])}; worst {usd(sp.worst_case_usd)} "
        f"({sp.worst_scenario})",
        "commitments signed now:",
    ]
    if sp.risk_weight is not None:
        lines.insert(
            3,
            f"risk: minimises expected cost + {sp.risk_weight:g} x CVaR at {sp.cvar_level:g} = "
            f"{usd(sp.objective_usd)}; CVaR {usd(sp.cvar_usd)}",
        )
    lines += [
        f"  {i.item} {i.units:g} x {i.offering} ({i.mode}) in {i.period}: {usd(i.cost_usd)}"
        for i in sp.commitments
    ] or ["  none: everything is rented as it comes"]
    lines.append("the deterministic plan (expected prices and demand) would commit:")
    lines += [
        f"  {i.item} {i.units:g} x {i.offering} ({i.mode}) in {i.period}"
        for i in sp.deterministic_commitments
    ] or ["  nothing"]
    if sp.point_estimate_commitments is not None:
        lines.append(
            "the plan at the capacity estimates as they are would commit "
            f"(expected cost {usd(sp.point_estimate_expected_cost_usd)} over these scenarios):"
        )
        lines += [
            f"  {i.item} {i.units:g} x {i.offering} ({i.mode}) in {i.period}"
            for i in sp.point_estimate_commitments
        ] or ["  nothing"]
    lines += [
        f"value of the stochastic solution (VSS) {usd(sp.value_of_stochastic_solution_usd)}: "
        f"the deterministic commitments cost {usd(sp.deterministic_expected_cost_usd)} in "
        "expectation",
        f"expected value of perfect information (EVPI) "
        f"{usd(sp.expected_value_of_perfect_information_usd)}: with hindsight "
        f"{usd(sp.wait_and_see_usd)}",
        f"no new commitments (everything rented) would cost "
        f"{usd(sp.all_rented_expected_cost_usd)} in expectation",
        "scenarios:",
    ]
    lines += [
        f"  {o.name:<12} p={o.probability:.3f}  cost {usd(o.total_cost_usd):>14}  "
        f"hindsight {usd(o.hindsight_cost_usd):>14}  verified={str(o.verified).lower()}"
        + (
            ""
            if sp.point_estimate_commitments is None
            else f"  point-estimate plan {usd(o.point_estimate_cost_usd):>14}  "
            + _capacity_words(o.throughput)
        )
        for o in sp.scenarios
    ]
    lines += [f"note: {n}" for n in sp.notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- diff


def change_sentence(c: ItemChange) -> str:
    """One line item added, removed, changed or re-priced, in one line."""
    where = f"{c.period}" + (f" {c.block}" if c.block else "")
    who = f", {c.workload}" if c.workload else ""
    if c.change == "added":
        return (
            f"+ {c.item} {c.new_offering} {c.new_mode} x{c.new_units:g} "
            f"({where}{who}): ${c.new_cost_usd:,.0f}"
        )
    if c.change == "removed":
        return (
            f"- {c.item} {c.old_offering} {c.old_mode} x{c.old_units:g} "
            f"({where}{who}): ${c.old_cost_usd:,.0f}"
        )
    if c.change == "repriced":
        return (
            f"$ {c.item} {c.offering} {c.new_mode} x{c.new_units:g} "
            f"({where}{who}): {price_per_hour(c.old_unit_price_usd_per_hour)} -> "
            f"{price_per_hour(c.new_unit_price_usd_per_hour)}/h; "
            f"${c.old_cost_usd:,.2f} -> ${c.new_cost_usd:,.2f} ({signed_usd(c.delta_usd)})"
        )
    parts = []
    if "units" in c.fields:
        parts.append(f"units {c.old_units:g} -> {c.new_units:g}")
    if "mode" in c.fields:
        parts.append(f"mode {c.old_mode} -> {c.new_mode}")
    if "region" in c.fields:
        parts.append(f"region {c.old_region} -> {c.new_region}")
    return (
        f"~ {c.item} {c.offering} ({where}{who}): {', '.join(parts)}; "
        f"${c.old_cost_usd:,.0f} -> ${c.new_cost_usd:,.0f}"
    )


def diff_text(d: PlanDiff) -> str:
    """The diff for people (``procure diff``, the end of ``procure resolve``)."""
    pct = f" ({d.total_change_usd / d.old_total_usd:+.1%})" if d.old_total_usd else ""
    lines = [f"warning: {d.problem_warning}"] if d.problem_warning else []
    lines += [
        f"what changed: {d.n_changes} line item(s) "
        f"({len(d.added)} added, {len(d.removed)} removed, {len(d.changed)} changed, "
        f"{d.unchanged} unchanged)"
    ]
    for c in d.added + d.removed + d.changed:
        lines.append("  " + change_sentence(c))
    if d.repriced:
        delta = sum(c.delta_usd for c in d.repriced)
        rest = (
            f"; the price effect, {signed_usd(d.price_effect_usd)}, also re-prices the old plan's "
            "lines that changed"
            if abs(delta - d.price_effect_usd) > 0.005
            else ""
        )
        lines.append(
            f"re-priced: {len(d.repriced)} line item(s) kept with a new unit price "
            f"({signed_usd(delta)}{rest})"
        )
        lines += ["  " + change_sentence(c) for c in d.repriced]
    lines += [
        f"total cost: before ${d.old_total_usd:,.2f}, after ${d.new_total_usd:,.2f}, "
        f"change {signed_usd(d.total_change_usd)}{pct}",
        f"  price effect {signed_usd(d.price_effect_usd)}: the old plan at new prices "
        f"(${d.old_at_new_prices_usd:,.2f}) minus at old prices",
        f"  plan effect  {signed_usd(d.plan_effect_usd)}: the new plan minus the old plan at "
        "new prices",
        f"  ({d.price_basis})",
    ]
    periods = list(dict.fromkeys([*d.old_by_period, *d.new_by_period]))
    if periods:
        lines.append("by period: " + "; ".join(_pair(d, p, "period") for p in periods))
    providers = sorted(set(d.old_by_provider) | set(d.new_by_provider))
    if providers:
        lines.append("by provider: " + "; ".join(_pair(d, p, "provider") for p in providers))
    lines += [f"note: {n}" for n in d.notes]
    return "\n".join(lines) + "\n"


def _pair(d: PlanDiff, key: str, by: str) -> str:
    old = getattr(d, f"old_by_{by}").get(key, 0.0)
    new = getattr(d, f"new_by_{by}").get(key, 0.0)
    return f"{key} ${old:,.0f} -> ${new:,.0f}"


def price_per_hour(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


# --------------------------------------------------------------------------- re-solve


def rebased_text(rebased: Rebased) -> str:
    """What a re-solve carried over from the baseline (``procure resolve``)."""
    if rebased.as_of is None:
        return "re-solving the whole horizon (no --as-of): nothing is carried over\n"
    lines = [f"carried over from before {rebased.as_of}:"]
    for s in rebased.carried_servers:
        lines.append(f"  owned: {s.units} x {s.server} at {s.site} (no re-purchase)")
    for r in rebased.carried_reservations:
        lines.append(
            f"  committed: {r.units} x {r.offering} {r.mode}, {r.months_remaining:g} months left"
        )
    if not rebased.carried_servers and not rebased.carried_reservations:
        lines.append("  no purchases or reservations")
    if rebased.dropped_workloads:
        lines.append("  done before as-of: " + ", ".join(rebased.dropped_workloads))
    lines.append(
        f"  spent before as-of ${rebased.spent_before_usd:,.0f}, "
        f"emitted {rebased.co2e_before_t:,.1f} tCO2e"
    )
    lines += [f"  note: {n}" for n in rebased.notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- price update


def price_report_text(report: PriceReport, top: int = 10) -> str:
    """A price update for people: counts, the largest changes, what was not taken and why
    (``top`` rows of each)."""
    lines = [f"price update from {report.source} ({report.kind}):"]
    counts = report.counts()
    lines.append(
        "  " + ", ".join(f"{n} {status}" for status, n in counts.items()) if counts else "  none"
    )
    moved = report.with_status("changed", "new_mode", "derived")
    if not moved.empty:
        order = (moved["ratio"].fillna(1.0) - 1.0).abs().sort_values(ascending=False).index
        lines.append(f"  largest applied changes (of {len(moved)}):")
        for _, r in moved.loc[order[:top]].iterrows():
            lines.append("    " + _price_sentence(r))
    for status, why in (
        ("suspicious", f"moved by more than x{report.max_factor:g}; not applied"),
        ("inconsistent", "a discounted mode would cost more than on-demand; not applied"),
        ("unknown", "not in the catalog; not applied"),
        ("added", "new offerings added to the catalog"),
        ("missing", "in the catalog but not in the update; kept"),
    ):
        rows = report.with_status(status)
        if rows.empty:
            continue
        lines.append(f"  {status} ({len(rows)}): {why}")
        if status == "unknown" and rows["note"].nunique() > 1:
            lines.append(
                "    by reason: "
                + ", ".join(f"{n} {note}" for note, n in rows["note"].value_counts().items())
            )
        for _, r in rows.head(top).iterrows():
            lines.append("    " + _price_sentence(r))
        if len(rows) > top:
            lines.append(f"    ... and {len(rows) - top} more")
    if report.skipped:
        lines.append(
            "  rows the importer left out: "
            + ", ".join(f"{why} ({n})" for why, n in sorted(report.skipped.items()))
        )
    return "\n".join(lines) + "\n"


def _price_sentence(r: pd.Series) -> str:
    unit = "" if r["mode"] == OWNED else "/h"
    old = "-" if _isnan(r["old_usd"]) else f"${r['old_usd']:,.4g}{unit}"
    new = "-" if _isnan(r["new_usd"]) else f"${r['new_usd']:,.4g}{unit}"
    change = "" if _isnan(r["ratio"]) else f" ({(r['ratio'] - 1.0) * 100:+.1f}%)"
    note = f"; {r['note']}" if r["note"] else ""
    line = f" [line {int(r['line'])}]" if r["line"] else ""
    return f"{r['offering_id']} {r['mode']}: {old} -> {new}{change}{note}{line}"


# --------------------------------------------------------------------------- estimates


def estimate_text(result: dict) -> str:
    """A back-of-envelope estimate for people (``procure estimate``): one line per figure
    (nested figures as ``outer.inner``), then the assumptions."""
    lines: list[str] = []

    def emit(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                emit(f"{prefix}{k}." if isinstance(v, dict) else f"{prefix}{k}", v)
        elif isinstance(value, float):
            lines.append(f"  {prefix:<44} {value:,.4g}")
        else:
            lines.append(f"  {prefix:<44} {value}")

    for key, value in result.items():
        if key != "assumptions":
            emit(f"{key}." if isinstance(value, dict) else key, value)
    lines.append("assumptions:")
    lines += [f"  - {a}" for a in result.get("assumptions", [])]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- calibration


def calibration_text(calibration: Calibration) -> str:
    """Per-bucket requests/s per accelerator (c = calibrated, p = physics), then the factors."""
    parts = []
    for profile in calibration.profiles:
        frame = pd.DataFrame(profile["buckets"])
        for acc, values in profile["measured_throughput_rps"].items():
            basis = profile["basis"][acc]
            kinds = [basis] * len(values) if isinstance(basis, str) else basis
            frame[acc] = [
                f"{v:.4g}" + {"measured": "", "calibrated": " c", "physics": " p"}[k]
                for v, k in zip(values, kinds, strict=True)
            ]
        parts.append(
            f"requests/s per accelerator, {profile['model']} on {profile['runtime']} "
            "(c = calibrated physics, p = physics: not measured)\n" + frame.to_string(index=False)
        )
    factors = calibration.factors.copy()
    parts.append(
        "fitted factors (measured = factor x physics; error = |ln(measured / fitted)|)\n"
        + factors.to_string(index=False, float_format=lambda x: f"{x:.4g}")
    )
    if calibration.notes:
        parts.append("notes:\n" + "\n".join(f"  - {n}" for n in calibration.notes))
    return "\n\n".join(parts)
