"""``procure report`` on a problem, wall and CPU seconds, in two source trees, paired
(issue 50: the sweeps beside the break-even search against one after the other).

Run: python bench/speed/report_beside.py --before DIR [problem.yaml] [--repeat 2]

Each run is ``procure report PROBLEM --out TMP --force`` as a user runs it (a new process,
its default workers; a ``procure solve`` in each tree first warms the catalog's cache),
with ``PYTHONPATH`` at the tree (``--before``: e.g. ``git archive COMMIT | tar -x -C
DIR``; the other tree is this one), the two trees alternating (before, this, before,
this, ...) so the machine's load falls on both alike. Prints per
run the wall seconds, the CPU seconds of the command and every process it started
(``RUSAGE_CHILDREN``: they are all waited for), the load before and after, each stage's
line as the command prints it, and per tree the median wall and CPU.
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

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from solver.cli import main; sys.argv[0] = 'procure'; main()"


def children_cpu_s() -> float:
    """CPU seconds (user + system) of every finished, waited-for descendant so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(tree: Path, problem: str, out: Path, cache: Path) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds of one ``procure report`` in ``tree``, and its stage lines."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PROCURE_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cpu, wall = children_cpu_s(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CLI, "report", problem, "--out", str(out), "--force"],
        capture_output=True, text=True, cwd=tree, env=env,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - wall, children_cpu_s() - cpu
    if done.returncode != 0:
        sys.exit(f"{tree}: {done.stderr[-3000:]}")
    stages = [line for line in done.stderr.splitlines() if line.startswith("procure: ")]
    return wall, cpu, stages


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--before", type=Path, required=True, help="the other source tree")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "this tree": ROOT}
    folder = Path(tempfile.mkdtemp(prefix="procure-beside-"))
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    warm = [sys.executable, "-c", CLI, "solve", args.problem]  # the catalog's cache, bytecode
    for tree in trees.values():
        env = {**os.environ, "PYTHONPATH": str(tree), "PROCURE_CACHE_DIR": str(folder / "cache")}
        subprocess.run(warm, capture_output=True, cwd=tree, env=env, check=True)
    for i in range(args.repeat):
        for name, tree in trees.items():
            before = load()
            wall, cpu, stages = run(tree, args.problem, folder / name, folder / "cache")
            got[name].append((wall, cpu))
            print(f"{name} run {i + 1}: {wall:.1f} s wall, {cpu:.1f} s CPU; load {before} -> "
                  f"{load()}", flush=True)  # fmt: skip
            for line in stages:
                print(f"    {line}", flush=True)
    for name, runs in got.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(f"{name:>10}: median {statistics.median(walls):.1f} s wall, "
              f"{statistics.median(cpus):.1f} s CPU over {len(runs)} runs")  # fmt: skip


if __name__ == "__main__":
    main()
