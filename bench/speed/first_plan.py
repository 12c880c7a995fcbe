"""The first verified plan of a generated fleet-scale case, end to end (issue 50).

Run: python bench/speed/first_plan.py [--offerings 10000] [--workloads 200]
         [--periods 12] [--time-limit 60] [--repeat 1]

``solve_verified(..., method="auto")`` on bench/generate.py's case (as ``procure solve``
runs it), with ``time.perf_counter`` (wall: what the machine's load leaves) and
``time.process_time`` (CPU of this process and HiGHS's threads: the work) around it.
The solver's log gives the seconds into the solve at which each phase ended: the
compile, each column-generation round (master build, LP, pricing), the plan from the
master LP's support, the restricted MIP (or why it was skipped) and the end of column
generation; the plan and the independent verifier take the rest of the wall. Prints one
line per run and the load (``os.getloadavg``) before and after it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/generate.py


class _Marks(logging.Handler):
    """Wall seconds (from ``start``) at which each column-generation log line came."""

    def __init__(self, start: float) -> None:
        super().__init__(logging.INFO)
        self.start = start
        self.marks: list[tuple[float, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.marks.append((time.perf_counter() - self.start, record.getMessage()))


def run(offerings: int, workloads: int, periods: int, limit: float) -> None:
    """One end-to-end solve, printed."""
    from generate import generated_problem, scaled_catalog

    from solver.core.backends import SolveOptions
    from solver.solve import solve_verified

    catalog = scaled_catalog(offerings)
    problem = generated_problem(workloads, periods)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    marks = _Marks(t0)
    log = logging.getLogger("solver.core.columns")
    log.setLevel(logging.INFO)
    log.addHandler(marks)
    c0 = time.process_time()
    try:
        plan, solution = solve_verified(
            problem,
            catalog,
            solver="highspy",
            options=SolveOptions(time_limit_s=limit, relative_gap=0.005),
            method="auto",
        )
    except Exception as exc:  # noqa: BLE001 -- a bench prints what stopped it
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"no plan: {type(exc).__name__}: {exc}")
        print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, load {load:.1f} -> {os.getloadavg()[0]:.1f}")
        _print_marks(marks)
        return
    finally:
        log.removeHandler(marks)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    c = solution.compiled.report.columns or {}
    path = "columns" if c else "root" if solution.compiled.report.root else "full"
    gap = f"{plan.gap:.2%}" if plan.gap is not None else "n/a"
    print(
        f"{offerings:,} x {workloads} x {periods}, limit {limit:.0f} s: "
        f"{'verified' if plan.verified else 'NOT verified'} plan, "
        f"total ${plan.total_cost_usd:,.0f} "
        f"(objective ${plan.objective:,.0f}), gap {gap}, path {path}, wall {wall:.1f} s, "
        f"CPU {cpu:.1f} s, compile {plan.compile_seconds:.1f} s (wall, with the masters), "
        f"load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    if c:
        print(
            f"  columns: {c['options_in_master']:,} of {c['options_total']:,} options in the "
            f"master ({c['options_priced']:,} priced), rounds {c['rounds']}, cut rounds "
            f"{c['cut_rounds']}, build {c['build_seconds']:.1f} s, LP {c['lp_seconds']:.1f} s, "
            f"pricing {c['pricing_seconds']:.1f} s, MIP {c['mip_seconds']:.1f} s, bound "
            f"${c['lp_bound']:,.0f}, support plan {c['support_plan_usd']}"
        )
    _print_marks(marks)
    if marks.marks:  # the phases: compile, column generation, then the plan and verifier
        began = marks.marks[0][0]
        done = marks.marks[-1][0]
        print(
            f"  phases (wall): compile {began:.1f} s, column generation and MIP "
            f"{done - began:.1f} s, plan and verifier {wall - done:.1f} s"
        )


def _print_marks(marks: _Marks) -> None:
    for at, message in marks.marks:
        print(f"  {at:6.1f} s  {message}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offerings", type=int, default=10_000)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--periods", type=int, default=12)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    for _ in range(args.repeat):
        run(args.offerings, args.workloads, args.periods, args.time_limit)


if __name__ == "__main__":
    main()
