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
from solver.money import whole_usd
from solver.outputs.html_tables import table_html as _table_html
from solver.outputs.report import (
    _plan_by_workload,
    _quarters,
    break_even_sentence,
    dual_sentence,
    price_movers,
    weakest_prices,
)
from solver.outputs.text import binding_sentence, training_sentences
from solver.outputs.unit_costs_text import unit_cost_lines
from solver.plan import Plan
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


def plan_view(record: PlanRecord, report: SensitivityReport | None = None) -> dict:
    """The plan page: money first (total, budget and headroom, capex and opex, cash flow,
    commitments, what binds, what moves it, the prices it rests on), then the deployments
    per workload."""
    plan = plan_of(record)
    budget = budget_of(plan)
    capex = sum(m.capex_usd for m in plan.cash_flow)
    quarters, money = _quarters(plan)
    binds = [binding_sentence(b) for b in plan.binding[:8]]
    return {
        "record": record,
        "plan": plan,
        "usd": whole_usd,
        "budget": budget,
        "headroom": None if budget is None else budget - plan.total_cost_usd,
        "used": None if budget is None else plan.total_cost_usd / budget,
        "capex": capex,
        "gap": "n/a" if plan.gap is None else f"{plan.gap:.4%}",
        "binds": binds,
        "training_sentences": training_sentences(plan),
        "commitments": [(m.month, t) for m in plan.cash_flow for t in m.new_commitments],
        "quarters": _table_html(quarters, money=money),
        "weakest": _table_html(weakest_prices(plan, top=5), money=["cost_usd"]),
        "cash_flow_json": script_json(cash_flow_series(plan)),
        "deployments": _deployments_by_workload(plan),
        "by_workload": _plan_by_workload(plan),
        "sensitivity": sensitivity_view(plan, report),
        "unit_cost_lines": unit_cost_lines(plan),
    }


def _deployments_by_workload(plan: Plan) -> list[tuple[str, str]]:
    """Per serving workload: its rented deployments (base and peak units) as a table."""
    frame = pd.DataFrame([d.model_dump() for d in plan.deployments])
    if frame.empty:
        return []
    cols = ["period", "provider", "region", "offering", "accelerator", "mode"]
    cols += ["base_units", "peak_units"]
    return [(name, _table_html(rows[cols])) for name, rows in frame.groupby("workload", sort=True)]


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
        kind: _table_html(_change_rows(getattr(diff, kind)), money=money)
        for kind in ("added", "removed", "changed", "repriced")
    }
    return {
        "old": old,
        "new": new,
        "a": a,
        "b": b,
        "usd": whole_usd,
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
    return _table_html(frame.head(500)), len(frame)
