"""Tie classes on the case that needed them: ``traffic-mix-measured`` with on-demand at
massedcompute only (quality.py's ``on_demand_in``), solved with identical pools merged
(solver.core.compile.ties) and, for comparison, without, each to the default gap.

Run: python bench/quality/tied_pools.py [--repeat 3] [--time-limit 60] [--no-plain]

Prints, per run: wall and CPU seconds of ``solve_problem`` (compile, solve, verification),
status, gap, total cost, and the classes merged; then the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality import on_demand_in  # noqa: E402

from solver.core.backends import SolveOptions  # noqa: E402
from solver.core.compile import ties  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.problem import load_problem  # noqa: E402
from solver.solve import solve_problem  # noqa: E402

ROOT = HERE.parents[1]


def run(merge: bool, limit_s: float) -> dict:
    """One solve; wall and CPU seconds, status, gap, cost, classes."""
    ties.MERGE_TIES = merge
    catalog = load_catalog()
    problem = on_demand_in(
        load_problem(ROOT / "problems" / "traffic-mix-measured.yaml"), "massedcompute"
    )
    wall, cpu = time.perf_counter(), time.process_time()
    plan = solve_problem(
        problem, catalog, options=SolveOptions(time_limit_s=limit_s, threads=1), explain=False
    )
    return {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "status": plan.status,
        "gap": plan.gap or 0.0,
        "cost_usd": plan.total_cost_usd,
        "verified": plan.verified,
        "ties": plan.compile_report.get("ties", {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--no-plain", action="store_true", help="merged runs only")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    for merge in (True, False) if not args.no_plain else (True,):
        runs = []
        for _ in range(args.repeat):
            r = run(merge, args.time_limit)
            runs.append(r)
            t = r["ties"]
            merged = (
                f"{t['classes']} classes, {t['pools_merged']} pools, "
                f"{t['columns_before']} -> {t['columns_after']} columns"
                if t
                else "none"
            )
            print(
                f"{'merged' if merge else 'plain '}: wall {r['wall_s']:.1f} s, cpu "
                f"{r['cpu_s']:.1f} s, {r['status']}, gap {r['gap']:.4%}, "
                f"${r['cost_usd']:,.2f}, verified {r['verified']}; ties: {merged}"
            )
        print(
            f"{'merged' if merge else 'plain '} median of {len(runs)}: wall "
            f"{statistics.median(r['wall_s'] for r in runs):.1f} s, cpu "
            f"{statistics.median(r['cpu_s'] for r in runs):.1f} s; proven in "
            f"{sum(r['status'] == 'optimal' for r in runs)} of {len(runs)}"
        )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
