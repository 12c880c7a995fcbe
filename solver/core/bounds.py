"""The repaired Lagrangian bound of column generation (:mod:`solver.core.columns`): a lower
bound on the full problem's LP from a master's duals, each row's dual moved until no
column left out prices negative (docs/guides/large-problems.md, "The bound before the
pricing converges" and "Egress rows in the pricing").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from solver.core.cuts import Cuts
from solver.core.matrix import LinearModel
from solver.core.reduced_costs import Pricing


@dataclass
class LPSolution:
    """An optimal LP: its objective, row and column duals and column values."""

    objective: float
    row_dual: np.ndarray
    col_dual: np.ndarray
    values: np.ndarray


def repaired_duals(
    pricing: Pricing,
    duals: dict,
    rc: tuple[np.ndarray, np.ndarray],
    out: tuple[np.ndarray, np.ndarray],
    tol: float,
    master: tuple[LinearModel, LPSolution] | None = None,
) -> tuple[dict, dict[tuple[str, tuple], float]]:
    """The master's duals by family (:meth:`Pricing.duals`) repaired so that no column
    prices negative (:func:`repaired_bound`), and how much each row's dual was lowered:
    ((family, key) -> USD per unit of the row; a reserved row's may be negative).

    With ``master``: first every reserved-capacity row of a priced pool takes the
    reservation's rate for its hours (Pricing's ``absent_dual``), so a commitment's
    reduced cost is its price less its rate over the rows it covers (>= 0) and a column on
    reserved units pays that rate; the master's columns left negative by it count in the
    demand and ``train_once`` repair with the columns left out."""
    (rc_s, rc_z), (out_s, out_z) = rc, out
    drop: dict[tuple[str, tuple], float] = {}
    rc_master: dict[int, float] = {}
    if master is not None:
        model, lp = master
        rate_frame = pd.concat(
            [
                f.loc[f["absent_dual"] < 0, ["pool_id", "period", "block", "absent_dual"]]
                for f in (pricing.serving, pricing.train_usage)
            ]
        )
        by_key = rate_frame.groupby(["pool_id", "period", "block"])["absent_dual"].min()
        rate = dict(zip(by_key.index.tolist(), by_key.tolist(), strict=True))
        reserved = dict(duals.get("reserved_capacity", {}))
        new_reserved = {k: rate.get(k, y) for k, y in reserved.items()}
        for k, y in reserved.items():
            if k in rate and y != rate[k]:
                drop[("reserved_capacity", k)] = y - rate[k]
        _keep_unbounded(model, lp, drop, new_reserved, reserved, tol)
        duals = {**duals, "reserved_capacity": new_reserved}
        duals = _egress_repaired(pricing, duals, drop)
        duals = _without_cuts(duals, drop)
        rc_s, rc_z = pricing.reduced_costs(duals)
        for row in model.rows:
            d = drop.get((row.family, row.key), 0.0)
            if d:
                for j, a in row.coefs.items():
                    rc_master[j] = rc_master.get(j, float(lp.col_dual[j])) + a * d
        rc_master = {j: r for j, r in rc_master.items() if r < -tol}
    s = pricing.serving
    col = s["col"].to_numpy()
    tps = s["tps"].to_numpy(float)
    neg = (out_s & (rc_s < -tol))[col] & (tps > 0)
    need = pd.DataFrame(
        {
            "workload": s["workload"].to_numpy()[neg],
            "period": s["period"].to_numpy()[neg],
            "block": s["block"].to_numpy()[neg],
            "d": -rc_s[col[neg]] / tps[neg],
        }
    )
    by_row = need.groupby(["workload", "period", "block"])["d"].max()
    lower: dict[tuple, float] = dict(zip(by_row.index.tolist(), by_row.tolist(), strict=True))
    z = pricing.training
    neg_z = out_z & (rc_z < -tol)
    worst_z = pd.Series(-rc_z[neg_z]).groupby(z["workload"].to_numpy()[neg_z]).max()
    worst: dict[tuple, float] = {(w,): float(v) for w, v in worst_z.items()}
    if rc_master and master is not None:  # the master's columns the reserved step left < 0
        for row in master[0].rows:
            if row.family not in ("demand", "train_once"):
                continue
            for j, a in row.coefs.items():
                if j in rc_master and a > 0:
                    into = lower if row.family == "demand" else worst
                    into[row.key] = max(into.get(row.key, 0.0), -rc_master[j] / a)
    demand: dict[tuple, float] = dict(duals.get("demand", {}))
    new_duals = {k: max(0.0, y - lower[k]) if k in lower else y for k, y in demand.items()}
    for k in lower:
        if k in demand and demand[k] > new_duals[k]:
            drop[("demand", k)] = demand[k] - new_duals[k]
    # a training job runs on one option (train_once: sum z = 1, dual free): its dual
    # lowered by the most negative reduced cost of its options
    once = dict(duals.get("train_once", {}))
    new_once = dict(once)
    for key in once:
        if worst.get(key, 0.0) > 0:
            new_once[key] = once[key] - worst[key]
            drop[("train_once", key)] = worst[key]
    drop = {k: d for k, d in drop.items() if d}
    return {**duals, "demand": new_duals, "train_once": new_once}, drop


def _without_cuts(duals: dict, drop: dict[tuple[str, tuple], float]) -> dict:
    """``duals`` with every MIR cut's dual at 0 (a ``>=`` row's: of the right sign), the
    moves added to ``drop``. The demand repair below lowers the demand rows only, and a
    cut's dual left on a column priced out of the master keeps its reduced cost negative:
    before the pricing converges, a master with cuts gave a bound of minus millions
    (10,000 x 200 x 12, round 3 with 3,200 cuts: -$52,257,315, round 2 without them
    $2,448,668). At 0 the cuts give nothing to the bound, and take nothing from it."""
    cuts = duals.get(Cuts.FAMILY)
    if not cuts:
        return duals
    for k, y in cuts.items():
        if y:
            drop[(Cuts.FAMILY, k)] = drop.get((Cuts.FAMILY, k), 0.0) + y
    frame = duals.get("_cuts")
    out = {**duals, Cuts.FAMILY: dict.fromkeys(cuts, 0.0)}
    if isinstance(frame, pd.DataFrame):
        out["_cuts"] = frame.iloc[0:0]
    return out


def _egress_repaired(pricing: Pricing, duals: dict, drop: dict[tuple[str, tuple], float]) -> dict:
    """``duals`` with each ``egress_serve`` dual lowered to at most the cheapest egress
    variable of its priced columns' providers, and each ``egress_capacity`` dual of the
    master raised to min(0, c_e - y_serve') (it was at most c_e - y_serve: the egress
    variable's reduced cost >= 0; a degenerate row may hold any lower dual, 10k x 200 x
    12: -$0.28 per token/s); the moves added to ``drop``.

    The demand rows and the egress rows are parallel (a unit serves both in proportion),
    and the master's LP may put a workload's value on either: where it puts it on
    ``egress_serve``, the egress capacity of a provider the master lacks takes that dual
    (min(0, c_e - y_serve), :meth:`Pricing.egress_duals`) and the columns left out there
    price far below zero (10k x 200 x 12 round 1: -$0.80 per token/s against an egress
    price of $0.00095). Lowered, those rows lose (y - y') x the tokens/s served, and no
    egress variable's reduced cost falls below 0 (c_e - y_serve' - y_p' >= 0)."""
    e = getattr(pricing, "egress", None)
    serve = duals.get("egress_serve")
    if e is None or e.empty or not serve:
        return duals
    c_e = pd.Series(pricing.egress_cost(duals, e))
    c_min = c_e.groupby([e["workload"], e["period"], e["block"]]).min()
    cheapest = dict(zip(c_min.index.tolist(), c_min.tolist(), strict=True))
    new_serve = dict(serve)
    for k, y in serve.items():
        if k in cheapest and y > cheapest[k]:
            new_serve[k] = max(cheapest[k], 0.0)
            drop[("egress_serve", k)] = y - new_serve[k]
    cap = duals.get("egress_capacity", {})
    moved = [k for k in cap if k[:3] in new_serve]
    new_cap = dict(cap)
    if moved:
        frame = pd.DataFrame(moved, columns=["workload", "period", "block", "provider"])
        c_p = pricing.egress_cost(duals, frame)
        for k, c in zip(moved, c_p, strict=True):
            y2 = min(0.0, float(c) - new_serve[k[:3]])
            if y2 != cap[k]:
                new_cap[k] = y2
                drop[("egress_capacity", k)] = cap[k] - y2
    return {**duals, "egress_serve": new_serve, "egress_capacity": new_cap}


def _keep_unbounded(
    model: LinearModel,
    lp: LPSolution,
    drop: dict[tuple[str, tuple], float],
    new_reserved: dict,
    reserved: dict,
    tol: float,
) -> None:
    """Give back their master duals (in ``new_reserved``, out of ``drop``) to the reserved
    rows of every master column with no upper bound (a commitment) that the rates would
    leave with a negative reduced cost: it would enter the bound at minus infinity. Any
    duals of the right sign give a valid bound, the master's own among them (10k x 200 x
    12 with egress routed, round 1: 15 commitments at -$53 to -$256, the bound -inf)."""
    unbounded = ~np.isfinite(model.variables["ub"].to_numpy(float))
    # (row key, column, coefficient) of the unbounded columns in reserved rows, found once
    entries = [
        (row.key, j, a)
        for row in model.rows
        if row.family == "reserved_capacity"
        for j, a in row.coefs.items()
        if unbounded[j]
    ]
    for _ in range(10):
        rc: dict[int, float] = {}
        rows_of: dict[int, list] = {}
        for key, j, a in entries:
            d = drop.get(("reserved_capacity", key), 0.0)
            rc[j] = rc.get(j, float(lp.col_dual[j])) + a * d
            rows_of.setdefault(j, []).append(key)
        bad = [j for j, r in rc.items() if r < -tol]
        if not bad:
            return
        for j in bad:
            for k in rows_of[j]:
                drop.pop(("reserved_capacity", k), None)
                new_reserved[k] = reserved[k]


def repaired_bound(
    pricing: Pricing,
    model: LinearModel,
    lp: LPSolution,
    duals: dict,
    rc: tuple[np.ndarray, np.ndarray],
    out: tuple[np.ndarray, np.ndarray],
    tol: float,
) -> float:
    """A lower bound on the full problem's LP (USD) from the master's duals with each
    demand row's dual lowered until no serving column left out prices negative.

    Lagrangian relaxation holds for any duals of the right sign: for a vector y,
    L(y) = y.b + sum_j min(rc_j lb_j, rc_j ub_j) over every column of the full model is
    at most its LP optimum. At the master's own duals the columns left out with
    rc_j < 0 enter with rc_j x (their availability cap), which makes the bound useless
    early on (10k x 200 x 12, round 1: -$658M). Here y' is y with each demand row's
    dual lowered by d_r = max over the out serving pieces (column j, row r) with
    rc_j < 0 of -rc_j / a_rj (a_rj: the column's served capacity in the row), and
    clipped at 0 (a demand row is >=). Lowering a >= row's dual never lowers a reduced
    cost (every serving coefficient is positive), so every out column reaches rc >= 0
    (a reserved column spans every block of its period and is lowered on each: more
    than enough). The master's part of L(y') is worked from the LP's optimum without a
    new solve: L_master(y') = LP - sum_r d_r b_r + sum_j [m(rc'_j) - m(rc_j)] over the
    master's columns in the lowered rows, rc'_j = rc_j + sum_r a_rj d_r, m(rc) = rc lb
    if rc >= 0 else rc ub (the identity LP = y.b + sum_j m(rc_j) of an optimal basis).
    The out columns add sum min(0, rc'_j) ub_j at y' (their reduced costs priced again,
    :meth:`Pricing.reduced_costs`), training columns min(0, rc'_z) (at most one run).
    A training job's ``train_once`` row (sum z = 1, its dual free) is lowered the same
    way, by the most negative reduced cost of its options left out. Reserved-capacity
    rows first take the reservation's rate (:func:`repaired_duals`); they move either
    way, and the same sum holds for them (a commitment's rc' stays >= 0).
    Returns -inf when a lowered row holds a master column with no upper bound whose
    reduced cost would be negative (not expected: rc' >= rc >= 0 for such a column).
    """
    out_s, out_z = out
    new, drop = repaired_duals(pricing, duals, rc, out, tol, (model, lp))
    if not drop:
        return -np.inf
    # the master's columns: rc' = rc + a d on the lowered rows; L_master(y') from the LP
    value = lp.objective
    rc_new: dict[int, float] = {}
    for row in model.rows:
        d = drop.get((row.family, row.key), 0.0)
        if not d:
            continue
        value -= d * row.rhs
        for j, a in row.coefs.items():
            rc_new[j] = rc_new.get(j, float(lp.col_dual[j])) + a * d
    if rc_new:
        idx = np.fromiter(rc_new, dtype=np.int64, count=len(rc_new))
        after = np.fromiter(rc_new.values(), dtype=float, count=len(rc_new))
        before = lp.col_dual[idx]
        lb = model.variables["lb"].to_numpy(float)[idx]
        ub = model.variables["ub"].to_numpy(float)[idx]

        def m(rc: np.ndarray) -> np.ndarray:
            rc = np.where(np.abs(rc) <= tol, 0.0, rc)
            with np.errstate(invalid="ignore"):
                return np.where(rc >= 0, rc * lb, np.where(rc < 0, rc * ub, 0.0))

        delta = m(after) - m(before)
        if not np.all(np.isfinite(delta)):
            return -np.inf
        value += float(delta.sum())
    rc2_s, rc2_z = pricing.reduced_costs(new)
    out_rc, out_ub = rc2_s[out_s], pricing.columns["ub"].to_numpy(float)[out_s]
    value += float(np.sum(np.where(out_rc < 0, out_rc * out_ub, 0.0)))
    value += float(np.sum(np.minimum(rc2_z[out_z], 0.0)))
    return value
