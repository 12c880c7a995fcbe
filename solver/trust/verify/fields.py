"""The fields of a plan file beyond what the verifier recomputes: names checked against
the problem, facts copied from the catalog, totals summed again.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem, TrainingWorkload
from solver.plan import Check, LineItem, Plan
from solver.trust.refinement import split_form
from solver.trust.verify.context import _close, _Context
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _known
from solver.trust.verify.verifier import _verified
from solver.units import Item, Mode, server_and_site

#: what to do about a field of a plan file that does not hold
PLAN_FILE_FIX = (
    "use the plan as procure solve --format json (or resolve --plan-out) wrote it, unedited, "
    "or solve the problem again"
)
#: sums of the same line items in another order differ by rounding only
SUM_TOL = 1e-7
#: a recomputed amount (cost by period, residual value) as the line costs are checked
MONEY_TOL = 1e-5


@dataclass(frozen=True)
class FieldError:
    """A field of a plan file that disagrees with the catalog, the problem or the plan's own
    line items: its path in the JSON (``line_items[3].instance_type``), what is wrong."""

    field: str
    message: str
    fix: str = PLAN_FILE_FIX


def _line_names(run_ctx: _Context, i: int, item: LineItem) -> list[FieldError]:
    """One line item's kind and names (period, block, workload): what the verifier looks
    up, so a wrong one is named here rather than failing a lookup there."""
    at = f"line_items[{i}]"
    out: list[FieldError] = []
    names = run_ctx.period_names
    if item.item not in set(Item):
        return [FieldError(f"{at}.item", f"{item.item!r} is no line-item kind")]
    if item.period not in names:
        out.append(FieldError(f"{at}.period", f"period {item.period!r} is not in the problem"))
    if item.start_period and item.start_period not in names:
        out.append(
            FieldError(f"{at}.start_period", f"period {item.start_period!r} is not in the problem")
        )
    serving = item.item in {Item.RENT, Item.USE, Item.SAVINGS_PLAN_COVER}
    if serving and item.block not in run_ctx.blocks:
        out.append(
            FieldError(
                f"{at}.block",
                f"load block {item.block!r} is not one of the problem's ({list(run_ctx.blocks)})",
            )
        )
    elif not serving and item.block:
        out.append(FieldError(f"{at}.block", f"a {item.item} line has no load block"))
    w = run_ctx.workloads.get(item.workload)
    if item.item in {Item.RENT, Item.USE, Item.TRAINING}:
        training = isinstance(w, TrainingWorkload)
        if w is None or training != (item.item == Item.TRAINING):
            kind = "training" if item.item == Item.TRAINING else "serving"
            out.append(
                FieldError(
                    f"{at}.workload", f"{item.workload!r} is no {kind} workload of the problem"
                )
            )
    elif item.workload:
        out.append(FieldError(f"{at}.workload", f"a {item.item} line serves no workload"))
    return out


def _line_facts(run_ctx: _Context, catalog: Catalog, i: int, item: LineItem) -> list[FieldError]:
    """The facts exports copy from a line item's offering: provider, region, instance type,
    accelerator and accelerators per unit."""
    at = f"line_items[{i}]"
    out: list[FieldError] = []
    if not _known(item, catalog):
        return out  # the verifier names it: "offering in the catalog"
    u = run_ctx.unit(item)
    owned = item.mode == Mode.OWNED
    expected = {
        "provider": "owned" if owned else str(u["offering"]["provider"]),
        "region": str(u["site"].name) if owned else str(u["offering"]["region"]),
        "instance_type": server_and_site(item.offering)[0]
        if owned
        else str(u["offering"]["instance_type"]),
        "accelerator": str(u["acc"].name),
    }
    for name, value in expected.items():
        if getattr(item, name) != value:
            out.append(
                FieldError(
                    f"{at}.{name}",
                    f"{getattr(item, name)!r} is not the {name} of {item.offering} ({value!r})",
                )
            )
    if math.isfinite(item.units) and not _close(item.accelerators, item.units * u["apu"], SUM_TOL):
        out.append(
            FieldError(
                f"{at}.accelerators",
                f"{item.accelerators:g} accelerators for {item.units:g} units of {item.offering}, "
                f"which has {u['apu']} per unit ({item.units * u['apu']:g})",
            )
        )
    return out


def _sums(plan: Plan) -> dict[str, dict[str, float]]:
    """The plan's totals summed again from its line items (as the plan is made)."""
    sums: dict[str, dict[str, float]] = {
        k: defaultdict(float)
        for k in ("by_period", "by_provider", "by_mode", "by_workload", "co2e_t_by_workload")
    }
    for item in plan.line_items:
        for period, usd in (item.cost_by_period_usd or {item.period: item.cost_usd}).items():
            sums["by_period"][period] += usd
        sums["by_provider"][item.provider] += item.cost_usd
        sums["by_mode"][item.mode] += item.cost_usd
        sums["by_workload"][item.workload or "(fleet)"] += item.cost_usd
        sums["co2e_t_by_workload"][item.workload or "(fleet)"] += item.co2e_t
    return sums


def _totals_errors(plan: Plan, period_names: list[str]) -> list[FieldError]:
    """Each total of ``plan.totals`` equals the sum of its line items."""
    out = []
    scale = max(1.0, sum(abs(i.cost_usd) for i in plan.line_items))
    sums = _sums(plan)
    for name, summed in sums.items():
        given: dict[str, float] = getattr(plan.totals, name)
        keys = set(summed) | set(given)
        if name == "by_period":
            keys |= set(period_names)
        for key in sorted(keys):
            a, b = given.get(key), summed.get(key, 0.0)
            if a is None or not math.isfinite(a) or abs(a - b) > SUM_TOL * scale:
                out.append(
                    FieldError(
                        f"totals.{name}.{key}",
                        f"{a!r} is not the sum of the line items ({b:,.6f})",
                    )
                )
    return out


def plan_name_errors(plan: Plan, problem: Problem, catalog: Catalog) -> list[FieldError]:
    """The names in a plan file, checked against its problem before anything is looked up
    by them: the problem's name, objective and start date; each line item's kind, period,
    load block and workload. Empty when all hold."""
    ctx = _Context(problem, catalog)
    out = []
    if plan.problem != problem.name:
        out.append(FieldError("problem", f"{plan.problem!r} is not the problem's name"))
    if plan.objective_kind != problem.objective:
        out.append(
            FieldError("objective_kind", f"{plan.objective_kind!r} is not {problem.objective!r}")
        )
    if problem.start is not None and plan.start_date != problem.start.isoformat():
        out.append(FieldError("start_date", f"{plan.start_date!r} is not the problem's start"))
    elif plan.start_date and plan.cash_flow and plan.cash_flow[0].month != plan.start_date[:7]:
        # without a start in the problem the plan's own date is the calendar (first of the
        # next month when it was solved): its cash flow begins in that month (an edited
        # start_date would move every FOCUS charge period)
        out.append(
            FieldError(
                "start_date",
                f"{plan.start_date!r} is not the month its cash flow begins "
                f"({plan.cash_flow[0].month})",
            )
        )
    for i, item in enumerate(plan.line_items):
        out += _line_names(ctx, i, item)
    return out


def verify_plan_file(
    plan: Plan, problem: Problem, catalog: Catalog
) -> tuple[list[Check], list[FieldError]]:
    """:func:`verify_plan`, and the fields of a plan file that exports copy beyond what a
    solve's checks read: the facts of each line item's offering (provider, region,
    instance type, accelerator, accelerators per unit) against the catalog, the totals
    by period, provider, mode and workload against the line items, and each line's cost by
    period and residual value recomputed, the totals by period and provider against the
    verifier's own. Run :func:`plan_name_errors` first: a name it refuses would fail a
    lookup here."""
    split = split_form(plan, problem, _Context(problem, catalog).hours_at)
    owner, origin = ({}, None) if split is None else (split.owner, split.origin)
    solved = (plan, problem) if split is None else (split.plan, split.problem)
    run = _verified(*solved, catalog, by_line=True)
    if (
        split is not None and origin is not None
    ):  # the split plan's lines and periods as the plan reports them
        run.line_periods, run.residuals = _reported_figures(run, plan, split.plan, origin, owner)
        run.period_cost = _regrouped(run.period_cost, owner)
        run.c.check(split.check.name, split.check.ok, split.check.detail)
    out = []
    for i, item in enumerate(plan.line_items):
        out += _line_facts(run.ctx, run.catalog, i, item)
    out += _totals_errors(plan, [p.name for p in problem.resolved_periods])
    for i, item in enumerate(plan.line_items):
        at = f"line_items[{i}]"
        if i in run.line_periods:
            given = item.cost_by_period_usd or {item.period: item.cost_usd}
            again = run.line_periods[i]
            for name in sorted(set(given) | {k for k, v in again.items() if abs(v) > 1e-9}):
                a, b = given.get(name, 0.0), again.get(name, 0.0)
                if not _close(a, b, MONEY_TOL):
                    out.append(
                        FieldError(
                            f"{at}.cost_by_period_usd.{name}",
                            f"${a:,.2f} in {name}, recomputed ${b:,.2f}",
                        )
                    )
        residual = run.residuals.get(id(item), 0.0)
        if not _close(item.residual_value_usd, residual, MONEY_TOL):
            out.append(
                FieldError(
                    f"{at}.residual_value_usd",
                    f"${item.residual_value_usd:,.2f}, recomputed ${residual:,.2f}",
                )
            )
    scale = max(1.0, abs(run.total_cost))
    for name, again in (("by_period", run.period_cost), ("by_provider", run.provider_cost)):
        in_file: dict[str, float] = getattr(plan.totals, name)
        for key in sorted(set(in_file) | set(again)):
            a, b = in_file.get(key, 0.0), again.get(key, 0.0)
            if abs(a - b) > MONEY_TOL * scale:
                out.append(FieldError(f"totals.{name}.{key}", f"${a:,.2f}, recomputed ${b:,.2f}"))
    return run.c.result(), out


def _regrouped(by_piece: dict[str, float], owner: dict[str, str]) -> defaultdict:
    """Piece -> USD as problem period -> USD."""
    out: defaultdict = defaultdict(float)
    for name, usd in by_piece.items():
        out[owner.get(name, name)] += usd
    return out


def _reported_figures(
    run: _Run, plan: Plan, split_plan: Plan, origin: list[int], owner: dict[str, str]
) -> tuple[dict[int, dict[str, float]], dict[int, float]]:
    """The recomputed cost by period and residual value of each split line, summed onto
    the reported line it comes from (keyed by index and by ``id`` of the reported line)."""
    periods: dict[int, dict[str, float]] = {}
    residuals: dict[int, float] = {}
    for j, r in enumerate(origin):
        if j in run.line_periods:
            mine = periods.setdefault(r, defaultdict(float))
            for name, usd in _regrouped(run.line_periods[j], owner).items():
                mine[name] += usd
        key = id(plan.line_items[r])
        residuals[key] = residuals.get(key, 0.0) + run.residuals.get(
            id(split_plan.line_items[j]), 0.0
        )
    return periods, residuals
