"""CPU seconds of each section of ``procure report`` on a problem, in one process, for one
or two source trees (issue 50: which sections cost what, and what reusing plans saves).

Run: python bench/speed/report_sections.py [problem.yaml] [--before DIR]

Each tree (``--before``: e.g. ``git archive COMMIT | tar -x -C DIR``) runs in a process of
its own, one after the other, everything serial (``workers=1``, so CPU seconds are the
work, whatever else the machine runs): the solve for analysis, the sensitivity analysis
(shadow prices and break-even prices, as ``procure report``), the frontier, sweeps and
scenarios (:func:`report_sweeps` as :func:`build_analysis` calls it) and the replay.
Prints each section's CPU and wall seconds, the load before and after, the report's
time on ``--workers`` (2) otherwise idle CPUs computed from each task's CPU seconds (its
sections one after another, and the break-even search beside the sweeps, as
``build_analysis`` runs them on local workers), and whether the
two trees' report figures (every sweep point's status, cost, CO2e, served fraction and
pools; every break-even price) are equal; where they are not, each sweep's largest move
of a point's objective, against the gap the point states (``--sweep-gap``: a tree whose
points carry their gap), and whether every move is within it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RUN = """
import json, sys, time
from pathlib import Path
from solver.analyses.report_analysis import budget_grid_usd
from solver.analyses.sensitivity import report_sweeps, sensitivity_report
from solver.cli.analyses import _load_catalog, _replay_section
from solver.inputs.problem import load_problem
from solver.solve import solve_for_analysis

path = Path(sys.argv[1])
times = {}
def timed(name, fn):
    section[0] = name
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    times[name] = (time.process_time() - c, time.perf_counter() - w)
    return out

prob = load_problem(path)
cat = _load_catalog(None)
# every task of every top-level run of tasks, CPU seconds, by section (the schedule below)
from solver.analyses.sensitivity import pricing
batches, depth, section = [], [0], [""]
real_run = pricing.run_tasks
def run_timed(fn, tasks, **kw):
    if depth[0]:
        return real_run(fn, tasks, **kw)
    batch = []
    batches.append((section[0], batch))
    def one(shared, task):
        c = time.process_time()
        depth[0] += 1
        try:
            return fn(shared, task)
        finally:
            depth[0] -= 1
            batch.append(time.process_time() - c)
    return real_run(one, tasks, **kw)
pricing.run_tasks = run_timed
plan, solution = timed("solve for analysis", lambda: solve_for_analysis(prob, cat))
sens = timed("shadow and break-even prices", lambda: sensitivity_report(solution))
kw = dict(budgets_usd=budget_grid_usd(plan))
try:
    from solver.analyses.sensitivity.sweeps import as_posed
    kw["posed"] = as_posed(solution)
except ImportError:
    pass
sweeps = timed("frontier, sweeps and scenarios", lambda: report_sweeps(solution.compiled, **kw))
timed("replay", lambda: _replay_section(plan, prob, None, path, None))
def pts(v):
    if v is None:
        return None
    if isinstance(v, tuple):
        v = v[0]
    return [[p.status, p.total_cost_usd, p.total_co2e_t, p.served_fraction, p.used,
             p.objective, getattr(p, "gap", None)] for p in v]
figures = {name: pts(v) for name, v in sweeps.items()}
figures["break-even"] = [[b.pool_id, b.break_even_price, b.note] for b in sens.break_even]
print(json.dumps({"times": times, "figures": figures, "batches": batches}))
"""


def run(tree: Path, problem: str) -> dict:
    """The sections' times and figures in ``tree`` (a process of its own)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", RUN, problem], capture_output=True, text=True, cwd=tree, env=env
    )
    if done.returncode != 0:
        sys.exit(f"{tree}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--before", type=Path, default=None, help="another source tree")
    parser.add_argument("--workers", type=int, default=2, help="workers of the schedule")
    args = parser.parse_args()
    trees = {"this tree": ROOT}
    if args.before is not None:
        trees = {"before": args.before.resolve(), **trees}
    got = {}
    for name, tree in trees.items():
        print(f"{name} ({tree}), load {load()}", flush=True)
        got[name] = run(tree, args.problem)
        total = 0.0
        for section, (cpu, wall) in got[name]["times"].items():
            total += cpu
            print(f"  {section:>32}: {cpu:6.1f} s CPU {wall:6.1f} s wall", flush=True)
        print(f"  {'total':>32}: {total:6.1f} s CPU; load {load()}", flush=True)
        if "batches" in got[name]:
            print_schedule(got[name], args.workers)
    if len(got) == 2:
        a, b = (g["figures"] for g in got.values())
        same = a == b
        print("figures equal in both trees:", same)
        if not same:
            beyond = False
            for key in a:
                if a[key] != b.get(key):
                    beyond |= differs(key, a[key], b.get(key))
            if beyond:
                sys.exit(1)


#: the two sections procure report runs side by side on local workers (build_analysis)
BESIDE = ("shadow and break-even prices", "frontier, sweeps and scenarios")


def streams(got: dict) -> dict[str, list]:
    """Each section as a stream of steps: ("serial", CPU s) for its work outside runs of
    tasks, ("batch", [CPU s of each task]) for each run of tasks, in their order (the
    serial work put first: a section's set-up and its frontier ends come before its
    tasks)."""
    out: dict[str, list] = {}
    for name, (cpu, _) in got["times"].items():
        batches = [b for sec, b in got["batches"] if sec == name]
        serial = max(0.0, cpu - sum(sum(b) for b in batches))
        out[name] = [("serial", serial)] + [("batch", b) for b in batches if b]
    return out


def schedule(parallel: list[list], workers: int) -> float:
    """Seconds until every stream of ``parallel`` ends, its runs of tasks on ``workers``
    shared slots (a task starts on the first slot free, first come first served; a run of
    tasks ends when its last task does, and its stream goes on from there), its serial
    steps taking no slot. Streams side by side; one stream: one section after another."""
    import heapq

    free = [0.0] * workers  # when each slot is next free
    heapq.heapify(free)
    # a step starts when its stream's step before it ends; tasks of runs that are ready
    # first take the slots first (event order)
    ready = [(0.0, i, 0) for i in range(len(parallel))]
    heapq.heapify(ready)
    end = 0.0
    while ready:
        t, i, k = heapq.heappop(ready)
        if k == len(parallel[i]):
            end = max(end, t)
            continue
        kind, what = parallel[i][k]
        if kind == "serial":
            heapq.heappush(ready, (t + what, i, k + 1))
            continue
        done = t
        for task in what:
            slot = heapq.heappop(free)
            finish = max(slot, t) + task
            heapq.heappush(free, finish)
            done = max(done, finish)
        heapq.heappush(ready, (done, i, k + 1))
    return end


def print_schedule(got: dict, workers: int) -> None:
    """The report's time on ``workers`` otherwise idle CPUs, from this serial run's task
    times: its sections one after another (as before), and the break-even search and the
    sweeps side by side on shared slots (:func:`solver.analyses.runner.shared_workers`)."""
    steps = streams(got)
    before = [s for name in steps if name not in BESIDE for s in steps[name]]
    one_after = schedule([[s for name in steps for s in steps[name]]], workers)
    beside = sum(s[1] if s[0] == "serial" else 0.0 for s in before) + schedule(
        [steps[name] for name in BESIDE if name in steps], workers
    )
    beside += sum(sum(s[1]) for s in before if s[0] == "batch")  # none: solve, replay
    tasks = {name: sum(len(s[1]) for s in st if s[0] == "batch") for name, st in steps.items()}
    print(
        f"  on {workers} idle CPUs, from these task times ({tasks}): one section after "
        f"another {one_after:.1f} s, break-even and sweeps side by side {beside:.1f} s",
        flush=True,
    )


def differs(key: str, old: list | None, new: list | None) -> bool:
    """Print how one section's figures moved; True when a move is beyond what the new
    tree's points state (a sweep point's objective moved by more than its gap plus the
    solve's 1e-4, or anything else changed)."""
    if key == "break-even" or old is None or new is None or len(old) != len(new):
        print(f"  {key} differs")
        return True
    worst, beyond = 0.0, False
    for p, q in zip(old, new, strict=True):
        if len(p) < 7 or len(q) < 7 or p[5] is None or q[5] is None:
            beyond |= p[:5] != q[:5]
            continue
        move = (q[5] - p[5]) / max(abs(q[5]), 1e-9)  # new above old: what the gap allows
        worst = max(worst, abs(move))
        beyond |= move > (q[6] or 0.0) + 1e-4 or move < -1e-4 - (p[6] or 0.0)
    print(
        f"  {key} differs: largest objective move {worst:.3%}, "
        f"{'beyond' if beyond else 'within'} each point's stated gap"
    )
    return beyond


if __name__ == "__main__":
    main()
