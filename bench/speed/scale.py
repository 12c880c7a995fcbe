"""Scale benchmark: compile, build and solve generated instances; the LP relaxation beside.

Run: python bench/speed/scale.py [--repeat 3] [--time-limit 60] [--gap 0.005]
         [--grid target|default|all] [--method full|root|columns|auto]

``--method full`` (default) builds the full model and solves it with HiGHS (highspy), then
its LP relaxation. ``--method columns`` runs ``solve_verified`` end to end (compile, column
generation, restricted MIP, plan, verifier) under the time limit (solver/core/columns.py); the
"LP" column is then the time of the master LPs, and the gap is against the full LP with
rounding cuts (a valid bound of the whole problem). ``--method root`` runs it end to end
by the full LP with MIR cuts, the MIP over its support and reduced-cost fixing
(solver/core/root.py); "solve" is then everything from the LP's start to the plan, and "LP"
the full model's LP relaxation timed after the run. ``--method auto`` runs it end to end
as ``procure solve`` does (one MIP below ``solver.core.root.ROOT_COLUMNS`` priced columns, the
root up to ``solver.core.columns.AUTO_COLUMNS``, column generation above).

Each (offerings, workloads, periods) case runs in its own process (so its peak memory
is its own), ``--repeat`` times; the script prints the median of each figure and a
markdown table. Instances come from bench/generate.py (the shipped catalog grown to
the offering count; a seeded mix of inference, batch and training workloads over
monthly periods), solved by HiGHS (``highspy``) to the relative gap within the limit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

GRIDS = {
    "target": [(10_000, 50, 12)],
    "issue14": [(10_000, 50, 12), (10_000, 50, 36), (10_000, 200, 12), (50_000, 200, 36)],
    "issue14-60s": [(10_000, 50, 12), (10_000, 50, 36), (10_000, 200, 12)],
    "issue14-5min": [(50_000, 200, 36)],
    "issue14-200": [(10_000, 200, 12)],
    # where auto starts solving at the root (solver.core.root.ROOT_COLUMNS): priced columns
    # 1,936 / 3,461 / 5,995 / 15,446 (solver.core.columns.priced_columns)
    "root-threshold": [(1_000, 20, 12), (10_000, 20, 12), (1_000, 50, 12), (10_000, 50, 12)],
    "default": [
        (1_000, 10, 1),
        (1_000, 50, 12),
        (10_000, 10, 1),
        (10_000, 50, 12),
        (10_000, 50, 36),
        (10_000, 200, 12),
        (50_000, 50, 12),
    ],
    "all": [(o, w, p) for o in (1_000, 10_000, 50_000) for w in (10, 50, 200) for p in (1, 12, 36)],
}
#: Cases whose target is not 60 s (issue 14: 50k x 200 x 36 within 5 minutes).
CASE_LIMIT_S = {(50_000, 200, 36): 300.0}


def end_to_end_run(
    n_offerings: int,
    n_workloads: int,
    n_periods: int,
    limit: float,
    gap: float,
    method: str = "columns",
):
    """One case end to end (compile to verified plan) by ``solve_verified`` with ``method``
    (root, columns or auto); when it takes the full model (one MIP or the root), its LP
    relaxation is timed after."""
    import resource

    sys.path.insert(0, str(HERE.parent))  # bench/generate.py
    from generate import generated_problem, scaled_catalog

    from solver.core.backends import SolveOptions
    from solver.solve import solve_verified

    catalog = scaled_catalog(n_offerings)
    problem = generated_problem(n_workloads, n_periods)
    t0 = time.perf_counter()
    cpu0 = time.process_time()  # this process and HiGHS's threads: the work, whatever the load
    plan, solution = solve_verified(
        problem,
        catalog,
        solver="highspy",
        options=SolveOptions(time_limit_s=limit, relative_gap=gap),
        method=method,
    )
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    report = solution.compiled.report.as_dict()
    c = solution.compiled.report.columns
    root = solution.compiled.report.root
    path = "columns" if c else "root" if root else "full"
    if not c:  # the full model: its LP relaxation, timed after the run
        from solver.core.columns import _solve_lp

        t1 = time.perf_counter()
        lp = _solve_lp(solution.model, limit)
        c = {
            "lp_seconds": time.perf_counter() - t1,
            "build_seconds": 0.0,
            "mip_seconds": plan.solve_seconds,
            "lp_bound": root["final_bound_usd"] if root else getattr(lp, "objective", None),
            "options_in_master": len(solution.compiled.options),
            "options_total": len(solution.compiled.options),
        }
        compile_s = plan.compile_seconds
    else:
        compile_s = plan.compile_seconds - c["lp_seconds"] - c["build_seconds"]
    return {
        "offerings": n_offerings,
        "workloads": n_workloads,
        "periods": n_periods,
        "path": path,
        "compile_s": compile_s,
        "build_s": c["build_seconds"],
        "solve_s": c["mip_seconds"],
        "lp_s": c["lp_seconds"],
        "wall_s": wall,
        "cpu_s": cpu,
        "status": plan.status + (" verified" if plan.verified else " NOT verified"),
        "gap": plan.gap,
        "objective": plan.total_cost_usd,
        "lp_objective": c["lp_bound"],
        "options_generated": report["options_generated"],
        "options_kept": c["options_in_master"],
        "pruned": c["options_total"] - c["options_in_master"],
        "variables": len(solution.model.variables),
        "rows": len(solution.model.rows),
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }


def one_run(n_offerings: int, n_workloads: int, n_periods: int, limit: float, gap: float) -> dict:
    """One case in this process: figures as a dict (run inside a child process)."""
    import resource

    sys.path.insert(0, str(HERE.parent))  # bench/generate.py
    from generate import generated_problem, scaled_catalog

    from solver.core.backends import SolveOptions, get_backend
    from solver.core.compile import compile_problem
    from solver.core.model import build_model

    catalog = scaled_catalog(n_offerings)
    problem = generated_problem(n_workloads, n_periods)
    t0 = time.perf_counter()
    compiled = compile_problem(problem, catalog)
    t1 = time.perf_counter()
    model = build_model(compiled)
    t2 = time.perf_counter()
    result = get_backend("highspy").solve(model, SolveOptions(time_limit_s=limit, relative_gap=gap))
    t3 = time.perf_counter()
    relaxed = model.variables.copy()
    relaxed["integer"] = False
    from solver.core.model import LinearModel

    lp = LinearModel(relaxed, model.rows, model.objective, model.expressions)
    t4 = time.perf_counter()
    lp_result = get_backend("highspy").solve(lp, SolveOptions(time_limit_s=limit))
    t5 = time.perf_counter()
    report = compiled.report.as_dict()
    return {
        "offerings": n_offerings,
        "workloads": n_workloads,
        "periods": n_periods,
        "compile_s": t1 - t0,
        "build_s": t2 - t1,
        "solve_s": t3 - t2,
        "lp_s": t5 - t4,
        "status": result.termination.value,
        "gap": result.gap,
        "objective": result.objective,
        "lp_objective": lp_result.objective,
        "options_generated": report["options_generated"],
        "options_kept": report["options_kept"],
        "pruned": sum(report["pruned_as_dominated"].values()),
        "variables": len(model.variables),
        "rows": len(model.rows),
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }


def run_case(case: tuple[int, int, int], limit: float, gap: float, method: str = "full") -> dict:
    n_offerings, n_workloads, n_periods = case
    call = (
        f"one_run({n_offerings}, {n_workloads}, {n_periods}, {limit!r}, {gap!r})"
        if method == "full"
        else f"end_to_end_run({n_offerings}, {n_workloads}, {n_periods}, {limit!r}, {gap!r}, "
        f"{method!r})"
    )
    code = (
        f"import json, sys; sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent)!r}]; "
        f"from scale import end_to_end_run, one_run; print(json.dumps({call}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=limit * 4 + 600
    )
    if out.returncode != 0:
        return {
            "offerings": case[0],
            "workloads": case[1],
            "periods": case[2],
            "status": "error: " + out.stderr.strip().splitlines()[-1],
        }
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(rows: list[dict], key: str):
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--gap", type=float, default=0.005)
    parser.add_argument("--grid", choices=sorted(GRIDS), default="default")
    parser.add_argument("--method", choices=["full", "root", "columns", "auto"], default="full")
    args = parser.parse_args()
    lines = [
        "| offerings x workloads x periods | options generated / kept (pruned) | variables | rows "
        "| compile s | build s | solve s | LP relaxation s | status, gap | peak RSS GB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in GRIDS[args.grid]:
        limit = CASE_LIMIT_S.get(case, args.time_limit)
        rows = [run_case(case, limit, args.gap, args.method) for _ in range(args.repeat)]
        ok = [r for r in rows if "compile_s" in r]
        if not ok:
            print(case, rows[0]["status"], flush=True)
            lines.append(f"| {case[0]:,} x {case[1]} x {case[2]} | {rows[0]['status']} |")
            continue
        r = ok[0]
        gaps = [x["gap"] for x in ok if x["gap"] is not None]
        statuses = sorted({x["status"] for x in ok})
        fig = {
            k: median(ok, k)
            for k in ("compile_s", "build_s", "solve_s", "lp_s", "peak_rss_gb", "wall_s", "cpu_s")
        }
        ratio = statistics.median(x["solve_s"] / x["lp_s"] for x in ok)  # each run's own
        gap_text = f"{statistics.median(gaps):.2%} (max {max(gaps):.2%})" if gaps else "n/a"
        print(
            f"{case}: {len(ok)} runs, compile {fig['compile_s']:.2f} s, build "
            f"{fig['build_s']:.2f} s, solve {fig['solve_s']:.2f} s, LP {fig['lp_s']:.2f} s "
            f"(solve / LP {ratio:.1f}x), "
            f"{'/'.join(statuses)} gap {gap_text}, {r['variables']:,} vars, "
            f"{r['rows']:,} rows, peak {fig['peak_rss_gb']:.2f} GB"
            + (
                f", wall {fig['wall_s']:.1f} s (CPU {fig['cpu_s'] or 0:.1f} s), "
                f"${r['objective']:,.0f}, "
                f"{'LP' if r['path'] == 'full' else 'bound'} ${r['lp_objective']:,.0f}, "
                f"path {r['path']}"
                if fig["wall_s"] is not None
                else ""
            ),
            flush=True,
        )
        lines.append(
            f"| {case[0]:,} x {case[1]} x {case[2]} | {r['options_generated']:,} / "
            f"{r['options_kept']:,} ({r['pruned']:,}) | {r['variables']:,} | {r['rows']:,} | "
            f"{fig['compile_s']:.2f} | {fig['build_s']:.2f} | {fig['solve_s']:.2f} | "
            f"{fig['lp_s']:.2f} | {'/'.join(statuses)}, {gap_text} | {fig['peak_rss_gb']:.2f} |"
        )
    print()
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"medians of {args.repeat} runs; time limit {args.time_limit:g} s, gap {args.gap:g}; "
        f"load average at the end {load}"
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
