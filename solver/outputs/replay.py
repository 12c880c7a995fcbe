"""``procure replay`` output: a table per workload (each block, all units and one unit
lost, beside the plan's limits and utilisation), or JSON."""

from __future__ import annotations

import json
import math

from solver.analyses.replay import ReplayResult, ReplayRow


def _ms(seconds: float) -> str:
    return "never" if not math.isfinite(seconds) else f"{seconds * 1000:,.0f}"


def _line(r: ReplayRow) -> str:
    name = f"{r.period} {r.block}" if not r.deployment else f"  {r.deployment}"
    verdict = "" if r.deployment else ("meets" if r.meets_slo else "MISSES")
    return (
        f"{name:<28} {r.case:<9} {r.units:>5} {r.requests:>7} "
        f"{_ms(r.ttft.p50_s):>6} {_ms(r.ttft.p90_s):>6} {_ms(r.ttft.p99_s):>6} "
        f"{_ms(r.tpot.p50_s):>5} {_ms(r.tpot.p90_s):>5} {_ms(r.tpot.p99_s):>5} "
        f"{_ms(r.e2e.p50_s):>7} {_ms(r.e2e.p99_s):>7} "
        f"{100 * max(r.ttft_late_share, r.tpot_late_share):>5.1f} "
        f"{100 * r.utilisation:>4.0f} {100 * r.planned_utilisation:>4.0f}  {verdict}"
    )


def replay_table(result: ReplayResult) -> str:
    """The replay as text: one line per block and case, one per deployment under it."""
    out = [f"Replay of the plan's serving fleets ({result.source}; seed {result.seed})"]
    seen: set[str] = set()
    for r in result.rows:
        if r.workload not in seen:
            seen.add(r.workload)
            plan_p = "the mean" if r.plan_percentile is None else f"p{100 * r.plan_percentile:g}"
            out += [
                "",
                f"{r.workload}: limits TTFT {_ms(r.ttft_slo_s)} ms, TPOT {_ms(r.tpot_slo_s)} ms, "
                f"judged at p{100 * r.slo_percentile:g} (the plan was sized at {plan_p})",
                f"{'period block':<28} {'case':<9} {'units':>5} {'reqs':>7} "
                f"{'TTFT p50':>6} {'p90':>6} {'p99':>6} {'TPOT p50':>5} {'p90':>5} {'p99':>5} "
                f"{'E2E p50':>7} {'p99':>7} {'late%':>5} {'use%':>4} {'plan%':>4}",
            ]
        out.append(_line(r))
    misses = [r for r in result.rows if not r.deployment and not r.meets_slo]
    out += [
        "",
        "times in ms; late%: requests over a limit; use%: mean running batch / the plan's "
        "batch; plan%: the block's demand / the plan's capacity",
        f"{result.requests_simulated:,} requests simulated in {result.simulate_s:.1f} s",
        "every block meets its limits"
        + (", with one unit lost too" if any(r.case == "N+1 lost" for r in result.rows) else "")
        if not misses
        else f"{len(misses)} block case(s) miss a limit at their percentile",
    ]
    return "\n".join(out) + "\n"


def replay_json(result: ReplayResult, exit_code: int) -> str:
    """The replay as JSON (``inf`` latencies, never reached, as null)."""

    def clean(value: object) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    data = clean(result.as_dict())
    assert isinstance(data, dict)
    data["exit_code"] = exit_code
    return json.dumps(data, indent=2) + "\n"
