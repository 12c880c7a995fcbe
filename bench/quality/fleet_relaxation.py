"""How tight the autoscaled seed's relaxation is, in its solve and its break-even proofs.

Run: python bench/quality/fleet_relaxation.py [--fleet autoscale|per_block]
         [--pools a2-highgpu-1g,...]
         [--cut none|cover|spare|class_capacity|same_top|top_used[,...]] [problem.yaml]

Sets every online workload's ``fleet`` (issue 28), then prints, for the plan's solve
(``procure solve``'s model and options) and for the break-even searches of
``procure sensitivity`` (the pools whose id contains one of ``--pools``, by default the
GCP A100 and Lambda GH200 pools h28c measured; ``--pools all``: the command's own set, the
plan's pools and the 12 closest): the LP relaxation, and for each HiGHS solve its CPU
seconds, branch-and-bound nodes and the bound at the root after HiGHS's cuts (read from
its log: the last line of node 0). ``--cut`` adds a candidate family of valid rows to
every model HiGHS is given (:func:`candidate_rows`), to measure what it would do before
it is written into solver/core/model.py (``same_top`` and ``top_used`` now are:
``fleet_same_top`` and ``fleet_top_used``, so with them the rows are added twice).
bench/RESULTS.md has the current figures; bench/archive/RESULTS-2026.md, "Autoscaled
fleets: the relaxation", how they were reached.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from solver.analyses import sensitivity
from solver.core.backends import SolveOptions
from solver.core.backends.highs_backend import HighsSession
from solver.core.compile import compile_problem
from solver.core.model import LinearModel, build_model
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import optimise, solve_for_analysis

ROOT = Path(__file__).resolve().parents[2]
# a line of HiGHS's node table: [source] nodes queue leaves explored% bound incumbent
NODE_LINE = re.compile(r"^\s*[A-Za-z]?\s+(\d+)\s+\d+\s+\d+\s+[\d.]+%\s+(\S+)\s+(\S+)")


def with_fleet(problem, fleet: str):
    """The problem with every online workload at ``fleet``."""
    workloads = [
        w.model_copy(update={"fleet": fleet}) if w.kind == "inference" else w
        for w in problem.workloads
    ]
    return problem.model_copy(update={"workloads": workloads})


def _deploy_links(model: LinearModel) -> tuple[dict[int, int], dict[int, float]]:
    """x var -> its deploy var, and x var -> U (``fleet_deploy``: x <= U deploy)."""
    deploy, bound = {}, {}
    for row in model.rows:
        if row.family == "fleet_deploy":
            x = next(j for j, c in row.coefs.items() if c > 0)
            d, u = next((j, -c) for j, c in row.coefs.items() if c < 0)
            deploy[x], bound[x] = d, u
    return deploy, bound


def _classes(model: LinearModel) -> dict[tuple, dict[int, list[int]]]:
    """(workload, t, b) -> class index -> its x vars (``unit_class`` rows, largest first)."""
    out: dict[tuple, dict[int, list[int]]] = defaultdict(dict)
    for row in model.rows:
        if row.family == "unit_class":
            w, t, b, g = row.key
            out[(w, t, b)][g] = [j for j, c in row.coefs.items() if c == 1.0]
    return out


def candidate_rows(model: LinearModel, cut: str) -> list[tuple[dict[int, float], float, float]]:
    """Candidate rows ``(coefs, lower, upper)`` for an autoscaled model.

    - ``cover``: per demand row, sum_o min(c_o U_o, D) deploy_o + sum_k min(c_k, D) x_k
      >= D over the rented (deployed) and the flat options: the capacity deployments can
      carry covers the block (coefficients capped at D, valid for binaries).
    - ``spare``: x_o <= (U_o - 1) deploy_o + top of o's own class: the N+1 spare unit in
      U_o is needed only when o's class is the one lost (a larger unit lost leaves o's
      ceil(D / c_o) units, which carry the block alone).
    - ``class_capacity``: per block and class threshold g, the capacity of units of
      classes at least g beyond each deployment's first unit <= sum over those classes h
      of (D + 2 a_h) top_h: in a plan where no such unit can be dropped, dropping one
      breaks N+1, so all units carry less than D + 2 a_top.
    - ``top_used``: top_g <= the deploy binaries (or flat units) of class g's offerings.
    - ``same_top``: :func:`_same_top_rows`.
    """
    deploy, bound = _deploy_links(model)
    names = {n: j for j, n in enumerate(model.variables["name"])}
    blocks = model.variables["block"].to_numpy()
    rows: list[tuple[dict[int, float], float, float]] = []
    if cut == "cover":
        integer = model.variables["integer"].to_numpy()
        for row in model.rows:
            if row.family != "demand" or row.rhs <= 0:
                continue
            coefs: dict[int, float] = defaultdict(float)
            for j, a in row.coefs.items():
                if j in deploy:
                    coefs[deploy[j]] += min(a * bound[j], row.rhs)
                else:
                    coefs[j] += min(a, row.rhs) if integer[j] else a
            rows.append((dict(coefs), row.rhs, np.inf))
        return rows
    n_plus_1 = {tuple(r.key): r for r in model.rows if r.family == "n_plus_1"}
    if cut == "same_top":
        return _same_top_rows(model, n_plus_1, names)
    if cut == "top_used":
        for (w, t, b), classes in _classes(model).items():
            for g, members in classes.items():
                coefs = {names[f"top[{w},{t},{b},{g}]"]: 1.0}
                for j in members:
                    k = deploy.get(j, j)
                    coefs[k] = coefs.get(k, 0.0) - 1.0
                rows.append((coefs, -np.inf, 0.0))
        return rows
    for key, classes in _classes(model).items():
        top = {g: names[f"top[{key[0]},{key[1]},{key[2]},{g}]"] for g in classes}
        if cut == "spare":
            for g, members in classes.items():
                for j in members:
                    if j in deploy and bound[j] >= 2:
                        rows.append(
                            ({j: 1.0, deploy[j]: -(bound[j] - 1), top[g]: -1.0}, -np.inf, 0.0)
                        )
            continue
        row = n_plus_1[key]
        coefs = defaultdict(float)
        for g in sorted(classes):
            for j in classes[g]:
                if blocks[j] >= 0:  # flat (shared) units are left out
                    coefs[j] += row.coefs[j]
                    if j in deploy:
                        coefs[deploy[j]] -= row.coefs[j]
            coefs[top[g]] -= row.rhs + 2 * -row.coefs[top[g]]
            rows.append((dict(coefs), -np.inf, 0.0))
    return rows


def _same_top_rows(model, n_plus_1, names) -> list[tuple[dict[int, float], float, float]]:
    """``same_top``: under autoscale the offerings in use are the same in every block of a
    period (a deployment runs a unit in each; flat options hold theirs all day), so the
    largest unit is too: for blocks b, b' and a class of b with capacity cap (its units'
    capacity, or at least D_b for the capped class), the tops of b's classes >= cap sum to
    at most those of b''s classes >= min(cap, D_b')."""
    tops: dict[tuple, dict[int, float]] = defaultdict(dict)  # (w, t) -> b -> {top: cap}
    for key, row in n_plus_1.items():
        w, t, b = key
        g = 0
        while f"top[{w},{t},{b},{g}]" in names:
            j = names[f"top[{w},{t},{b},{g}]"]
            tops[(w, t)].setdefault(b, {})[j] = -row.coefs[j]
            g += 1
    rows = []
    for (w, t), by_block in tops.items():
        for b, mine in by_block.items():
            for b2, other in by_block.items():
                if b2 == b:
                    continue
                d2 = n_plus_1[(w, t, b2)].rhs
                for cap in sorted(set(mine.values())):
                    coefs = {j: 1.0 for j, c in mine.items() if c >= cap - 1e-9}
                    for j, c in other.items():
                        if c >= min(cap, d2) - 1e-9:
                            coefs[j] = coefs.get(j, 0.0) - 1.0
                    rows.append((coefs, -np.inf, 0.0))
    return rows


class Recorder:
    """Wraps :meth:`HighsSession.solve` (and its construction, for ``--cut``): each
    solve's CPU seconds, nodes and root bound after cuts, from a HiGHS log file."""

    def __init__(self, cut: str) -> None:
        self.cut, self.solves = cut, []
        self.slowest = None  # (HighsLp, variable kinds, plan, objective bound) of the slowest
        self.logs = tempfile.mkdtemp()
        self._init, self._solve = HighsSession.__init__, HighsSession.solve
        recorder = self

        def init(session, model):
            recorder._init(session, model)
            if recorder.cut != "none":
                rows = [r for c in recorder.cut.split(",") for r in candidate_rows(model, c)]
                for coefs, lower, upper in rows:
                    session.add_row(coefs, max(lower, -1e30), min(upper, 1e30))

        def solve(session, options, start=None):
            return recorder.solve(session, options, start)

        HighsSession.__init__, HighsSession.solve = init, solve

    def solve(self, session, options, start):
        h = session.h
        log = os.path.join(self.logs, f"{len(self.solves)}.log")  # a new file: HiGHS opens it
        for key, value in (("log_file", log), ("output_flag", True)):
            h.setOptionValue(key, value)
        h.setOptionValue("log_to_console", False)
        began = time.process_time()
        result = self._solve(session, options, start)
        cpu = time.process_time() - began
        h.setOptionValue("output_flag", False)
        root = None
        with open(log) if os.path.exists(log) else open(os.devnull) as f:
            for line in f:
                m = NODE_LINE.match(line)
                if m and m.group(1) == "0":
                    root = m.group(2)
        nodes = int(h.getInfo().mip_node_count)
        self.solves.append((cpu, nodes, root, result.objective, options.relative_gap))
        if result.values is not None and cpu > max((s[0] for s in self.solves[:-1]), default=0):
            bound = float(h.getOptionValue("objective_bound")[1])  # set during a proof only
            self.slowest = (h.getLp(), session.model.variables["kind"], result.values, bound)
        return result


def diagnose(slowest) -> None:
    """What makes the slowest solve hard: its LP relaxation with the deploy binaries, the
    N+1 classes (``top``) or both fixed at the plan it returned, and its MIP (with the
    same objective bound: the proof) with the deploy binaries fixed."""
    import highspy

    lp, kinds, plan, bound = slowest

    def run(fixed: tuple[str, ...], relax: bool) -> tuple[float, int, float]:
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.passModel(lp)
        n = lp.num_col_
        if relax:
            continuous = np.full(n, highspy.HighsVarType.kContinuous)
            h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), continuous)
        cols = np.flatnonzero(kinds.isin(fixed).to_numpy()).astype(np.int32)
        h.changeColsBounds(len(cols), cols, plan[cols], plan[cols])
        h.setOptionValue("objective_bound", bound)
        h.setOptionValue("mip_rel_gap", 1e-2)
        began = time.process_time()
        h.run()
        info = h.getInfo()
        value = info.objective_function_value if relax else info.mip_dual_bound
        return float(value), int(info.mip_node_count), time.process_time() - began

    cost = float(np.asarray(lp.col_cost_) @ plan + lp.offset_)
    print(f"slowest solve's model ({lp.num_row_} rows), its plan {cost:,.2f}:")
    for fixed in ((), ("deploy",), ("top",), ("deploy", "top")):
        print(f"  LP relaxation, fixed {fixed or 'nothing'}: {run(fixed, True)[0]:,.2f}")
    value, nodes, cpu = run(("deploy",), False)
    print(f"  MIP with the deploy binaries fixed: {cpu:.2f} s CPU, {nodes} nodes")


def lp_relaxation(model: LinearModel) -> float:
    """The LP relaxation's optimum (with the ``--cut`` rows)."""
    import highspy

    session = HighsSession(model)
    n = len(session.cost)
    kinds = np.full(n, highspy.HighsVarType.kContinuous)
    session.h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), kinds)
    session.h.run()
    return float(session.h.getInfo().objective_function_value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--fleet", default="autoscale")
    parser.add_argument("--pools", default="a2-highgpu-1g,gpu_1x_gh200")
    parser.add_argument("--cut", default="none", help="none, or candidate families joined by ','")
    args = parser.parse_args()
    catalog = load_catalog()
    problem = with_fleet(load_problem(args.problem), args.fleet)
    compiled = compile_problem(problem, catalog)
    model = build_model(compiled)
    recorder = Recorder(args.cut)
    print(
        f"{problem.name}, fleet {args.fleet}, cut {args.cut}: {len(compiled.options)} options, "
        f"{len(model.variables)} variables, {len(model.rows)} rows; "
        f"LP relaxation {lp_relaxation(model):,.2f}"
    )
    solution = optimise(compiled, model, solver="highspy", options=SolveOptions())
    cpu, nodes, root, value, _ = recorder.solves[-1]
    print(f"solve: {cpu:.2f} s CPU, {nodes} nodes, root bound after cuts {root}, {value:,.2f}")
    _, solution = solve_for_analysis(problem, catalog, solver="highspy", options=SolveOptions())
    recorder.solves.clear()
    began = time.process_time()
    if args.pools == "all":
        rows = sensitivity.break_even_prices(solution, limit=12)
    else:
        candidates, _ = sensitivity.break_even_candidates(solution)
        wanted = [p for p in candidates if any(s in p for s in args.pools.split(","))]
        rows = sensitivity.break_even_prices(solution, pools=wanted)
    spent = time.process_time() - began
    solves = recorder.solves
    print(
        f"break-even: {len(rows)} classes, {spent:.1f} s CPU, {len(solves)} solves, "
        f"{sum(s[1] for s in solves)} nodes, median solve "
        f"{statistics.median(s[0] for s in solves):.2f} s"
    )
    for b in rows:
        print(f"  {b.pool_id}: {b.break_even_price} {b.note}")
    for cpu, nodes, root, value, gap in sorted(solves, reverse=True)[:6]:
        print(f"  slowest: {cpu:.2f} s, {nodes} nodes, gap {gap:g}, root {root}, plan {value}")
    diagnose(recorder.slowest)


if __name__ == "__main__":
    main()
