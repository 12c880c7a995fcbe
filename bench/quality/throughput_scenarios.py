"""Two-stage plans over serving capacity (issue 33, item 3) on a shipped problem.

    python bench/quality/throughput_scenarios.py [PROBLEM] [--scenarios SPEC] [--method auto]

SPEC as ``procure solve --throughput-scenarios``: factor:probability pairs (default
``1:0.6,0.8:0.3,0.6667:0.1``: the estimates right, 1.25x and 1.5x optimistic), ``qQ:P``
band quantiles, or ``band`` (Swanson's 30-40-30 over each estimate's own band).

Prints the commitments of the two-stage plan beside those of the plan at the estimates as
they are (the problem as written) and of the EV plan (expected capacity), the expected
cost of each over the same scenarios, each scenario's cost, and the wall time of the whole
two-stage solve with its parts.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from solver.analyses.stochastic import solve_stochastic
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import Uncertainty, load_problem, throughput_scenarios_from_text

ROOT = Path(__file__).resolve().parents[2]


def _first_stage(items) -> str:
    return "; ".join(f"{i.units:g} x {i.offering} {i.mode} in {i.period}" for i in items) or "none"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problem", nargs="?", default="seed-2m-13b")
    ap.add_argument("--scenarios", default="1:0.6,0.8:0.3,0.6667:0.1")
    ap.add_argument(
        "--method", default="auto", choices=["auto", "extensive", "decomposition", "benders"]
    )
    args = ap.parse_args()
    problem = load_problem(ROOT / "problems" / f"{args.problem}.yaml")
    found = throughput_scenarios_from_text(args.scenarios)
    problem = problem.model_copy(update={"uncertainty": Uncertainty(throughput_scenarios=found)})
    catalog = load_catalog()
    started = time.perf_counter()
    sp = solve_stochastic(problem, catalog, method=args.method)
    wall = time.perf_counter() - started
    usd = "${:,.0f}".format
    print(f"{args.problem}, throughput scenarios {args.scenarios}: {len(sp.scenarios)} "
          f"scenarios, {sp.method}, {sp.status}, verified {sp.verified}")  # fmt: skip
    print(f"  two-stage commitments:      {_first_stage(sp.commitments)}")
    print(f"  point-estimate commitments: {_first_stage(sp.point_estimate_commitments or [])}")
    print(f"  EV (expected capacity):     {_first_stage(sp.deterministic_commitments)}")

    def opt(v: float | None) -> str:
        return "n/a" if v is None else usd(v)

    print(
        f"  expected cost: two-stage {usd(sp.expected_cost_usd)}, point-estimate plan "
        f"{opt(sp.point_estimate_expected_cost_usd)}, EEV "
        f"{opt(sp.deterministic_expected_cost_usd)}, all rented "
        f"{opt(sp.all_rented_expected_cost_usd)}"
    )
    for o in sp.scenarios:
        c = o.throughput
        what = f"x {c.factor:g}" if c.factor is not None else f"band q {c.band_quantile:g}"
        pe_s = "n/a" if o.point_estimate_cost_usd is None else usd(o.point_estimate_cost_usd)
        print(f"  {o.name:<10} p={o.probability:.2f} capacity {what:<12} cost "
              f"{usd(o.total_cost_usd):>12}  point-estimate plan {pe_s:>12}")  # fmt: skip
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in sp.seconds.items())
    print(f"  wall {wall:.1f} s ({parts})")


if __name__ == "__main__":
    main()
