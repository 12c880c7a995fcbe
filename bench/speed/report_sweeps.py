"""Per-point timing of the report's sweeps: the carbon frontier, the budget and demand
sweeps and the price scenarios (issue 28, part C).

Run: python bench/speed/report_sweeps.py [problem.yaml] [--only frontier,budget,demand,scenarios]
     [--frontier-points 8] [--scenarios 20] [--workers 1] [--json OUT] [--compare OLD]
     [--per-point] [--gap 1e-4,1e-3,5e-3,1e-2]

Compiles the problem without pruning (as ``procure report`` does), then runs each sweep
of :func:`solver.analyses.report_analysis.build_analysis` with its default points, in this process
(``--workers 1``, the default here) or across local processes. Prints, per sweep, its
wall and CPU seconds (this process and its children, so a busy machine inflates only
the wall time) and each point's value, cost, CO2e and served fraction: the figures a
comparison of two trees checks (``--json`` writes them; ``--compare OLD`` checks them
against a file another tree wrote: costs and CO2e to 1e-6 relative, the same pools used
and the same scenario shares, and exits non-zero when any differs).

``--per-point`` times each point's steps in this process as ``solve_point`` takes them (re-prune,
build, the restricted start, the MIP) with HiGHS's node count, in CPU seconds: where a
sweep's time goes.

``--gap`` proves every point to each relative gap given (comma-separated) in turn, in one
process, and prints per sweep and gap its CPU seconds, its HiGHS nodes (with
``--per-point``) and the largest difference of a point's objective from the first gap's:
the measured cost and benefit of ``procure report --sweep-gap``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("frontier", "budget", "demand", "scenarios")


def cpu_s() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class PerPoint:
    """Times each point of a sweep run in this process: ``solve_point`` as a whole, and inside it
    HiGHS's restricted start and MIP (:class:`HighsSession`), with the MIP's node count."""

    def __init__(self) -> None:
        from solver.analyses.sensitivity import sweeps
        from solver.core.backends.highs_backend import HighsSession

        self.steps: dict[str, float] = {}
        self.nodes = 0  # HiGHS nodes of every MIP timed so far
        point, start, solve = sweeps.solve_point, HighsSession.restricted_start, HighsSession.solve

        def timed_start(session, *a, **k):
            began = time.process_time()
            try:
                return start(session, *a, **k)
            finally:
                self.steps["start"] = self.steps.get("start", 0.0) + time.process_time() - began

        def timed_solve(session, *a, **k):
            began = time.process_time()
            try:
                return solve(session, *a, **k)
            finally:
                self.steps["solve"] = self.steps.get("solve", 0.0) + time.process_time() - began
                nodes = session.h.getInfo().mip_node_count
                self.steps["nodes"] = self.steps.get("nodes", 0) + nodes
                self.nodes += nodes

        def timed_point(compiled, task):
            self.steps = {}
            began = time.process_time()
            out = point(compiled, task)
            total = time.process_time() - began
            st, sv = self.steps.get("start", 0.0), self.steps.get("solve", 0.0)
            print(
                f"    {task[1]}={task[2]:.6g}: {total:.2f} s CPU: prune, build and summary "
                f"{total - sv:.2f}, restricted start {st:.2f}, MIP {sv - st:.2f} "
                f"({self.steps.get('nodes', 0)} nodes)",
                flush=True,
            )
            return out

        sweeps.solve_point = timed_point
        HighsSession.restricted_start = timed_start
        HighsSession.solve = timed_solve


def compare(old: dict, new: dict) -> list[str]:
    """What differs between two ``--json`` files' answers: costs and CO2e beyond 1e-6
    relative, statuses, pools used, scenario shares."""

    def close(a, b) -> bool:
        if a is None or b is None:
            return a is b
        return abs(a - b) <= 1e-6 * max(1.0, abs(a))

    out = []
    for kind in old.keys() & new.keys():
        a, b = old[kind]["points"], new[kind]["points"]
        if len(a) != len(b):
            out.append(f"{kind}: {len(a)} points against {len(b)}")
            continue
        for p, q in zip(a, b, strict=True):
            fields = ("value", "total_cost_usd", "total_co2e_t", "served_fraction", "objective")
            same = all(close(p[f], q[f]) for f in fields)
            if not same or p["status"] != q["status"] or p["used"] != q["used"]:
                out.append(f"{kind} {p['sweep']}={p['value']:.6g}: {p} against {q}")
        sa, sb = old[kind]["share"] or {}, new[kind]["share"] or {}
        if sa.keys() != sb.keys() or not all(close(sa[k], sb[k]) for k in sa):
            out.append(f"{kind}: shares {sa} against {sb}")
    return out


def sweeps(compiled, base_cost_usd: float, args) -> dict:
    """Each sweep the report runs, as ``build_analysis`` calls it."""
    from solver.analyses.sensitivity import (
        budget_sweep,
        carbon_frontier,
        demand_sweep,
        price_scenarios,
    )

    run = {"workers": args.workers, "gap": args.gap_now}
    budgets = np.linspace(0.5 * base_cost_usd, 1.25 * base_cost_usd, 6)
    return {
        "frontier": lambda: carbon_frontier(compiled, points=args.frontier_points, **run),
        "budget": lambda: budget_sweep(compiled, budgets, **run),
        "demand": lambda: demand_sweep(compiled, (0.5, 1.0, 1.5, 2.0, 3.0), **run),
        "scenarios": lambda: price_scenarios(compiled, n=args.scenarios, **run),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--only", default=",".join(KINDS))
    parser.add_argument("--frontier-points", type=int, default=8)
    parser.add_argument("--scenarios", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--compare", type=Path, default=None)
    parser.add_argument("--per-point", action="store_true")
    parser.add_argument("--gap", default=None, help="relative gaps, comma-separated")
    args = parser.parse_args()
    if args.per_point and args.workers != 1:
        parser.error("--per-point times the points in this process: use --workers 1")
    timer = PerPoint() if args.per_point else None

    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem
    from solver.solve import solve_for_analysis

    plan, solution = solve_for_analysis(load_problem(args.problem), load_catalog())
    print(f"{Path(args.problem).name}: plan ${plan.total_cost_usd:,.2f}")
    out: dict = {}
    gaps = [float(g) for g in args.gap.split(",")] if args.gap else [None]
    rows: list[str] = []
    first: dict[str, list] = {}
    for gap in gaps:
        from solver.analyses.sensitivity.sweeps import POINT_GAP

        args.gap_now = POINT_GAP if gap is None else gap
        make = sweeps(solution.compiled, plan.total_cost_usd, args)
        for kind in args.only.split(","):
            nodes = timer.nodes if timer else 0
            wall, cpu = time.perf_counter(), cpu_s()
            result = make[kind]()
            wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
            nodes = (timer.nodes - nodes) if timer else 0
            points, share = result if kind == "scenarios" else (result, None)
            print(
                f"{kind} gap {args.gap_now:g}: {len(points)} points, {wall:.2f} s wall, "
                f"{cpu:.2f} s CPU, {nodes} nodes"
            )
            for p in points:
                cost = "-" if p.total_cost_usd is None else f"${p.total_cost_usd:,.2f}"
                co2 = "-" if p.total_co2e_t is None else f"{p.total_co2e_t:.4f} t"
                served = "-" if p.served_fraction is None else f"{p.served_fraction:.6f}"
                stated = "-" if p.gap is None else f"{p.gap:.4%}"
                taken = "" if p.plan_of is None else f" (plan of {p.plan_of:.6g})"
                print(
                    f"  {p.sweep}={p.value:.6g}: {p.status} {cost} {co2} served {served} "
                    f"gap {stated}{taken}"
                )
            base = first.setdefault(kind, points)
            moved = max(
                (
                    abs(p.objective - q.objective) / max(abs(q.objective), 1e-9)
                    for p, q in zip(points, base, strict=True)
                    if p.objective is not None and q.objective is not None
                ),
                default=0.0,
            )
            worst = max((p.gap or 0.0 for p in points), default=0.0)
            rows.append(
                f"| {kind} | {args.gap_now:g} | {len(points)} | {cpu:.1f} | {nodes} | "
                f"{worst:.3%} | {moved:.3%} |"
            )
            out[f"{kind}@{args.gap_now:g}" if args.gap else kind] = {
                "wall_s": wall,
                "cpu_s": cpu,
                "nodes": nodes,
                "points": [p.model_dump(mode="json") for p in points],
                "share": share,
            }
    print(
        "| sweep | gap | points | CPU s | nodes | largest stated gap | largest move from 1st gap |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    if args.compare:
        differs = compare(json.loads(args.compare.read_text()), out)
        for line in differs:
            print(f"DIFFERS {line}")
        print(f"answers against {args.compare}: {'different' if differs else 'identical'}")
        if differs:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
