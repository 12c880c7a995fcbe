"""A plan solved over split modelling periods, reported in the problem's own periods.

:mod:`solver.core.refine` cuts the problem's periods where a unit's life or term ends;
the plan is solved over the pieces and shown over the periods the user wrote: every
line, total, cost line, cash-flow month and binding row names the problem period its
piece is part of. A line that runs the same units through adjacent pieces of a period
becomes one line (hours, cost and CO2e summed); a line that covers only part of its
period says which months in ``served_months``. Costs are only regrouped, never
re-priced: each total is the sum of the same figures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from solver.plan.lines import Binding, CashFlowMonth, LineItem, Plan
from solver.units import Item

#: Lines whose hours and cost are the period's hours times a rate: the same units through
#: adjacent pieces are one line. Every other line (a purchase, a reservation, a training
#: run, the fleet held at the start) keeps the piece it is in.
RUNNING = {Item.RENT, Item.USE}

#: The fields of a line that a merge adds up or rewrites; every other field must match.
_SUMMED = {"period", "hours", "cost_usd", "co2e_t", "cost_by_period_usd", "served_months"}


def piece_bounds(pieces: dict[str, list[tuple[str, float]]]) -> dict[str, tuple[float, float]]:
    """Piece name -> (start, end) in months from the plan's start, the pieces taken in
    the problem's period order."""
    out: dict[str, tuple[float, float]] = {}
    at = 0.0
    for ps in pieces.values():
        for name, months in ps:
            out[name] = (at, at + months)
            at += months
    return out


def _regrouped(by_piece: dict[str, float], owner: dict[str, str]) -> dict[str, float]:
    """A piece -> USD map as a problem period -> USD map (sums, in first-seen order)."""
    out: dict[str, float] = {}
    for name, usd in by_piece.items():
        period = owner.get(name, name)
        out[period] = out.get(period, 0.0) + usd
    return out


def _merged(items: list[LineItem], span: dict[str, tuple[float, float]]) -> list[LineItem]:
    """Lines of one problem period: each running line extended by the same line of the
    next piece (same units, same everything but the figures summed)."""
    out: list[LineItem] = []
    open_at: dict[tuple, int] = {}
    for item in items:
        key = None
        if item.item in RUNNING:
            key = tuple(sorted((k, repr(v)) for k, v in item.model_dump(exclude=_SUMMED).items()))
        at = open_at.get(key) if key is not None else None
        before = out[at].served_months if at is not None else None
        months = item.served_months
        if at is not None and before is not None and months is not None and before[1] == months[0]:
            prev = out[at]
            out[at] = prev.model_copy(
                update={
                    "hours": prev.hours + item.hours,
                    "cost_usd": prev.cost_usd + item.cost_usd,
                    "co2e_t": prev.co2e_t + item.co2e_t,
                    "cost_by_period_usd": _summed(prev.cost_by_period_usd, item.cost_by_period_usd),
                    "served_months": [before[0], months[1]],
                }
            )
            continue
        if key is not None:
            open_at[key] = len(out)
        out.append(item)
    whole = (
        min(s for s, _ in span.values()),
        max(e for _, e in span.values()),
    )
    return [
        i.model_copy(update={"served_months": None}) if tuple(i.served_months or ()) == whole else i
        for i in out
    ]


def _summed(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0.0) + v
    return out


def reported_items(
    items: list[LineItem], pieces: dict[str, list[tuple[str, float]]]
) -> list[LineItem]:
    """The line items of a plan over ``pieces`` in the problem's periods, in period order
    and, within a period, in the order of the split plan."""
    owner = {n: name for name, ps in pieces.items() for n, _ in ps}
    bounds = piece_bounds(pieces)
    by_period: dict[str, list[LineItem]] = defaultdict(list)
    for item in items:
        period = owner.get(item.period, item.period)
        split = len(pieces.get(period, ())) > 1
        by_period[period].append(
            item.model_copy(
                update={
                    "period": period,
                    "start_period": owner.get(item.start_period, item.start_period),
                    "cost_by_period_usd": _regrouped(item.cost_by_period_usd, owner),
                    "served_months": list(bounds[item.period]) if split else None,
                }
            )
        )
    out: list[LineItem] = []
    for period in pieces:
        found = by_period.pop(period, [])
        if len(pieces[period]) > 1:
            span = {n: bounds[n] for n, _ in pieces[period]}
            found = _merged(found, span)
        out += found
    for rest in by_period.values():  # a line of no period (none expected): kept as is
        out += rest
    return out


def in_reporting_periods(plan: Plan, pieces: dict[str, list[tuple[str, float]]]) -> Plan:
    """``plan`` (solved over the pieces of ``pieces``) in the problem's periods: line
    items, totals by period, cost lines, cash-flow months, the currency view and the
    binding rows' period keys."""
    owner = {n: name for name, ps in pieces.items() for n, _ in ps}
    index = {n: i for i, n in enumerate(owner)}
    user_index = {name: i for i, name in enumerate(pieces)}
    to_user = {index[n]: user_index[owner[n]] for n in owner}
    totals = plan.totals.model_copy(update={"by_period": _regrouped(plan.totals.by_period, owner)})
    cost_lines = [
        c.model_copy(update={"cost_by_period_usd": _regrouped(c.cost_by_period_usd, owner)})
        for c in plan.cost_lines
    ]
    cash: list[CashFlowMonth] = [
        m.model_copy(update={"period": owner.get(m.period, m.period)}) for m in plan.cash_flow
    ]
    binding: list[Binding] = [
        b.model_copy(update={"key": _binding_key(b.key, to_user)}) for b in plan.binding
    ]
    update = {
        "line_items": reported_items(plan.line_items, pieces),
        "totals": totals,
        "cost_lines": cost_lines,
        "cash_flow": cash,
        "binding": binding,
    }
    if plan.in_currency is not None:
        view = plan.in_currency
        update["in_currency"] = view.model_copy(
            update={"by_period": _regrouped(view.by_period, owner)}
        )
    return plan.model_copy(update=update)


def _binding_key(key: dict, to_user: dict[int, int]) -> dict:
    """A binding row's key with its period (an index) as the problem period's index."""
    if isinstance(key.get("period"), int):
        return {**key, "period": to_user.get(key["period"], key["period"])}
    return dict(key)


def line_in_pieces(
    item: LineItem,
    pieces: dict[str, list[tuple[str, float]]],
    bounds: dict[str, tuple[float, float]],
    hours_at: Callable[[float], float],
) -> list[LineItem]:
    """One reported line as the lines of the pieces it covers: :func:`reported_items`
    taken back. A rent or owned-use line over several pieces becomes one per piece, its
    hours, cost and CO2e shared by the pieces' hours (``hours_at``: hours from the plan's
    start to a month); any other line goes to the piece it starts in. ``bounds``: piece
    name -> (start, end) months (:func:`piece_bounds`).

    Raises
    ------
    ValueError
        ``served_months`` covers no piece of the line's period.
    """
    mine = pieces.get(item.period, [(item.period, 0.0)])
    if len(mine) <= 1:
        return [item]
    first = bounds[mine[0][0]][0]
    span = item.served_months or [first, bounds[mine[-1][0]][1]]
    inside = [
        n for n, _ in mine if bounds[n][0] >= span[0] - 1e-6 and bounds[n][1] <= span[1] + 1e-6
    ]
    if not inside:
        raise ValueError(f"line {item.item} {item.offering}: served_months {span} in no piece")

    def start_of(name: str) -> str:
        if name == item.period:
            return inside[0]
        return pieces.get(name, [(name, 0.0)])[0][0]

    if item.item not in RUNNING:
        names = [inside[0]]
    else:
        names = inside
    total_h = hours_at(span[1]) - hours_at(span[0])
    out = []
    for n in names:
        share = (
            1.0 if len(names) == 1 else (hours_at(bounds[n][1]) - hours_at(bounds[n][0])) / total_h
        )
        by_period = {
            (n if k == item.period else start_of(k)): v * share
            for k, v in item.cost_by_period_usd.items()
        }
        out.append(
            item.model_copy(
                update={
                    "period": n,
                    "start_period": start_of(item.start_period) if item.start_period else "",
                    "hours": item.hours * share,
                    "cost_usd": item.cost_usd * share,
                    "co2e_t": item.co2e_t * share,
                    "cost_by_period_usd": by_period,
                    "served_months": None,
                }
            )
        )
    return out


def split_items(
    items: list[LineItem],
    pieces: dict[str, list[tuple[str, float]]],
    hours_at: Callable[[float], float],
) -> list[LineItem]:
    """Line items reported in the problem's periods, in the pieces of ``pieces``
    (:func:`line_in_pieces` on each)."""
    bounds = piece_bounds(pieces)
    return [x for item in items for x in line_in_pieces(item, pieces, bounds, hours_at)]


def pieces_of_items(
    items: list[LineItem], periods: list[tuple[str, float]]
) -> dict[str, list[tuple[str, float]]]:
    """The pieces the ``served_months`` of ``items`` cut the problem's ``periods`` (name,
    months) into: every start and end of a line inside a period is a cut; pieces named
    ``<period>-1``, ``<period>-2``, ... as the solver names them."""
    marks = {float(m) for i in items if i.served_months for m in i.served_months}
    out: dict[str, list[tuple[str, float]]] = {}
    at = 0.0
    names = {n for n, _ in periods}
    for name, months in periods:
        inside = sorted(m for m in marks if at + 1e-6 < m < at + months - 1e-6)
        if not inside:
            out[name] = [(name, months)]
        else:
            cuts = [at, *inside, at + months]
            sep = "-"
            while any(f"{name}{sep}{k}" in names for k in range(1, len(cuts))):
                sep += "-"
            out[name] = [
                (f"{name}{sep}{k + 1}", round(cuts[k + 1] - cuts[k], 6))
                for k in range(len(cuts) - 1)
            ]
        at += months
    return out
