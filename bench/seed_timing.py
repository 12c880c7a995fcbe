"""Compile + build + solve time of the seed problem (issue: well under 5 s here).

Run: python bench/seed_timing.py [--repeat 5] [problem.yaml]
Prints each stage's median over the repeats, measured in one process.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import solve_compiled
from solver.trust.verify import verify_plan

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--solver", default="highs")
    args = parser.parse_args()
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
    print(f"plan: {plan.status}, cost ${plan.total_cost_usd:,.0f}, gap {plan.gap}")
    for key, values in stages.items():
        print(
            f"{key:>8}: median {statistics.median(values):.3f} s over {len(values)} runs "
            f"(min {min(values):.3f}, max {max(values):.3f})"
        )


if __name__ == "__main__":
    main()
