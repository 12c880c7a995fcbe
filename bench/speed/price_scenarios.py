"""200 price scenarios on the seed problem: locally and on a Dask LocalCluster, same answers.

Run: python bench/speed/price_scenarios.py [--scenarios 200] [--workers 2] [--spread 0.2]

Every offering's price is drawn within +/- spread (seeded); each scenario is one MIP.
Prints the wall time of each run (with a progress bar on stderr), checks that the local
run and the Dask run give identical plans, and prints how often each line item stays.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from solver.analyses.sensitivity import price_scenarios
from solver.core.compile import compile_problem
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem

ROOT = Path(__file__).resolve().parents[2]


def run(compiled, args, label, **where):
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=args.scenarios)
        started = time.perf_counter()
        points, share = price_scenarios(
            compiled,
            n=args.scenarios,
            spread=args.spread,
            seed=args.seed,
            progress=lambda done, total: bar.update(task, completed=done),
            **where,
        )
        seconds = time.perf_counter() - started
    print(f"{label}: {len(points)} scenarios in {seconds:.1f} s")
    return points, share, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--spread", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    compiled = compile_problem(load_problem(args.problem), load_catalog(), prune_dominated=False)

    local, share, _ = run(compiled, args, "local processes", workers=args.workers)
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        remote, share_remote, _ = run(compiled, args, "dask LocalCluster", scheduler=client)
    same = [a.model_dump() for a in local] == [b.model_dump() for b in remote]
    print(f"identical results locally and on Dask: {same}")
    costs = sorted(p.total_cost_usd for p in local if p.total_cost_usd is not None)
    if costs:
        mid = costs[len(costs) // 2]
        print(f"optimal cost: min ${costs[0]:,.0f}, median ${mid:,.0f}, max ${costs[-1]:,.0f}")
    print("share of scenarios whose optimal plan uses each offering and mode:")
    for pool, s in list(share.items())[:15]:
        print(f"  {s:6.1%}  {pool}")
    if not same or share != share_remote:
        raise SystemExit("local and Dask results differ")


if __name__ == "__main__":
    main()
