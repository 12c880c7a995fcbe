"""The column-generation bound by cut family: the LP, then MIR or Chvatal-Gomory cuts.

Run: python bench/quality/cut_bounds.py [--case 10000 50 12] [--optimum]

Runs solver/core/columns.py's pricing to the end (no time limit), then its cut rounds to the
end, once per cut family: the MIR cuts as shipped (divisors: each unit the LP buys and
the demand, over 1 to 4), MIR with whole divisors only (over 1), and the Chvatal-Gomory
rounding ceil(a / d) that came before them, with the shipped divisors. Prints the bound
of each (a valid lower bound of the whole problem) and, with ``--optimum``, the full
model's MIP solved by HiGHS to a 0.01% gap (small cases only) to set them against.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/generate.py
sys.path.insert(0, str(HERE.parents[1]))

from generate import generated_problem, scaled_catalog  # noqa: E402

from solver.core import columns  # noqa: E402
from solver.core.backends import SolveOptions, get_backend  # noqa: E402
from solver.core.compile import compile_problem  # noqa: E402
from solver.core.model import build_model  # noqa: E402
from solver.core.time_budget import Budget  # noqa: E402


def chvatal_gomory(a, demand, divisor) -> np.ndarray:
    """The rounding cut's coefficients ceil(a / d) (the cuts before MIR)."""
    return np.ceil(np.asarray(a, dtype=float) / divisor - 1e-9)


VARIANTS = {
    "MIR, divisors over 1-4 (shipped)": {},
    "MIR, whole divisors only": {"DIVIDED_BY": (1,)},
    "Chvatal-Gomory, divisors over 1-4": {"mir_coefficients": chvatal_gomory},
}


def bound(compiled, patch: dict) -> tuple[float, float, int, int, float]:
    """(LP bound, bound with cuts, cuts, cut rounds, seconds) with ``patch`` applied."""
    with mock.patch.multiple(columns, **patch) if patch else contextlib.nullcontext():
        budget = Budget.of(None)  # no limit: every round runs
        g = columns._Generation(compiled, budget)
        t0 = time.perf_counter()
        g.run(cut_rounds=0, phase=budget.phase(1.0))
        lp = g.report.lp_bound
        g.run(cut_rounds=4 * columns.MAX_CUT_ROUNDS, phase=budget.phase(1.0))
        return lp, g.report.lp_bound, len(g.cuts), g.report.cut_rounds, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", type=int, nargs=3, default=[10_000, 50, 12])
    parser.add_argument("--optimum", action="store_true")
    args = parser.parse_args()
    n_offerings, n_workloads, n_periods = args.case
    compiled = compile_problem(
        generated_problem(n_workloads, n_periods), scaled_catalog(n_offerings)
    )
    print(f"{n_offerings:,} x {n_workloads} x {n_periods}")
    for name, patch in VARIANTS.items():
        lp, cut, n, rounds, seconds = bound(compiled, patch)
        print(
            f"{name}: LP ${lp:,.0f}, with cuts ${cut:,.0f} ({n:,} cuts, {rounds} rounds, "
            f"{seconds:.1f} s)"
        )
    if args.optimum:
        mip = get_backend("highspy").solve(
            build_model(compiled), SolveOptions(relative_gap=1e-4, time_limit_s=600)
        )
        print(f"full MIP: ${mip.objective:,.0f} (HiGHS bound ${mip.bound:,.0f})")


if __name__ == "__main__":
    main()
