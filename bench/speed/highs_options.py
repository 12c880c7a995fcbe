"""CPU seconds of ``procure report``'s sections on every shipped problem with HiGHS's
defaults and with given HiGHS options, paired (issue 50: is an option that helped the
seed's hard sweep points a better default for every problem's analyses?).

Run: python bench/speed/highs_options.py --option mip_pool_soft_limit=1000 [--repeat 2]
     [problems/a.yaml ...]

Each run is :mod:`report_sections`'s serial run of the report's sections (the solve for
analysis, shadow and break-even prices, frontier, sweeps and scenarios, replay) in a
process of its own; the options are set on every HiGHS model the process makes
(``HighsSession``). Sides alternate (default first in odd rounds); per problem it prints
each side's median CPU seconds by section, the ratio of the totals, and whether the
figures (every sweep point's status, cost, CO2e, pools; every break-even price) are equal,
else each sweep's largest move of an objective against the gap its points state.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_sections import RUN, load  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

INJECT = """
import json as _json, os as _os
from solver.core.backends import highs_backend as _hb
_options = _json.loads(_os.environ.get("PROCURE_BENCH_HIGHS_OPTIONS", "{}"))
_init = _hb.HighsSession.__init__
def _with_options(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    for key, value in _options.items():
        self.h.setOptionValue(key, value)
_hb.HighsSession.__init__ = _with_options
"""


def run(problem: str, options: dict) -> dict | None:
    """The sections' CPU seconds and figures of ``problem`` with ``options`` set; None
    (said) where the report has no plan to analyse (an infeasible problem)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PROCURE_BENCH_HIGHS_OPTIONS": json.dumps(options),
    }
    done = subprocess.run(
        [sys.executable, "-c", INJECT + RUN, problem],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    if done.returncode != 0:
        print(f"{problem}: no report ({done.stderr.strip().splitlines()[-1][:200]})")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def value(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def largest_moves(a: dict, b: dict) -> dict[str, tuple[float, float]]:
    """Per sweep, the largest relative move of a point's objective and the largest gap
    either side's points state."""
    out = {}
    for key, points in a.items():
        if key == "break-even" or points is None or b.get(key) is None:
            continue
        move, gap = 0.0, 0.0
        for p, q in zip(points, b[key], strict=False):
            if p[5] is not None and q[5] is not None:
                move = max(move, abs(p[5] - q[5]) / max(abs(p[5]), 1e-9))
            gap = max(gap, p[6] or 0.0, q[6] or 0.0)
        out[key] = (move, gap)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*")
    parser.add_argument("--option", action="append", required=True, help="NAME=VALUE")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    options = {k: value(v) for k, v in (o.split("=", 1) for o in args.option)}
    problems = args.problems or sorted(str(p) for p in (ROOT / "problems").glob("*.yaml"))
    totals = {"default": [], "options": []}
    for problem in problems:
        cpu: dict[str, list[dict]] = {"default": [], "options": []}
        figures = {}
        for r in range(args.repeat):
            order = ["default", "options"] if r % 2 == 0 else ["options", "default"]
            for side in order:
                got = run(problem, {} if side == "default" else options)
                if got is None:
                    break
                cpu[side].append({k: t[0] for k, t in got["times"].items()})
                figures[side] = got["figures"]
        if not cpu["default"] or not cpu["options"]:
            continue
        name = Path(problem).stem
        print(f"{name} (load {load()}), median CPU s of {args.repeat}:", flush=True)
        sums = {}
        for side in cpu:
            sections = cpu[side][0].keys()
            med = {s: statistics.median(run[s] for run in cpu[side]) for s in sections}
            sums[side] = statistics.median(sum(run.values()) for run in cpu[side])
            totals[side].append(sums[side])
            text = ", ".join(f"{s} {v:.1f}" for s, v in med.items())
            print(f"  {side:>8}: {text}; total {sums[side]:.1f}", flush=True)
        same = figures["default"] == figures["options"]
        print(f"  ratio {sums['options'] / sums['default']:.2f}; figures equal: {same}")
        if not same:
            for key, (move, gap) in largest_moves(figures["default"], figures["options"]).items():
                if move:
                    print(f"    {key}: largest objective move {move:.2e} (points' gap {gap:.2e})")
            be = [f["break-even"] for f in (figures["default"], figures["options"])]
            if be[0] != be[1]:
                moves = [
                    abs(a[1] - b[1]) / max(abs(a[1]), 1e-9)
                    for a, b in zip(be[0], be[1], strict=False)
                    if a[1] is not None and b[1] is not None
                ]
                notes = sum(a[2] != b[2] or a[0] != b[0] for a, b in zip(*be, strict=False))
                largest = max(moves, default=0.0)
                print(
                    f"    break-even prices: largest move {largest:.2e}, {notes} rows' notes differ"
                )
    a, b = sum(totals["default"]), sum(totals["options"])
    print(f"all problems: default {a:.1f} s, options {b:.1f} s CPU, ratio {b / a:.2f}")


if __name__ == "__main__":
    main()
