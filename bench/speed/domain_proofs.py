"""Proofs in a meeting's time: the seed with ``survive_loss_of`` [zone], [region] and
[provider] on its serving workload, each solved to a proven 1% gap, median of three runs.

Run: python bench/speed/domain_proofs.py [--repeat 3] [--gap 0.01] [--time-limit 120]
         [--kinds zone region provider] [--fleet autoscale] [--root-lp] [--round]
         [--no-cover] [--no-start]

``--root-lp`` also prints each model's LP relaxation (every variable continuous), with and
without the ``domain_round`` and ``domain_count`` rows (the bound the search starts from),
and the model's rows and nonzeros. ``--no-cover`` writes ``domain_loss`` over the units
instead of the covered capacity (``domain_cover``); ``--no-start`` solves without the
restricted MIP start (``SolveOptions.start_heuristic``).

Each run compiles, builds and solves in this process (the catalog is loaded once) and
prints its wall time, the plan's cost, its proven gap and whether it stopped at the time
limit; then the median per kind. The machine's load average (1, 5 and 15 min, from
os.getloadavg) is printed before and after, since the machine is shared. The seed without
a rule is solved first for the cost of surviving each kind.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import yaml

from solver.core.backends import SolveOptions, get_backend
from solver.core.compile import compile_problem
from solver.core.formulation import domains
from solver.core.matrix import LinearModel
from solver.core.model import build_model
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.solve import solve_compiled

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "problems" / "seed-2m-13b.yaml"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def _seed(kind: str | None, fleet: str | None) -> dict:
    """The seed as data, its serving workload asked to survive losing ``kind``."""
    data = yaml.safe_load(SEED.read_text())
    for w in data["workloads"]:
        if w["kind"] == "inference":
            if kind is not None:
                w["survive_loss_of"] = [kind]
            if fleet is not None:
                w["fleet"] = fleet
    return data


def _root_lp(model: LinearModel, without: tuple[str, ...] = ()) -> float:
    """USD: the LP relaxation of ``model`` (every variable continuous), without the rows of
    the families ``without``."""
    v = model.variables.copy()
    v["integer"] = False
    rows = [r for r in model.rows if r.family not in without]
    result = get_backend("highspy").solve(
        LinearModel(v, rows, model.objective, model.expressions), SolveOptions()
    )
    return float("nan") if result.objective is None else float(result.objective)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gap", type=float, default=0.01)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--kinds", nargs="+", default=["zone", "region", "provider"])
    parser.add_argument("--fleet", default=None, help="the serving workload's fleet")
    parser.add_argument("--root-lp", action="store_true", help="print the LP relaxations")
    parser.add_argument(
        "--round", action="store_true", help="write the domain_round rows (off by default)"
    )
    parser.add_argument(
        "--no-cover", action="store_true", help="domain_loss over the units (no domain_cover)"
    )
    parser.add_argument("--no-start", action="store_true", help="no restricted MIP start")
    args = parser.parse_args()
    domains.ROUND_DOMAINS = args.round
    domains.COVER_DOMAINS = not args.no_cover
    catalog = load_catalog()
    options = SolveOptions(
        relative_gap=args.gap, time_limit_s=args.time_limit, start_heuristic=not args.no_start
    )
    print(f"before: {_load()}")
    costs: dict[str | None, float] = {}
    for kind in [None, *args.kinds]:
        problem = parse_problem(_seed(kind, args.fleet))
        walls = []
        if args.root_lp:
            model = build_model(compile_problem(problem, catalog))
            nonzeros = sum(len(r.coefs) for r in model.rows)
            print(
                f"{kind or 'no rule'}: LP relaxation ${_root_lp(model):,.2f}, "
                f"${_root_lp(model, ('domain_round',)):,.2f} without the domain_round rows, "
                f"${_root_lp(model, ('domain_round', 'domain_count')):,.2f} without them and "
                f"the domain_count rows; {len(model.rows)} rows, {nonzeros} nonzeros"
            )
        for _ in range(1 if kind is None else args.repeat):
            t0 = time.perf_counter()
            compiled = compile_problem(problem, catalog)
            model = build_model(compiled)
            plan, _ = solve_compiled(compiled, model, solver="highspy", options=options)
            walls.append(time.perf_counter() - t0)
            costs[kind] = plan.total_cost_usd
            gap = "n/a" if plan.gap is None else f"{plan.gap:.3%}"
            # the objective (guarded prices) and the bound it is proven against
            obj = plan.objective or float("nan")
            bound = obj * (1 - plan.gap) if plan.gap is not None else float("nan")
            print(
                f"{kind or 'no rule'}: {walls[-1]:.1f} s, ${plan.total_cost_usd:,.2f}, gap {gap} "
                f"(objective ${obj:,.2f}, bound ${bound:,.2f})"
                f"{', stopped at the time limit' if plan.stopped_at_time_limit else ''}, "
                f"{model.n_integer} integer of {len(model.variables)} variables, "
                f"{len(model.rows)} rows; {_load()}"
            )
        if not walls:
            continue
        extra = costs[kind] - costs[None]
        print(
            f"== {kind or 'no rule'}: median {statistics.median(walls):.1f} s over "
            f"{len(walls)} runs (min {min(walls):.1f}, max {max(walls):.1f}); surviving it "
            f"costs ${extra:,.2f} more than the plan without the rule"
        )
    print(f"after: {_load()}")


if __name__ == "__main__":
    main()
