"""Support plans in the objective (issue 49): the solve with the support rows and binaries
(solver.core.formulation.support) against the same solve without them, in one run,
alternating, for the seed (no support-plan provider in its plan) and the two shipped
problems whose plans are at AWS (AWS Business by default).

Prints per problem: the median wall seconds of ``solve_verified`` with and without
support in the model, their ratio, the model's support binaries, and the objective and
all-in total of each.

Usage: ``python bench/speed/support_objective.py --repeat 3``
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import yaml

import solver.core.model as model_module
from solver.core.formulation.state import State
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.solve import solve_verified

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ("seed-2m-13b", "chat-7b-all-in", "h100-quota-training")


def _no_support(m: State) -> None:
    """The model without support's rows (support charged after the solve, as before)."""


def main() -> None:
    """Time each problem with and without support in the model, alternating."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    catalog = load_catalog()
    real = model_module.add_support
    print("problem | with support s | without s | ratio | binaries | objective with / without "
          "| all-in with / without")  # fmt: skip
    for name in PROBLEMS:
        problem = parse_problem(yaml.safe_load((ROOT / "problems" / f"{name}.yaml").read_text()))
        times: dict[bool, list[float]] = {True: [], False: []}
        out: dict[bool, tuple[float, float, int]] = {}
        for _ in range(args.repeat):
            for on in (True, False):
                model_module.add_support = real if on else _no_support  # type: ignore[assignment]
                t0 = time.perf_counter()
                plan, solution = solve_verified(problem, catalog)
                times[on].append(time.perf_counter() - t0)
                v = solution.model.variables
                binaries = int(((v["kind"] == "support") & v["integer"]).sum())
                out[on] = (plan.objective, plan.all_in_cost_usd or plan.total_cost_usd, binaries)
        model_module.add_support = real
        w, wo = statistics.median(times[True]), statistics.median(times[False])
        (obj, all_in, binaries), (obj0, all_in0, _) = out[True], out[False]
        print(
            f"{name} | {w:.2f} | {wo:.2f} | {w / wo:.2f} | {binaries} | "
            f"{obj:,.2f} / {obj0:,.2f} | {all_in:,.2f} / {all_in0:,.2f}"
        )


if __name__ == "__main__":
    main()
