"""The modelling periods the solver plans over: the problem's periods, split where a unit
that could be chosen stops serving.

Owned and reserved units are fixed within a period (DESIGN.md section 5), and a unit
serves a period only if it is in service all through it. A server bought at the start
of a period serves until its life ends, a reservation until its term ends; when that
month falls inside a period the unit cannot serve that period at all, and a plan over
the problem's periods may cost more than the same problem planned month by month (a
72-month period with a 60-month server life owns nothing). Splitting every period at
every month where a candidate's life or term ends, counted from every period start
(the split points are starts too, so the splits are closed under that rule), gives
periods no unit outlives part-way: every plan of the problem's periods is still a plan
of the split periods, at the same cost, and the plans that buy or reserve again, or
rent the rest, at the month a unit ends become possible.

Only candidates count: pools some option runs on, in a mode the problem allows, in the
period a unit starts in and in the period the split would cut (a pool nothing runs on
there gains nothing from it), and, when the objective is the cost, that do some
workload's work for less than the cheapest on-demand option able to do all of it
(:func:`_cheaper_than_renting`). Lead times are not split at: a server's delivery is
the user's to place.

Plain data in (the compiled tables), plain data out; :func:`solver.solve.solve_verified`
solves the split problem and reports its plan in the problem's periods
(:mod:`solver.plan.reporting`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from solver.core.compile import Compiled

#: The most modelling periods a split may make; beyond it the problem is solved over its
#: own periods and the plan warns (the model grows with the periods).
MAX_MODELLING_PERIODS = 72

_EPS_MONTHS = 1e-6
_HOURS_PER_MONTH = 730.0  # the ledger's average month: only to compare hourly costs


@dataclass(frozen=True)
class Refinement:
    """The modelling periods of a problem: each of its periods as the pieces it is cut into.

    Attributes
    ----------
    pieces
        Problem period name -> [(piece name, months)], in time order; a period not cut
        maps to ``[(name, months)]``.
    cuts_months
        The months (from the plan's start) where a period is cut, ascending.
    reasons
        Cut month -> the pools whose life or term ends there, with the month the unit
        starts: ``"box@colo#owned from month 0"``.
    """

    pieces: dict[str, list[tuple[str, float]]]
    cuts_months: tuple[float, ...]
    reasons: dict[float, tuple[str, ...]]

    @property
    def split(self) -> bool:
        """Whether any period is cut."""
        return bool(self.cuts_months)

    def reporting_period(self) -> dict[str, str]:
        """Piece name -> the problem period it is part of."""
        return {n: name for name, ps in self.pieces.items() for n, _ in ps}

    def as_dict(self) -> dict:
        """For the plan's compile report: the cuts and the pieces of each cut period."""
        return {
            "cuts_months": list(self.cuts_months),
            "pieces": {
                name: [{"name": n, "months": m} for n, m in ps]
                for name, ps in self.pieces.items()
                if len(ps) > 1
            },
            "reasons": {f"{m:g}": list(r) for m, r in self.reasons.items()},
        }


def _spans(compiled: Compiled) -> list[tuple[str, float, np.ndarray]]:
    """(pool id, months from a unit's start to the end of its service, the periods its
    options run in as a mask) for every candidate with an end: owned servers with a life
    (lead time and life), reservations with a term, in an allowed mode, on which some
    option runs."""
    pools, options = compiled.pools, compiled.options
    if pools.empty or options.empty:
        return []
    owned = pools["kind"].astype(str).to_numpy() == "owned"
    modes = np.where(owned, "owned", pools["mode"].astype(str).to_numpy())
    span = np.where(owned, _column(pools, "lifetime_months"), _column(pools, "term_months"))
    span = span + np.where(owned, _column(pools, "lead_months"), 0.0)
    ids = pools["pool_id"].astype(str).to_numpy()
    keep = np.isin(modes, sorted(compiled.problem.modes)) & (span > 0)
    if not keep.any():
        return []
    runs = _pool_periods(compiled)
    keep &= np.array([i in runs for i in ids], dtype=bool)
    worth = _cheaper_than_renting(compiled) if keep.any() else set()
    if worth is not None:
        keep &= np.array([i in worth for i in ids], dtype=bool)
    n_t = len(compiled.periods)
    out = []
    for i in np.flatnonzero(keep):
        active = np.zeros(n_t, dtype=bool)
        active[sorted(runs[ids[i]])] = True
        out.append((str(ids[i]), float(span[i]), active))
    return out


def _pool_periods(compiled: Compiled) -> dict[str, set[int]]:
    """Pool id -> the periods (indices) some option on it could run in: a serving
    workload's periods with demand, a training option's periods."""
    options, demand = compiled.options, compiled.demand
    by_workload: dict[str, set[int]] = {}
    if not demand.empty:
        live = demand[demand["demand"] > 0]
        for w, t in zip(live["workload"], live["period"], strict=True):
            by_workload.setdefault(str(w), set()).add(int(t))
    training = compiled.training_runs()
    out: dict[str, set[int]] = {}
    for k, w, pool in zip(
        options["option_id"], options["workload"], options["pool_id"], strict=True
    ):
        found = {t for t, _ in training.get(int(k), [])} | by_workload.get(str(w), set())
        if found:
            out.setdefault(str(pool), set()).update(found)
    return out


def _column(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A numeric column as floats, missing values and a missing column as 0."""
    if name not in frame:
        return np.zeros(len(frame))
    return pd.to_numeric(frame[name], errors="coerce").fillna(0.0).to_numpy(dtype=float)


def _hourly_usd(compiled: Compiled) -> pd.Series:
    """Option id -> USD per unit-hour at full use, a lower bound of what a unit costs: the
    price and energy; for owned servers hosting and energy, with the capex spread over
    the life only when nothing of it is credited back at the horizon."""
    options = compiled.options
    at = pd.Index(compiled.pools["pool_id"]).get_indexer(options["pool_id"])
    pools = compiled.pools
    energy = _column(options, "energy_usd_per_unit_hour")
    price = _column(options, "price_usd_per_hour")
    owned = pools["kind"].astype(str).to_numpy()[at] == "owned"
    life_h = _column(pools, "lifetime_months")[at] * _HOURS_PER_MONTH
    capex = _column(pools, "capex_usd")[at]
    if compiled.problem.residual_value != "none":
        capex = np.zeros_like(capex)
    hosting = _column(pools, "hosting_usd_per_month")[at]
    spread = np.divide(capex, life_h, out=np.zeros_like(capex), where=life_h > 0)
    owned_h = spread + hosting / _HOURS_PER_MONTH
    return pd.Series(np.where(owned, owned_h, price) + energy, index=options.index)


def _cheaper_than_renting(compiled: Compiled) -> set[str] | None:
    """The committed pools (owned, reserved) that do some workload's work for less than
    the cheapest on-demand option that could do all of it within its cap: per token/s of
    capacity for serving, per job for training. A pool dearer than that for every
    workload gains nothing from a split: renting does the same work for less. None
    (every pool counts) when the objective is not the cost."""
    if compiled.problem.objective not in ("min_cost", "min_npv"):
        return None
    options = compiled.options
    at = pd.Index(compiled.pools["pool_id"]).get_indexer(options["pool_id"])
    cap = _column(compiled.pools, "availability_cap")[at]
    hourly = _hourly_usd(compiled).to_numpy(dtype=float)
    training = options["workload_kind"].astype(str).to_numpy() == "training"
    tps = _column(options, "tokens_per_s_per_unit")
    n = _column(options, "n_units")
    hours = _column(options, "job_hours")
    work_usd = np.where(
        training,
        hourly * n * hours,
        np.divide(hourly, tps, out=np.full_like(hourly, np.nan), where=tps > 0),
    )
    peak = _peak_tokens_per_s(compiled)
    workloads = options["workload"].astype(str).to_numpy()
    alone = np.where(training, cap >= n, cap * tps >= [peak.get(w, np.inf) for w in workloads])
    rent = (options["mode"].to_numpy() == "on_demand") & alone & np.isfinite(work_usd)
    best: dict[str, float] = {}
    for w, usd in zip(workloads[rent], work_usd[rent], strict=True):
        best[w] = min(best.get(w, np.inf), float(usd))
    out: set[str] = set()
    for w, pool, usd in zip(workloads, options["pool_id"].astype(str), work_usd, strict=True):
        if not np.isfinite(usd) or usd < best.get(w, np.inf) * (1 + 1e-9):
            out.add(pool)
    return out


def _peak_tokens_per_s(compiled: Compiled) -> dict[str, float]:
    """Serving workload -> its largest demand in output tokens/s (workloads whose demand
    is in other units are left out: no rented option is taken to cover them)."""
    demand = compiled.demand
    if demand.empty or "unit" not in demand:
        return {}
    tokens = demand[(demand["unit"] == "tokens_per_s") & (demand["bucket"] == -1)]
    return {str(w): float(v) for w, v in tokens.groupby("workload")["demand"].max().items()}


def refine_periods(compiled: Compiled, limit: int = MAX_MODELLING_PERIODS) -> Refinement | None:
    """The problem's periods cut at every month where a candidate unit started at a
    period start (or at a cut) stops serving, inside a period it could serve.

    Returns None when that takes more than ``limit`` periods (the caller keeps the
    problem's periods and warns).
    """
    periods = compiled.periods
    starts = periods["start_month"].to_numpy(dtype=float)
    ends = periods["end_month"].to_numpy(dtype=float)
    horizon = float(ends[-1]) if len(ends) else 0.0
    spans = _spans(compiled)
    cuts: dict[float, set[str]] = {}
    todo = sorted(float(s) for s in starts)
    seen = set(todo)
    while todo:
        begin = todo.pop(0)
        first = int(np.searchsorted(ends, begin, side="right"))  # the period it starts in
        for pool_id, span, active in spans:
            end = round(begin + span, 6)
            if end >= horizon - _EPS_MONTHS:
                continue
            t = int(np.searchsorted(ends, end, side="right"))
            if not active[t] or not active[first] or abs(starts[t] - end) < _EPS_MONTHS:
                continue
            cuts.setdefault(end, set()).add(f"{pool_id} from month {begin:g}")
            if end not in seen:
                seen.add(end)
                todo.append(end)
                todo.sort()
                if len(periods) + len(cuts) > limit:
                    return None
    return _pieces(periods, cuts)


def _pieces(periods: pd.DataFrame, cuts: dict[float, set[str]]) -> Refinement:
    """The :class:`Refinement` of ``periods`` cut at the months in ``cuts``."""
    names = set(periods["name"].astype(str))
    marks = sorted(cuts)
    pieces: dict[str, list[tuple[str, float]]] = {}
    for row in periods.itertuples(index=False):
        # stubs type a row field as any Scalar; these columns are float
        name, s, e = str(row.name), float(row.start_month), float(row.end_month)  # type: ignore[arg-type]
        inside = [m for m in marks if s + _EPS_MONTHS < m < e - _EPS_MONTHS]
        if not inside:
            pieces[name] = [(name, float(row.months))]  # type: ignore[arg-type]  # stubs type a row field as any Scalar
            continue
        bounds = [s, *inside, e]
        sep = "-"
        while any(f"{name}{sep}{i}" in names for i in range(1, len(bounds))):
            sep += "-"  # never a name the problem already uses
        pieces[name] = [
            (f"{name}{sep}{i + 1}", round(bounds[i + 1] - bounds[i], 6))
            for i in range(len(bounds) - 1)
        ]
    return Refinement(
        pieces=pieces,
        cuts_months=tuple(marks),
        reasons={m: tuple(sorted(cuts[m])) for m in marks},
    )
