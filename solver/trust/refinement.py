"""The check that a plan solved over split periods is the plan it reports.

When the solver splits the problem's periods (:mod:`solver.core.refine`), the verifier
(:func:`solver.trust.verify.verify_plan`) checks the split plan against the split
problem, constraint by constraint. This check ties that to what the user sees, from the
two problems and the two plans alone (no solver output, no model):

- the split problem is the user's problem with only its periods cut: every other field
  the same, each period's pieces adding up to its months, every workload naming the
  pieces of the periods it named;
- the reported plan is the split plan regrouped: the same total, each period's total the
  sum of its pieces' totals, the same line-item and cash-flow sums, to the cent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solver.inputs.problem import Problem
from solver.plan.lines import Check, Plan
from solver.plan.reporting import line_in_pieces

#: Two sums of the same figures agree to the cent.
CENT_USD = 0.005


def _owners(problem: Problem, split: Problem) -> dict[str, str] | str:
    """Piece name -> user period, or what is wrong with the split's periods."""
    pieces = [(p.name, float(p.months)) for p in split.resolved_periods]
    owner: dict[str, str] = {}
    at = 0
    for period in problem.resolved_periods:
        left = float(period.months)
        while left > 1e-6 and at < len(pieces):
            name, months = pieces[at]
            owner[name] = period.name
            left -= months
            at += 1
        if abs(left) > 1e-6:
            span = f"{period.months:g} months"
            return f"the pieces of period {period.name!r} do not add up to its {span}"
    if at != len(pieces):
        return "the split has periods past the problem's horizon"
    return owner


def _same_problem(problem: Problem, split: Problem, owner: dict[str, str]) -> str:
    """'' when ``split`` is ``problem`` with its periods cut (``owner``), else why not."""
    a, b = problem.model_dump(mode="json"), split.model_dump(mode="json")
    for key in sorted(set(a) | set(b)):
        if key in ("periods", "workloads"):
            continue
        if a.get(key) != b.get(key):
            return f"the split problem's {key} differs from the problem's"
    if len(a["workloads"]) != len(b["workloads"]):
        return "the split problem has other workloads"
    for mine, theirs in zip(a["workloads"], b["workloads"], strict=True):
        back = dict(theirs)
        for f in ("start_period", "end_period"):
            if back.get(f):
                back[f] = owner.get(back[f], back[f])
        if back.get("periods") is not None:
            back["periods"] = list(dict.fromkeys(owner.get(n, n) for n in back["periods"]))
        if back.get("demand_by_period"):
            back["demand_by_period"] = {
                owner.get(n, n): v for n, v in back["demand_by_period"].items()
            }
        if back != mine:
            return f"workload {mine.get('name')!r} differs in the split problem"
    return ""


def _sums(split_plan: Plan, reported: Plan, owner: dict[str, str]) -> str:
    """'' when the reported plan's figures are the split plan's regrouped, else why not."""
    if abs(split_plan.total_cost_usd - reported.total_cost_usd) > CENT_USD:
        return "the total differs from the split plan's"
    by_period: dict[str, float] = {}
    for name, usd in split_plan.totals.by_period.items():
        by_period[owner.get(name, name)] = by_period.get(owner.get(name, name), 0.0) + usd
    for name in set(by_period) | set(reported.totals.by_period):
        if abs(by_period.get(name, 0.0) - reported.totals.by_period.get(name, 0.0)) > CENT_USD:
            return f"period {name!r} totals differ from the sum of its pieces"
    items = sum(i.cost_usd for i in split_plan.line_items)
    if abs(items - sum(i.cost_usd for i in reported.line_items)) > CENT_USD:
        return "the line items do not add up to the split plan's"
    if any(i.period not in {p for p in owner.values()} for i in reported.line_items):
        return "a line item names a period the problem does not have"
    cash_a = [round(m.total_usd, 2) for m in split_plan.cash_flow]
    cash_b = [round(m.total_usd, 2) for m in reported.cash_flow]
    if cash_a != cash_b:
        return "the cash flow differs from the split plan's"
    return ""


def check_split_periods(
    problem: Problem, split: Problem, split_plan: Plan, reported: Plan
) -> Check:
    """The ``split_periods`` check: ``reported`` is ``split_plan`` (solved and verified
    over ``split``) in the periods of ``problem`` (module docstring)."""
    owner = _owners(problem, split)
    if isinstance(owner, str):
        return Check(name="split_periods", ok=False, detail=owner)
    why = _same_problem(problem, split, owner)
    if not why:
        why = _sums(split_plan, reported, owner)
    if why:
        return Check(name="split_periods", ok=False, detail=why)
    cut = [p.name for p in problem.resolved_periods if list(owner.values()).count(p.name) > 1]
    return Check(
        name="split_periods",
        ok=True,
        detail=f"planned over {len(owner)} periods ({', '.join(cut)} split where a life or "
        f"term ends), reported in the problem's {len(problem.resolved_periods)}; totals by "
        "period and cash flow agree to the cent",
    )


@dataclass(frozen=True)
class SplitForm:
    """A reported plan taken back to the periods it was solved over.

    Attributes
    ----------
    plan
        The plan over the split periods: each line in the piece it covers (a line over
        several pieces as one line per piece, its hours, cost and CO2e shared by hours).
    problem
        The problem with its periods split as the plan says.
    owner
        Piece name -> the problem period it is part of.
    origin
        For each line of ``plan``, the index of the reported line it comes from.
    check
        The ``split_periods`` check of the split against the problem.
    """

    plan: Plan
    problem: Problem
    owner: dict[str, str]
    origin: list[int]
    check: Check


def split_form(
    plan: Plan, problem: Problem, hours_at: Callable[[float], float]
) -> SplitForm | None:
    """``plan`` over the periods it was solved over, when it was solved over split periods
    (its ``compile_report`` names them), else None. ``hours_at``: hours from the plan's
    start to a month (the problem's calendar).

    Raises
    ------
    ValueError
        The split the plan names is not a split of the problem's periods.
    """
    named = (plan.compile_report or {}).get("split_periods")
    if not named:
        return None
    from solver.core.restrictions import lifted_problem

    given = named.get("pieces", {})
    pieces = {
        p.name: [(str(x["name"]), float(x["months"])) for x in given.get(p.name, [])]
        or [(p.name, float(p.months))]
        for p in problem.resolved_periods
    }
    split = lifted_problem(problem, pieces)
    if split is None:
        raise ValueError("the plan's split_periods is not a split of the problem's periods")
    owner = _owners(problem, split)
    if isinstance(owner, str):
        raise ValueError(f"the plan's split_periods: {owner}")
    bounds: dict[str, tuple[float, float]] = {}
    at = 0.0
    for p in split.resolved_periods:
        bounds[p.name] = (at, at + float(p.months))
        at += float(p.months)
    items, origin = [], []
    for r, item in enumerate(plan.line_items):
        for piece in line_in_pieces(item, pieces, bounds, hours_at):
            items.append(piece)
            origin.append(r)
    # the egress the objective priced piece by piece is not compared with the cost lines,
    # which are worked on the problem's own periods (solver.solve.solved_split); the solve
    # record still holds the plan's objective to it
    inner = plan.model_copy(
        update={
            "line_items": items,
            "compile_report": {},
            "egress_in_objective_usd": None,
            "support_in_objective_usd": None,
        }
    )
    why = _same_problem(problem, split, owner)
    check = Check(name="split_periods", ok=not why, detail=why or _done(problem, owner))
    return SplitForm(inner, split, owner, origin, check)


def _done(problem: Problem, owner: dict[str, str]) -> str:
    cut = [p.name for p in problem.resolved_periods if list(owner.values()).count(p.name) > 1]
    return (
        f"planned over {len(owner)} periods ({', '.join(cut)} split where a life or term "
        f"ends), reported in the problem's {len(problem.resolved_periods)}"
    )
