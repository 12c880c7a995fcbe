"""Break-even prices of two source trees, compared row by row (issue 28, fifth stop).

Run: python bench/speed/break_even_compare.py --before DIR [--after DIR] [--autoscale]
         [--problems a.yaml b.yaml ...] [--tolerance 1e-9]

Runs ``procure sensitivity --format json`` (default options) on each problem with each
tree first on ``PYTHONPATH`` (``--before``: e.g. ``git archive COMMIT | tar -x -C DIR``;
``--after``: this tree), and compares the break-even rows by pool: the same pools, the
same classes (``same_as``), notes and directions, and prices equal to ``--tolerance``
relative. ``--autoscale`` also runs each problem with every online workload at
``fleet: autoscale`` (written to a temporary folder). Prints each tree's wall time and
CPU time (its process and workers, from the children's rusage) per problem.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ["seed-2m-13b", "chat-7b-all-in", "eu-70b-chat-carbon", "moe-mixtral",
           "h100-quota-training", "lora-7b-spot"]  # fmt: skip
RUN = "import sys; from solver.cli import app; sys.argv = ['procure', *sys.argv[1:]]; app()"


def autoscaled(path: Path, folder: Path) -> Path | None:
    """The problem with every inference workload at ``fleet: autoscale`` (None: none)."""
    data = yaml.safe_load(path.read_text())
    online = [w for w in data.get("workloads", []) if w.get("kind") == "inference"]
    if not online:
        return None
    for w in online:
        w["fleet"] = "autoscale"
    out = folder / f"{path.stem}-autoscale.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def sensitivity(tree: Path, problem: Path) -> tuple[dict | None, float, float, str]:
    """The command's JSON, wall and CPU seconds, and stderr's last line."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUN, "sensitivity", str(problem), "--format", "json", "-q"],
        capture_output=True, text=True, env=env, cwd=tree,
    )  # fmt: skip
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = (done.stderr.strip().splitlines() or [""])[-1]
    if done.returncode != 0:
        return None, wall, cpu, tail
    return json.loads(done.stdout), wall, cpu, tail


def compare(a: dict, b: dict, tolerance: float) -> list[str]:
    """What differs between two reports' break-even rows (empty: nothing)."""
    rows_a = {r["pool_id"]: r for r in a["break_even"]}
    rows_b = {r["pool_id"]: r for r in b["break_even"]}
    out = []
    if set(rows_a) != set(rows_b):
        out.append(f"pools differ: {sorted(set(rows_a) ^ set(rows_b))}")
    for pool in sorted(set(rows_a) & set(rows_b)):
        x, y = rows_a[pool], rows_b[pool]
        for key in ("same_as", "note", "direction", "in_plan"):
            if x[key] != y[key]:
                out.append(f"{pool}: {key} {x[key]!r} != {y[key]!r}")
        p, q = x["break_even_price"], y["break_even_price"]
        if (p is None) != (q is None) or (
            p is not None and abs(p - q) > tolerance * max(abs(p), abs(q), 1e-12)
        ):
            out.append(f"{pool}: break-even {p!r} != {q!r}")
    if a["objective"] != b["objective"]:
        out.append(f"objective {a['objective']} != {b['objective']}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, type=Path)
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--problems", nargs="*", type=Path)
    parser.add_argument("--autoscale", action="store_true")
    parser.add_argument("--tolerance", type=float, default=1e-9)
    args = parser.parse_args()
    problems = args.problems or [ROOT / "problems" / f"{p}.yaml" for p in DEFAULT]
    worst = 0.0
    with tempfile.TemporaryDirectory() as folder:
        cases = list(problems)
        if args.autoscale:
            cases += [p for p in (autoscaled(q, Path(folder)) for q in problems) if p]
        for problem in cases:
            a, wall_a, cpu_a, tail_a = sensitivity(args.before.resolve(), problem.resolve())
            b, wall_b, cpu_b, tail_b = sensitivity(args.after.resolve(), problem.resolve())
            times = (
                f"before {wall_a:.1f} s ({cpu_a:.1f} s CPU), "
                f"after {wall_b:.1f} s ({cpu_b:.1f} s CPU)"
            )
            if a is None or b is None:
                same = (a is None) == (b is None) and tail_a == tail_b
                print(f"{problem.stem}: no report ({tail_a!r} / {tail_b!r}); same: {same}; {times}")
                continue
            diff = compare(a, b, args.tolerance)
            for x in a["break_even"]:
                y = next((r for r in b["break_even"] if r["pool_id"] == x["pool_id"]), None)
                if y and x["break_even_price"] and y["break_even_price"]:
                    p, q = x["break_even_price"], y["break_even_price"]
                    worst = max(worst, abs(p - q) / max(abs(p), abs(q)))
            n = len(a["break_even"])
            print(f"{problem.stem}: {n} rows, {'identical' if not diff else 'DIFFERENT'}; {times}")
            for line in diff:
                print("   ", line)
    print(f"worst relative difference of a break-even price: {worst:.1e}")


if __name__ == "__main__":
    main()
