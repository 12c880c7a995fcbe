"""Exact pruning of rented options that cheaper options with room replace.

Pool pruning (:func:`solver.core.compile.prune_dominated_pools`) drops pools whose units
are interchangeable with cheaper ones. Most of a large catalog's options are not like that:
a workload can rent hundreds of instance types, of different sizes, from pools whose
availability caps could bind. This module drops the ones no optimal plan needs, column
by column (option, period, load block), and training clusters, with reductions that each
keep some optimal plan:

1. **Bound.** A plan never needs more units of one rented column than ``ceil(D / a)``
   (``D`` the block's demand, ``a`` the tokens/s of a unit), or the workload's minimum
   serving units: those alone meet its demand and redundancy rows, and every unit costs
   money, so any plan can be cut back to these bounds at no more cost. A rented pool's
   availability row at (period, block) therefore cannot bind when the bounds of the
   columns in it (plus, per training job, its largest cluster in the pool) add up to no
   more than the pool's availability: the pool has *room* there.
2. **Dominance.** In one demand row, a column ``k`` is useless next to a column ``j``
   whose pool has room when ``m = ceil(min(a_k, D) / min(a_j, D))`` units of ``j`` cost
   no more than one of ``k`` (``m x price_j <= price_k``; one unit of ``a >= D`` meets
   the demand alone), in the same quota groups and provider, and then only with
   ``m = 1``, when the problem has quotas (``m`` units hold more accelerators): move each
   of ``k``'s units to ``m`` of ``j`` and cut ``j`` back to its bound. Demand,
   redundancy, availability, quotas and budgets still hold and the cost does not rise.
   ``j`` is at least as cheap per token/s served, so the LP relaxation keeps its value
   where the demand rows count a unit for at most the demand (column generation's
   masters), and can only rise in the full model.
3. **Training clusters.** A job uses at most its largest cluster of a pool in a period,
   so that bound counts toward the room too. Of one job's rented clusters, those dearer
   than its cheapest rented cluster with room in every period it runs are useless: move
   the job there. Only where a cluster's cost counts once, in total (min_cost or
   max_served, no period budgets) and no quota counts its accelerators.

Dropping columns or clusters only lowers the sums, so all three repeat until nothing
changes; an option whose every column drops is pruned from the options table.

Under N+1 (capacity less the largest unit in use >= D, counting each unit for at most D,
as the model's rows do: the same whole plans) the bound is one unit more, ``ceil(D / a)
+ 1``, and rule 2 still holds: with ``a'`` a unit's capacity counted at most D, replacing
one unit of ``k`` by ``m`` of ``j`` raises the total ``T`` by ``m a'_j - a'_k >= 0``;
when ``a'_j <= a'_k`` the largest unit ``L`` does not grow, and when ``a'_j > a'_k``
(``m = 1``) ``T - L`` becomes at least ``min(T - L + a'_j - a'_k, T - a'_k) >= T - L``
(``a'_k <= L``, as ``k`` was in use). Workloads with a traffic mix (their buckets count
units differently) are left alone, and their rented columns give their pools no room;
so are flat fleets (``fleet: flat``: units the same all day, which ``m`` units in one block
and ``m'`` in another are not). An autoscaled fleet (``fleet: autoscale``: the offerings
deployed for a period run at least one unit in every block) is compared over the whole
day: an option's columns of a period drop together, and only for one stand-in ``j`` that
rule 2 allows in every block the option has (so the option's bound is at least one unit
in every block). Exact: each unit of ``k`` in block ``b`` becomes ``m_b >= 1`` units of
``j``; a deployed ``k`` ran a unit in every block, so ``j`` then runs one in every block
and is a deployment, and each block's rows hold as above (bench/quality/fleet_exactness.py
compares pruned with unpruned optima). Where a workload must survive the loss of a region
or provider (``survive_loss_of``), a column stands in only for one of its own provider and region
(:func:`by_domain`), as under quotas.
Where CO2e counts (a carbon cap or a carbon objective) rule 2 also asks ``m x co2_j <=
co2_k`` (CO2e per unit-hour): the replacement then raises neither the cost nor the CO2e,
so the cap and every objective still hold; rule 3 is left out there (its clusters are
compared by cost alone). Nothing is pruned under provider shares (:func:`prunable`).
Where egress by default is in the objective (:mod:`solver.core.formulation.egress`), a
column stands in only for one at the same egress $/GB (the comparison key holds it): the
replacement keeps each price's capacity, so the cheapest-first routing of the served
tokens, and the egress it pays, is no worse; a cheaper unit at a dearer egress price is
never compared with one at a cheaper egress price (tests/core/test_egress_objective.py).
Where a provider's support plan is in the objective (:mod:`solver.core.formulation.support`),
a column at that provider stands in only for one at the same provider (the key holds it
too): the support its spend adds is not in the unit's price
(tests/core/test_support_objective.py).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from solver.inputs.costs import modelled_plans
from solver.inputs.egress import egress_in_model, egress_usd_per_token
from solver.inputs.problem import InferenceWorkload, Problem, Workload
from solver.units import RENTED_MODES

#: Why an option was pruned (the compile report's key).
REASON = "rented option: cheaper, larger options with room serve every period and block"
TRAINING_REASON = "training: a cheaper rented cluster of the job has room in every period"


def egress_key(providers: pd.Series, problem: Problem) -> pd.Series:
    """Each pool's egress $/token as a comparison key where egress by default is in the
    objective (:mod:`solver.core.formulation.egress`; '' elsewhere), and its provider
    where the model prices that provider's support plan (:func:`support_key`): a pool or
    column stands in only for one at the same egress price and support (module
    docstring)."""
    support = support_key(providers, problem)
    if not any(egress_in_model(problem, w.name) for w in problem.workloads):
        return support
    return "|e" + providers.map(lambda v: repr(egress_usd_per_token(str(v)))) + support


def support_key(providers: pd.Series, problem: Problem) -> pd.Series:
    """``|s<provider>`` for a pool at a provider whose support plan the model prices
    (:mod:`solver.core.formulation.support`), '' elsewhere: a cheaper unit that adds
    support never stands in for one that adds none or another provider's."""
    plans = modelled_plans(problem, set(providers.astype(str)))
    if not plans:
        return pd.Series("", index=providers.index)
    return providers.astype(str).map(lambda v: f"|s{v}" if v in plans else "")


def carbon_counts(problem: Problem) -> bool:
    """Whether CO2e is a cost or a limit (then pruning must keep CO2e no higher too)."""
    return problem.carbon_cap_tco2e is not None or problem.objective in {
        "min_carbon",
        "lexicographic",
        "cost_plus_carbon",
    }


def prunable(problem: Problem) -> bool:
    """Whether a cheaper unit can always stand in for a dearer one. Not under provider
    shares (cost on a provider <= share x total cost): a cheaper unit lowers the total,
    so another provider's share can rise past its cap, and an optimal plan may need the
    dearer unit to keep it down (tests/core/test_dominance.py works a case by hand). Nor
    under capacity shares per region or provider (``max_region_share``): more capacity in
    one domain can be what keeps another's share down. Nor under savings plans: a plan's
    rate can make a dearer on-demand offering the cheaper one to run."""
    if problem.savings_plans:
        return False
    return not problem.provider_share_max and not any(
        isinstance(w, InferenceWorkload)
        and (w.max_region_share is not None or w.max_provider_share is not None)
        for w in problem.workloads
    )


def by_domain(problem: Problem) -> bool:
    """Whether a unit may stand in only for one in its own provider and region: quotas
    count per provider and region, and a workload that must survive the loss of a region
    or provider counts its capacity outside each (``survive_loss_of``)."""
    return bool(problem.quotas) or any(
        isinstance(w, InferenceWorkload) and w.survive_loss_of for w in problem.workloads
    )


def steady_fleet(workload: Workload) -> bool:
    """Whether a serving workload keeps its rented offerings all day (``fleet``
    ``autoscale`` or ``flat``): then a column cannot be dropped in one load block alone,
    and one block's cheaper stand-in need not be there in the others, so rule 2 compares
    an autoscaled workload's columns over the whole day (:func:`whole_day`) and leaves a
    flat one alone (as a traffic mix), and pool pruning asks one cheaper pool to hold
    all the units (:func:`solver.core.compile.prune_dominated_pools`)."""
    return isinstance(workload, InferenceWorkload) and workload.fleet != "per_block"


def guard_key(pool_ids: pd.Series, pools: pd.DataFrame) -> pd.Series:
    """The part of a comparison key that keeps the guard exact (``price_guard``): ``|``
    and the pool's band, so that a unit stands in only for one of the same band. The
    objective prices a unit at price x (1 + band) and the budget at its price: within one
    band the cheaper is cheaper in both, across bands it need not be. '' for every pool
    when the guard is off (``pools``: indexed by pool id)."""
    if "guard_band_fraction" not in pools:
        return pd.Series("", index=pool_ids.index)
    band = pool_ids.map(pools["guard_band_fraction"]).fillna(0.0).astype(float)
    return "|" + band.map(lambda b: f"{b:.6g}")


def served_capacity(capacity: npt.ArrayLike, demand: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """What a whole unit counts for in a demand row: its tokens/s, at most the row's
    demand where there is one (a unit of ``a >= D`` meets ``D`` alone). Rule 2 compares
    this; column generation's masters use it as the demand row's coefficient."""
    capacity, demand = np.asarray(capacity, float), np.asarray(demand, float)
    return np.where(demand > 0, np.minimum(capacity, demand), capacity)


def whole_day(workload: Workload) -> bool:
    """Whether rule 2 compares a serving workload's columns over the whole day (``fleet:
    autoscale``): a column drops only with the option's other blocks of the period, for
    one stand-in that dominates it in every block (module docstring)."""
    return isinstance(workload, InferenceWorkload) and workload.fleet == "autoscale"


def _plain(problem: Problem) -> tuple[set[str], dict[str, int], set[str]]:
    """Serving workloads with plain demand rows (one request size), each one's minimum
    serving units where a redundancy row holds it (0 where none does), and those of
    them under N+1. An autoscaled fleet counts (compared over the whole day); a flat
    fleet does not."""
    plain: set[str] = set()
    fewest: dict[str, int] = {}
    spare: set[str] = set()
    for w in problem.workloads:
        if w.kind == "training":
            continue
        if isinstance(w, InferenceWorkload) and (
            w.traffic_mix or (steady_fleet(w) and not whole_day(w))
        ):
            continue
        plain.add(w.name)
        if isinstance(w, InferenceWorkload) and w.n_plus_1:
            spare.add(w.name)
        need = w.min_serving_units if isinstance(w, InferenceWorkload) else 1
        fewest[w.name] = need if need > 1 and problem.objective != "max_served" else 0
    return plain, fewest, spare


def _columns(
    options: pd.DataFrame, pools: pd.DataFrame, demand: pd.DataFrame, problem: Problem
) -> tuple[pd.DataFrame, pd.Series]:
    """One row per rented column (option, period, block) of a plain workload, sorted by
    demand row, comparison key, price, then capacity (largest first): ``opt`` (the
    option's position), ``pool`` (its pool's position in ``pools``), ``workload`` and
    ``key`` (codes in name order), ``period``, ``block``, ``cap``, ``ub`` (its unit
    bound) and ``group`` (its demand row and key). Names are coded once, per pool and
    workload: a large catalog has a million columns, and strings compared per column
    were most of this module's time."""
    plain, fewest, spare = _plain(problem)
    p = pools.set_index("pool_id")
    pool = p.index.get_indexer(pd.Index(options["pool_id"]))
    rented_pool = ((p["kind"] == "cloud") & p["mode"].isin(RENTED_MODES)).to_numpy()
    rented = pd.Series(rented_pool[pool], index=options.index)
    serving = options["workload_kind"] != "training"
    is_plain = options["workload"].isin(plain)
    others = rented & serving & ~is_plain
    take = (rented & serving & is_plain).to_numpy()
    if not take.any():
        return pd.DataFrame(), others
    mine = options[take]
    pool = pool[take]
    key = pd.Series("", index=p.index)  # per pool
    if by_domain(problem):
        key = p["provider"].astype(str) + "|" + p["region"].astype(str)
    if problem.quotas:
        for col in ("accelerator_id", "accels_per_unit"):
            key = key + "|" + p[col].astype(str)
    key = key + guard_key(p.index.to_series(), p)
    key = key + egress_key(p["provider"], problem)
    key_code, _ = pd.factorize(key, sort=True)
    work_code, names = pd.factorize(mine["workload"], sort=True)
    spare_w = np.isin(names, list(spare))
    fewest_w = np.array([fewest.get(n, 0) for n in names], dtype=float)
    days_w = np.isin(names, [w.name for w in problem.workloads if whole_day(w)])
    frame = pd.DataFrame(
        {
            "opt": mine.index.to_numpy(),
            "workload": work_code,
            "pool": pool,
            "key": key_code[pool],
            "cap": mine["tokens_per_s_per_unit"].to_numpy(float),
            "price": p["price_usd_per_hour"].to_numpy(float)[pool],
            # CO2e per unit-hour, where it counts (a second order rule 2 must keep)
            "co2": mine["kgco2e_per_unit_hour"].to_numpy(float) if carbon_counts(problem) else 0.0,
        }
    )
    d = demand[(demand["bucket"] < 0) & demand["workload"].isin(names)]
    d = pd.DataFrame(
        {
            "workload": names.get_indexer(pd.Index(d["workload"])),
            "period": d["period"].to_numpy(),
            "block": d["block"].to_numpy(),
            "demand": d["demand"].to_numpy(float),
        }
    )
    cols = frame.merge(d, on="workload", how="inner")
    w = cols["workload"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        units = np.ceil(cols["demand"].to_numpy(float) / cols["cap"].to_numpy(float) - 1e-9)
    units = np.where(cols["cap"].to_numpy(float) > 0, units, np.inf)
    units = units + spare_w[w]  # N+1: one unit more
    ub = np.maximum(units, fewest_w[w])
    # an autoscaled fleet runs a deployed offering's unit in every block, even one with
    # no demand: its bound is at least 1
    cols["whole_day"] = days_w[w]
    cols["ub"] = np.where(days_w[w], np.maximum(ub, 1.0), ub)
    order = np.lexsort(
        (
            cols["opt"].to_numpy(),
            -cols["cap"].to_numpy(float),
            cols["price"].to_numpy(float),
            cols["key"].to_numpy(),
            cols["block"].to_numpy(),
            cols["period"].to_numpy(),
            w,
        )
    )
    cols = cols.take(order).reset_index(drop=True)
    cols["group"] = cols.groupby(["workload", "period", "block", "key"], sort=False).ngroup()
    return cols, others


def _training_runs(
    options: pd.DataFrame, pools: pd.DataFrame, problem: Problem | None = None
) -> pd.DataFrame:
    """One row per (training option, period it runs in): ``opt``, ``workload``,
    ``pool_id``, ``period``, ``units`` (its cluster), ``usd`` (the job's cost on it) and
    ``rented``."""
    training = options[options["workload_kind"] == "training"]
    names = ["opt", "workload", "pool_id", "period", "units", "usd"]
    if training.empty or "hours_by_period" not in training:
        return pd.DataFrame(columns=[*names, "rented", "job"])
    usd = training["rent_usd"].to_numpy(float) + training["energy_usd"].to_numpy(float)
    rows = [
        (k, w, pool, int(t), float(n), cost)
        for k, w, pool, n, cost, run in zip(
            training.index,
            training["workload"],
            training["pool_id"],
            training["n_units"],
            usd,
            training["hours_by_period"],
            strict=True,
        )
        if isinstance(run, tuple | list)
        for t, _h in run
    ]
    runs = pd.DataFrame(rows, columns=names)
    p = pools.set_index("pool_id")
    mode = runs["pool_id"].map(p["mode"])
    runs["rented"] = (runs["pool_id"].map(p["kind"]) == "cloud") & mode.isin(RENTED_MODES)
    # a cluster stands in only for one whose price has the same guard band (guard_key)
    runs["job"] = runs["workload"] + guard_key(runs["pool_id"], p)
    if problem is not None:  # and one at the same support provider (support_key)
        runs["job"] = runs["job"] + support_key(runs["pool_id"].map(p["provider"]), problem)
    return runs


def _training_prunable(problem: Problem) -> bool:
    """Whether a cheaper cluster can stand in for a dearer one of the same job: its cost
    counts once in the objective and the budget (not per period: no period budgets, no
    discounting) and no quota counts its accelerators."""
    return (
        problem.objective in {"min_cost", "max_served"}
        and not problem.period_budget_usd
        and not problem.quotas
        and problem.carbon_cap_tco2e is None  # a cheaper cluster may emit more
    )


def _training_load(runs: pd.DataFrame) -> pd.Series:
    """Per (pool, period): the sum over training jobs of each one's largest cluster there
    (what the jobs can hold of the pool's availability at once)."""
    if runs.empty:
        return pd.Series(dtype=float)
    return (
        runs.groupby(["pool_id", "workload", "period"])["units"]
        .max()
        .groupby(level=["pool_id", "period"])
        .sum()
    )


def _serving_fixpoint(
    cols: pd.DataFrame,
    alive: npt.NDArray[np.bool_],
    base: npt.NDArray[np.float64] | float,
    avail: npt.NDArray[np.float64],
    blocked: npt.NDArray[np.bool_],
    kept: npt.NDArray[np.bool_],
    whole_multiples: bool,
) -> npt.NDArray[np.bool_]:
    """Drop dominated serving columns (rule 2) until none is left; ``base`` is each
    column's availability row's training load; ``kept`` columns are never dropped;
    ``whole_multiples``: whether ``m > 1`` units may stand in for one (not under quotas).
    An autoscaled workload's columns drop per (option, period), for a stand-in that
    dominates them in every block (:func:`_whole_day_dominated`).

    A round looks again only at the demand rows where a column died or gained room in
    the round before (all of an autoscaled workload's rows of a period together): the
    others see the same columns and rooms, so they drop nothing new."""
    row = cols["row"].to_numpy()
    group, ub = cols["group"].to_numpy(), cols["ub"].to_numpy()
    size = served_capacity(cols["cap"], cols["demand"])
    price = cols["price"].to_numpy(float)
    co2 = cols["co2"].to_numpy(float)
    day = cols["whole_day"].to_numpy(bool)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    bounds = list(zip(starts, np.r_[starts[1:], len(group)], strict=True))
    opt = cols["opt"].to_numpy()
    # (workload, period, key) of each whole-day row: its blocks' rows go together
    day_of: npt.NDArray[np.int64] = np.full(len(cols), -1, dtype=np.int64)
    if day.any():
        days = cols.groupby(["workload", "period", "key"], sort=False).ngroup().to_numpy()
        day_of = np.where(day, days, -1).astype(np.int64)
    dirty = np.ones(len(bounds), dtype=bool)
    room_before = np.zeros(len(cols), dtype=bool)
    while True:
        load = np.bincount(row, weights=np.where(alive, ub, 0.0))
        room = ~blocked & (load[row] + base <= avail + 1e-9)
        changed = room != room_before
        room_before = room
        if changed.any():
            dirty |= np.logical_or.reduceat(changed, starts)
        if day.any():  # an autoscaled workload's rows of a period go together
            day_dirty = np.unique(day_of[starts[dirty]])
            dirty |= np.isin(day_of[starts], day_dirty[day_dirty >= 0])
        dominated = np.zeros(len(cols), dtype=bool)
        pairs: dict[int, list] = {}
        for g in np.flatnonzero(dirty):
            lo, hi = bounds[g]
            args = (size[lo:hi], price[lo:hi], co2[lo:hi], alive[lo:hi], room[lo:hi])
            if day[lo]:
                by, mask = _dominance_pairwise(*args, whole_multiples)
                pairs.setdefault(int(day_of[lo]), []).append((opt[lo:hi], opt[lo:hi][by], mask, lo))
            else:
                dominated[lo:hi] = alive[lo:hi] & _dominated(*args, whole_multiples)
        for blocks in pairs.values():
            _whole_day_dominated(blocks, alive, dominated)
        dominated &= ~kept
        if not dominated.any():
            return alive
        dirty = np.logical_or.reduceat(dominated, starts)
        alive = alive & ~dominated


def _whole_day_dominated(blocks: list, alive: np.ndarray, dominated: np.ndarray) -> None:
    """Mark in ``dominated`` the columns of an autoscaled workload's options (one period,
    one comparison key; ``blocks``: per block its options, its stand-ins' options, the
    [stand-in, column] dominance mask and the row's first position) that one stand-in
    dominates in every block the option has. Exact: a deployed option runs at least a unit
    in every block, so its stand-in, taking ``m >= 1`` units for each, runs at least one in
    every block too and is a deployment; each block's rows hold as under rule 2."""
    seen: dict = {}
    by_opt: dict = {}
    for opts, _, _, _ in blocks:
        for k in opts:
            seen[k] = seen.get(k, 0) + 1
    for opts, stand_ins, mask, _ in blocks:
        for c, k in enumerate(opts):
            js = set(stand_ins[mask[:, c]])
            by_opt[k] = js if k not in by_opt else by_opt[k] & js
    for opts, _, _, lo in blocks:
        for c, k in enumerate(opts):
            hit = by_opt.get(k) and all(k in o for o, _, _, _ in blocks)
            if hit and seen[k] == len(blocks) and alive[lo + c]:
                dominated[lo + c] = True


def _dominance_pairwise(
    size: npt.NDArray[np.float64],
    price: npt.NDArray[np.float64],
    co2: npt.NDArray[np.float64],
    alive: npt.NDArray[np.bool_],
    room: npt.NDArray[np.bool_],
    whole_multiples: bool,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """Which columns of one demand row (sorted by price, then size, largest first) ``m``
    units of a column with room replace at no more cost and no more CO2e (0 where carbon
    does not count): ``m = ceil(size_k / size_j)``, ``m x price_j <= price_k`` and
    ``m x co2_j <= co2_k`` (``m = 1``: ``size_j >= size_k``, when not
    ``whole_multiples``); of equal ones, the first stays. Returns the stand-ins'
    positions ``by`` and the [stand-in, column] mask (dead columns all False)."""
    by = np.flatnonzero(alive & room & (size > 0))
    return by, _pair_mask(size, price, co2, alive, by, whole_multiples)


#: Relative price margin of :func:`_stand_ins`: a stand-in priced more than this above
#: a cheaper one of the same size (and no less CO2e) can never be the only one that
#: dominates a column, as its tolerance in :func:`_dominance_pairwise` is 1e-9.
MARGIN = 1e-8


def _stand_ins(
    size: npt.NDArray[np.float64],
    price: npt.NDArray[np.float64],
    co2: npt.NDArray[np.float64],
    by: npt.NDArray[np.intp],
) -> npt.NDArray[np.intp]:
    """The stand-ins ``by`` (positions in one demand row) less those another stand-in of
    the same size makes redundant: ``i`` covers ``j`` when ``price_i (1 + MARGIN) <
    price_j``, ``co2_i <= co2_j`` and ``price_j > 1e-6``. Whatever ``j`` dominates under
    :func:`_dominance_pairwise`, ``i`` does too (the same ``m``; ``m price_i < price_k -
    tol``, ``m co2_i <= co2_k + tol``; ``i`` is not the column, whose price is within
    ``tol`` of ``price_j`` or above it), and covering is transitive, so the uncovered
    stand-ins dominate every column the whole set does (docs/guides/large-problems.md,
    "Dominance by size class"). Sorted positions."""
    s, p, c = size[by], price[by], co2[by]
    order = np.lexsort((c, p, s))
    s, p, c, idx = s[order], p[order], c[order], by[order]
    first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    if not c.any():  # CO2e does not count: the cheapest of each size, with its near-ties
        floor = np.repeat(p[first], np.diff(np.r_[first, len(s)]))
        keep = (p <= floor * (1 + MARGIN)) | (p <= 1e-6)
        return np.sort(idx[keep])
    keep = np.ones(len(s), dtype=bool)
    for lo, hi in zip(first, np.r_[first[1:], len(s)], strict=True):
        if hi - lo < 2:
            continue
        pp, cc = p[lo:hi], c[lo:hi]
        cheaper = np.searchsorted(pp, pp / (1 + MARGIN), side="left")  # count p_i < p_j/(1+M)
        least = np.minimum.accumulate(cc)  # least CO2e among the first n
        covered = (cheaper > 0) & (least[np.maximum(cheaper - 1, 0)] <= cc) & (pp > 1e-6)
        keep[lo:hi] = ~covered
    return np.sort(idx[keep])


def _dominated(
    size: npt.NDArray[np.float64],
    price: npt.NDArray[np.float64],
    co2: npt.NDArray[np.float64],
    alive: npt.NDArray[np.bool_],
    room: npt.NDArray[np.bool_],
    whole_multiples: bool,
) -> npt.NDArray[np.bool_]:
    """Which columns of one demand row a stand-in dominates (:func:`_dominance_pairwise`'s
    rule, any stand-in), compared against the stand-ins :func:`_stand_ins` keeps: a
    demand row of thousands of columns has a few sizes (one per instance type and
    runtime), so the matrix is sizes x columns, not columns x columns."""
    by = np.flatnonzero(alive & room & (size > 0))
    if len(by) > 8:
        by = _stand_ins(size, price, co2, by)
    mask: npt.NDArray[np.bool_] = _pair_mask(size, price, co2, alive, by, whole_multiples)
    return np.asarray(mask.any(axis=0), dtype=bool)


def _pair_mask(
    size: npt.NDArray[np.float64],
    price: npt.NDArray[np.float64],
    co2: npt.NDArray[np.float64],
    alive: npt.NDArray[np.bool_],
    by: npt.NDArray[np.intp],
    whole_multiples: bool,
) -> npt.NDArray[np.bool_]:
    """The [stand-in ``by``, column] dominance mask of :func:`_dominance_pairwise`."""
    if not len(by):
        return np.zeros((0, len(size)), dtype=bool)
    units = np.ceil(size[None, :] / size[by, None] - 1e-9)  # [dominator, column]
    if not whole_multiples:
        units = np.where(units <= 1, 1.0, np.inf)
    usd = units * price[by, None]
    with np.errstate(invalid="ignore"):  # inf units x 0 kg: that pair is out anyway
        kg = np.where(np.isfinite(units), units * co2[by, None], np.inf)
    tol = 1e-9 * np.maximum(price, 1e-12)
    tol_kg = 1e-9 * np.maximum(co2, 1e-12)
    earlier = by[:, None] < np.arange(len(size))[None, :]
    no_worse = (usd <= price + tol) & (kg <= co2 + tol_kg)
    better = (usd < price - tol) | (kg < co2 - tol_kg) | earlier
    return no_worse & better & alive[None, :]


def _dominated_training(
    runs: pd.DataFrame,
    alive: npt.NDArray[np.bool_],
    serving_peak: pd.Series,
    base: pd.Series,
    cap: pd.Series,
    never: set[str],
) -> npt.NDArray[np.bool_]:
    """Rule 3: a job's rented clusters dearer than its cheapest rented cluster whose pool
    has room in every period it runs (serving bounds in the fullest block, plus the jobs'
    largest clusters); clusters of equal cost are all kept. Returns the runs' mask."""
    at = pd.MultiIndex.from_arrays([runs["pool_id"], runs["period"]])
    used = serving_peak.reindex(at).fillna(0.0).to_numpy(float)
    held = base.reindex(at).fillna(0.0).to_numpy(float)
    avail = runs["pool_id"].map(cap).to_numpy(float)
    ok = runs["rented"].to_numpy() & ~runs["pool_id"].isin(never).to_numpy()
    ok &= alive & (used + held <= avail + 1e-9)
    room = pd.Series(ok).groupby(runs["opt"].to_numpy()).all()
    usd = runs.groupby("opt")["usd"].first()
    job = runs.groupby("opt")["job"].first()
    cheapest = usd[room.reindex(usd.index).to_numpy()].groupby(job).min()
    bar = job.map(cheapest).to_numpy(float)  # NaN where no cluster has room
    dearer = usd.index[usd.to_numpy() > bar * (1 + 1e-9)]
    return runs["opt"].isin(dearer).to_numpy() & runs["rented"].to_numpy()


def prune_dominated_options(
    options: pd.DataFrame,
    pools: pd.DataFrame,
    demand: pd.DataFrame,
    problem: Problem,
    keep: frozenset[str] = frozenset(),
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The options without the rented ones no optimal plan needs (module docstring), and
    how many were dropped per reason. ``options``' index is the option's position.

    Pools in ``keep`` (a break-even search moves their price) are never pruned and never
    stand in for another (they give no room): pruning stays exact at any of their prices.
    """
    if options.empty or not prunable(problem):
        return options, {}
    if carbon_counts(problem) and "kgco2e_per_unit_hour" not in options:
        return options, {}  # no CO2e to compare
    cols, others = _columns(options, pools, demand, problem)
    all_runs = _training_runs(options, pools, problem)
    runs = all_runs if _training_prunable(problem) else all_runs.iloc[0:0]
    if cols.empty and runs.empty:
        return options, {}
    never = set(options.loc[others, "pool_id"]) | set(keep)
    cap = pools.set_index("pool_id")["availability_cap"]
    alive_runs = np.ones(len(runs), dtype=bool)
    alive = np.ones(len(cols), dtype=bool)
    if len(cols):
        cols["row"] = cols.groupby(["pool", "period", "block"], sort=False).ngroup()
        row = cols["row"].to_numpy()
        _, first = np.unique(row, return_index=True)  # each availability row's first column
        pool_ids = pools["pool_id"].to_numpy()
        # each row's (pool, period): the training load and the peak are read per row
        row_at = pd.MultiIndex.from_arrays(
            [pool_ids[cols["pool"].to_numpy()[first]], cols["period"].to_numpy()[first]]
        )
        ub = cols["ub"].to_numpy(float)
        at = cols["pool"].to_numpy()
        avail = pools["availability_cap"].to_numpy(float)[at]
        blocked = np.isin(pool_ids, list(never))[at]
        kept = np.isin(pool_ids, list(keep))[at]
    while True:
        # the jobs' load: every cluster of the jobs this module does not prune, and the
        # clusters still alive of those it does
        kept_runs = all_runs[~all_runs["opt"].isin(runs.loc[~alive_runs, "opt"])]
        base = _training_load(kept_runs)
        peak = pd.Series(dtype=float)
        if len(cols):
            held = base.reindex(row_at).fillna(0.0).to_numpy(float)[row] if len(base) else 0.0
            alive = _serving_fixpoint(
                cols, alive, held, avail, blocked, kept, whole_multiples=not problem.quotas
            )
            per_row = np.bincount(row, weights=np.where(alive, ub, 0.0), minlength=len(first))
            by_at = [row_at.get_level_values(0), row_at.get_level_values(1)]
            peak = pd.Series(per_row).groupby(by_at).max()
        if runs.empty:
            break
        dominated = alive_runs & _dominated_training(runs, alive_runs, peak, base, cap, never)
        dominated &= ~runs["pool_id"].isin(keep).to_numpy()
        if not dominated.any():
            break
        alive_runs &= ~dominated
    dropped: dict[str, int] = {}
    drop = []
    if len(cols):
        survives = pd.Series(alive).groupby(cols["opt"].to_numpy()).any()
        drop = list(survives.index[~survives.to_numpy()])
        if drop:
            dropped[REASON] = len(drop)
    gone = sorted(set(runs.loc[~alive_runs, "opt"]))
    if gone:
        dropped[TRAINING_REASON] = len(gone)
    return options.drop(index=drop + gone), dropped
