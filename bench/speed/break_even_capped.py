"""Break-even prices of the seed under a binding carbon cap, per pool class, for one or
two source trees (issue 50: ``procure sensitivity --break-even 3`` on the seed with
``carbon_cap_tco2e: 40``).

Run: python bench/speed/break_even_capped.py [--before DIR] [--cap 40] [--limit 3] [--solves]

``--cap 0`` runs the seed as shipped, uncapped (``--limit 15``: the 15 classes of
``procure report``'s "shadow and break-even prices").

Each tree (``--before``: e.g. ``git archive COMMIT | tar -x -C DIR``) runs in a process of
its own, one after the other: the problem solved for analysis, then
:func:`break_even_prices` with ``workers=1``; prints each class's CPU seconds and price,
the total, and whether the two trees' prices agree (to 1e-6 relative). ``--solves`` also
sums, per tree, the HiGHS solves by the step of the search that asked for them (CPU
seconds, count and branch-and-bound nodes): where the search's time goes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RUN = """
import sys, time, traceback
from solver.analyses.sensitivity import break_even
from solver.core.backends import highs_backend
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import solve_for_analysis

task = break_even.break_even_task

def timed_task(shared, classes):
    out = []
    for c in classes:
        began = time.process_time()
        got = task(shared, [c])
        out += got
        print(f"{c[0]}\\t{time.process_time() - began:.2f}\\t{got[0].break_even_price}", flush=True)
    return out

break_even.break_even_task = timed_task
STEPS = ("solve_tied", "objective_without_pool", "plan_below", "below_with_row", "_optimum",
         "solve_at", "entry_estimates")
solve = highs_backend.HighsSession.solve

def counted(session, options, start=None):
    began = time.process_time()
    result = solve(session, options, start)
    names = [f.name for f in traceback.extract_stack()[:-1]]
    step = next((n for n in reversed(names) if n in STEPS), names[-1])
    print(f"{step}\t{time.process_time() - began:.3f}\t{session.h.getInfo().mip_node_count}",
          file=sys.stderr, flush=True)
    return result

if len(sys.argv) > 3:
    highs_backend.HighsSession.solve = counted
_, solution = solve_for_analysis(load_problem(sys.argv[1]), load_catalog())
began = time.process_time()
break_even.break_even_prices(solution, limit=int(sys.argv[2]), workers=1)
print(f"all\\t{time.process_time() - began:.2f}\\t", flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--cap", type=float, default=40.0)
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--solves", action="store_true")
    args = parser.parse_args()
    trees = {"now": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    seed = (ROOT / "problems" / "seed-2m-13b.yaml").read_text()
    line = "budget_usd: 2000000"
    problem = Path(tempfile.mkdtemp()) / "seed-capped.yaml"
    cap = f"{line}\ncarbon_cap_tco2e: {args.cap:g}" if args.cap > 0 else line
    problem.write_text(seed.replace(line, cap))
    print(f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    found: dict[str, dict[str, tuple[float, float | None]]] = {}
    for tree, path in trees.items():
        env = {**os.environ, "PYTHONPATH": str(path)}
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(problem), str(args.limit)]
            + (["solves"] if args.solves else []),
            capture_output=True, text=True, env=env, cwd=path,
        )  # fmt: skip
        if done.returncode != 0:
            sys.exit(f"{tree}: {done.stderr[-2000:]}")
        rows = found.setdefault(tree, {})
        for row in done.stdout.splitlines():
            pool, cpu, price = row.split("\t")
            rows[pool] = (float(cpu), float(price) if price not in ("", "None") else None)
        print(f"{tree}: {rows.get('all', (float('nan'),))[0]:.1f} s CPU", flush=True)
        if args.solves:
            _print_steps(tree, done.stderr)
    print("| class | " + " | ".join(f"{t} CPU s | {t} price" for t in trees) + " |")
    print("|---|" + "---|---|" * len(trees))
    for pool in found["now"]:
        cells = [f"{found[t].get(pool, (0, None))[0]:.1f} | {found[t].get(pool, (0, None))[1]}"
                 for t in trees]  # fmt: skip
        print(f"| {pool} | " + " | ".join(cells) + " |")
    if "before" in found:
        same = all(
            (a is None and b is None) or (a is not None and b is not None
                                          and abs(a - b) <= 1e-6 * max(1.0, abs(b)))
            for pool, (_, a) in found["now"].items() if pool != "all"
            for b in [found["before"].get(pool, (0, None))[1]]
        )  # fmt: skip
        print(f"prices agree: {same}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def _print_steps(tree: str, stderr: str) -> None:
    """The HiGHS solves of ``tree``'s run summed by the step that asked for them
    (``--solves``: the solve for analysis is ``solve_tied``)."""
    steps: dict[str, list[float]] = {}
    for line in stderr.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        step, cpu, nodes = parts[0], float(parts[1]), max(0, int(parts[2]))
        row = steps.setdefault(step, [0, 0.0, 0])
        row[0], row[1], row[2] = row[0] + 1, row[1] + cpu, row[2] + nodes
    print(f"| {tree}: step | solves | CPU s | nodes |\n|---|---|---|---|")
    for step, (n, cpu, nodes) in sorted(steps.items(), key=lambda kv: -kv[1][1]):
        print(f"| {step} | {n:.0f} | {cpu:.2f} | {nodes:.0f} |")


if __name__ == "__main__":
    main()
