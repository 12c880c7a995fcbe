"""Rewrite tests/golden/: every shipped problem's plan JSON (``--reproducible``), or its
refusal, as ``procure solve`` prints it now. Run after a change that is meant to change
plans, and say why in the commit; tests/test_golden.py fails on any other change.

    python scripts/update_golden.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_golden import GOLDEN, PROBLEMS, normalised, solve_shipped  # noqa: E402


def main() -> None:
    os.chdir(ROOT)
    GOLDEN.mkdir(exist_ok=True)
    for problem in PROBLEMS:
        code, output = solve_shipped(problem)
        record = {"exit_code": code, "output": normalised(output, code)}
        path = GOLDEN / f"{problem.stem}.json"
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        print(f"wrote {path.relative_to(ROOT)} (exit {code})")


if __name__ == "__main__":
    main()
