"""Large problems: column generation over the options, a restricted MIP, a proven gap.

A problem with many offerings, workloads and monthly periods has millions of
(option, period, block) columns, and most of them can never pay: an option whose
units cost more per token/s than options with room to spare. Building them all costs
more time than solving. Here (issue 14):

1. **Restricted master.** The model is built over a few options per workload (the
   cheapest per unit of service, rented and reserved ranked apart, enough of them that
   their availability covers the workload's peak twice, and the cheapest in whole units
   for the peak), plus every option that is not *priced* (below).
2. **Pricing.** Its LP relaxation is solved; from the row duals y, the reduced cost
   c_j - a_j^T y of every column left out is computed at once from the compiled tables
   (:class:`_Pricing`: rent, CO2e, demand, availability, reserved capacity, quota, budget,
   period budget, carbon cap, provider share, redundancy, train_once, cuts), never by
   building it. Options with a negative reduced cost join the master; repeat until none
   is left: the restricted LP is then the full LP, a proven lower bound.
3. **Bound before convergence.** At any iteration, LP_restricted + sum over the columns
   left out of min(0, rc_j) x u_j is a valid lower bound on the full LP (Lagrangian
   relaxation with the box 0 <= x_j <= u_j; u_j is the availability cap of a column,
   implied by its ``availability`` rows, or 1 for a training choice). A row the master
   lacks takes dual 0, except the reserved capacity of a pool with nothing in the
   master, which takes minus the reservation's hourly rate for the row's hours: its
   commitments left out then keep a reduced cost >= 0 (a commitment costs at least its
   rate for the periods it covers; with provider shares, reservations are not priced).
4. **MIR cuts** (:class:`Cuts`) on the demand rows, separated from each master LP once
   the pricing has converged (and while it goes on adding columns), priced like any
   row: the LP must then pay for whole units, which lifts the bound toward the MIP's.
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
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt
import pandas as pd

from solver.core.backends import SolveOptions, SolveResult, Termination
from solver.core.backends.base import relative_gap
from solver.core.backends.highs_backend import HighsSession
from solver.core.budget import Budget, Phase
from solver.core.compile import Compiled, with_options
from solver.core.dominance import served_capacity
from solver.core.families import new_row
from solver.core.ledger import discount_factors
from solver.core.matrix import LinearModel, Row
from solver.core.model import build_model
from solver.errors import NoPlanError, ProcureError
from solver.inputs.problem import InferenceWorkload
from solver.units import RENTED_MODES, RESERVED_TERM_MONTHS

log = logging.getLogger(__name__)

#: Objectives whose column costs the pricing knows (one stage).
PRICED_OBJECTIVES = ("min_cost", "min_npv", "cost_plus_carbon", "max_served")
#: ``auto`` uses column generation from this many priced columns on. Below it HiGHS's own
#: branch and bound on the full model proves a far tighter gap in the same time (measured,
#: bench/RESULTS.md, issue 14: 10k offerings x 50 workloads x 36 months, 372,526 priced
#: columns before solver.dominance's pruning: 0.49% in 57 s end to end, against 8.3% by
#: columns; 144,988 after it: 0.44% in 33 s). At 10k x 200 x 12 (1.22M after pruning) the
#: full model does not build and presolve within 60 s.
AUTO_COLUMNS = 400_000
#: Options per workload in the first master (the cheapest per unit of service).
FIRST_OPTIONS_PER_WORKLOAD = 8
#: ... and until their availability covers this many times the workload's peak.
FIRST_ROOM_FACTOR = 2.0
#: Rounds of MIR cuts before the MIP (and as many again after it, time allowing).
MAX_CUT_ROUNDS = 8
#: Shares of the CPU still to come (solver.core.budget: the rate this process receives
#: times the wall seconds left, less the reserve for the plan and the verifier), counted
#: when each phase begins, once the problem is compiled: the pricing may use
#: PRICING_SHARE of it; the cuts CUTS_SHARE of what the pricing leaves (so at least
#: 0.35 x 0.65 = 23% of the whole, more when the pricing converges early); the MIP the
#: rest (at least 42%). Before issue 34 these were fixed shares of the wall clock from
#: the start of the solve, compile included (50%, 65%, 90%): under load the compile took
#: most of the window and the cut rounds none (24.1% gap against 0.37% quiet).
PRICING_SHARE = 0.35
CUTS_SHARE = 0.35
#: The restricted MIP keeps every cut up to this many master columns, and above it only
#: the cuts its LP meets with equality (the rest add nothing to its LP bound, and HiGHS's
#: root cut loop on a large master with all of them took 90 s). Measured (bench/scale.py,
#: bench/RESULTS.md): 10k x 200 x 12 (64,047 columns), every cut 0.37%, the tight ones
#: 0.86%; 50k x 200 x 36 (216,696 columns), every cut 3.93%, the tight ones 0.54%.
MIP_EVERY_CUT_UP_TO = 100_000
#: Options added per workload per pricing round (the most negative reduced costs).
ADDED_PER_WORKLOAD = 50


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
            "history": self.history,
        }


#: Option columns the pricing reads (absent when no workload of that kind exists).
_NEEDED = (
    "tokens_per_s_per_unit",
    "energy_usd_per_unit_hour",
    "kgco2e_per_unit_hour",
    "rent_usd",
    "energy_usd",
    "kgco2e",
    "n_units",
    "job_hours",
)


def _options(compiled: Compiled) -> pd.DataFrame:
    """The options table with every column the pricing reads (NaN where absent)."""
    opt = compiled.options
    missing = [c for c in _NEEDED if c not in opt]
    return opt.assign(**{c: np.nan for c in missing}) if missing else opt


def priced_mask(compiled: Compiled) -> np.ndarray:
    """Options that may be left out of the master and priced (see the module docstring)."""
    opt = compiled.options
    if compiled.problem.objective not in PRICED_OBJECTIVES or opt.empty:
        return np.zeros(len(opt), dtype=bool)
    pools = compiled.pools.set_index("pool_id")
    kind = opt["pool_id"].map(pools["kind"])
    existing = opt["pool_id"].map(pools["existing_units"]).fillna(0)
    # reservations are priced at their hourly rate where their pool is not in the master
    # (_Pricing); a provider share would make that rate too low a bound: keep them in then
    shares = bool(compiled.problem.provider_share_max)
    modes = RENTED_MODES if shares else (*RENTED_MODES, *RESERVED_TERM_MONTHS)
    plain = {
        w.name
        for w in compiled.problem.workloads
        if not (
            isinstance(w, InferenceWorkload)
            and (w.n_plus_1 or w.traffic_mix or w.fleet != "per_block" or w.switching_cost_usd)
        )
    }
    return (
        (kind == "cloud") & opt["mode"].isin(modes) & (existing == 0) & opt["workload"].isin(plain)
    ).to_numpy()


def priced_columns(compiled: Compiled) -> int:
    """How many model columns the priced options make (decides ``auto``)."""
    mask = priced_mask(compiled)
    if not mask.any():
        return 0
    opt = compiled.options[mask]
    serving = opt[opt["workload_kind"] != "training"]
    d = compiled.demand[compiled.demand["bucket"] < 0]
    per_workload = d.groupby("workload").size()  # periods x blocks
    n_b = max(len(compiled.blocks), 1)
    per_option = serving["workload"].map(per_workload).fillna(0)
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
    return n > 0 if method == "columns" else n >= AUTO_COLUMNS


class _Pricing:
    """Reduced costs of every priced column from the row duals, without building them.

    Serving columns are (option, period, block) of rented options; training columns are
    the option's z. Each column's objective coefficient and its coefficient in every row
    family it enters are those :mod:`solver.model` builds (the check against HiGHS's
    reduced costs keeps the two in step).
    """

    def __init__(self, compiled: Compiled, mask: np.ndarray) -> None:
        problem = compiled.problem
        self.compiled = compiled
        opt = _options(compiled)[mask]
        pools = compiled.pools.set_index("pool_id")
        p_hours = compiled.periods["hours"].to_numpy(float)
        b_frac = compiled.blocks["fraction"].to_numpy(float)
        disc = discount_factors(compiled.periods, problem.discount_rate)
        carbon_price = problem.carbon_price_usd_per_tco2e or 0.0
        rate_factor = disc if problem.objective == "min_npv" else np.ones(len(p_hours))
        d = compiled.demand[compiled.demand["bucket"] < 0][
            ["workload", "period", "block", "demand"]
        ]
        serving = opt[opt["workload_kind"] != "training"]
        cols = serving[
            [
                "option_id",
                "workload",
                "pool_id",
                "provider",
                "mode",
                "price_usd_per_hour",
                "energy_usd_per_unit_hour",
                "tokens_per_s_per_unit",
                "kgco2e_per_unit_hour",
            ]
        ].merge(d, on="workload")
        t = cols["period"].to_numpy(int)
        b = cols["block"].to_numpy(int)
        rented = cols["mode"].isin(RENTED_MODES).to_numpy()
        # a rented column is (option, period, block), paid for the block's hours; a
        # reserved one is (option, period), flat over the day: its pieces (one per block,
        # for the rows) share one column, which pays energy for the period's hours
        hours = np.where(rented, p_hours[t] * b_frac[b], np.where(b == 0, p_hours[t], 0.0))
        price = np.where(
            rented,
            cols["price_usd_per_hour"].to_numpy(float),
            cols["energy_usd_per_unit_hour"].astype(float).fillna(0.0).to_numpy(),
        )
        cost = price * hours  # ledger.rent_usd for rented units
        co2_t = cols["kgco2e_per_unit_hour"].to_numpy(float) * hours / 1000.0
        obj = {"min_npv": disc[t] * cost, "cost_plus_carbon": cost + carbon_price * co2_t}
        col_block = np.where(rented, b, -1)
        key = pd.MultiIndex.from_arrays([cols["option_id"].to_numpy(int), t, col_block])
        col_id, _ = pd.factorize(key)
        self.serving = pd.DataFrame(
            {
                "col": col_id,
                "option_id": cols["option_id"].to_numpy(int),
                "workload": cols["workload"].to_numpy(object),
                "pool_id": cols["pool_id"].to_numpy(object),
                "provider": cols["provider"].to_numpy(object),
                "period": t,
                "block": b,
                "cost": cost,
                "co2_t": co2_t,
                "obj": obj.get(problem.objective, cost),
                # the masters' demand row coefficient, and the row's demand
                "tps": served_capacity(cols["tokens_per_s_per_unit"], cols["demand"]),
                "demand": cols["demand"].to_numpy(float),
                "ub": cols["pool_id"].map(pools["availability_cap"]).to_numpy(float),
                "accels": cols["pool_id"].map(pools["accels_per_unit"]).to_numpy(float),
                # (a commitment's objective counts its charge in each period at that
                # period's discount under min_npv: so does this rate)
                "absent_dual": np.where(rented, 0.0, -cols["price_usd_per_hour"].to_numpy(float))
                * p_hours[t]
                * b_frac[b]
                * rate_factor[t],
            }
        )
        first = pd.Series(np.arange(len(col_id))).groupby(col_id).first().to_numpy()
        self.columns = pd.DataFrame(
            {
                "option_id": self.serving["option_id"].to_numpy()[first],
                "workload": self.serving["workload"].to_numpy()[first],
                "period": self.serving["period"].to_numpy()[first],
                "block": col_block[first],
                "obj": np.bincount(col_id, weights=self.serving["obj"].to_numpy()),
                "ub": self.serving["ub"].to_numpy()[first],
            }
        )
        self._training_tables(opt, pools, p_hours, b_frac, disc, carbon_price, rate_factor)
        self.quota_pools = _quota_pools(compiled)

    def _training_tables(
        self,
        opt: pd.DataFrame,
        pools: pd.DataFrame,
        p_hours: np.ndarray,
        b_frac: np.ndarray,
        disc: np.ndarray,
        carbon_price: float,
        rate_factor: np.ndarray,
    ) -> None:
        """The training columns (one z per option), their cost by period and their units
        in use by period and block (:attr:`training`, :attr:`train_periods`,
        :attr:`train_usage`)."""
        problem = self.compiled.problem
        n_b = len(b_frac)
        train = opt[opt["workload_kind"] == "training"]
        th = self.compiled.training_hours.merge(
            train[["option_id", "job_hours", "rent_usd", "energy_usd"]], on="option_id"
        )
        share = th["hours"].to_numpy(float) / th["job_hours"].to_numpy(float)
        usd = (th["rent_usd"] + th["energy_usd"]).to_numpy(float)
        th = th.assign(
            cost_share=usd * share, disc_share=disc[th["period"].to_numpy(int)] * usd * share
        )
        self.train_periods = th[["option_id", "period", "cost_share", "disc_share"]]
        cost_z = (train["rent_usd"] + train["energy_usd"]).to_numpy(float)
        co2_z = train["kgco2e"].to_numpy(float) / 1000.0
        npv_z = self.train_periods.groupby("option_id")["disc_share"].sum()
        obj_z = {
            "min_npv": train["option_id"].map(npv_z).fillna(0.0).to_numpy(float),
            "cost_plus_carbon": cost_z + carbon_price * co2_z,
        }
        self.training = pd.DataFrame(
            {
                "option_id": train["option_id"].to_numpy(int),
                "workload": train["workload"].to_numpy(object),
                "pool_id": train["pool_id"].to_numpy(object),
                "provider": train["provider"].to_numpy(object),
                "cost": cost_z,
                "co2_t": co2_z,
                "obj": obj_z.get(problem.objective, cost_z),
                "n_units": train["n_units"].to_numpy(float),
                "accels": train["pool_id"].map(pools["accels_per_unit"]).to_numpy(float),
                # reserved pools: the hourly rate a unit's reservation costs (0 if rented)
                "unit_usd_per_hour": np.where(
                    train["mode"].isin(RENTED_MODES), 0.0, train["price_usd_per_hour"].astype(float)
                ),
            }
        )
        # a training option's units in use: (option, period, block) for each period it runs
        self.train_usage = pd.DataFrame(
            {
                "option_id": np.repeat(th["option_id"].to_numpy(int), n_b),
                "period": np.repeat(th["period"].to_numpy(int), n_b),
                "block": np.tile(np.arange(n_b), len(th)),
            }
        ).merge(
            self.training[["option_id", "pool_id", "n_units", "accels", "unit_usd_per_hour"]],
            on="option_id",
        )
        t_u, b_u = self.train_usage["period"].to_numpy(int), self.train_usage["block"].to_numpy(int)
        self.train_usage["absent_dual"] = (
            -self.train_usage["unit_usd_per_hour"].to_numpy()
            * p_hours[t_u]
            * b_frac[b_u]
            * rate_factor[t_u]
        )

    # ---- duals by family
    @staticmethod
    def duals(model: LinearModel, row_dual: np.ndarray) -> dict[str, pd.DataFrame | dict]:
        out: dict[str, dict] = {}
        for r, row in enumerate(model.rows):
            if row.coefs:
                out.setdefault(row.family, {})[row.key] = float(row_dual[r])
        return out

    def reduced_costs(self, duals: dict) -> tuple[np.ndarray, np.ndarray]:
        """(reduced cost per serving column (rows of :attr:`columns`), per training column),
        HiGHS's sign: c - A^T y."""
        s, z = self.serving, self.training
        scalar = _scalar_terms(duals, self.compiled)
        rc_s = s["obj"].to_numpy() - scalar(s, s["period"].to_numpy(int))
        rc_s -= s["tps"].to_numpy() * _lookup(
            duals.get("demand"), s, ["workload", "period", "block"]
        )
        rc_s -= _lookup(duals.get("redundancy"), s, ["workload", "period", "block"])
        rc_s -= _lookup(duals.get("availability"), s, ["pool_id", "period", "block"])
        rc_s -= _lookup(
            duals.get("reserved_capacity"),
            s,
            ["pool_id", "period", "block"],
            _absent_pool(duals, s),
        )
        rc_s -= s["accels"].to_numpy() * self._quota(duals, s)
        rc_s -= self._cuts(duals.get("_cuts"))
        rc_s = np.bincount(s["col"].to_numpy(), weights=rc_s, minlength=len(self.columns))
        rc_z = z["obj"].to_numpy() - scalar(z, None)
        by_t = _period_budget_duals(duals, self.compiled.periods["name"])
        if by_t.any():
            tp = self.train_periods
            extra = pd.Series(tp["cost_share"].to_numpy() * by_t[tp["period"].to_numpy(int)])
            rc_z -= (
                extra.groupby(tp["option_id"].to_numpy())
                .sum()
                .reindex(z["option_id"])
                .fillna(0.0)
                .to_numpy()
            )
        rc_z -= _lookup(duals.get("train_once"), z, ["workload"])
        u = self.train_usage
        per_row = u["n_units"].to_numpy() * (
            _lookup(duals.get("availability"), u, ["pool_id", "period", "block"])
            + _lookup(
                duals.get("reserved_capacity"),
                u,
                ["pool_id", "period", "block"],
                _absent_pool(duals, u),
            )
            + u["accels"].to_numpy() * self._quota(duals, u)
        )
        rc_z -= (
            pd.Series(per_row)
            .groupby(u["option_id"].to_numpy())
            .sum()
            .reindex(z["option_id"])
            .fillna(0.0)
            .to_numpy()
        )
        return rc_s, rc_z

    def _cuts(self, cuts: pd.DataFrame | None) -> np.ndarray:
        """sum over the MIR cuts of a serving column's row: its coefficient x dual."""
        out = np.zeros(len(self.serving))
        if cuts is None or cuts.empty:
            return out
        s = self.serving[["workload", "period", "block", "tps", "demand"]].reset_index()
        m = s.merge(cuts, on=["workload", "period", "block"])
        coef = mir_coefficients(m["tps"].to_numpy(), m["demand"].to_numpy(), m["cap"].to_numpy())
        np.add.at(out, m["index"].to_numpy(int), coef * m["dual"].to_numpy())
        return out

    def _quota(self, duals: dict, frame: pd.DataFrame) -> np.ndarray:
        """sum over quotas the column's pool falls under of the quota row's dual."""
        q = duals.get("quota")
        out = np.zeros(len(frame))
        if not q:
            return out
        for qi, pool_ids in self.quota_pools.items():
            hit = frame["pool_id"].isin(pool_ids).to_numpy()
            if hit.any():
                keys = zip(
                    frame["period"].to_numpy(int)[hit],
                    frame["block"].to_numpy(int)[hit],
                    strict=True,
                )
                out[hit] += np.array([q.get((qi, t, b), 0.0) for t, b in keys])
        return out


def _quota_pools(compiled: Compiled) -> dict[int, set[str]]:
    """Quota index -> the cloud pools it counts (as :func:`solver.model.add_quotas`)."""
    pools = compiled.pools
    out = {}
    for qi, q in enumerate(compiled.problem.quotas):
        match = (pools["kind"] == "cloud") & (pools["provider"] == q.provider)
        if q.region:
            match &= pools["region"] == q.region
        if compiled.quota_accelerators[qi]:
            match &= pools["accelerator_id"] == compiled.quota_accelerators[qi]
        out[qi] = set(pools.loc[match, "pool_id"])
    return out


def _absent_pool(duals: dict, frame: pd.DataFrame) -> np.ndarray:
    """The dual taken for a reserved-capacity row the master lacks: the reservation's hourly
    rate for the row's hours (``absent_dual``) when the pool is not in the master at all,
    so that its commitments left out keep a reduced cost >= 0 (a commitment costs at least
    its rate for the periods it covers); 0 when the pool is in the master (its commitment
    columns there were priced without the row)."""
    present = {k[0] for k in duals.get("reserved_capacity", {})}
    return np.where(frame["pool_id"].isin(present).to_numpy(), 0.0, frame["absent_dual"])


def _lookup(
    by_key: dict | None,
    frame: pd.DataFrame,
    columns: list[str],
    absent: float | np.ndarray = 0.0,
) -> np.ndarray:
    """The dual of the row keyed by ``columns`` of each frame row; ``absent`` (a number or
    one per frame row) where the master has no such row.

    A row the master lacks may take any dual of the right sign in the Lagrangian bound
    (its right-hand side times the dual is 0 for the rows given a non-zero ``absent``:
    reserved capacity of a pool with no existing units)."""
    fill = np.broadcast_to(np.asarray(absent, dtype=float), (len(frame),))
    if not by_key:
        return fill.copy()
    keys = (
        pd.MultiIndex.from_tuples(list(by_key))
        if len(columns) > 1
        else pd.Index([k[0] for k in by_key])
    )
    values = np.fromiter(by_key.values(), dtype=float, count=len(by_key))
    if len(columns) > 1:
        where = keys.get_indexer(pd.MultiIndex.from_frame(frame[columns]))
    else:
        where = keys.get_indexer(frame[columns[0]])
    return np.where(where >= 0, values[where], fill)


def _period_budget_duals(duals: dict, names: pd.Series) -> np.ndarray:
    """The ``period_budget`` row's dual of each period (0 where it has none)."""
    pb = duals.get("period_budget", {})
    return np.array([pb.get((n,), 0.0) for n in names])


def _scalar_terms(
    duals: dict, compiled: Compiled
) -> Callable[[pd.DataFrame, np.ndarray | None], np.ndarray]:
    """A function (columns, period or None) -> sum of cost-row duals x their coefficients:
    budget, period budget (serving columns), carbon cap, provider shares."""
    problem = compiled.problem
    budget = duals.get("budget", {}).get((), 0.0)
    carbon = duals.get("carbon_cap", {}).get((), 0.0)
    shares = duals.get("provider_share", {})
    by_t = _period_budget_duals(duals, compiled.periods["name"])

    def terms(frame: pd.DataFrame, period: np.ndarray | None) -> np.ndarray:
        cost = frame["cost"].to_numpy()
        out = cost * budget + frame["co2_t"].to_numpy() * carbon
        for (provider,), y in shares.items():
            own = (frame["provider"] == provider).to_numpy(float)
            out += y * cost * (own - problem.provider_share_max[provider])
        if period is not None:
            out += cost * by_t[period]
        return out

    return terms


def first_master(compiled: Compiled, mask: np.ndarray) -> np.ndarray:
    """Options of the first master: every option not priced, and per workload the
    cheapest priced ones per unit of service (USD per token/s, or per training run)
    until their availability covers twice the workload's peak, at least
    :data:`FIRST_OPTIONS_PER_WORKLOAD` of them."""
    opt = _options(compiled)
    keep = ~mask
    pools = compiled.pools.set_index("pool_id")
    cand = opt[mask]
    serving = cand[cand["workload_kind"] != "training"]
    tps = serving["tokens_per_s_per_unit"].astype(float)
    score = serving["price_usd_per_hour"].astype(float) / tps.clip(lower=1e-12)
    room = serving["pool_id"].map(pools["availability_cap"]).astype(float) * tps
    peak = compiled.demand[compiled.demand["bucket"] < 0].groupby("workload")["demand"].max()
    # whole units: the cost of the peak served by this option alone (small workloads)
    units = np.ceil(serving["workload"].map(peak).astype(float) / tps - 1e-9)
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


@dataclass
class _LP:
    objective: float
    row_dual: np.ndarray
    col_dual: np.ndarray
    values: np.ndarray


def _solve_lp(model: LinearModel, time_limit_s: float | None) -> _LP | str:
    """The LP relaxation of ``model`` with HiGHS, or HiGHS's status when not optimal."""
    session = HighsSession(model)
    if session.infeasible_row:
        return "kInfeasible"
    relax(session)
    return run_lp(session, time_limit_s)


def relax(session: HighsSession) -> None:
    """Make every column of the session continuous (its LP relaxation)."""
    import highspy

    n = len(session.model.variables)
    if n:
        session.h.changeColsIntegrality(
            n, np.arange(n, dtype=np.int32), [highspy.HighsVarType.kContinuous] * n
        )


def run_lp(session: HighsSession, time_limit_s: float | None) -> _LP | str:
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
    return _LP(
        objective=float(session.h.getInfo().objective_function_value),
        row_dual=np.asarray(sol.row_dual, dtype=float),
        col_dual=np.asarray(sol.col_dual, dtype=float),
        values=np.asarray(sol.col_value, dtype=float),
    )


def mir_coefficients(
    a: npt.ArrayLike, demand: npt.ArrayLike, divisor: np.ndarray | float
) -> np.ndarray:
    """Coefficients of the mixed-integer rounding (MIR) cut of the demand row
    ``sum a_k x_k >= D`` (whole units x_k >= 0) with divisor ``d``: with ``f`` the
    fractional part of ``D / d`` and ``f_k`` that of ``a_k / d``, every integer plan has
    ``sum (floor(a_k / d) + min(f_k, f) / f) x_k >= ceil(D / d)`` (Nemhauser and Wolsey,
    Integer and Combinatorial Optimization, 1988, II.1.7, turned from <= to >=). Each
    coefficient is at most ``ceil(a_k / d)``, the Chvatal-Gomory rounding's, so the cut is
    at least as strong. Where ``D / d`` is whole, the rounding cut (no MIR exists).
    Arrays broadcast (one coefficient per column, each with its row's D and d)."""
    q = np.asarray(a, dtype=float) / divisor
    whole = np.floor(q + 1e-9)
    frac_q = np.maximum(q - whole, 0.0)
    ratio = np.asarray(demand, dtype=float) / divisor
    f = ratio - np.floor(ratio)
    mir = (f >= 1e-6) & (f <= 1.0 - 1e-6)
    return np.where(mir, whole + np.minimum(frac_q, f) / np.where(mir, f, 1.0), np.ceil(q - 1e-9))


#: The divisors of the MIR cuts: a unit's capacity (or the demand) over 1, 2, 3 and 4.
#: Halves to quarters find what whole units miss (10k x 50 x 12: bound $411,282 with the
#: units and the demand alone, $412,805 with their halves to quarters; bench/RESULTS.md).
DIVIDED_BY = (1, 2, 3, 4)


def divisors(bought: np.ndarray, demand: float) -> set[float]:
    """The MIR divisors tried on a demand row: the capacity of each unit the LP buys and
    the demand, each over :data:`DIVIDED_BY`."""
    return {float(v) / k for v in {*bought.tolist(), float(demand)} for k in DIVIDED_BY}


class Cuts:
    """Mixed-integer rounding cuts on the demand rows, kept across masters.

    A demand row sum_k a_k x_k >= D over whole units x_k (a_k tokens/s per unit) implies,
    for any divisor d > 0, the MIR cut of :func:`mir_coefficients`. With d the capacity of
    a unit the LP buys (or D), the LP must pay for whole units of that size (or larger
    ones) where the plain LP buys fractions: this is what lifts the bound toward the MIP's
    (on 10k x 50 x 12, LP $381,484: to $411,282 with MIR cuts, $400,056 with the
    Chvatal-Gomory rounding ceil(a_k / d), optimum $413,555; bench/RESULTS.md). The cuts
    hold for every integer plan, so the bound stays valid; a column left out enters cut
    (w, t, b, d) with its MIR coefficient, which the pricing charges with the cut's dual.
    """

    FAMILY = "demand_rounding"

    def __init__(self) -> None:
        self.pool: dict[tuple, set[float]] = {}  # (workload, period, block) -> {d}

    def __len__(self) -> int:
        return sum(len(v) for v in self.pool.values())

    @classmethod
    def row(cls, demand: Row, divisor: float) -> Row:
        """The MIR cut of the demand row ``demand`` with ``divisor``, as a row."""
        idx = list(demand.coefs)
        a = np.fromiter(demand.coefs.values(), dtype=float, count=len(idx))
        coefs = dict(zip(idx, mir_coefficients(a, demand.rhs, divisor).tolist(), strict=True))
        rhs = float(np.ceil(demand.rhs / divisor - 1e-9))
        return new_row(cls.FAMILY, (*demand.key, divisor), coefs, ">=", rhs)

    def add_to(self, model: LinearModel) -> LinearModel:
        """The model with a row per cut of the pool (coefficients from its demand rows)."""
        rows = list(model.rows)
        for row in model.rows:
            if row.family == "demand" and row.key in self.pool:
                rows.extend(self.row(row, d) for d in sorted(self.pool[row.key]))
        return LinearModel(model.variables, rows, model.objective, model.expressions)

    def separate(self, model: LinearModel, values: np.ndarray) -> list[Row]:
        """Add the cuts the LP values violate (divisors: :func:`divisors`) to the pool;
        returns them as rows."""
        integer = model.variables["integer"].to_numpy(bool)
        added = []
        for row in model.rows:
            if row.family != "demand" or row.rhs <= 0 or not row.coefs:
                continue
            idx = np.fromiter(row.coefs, dtype=int, count=len(row.coefs))
            if not integer[idx].all():
                continue
            a = np.fromiter(row.coefs.values(), dtype=float, count=len(idx))
            x = values[idx]
            if np.all(np.abs(x - np.round(x)) <= 1e-6):
                continue
            have = self.pool.setdefault(row.key, set())
            for d in sorted(divisors(a[x > 1e-7], row.rhs)):
                if d in have or d <= 0:
                    continue
                lhs = float(mir_coefficients(a, row.rhs, d) @ x)
                if lhs < np.ceil(row.rhs / d - 1e-9) - 1e-6:
                    have.add(d)
                    added.append(self.row(row, d))
        return added

    def frame(self, duals: dict) -> pd.DataFrame:
        """The cuts with their duals: workload, period, block, cap (the divisor), dual."""
        by_key = duals.get(self.FAMILY, {})
        rows = [(*k, y) for k, y in by_key.items() if y]
        return pd.DataFrame(rows, columns=["workload", "period", "block", "cap", "dual"])


def _check_pricing(
    model: LinearModel, col_dual: np.ndarray, pricing: _Pricing, rc_s: np.ndarray, rc_z: np.ndarray
) -> float:
    """Largest gap between the pricing's reduced costs and HiGHS's on the master's priced
    columns, relative to the column's cost; above 1e-6 it is a bug and stops the solve."""
    v = model.variables
    s = pricing.columns.assign(rc=rc_s)
    x = v[v["kind"] == "x"].reset_index()
    x = x.merge(
        s[["option_id", "period", "block", "rc", "obj"]], on=["option_id", "period", "block"]
    )
    z = (
        v[v["kind"] == "z"]
        .reset_index()
        .merge(pricing.training.assign(rc=rc_z)[["option_id", "rc", "obj"]], on="option_id")
    )
    worst = 0.0
    for frame in (x, z):
        if len(frame):
            got = col_dual[frame["index"].to_numpy(int)]
            scale = np.maximum(1.0, np.abs(frame["obj"].to_numpy(float)))
            worst = max(worst, float(np.max(np.abs(got - frame["rc"].to_numpy()) / scale)))
    if worst > 1e-6:
        raise ProcureError(
            f"column generation: the pricing's reduced costs differ from the solver's by "
            f"{worst:.3g} of a column's cost",
            fix="this is a bug in procure; solve with --method full and report the problem",
        )
    return worst


class _Generation:
    """The column generation's state: the options kept, the cuts, the last master solved."""

    def __init__(self, compiled: Compiled, budget: Budget) -> None:
        self.compiled, self.budget = compiled, budget
        self.round_cpu_s = 0.0  # the CPU seconds of the last round (build, LP, pricing)
        mask = priced_mask(compiled)
        self.report = ColumnReport(
            options_total=len(compiled.options), options_priced=int(mask.sum())
        )
        self.pricing = _Pricing(compiled, mask)
        self.keep = first_master(compiled, mask)
        pos = pd.Series(np.arange(len(compiled.options)), index=compiled.options["option_id"])
        self.s_pos = pos.reindex(self.pricing.columns["option_id"]).to_numpy()
        self.z_pos = pos.reindex(self.pricing.training["option_id"]).to_numpy()
        obj = self.pricing.columns["obj"].abs()
        self.tol = 1e-7 * max(1.0, float(obj.max()) if len(obj) else 1.0)
        self.cuts = Cuts()
        # the last master solved: (compiled, model without cuts, with them, its LP), and
        # whether its pricing found columns to add (None: the master changed since)
        self.last: tuple[Compiled, LinearModel, LinearModel, _LP] | None = None
        self.fresh: bool | None = None

    def run(self, *, cut_rounds: int, phase: Phase) -> bool:
        """Price (and, up to ``cut_rounds`` times, cut) until nothing is left to add or
        the next round (costed as the last one) does not fit in ``phase``'s share of the
        CPU (:mod:`solver.core.budget`); False when the first master's LP is infeasible
        (the full model then says why). A round separates cuts from its LP while it also
        adds columns (both hold whatever the LP); a master already solved is not solved
        again. The first master's LP may use all the time left (without it there is no
        plan); a later one what is left of the phase, and if it is cut off the last
        master and its bound stand."""
        r = self.report
        while True:
            if self.fresh is None:
                if self.last is not None and not phase.affords(self.round_cpu_s):
                    return True  # no round fits: the last master and its bound stand
                t0 = time.perf_counter()
                c0 = time.process_time()
                sub = with_options(self.compiled, self.compiled.options[self.keep])
                base = build_model(sub, cap_demand_rows=True)
                model = self.cuts.add_to(base)
                t1 = time.perf_counter()
                lp = _solve_lp(model, self.budget.left_s() if self.last is None else phase.wall_s())
                t2 = time.perf_counter()
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
            sub, base, model, lp = self.last
            negative = self.fresh
            cut = r.cut_rounds < cut_rounds and bool(self.cuts.separate(model, lp.values))
            r.cut_rounds += cut
            if not negative and not cut:
                r.converged = True
                return True
            self.fresh = None  # columns or cuts were added: the master changes
            r.converged = False

    def _price(self, model: LinearModel, lp: _LP, t0: float, t1: float, t2: float) -> bool:
        """Reduced costs of the options left out, the bound, and the options to add; True
        when some column has a negative reduced cost."""
        pricing, r, keep = self.pricing, self.report, self.keep
        duals = pricing.duals(model, lp.row_dual)
        duals["_cuts"] = self.cuts.frame(duals)
        rc_s, rc_z = pricing.reduced_costs(duals)
        _check_pricing(model, lp.col_dual, pricing, rc_s, rc_z)
        out_s, out_z = ~keep[self.s_pos], ~keep[self.z_pos]
        neg_s = out_s & (rc_s < -self.tol)
        neg_z = out_z & (rc_z < -self.tol)
        bound = lp.objective + float(
            np.sum(np.minimum(rc_s[out_s], 0.0) * pricing.columns["ub"].to_numpy()[out_s])
            + np.sum(np.minimum(rc_z[out_z], 0.0))
        )
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
    holds from there, with :data:`solver.core.budget.RESERVE_SHARE` of it kept for the
    plan and the verifier. What is left once the problem is compiled is shared by the CPU
    this process receives (:mod:`solver.core.budget`): the pricing
    :data:`PRICING_SHARE`, the cuts :data:`CUTS_SHARE` of what it leaves, the MIP the
    rest, and more cuts (the bound only) if the MIP ends early. Returns None when the
    first master's LP is not feasible (the caller then solves the full model, which says
    why).
    """
    budget = Budget.of(options.time_limit_s, started)
    g = _Generation(compiled, budget)
    if not g.run(cut_rounds=0, phase=budget.phase(PRICING_SHARE)):
        return None
    g.run(cut_rounds=MAX_CUT_ROUNDS, phase=budget.phase(CUTS_SHARE))
    sub, base, model, lp = g.last
    g.report.options_in_master = len(sub.options)
    mip_limit = budget.phase(1.0).wall_s()
    t3 = time.perf_counter()
    # the cuts hold for every integer plan: the master's MIP keeps its plans and gains
    # their bound (10k x 200 x 12, 15 s: $1,841,294 with them, $1,979,629 without)
    if len(model.variables) > MIP_EVERY_CUT_UP_TO:
        model = _tight_cuts(model, lp.values)
    mip = HighsSession(model).solve(
        replace(options, time_limit_s=mip_limit), start=rounded(model, lp.values)
    )
    g.report.mip_seconds = time.perf_counter() - t3
    if mip.has_solution:
        g.run(cut_rounds=2 * MAX_CUT_ROUNDS, phase=budget.phase(1.0))  # lifts the bound only
    return sub, base, _with_full_bound(mip, g.report.lp_bound, options.relative_gap), g.report


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
    return np.maximum(start, v["lb"].to_numpy(float))


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
