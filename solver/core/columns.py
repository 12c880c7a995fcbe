"""Large problems: column generation over the options, a restricted MIP, a proven gap.

A problem with many offerings, workloads and monthly periods has millions of
(option, period, block) columns, and most of them can never pay: an option whose
units cost more per token/s than options with room to spare. Building them all costs
more time than solving. Here:

1. **Restricted master.** The model is built over a few options per workload (the
   cheapest per unit of service, rented and reserved ranked apart, enough of them that
   their availability covers the workload's peak twice, and the cheapest in whole units
   for the peak), plus every option that is not *priced* (below).
2. **Pricing.** Its LP relaxation is solved; from the row duals y, the reduced cost
   c_j - a_j^T y of every column left out is computed at once from the compiled tables
   (:class:`solver.core.reduced_costs.Pricing`: rent, CO2e, demand, availability,
   reserved capacity, quota, budget, period budget, carbon cap, provider share,
   redundancy, train_once, cuts, egress capacity), never by building it. Options with a
   negative reduced cost join the master; repeat until none is left: the restricted LP
   is then the full LP, a proven lower bound.
3. **Bound before convergence.** At any iteration, LP_restricted + sum over the columns
   left out of min(0, rc_j) x u_j is a valid lower bound on the full LP (Lagrangian
   relaxation with the box 0 <= x_j <= u_j; u_j is the availability cap of a column,
   implied by its ``availability`` rows, or 1 for a training choice). A row the master
   lacks takes dual 0, except the reserved capacity of a pool with nothing in the
   master, which takes minus the reservation's hourly rate for the row's hours: its
   commitments left out then keep a reduced cost >= 0 (a commitment costs at least its
   rate for the periods it covers; with provider shares, reservations are not priced),
   and the egress capacity of a provider the master does not route a workload's egress
   through, which takes min(0, c_e - y_serve): the missing egress variable's reduced cost
   is then >= 0 (docs/guides/large-problems.md, "Egress rows in the pricing").
4. **MIR cuts** (:class:`solver.core.cuts.Cuts`) on the demand rows, separated from each
   master LP once the pricing has converged (none while it goes on adding columns: a
   master's cuts give no bound before, :mod:`solver.core.bounds`), priced like any row:
   the LP must then pay for whole units, which lifts the bound toward the MIP's.
5. **Restricted MIP.** The MIP over the last master's options, with its cuts (they hold
   for every integer plan; on a large master only those its LP meets with equality,
   :data:`MIP_EVERY_CUT_UP_TO`), started from its LP rounded up, gives a plan that is
   feasible for the full problem (the columns left out are at 0). With time left, more
   cut rounds lift the bound only. The plan's gap is against that bound, never against
   the restricted MIP's own.

Priced options are cloud options without existing units (on-demand, spot and, without
provider shares, reserved) of inference and batch workloads without N+1, a traffic mix
or a fleet held over the day (``fleet: autoscale``, the default, or ``flat``: the
pricing has no deploy binaries nor ``fleet_*`` rows; only ``fleet: per_block`` is
priced), and training options on those pools; every other option (owned, existing
reservations, N+1, traffic mix, autoscaled or flat fleets, a switching cost: its ``start``
variables and ``fleet_start`` rows are not priced either) is always in the master.
Objectives with a second stage (min_carbon, lexicographic) are solved on the full model.

The pricing formula is checked against HiGHS's own reduced costs on the columns in
the master at every iteration: a mismatch is a bug in procure and stops the solve.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from solver.core.backends import SolveOptions, SolveResult, Termination
from solver.core.backends.base import relative_gap
from solver.core.backends.highs_backend import HighsSession
from solver.core.bounds import LPSolution, repaired_bound
from solver.core.compile import Compiled, with_options
from solver.core.cuts import Cuts
from solver.core.formulation.support import settle, support_modelled
from solver.core.matrix import LinearModel
from solver.core.model import build_model
from solver.core.reduced_costs import (
    Pricing,
    check_pricing,
    master_egress_prices,
    options_table,
    routed_workloads,
    support_priced,
)
from solver.core.time_budget import Budget, Phase
from solver.errors import NoPlanError
from solver.inputs.problem import InferenceWorkload
from solver.units import RENTED_MODES, RESERVED_TERM_MONTHS

log = logging.getLogger(__name__)

#: Objectives whose column costs the pricing knows (one stage).
PRICED_OBJECTIVES = ("min_cost", "min_npv", "cost_plus_carbon", "max_served")
#: ``auto`` uses column generation from this many priced columns on. Below it HiGHS's own
#: branch and bound on the full model proves a far tighter gap in the same time; far above
#: it the full model does not build and presolve in a solve's time (bench/archive/RESULTS-2026.md,
#: large problems).
AUTO_COLUMNS = 400_000
#: Options per workload in the first master (the cheapest per unit of service).
FIRST_OPTIONS_PER_WORKLOAD = 8
#: ... and until their availability covers this many times the workload's peak.
FIRST_ROOM_FACTOR = 2.0
#: Rounds of MIR cuts before the MIP (and as many again after it, time allowing).
MAX_CUT_ROUNDS = 8
#: Cuts are separated once no column prices negative, or once the bound is within this
#: share of the master's LP (the pricing has all but converged).
CUTS_NEAR = 1e-3
#: Shares of the CPU still to come (:mod:`solver.core.time_budget`: the rate this process
#: receives times the wall seconds left, less the reserve for the plan and the verifier),
#: counted when each phase begins, once the problem is compiled: the pricing may use
#: PRICING_SHARE of it; the cuts CUTS_SHARE of what the pricing leaves (so at least
#: 0.35 x 0.65 = 23% of the whole, more when the pricing converges early); the MIP the
#: rest (at least 42%). Counted on the CPU left rather than the wall clock, a loaded
#: machine or a slow compile shrinks every phase alike.
PRICING_SHARE = 0.35
CUTS_SHARE = 0.35
#: The restricted MIP keeps every cut up to this many master columns, and above it only
#: the cuts its LP meets with equality (the rest add nothing to its LP bound, and HiGHS's
#: root cut loop on a large master with all of them does not finish in a solve's time;
#: the gaps either way: bench/speed/scale.py, bench/archive/RESULTS-2026.md).
MIP_EVERY_CUT_UP_TO = 100_000
#: Options added per workload per pricing round (the most negative reduced costs).
ADDED_PER_WORKLOAD = 50
#: Where the master's LP rounded up breaks a row, the MIP over its support
#: (:func:`support_plan`) keeps per demand row this many more whole-unit columns, those of
#: least reduced cost, and may use this share of the MIP's time; its plan starts the MIP.
#: 10,000 x 200 x 12 (its round-1 master, 557,406 columns): 3 -> a plan of $3,014,746 in
#: 1.0 CPU s, 10 -> $2,984,646 in 2.6 s, 30 -> $2,927,985 in 9.8 s; the support alone has
#: none (bench/RESULTS.md, scale.py).
SUPPORT_ALTERNATIVES = 3
#: ... and, when that MIP has no plan, once more with this many per row. 10,000 x 200 x 12
#: with egress and support priced (round 1's master, 75,233 columns; load 13): 3 none in
#: 0.2 CPU s, 10 -> $2,995,340 in 2.6 CPU s, 20 -> $2,975,514 in 5.0 CPU s (optimal, each);
#: under a time limit 20 stopped at $3,098,528 (bench/RESULTS.md, first_plan.py).
SUPPORT_ALTERNATIVES_WIDE = 10
SUPPORT_SHARE = 0.25
#: When the support plan's gap against the bound is above this, pricing rounds may use
#: this share of the CPU left before the MIP (they lift the bound only; the MIP stays on
#: the master the plan came from).
BOUND_FIRST_GAP = 0.10
BOUND_FIRST_SHARE = 0.8
#: The restricted MIP after a support plan runs only when the CPU left for it is at least
#: this many times the last master LP's: its presolve and root solve that LP again and
#: more, and HiGHS reaches no interrupt point in some of it, so a MIP started with less
#: time than its root overruns the limit with nothing better to show (10,000 x 200 x 12,
#: load 5: given 17 s, it returned after 35 s; on a master whose LP took 2.1 s, presolve
#: 4 s and root 5 s; it improved on the support plan in none of 7 runs, bench/RESULTS.md).
MIP_ROOT_LPS = 5.0
#: ... and is given this share of the wall left: HiGHS stops past its limit (at load 3,
#: given 25.6 s it returned after 30.5 s), and the plan and the verifier come after it.
MIP_WALL_SHARE = 0.8
#: Whether the master LPs run HiGHS's presolve. Without it 10,000 x 200 x 12's first master
#: (557,406 columns, 102,304 rows) takes 3.45-3.87 CPU s against 5.25-5.72 s (the same
#: optimum; two runs each alternating, load 5.7-7.2), but its optimal vertex is another
#: one, whose support with 3 or 10 columns per demand row has no integer plan (20: a plan
#: in 6.6 CPU s): kept on until the support plan does not hang on the vertex.
MASTER_PRESOLVE = True


@dataclass
class ColumnReport:
    """How the column generation went (kept in the plan's compile report)."""

    options_total: int = 0
    options_priced: int = 0
    options_in_master: int = 0
    rounds: int = 0
    cut_rounds: int = 0
    converged: bool = False
    lp_bound: float | None = None
    lp_seconds: float = 0.0
    pricing_seconds: float = 0.0
    mip_seconds: float = 0.0
    build_seconds: float = 0.0
    support_plan_usd: float | None = None
    history: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "method": "columns",
            "options_total": self.options_total,
            "options_priced": self.options_priced,
            "options_in_master": self.options_in_master,
            "rounds": self.rounds,
            "cut_rounds": self.cut_rounds,
            "converged": self.converged,
            "lp_bound": self.lp_bound,
            "lp_seconds": round(self.lp_seconds, 3),
            "pricing_seconds": round(self.pricing_seconds, 3),
            "build_seconds": round(self.build_seconds, 3),
            "mip_seconds": round(self.mip_seconds, 3),
            "support_plan_usd": self.support_plan_usd,
            "history": self.history,
        }


def priced_mask(compiled: Compiled) -> np.ndarray:
    """Options that may be left out of the master and priced (see the module docstring)."""
    opt = compiled.options
    if compiled.problem.objective not in PRICED_OBJECTIVES or opt.empty:
        return np.zeros(len(opt), dtype=bool)
    pools = compiled.pools.set_index("pool_id")
    kind = opt["pool_id"].map(pools["kind"])
    existing = opt["pool_id"].map(pools["existing_units"]).fillna(0)
    # reservations are priced at their hourly rate where their pool is not in the master
    # (Pricing); a provider share would make that rate too low a bound: keep them in then
    shares = bool(compiled.problem.provider_share_max)
    modes = RENTED_MODES if shares else (*RENTED_MODES, *RESERVED_TERM_MONTHS)
    plain = {
        w.name
        for w in compiled.problem.workloads
        if not (
            isinstance(w, InferenceWorkload)
            and (
                w.n_plus_1
                or w.traffic_mix
                or w.fleet != "per_block"
                or w.switching_cost_usd
                or w.architecture != "aggregated"  # the disagg rows are not priced
            )
        )
    }
    # the pricing knows the support rows (formulation.support) for rented serving
    # options where every period is one month (reduced_costs.support_priced); other
    # options at a provider whose support is in the model are always in the master
    supported = opt["provider"].astype(str).isin(support_modelled(compiled))
    if support_priced(compiled):
        supported &= ~(opt["mode"].isin(RENTED_MODES) & (opt["workload_kind"] != "training"))
    return (
        (kind == "cloud")
        & opt["mode"].isin(modes)
        & (existing == 0)
        & opt["workload"].isin(plain)
        & ~supported
    ).to_numpy()


def priced_columns(compiled: Compiled, mask: np.ndarray | None = None) -> int:
    """How many model columns the priced options make (decides ``auto``); with ``mask``,
    those options instead (all of them: the full model's whole-unit and training columns)."""
    mask = priced_mask(compiled) if mask is None else mask
    if not mask.any():
        return 0
    opt = compiled.options[mask]
    serving = opt[opt["workload_kind"] != "training"]
    d = compiled.demand[compiled.demand["bucket"] < 0]
    per_workload = d.groupby("workload").size()  # periods x blocks
    n_b = max(len(compiled.blocks), 1)
    per_option = serving["workload"].map(per_workload).fillna(0).astype(float)
    per_option = per_option.where(serving["mode"].isin(RENTED_MODES), per_option / n_b)
    return int(per_option.sum()) + int((opt["workload_kind"] == "training").sum())


def use_columns(compiled: Compiled, method: str) -> bool:
    """Whether to solve by column generation: ``columns`` when it can, ``auto`` on large
    problems, ``full`` and ``root`` never."""
    if method not in ("columns", "auto") or compiled.problem.objective not in PRICED_OBJECTIVES:
        return False
    if compiled.problem.savings_plans:  # their rows are built by the full model only
        return False
    n = priced_columns(compiled)
    if method == "columns" or n == 0:
        return n > 0
    # options kept in the master (egress routed between prices, autoscaled fleets) count
    # too: the root's full model is as large (10,000 x 200 x 12 with egress routed: 55,344
    # priced columns of about 600,000; the root had no plan in 84 s, column generation one
    # in 44 s, bench/RESULTS.md)
    return n >= AUTO_COLUMNS or full_columns(compiled) >= AUTO_COLUMNS


def full_columns(compiled: Compiled) -> int:
    """The full model's whole-unit and training columns (as :func:`priced_columns` counts
    them) over every option."""
    return priced_columns(compiled, np.ones(len(compiled.options), dtype=bool))


def first_master(compiled: Compiled, mask: np.ndarray) -> np.ndarray:
    """Options of the first master: every option not priced, and per workload the
    cheapest priced ones per unit of service (USD per token/s, or per training run)
    until their availability covers twice the workload's peak, at least
    :data:`FIRST_OPTIONS_PER_WORKLOAD` of them."""
    opt = options_table(compiled)
    keep = ~mask
    pools = compiled.pools.set_index("pool_id")
    cand = opt[mask]
    serving = cand[cand["workload_kind"] != "training"]
    tps = serving["tokens_per_s_per_unit"].astype(float)
    score = serving["price_usd_per_hour"].astype(float) / tps.clip(lower=1e-12)
    room = serving["pool_id"].map(pools["availability_cap"]).astype(float) * tps
    peak = compiled.demand[compiled.demand["bucket"] < 0].groupby("workload")["demand"].max()
    # whole units: the cost of the peak served by this option alone (small workloads)
    need = serving["workload"].map(peak).astype(float) / tps
    units = pd.Series(np.ceil(need - 1e-9), index=serving.index)
    alone = units.clip(lower=1) * serving["price_usd_per_hour"].astype(float)
    # ranked apart: rented options, and reservations (paid for their whole term)
    group = serving["workload"] + np.where(serving["mode"].isin(RENTED_MODES), "|r", "|c")
    frame = pd.DataFrame({"w": group, "score": score, "room": room}).sort_values(
        ["w", "score"], kind="stable"
    )
    before = frame.groupby("w")["room"].cumsum() - frame["room"]
    rank = frame.groupby("w").cumcount()
    need = FIRST_ROOM_FACTOR * serving["workload"].map(peak).reindex(frame.index)
    chosen = frame.index[(rank < FIRST_OPTIONS_PER_WORKLOAD) | (before < need)]
    a_rank = alone.groupby(group).rank(method="first")
    chosen = chosen.union(a_rank.index[a_rank <= FIRST_OPTIONS_PER_WORKLOAD])
    train = cand[cand["workload_kind"] == "training"]
    # a job on reserved units pays nothing itself (the commitment does): rank it at its
    # units' reserved price for the job's hours, and apart from the rented ones
    reserved = ~train["mode"].isin(RENTED_MODES)
    usd = train["rent_usd"].astype(float) + train["energy_usd"].astype(float)
    usd = usd + reserved * (
        train["n_units"].astype(float)
        * train["price_usd_per_hour"].astype(float)
        * train["job_hours"].astype(float)
    )
    t_group = train["workload"] + np.where(reserved, "|c", "|r")
    t_rank = usd.groupby(t_group).rank(method="first")
    chosen = chosen.union(t_rank.index[t_rank <= FIRST_OPTIONS_PER_WORKLOAD])
    keep = keep.copy()
    keep[opt.index.get_indexer(chosen)] = True
    return keep


def _solve_lp(
    model: LinearModel, time_limit_s: float | None, presolve: bool = True
) -> LPSolution | str:
    """The LP relaxation of ``model`` with HiGHS, or HiGHS's status when not optimal;
    ``presolve`` False runs the simplex on the model as built (:data:`MASTER_PRESOLVE`)."""
    session = HighsSession(model)
    if session.infeasible_row:
        return "kInfeasible"
    relax(session)
    if not presolve:
        session.h.setOptionValue("presolve", "off")
    return run_lp(session, time_limit_s)


def relax(session: HighsSession) -> None:
    """Make every column of the session continuous (its LP relaxation)."""
    import highspy

    n = len(session.model.variables)
    if n:
        session.h.changeColsIntegrality(
            n, np.arange(n, dtype=np.int32), [highspy.HighsVarType.kContinuous] * n
        )


def run_lp(session: HighsSession, time_limit_s: float | None) -> LPSolution | str:
    """Solve the session's (relaxed) model as it stands, or HiGHS's status when not
    optimal."""
    if time_limit_s is not None:
        session.h.setOptionValue("time_limit", max(float(time_limit_s), 0.01))
    session.h.run()
    status = session.h.getModelStatus()
    name = (status.name if hasattr(status, "name") else str(status)).split(".")[-1]
    if name != "kOptimal":
        return name
    sol = session.h.getSolution()
    return LPSolution(
        objective=float(session.h.getInfo().objective_function_value),
        row_dual=np.asarray(sol.row_dual, dtype=float),
        col_dual=np.asarray(sol.col_dual, dtype=float),
        values=np.asarray(sol.col_value, dtype=float),
    )


class _Generation:
    """The column generation's state: the options kept, the cuts, the last master solved."""

    def __init__(self, compiled: Compiled, budget: Budget) -> None:
        self.compiled, self.budget = compiled, budget
        self.round_cpu_s = 0.0  # the CPU seconds of the last round (build, LP, pricing)
        self.lp_cpu_s = 0.0  # ... and of its master's LP
        mask = priced_mask(compiled)
        self.report = ColumnReport(
            options_total=len(compiled.options), options_priced=int(mask.sum())
        )
        self.pricing = Pricing(compiled, mask)
        self.routed = routed_workloads(compiled)
        self.keep = first_master(compiled, mask)
        pos = pd.Series(np.arange(len(compiled.options)), index=compiled.options["option_id"])
        self.s_pos = pos.reindex(self.pricing.columns["option_id"]).to_numpy()
        self.z_pos = pos.reindex(self.pricing.training["option_id"]).to_numpy()
        obj = self.pricing.columns["obj"].abs()
        self.tol = 1e-7 * max(1.0, float(obj.max()) if len(obj) else 1.0)
        self.cuts = Cuts()
        # the last master solved: (compiled, model without cuts, with them, its LP), and
        # whether its pricing found columns to add (None: the master changed since)
        self.last: tuple[Compiled, LinearModel, LinearModel, LPSolution] | None = None
        self.fresh: bool | None = None

    def run(self, *, cut_rounds: int, phase: Phase) -> bool:
        """Price (and, up to ``cut_rounds`` times, cut) until nothing is left to add or
        the next round (costed as the last one) does not fit in ``phase``'s share of the
        CPU (:mod:`solver.core.time_budget`); False when the first master's LP is infeasible
        (the full model then says why). A round separates cuts from its LP once no column
        prices negative; a master already solved is not solved again. The first master's
        LP may use all the time left (without it there is no plan); a later one what is
        left of the phase, and if it is cut off the last master and its bound stand."""
        r = self.report
        while True:
            if self.fresh is None:
                if self.last is not None and not phase.affords(self.round_cpu_s):
                    return True  # no round fits: the last master and its bound stand
                t0 = time.perf_counter()
                c0 = time.process_time()
                sub = with_options(self.compiled, self.compiled.options[self.keep])
                sub = replace(sub, egress_shared=self.pricing.shared)  # as the full model's
                base = build_model(sub, cap_demand_rows=True)
                model = self.cuts.add_to(base)
                t1 = time.perf_counter()
                c1 = time.process_time()
                lp = _solve_lp(
                    model,
                    self.budget.left_s() if self.last is None else phase.wall_s(),
                    presolve=MASTER_PRESOLVE,
                )
                t2 = time.perf_counter()
                self.lp_cpu_s = time.process_time() - c1
                r.build_seconds += t1 - t0
                r.lp_seconds += t2 - t1
                if isinstance(lp, str):
                    if self.last is not None:  # out of time: the last master and bound stand
                        return True
                    if lp in ("kInfeasible", "kUnboundedOrInfeasible"):
                        return False
                    raise NoPlanError(
                        f"column generation: the first master LP stopped ({lp}) before any plan",
                        field="--time-limit",
                        fix="give it more time (--time-limit S)",
                    )
                self.last = (sub, base, model, lp)
                self.fresh = self._price(model, lp, t0, t1, t2)
                self.round_cpu_s = time.process_time() - c0
            assert self.last is not None  # the first round solved a master or returned
            sub, base, model, lp = self.last
            negative = self.fresh
            # cuts once the pricing has converged: before, a master's cuts give no bound
            # (their duals are 0 in the repaired one) and slow its LP (10,000 x 200 x 12:
            # a round with 3,200 cuts took 11.8 s against 6 s, its bound $830,846
            # against the $2,562,648 the same round without them gives)
            # (or once the bound is within CUTS_NEAR of the master's LP: a degenerate
            # pricing can add a few columns a round for long, 10,000 x 200 x 12: 3, then 8
            # at $2,562,648 against $2,563,019)
            near = r.lp_bound is not None and lp.objective - r.lp_bound <= CUTS_NEAR * abs(
                lp.objective
            )
            cut = (
                r.cut_rounds < cut_rounds
                and (not negative or near)
                and bool(self.cuts.separate(model, lp.values))
            )
            r.cut_rounds += cut
            if not negative and not cut:
                r.converged = True
                return True
            self.fresh = None  # columns or cuts were added: the master changes
            r.converged = False

    def _price(self, model: LinearModel, lp: LPSolution, t0: float, t1: float, t2: float) -> bool:
        """Reduced costs of the options left out, the bound, and the options to add; True
        when some column has a negative reduced cost."""
        pricing, r, keep = self.pricing, self.report, self.keep
        duals = pricing.duals(model, lp.row_dual)
        duals["_cuts"] = self.cuts.frame(duals)
        assert self.last is not None  # set with this master before its pricing
        duals["_egress_master"] = master_egress_prices(
            self.last[0].options, self.routed, self.pricing.shared
        )
        rc_s, rc_z = pricing.reduced_costs(duals)
        check_pricing(model, lp.col_dual, pricing, rc_s, rc_z)
        out_s, out_z = ~keep[self.s_pos], ~keep[self.z_pos]
        neg_s = out_s & (rc_s < -self.tol)
        neg_z = out_z & (rc_z < -self.tol)
        bound = lp.objective + float(
            np.sum(np.minimum(rc_s[out_s], 0.0) * pricing.columns["ub"].to_numpy()[out_s])
            + np.sum(np.minimum(rc_z[out_z], 0.0))
        )
        if n_neg_out := int(neg_s.sum() + neg_z.sum()):
            repaired = repaired_bound(
                pricing, model, lp, duals, (rc_s, rc_z), (out_s, out_z), self.tol
            )
            bound = max(bound, repaired)
            log.info("repaired-dual bound $%.0f over %d negative columns", repaired, n_neg_out)
        r.pricing_seconds += time.perf_counter() - t2
        r.rounds += 1
        r.lp_bound = bound if r.lp_bound is None else max(r.lp_bound, bound)
        n_neg = int(neg_s.sum() + neg_z.sum())
        log.info(
            "round %d: %d options, %d columns, %d rows, build %.1f s, LP %.1f s, $%.0f, "
            "bound $%.0f, %d negative, %d cuts", r.rounds, keep.sum(), len(model.variables),
            len(model.rows), t1 - t0, t2 - t1, lp.objective, bound, n_neg, len(self.cuts),
        )  # fmt: skip
        r.history.append(
            {
                "round": r.rounds,
                "options_in_master": int(keep.sum()),
                "lp_usd": lp.objective,
                "bound_usd": bound,
                "columns_priced_negative": n_neg,
                "cuts": len(self.cuts),
            }
        )
        if not n_neg:
            return False
        self.keep = keep = keep.copy()
        for frame, rc, neg, where in (
            (pricing.columns, rc_s, neg_s, self.s_pos),
            (pricing.training, rc_z, neg_z, self.z_pos),
        ):
            if neg.any():
                best = (
                    pd.DataFrame(
                        {"w": frame["workload"].to_numpy()[neg], "rc": rc[neg], "p": where[neg]}
                    )
                    .groupby(["w", "p"])["rc"].min().reset_index()
                    .sort_values("rc").groupby("w").head(ADDED_PER_WORKLOAD)
                )  # fmt: skip
                keep[best["p"].to_numpy(int)] = True
        return True


def solve_by_columns(
    compiled: Compiled, options: SolveOptions, started: float
) -> tuple[Compiled, LinearModel, SolveResult, ColumnReport] | None:
    """Column generation, MIR cuts, then the MIP over the master with its cuts (module
    docstring).

    ``started`` is the ``time.perf_counter()`` at which the solve began: the time limit
    holds from there, with :data:`solver.core.time_budget.RESERVE_SHARE` of it kept for the
    plan and the verifier. What is left once the problem is compiled is shared by the CPU
    this process receives (:mod:`solver.core.time_budget`): the pricing
    :data:`PRICING_SHARE`, the cuts :data:`CUTS_SHARE` of what it leaves, the MIP the
    rest, and more cuts (the bound only) if the MIP ends early. Returns None when the
    first master's LP is not feasible (the caller then solves the full model, which says
    why).
    """
    budget = Budget.of(options.time_limit_s, started)
    log.info("compiled: %d options; column generation starts", len(compiled.options))
    g = _Generation(compiled, budget)
    if not g.run(cut_rounds=0, phase=budget.phase(PRICING_SHARE)):
        return None
    g.run(cut_rounds=MAX_CUT_ROUNDS, phase=budget.phase(CUTS_SHARE))
    assert g.last is not None  # the first run solved a master
    sub, base, model, lp = planned = g.last
    g.report.options_in_master = len(sub.options)
    t3 = time.perf_counter()
    session, model, start, first = _master_plan(model, lp, options, budget)
    if first is not None:
        g.report.support_plan_usd = first.objective if first.has_solution else None
        gap = relative_gap(first.objective, g.report.lp_bound) if first.has_solution else None
        if gap is not None and gap > BOUND_FIRST_GAP:
            # a plan stands and its bound is far: pricing and cut rounds lift the bound,
            # and the last master's support plan (its cuts make its LP pay for whole
            # units) replaces it if cheaper (10k x 200 x 12: the support plan $2,975,637
            # against round 1's $718,643; the MIP found no better plan in 25-68 s; after
            # the pricing converged, a master with 3,200 cuts: LP $2,785,412 against
            # $2,563,019, its support plan $2,803,923 against $2,952,800)
            g.run(cut_rounds=MAX_CUT_ROUNDS, phase=budget.phase(BOUND_FIRST_SHARE))
            last, was = g.last, first.objective
            affords = budget.phase(SUPPORT_SHARE).affords(g.round_cpu_s / 4)
            if last is not None and last is not planned and affords and was is not None:
                again = _master_plan(last[2], last[3], options, budget)
                better = again[3]
                if better is not None and better.has_solution and better.objective is not None:
                    if better.objective < was:
                        sub, base, _, lp = last
                        session, model, start, first = again
                        g.report.options_in_master = len(sub.options)
                        g.report.support_plan_usd = better.objective
    mip_phase = budget.phase(1.0)
    if (
        first is not None
        and first.has_solution
        and not mip_phase.affords(MIP_ROOT_LPS * g.lp_cpu_s)
    ):  # no time for the MIP's root: the support plan stands
        log.info("restricted MIP skipped: %.1f CPU s left", budget.cpu_left_s() or 0.0)
        mip = replace(first, message="the MIP over the master LP's support (no time for more)")
    else:
        mip_wall = mip_phase.wall_s(MIP_WALL_SHARE)
        mip = session.solve(replace(options, time_limit_s=mip_wall), start=start)
    g.report.mip_seconds = time.perf_counter() - t3
    if not mip.has_solution and first is not None and first.has_solution:
        mip = replace(first, message="the MIP over the master LP's support (no better in time)")
    if not mip.has_solution:  # the limit came first: the LP rounded up, if it holds
        mip = rounded_plan(model, lp.values, mip)
    if mip.has_solution:
        g.run(cut_rounds=2 * MAX_CUT_ROUNDS, phase=budget.phase(1.0))  # lifts the bound only
    log.info("column generation done: plan $%s, bound $%.0f", mip.objective, g.report.lp_bound)
    return sub, base, _with_full_bound(mip, g.report.lp_bound, options.relative_gap), g.report


def _master_plan(
    model: LinearModel, lp: LPSolution, options: SolveOptions, budget: Budget
) -> tuple[HighsSession, LinearModel, np.ndarray, SolveResult | None]:
    """The MIP session over a master (with only its tight cuts when large), its start
    (the LP rounded up), and, where that rounding breaks a row, the plan from the LP's
    support (:func:`support_plan`, which then starts the MIP), else None."""
    # the cuts hold for every integer plan: the master's MIP keeps its plans and gains
    # their bound (10k x 200 x 12: $1,841,294 with them, $1,979,629 without)
    if len(model.variables) > MIP_EVERY_CUT_UP_TO:
        model = _tight_cuts(model, lp.values)
    session = HighsSession(model)
    start, first = rounded(model, lp.values), None
    if violated_rows(model, start):  # the rounding breaks a row: a plan from the support
        mip_limit = budget.phase(1.0).wall_s()
        share = None if mip_limit is None else mip_limit * SUPPORT_SHARE
        first = support_plan(session, lp, replace(options, time_limit_s=share))
        if first.termination == Termination.INFEASIBLE:  # too few ways round: more of them
            share = budget.phase(SUPPORT_SHARE).wall_s()
            first = support_plan(
                session, lp, replace(options, time_limit_s=share), SUPPORT_ALTERNATIVES_WIDE
            )
        log.info("support plan: %s, $%s", first.termination.value, first.objective)
        if first.has_solution and first.values is not None:
            start = first.values
    return session, model, start, first


def support_plan(
    session: HighsSession,
    lp: LPSolution,
    options: SolveOptions,
    per_row: int = SUPPORT_ALTERNATIVES,
) -> SolveResult:
    """The MIP over the whole-unit columns the master's LP uses and, per demand row, the
    ``per_row`` of least reduced cost at its duals (the cheapest other
    ways to serve it), the other whole-unit columns at their lower bound; the session's
    bounds are restored after. Its plan is a plan of the master (the same rows, tighter
    bounds), found in a few CPU seconds where the LP rounded up breaks a pool's
    availability (several workloads' fractional units on one pool, each rounded up)."""
    model = session.model
    v = model.variables
    integer = session.integer
    lb, ub = v["lb"].to_numpy(float), v["ub"].to_numpy(float)
    free = integer & (lp.values > lb + 1e-7)
    free |= cheapest_in_demand_rows(model, integer, lp.col_dual, per_row)
    fix = np.flatnonzero(integer & ~free).astype(np.int32)
    session.set_bounds(fix, lb[fix], lb[fix])
    try:
        return session.solve(replace(options, start_heuristic=False))
    finally:
        session.set_bounds(fix, lb[fix], ub[fix])


def cheapest_in_demand_rows(
    model: LinearModel, integer: np.ndarray, reduced: np.ndarray, per_row: int
) -> np.ndarray:
    """Mask of the ``per_row`` whole-unit columns of least ``reduced`` cost (USD per unit
    at an LP's duals) in each demand row (positive coefficient: they serve it)."""
    out = np.zeros(len(integer), dtype=bool)
    for row in model.rows:
        if row.family != "demand" or not row.coefs or per_row <= 0:
            continue
        cols = np.fromiter(row.coefs.keys(), dtype=np.int64, count=len(row.coefs))
        coef = np.fromiter(row.coefs.values(), dtype=float, count=len(row.coefs))
        cols = cols[integer[cols] & (coef > 0)]
        if len(cols) > per_row:
            cols = cols[np.argpartition(reduced[cols], per_row - 1)[:per_row]]
        out[cols] = True
    return out


def _tight_cuts(model: LinearModel, values: np.ndarray) -> LinearModel:
    """The model with only the cuts its LP solution ``values`` meets with equality (the
    others add nothing to its bound and slow the MIP's root)."""
    rows = [
        row
        for row in model.rows
        if row.family != Cuts.FAMILY
        or sum(c * values[j] for j, c in row.coefs.items()) <= row.rhs + 1e-6 * max(1.0, row.rhs)
    ]
    return LinearModel(model.variables, rows, model.objective, model.expressions)


def rounded(model: LinearModel, values: np.ndarray) -> np.ndarray:
    """A MIP start from the master LP: every whole-unit count rounded up (more units never
    break a demand row), each training job on its cluster with the largest share, binaries
    of N+1 as they come. HiGHS repairs what the rounding breaks (availability, budgets)."""
    v = model.variables
    start = values.copy()
    integer = v["integer"].to_numpy(bool)
    start[integer] = np.ceil(values[integer] - 1e-6)
    z = np.flatnonzero((v["kind"] == "z").to_numpy())
    if len(z):
        start[z] = 0.0
        best = pd.Series(values[z], index=z).groupby(v["workload"].to_numpy()[z]).idxmax()
        start[best.to_numpy(int)] = 1.0
    return settle(model, np.maximum(start, v["lb"].to_numpy(float)))  # support from its spend


def violated_rows(model: LinearModel, x: np.ndarray, tol: float = 1e-6) -> list[str]:
    """Names of the rows (and variable bounds, integrality) ``x`` breaks, each by more
    than ``tol`` relative to max(1, |rhs|)."""
    v = model.variables
    bad = []
    lb, ub = v["lb"].to_numpy(float), v["ub"].to_numpy(float)
    out = (x < lb - tol) | (x > ub + tol)
    integer = v["integer"].to_numpy(bool)
    out |= integer & (np.abs(x - np.round(x)) > tol)
    bad.extend(v["name"].to_numpy()[out].tolist()[:20])
    for row in model.rows:
        act = sum(c * x[j] for j, c in row.coefs.items())
        slack = tol * max(1.0, abs(row.rhs))
        if (
            (row.sense == ">=" and act < row.rhs - slack)
            or (row.sense == "<=" and act > row.rhs + slack)
            or (row.sense == "==" and abs(act - row.rhs) > slack)
        ):
            bad.append(row.name)
    return bad


def rounded_plan(model: LinearModel, values: np.ndarray, mip: SolveResult) -> SolveResult:
    """The master's LP rounded up (:func:`rounded`) as the plan when it meets every row
    of the master (a plan of the full problem: the columns left out are at 0), else
    ``mip`` as it was. Its gap is set against the full bound by the caller; the verifier
    checks it like any plan."""
    x = rounded(model, values)
    if violated_rows(model, x):
        return mip
    objective = model.objective.value(x)
    return replace(
        mip,
        termination=Termination.FEASIBLE,
        values=x,
        objective=objective,
        bound=None,
        gap=None,
        message="the master LP rounded up (the MIP found no plan within its time)",
    )


def _with_full_bound(mip: SolveResult, bound: float | None, wanted_gap: float) -> SolveResult:
    """The restricted MIP's result with the gap against the full problem's lower bound."""
    if not mip.has_solution or bound is None:
        return mip
    best_bound = bound
    gap = relative_gap(mip.objective, best_bound)
    proven = gap is not None and gap <= wanted_gap * 1.0001
    return replace(
        mip,
        bound=best_bound,
        gap=gap,
        termination=Termination.OPTIMAL if proven else Termination.FEASIBLE,
        message="" if proven else "gap against the full LP bound",
    )
