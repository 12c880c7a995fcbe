"""``procure sensitivity`` on the seed, per block and autoscaled, for one or two trees.

Run: python bench/speed/break_even_timing.py [--before DIR] [--repeat 3] [--classes] [problem.yaml]

Times the command as a user runs it (a new process each, Python start-up included,
bytecode kept between runs, the checked catalog kept in a cache folder warmed by a first
run), default options, on the problem as shipped and with every online workload at
``fleet: autoscale`` (issue 28). With ``--before`` (a source tree, e.g. ``git archive
COMMIT | tar -x -C DIR``) each run of this tree is followed by one of that tree, so both
see the same load. Prints the medians of wall and CPU seconds (user + system of the
command and its worker processes, from the children's rusage) and the ratio autoscale /
per block. ``--classes`` instead times each break-even class of the autoscaled problem in
one process (CPU seconds, ``workers=1``; the command's set of pools), for each tree.
bench/RESULTS.md has the current figures; bench/archive/RESULTS-2026.md, "Autoscaled
fleets: break-even speed", how they were reached.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from break_even_compare import RUN, autoscaled

ROOT = Path(__file__).resolve().parents[2]


def timed(tree: Path, problem: Path, cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``procure sensitivity`` run of ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), PROCURE_CACHE_DIR=str(cache))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUN, "sensitivity", str(problem), "-q"],
        capture_output=True, text=True, env=env, cwd=tree,
    )  # fmt: skip
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{tree}: sensitivity failed: {done.stderr[-2000:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


CLASSES = """
import sys, time
from solver.analyses.sensitivity import break_even
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.solve import solve_for_analysis

task = break_even.break_even_task

def timed_task(shared, classes):
    out = []
    for c in classes:
        began = time.process_time()
        out += task(shared, [c])
        print(f"{c[0]}\t{len(c[1])}\t{time.process_time() - began:.2f}", flush=True)
    return out

break_even.break_even_task = timed_task
_, solution = solve_for_analysis(load_problem(sys.argv[1]), load_catalog())
began = time.process_time()
break_even.break_even_prices(solution, limit=12, workers=1)
print(f"all\t\t{time.process_time() - began:.2f}")
"""


def classes(trees: dict[str, Path], problem: Path) -> None:
    """Each class's CPU seconds in one process, per tree (a table)."""
    times: dict[str, dict[str, str]] = {}
    for tree, path in trees.items():
        env = {**os.environ, "PYTHONPATH": str(path)}
        done = subprocess.run(
            [sys.executable, "-c", CLASSES, str(problem)],
            capture_output=True, text=True, env=env, cwd=path, check=True,
        )  # fmt: skip
        for line in done.stdout.splitlines():
            pool, twins, cpu = line.split("\t")
            times.setdefault(f"{pool} ({int(twins) + 1})" if twins else pool, {})[tree] = cpu
    print("| class (pools) | " + " | ".join(trees) + " |")
    print("|---|" + "---|" * len(trees))
    for name, row in times.items():
        print(f"| {name} | " + " | ".join(f"{row.get(t, '-')} s" for t in trees) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--before", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--classes", action="store_true")
    args = parser.parse_args()
    trees = {"now": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    with tempfile.TemporaryDirectory() as folder:
        cases = {"per block": Path(args.problem).resolve()}
        cases["autoscale"] = autoscaled(cases["per block"], Path(folder))
        if args.classes:
            classes(trees, cases["autoscale"])
            return
        medians: dict[tuple[str, str], tuple[float, float]] = {}
        for case, problem in cases.items():
            runs: dict[str, list[tuple[float, float]]] = {t: [] for t in trees}
            for tree, path in trees.items():  # warm: bytecode and the catalog cache
                timed(path, problem, Path(folder) / tree)
            for _ in range(args.repeat):
                for tree, path in trees.items():
                    runs[tree].append(timed(path, problem, Path(folder) / tree))
            for tree, got in runs.items():
                wall = statistics.median(w for w, _ in got)
                cpu = statistics.median(c for _, c in got)
                medians[(tree, case)] = (wall, cpu)
                each = ", ".join(f"{w:.1f}" for w, _ in got)
                print(f"{tree:6s} {case:9s}: wall {wall:5.1f} s ({each}), CPU {cpu:5.1f} s")
        for tree in trees:
            (wa, ca), (wb, cb) = medians[(tree, "autoscale")], medians[(tree, "per block")]
            print(f"{tree}: autoscale / per block {wa / wb:.2f}x wall, {ca / cb:.2f}x CPU")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
