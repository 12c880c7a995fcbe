"""Replay a plan's serving fleets against traffic and compare with what the plan assumed.

For every online workload, period and load block the plan serves (:mod:`.fleet`), the
block's traffic (a given trace, or Poisson arrivals at the block's worst-hour rate) is
replayed on the whole fleet and on the fleet with one unit of its largest deployment lost
(N+1). Latencies are those of vLLM's benchmark: TTFT from arrival to the first token,
TPOT the mean gap between the later tokens ((end - first token) / (output - 1)),
end-to-end from arrival to the last token. A request never served (its prompt cannot fit
any cache) counts as late on every limit.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from solver.analyses.replay.disagg import simulate_disaggregated, split_by_capacity
from solver.analyses.replay.engine import ReplicaStats, Request, simulate
from solver.analyses.replay.fleet import (
    TOKEN_BUDGET,
    Deployment,
    Scenario,
    capacities,
    prefill_replicas,
    replicas,
    scenarios,
    without_largest_unit,
)
from solver.analyses.replay.trace import TraceRow, poisson_trace, scaled
from solver.inputs.catalog import Catalog
from solver.inputs.problem import Problem
from solver.plan import Plan

PERCENTILES = (50.0, 90.0, 99.0)
#: the percentile the SLOs are judged at when the workload names none (its SLOs are means)
DEFAULT_PERCENTILE = 0.99
#: fewest requests a synthetic block replays (a p99 of 2,000 is the 20th slowest): a block
#: whose rate gives fewer in ``duration_s`` is replayed longer, up to :data:`MAX_WINDOW_S`
MIN_REQUESTS = 2000
MAX_WINDOW_S = 86_400.0


@dataclass(frozen=True)
class Latencies:
    """p50, p90 and p99 of one latency, seconds (inf where a request was never served)."""

    p50_s: float
    p90_s: float
    p99_s: float
    at_slo_percentile_s: float


@dataclass(frozen=True)
class ReplayRow:
    """One fleet (a block's deployments, or one of them) under one case of the replay."""

    workload: str
    period: str
    block: str
    case: str  # "all units" or "N+1 lost"
    deployment: str  # offering (mode), or "" for the whole block
    units: int
    replicas: int
    requests: int
    unserved: int
    ttft: Latencies
    tpot: Latencies
    e2e: Latencies
    ttft_late_share: float  # requests whose TTFT is over the limit
    tpot_late_share: float
    utilisation: float  # mean decoding batch / the plan's batch
    busy_share: float  # share of the time a replica was running a step
    planned_batch: int
    planned_utilisation: float  # the block's demand over the plan's capacity
    ttft_slo_s: float
    tpot_slo_s: float
    slo_percentile: float
    plan_percentile: float | None
    meets_slo: bool
    pool_role: str = ""  # a disaggregated deployment's pool ("prefill", "decode"), else ""


@dataclass(frozen=True)
class ReplayResult:
    """Every row of a replay, its settings and how fast it ran."""

    rows: list[ReplayRow]
    source: str  # "synthetic (Poisson ...)" or the trace file
    duration_s: float
    seed: int
    requests_simulated: int
    simulate_s: float

    @property
    def meets_slos(self) -> bool:
        """Whether every block, in every case, meets its limits."""
        return all(r.meets_slo for r in self.rows if r.deployment == "")

    def as_dict(self) -> dict:
        """Plain data (JSON)."""
        out = asdict(self)
        out["meets_slos"] = self.meets_slos
        return out


def _latencies(values: np.ndarray, p: float) -> Latencies:
    if values.size == 0:
        return Latencies(0.0, 0.0, 0.0, 0.0)
    with np.errstate(invalid="ignore"):  # inf - inf between two never-served requests
        q = np.percentile(values, [*PERCENTILES, 100.0 * p])
    return Latencies(*(float(x) if x == x else math.inf for x in q))


def _row_stats(
    done: list[Request],
    stats: list[ReplicaStats],
    span_s: float,
    deployments: tuple[Deployment, ...],
) -> dict:
    """Latency distributions and use of one group of replicas over the measured requests;
    ``deployments`` of the whole block (a replica's group indexes them)."""
    inf = math.inf
    ttft = np.array([r.first_token_s - r.arrival_s if r.done_s == r.done_s else inf for r in done])
    e2e = np.array([r.done_s - r.arrival_s if r.done_s == r.done_s else inf for r in done])
    tpot = np.array(
        [
            (r.done_s - r.first_token_s) / (r.output_tokens - 1) if r.done_s == r.done_s else inf
            for r in done
            if r.output_tokens > 1
        ]
    )
    # each replica's mean running batch over its own deployment's planned batch
    shares = [
        s.mean_batch / deployments[s.group].planned_batch
        for s in stats
        if deployments[s.group].planned_batch > 0
    ]
    busy = sum(s.busy_s for s in stats) / (len(stats) * span_s) if stats and span_s > 0 else 0.0
    return {
        "ttft": ttft,
        "tpot": tpot,
        "e2e": e2e,
        "unserved": int(sum(1 for r in done if r.done_s != r.done_s)),
        "utilisation": sum(shares) / len(shares) if shares else 0.0,
        "busy_share": busy,
    }


def _arrivals(
    scenario: Scenario, trace: list[TraceRow] | None, as_is: bool, duration_s: float, seed: int
) -> tuple[list[TraceRow], float, float]:
    """(rows, start and end of the measured window, s): a trace whole, or Poisson arrivals
    with a warm-up before and a tail after the window (measured requests meet a loaded
    fleet, not an empty one)."""
    if trace is not None:
        rows = trace if as_is else scaled(trace, scenario.requests_per_s)
        return rows, 0.0, math.inf
    sizes = scenario.mix or ((1.0, scenario.prompt_tokens, scenario.output_tokens),)
    if scenario.requests_per_s > 0:  # enough requests for a p99 (MIN_REQUESTS)
        duration_s = min(max(duration_s, MIN_REQUESTS / scenario.requests_per_s), MAX_WINDOW_S)
    warm = 0.2 * duration_s
    rows = poisson_trace(scenario.requests_per_s, warm + duration_s + warm, sizes, seed)
    return rows, warm, warm + duration_s


def _simulate(
    deployments: tuple[Deployment, ...],
    requests: list[Request],
    window: tuple[float, float],
    seed: int,
) -> tuple[list[ReplicaStats], float, dict[int, set[int]]]:
    """Replay ``requests`` on a block's fleet: the aggregated replicas' engine, and where
    the block has disaggregated deployments their prefill pool, KV transfer and decode
    pool (replay/disagg.py), the requests split between the two sides by capacity.
    Returns the replicas' statistics, the last finish and each request's deployments
    (by ``id``)."""
    agg_specs = replicas(deployments)
    pre_specs = prefill_replicas(deployments)
    dec_specs = replicas(deployments, "decode")
    agg_cap, dis_cap = capacities(deployments)
    has_dis = any(d.pool_role for d in deployments)
    share = dis_cap / (agg_cap + dis_cap) if agg_cap + dis_cap > 0 else float(has_dis)
    agg_req, dis_req = split_by_capacity(requests, share if has_dis else 0.0, seed)
    groups: dict[int, set[int]] = {}
    stats: list[ReplicaStats] = []
    end_s = 0.0
    if agg_specs and agg_req:
        _, st, end_s = simulate(agg_specs, agg_req, window)
        stats += st
        for r in agg_req:
            groups[id(r)] = {agg_specs[r.replica].group} if r.replica >= 0 else set()
    if dis_req:
        _, pre_st, dec_st, end_d = simulate_disaggregated(pre_specs, dec_specs, dis_req, window)
        stats += pre_st + dec_st
        end_s = max(end_s, end_d)
        for r in dis_req:  # its prefill deployment and its decode deployment
            g = {pre_specs[r.replica].group} if r.replica >= 0 else set()
            if r.decode_replica >= 0:
                g.add(dec_specs[r.decode_replica].group)
            groups[id(r)] = g
    return stats, end_s, groups


def _case(
    scenario: Scenario,
    deployments: tuple[Deployment, ...],
    case: str,
    rows: list[TraceRow],
    window: tuple[float, float],
    p: float,
    seed: int = 0,
) -> tuple[list[ReplayRow], int]:
    requests = [Request(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in rows]
    stats, end_s, groups_of = _simulate(deployments, requests, window, seed)
    span_s = max(0.0, min(end_s, window[1]) - window[0])
    measured = [r for r in requests if window[0] <= r.arrival_s < window[1]]
    demand_tps = scenario.requests_per_s * _mean_output(scenario)
    out = []
    groups = [(-1, "", deployments)]
    if len(deployments) > 1:  # one row per deployment under the block's
        groups += [
            (g, f"{d.offering} ({d.mode})" + (f" {d.pool_role} pool" if d.pool_role else ""), (d,))
            for g, d in enumerate(deployments)
        ]
    capacity = sum(capacities(deployments))
    for g, label, deps in groups:
        these = [r for r in measured if g < 0 or g in groups_of.get(id(r), set())]
        st = [s for s in stats if g < 0 or s.group == g]
        planned_batch = max((d.planned_batch for d in deps), default=0)
        # the plan loads every deployment of a block alike: demand over capacity
        share = demand_tps / capacity if capacity else math.inf
        s = _row_stats(these, st, span_s, deployments)
        lat = {k: _latencies(s[k], p) for k in ("ttft", "tpot", "e2e")}
        late_t = float(np.mean(s["ttft"] > scenario.ttft_slo_s)) if s["ttft"].size else 0.0
        late_o = float(np.mean(s["tpot"] > scenario.tpot_slo_s)) if s["tpot"].size else 0.0
        meets = (
            lat["ttft"].at_slo_percentile_s <= scenario.ttft_slo_s
            and lat["tpot"].at_slo_percentile_s <= scenario.tpot_slo_s
        )
        out.append(
            ReplayRow(
                workload=scenario.workload,
                period=scenario.period,
                block=scenario.block,
                case=case,
                deployment=label,
                units=sum(d.units for d in deps),
                replicas=sum(d.units * d.replicas_per_unit for d in deps),
                requests=len(these),
                unserved=s["unserved"],
                ttft=lat["ttft"],
                tpot=lat["tpot"],
                e2e=lat["e2e"],
                ttft_late_share=late_t,
                tpot_late_share=late_o,
                utilisation=s["utilisation"],
                busy_share=s["busy_share"],
                planned_batch=planned_batch,
                planned_utilisation=share,
                ttft_slo_s=scenario.ttft_slo_s,
                tpot_slo_s=scenario.tpot_slo_s,
                slo_percentile=p,
                plan_percentile=scenario.slo_percentile,
                meets_slo=meets,
                pool_role=deps[0].pool_role if g >= 0 else "",
            )
        )
    return out, len(requests)


def _mean_output(scenario: Scenario) -> float:
    if scenario.mix:
        total = sum(s for s, _, _ in scenario.mix)
        return sum(s * o for s, _, o in scenario.mix) / total
    return float(scenario.output_tokens)


def replay_plan(
    plan: Plan,
    problem: Problem,
    catalog: Catalog,
    *,
    trace: list[TraceRow] | None = None,
    trace_as_is: bool = False,
    source: str = "",
    duration_s: float = 600.0,
    seed: int = 0,
    percentile: float | None = None,
    lose_unit: bool = True,
    token_budget: int = TOKEN_BUDGET,
) -> ReplayResult:
    """Replay every serving fleet of ``plan`` (module doc).

    Parameters
    ----------
    trace
        Requests to replay; None: Poisson arrivals at each block's worst-hour rate for
        ``duration_s`` seconds, or long enough for :data:`MIN_REQUESTS` (plus 20% warm-up
        before and 20% after, not measured).
    trace_as_is
        Replay the trace's own times; else they are stretched to each block's rate.
    percentile
        Fraction (0.99) at which the SLOs are judged; None: the workload's
        ``slo_percentile``, else :data:`DEFAULT_PERCENTILE`.
    lose_unit
        Also replay each block of a workload planned N+1 (``redundancy: n_plus_1``) with
        one unit of its largest deployment lost.
    token_budget
        Tokens one engine step runs at most (vLLM's ``max_num_batched_tokens``).
    """
    import time

    rows: list[ReplayRow] = []
    simulated = 0
    began = time.perf_counter()
    cache: dict[tuple, tuple[list[ReplayRow], int]] = {}
    for sc in scenarios(plan, problem, catalog, token_budget):
        p = percentile or sc.slo_percentile or DEFAULT_PERCENTILE
        arrivals, start, end = _arrivals(sc, trace, trace_as_is, duration_s, seed)
        cases = [("all units", sc.deployments)]
        if lose_unit and sc.n_plus_1:
            cases.append(("N+1 lost", without_largest_unit(sc.deployments)))
        for case, deps in cases:
            key = (case, sc.workload, sc.requests_per_s, deps, p)
            if key not in cache:
                cache[key] = _case(sc, deps, case, arrivals, (start, end), p, seed)
                simulated += cache[key][1]
            for r in cache[key][0]:
                rows.append(ReplayRow(**{**r.__dict__, "period": sc.period, "block": sc.block}))
    return ReplayResult(
        rows=rows,
        source=source or "synthetic: Poisson arrivals at each block's worst-hour rate",
        duration_s=duration_s,
        seed=seed,
        requests_simulated=simulated,
        simulate_s=time.perf_counter() - began,
    )
