"""``procure report`` on the seed with less in it, each against ``procure solve`` in the same
run (issue 50: what the report would have to leave out to come within 10x the solve).

Run: python bench/speed/report_content.py [--repeat 1]

Each line of :data:`CONTENTS` is a set of ``procure report`` options (the first the
defaults); every report is paired with a ``procure solve`` of the seed just before it, both
as a user runs them (a new process, the catalog cache warmed by a first solve, as
analysis_ratios.py). Prints each pair, the ratio, and the load before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analysis_ratios import SEED, load, run  # noqa: E402

#: option sets of ``procure report``: what each leaves out of the default report
CONTENTS: dict[str, list[str]] = {
    "defaults (break-even 12, 8 frontier points, 20 scenarios, sweep gap 0.5%)": [],
    "--break-even 3": ["--break-even", "3"],
    "--sweep-gap 0.02": ["--sweep-gap", "0.02"],
    "--frontier-points 5 --scenarios 10": ["--frontier-points", "5", "--scenarios", "10"],
    "all three": [
        "--break-even", "3", "--sweep-gap", "0.02", "--frontier-points", "5",
        "--scenarios", "10",
    ],
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="procure-content-"))
    cache = folder / "cache"
    print(f"before: {load()} ({os.cpu_count()} CPUs)", flush=True)
    run(["solve", str(SEED)], cache)  # warms the catalog cache
    ratios: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for name, options in CONTENTS.items():
            solve_s = run(["solve", str(SEED)], cache)
            out = str(folder / "report")
            report_s = run(["report", str(SEED), "--out", out, "--force", "-q", *options], cache)
            ratios.setdefault(name, []).append(report_s / solve_s)
    print(f"after: {load()}")
    for name, got in ratios.items():
        print(f"{name:>75}: report / solve {statistics.median(got):5.1f}")


if __name__ == "__main__":
    main()
