"""How well the LP entry estimate picks the pools closest to entering (the pools a
``--break-even N`` search analyses beyond the plan's), against every pool's exact
break-even price.

Run: procure sensitivity problems/seed-2m-13b.yaml --break-even -1 --format json --out ALL
     python bench/quality/entry_ranking.py ALL [--problem problems/seed-2m-13b.yaml] [--n 12]

``ALL`` holds the exact break-even price of every class outside the plan (they do not
depend on the estimate, so one run serves every tree). Prints, for this tree's
:func:`~solver.analyses.sensitivity.break_even.entry_estimates`, how many of the N classes
it picks are among the N truly closest (break-even price / current price, highest
first), the exact moves of the ones it picks, and the Spearman rank correlation of
estimate and exact closeness over every outside class.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from solver.analyses.sensitivity.break_even import entry_estimates  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.problem import load_problem  # noqa: E402
from solver.solve import solve_for_analysis  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exact", type=Path)
    parser.add_argument("--problem", default=str(ROOT / "problems" / "seed-2m-13b.yaml"))
    parser.add_argument("--n", type=int, default=12)
    args = parser.parse_args()
    rows = json.loads(args.exact.read_text())["break_even"]
    # closeness of each class outside the plan: its break-even over its current price
    closeness = {
        b["pool_id"]: (b["break_even_price"] or 0.0) / b["current_price"]
        for b in rows
        if not b["in_plan"]
    }
    _, solution = solve_for_analysis(load_problem(args.problem), load_catalog())
    estimate = entry_estimates(solution)
    classes = sorted(closeness)
    truth = sorted(classes, key=lambda p: -closeness[p])[: args.n]
    picked = sorted(classes, key=lambda p: (-estimate.get(p, float("-inf")), p))[: args.n]
    rho = spearmanr([estimate.get(p, 0.0) for p in classes], [closeness[p] for p in classes])
    print(f"{args.problem}: {len(classes)} classes outside the plan")
    moves = {name: ", ".join(f"{closeness[p] - 1:+.0%}" for p in group)
             for name, group in (("truth", truth), ("picked", picked))}  # fmt: skip
    print(f"  the {args.n} closest, exact moves: {moves['truth']}")
    print(
        f"  picked by the estimate: {len(set(picked) & set(truth))} of them; their moves: "
        f"{moves['picked']}"
    )
    print(f"  Spearman rank correlation over all classes: {rho.correlation:.2f}")


if __name__ == "__main__":
    main()
