"""Compile + build + solve time of the seed problem (issue: well under 5 s here).

Run: python bench/speed/seed_timing.py [--repeat 5] [--solver highspy] [--start-gap G]
         [problem.yaml]
Prints each stage's median over the repeats, measured in one process. ``--start-gap``
sets the gap at which highspy's first plan (the restricted start) stops, for an A/B
against the shipped ``START_GAP`` (1e-4 is the gap it had before, the solve's own).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from solver.core.backends import SolveOptions, highs_backend
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import solve_compiled
from solver.trust.verify import verify_plan

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--start-gap", type=float, default=highs_backend.START_GAP)
    args = parser.parse_args()
    highs_backend.START_GAP = args.start_gap
    catalog = load_catalog()
    problem = load_problem(args.problem)
    stages: dict[str, list[float]] = {
        "compile": [],
        "build": [],
        "solve": [],
        "verify": [],
        "total": [],
    }
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        compiled = compile_problem(problem, catalog)
        t1 = time.perf_counter()
        model = build_model(compiled)
        t2 = time.perf_counter()
        plan, _ = solve_compiled(compiled, model, solver=args.solver, options=SolveOptions())
        t3 = time.perf_counter()
        verify_plan(plan, problem, catalog)
        t4 = time.perf_counter()
        for key, value in zip(stages, [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0], strict=True):
            stages[key].append(value)
    print(
        f"problem {problem.name}: {len(compiled.options)} options, "
        f"{len(model.variables)} variables ({model.n_integer} integer), {len(model.rows)} rows"
    )
    print(f"plan: {plan.status}, cost ${plan.total_cost_usd:,.2f}, gap {plan.gap}")
    print(f"solver {args.solver}, restricted start gap {args.start_gap:g} (highspy only)")
    for key, values in stages.items():
        print(
            f"{key:>8}: median {statistics.median(values):.3f} s over {len(values)} runs "
            f"(min {min(values):.3f}, max {max(values):.3f})"
        )


if __name__ == "__main__":
    main()
