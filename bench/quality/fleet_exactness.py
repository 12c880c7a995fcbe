"""Whole-day pruning is exact: autoscaled problems solved pruned and unpruned (issue 28).

Run: python bench/quality/fleet_exactness.py [--generated 6] [--time-limit 120]
         [--tops|--small-cover]

Every shipped problem with an online workload, and ``--generated`` seeded problems of
bench/generate.py (4 workloads, 2 monthly periods, the shipped catalog), is solved with
every online workload at ``fleet: autoscale``, once with exact pruning
(solver/core/dominance.py) and once without, at a relative gap of 1e-9. Prints both
optima, the options each kept and the solve times; the optima must agree (``ok``;
a side stopped by the time limit is ``unproven``). Exits 1 if any pair differs.

``--tops`` compares instead the pruned optimum with and without the ``fleet_top_used`` and
``fleet_same_top`` cuts (solver/core/formulation/fleet_rules.py, ``add_fleet_tops``,
switched off here; it adds ``fleet_small_cover`` too). ``--small-cover`` switches off only the
``fleet_small_cover`` rows (``add_fleet_small_cover``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.formulation import fleet_rules, redundancy
from solver.core.model import build_model
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import optimise

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from generate import generated_problem  # noqa: E402


def autoscaled(problem):
    """The problem with every online workload's fleet autoscaled."""
    workloads = [
        w.model_copy(update={"fleet": "autoscale"}) if w.kind == "inference" else w
        for w in problem.workloads
    ]
    return problem.model_copy(update={"workloads": workloads})


def optimum(problem, catalog, prune: bool, limit: float) -> tuple[float | None, int, float]:
    """(optimal objective or None, options kept, seconds) of one solve."""
    began = time.perf_counter()
    compiled = compile_problem(problem, catalog, prune_dominated=prune)
    options = SolveOptions(relative_gap=1e-9, time_limit_s=limit)
    try:
        solution = optimise(compiled, build_model(compiled), solver="highs", options=options)
    except ProcureError:
        return None, len(compiled.options), time.perf_counter() - began
    result = solution.result
    value = result.objective if result.termination.name == "OPTIMAL" else None
    return value, len(compiled.options), time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--generated", type=int, default=6)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--tops", action="store_true", help="with and without the top cuts")
    parser.add_argument(
        "--small-cover", action="store_true", help="with and without fleet_small_cover"
    )
    args = parser.parse_args()
    catalog = load_catalog()
    cases = [
        (path.stem, load_problem(path))
        for path in sorted((ROOT / "problems").glob("*.yaml"))
        if path.stem not in {"infeasible-budget", "h100-quota-training"}
    ]
    cases += [(f"generated s{s}", generated_problem(4, 2, seed=s)) for s in range(args.generated)]
    bad = 0
    for name, problem in cases:
        if not any(w.kind == "inference" for w in problem.workloads):
            continue
        problem = autoscaled(problem)
        pruned = optimum(problem, catalog, True, args.time_limit)
        if args.tops or args.small_cover:
            # the function is switched off where it is called from
            if args.small_cover:
                module, name_off = fleet_rules, "add_fleet_small_cover"
            else:
                module, name_off = redundancy, "add_fleet_tops"
            cuts = getattr(module, name_off)
            setattr(module, name_off, lambda *_args: None)
            try:
                full = optimum(problem, catalog, True, args.time_limit)
            finally:
                setattr(module, name_off, cuts)
        else:
            full = optimum(problem, catalog, False, args.time_limit)
        if pruned[0] is None or full[0] is None:
            verdict = "unproven (no optimum within the time limit)"
        elif abs(pruned[0] - full[0]) <= 1e-6 * max(1.0, abs(full[0])):
            verdict = "ok"
        else:
            verdict = "DIFFERENT"
            bad += 1
        other = "unpruned"
        if args.tops or args.small_cover:
            other = "without the small cover" if args.small_cover else "without the top cuts"
        print(
            f"{name:<28} pruned {pruned[0]!s:>18} ({pruned[1]} options, {pruned[2]:.1f} s)  "
            f"{other} {full[0]!s:>18} "
            f"({full[1]} options, {full[2]:.1f} s)  "
            f"{verdict}",
            flush=True,
        )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
