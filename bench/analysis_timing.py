"""Wall time of the commands a meeting waits for, on the seed with default options.

Run: python bench/analysis_timing.py [--repeat 3] [problem.yaml]

Times, as a user runs them (a new process each, Python start-up included):
``procure solve``, ``procure sensitivity``, ``procure report --out DIR`` and
``procure resolve --prices FILE`` on a price file that raises every rented offering of the
plan by 30%. Prints each command's median over the repeats and the ratios report / solve
and resolve / solve of those medians (one run, one machine: the ratios are what compare
across machines).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str]) -> tuple[float, str]:
    """Seconds the command took and its stdout; exits if it failed."""
    started = time.perf_counter()
    done = subprocess.run(["procure", *args], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
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
    _, text = run(["solve", args.problem, "--format", "json", "--reproducible"])
    baseline = folder / "baseline.json"
    baseline.write_text(text)
    prices = price_file(json.loads(text), folder)
    commands = {
        "solve": ["solve", args.problem],
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
    for _ in range(args.repeat):
        for name, command in commands.items():
            seconds, _ = run(command)
            times[name].append(seconds)
            print(f"  {name}: {seconds:.1f} s", flush=True)
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.problem}, medians of {args.repeat} (wall time of the command):")
    for name, value in median.items():
        spread = ", ".join(f"{v:.1f}" for v in times[name])
        print(f"{name:>12}: {value:6.1f} s  ({spread})")
    print(f"report / solve  = {median['report'] / median['solve']:.1f}")
    print(f"resolve / solve = {median['resolve'] / median['solve']:.1f}")


if __name__ == "__main__":
    main()
