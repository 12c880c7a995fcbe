"""Issue 50's capped break-even ratio in wall and CPU seconds, paired runs (``procure
sensitivity --break-even 3`` on the seed with ``carbon_cap_tco2e: 40`` against ``procure
solve`` of the same problem: Must show, within 5x).

Run: python bench/speed/break_even_ratio.py [--repeat 2] [--cap 40]

Each round runs ``procure solve CAPPED`` then ``procure sensitivity CAPPED --break-even 3
--format json``, each as a user runs it (a new process; the catalog cache warmed by a first
solve). Wall seconds from the parent; CPU seconds are the process's and its workers' user +
system time (``resource.getrusage(RUSAGE_CHILDREN)``, after each has ended), the measure the
machine's load moves least on this shared 2-core box. Prints each round, the load average
before and after, the medians and the two ratios of the medians; and, from the JSON, each
break-even row (pool, price, note, solves), to compare trees.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "problems" / "seed-2m-13b.yaml"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(args: list[str], cache: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the process and its children) and the
    standard output of ``procure ARGS`` (exits if it fails)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        ["procure", *args], capture_output=True, text=True, cwd=ROOT,
        env={**ENV, "PROCURE_CACHE_DIR": str(cache)},
    )  # fmt: skip
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"procure {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def capped(folder: Path, tco2e: float) -> Path:
    """The seed with ``carbon_cap_tco2e: tco2e`` (issue 50's binding case)."""
    line = "budget_usd: 2000000"
    text = SEED.read_text().replace(line, f"{line}\ncarbon_cap_tco2e: {tco2e:g}")
    assert "carbon_cap_tco2e" in text
    path = folder / f"seed-cap{tco2e:g}.yaml"
    path.write_text(text)
    return path


def rows(stdout: str) -> list[tuple]:
    """The break-even rows of ``procure sensitivity --format json`` (pool, price, note,
    solves), whatever the key that holds them."""
    data = json.loads(stdout)
    found = data.get("break_even") or data.get("break_even_prices") or []
    return [
        (r.get("pool_id"), r.get("break_even_price"), r.get("note"), r.get("solves")) for r in found
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cap", type=float, default=40.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="procure-be-ratio-"))
    cache = folder / "cache"
    problem = capped(folder, args.cap)
    print(f"before: load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)", flush=True)
    timed(["solve", str(SEED)], cache)  # warms the catalog cache
    solve_wall, solve_cpu, sens_wall, sens_cpu = [], [], [], []
    last: list[tuple] = []
    for i in range(args.repeat):
        w, c, _ = timed(["solve", str(problem)], cache)
        solve_wall.append(w)
        solve_cpu.append(c)
        load = os.getloadavg()[0]
        w2, c2, out = timed(
            ["sensitivity", str(problem), "--break-even", "3", "--format", "json"], cache
        )
        sens_wall.append(w2)
        sens_cpu.append(c2)
        last = rows(out)
        print(f"round {i + 1}: solve {w:.1f} s ({c:.1f} s CPU), sensitivity {w2:.1f} s "
              f"({c2:.1f} s CPU), ratio {w2 / w:.1f} (CPU {c2 / c:.1f}), load {load:.1f}",
              flush=True)  # fmt: skip
    med = statistics.median
    print(f"after: load average {os.getloadavg()[0]:.1f}")
    wall, cpu = med(sens_wall) / med(solve_wall), med(sens_cpu) / med(solve_cpu)
    print(f"medians: solve {med(solve_wall):.1f} s ({med(solve_cpu):.1f} s CPU), "
          f"sensitivity {med(sens_wall):.1f} s ({med(sens_cpu):.1f} s CPU): "
          f"ratio {wall:.1f} (CPU {cpu:.1f})")  # fmt: skip
    for row in last:
        print("  " + "\t".join(str(v) for v in row))


if __name__ == "__main__":
    main()
