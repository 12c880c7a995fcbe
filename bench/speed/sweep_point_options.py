"""What else could cut a report sweep point's CPU at the sweep gap (issue 50): the LP
relaxation's bound against the point's plan, and HiGHS's root options.

Run: python bench/speed/sweep_point_options.py [--only default,heur0,...] [--gap 5e-3]

On the seed's hardest sweep points (the frontier's 17.8 t, 40.5 t and 74.6 t caps and a
demand factor of 2), each variant re-pruned and built as
:func:`solver.analyses.sensitivity.sweeps.solve_point` does, prints per HiGHS option set
the CPU seconds of the solve, its objective and gap, and how far below the plan the LP
relaxation's bound is ("LP-gap"): a point whose plan were within the sweep gap of its LP
bound could be accepted without the MIP.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

#: HiGHS options for the root tried against the default
VARIANTS: dict[str, dict] = {
    "default": {},
    "heur0": {"mip_heuristic_effort": 0.0},
    "nosym": {"mip_detect_symmetry": False},
    "presolve-off": {"presolve": "off"},
    "lp-age": {"mip_lp_age_limit": 5},
    "cuts-few": {"mip_pool_soft_limit": 1000},
}

CHANGES = [
    ("problem", {"objective": "min_cost", "carbon_cap_tco2e": 17.7667}),
    ("problem", {"objective": "min_cost", "carbon_cap_tco2e": 40.5023}),
    ("problem", {"objective": "min_cost", "carbon_cap_tco2e": 74.6057}),
    ("demand", 2.0),
]


def lp_bound(model) -> float:
    """The LP relaxation's optimum of ``model`` (its objective constant included)."""
    import highspy

    from solver.core.backends.highs_backend import HighsSession

    session = HighsSession(model)
    n = len(session.cost)
    continuous = np.full(n, highspy.HighsVarType.kContinuous)
    session.h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), continuous)
    session.h.run()
    return session.h.getInfo().objective_function_value + model.objective.constant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(VARIANTS))
    parser.add_argument("--gap", type=float, default=5e-3)
    args = parser.parse_args()

    from solver.analyses.sensitivity.sweeps import variant
    from solver.core.backends import SolveOptions
    from solver.core.compile import repruned
    from solver.core.model import build_model
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem
    from solver.solve import optimise, solve_for_analysis

    seed = load_problem(ROOT / "problems/seed-2m-13b.yaml")
    _plan, solution = solve_for_analysis(seed, load_catalog())
    for change in CHANGES:
        compiled = repruned(variant(solution.compiled, change))
        model = build_model(compiled)
        lp = lp_bound(model)
        name = (
            f"demand x{change[1]:g}"
            if change[0] == "demand"
            else f"cap {change[1]['carbon_cap_tco2e']:g} t"
        )
        for key in args.only.split(","):
            options = SolveOptions(relative_gap=args.gap, backend_options=VARIANTS[key])
            began = time.process_time()
            result = optimise(compiled, model, solver="highspy", options=options).result
            cpu = time.process_time() - began
            assert result.objective is not None and result.gap is not None
            below = (result.objective - lp) / result.objective
            print(
                f"{name}: {key}: {cpu:.2f} s CPU, objective {result.objective:,.2f}, "
                f"gap {result.gap:.4%}, LP-gap {below:.4%}",
                flush=True,
            )


if __name__ == "__main__":
    main()
