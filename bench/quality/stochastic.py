"""Two-stage planning on the seed (issue 15): N drawn price-and-demand scenarios.

    python bench/quality/stochastic.py [N] [--sigma 0.25] [--demand 0.7 1.4] [--method extensive]
        [--gap 0.01] [--workers 2] [--time-limit S]

Prints the commitments chosen, the expected cost, VSS and EVPI, and the time of each
part (compile and build, extensive form, the deterministic plan and its evaluation, the
hindsight solves).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from solver.analyses.stochastic import solve_stochastic
from solver.core.backends import SolveOptions
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import Uncertainty, load_problem

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=50)
    ap.add_argument("--sigma", type=float, default=0.25)
    ap.add_argument("--demand", type=float, nargs=2, default=(0.7, 1.4))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--method", default="auto", choices=["auto", "extensive", "decomposition", "benders"]
    )
    ap.add_argument("--gap", type=float, default=1e-4, help="relative MIP gap of each solve")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds for the whole solve")
    args = ap.parse_args()
    problem = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    problem = problem.model_copy(
        update={
            "uncertainty": Uncertainty(
                n_scenarios=args.n,
                seed=args.seed,
                price_sigma=args.sigma,
                demand_range=tuple(args.demand),
            )
        }
    )
    catalog = load_catalog()
    started = time.perf_counter()
    sp = solve_stochastic(
        problem,
        catalog,
        options=SolveOptions(relative_gap=args.gap, time_limit_s=args.time_limit),
        method=args.method,
        workers=args.workers,
    )
    wall = time.perf_counter() - started
    print(f"seed, {args.n} scenarios (price sigma {args.sigma}, demand x {args.demand}), "
          f"seed {args.seed}, {sp.method}, MIP gap {args.gap}: {sp.status}, verified "
          f"{sp.verified}; lower bound ${sp.lower_bound_usd:,.0f}, gap {sp.gap:.2%}")  # fmt: skip
    print(f"expected cost ${sp.expected_cost_usd:,.0f}; p5 ${sp.cost_percentiles_usd['p5']:,.0f} "
          f"p50 ${sp.cost_percentiles_usd['p50']:,.0f} p95 ${sp.cost_percentiles_usd['p95']:,.0f}; "
          f"worst ${sp.worst_case_usd:,.0f}")  # fmt: skip
    for i in sp.commitments:
        print(f"  commit: {i.item} {i.units:g} x {i.offering} ({i.mode}) in {i.period}")
    if not sp.commitments:
        print("  commit: nothing")
    for i in sp.deterministic_commitments:
        print(f"  deterministic would commit: {i.item} {i.units:g} x {i.offering} ({i.mode})")

    def usd(v):
        return "n/a" if v is None else f"${round(v):,}"  # round: no "-0"

    print(f"EEV {usd(sp.deterministic_expected_cost_usd)}; VSS "
          f"{usd(sp.value_of_stochastic_solution_usd)}; WS {usd(sp.wait_and_see_usd)}; "
          f"EVPI {usd(sp.expected_value_of_perfect_information_usd)}")  # fmt: skip
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in sp.seconds.items())
          + f"; wall {wall:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
