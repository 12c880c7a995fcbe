"""What the pages show, as plain data for the templates: a stored plan finance first (as
``procure report`` shows it: :mod:`solver.outputs.report`), two plans side by side (the
line diff and the price/plan split of :mod:`solver.analyses.diff`), the catalog filtered
as ``procure catalog list`` filters it."""

from __future__ import annotations

import json

import pandas as pd

from solver.analyses.diff import ItemChange, PlanDiff
from solver.analyses.sensitivity import SensitivityReport
from solver.inputs.catalog import Catalog, offerings_view
from solver.outputs.live_workbook import budget_held_usd
from solver.outputs.report import (
    FOREIGN_PRICE_COLUMNS,
    _quarters,
    break_even_sentence,
    dual_sentence,
    price_movers,
    weakest_prices,
)
from solver.outputs.text import binding_sentence, training_sentences
from solver.outputs.unit_costs_text import unit_cost_lines
from solver.plan import Plan
from solver.web.formats import frame_table
from solver.web.formats import money as money_text
from solver.web.store import PlanRecord
from solver.web.workspace import catalog_of_plan, plan_of, problem_of_plan

CATALOG_TABLES = ("offerings", "accelerators", "regions", "servers", "sites", "models")


def script_json(data: object) -> str:
    """JSON to carry inside ``<script type="application/json">``: no ``<`` that could end
    the element early."""
    return json.dumps(data).replace("<", "\\u003c")


def budget_of(plan: Plan) -> float | None:
    value = (plan.inputs.problem if plan.inputs else {}).get("budget_usd")
    return None if value is None else float(value)


def cash_flow_series(plan: Plan) -> dict:
    """Monthly money for the chart: stacked kinds and the cumulative total (USD)."""
    months = plan.cash_flow
    return {
        "months": [m.month for m in months],
        "rented_usd": [round(m.rented_usd, 2) for m in months],
        "owned_opex_usd": [round(m.owned_opex_usd, 2) for m in months],
        "commitments_usd": [round(m.commitments_usd, 2) for m in months],
        "capex_usd": [round(m.capex_usd, 2) for m in months],
        "cumulative_usd": [round(m.cumulative_usd, 2) for m in months],
        "budget_usd": budget_of(plan),
    }


def sensitivity_view(plan: Plan, report: SensitivityReport | None) -> dict:
    """What moves the plan, in the report's words (:mod:`solver.outputs.report`): the
    smallest price moves that change it, what each binding limit is worth, and every
    break-even price found."""
    if report is None:
        return {"analysed": False}
    from solver.outputs.sensitivity_views import entering, leaving, plan_pools, shown_duals

    # no dual of a pool the plan does not use; those pools only as what would have to
    # change for them to enter, the closest few (as the report says it)
    duals = shown_duals(report, plan_pools(plan))
    rows = leaving(report.break_even) + entering(report.break_even)
    return {
        "analysed": True,
        "movers": price_movers(report, plan, top=3),
        "duals": [dual_sentence(d) for d in duals[:8]],
        "break_even": [break_even_sentence(b) for b in rows],
        "break_even_note": report.break_even_tolerance,
        "caveat": report.caveat,
    }


def binds_in_words(plan: Plan, top: int = 8) -> list[str]:
    """What binds, in words (issue 51: no raw constraint names): one sentence per kind of
    limit and what it is about (workload, offering), the periods and load blocks where it
    binds gathered: 'N+1 capacity for chat-13b binds in periods 1, 2 and 3 (load block
    2): serving capacity minus its largest unit in use must cover peak demand at the
    highest utilisation allowed.' An availability cap names its offering, cap and basis as
    :func:`solver.outputs.text.binding_sentence` does."""
    from solver.outputs.report import FAMILY_WORDS

    groups: dict[tuple, dict] = {}
    for b in plan.binding:
        about = tuple((k, v) for k, v in sorted(b.key.items()) if k not in ("period", "block"))
        group = groups.setdefault(
            (b.family, about, b.offering, b.mode), {"first": b, "periods": [], "blocks": []}
        )
        for key, seen in (("period", "periods"), ("block", "blocks")):
            value = b.key.get(key)
            if value is not None and value not in group[seen]:
                group[seen].append(value)
    out = []
    for (family, about, _, _), group in list(groups.items())[:top]:
        first = group["first"]
        what = FAMILY_WORDS.get(family, family.replace("_", " "))
        what = what[0].upper() + what[1:]
        subject = ", ".join(str(v) for _, v in about)
        text = f"{what}{' for ' + subject if subject else ''} binds"
        if group["periods"]:
            text += f" in period{'s' if len(group['periods']) > 1 else ''} "
            text += _listed(group["periods"])
        if group["blocks"]:
            text += f" (load block{'s' if len(group['blocks']) > 1 else ''} "
            text += _listed(group["blocks"]) + ")"
        meaning = _MEANING.get(family, first.description.replace("_", " "))
        text += f": {meaning}"
        if family == "availability" and first.offering:
            text += "; " + binding_sentence(first).split(": ", 1)[-1]
        out.append(text + ".")
    return out


#: what a binding limit means, in words, by family (the rest: its description)
_MEANING = {
    "n_plus_1": "the serving capacity left after losing its largest unit must still carry "
    "peak demand at the highest utilisation allowed",
    "n_plus_1_units": "at least two serving units wherever there is demand, so that one can fail",
    "budget": "the total cost is at the budget",
    "carbon_cap": "the total CO2e is at the cap",
}


def _listed(values: list) -> str:
    """``[1, 2, 3]`` as ``1, 2 and 3``."""
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def plan_view(record: PlanRecord, report: SensitivityReport | None = None) -> dict:
    """The plan page: money first (total, budget and headroom, capex and opex, cash flow,
    commitments, what binds, what moves it, the prices it rests on), then the deployments
    per workload."""
    plan = plan_of(record)
    budget = budget_of(plan)
    capex = sum(m.capex_usd for m in plan.cash_flow)
    quarters, money = _quarters(plan)
    binds = binds_in_words(plan)
    return {
        "record": record,
        "plan": plan,
        "usd": money_text,
        "budget": budget,
        # the budget holds the all-in total (all in by default), compute without cost lines
        "headroom": None if budget is None else budget - budget_held_usd(plan),
        "used": None if budget is None else budget_held_usd(plan) / budget,
        "capex": capex,
        "gap": "n/a" if plan.gap is None else f"{plan.gap:.4%}",
        "binds": binds,
        "training_sentences": training_sentences(plan),
        "commitments": [(m.month, t) for m in plan.cash_flow for t in m.new_commitments],
        "quarters": frame_table(quarters, money_columns=money, total="total"),
        "weakest": frame_table(weakest_prices(plan, top=5), money_columns=["cost_usd"]),
        "cash_flow_json": script_json(cash_flow_series(plan)),
        "deployments": _deployments_by_workload(plan),
        "by_workload": plan_by_workload(plan),
        "sensitivity": sensitivity_view(plan, report),
        "unit_cost_lines": unit_cost_lines(plan),
    }


def plan_by_workload(plan: Plan) -> list[tuple[str, str, float]]:
    """Per workload: its name, its line items as the pages' table (headers in words, a
    total row; training lines with their MFU band and slack) and its cost (USD); the
    columns of :func:`solver.outputs.report._plan_by_workload`."""
    items = pd.DataFrame([i.model_dump() for i in plan.line_items])
    if items.empty:
        return []
    cols = ["period", "block", "provider", "tier", "sla", "region", "item", "instance_type"]
    cols += ["accelerator", "mode", "units", "hours", "cost_usd", "co2e_t"]
    cols += ["price_confidence", "price_date"]
    cols += [c for c in FOREIGN_PRICE_COLUMNS if c in items.columns and items[c].notna().any()]
    training = ["mfu", "mfu_low", "mfu_high", "slack_fraction"]
    items["workload"] = items["workload"].replace("", "(shared: reservations, purchases)")
    out: list[tuple[str, str, float]] = []
    for name, rows in items.groupby("workload", sort=True):
        shown = cols + (training if (rows["item"] == "training").any() else [])
        table = frame_table(
            rows[shown], money_columns=["cost_usd"], percent=["slack_fraction"], total="total"
        )
        out.append((str(name), table, float(rows["cost_usd"].sum())))
    return out


def _deployments_by_workload(plan: Plan) -> list[tuple[str, str]]:
    """Per serving workload: its rented deployments (base and peak units) as a table."""
    frame = pd.DataFrame([d.model_dump() for d in plan.deployments])
    if frame.empty:
        return []
    cols = ["period", "provider", "region", "offering", "accelerator", "mode"]
    cols += ["base_units", "peak_units"]
    return [(name, frame_table(rows[cols])) for name, rows in frame.groupby("workload", sort=True)]


def _change_rows(changes: list[ItemChange]) -> pd.DataFrame:
    rows = [
        {
            "item": c.item,
            "period": c.period,
            "block": c.block,
            "workload": c.workload,
            "provider": c.provider,
            "offering": c.offering,
            "mode": c.new_mode or c.old_mode,
            "old_units": c.old_units,
            "new_units": c.new_units,
            "old_cost_usd": c.old_cost_usd,
            "new_cost_usd": c.new_cost_usd,
            "delta_usd": c.delta_usd,
        }
        for c in changes
    ]
    return pd.DataFrame(rows)


def compare_plans(old: PlanRecord, new: PlanRecord) -> PlanDiff:
    """The two plans' diff, the change split exactly as ``procure diff`` splits it: the old
    plan's decisions priced by the model of its own problem at the new plan's prices
    (:func:`solver.analyses.resolve.diff_at_prices`, :func:`~solver.analyses.diff.split_change`)."""
    from solver.analyses.resolve import diff_at_prices

    return diff_at_prices(
        plan_of(old),
        plan_of(new),
        problem_of_plan(old),
        catalog_of_plan(new),
        price_source=f"plan {new.id}'s catalog (its variant's prices)",
    )


def compare_view(old: PlanRecord, new: PlanRecord) -> dict:
    a, b = plan_of(old), plan_of(new)
    diff = compare_plans(old, new)
    money = ["old_cost_usd", "new_cost_usd", "delta_usd"]
    tables = {
        kind: frame_table(_change_rows(getattr(diff, kind)), money_columns=money, total="total")
        for kind in ("added", "removed", "changed", "repriced")
    }
    return {
        "old": old,
        "new": new,
        "a": a,
        "b": b,
        "usd": money_text,
        "diff": diff,
        "tables": tables,
        "budgets": (budget_of(a), budget_of(b)),
        "series_json": script_json({"a": cash_flow_series(a), "b": cash_flow_series(b)}),
        "providers": sorted(set(diff.old_by_provider) | set(diff.new_by_provider)),
        "periods": list(dict.fromkeys([*diff.old_by_period, *diff.new_by_period])),
    }


def _with_index_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its index levels as columns (once: a level the table keeps as a
    column too, as ``accelerator_id`` or ``(provider, region)``, is not added again)."""
    names = [n for n in frame.index.names if n is not None]
    missing = [n for n in names if n not in frame.columns]
    if missing:
        frame = frame.reset_index(level=missing)
    return frame.reset_index(drop=True)


def catalog_view(catalog: Catalog, table: str, filters: dict) -> tuple[str, int]:
    """A catalog table as HTML and its row count; offerings filtered and sorted as
    ``procure catalog list offerings --provider --accelerator --region --mode --sort``."""
    if table == "offerings":
        frame, columns = offerings_view(catalog, **filters)
        frame = frame[["provider", "region", *columns]]
    else:
        frame = _with_index_columns(getattr(catalog, table))
        columns = [c for c in frame.columns if c != "source" and not c.endswith("_source")]
        frame = frame[columns]
    prices = [c for c in frame.columns if "usd_per_" in c or c.endswith("_usd")]
    return frame_table(frame.head(500), prices=prices), len(frame)
