"""``procure alternatives`` on the seed: wall and CPU time, and what the Must show of issue 51
asks of the plans.

Run: python bench/speed/alternatives_timing.py [--slack 0.02] [--n 3] [--differ-by providers]
[--preferences] [problem.yaml]

Runs the command as a user runs it (a new process, ``--format json``) and prints its wall
and CPU seconds (the child's rusage), then per plan: cost, difference from the optimum,
the set of groups, and whether it is verified, within the slack and of a set of its own.
bench/RESULTS.md has the current figures.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    """Run the command once and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default=str(ROOT / "problems/seed-2m-13b.yaml"))
    parser.add_argument("--slack", type=float, default=0.02)
    parser.add_argument("--n", type=int, default=3)
    parser.add_argument("--differ-by", default="providers")
    parser.add_argument("--preferences", action="store_true")
    args = parser.parse_args()
    command = [sys.executable, "-m", "solver.cli", "alternatives", args.problem, "--quiet"]
    command += ["--format", "json"]
    if args.preferences:
        command.append("--preferences")
    else:
        command += ["--slack", str(args.slack), "--n", str(args.n), "--differ-by", args.differ_by]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    wall_s = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    data = json.loads(done.stdout)
    print(f"wall {wall_s:.1f} s, CPU {cpu_s:.1f} s")
    if args.preferences:
        print("| kind | group | preference | status | costs (USD) |")
        print("|---|---|---|---|---|")
        for r in data["preferences"]:
            delta = "" if r["delta_usd"] is None else f"{r['delta_usd']:+,.2f}"
            print(f"| {r['kind']} | {r['group']} | {r['action']} | {r['status']} | {delta} |")
        return
    opt = data["optimum"]
    base = opt["summary"]["total_cost_usd"]
    cap = data["cap_usd"]
    seen = [set(opt["groups"])]
    print("| plan | cost (USD) | vs optimum | groups | verified | within slack | new set |")
    print("|---|---|---|---|---|---|---|")
    print(f"| optimum | {base:,.2f} | | {', '.join(opt['groups'])} | yes | | |")
    for k, a in enumerate(data["alternatives"], 1):
        cost = a["summary"]["total_cost_usd"]
        new = set(a["groups"]) not in seen
        seen.append(set(a["groups"]))
        print(
            f"| {k} | {cost:,.2f} | {(cost - base) / base:+.2%} | {', '.join(a['groups'])} | "
            f"{'yes' if a['plan']['verified'] else 'NO'} | "
            f"{'yes' if a['plan']['objective'] <= cap else 'NO'} | {'yes' if new else 'NO'} |"
        )
    if data["stopped"]:
        print(f"stopped: {data['stopped']}")


if __name__ == "__main__":
    main()
