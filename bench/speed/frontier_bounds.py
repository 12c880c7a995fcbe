"""Whether the carbon frontier's caps prove faster given their neighbours' plans and bounds
(issue 50): HiGHS's node count and CPU seconds per cap, as the report solves it and with
the neighbour information docs/concepts/sensitivity.md ("Sweeps", "Bounds from
neighbouring caps") proves valid.

Run: python bench/speed/frontier_bounds.py [problem.yaml] [--points 8] [--digits N]

Solves the problem for analysis, then each of the report's frontier caps (min cost under
the cap, pruned for itself as :func:`solver.analyses.sensitivity.sweeps.solve_point`
prunes it) in one process, serially, four ways:

- ``as now``: the restricted start, then the MIP (what the report runs);
- ``start``: the next tighter cap's proven plan as the MIP start (a plan under every
  looser cap);
- ``bound row``: a row ``objective >= B``, ``B`` the next looser cap's proven bound (a
  lower bound of this cap's optimum);
- ``both``: the start and the row.

``--digits N`` writes each cap to N significant digits (17.7667 t for 17.76671... t):
how much the node counts move with a change of the cap far below any figure shown.
Prints, per cap and way, CPU seconds, nodes, the objective and CO2e of the plan found
(whether the point would stay the same), and the totals per way.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--points", type=int, default=8)
    parser.add_argument("--digits", type=int, default=None)
    args = parser.parse_args()

    from solver.analyses.sensitivity.sweeps import _frontier_ends, _frontier_tasks, variant
    from solver.core.backends import HighsSession, SolveOptions
    from solver.core.compile import repruned
    from solver.core.model import build_model
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import load_problem
    from solver.solve import solve_for_analysis

    print("load before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    _, solution = solve_for_analysis(load_problem(args.problem), load_catalog())
    tasks = _frontier_tasks(_frontier_ends(solution.compiled, "highspy"), args.points, "highspy")
    if tasks is None:
        raise SystemExit("an end of the frontier has no plan")
    if args.digits is not None:
        tasks = [_rounded(t, args.digits) for t in tasks]
    caps = [t[2] for t in tasks]  # tightest first
    models = [build_model(repruned(variant(solution.compiled, t[0]))) for t in tasks]

    def run(model, start=None, bound=None):
        session = HighsSession(model)
        if bound is not None:  # objective >= bound (the constant moved to the right)
            session.add_row(dict(model.objective.coefs), bound - model.objective.constant, 1e30)
        began = time.process_time()
        result = session.solve(SolveOptions(), start=start)
        cpu = time.process_time() - began
        co2e = model.expressions["total_co2e_t"].value(result.values)
        return result, cpu, int(session.h.getInfo().mip_node_count), co2e

    base = [run(m) for m in models]
    totals = {"as now": [0.0, 0], "start": [0.0, 0], "bound row": [0.0, 0], "both": [0.0, 0]}
    for i, cap in enumerate(caps):
        tighter = base[i - 1][0].values if i > 0 else None
        looser = base[i + 1][0].bound if i + 1 < len(caps) else None
        ways = {"as now": base[i]}
        if tighter is not None:
            ways["start"] = run(models[i], start=tighter)
        if looser is not None:
            ways["bound row"] = run(models[i], bound=looser)
        if tighter is not None and looser is not None:
            ways["both"] = run(models[i], start=tighter, bound=looser)
        for way, (result, cpu, nodes, co2e) in ways.items():
            same = np.isclose(result.objective, base[i][0].objective, rtol=1e-9, atol=0.0) and (
                np.isclose(co2e, base[i][3], rtol=1e-9, atol=0.0)
            )
            print(
                f"cap {cap:8.3f} t  {way:9s}: {cpu:6.2f} s CPU {nodes:5d} nodes, objective "
                f"{result.objective:,.2f}, CO2e {co2e:.4f} t{'' if same else '  (point moves)'}",
                flush=True,
            )
            if i > 0 and i + 1 < len(caps):  # caps with both neighbours: the four ways compare
                totals[way][0] += cpu
                totals[way][1] += nodes
    for way, (cpu, nodes) in totals.items():
        print(f"total over the caps with both neighbours, {way}: {cpu:.2f} s CPU, {nodes} nodes")
    print("load after: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


def _rounded(task: tuple, digits: int) -> tuple:
    """A cap task with its cap written to ``digits`` significant digits."""
    (kind, update), sweep, cap, solver = task
    cap = float(f"{cap:.{digits}g}")
    return (kind, {**update, "carbon_cap_tco2e": cap}), sweep, cap, solver


if __name__ == "__main__":
    main()
