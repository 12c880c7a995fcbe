"""Type check solver/ with mypy (its configuration in pyproject.toml) and hold each file's
error count to the recorded baseline, scripts/mypy-baseline.txt: a count may only shrink,
and a file not listed must have none. Exit 0 when every file holds, 1 otherwise (the files
that grew are named), 2 when mypy itself fails.

    python scripts/check_types.py            # check against the baseline
    python scripts/check_types.py --update   # record the current counts (only when smaller)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scripts" / "mypy-baseline.txt"
ERROR = re.compile(r"^(solver/[^:]+\.py):\d+: error: ")


def error_counts() -> Counter[str]:
    """mypy's errors on solver/, counted by file (paths relative to the repository)."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "solver"], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode not in (0, 1):  # 2: mypy could not run (a crash or a bad option)
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(2)
    return Counter(m.group(1) for line in done.stdout.splitlines() if (m := ERROR.match(line)))


def read_baseline() -> dict[str, int]:
    """The recorded counts: ``path count`` a line."""
    if not BASELINE.exists():
        return {}
    rows = (line.split() for line in BASELINE.read_text().splitlines() if line.strip())
    return {path: int(count) for path, count in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="record the current counts")
    args = parser.parse_args()
    now, then = error_counts(), read_baseline()
    grew = {f: (then.get(f, 0), n) for f, n in sorted(now.items()) if n > then.get(f, 0)}
    total_now, total_then = sum(now.values()), sum(then.values())
    if args.update:
        if grew and then:
            print(f"not recorded: {len(grew)} file(s) have more errors than the baseline")
        else:
            BASELINE.write_text("".join(f"{f} {n}\n" for f, n in sorted(now.items())))
            print(f"recorded {total_now} errors in {len(now)} files ({BASELINE.name})")
            return 0
    for path, (before, after) in grew.items():
        print(f"{path}: {after} mypy errors, the baseline allows {before}")
    print(f"mypy: {total_now} errors in {len(now)} files (baseline {total_then})")
    return 1 if grew else 0


if __name__ == "__main__":
    raise SystemExit(main())
