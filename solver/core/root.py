"""Large problems whose full model fits: root cuts, a plan from the LP, reduced-cost fixing.

HiGHS spends most of a large MIP's time before its first good plan: presolve, restarts,
its own cut rounds, many times its LP relaxation's (bench/archive/RESULTS-2026.md, large problems).
Most of the integrality gap there is one thing, whole units against fractional demand,
and the MIR cuts of :class:`solver.core.cuts.Cuts` close it at the root. So, on one HiGHS
session:

1. **LP relaxation** of the full model (demand rows capped, ``build_model``'s
   ``cap_demand_rows``: the same integer plans, a tighter LP).
2. **MIR cuts** on the demand rows, added in place and the LP re-solved warm, until no
   cut is violated (a few rounds): the LP bound ``LB``, valid for every integer plan.
3. **A plan from the LP's support**: the MIP over the whole-unit columns the cut LP uses
   (or that cost nothing more at its duals), with the cuts. Its plan (``UB``) is
   feasible for the full problem; its gap is against ``LB``.
4. **Reduced-cost fixing** (Crowder, Johnson and Padberg, Operations Research 31(5),
   1983; Atamturk, Nemhauser and Savelsbergh, J. Heuristics 1, 1996, for integer
   variables): with ``d_j`` the cut LP's reduced cost of a
   whole-unit column at its lower bound, every plan with one more unit of ``j`` costs at
   least ``LB + d_j``. Columns with ``d_j > UB - LB`` are fixed at their lower bound
   (no plan cheaper than UB uses them), and the MIP over the rest, started from UB,
   finds the full problem's optimum; its dual bound is the full problem's (when it stops
   at the time limit, ``min(its bound, LB + min fixed d_j)``, never below ``LB``).

Step 4 runs only when step 3's plan is not within the gap asked for. Nothing is assumed
about the plan: the verifier checks it like any other.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

from solver.core.backends import SolveOptions, SolveResult, Termination
from solver.core.backends.base import relative_gap
from solver.core.backends.highs_backend import HighsSession
from solver.core.columns import (
    AUTO_COLUMNS,
    PRICED_OBJECTIVES,
    LPSolution,
    priced_columns,
    relax,
    rounded,
    run_lp,
    use_columns,
)
from solver.core.compile import Compiled
from solver.core.cuts import Cuts
from solver.core.matrix import LinearModel
from solver.core.model import build_model
from solver.core.time_budget import Budget

log = logging.getLogger(__name__)

#: Priced columns (:func:`solver.core.columns.priced_columns`) from which ``auto`` solves
#: at the root; below, one HiGHS MIP (every shipped problem: at most 130). About where the
#: root becomes as fast as HiGHS's MIP, and faster above (``bench/speed/scale.py --grid
#: root-threshold``, bench/archive/RESULTS-2026.md).
ROOT_COLUMNS = 2_000
#: Cut rounds at most, and the share of the CPU still to come once the model is built
#: that they may use (:mod:`solver.core.time_budget`: measured by the CPU this process
#: receives, so a loaded machine shrinks every phase alike)
MAX_ROOT_ROUNDS = 10
ROOT_CUTS_SHARE = 0.35
#: The support's MIP stops at this share of the gap asked for (its own gap is against its
#: own bound, above LB: the plan needs room below the gap against LB).
SUPPORT_GAP_SHARE = 0.5


@dataclass
class RootReport:
    """How a root solve went (dollars; seconds from the LP's start)."""

    lp_usd: float = 0.0
    cut_rounds: int = 0
    cuts: int = 0
    bound_usd: float = 0.0  # the LP with its cuts: LB
    support_columns: int = 0
    support_plan_usd: float | None = None  # UB
    fixed_by_reduced_cost: int = 0
    final_bound_usd: float | None = None
    lp_seconds: float = 0.0
    cut_seconds: float = 0.0
    support_mip_seconds: float = 0.0
    mip_seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def use_root(compiled: Compiled, method: str) -> bool:
    """Whether to solve at the root: ``root`` when the objective allows it, ``auto`` on
    problems from :data:`ROOT_COLUMNS` to :data:`solver.core.columns.AUTO_COLUMNS` priced
    columns."""
    if method not in ("root", "auto") or compiled.problem.objective not in PRICED_OBJECTIVES:
        return False
    if compiled.problem.savings_plans:  # their rows are built by the full model only
        return False
    if method == "root":
        return True
    return ROOT_COLUMNS <= priced_columns(compiled) < AUTO_COLUMNS and not use_columns(
        compiled, "auto"
    )


def _cut_lp(
    session: HighsSession, model: LinearModel, r: RootReport, budget: Budget
) -> LPSolution | None:
    """Steps 1 and 2: the LP relaxation, then MIR cut rounds on it (in place, warm) until
    none is violated or the next round (costed as the last) does not fit in
    :data:`ROOT_CUTS_SHARE` of the CPU left (:mod:`solver.core.time_budget`); the last LP
    solved, or None when the first is not optimal."""
    import highspy

    relax(session)
    t0 = time.perf_counter()
    lp = run_lp(session, budget.left_s())
    r.lp_seconds = time.perf_counter() - t0
    if isinstance(lp, str):
        return None
    r.lp_usd = lp.objective
    cuts = Cuts()
    phase = budget.phase(ROOT_CUTS_SHARE)
    while r.cut_rounds < MAX_ROOT_ROUNDS and phase.affords():
        added = cuts.separate(model, lp.values)
        if not added:
            break
        for row in added:
            session.add_row(row.coefs, row.rhs, highspy.kHighsInf)
        again = run_lp(session, phase.wall_s())
        phase.round_done()
        if isinstance(again, str):  # out of time: the last LP's bound and duals stand
            break
        lp = again
        r.cut_rounds += 1
    r.cut_seconds = time.perf_counter() - t0 - r.lp_seconds
    r.cuts, r.bound_usd = len(cuts), lp.objective
    log.info("root: LP $%.0f, %d cuts, bound $%.0f", r.lp_usd, r.cuts, r.bound_usd)
    return lp


def _plan(result: SolveResult) -> tuple[float, np.ndarray] | None:
    """(objective in USD, values) of a result that has a plan, else None."""
    if not result.has_solution or result.objective is None or result.values is None:
        return None
    return result.objective, result.values


def solve_at_root(
    compiled: Compiled, options: SolveOptions, started: float
) -> tuple[Compiled, LinearModel, SolveResult, RootReport] | None:
    """Steps 1-4 of the module docstring on the full model.

    ``started`` is the ``time.perf_counter()`` at which the solve began: the time limit
    holds from there (:data:`solver.core.time_budget.RESERVE_SHARE` of it kept for the plan
    and the verifier; cuts within :data:`ROOT_CUTS_SHARE` of the CPU left, the support's
    MIP half of what is then left, the last MIP the rest). Returns, as
    :func:`solver.core.columns.solve_by_columns` does, the compiled problem, the model (without
    its cuts: the plan's values are per column), the result with its gap against the
    bound above, and the report; None when the LP relaxation is not solved to
    optimality (the caller then solves the full MIP, which says why).
    """
    import highspy

    budget = Budget.of(options.time_limit_s, started)
    model = build_model(compiled, cap_demand_rows=True)
    t0 = time.perf_counter()
    session = HighsSession(model)
    if session.infeasible_row:
        return None
    r = RootReport()
    lp = _cut_lp(session, model, r, budget)
    if lp is None:
        return None
    bound, values, reduced = lp.objective, lp.values, lp.col_dual
    v = model.variables
    cols = np.arange(len(v), dtype=np.int32)
    integer = session.integer
    lb = v["lb"].to_numpy(float)
    ub = v["ub"].to_numpy(float)
    session.h.changeColsIntegrality(
        len(v),
        cols,
        [highspy.HighsVarType.kInteger if k else highspy.HighsVarType.kContinuous for k in integer],
    )

    def mip(share: float, start: np.ndarray, gap: float) -> SolveResult:
        time_s = budget.phase(share).wall_s()
        t = time.perf_counter()
        result = session.solve(
            replace(options, time_limit_s=time_s, relative_gap=gap, start_heuristic=False), start
        )
        return replace(result, solve_seconds=time.perf_counter() - t)

    # step 3: whole-unit columns at 0 in the LP that would cost more are left out
    off = integer & (values <= lb + 1e-9) & (reduced > 1e-7 * max(1.0, abs(bound)))
    r.support_columns = int(len(v) - off.sum())
    session.set_bounds(cols[off], lb[off], lb[off])
    best = mip(0.5, rounded(model, values), options.relative_gap * SUPPORT_GAP_SHARE)
    r.support_mip_seconds = best.solve_seconds
    support = _plan(best)
    r.support_plan_usd = support[0] if support else None
    log.info("root: support MIP over %d columns: %s", r.support_columns, best.termination.value)
    final_bound = bound
    support_gap = relative_gap(support[0], bound) if support else None
    if support_gap is None or support_gap > options.relative_gap:
        # step 4: fix what no plan cheaper than the support's uses (without one: nothing)
        room = support[0] - bound if support else np.inf
        fixed = integer & (reduced > room + 1e-6 * max(1.0, abs(bound)))
        session.set_bounds(cols, lb, np.where(fixed, lb, ub))
        r.fixed_by_reduced_cost = int(fixed.sum())
        start = support[1] if support else rounded(model, values)
        result = mip(1.0, start, options.relative_gap)
        r.mip_seconds = result.solve_seconds
        log.info("root: MIP, %d columns fixed: %s", r.fixed_by_reduced_cost, result.termination)
        last = _plan(result)
        if last is not None and (support is None or last[0] <= support[0]):
            beyond = bound + float(reduced[fixed].min()) if fixed.any() else np.inf
            mip_bound = result.bound if result.bound is not None else bound
            final_bound = max(bound, min(mip_bound, beyond))
            best = result
        elif support is None:
            best = result
    if not best.has_solution:
        return compiled, model, replace(best, solve_seconds=time.perf_counter() - t0), r
    r.final_bound_usd = final_bound
    gap = relative_gap(best.objective, final_bound)
    proven = gap is not None and gap <= options.relative_gap * 1.0001
    result = replace(
        best,
        bound=final_bound,
        gap=gap,
        termination=Termination.OPTIMAL if proven else Termination.FEASIBLE,
        message="" if proven else "gap against the root LP bound with cuts",
        solve_seconds=time.perf_counter() - t0,
    )
    return compiled, model, result, r
