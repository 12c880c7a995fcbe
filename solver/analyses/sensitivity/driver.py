"""The sensitivity analysis of a solved plan in one call: its shadow prices and reduced
costs, then the break-even prices of the pools in the plan, the closest others and every
quoted one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pandas as pd

from solver.analyses.sensitivity.break_even import break_even_prices
from solver.analyses.sensitivity.duals import shadow_prices
from solver.analyses.sensitivity.results import (
    BreakEven,
    SensitivityReport,
)
from solver.core.compile import Compiled
from solver.core.model import has_second_stage
from solver.core.restrictions import period_restrictions
from solver.solve import Solution


def quoted_pool_ids(pools: pd.DataFrame) -> list[str]:
    """The pools whose price is a vendor quote (``price_confidence`` quote)."""
    if "price_confidence" not in pools.columns:
        return []
    return sorted(pools.loc[pools["price_confidence"] == "quote", "pool_id"].astype(str))


def sensitivity_report(
    solution: Solution,
    *,
    break_even_limit: int | None = 12,
    solver: str = "highspy",
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
) -> SensitivityReport:
    """Shadow prices, reduced costs and break-even prices of a solved problem.

    ``deadline`` (a ``time.perf_counter()`` time) bounds the break-even search: pools
    not reached by then are left out, and the note says how many were done.
    """
    report = shadow_prices(solution, solver=solver)
    left_out: list[str] = []
    rows = break_even_prices(
        solution,
        limit=break_even_limit,
        solver=solver,
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        deadline=deadline,
        left_out=left_out,
    )
    # Quoted prices (confidence quote: solver/inputs/quotes.py) are always among the pools
    # searched, whatever the limit: "at what quote does the reservation pay" is the question.
    done = {b.pool_id for b in rows} | {p for b in rows for p in b.same_as}
    quoted = quoted_pool_ids(solution.compiled.pools)
    if break_even_limit is not None and set(quoted) - done:
        rows += break_even_prices(
            solution,
            pools=[p for p in quoted if p not in done],
            solver=solver,
            workers=workers,
            scheduler=scheduler,
            deadline=deadline,
            left_out=left_out,
        )
        rows.sort(key=lambda b: (b.change_pct is None, abs(b.change_pct or 0.0), b.pool_id))
    note = (
        "exact (Newton on the optimal cost as a function of the price: each step a plan "
        "using the pool below the cost to beat, the last a proof that none is, to a 1e-6 "
        "relative gap); pools in the plan and "
        + ("all others" if break_even_limit is None else f"the {break_even_limit} closest others")
    )
    if left_out:
        shown = ", ".join(sorted(left_out)[:10]) + (", ..." if len(left_out) > 10 else "")
        note += (
            f"; stopped at the time limit with {len(rows)} pools done, {len(left_out)} left "
            f"out: {shown}"
        )
    elif deadline is not None and time.perf_counter() > deadline:
        note += f"; stopped at the time limit with {len(rows)} pools done"
    if has_second_stage(solution.compiled.problem):
        note = "not computed: prices do not enter a carbon-first objective"
    rows = period_blocked(rows, solution.compiled)
    return report.model_copy(
        update={
            "break_even": rows,
            "break_even_tolerance": note,
            "break_even_left_out": sorted(left_out),
        }
    )


def period_blocked(rows: list[BreakEven], compiled: Compiled) -> list[BreakEven]:
    """Break-even rows of pools that no period lets serve (every period outlives the
    pool's server life or reservation term: :mod:`solver.core.restrictions`), with a note
    that says so instead of "no feasible plan can use it at this price": no price moves
    them, and the plan's ``period_structure`` warning prices the split that would."""
    n_periods = len(compiled.periods)
    blocked: dict[str, tuple[int, float]] = {}
    for r in period_restrictions(compiled):
        for pool in r.pools:
            count, _ = blocked.get(pool, (0, r.span_months))
            blocked[pool] = (count + 1, r.span_months)
    out = []
    for b in rows:
        count, span = blocked.get(b.pool_id, (0, 0.0))
        if b.break_even_price is None and count == n_periods:
            unit = "server life" if b.mode == "owned" else "term"
            note = (
                f"every period is longer than its {span:g}-month {unit}, so no plan can use "
                "it: see the period_structure warning"
            )
            b = b.model_copy(update={"note": note})
        out.append(b)
    return out
