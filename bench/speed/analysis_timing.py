"""Wall time of the commands a meeting waits for, on the seed with default options.

Run: python bench/speed/analysis_timing.py [--repeat 3] [problem.yaml]

Times, as a user runs them (a new process each, Python start-up included):
``procure solve``, ``procure sensitivity``, ``procure report --out DIR`` and
``procure resolve --prices FILE`` on a price file that raises every rented offering of the
plan by 30%; and ``procure solve`` once more with no catalog kept between runs (the
first run after the catalog changes: it is parsed and checked again). The commands keep
the checked catalog in a cache folder of their own (warmed by a first solve), as a
user's commands keep it in ~/.cache/procure. Prints each command's median over the
repeats and the ratios report / solve and resolve / solve of those medians (one run, one
machine: the ratios are what compare across machines).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# As a user runs them: Python keeps the compiled bytecode of our modules (__pycache__)
# after the first run. A shell that sets PYTHONDONTWRITEBYTECODE (this sandbox does)
# would compile every module again at each start, 0.2-0.3 s of each command.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# the commands that run with variables of their own
ENV_OF = {"solve, catalog not kept": {"PROCURE_CACHE_DIR": "off"}}

CPU_S: list[float] = []  # CPU seconds (user + system, its worker processes included) per run


def run(args: list[str], **env: str) -> tuple[float, str]:
    """Seconds the command took and its stdout; exits if it failed. Its CPU seconds are
    appended to :data:`CPU_S` (what a busy machine does not inflate). ``env``: variables
    set for this command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        ["procure", *args], capture_output=True, text=True, cwd=ROOT, env={**ENV, **env}
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_S.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if done.returncode != 0:
        sys.exit(f"procure {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, done.stdout


def price_file(plan: dict, folder: Path, factor: float = 1.3) -> Path:
    """Every rented offering and mode of the plan at ``factor`` x its unit price."""
    prices: dict[tuple, float] = {}
    for item in plan["line_items"]:
        if item["item"] == "rent" and item["units"] > 0 and item["hours"] > 0:
            key = (item["provider"], item["region"], item["instance_type"], item["mode"])
            prices[key] = round(item["cost_usd"] / (item["units"] * item["hours"]), 4)
    path = folder / "prices-plus-30.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["provider", "region", "offering", "mode", "price", "date"])
        for key, usd in sorted(prices.items()):
            writer.writerow([*key, round(usd * factor, 4), date.today().isoformat()])
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default="problems/seed-2m-13b.yaml")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="procure-timing-"))
    ENV["PROCURE_CACHE_DIR"] = str(folder / "cache")
    _, text = run(["solve", args.problem, "--format", "json", "--reproducible"])
    baseline = folder / "baseline.json"
    baseline.write_text(text)
    prices = price_file(json.loads(text), folder)
    commands = {
        "solve": ["solve", args.problem],
        "solve, catalog not kept": ["solve", args.problem],
        "sensitivity": ["sensitivity", args.problem, "--quiet"],
        "report": ["report", args.problem, "--out", str(folder / "report"), "--force", "-q"],
        "resolve": [
            "resolve",
            args.problem,
            "--baseline",
            str(baseline),
            "--prices",
            str(prices),
            "-q",
        ],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            seconds, _ = run(command, **ENV_OF.get(name, {}))
            times[name].append(seconds)
            cpu[name].append(CPU_S[-1])
            print(f"  {name}: {seconds:.1f} s (CPU {CPU_S[-1]:.1f} s)", flush=True)
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.problem}, medians of {args.repeat} (wall time of the command; CPU time):")
    for name, value in median.items():
        spread = ", ".join(f"{v:.1f}" for v in times[name])
        print(f"{name:>23}: {value:6.1f} s  ({spread})  CPU {statistics.median(cpu[name]):.1f} s")
    print(f"report / solve  = {median['report'] / median['solve']:.1f}")
    print(f"resolve / solve = {median['resolve'] / median['solve']:.1f}")


if __name__ == "__main__":
    main()
