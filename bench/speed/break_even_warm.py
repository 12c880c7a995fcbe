"""Break-even search on the seed problem: warm re-solves against cold ones.

Run: python bench/speed/break_even_warm.py [--pools N] [--cold-solver highs] [--workers W]

Warm: one HiGHS model per pool changed in place (costs, the cost rows, a forcing
row), each solve starting from the last plan. Cold: the model rebuilt from the
compiled problem at each trial price and solved afresh through PuLP (the
``--cold-solver``). Both run the same Newton search over the same pools (all that
could serve a workload, or the first N in a seeded shuffle) in one process, one
after the other; the script checks they find the same prices and prints the ratio.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from solver.analyses.sensitivity import break_even_candidates, break_even_prices
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import optimise

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--pools", type=int, default=0, help="0: every pool")
    parser.add_argument("--cold-solver", default="highs")
    parser.add_argument("--workers", type=int, default=1, help="local processes, both runs")
    args = parser.parse_args()
    compiled = compile_problem(load_problem(args.problem), load_catalog(), prune_dominated=False)
    solution = optimise(compiled, build_model(compiled), solver="highspy", options=SolveOptions())
    pools, _ = break_even_candidates(solution)
    if args.pools:
        random.Random(0).shuffle(pools)
        pools = sorted(pools[: args.pools])
    print(f"{len(pools)} pools (offering x mode, or server x site) of {len(compiled.pools)}")
    results = {}
    for label, warm in (("warm", True), ("cold", False)):
        started = time.perf_counter()
        rows = break_even_prices(
            solution, pools=pools, warm=warm, solver=args.cold_solver, workers=args.workers
        )
        seconds = time.perf_counter() - started
        solves = sum(b.solves for b in rows)
        results[label] = (rows, seconds)
        print(f"{label}: {seconds:.1f} s, {solves} MIP solves, {seconds / solves:.3f} s per solve")
    warm_rows, warm_s = results["warm"]
    cold_rows, cold_s = results["cold"]
    agree = sum(
        (a.break_even_price is None and b.break_even_price is None)
        or (
            a.break_even_price is not None
            and b.break_even_price is not None
            and abs(a.break_even_price - b.break_even_price)
            <= 1e-4 * max(1.0, abs(b.break_even_price))
        )
        for a, b in zip(
            sorted(warm_rows, key=lambda r: r.pool_id),
            sorted(cold_rows, key=lambda r: r.pool_id),
            strict=True,
        )
    )
    print(f"same break-even price (1e-4): {agree} of {len(warm_rows)}")
    print(f"speed-up warm over cold: {cold_s / warm_s:.1f}x")


if __name__ == "__main__":
    main()
