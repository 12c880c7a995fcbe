"""Actuals, re-forecast and price watch for people and scripts: text tables, CSV, JSON.

Pure functions from :class:`solver.analyses.actuals.Actuals`,
:class:`~solver.analyses.actuals.Reforecast` and :class:`solver.analyses.watch.Watch` to
``str``; ``procure actuals`` and ``procure watch`` print or write them.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import pandas as pd

from solver.money import usd
from solver.outputs.files import csv_text

if TYPE_CHECKING:
    from solver.analyses.actuals import Actuals, Reforecast
    from solver.analyses.resolve import Resolution
    from solver.analyses.watch import Watch


def _usd(value: float) -> str:
    """A change in USD (``+$5.00``), ``-`` when there is none to show."""
    return usd(value, signed=True, missing="-")


def _plain(value: float) -> str:
    """An amount in USD (``$5.00``), ``-`` when there is none to show."""
    return usd(value, missing="-")


def _records(frame: pd.DataFrame) -> list[dict]:
    """JSON-able rows (NaN -> null, numpy scalars -> Python)."""
    out = []
    for row in frame.to_dict("records"):
        clean = {}
        for k, v in row.items():
            if hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and math.isnan(v):
                v = None
            clean[k] = v
        out.append(clean)
    return out


def _grid(header: list[str], rows: list[list[str]], left: int = 3) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" if i < left else f"{{:>{w}}}" for i, w in enumerate(widths))
    return [fmt.format(*header), *(fmt.format(*r) for r in rows)]


def actuals_table(result: Actuals) -> str:
    """The variance by key and month, flagged rows and the totals, as text."""
    lines = result.lines
    span = f"plan months {result.first_month} to {result.last_month}"
    if result.plan_last_month:
        span += f" (of {result.first_month} to {result.plan_last_month})"
    read = result.read or result.files
    head = [
        f"{span} against bills of {result.first_billed_month} to {result.last_month}: "
        + ", ".join(f"{f} ({n} rows)" for f, n in read.items()),
        *_bill_notes(result),
        "variance = price + volume + mix + unplanned + unbilled (USD; mix: hours moved "
        "between lines of one accelerator in a month, at planned prices)",
        "",
    ]
    rows = [
        [
            r.month,
            f"{r.provider}/{r.region}/{r.instance_type or '-'} {r.pricing}",
            r.status + (f" (lines {r.lines})" if r.lines else ""),
            _plain(r.planned_usd),
            _plain(r.actual_usd),
            _usd(r.price_usd),
            _usd(r.volume_usd),
            _usd(r.mix_usd),
            _usd(r.unplanned_usd),
            _usd(r.unbilled_usd),
            _usd(r.variance_usd),
        ]
        for r in lines.itertuples(index=False)
    ]
    header = ["month", "billed as", "status", "planned", "actual", "price", "volume", "mix"]
    header += ["unplanned", "unbilled", "variance"]
    t = result.totals()
    rows.append(
        ["total", "", "", _plain(t["planned_usd"]), _plain(t["actual_usd"])]
        + [_usd(t[c]) for c in ("price_usd", "volume_usd", "mix_usd")]
        + [_usd(t[c]) for c in ("unplanned_usd", "unbilled_usd", "variance_usd")]
    )
    out = head + _grid(header, rows) + [""]
    flags = (("unplanned", "billed but not planned"), ("unbilled", "planned, not billed"))
    for status, words in flags:
        flagged = result.flagged(status)
        if len(flagged):
            out.append(f"{len(flagged)} {words}:")
            out += [
                f"  {r.month} {r.provider}/{r.region}/{r.instance_type or r.pricing} "
                f"{_plain(r.actual_usd if status == 'unplanned' else r.planned_usd)}"
                + (" (not billed yet: its invoice is late or missing)" if r.not_billed_yet else "")
                for r in flagged.itertuples(index=False)
            ]
    if result.not_billed_by_cloud:
        out.append(
            "owned servers are not billed by a cloud: plan lines "
            + ", ".join(str(i) for i in result.not_billed_by_cloud)
            + " left out"
        )
    return "\n".join(out) + "\n"


def _bill_notes(result: Actuals) -> list[str]:
    """What was set apart before comparing: rows passed twice, rows outside the plan's
    months, a partial last month, and the months stated complete."""
    out = []
    if result.duplicates:
        out.append(
            f"{result.duplicate_rows} duplicate rows dropped (passed twice, counted once): "
            + "; ".join(
                f"{d['file']} {d['rows']} rows of {', '.join(d['duplicate_of'])}"
                + (f" (the same bill as {d['same_bill_as']})" if d["same_bill_as"] else "")
                for d in result.duplicates
            )
        )
    for o in result.outside:
        out.append(
            f"{o['file']}: {o['rows']} rows billed outside the plan's months "
            f"{result.first_month} to {result.plan_last_month} ({', '.join(o['months'])}, "
            f"{_plain(o['cost_usd'])}) set apart, not compared"
        )
    for month in result.partial_months:
        why = (
            f"its rows end at {result.billed_to}"
            if result.billed_to
            else "it is billed for fewer lines than planned"
        )
        out.append(
            f"{month} is not billed in full yet ({why}): left out of the run-rate "
            "(missing lines are flagged below)"
        )
    if result.billed_through:
        out.append(f"bills stated complete to {result.billed_through} (--billed-through)")
    return out


def actuals_csv(result: Actuals) -> str:
    """One CSV row per key and month (the variance columns)."""
    return csv_text(result.lines, float_format="%.10g")


def reforecast_table(forecast: Reforecast, resolution: Resolution | None, note: str) -> str:
    """The cash flow with actual and forecast months apart, and the re-solve."""
    rows = [
        [
            r.month,
            r.kind,
            _plain(r.plan_usd),
            _plain(r.actual_usd),
            _plain(r.at_plan_usd),
            _plain(r.at_run_rate_usd),
            _plain(r.at_resolve_usd),
            _plain(r.pending_usd) if r.kind == "actual" else "-",
        ]
        for r in forecast.cash_flow.itertuples(index=False)
    ]
    t = forecast.totals()
    columns = ("plan_usd", "actual_usd", "at_plan_usd", "at_run_rate_usd", "at_resolve_usd")
    columns += ("pending_usd",)
    rows.append(["total", "", *(_plain(t[c]) if t[c] is not None else "-" for c in columns)])
    header = ["month", "kind", "plan", "actual", "at plan", "at run-rate", "at re-solve"]
    header.append("not billed yet")
    out = [
        f"re-forecast: actual to {forecast.last_actual_month}, forecast from "
        f"{forecast.as_of_month}",
        *_grid(header, rows, left=2),
        "",
    ]
    if t["pending_usd"]:
        out.append(
            f"{_plain(t['pending_usd'])} planned in the actual months is not billed yet (a "
            "late or missing invoice, not a drop in use): the columns at plan, at run-rate "
            "and at re-solve expect it"
        )
    out.append(_resolve_words(resolution, note))
    if forecast.resolve_owned_usd:
        out.append(
            f"the re-solve also spends {_plain(forecast.resolve_owned_usd)} on owned servers "
            "from the forecast's first month (no cloud bills them: not in the columns above)"
        )
    return "\n".join(out) + "\n"


def _resolve_words(resolution: Resolution | None, note: str) -> str:
    if resolution is None:
        return f"re-solve: {note}" if note else "re-solve: none"
    d = resolution.diff
    return (
        f"re-solve from {resolution.rebased.as_of} (bought and reserved held): "
        f"{usd(resolution.plan.total_cost_usd)} against "
        f"{usd(resolution.baseline.total_cost_usd)} for the plan's remaining decisions "
        f"({_usd(d.total_change_usd)}; "
        f"{d.n_changes} line items change)" + (f"; {note}" if note else "")
    )


def commitments_table(burn: pd.DataFrame) -> str:
    """The commitment burn-down (:func:`solver.analyses.commitment_burn.commitment_burn`)
    as text: one row per reserved instance, '' when there is none."""
    if burn.empty:
        return ""
    rows = []
    for r in burn.to_dict("records"):
        pct = r["burn_down_pct"]
        rows.append(
            [
                f"{r['provider']}/{r['region']}/{r['instance_type'] or '-'}",
                str(r["status"]),
                _plain(float(r["committed_usd"])),
                _plain(float(r["used_usd"])),
                "-" if pct is None or pct != pct else f"{float(pct):.1f}%",
                _plain(float(r["unused_usd"])),
                _plain(float(r["over_commitment_usd"])),
            ]
        )
    header = ["reserved", "status", "committed", "used", "burn-down", "unused", "over-commitment"]
    head = [
        "commitments: the plan's reservation fees against the bills' Committed rows "
        "(used = burn-down; unused as billed; over-commitment = committed - used)"
    ]
    return "\n".join(head + _grid(header, rows)) + "\n"


def actuals_json(
    result: Actuals,
    forecast: Reforecast | None = None,
    resolution=None,
    note="",
    commitments: pd.DataFrame | None = None,
):
    """One JSON document: totals, rows, flags, the commitment burn-down (``commitments``,
    left out when there is none) and (with --reforecast) the cash flow."""
    doc: dict = {
        "first_month": result.first_month,
        "last_month": result.last_month,
        "first_billed_month": result.first_billed_month,
        "files": result.files,
        "files_read": result.read,
        "duplicate_rows": result.duplicate_rows,
        "duplicates": result.duplicates,
        "outside_plan": result.outside,
        "partial_months": result.partial_months,
        "billed_to": result.billed_to or None,
        "billed_through": result.billed_through or None,
        "totals": result.totals(),
        "lines": _records(result.lines),
        "unplanned": _records(result.flagged("unplanned")),
        "unbilled": _records(result.flagged("unbilled")),
        "not_billed_by_cloud": result.not_billed_by_cloud,
    }
    if commitments is not None and not commitments.empty:
        doc["commitments"] = _records(commitments)
    if forecast is not None:
        doc["reforecast"] = {
            "last_actual_month": forecast.last_actual_month,
            "as_of_month": forecast.as_of_month,
            "totals": forecast.totals(),
            "cash_flow": _records(forecast.cash_flow),
            "run_rates": _records(forecast.run_rates),
            "resolve": None
            if resolution is None
            else {
                "as_of": resolution.rebased.as_of,
                "total_cost_usd": resolution.plan.total_cost_usd,
                "baseline_usd": resolution.baseline.total_cost_usd,
                "changes": resolution.diff.n_changes,
                "owned_usd_from_as_of": forecast.resolve_owned_usd,
            },
            "note": note,
        }
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def reforecast_csv(forecast: Reforecast) -> str:
    """The re-forecast's cash flow as CSV (``kind`` actual or forecast)."""
    return csv_text(forecast.cash_flow, float_format="%.10g")


def watch_table(w: Watch) -> str:
    """Which lines moved, and whether the optimum did."""
    out = [f"price watch (threshold {w.threshold_pct:g}%): {w.verdict.replace('_', ' ')}"]
    if len(w.lines):
        rows = [
            [
                str(r.line),
                f"{r.provider}/{r.region}/{r.instance_type}",
                f"{r.mode} {r.period}",
                f"${r.old_usd:,.4g}",
                f"${r.new_usd:,.4g}",
                f"{r.change_pct:+.2f}%" + (" *" if r.beyond_threshold else ""),
                _usd(r.cost_change_usd),
            ]
            for r in w.lines.itertuples(index=False)
        ]
        header = ["line", "offering", "mode", "old", "new", "change", "cost change"]
        out += _grid(header, rows)
        out.append("(* beyond the threshold)")
    else:
        out.append("no line of the plan changed price")
    out += _review_lines(w)
    if w.optimum_usd is None:
        out.append(f"re-solve infeasible at the new prices: {w.infeasible}")
    else:
        out.append(
            f"the plan at the new prices {usd(w.plan_at_new_prices_usd)}; the optimum "
            f"{usd(w.optimum_usd)} ({w.saving_pct:.2f}% less, {w.changed_items} line items change)"
        )
    return "\n".join(out) + "\n"


def _review_lines(w: Watch) -> list[str]:
    """The price lines not applied, those meant for a plan line first."""
    if not len(w.review):
        return []
    review = w.review.sort_values("plan_line", ascending=False, kind="stable")
    concern = int((review["plan_line"] >= 0).sum())
    out = [
        f"price lines not applied ({len(review)}, {concern} meant for a line of the plan): "
        "the watch did not see these prices"
    ]
    for r in review.itertuples(index=False):
        where = f"[price file line {r.line}] " if r.line else ""
        if r.plan_line >= 0 and r.plan_offering != r.offering_id:
            meant = f" -> plan line {r.plan_line} ({r.plan_offering}): a mistyping?"
        elif r.plan_line >= 0:
            meant = f" -> plan line {r.plan_line}"
        else:
            meant = ""
        note = f"; {r.note}" if r.note else ""
        out.append(
            f"  {r.status}: {where}{r.offering_id} {r.mode} ${r.price_usd:,.6g}{note}{meant}"
        )
    return out


def watch_json(w: Watch, exit_code: int) -> str:
    """The watch as one JSON document (with the exit code it ends with)."""
    doc = {
        "verdict": w.verdict,
        "exit_code": exit_code,
        "threshold_pct": w.threshold_pct,
        "moved": _records(w.lines),
        "plan_at_new_prices_usd": w.plan_at_new_prices_usd,
        "optimum_usd": w.optimum_usd,
        "saving_pct": w.saving_pct,
        "changed_items": w.changed_items,
        "infeasible": w.infeasible or None,
        "review": _records(w.review),
    }
    return json.dumps(doc, indent=2) + "\n"


__all__ = [
    "actuals_csv",
    "actuals_json",
    "actuals_table",
    "reforecast_csv",
    "reforecast_table",
    "watch_json",
    "watch_table",
]
