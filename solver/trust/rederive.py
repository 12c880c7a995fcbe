"""A plan file re-derived from its decisions: every field that ``export``, ``diff`` and
``resolve`` copy out of a plan file is either recomputed here from the plan's decisions
(which offering, mode, units, load block, period, replica shape, cluster) and the problem
and catalog its digests name, and compared with the file, or checked for consistency.
A field that differs refuses the file with the field's path, the value found, the value
expected and the fix (restore the file as procure wrote it, or solve again).

The verifier (:mod:`solver.trust.verify`) recomputes the costs and constraints
independently of the model; this module re-derives the rest the way ``procure solve``
writes it, through the same plan builder: the decisions are placed in the model of the
plan's problem and catalog and read back (:func:`solver.plan.extract_plan`), then the cost
lines, cash flow and currency view are worked out from those line items.

What each consumer copies, and how it is held here:

====================================  ==========================  =========================
Field                                 Copied by                   Held by
====================================  ==========================  =========================
line item kind, period, block,        export, diff, resolve       verify (names, physics),
workload, offering, mode, units,                                  the decisions re-placed
start_period, tp_degree, batch,
bucket_requests_per_s
provider, region, instance_type,      export (orders, FOCUS),     re-derived (LINE_FIELDS)
accelerator, accelerators, hours,     diff
cost_usd, co2e_t, cost_by_period_usd
residual_value_usd, term_end_month,   export (hardware, FOCUS     re-derived (LINE_FIELDS)
months_after_horizon,                 commitments), plan table
liability_after_horizon_usd
capacity_tokens_per_s,                plan table, assumptions     re-derived (LINE_FIELDS)
capacity_source
price_date, price_source,             export (orders, FOCUS)      re-derived (LINE_FIELDS)
price_confidence, price_currency,
tier, sla
job_hours, mfu, mfu_low, mfu_high,    plan table, assumptions     re-derived (LINE_FIELDS)
mfu_point, mfu_source,
mfu_band_source, training_margin,
window_hours, slack_fraction,
units_at_point_mfu
totals (by period, provider, mode,    diff, export (periods)      verify (sums, recomputed)
workload, CO2e), total_cost_usd,
total_co2e_t, npv_usd
cost_lines, all_in_cost_usd,          export (orders), diff       re-derived
not_included
cash_flow (every month, every         export (FOCUS months),      re-derived
column)                               actuals, plan table
currency, in_currency,                plan table, export (FOCUS)  re-derived
exchange_rates, the lines'
exchange_rate_*, *_in_price_currency
start_date, month_hours               export (FOCUS dates)        verify (start), re-derived
problem, objective_kind               diff, export record         verify (names)
status, gap, objective,               plan table, diff            consistency (solve_record)
stopped_at_time_limit
inputs (digests, problem, catalog)    every command               planfile (digests)
====================================  ==========================  =========================

Not re-derived (no command acts on them; the plan table shows them as the solve wrote
them): ``solver``, ``solve_seconds``, ``compile_seconds``, ``binding``,
``owned_utilisation``, ``served_fraction``, ``compile_report``, ``checks``,
``assumptions``, ``warnings``, ``budget_basis``.
"""

from __future__ import annotations

import math
from datetime import date

import numpy as np

from solver.core.clock import Clock
from solver.core.compile import Compiled, compile_problem
from solver.core.model import LinearModel, build_model
from solver.inputs.catalog import Catalog
from solver.inputs.catalog.capacity_blocks import MODE as BLOCK_MODE
from solver.inputs.problem import Problem
from solver.plan import LineItem, Plan, extract_plan
from solver.plan.cashflow import cash_flow
from solver.plan.costs import with_cost_lines
from solver.plan.lines.blocks import ITEM as BLOCK_ITEM
from solver.plan.lines.blocks import block_variable_name
from solver.plan.provenance import RATE_FIELDS, with_currency
from solver.plan.reporting import reported_items
from solver.trust.refinement import split_form
from solver.trust.solve_record import solve_record_errors
from solver.trust.verify import FieldError
from solver.units import RENTED_MODES

#: what to do about a re-derived field that does not hold
REDERIVE_FIX = (
    "restore the file as procure solve --format json (or resolve --plan-out) wrote it, or "
    "re-solve: procure solve PROBLEM --format json --out PLAN.json"
)
#: relative tolerance of a re-derived number (the plan's JSON holds full floats)
REL_TOL = 1e-6
#: absolute tolerance of a re-derived number (USD, hours, months, tokens/s)
ABS_TOL = 1e-6

#: the fields of a line item re-derived from its decisions and compared with the file
LINE_FIELDS: tuple[str, ...] = (
    "units",  # a decision; a use line per block, or two lines of one decision, must agree
    "bucket_requests_per_s",  # a decision (traffic mix); placed, so read back the same
    "provider",
    "region",
    "instance_type",
    "accelerator",
    "accelerators",
    "hours",
    "cost_usd",
    "co2e_t",
    "capacity_tokens_per_s",
    "capacity_source",
    "job_hours",
    "residual_value_usd",
    "term_end_month",
    "months_after_horizon",
    "liability_after_horizon_usd",
    "cost_by_period_usd",
    "price_date",
    "price_source",
    "price_confidence",
    "price_currency",
    "tier",
    "sla",
    "mfu",
    "mfu_low",
    "mfu_high",
    "mfu_point",
    "mfu_source",
    "mfu_band_source",
    "training_margin",
    "window_hours",
    "slack_fraction",
    "units_at_point_mfu",
    "category",
)
#: the fields of a cost line re-derived from the line items, the problem and the catalog
COST_LINE_FIELDS: tuple[str, ...] = (
    "category",
    "provider",
    "entry",
    "quantity",
    "quantity_unit",
    "unit_price_usd",
    "cost_usd",
    "cost_by_month_usd",
    "cost_by_period_usd",
    "basis",
    "source",
)


def rederived_errors(plan: Plan, problem: Problem, catalog: Catalog) -> list[FieldError]:
    """Every field of ``plan`` that export, diff and resolve copy, against its
    re-derivation from the plan's decisions (module docstring); empty when all hold.

    Run after the verifier has passed the plan (its names, costs and constraints hold).
    """
    out = solve_record_errors(plan, problem)
    out += line_item_errors(plan, problem, catalog)
    if out:  # the money below is worked out from the line items: they must hold first
        return out
    start = date.fromisoformat(plan.start_date) if plan.start_date else None
    if start is None:
        return [FieldError("start_date", "the plan has no start_date", REDERIVE_FIX)]
    bare = plan.model_copy(update={"cost_lines": [], "all_in_cost_usd": None})
    again = with_cost_lines(bare, problem, catalog, start)
    out += _cost_line_errors(plan, again)
    out += _compare("all_in_cost_usd", plan.all_in_cost_usd, again.all_in_cost_usd)
    out += _compare("not_included", plan.not_included, again.not_included)
    out += _compare("month_hours", plan.month_hours, "calendar" if problem.start else "average_730")
    if out:
        return out
    months = cash_flow(plan, problem, catalog, start)
    out += _cash_flow_errors(plan, months)
    rate = catalog.rate(problem.currency, field="currency")
    view = with_currency(plan, problem, rate, catalog)
    out += _compare("currency", plan.currency, view.currency)
    for i, (item, twin) in enumerate(zip(plan.line_items, view.line_items, strict=True)):
        for name in RATE_FIELDS:
            out += _compare(f"line_items[{i}].{name}", getattr(item, name), getattr(twin, name))
    given_rates = [r.model_dump(mode="json") for r in plan.exchange_rates]
    out += _compare(
        "exchange_rates", given_rates, [r.model_dump(mode="json") for r in view.exchange_rates]
    )
    given = None if plan.in_currency is None else plan.in_currency.model_dump(mode="json")
    wanted = None if view.in_currency is None else view.in_currency.model_dump(mode="json")
    out += _compare("in_currency", given, wanted)
    return out


# --------------------------------------------------------------------------- line items


def line_item_errors(plan: Plan, problem: Problem, catalog: Catalog) -> list[FieldError]:
    """Each line item's fields (:data:`LINE_FIELDS`) against the line the plan builder
    reads back for the same decision; a decision no option of the problem and catalog
    takes is named by its line."""
    again, unplaced = _rederived_lines(plan, problem, catalog, prune=True)
    if unplaced:  # an option pruned as dominated (a re-solve may hold one): all of them
        again, unplaced = _rederived_lines(plan, problem, catalog, prune=False)
    out = [
        FieldError(
            f"line_items[{i}]",
            f"no option of the problem and catalog is this {item.item} of {item.offering} "
            f"({item.mode}) for {item.workload or 'the fleet'} in {item.period} (tp_degree "
            f"{item.tp_degree}, batch {item.batch}, {item.units:g} units)",
            REDERIVE_FIX,
        )
        for i, item in unplaced
    ]
    by_key = {_match_key(i): i for i in again}
    for i, item in enumerate(plan.line_items):
        twin = by_key.get(_match_key(item))
        if twin is None:
            continue  # unplaced (above), or a line the decisions do not make (existing)
        for name in LINE_FIELDS:
            out += _compare(f"line_items[{i}].{name}", getattr(item, name), getattr(twin, name))
    if unplaced:
        return out
    listed = {_match_key(i) for i in plan.line_items}
    for twin in again:
        if _match_key(twin) not in listed:
            out.append(
                FieldError(
                    "line_items",
                    f"no line for the {twin.item} of {twin.offering} ({twin.mode}) in "
                    f"{twin.period}{' ' + twin.block if twin.block else ''} that the plan's "
                    f"decisions and problem give ({twin.units:g} units, ${twin.cost_usd:,.2f})",
                    REDERIVE_FIX,
                )
            )
    return out


def _match_key(item: LineItem) -> tuple:
    """What identifies a line item among those of one plan."""
    return (
        item.item,
        item.period,
        item.block,
        item.workload,
        item.offering,
        item.mode,
        item.start_period,
        item.tp_degree,
        item.batch,
    )


def _rederived_lines(
    plan: Plan, problem: Problem, catalog: Catalog, *, prune: bool
) -> tuple[list[LineItem], list[tuple[int, LineItem]]]:
    """The line items the plan builder reads back for the plan's decisions in the
    problem's periods, and the decisions it has no variable for (index, line). A plan
    solved over split periods (its ``compile_report`` names them) is placed in the split
    problem's model, and what it reads back is reported in the problem's periods as
    ``procure solve`` reports it (:func:`solver.plan.reporting.reported_items`)."""
    try:
        split = split_form(plan, problem, Clock(problem.start).hours_at)
    except ValueError:
        split = None  # not a split of the problem: the verifier has refused it already
    if split is None:
        return _rederived(plan, problem, catalog, prune=prune)
    inner, unplaced = _rederived(split.plan, split.problem, catalog, prune=prune)
    months = {p.name: float(p.months) for p in split.problem.resolved_periods}
    pieces: dict[str, list[tuple[str, float]]] = {}
    for piece, period in split.owner.items():
        pieces.setdefault(period, []).append((piece, months[piece]))
    reported = reported_items(inner, pieces)
    return reported, [(split.origin[i], item) for i, item in unplaced]


def _rederived(
    plan: Plan, problem: Problem, catalog: Catalog, *, prune: bool
) -> tuple[list[LineItem], list[tuple[int, LineItem]]]:
    """The line items the plan builder reads back for the plan's decisions, and the
    decisions it has no variable for (index, line)."""
    compiled = compile_problem(problem, catalog, prune_dominated=prune)
    model = build_model(compiled)
    values, unplaced = _Placement(compiled, model).place(plan.line_items)
    again = extract_plan(
        compiled,
        model,
        values,
        status="re-derived",
        objective=None,
        gap=None,
        solver="none",
        solve_seconds=0.0,
    )
    return again.line_items, unplaced


class _Placement:
    """The model's variables by what they decide, to place a plan's decisions in."""

    def __init__(self, compiled: Compiled, model: LinearModel) -> None:
        v = model.variables
        self.periods = {n: t for t, n in enumerate(compiled.periods["name"])}
        self.blocks = {n: b for b, n in enumerate(compiled.blocks["name"])}
        pools = compiled.pools
        self.pool_of = {
            (str(o), str(m)): k
            for k, (o, m) in enumerate(zip(pools["offering_id"], pools["mode"], strict=True))
        }
        self.position = {str(p): k for k, p in enumerate(pools["pool_id"])}
        self.index: dict[tuple, int] = {}
        columns = (v["kind"], v["option_id"], v["pool"], v["period"], v["block"], v["bucket"])
        for j, (kind, option, pool, period, block, bucket) in enumerate(zip(*columns, strict=True)):
            key = (str(kind), int(option), int(pool), int(period), int(block))
            self.index.setdefault(key if kind != "y" else (*key, int(bucket)), j)
        self.names = {str(n): j for j, n in enumerate(v["name"])}
        self.options = compiled.options
        self.block_options = compiled.capacity_blocks
        self.size = len(v)

    def place(self, items: list[LineItem]) -> tuple[np.ndarray, list[tuple[int, LineItem]]]:
        """The variable values that hold the decisions of ``items``, and the lines no
        variable holds (index, line)."""
        values = np.zeros(self.size)
        unplaced: list[tuple[int, LineItem]] = []
        for i, item in enumerate(items):
            if item.item in ("existing", "staff_scale", BLOCK_ITEM):
                continue  # made from the fleet, the sites, a block's training line
            j = self._variable(item)
            if j is None:
                unplaced.append((i, item))
            elif item.item == "training":
                values[j] = 1.0
            elif item.item == "use" and values[j]:
                pass  # one variable per period, a line per load block
            else:
                values[j] += item.units
            if j is not None and item.bucket_requests_per_s:
                self._place_buckets(item, values, unplaced, i)
        return values, unplaced

    def _variable(self, item: LineItem) -> int | None:
        """The variable whose value is ``item``'s units (a cluster, for training)."""
        t = self.periods.get(item.period, -1)
        if item.mode == BLOCK_MODE:  # a training line on a capacity block
            start = self.periods.get(item.start_period or item.period, -1)
            return self.names.get(block_variable_name(self.block_options, item, start))
        if item.item == "savings_plan":
            term = item.mode.removeprefix("savings_plan_")
            return self.names.get(f"savings_plan[{item.provider},{term},{t}]")
        if item.item == "savings_plan_cover":
            term = item.mode.removeprefix("savings_plan_")
            at = f"{t},{self.blocks.get(item.block, -1)}"
            return self.names.get(
                f"sp_cover[{item.provider},{term},{item.offering}#on_demand,{at}]"
            )
        if item.item in ("purchase", "reservation"):
            kind = "buy" if item.item == "purchase" else "commit"
            pool = self.pool_of.get((item.offering, item.mode), -2)
            return self.index.get((kind, -1, pool, t, -1))
        found = self._option(item)
        return None if found is None else found[0]

    def _option(self, item: LineItem) -> tuple[int, int, int, int] | None:
        """(variable, option, pool, period) of the option a serving or training line
        runs: its workload, offering and mode, and its replica shape (serving) or its
        cluster and schedule (training)."""
        options = self.options
        mine = options[
            (options["workload"] == item.workload)
            & (options["offering_id"] == item.offering)
            & (options["mode"] == item.mode)
        ]
        t, b = self.periods.get(item.period, -1), self.blocks.get(item.block, -1)
        if item.item == "training":
            t = self.periods.get(item.start_period or item.period, -1)
            hours = mine["job_hours"].astype(float)
            mine = mine[
                (mine["n_units"].astype(float) == float(item.units))
                & (mine["start_period"].astype(int) == t)
                & ((hours - item.job_hours).abs() <= 1e-6 * max(1.0, item.job_hours))
            ]
            kind, b = "z", -1
        else:
            mine = mine[(mine["tp_degree"] == item.tp_degree) & (mine["batch"] == item.batch)]
            kind = "x"
            b = b if item.mode in RENTED_MODES else -1
        for option, pool in zip(mine["option_id"], mine["pool_id"], strict=True):
            at = self.position.get(str(pool), -2)
            j = self.index.get((kind, int(option), at, t, b))
            if j is not None:
                return j, int(option), at, t
        return None

    def _place_buckets(self, item: LineItem, values: np.ndarray, unplaced: list, i: int) -> None:
        """A traffic mix's requests/s by bucket on the line's option in its load block."""
        found = self._option(item)
        if found is None:
            return
        _, option, pool, t = found
        b = self.blocks.get(item.block, -1)
        for bucket, rps in item.bucket_requests_per_s.items():
            j = self.index.get(("y", option, pool, t, b, int(bucket)))
            if j is None:
                unplaced.append((i, item))
                return
            values[j] = rps


# --------------------------------------------------------------------------- money


def _cost_line_errors(plan: Plan, again: Plan) -> list[FieldError]:
    """The cost lines (storage, egress, support, staff, tax, contingency) re-derived."""
    if len(plan.cost_lines) != len(again.cost_lines):
        return [
            FieldError(
                "cost_lines",
                f"{len(plan.cost_lines)} cost lines, re-derived {len(again.cost_lines)}",
                REDERIVE_FIX,
            )
        ]
    out = []
    for k, (line, twin) in enumerate(zip(plan.cost_lines, again.cost_lines, strict=True)):
        for name in COST_LINE_FIELDS:
            out += _compare(f"cost_lines[{k}].{name}", getattr(line, name), getattr(twin, name))
    return out


def _cash_flow_errors(plan: Plan, months: list) -> list[FieldError]:
    """Every month of the cash flow, every column, against the months re-derived from the
    line items and cost lines."""
    if len(plan.cash_flow) != len(months):
        found = [m.month for m in plan.cash_flow]
        wanted = [m.month for m in months]
        return [
            FieldError(
                "cash_flow",
                f"{len(found)} months ({_span(found)}), re-derived {len(wanted)} ({_span(wanted)})",
                REDERIVE_FIX,
            )
        ]
    out = []
    for k, (month, twin) in enumerate(zip(plan.cash_flow, months, strict=True)):
        a, b = month.model_dump(mode="json"), twin.model_dump(mode="json")
        for name in a:
            out += _compare(f"cash_flow[{k}].{name}", a[name], b.get(name))
    return out


def _span(months: list[str]) -> str:
    return f"{months[0]} to {months[-1]}" if months else "none"


# --------------------------------------------------------------------------- compare


def _compare(field: str, found: object, expected: object) -> list[FieldError]:
    """[] when ``found`` is ``expected`` (numbers within the tolerance, dicts and lists
    entry by entry), else the field with both values."""
    if _same(found, expected):
        return []
    return [
        FieldError(
            field, f"{_shown(found)} in the file, re-derived {_shown(expected)}", REDERIVE_FIX
        )
    ]


def _same(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        keys = {str(k) for k in a} | {str(k) for k in b}
        sa, sb = {str(k): x for k, x in a.items()}, {str(k): x for k, x in b.items()}
        return all(_same(sa.get(k, 0.0), sb.get(k, 0.0)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        if not (math.isfinite(a) and math.isfinite(b)):
            return a == b
        return abs(a - b) <= ABS_TOL + REL_TOL * max(abs(a), abs(b))
    return a == b


def _shown(value: object) -> str:
    """A value as the message shows it: numbers to six significant figures and more."""
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.2f}"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
