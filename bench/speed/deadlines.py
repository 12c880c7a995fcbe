"""Deadlines (issue 34, item 3): each command at --time-limit 10, 30 and 60 s, wall time and
what it returned.

Run: python bench/speed/deadlines.py [--limits 10 30 60] [--commands solve-full solve-auto ...]
                               [--case 10000 200 12] [--small-case 1000 50 12]
                               [--analysis-case 10000 200 12] [--busy N]

Commands (each run as ``procure ...`` in its own process, wall time from its start to
its exit, so the interpreter's start and the catalog's load are counted):

- ``solve-full``, ``solve-auto``: ``procure solve --method full|auto --format json`` on the
  large case (default 10,000 offerings x 200 workloads x 12 monthly periods, the issue's).
- ``sensitivity``, ``report``: ``--analysis-case`` (default the large case; they compile
  it twice, pruned and not, so a smaller one is the largest they can take under load).
- ``resolve``: a baseline plan of the small case (default 1,000 x 50 x 12: a baseline must be
  solved first, without a limit) re-solved against the large case's prices moved by 5%.
- ``stochastic``: the seed with 50 drawn price-and-demand scenarios (bench/quality/stochastic.py's
  case: sigma 0.25, demand 0.7-1.4) by ``procure solve``.

Each row: the limit, the wall time, its ratio to the limit (the issue's bound: 1.2), the
exit code and what came back: a plan (status, gap, total) or the first line of the
message; a plan stopped by the limit is marked "stopped at the limit", an analysis that
left parts out says which. The machine's load average is printed before and after.
``--busy N`` starts N competing jobs (a Python busy loop each, ``nice -n 0``) for the
whole run, to show how the answers degrade with the CPU the command gets.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))  # bench/generate.py

COMMANDS = ("solve-full", "solve-auto", "sensitivity", "report", "resolve", "stochastic")


def _catalog_folder(n_offerings: int, folder: Path) -> Path:
    """The shipped catalog grown to ``n_offerings`` (bench/generate.py), as a folder."""
    from generate import scaled_catalog

    cat = scaled_catalog(n_offerings)
    shutil.copytree(ROOT / "catalogs", folder)
    cat.offerings.reset_index(drop=True).to_csv(folder / "offerings.csv", index=False)
    cat.regions.reset_index(drop=True).to_csv(folder / "regions.csv", index=False)
    return folder


def _problem_file(n_workloads: int, n_periods: int, path: Path) -> Path:
    from generate import generated_problem

    problem = generated_problem(n_workloads, n_periods)
    data = problem.model_dump(mode="json", exclude_unset=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _stochastic_file(path: Path) -> Path:
    data = yaml.safe_load((ROOT / "problems" / "seed-2m-13b.yaml").read_text())
    data["uncertainty"] = {
        "n_scenarios": 50,
        "seed": 1,
        "price_sigma": 0.25,
        "demand_range": [0.7, 1.4],
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _moved_prices(catalog: Path, path: Path, factor: float = 1.05) -> Path:
    """The catalog's offerings.csv with every price x ``factor`` (a price update)."""
    import pandas as pd

    off = pd.read_csv(catalog / "offerings.csv")
    for column in [c for c in off.columns if c.endswith("_usd_per_hour")]:
        off[column] = off[column] * factor
    off.to_csv(path, index=False)
    return path


def _returned(code: int, stdout: str, stderr: str, out: Path | None = None) -> str:
    """What a run gave back, in a few words."""
    if code == 0:
        try:
            plan = json.loads(stdout)
            plan = plan.get("plan", plan)  # resolve's JSON holds the plan
            gap = plan.get("gap")
            gap_text = "n/a" if gap is None else f"{100 * gap:.2f}%"
            cost = plan.get("total_cost_usd", plan.get("expected_cost_usd"))
            stopped = plan.get("stopped_at_time_limit") or plan.get("cut_at_time_limit")
            return (
                f"plan: {plan['status']}, gap {gap_text}, ${cost:,.0f}"
                + (", stopped at the limit" if stopped else "")
                + (
                    "; cut: " + "; ".join(plan["cut_at_time_limit"])
                    if plan.get("cut_at_time_limit")
                    else ""
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        if out is not None and (out / "analysis.json").exists():
            analysis = json.loads((out / "analysis.json").read_text())
            cut = analysis.get("cut_at_time_limit") or []
            left = analysis["sensitivity"].get("break_even_left_out") or []
            return (
                f"report: {len(analysis['sensitivity']['break_even'])} break-evens"
                + (f", {len(left)} pools left out" if left else "")
                + (f"; sections cut: {', '.join(cut)}" if cut else "; every section")
            )
        notes = [line for line in stdout.splitlines() if "stopped at the time limit" in line]
        if notes:
            return "answer: " + notes[0].strip()[:150]
        last = [line for line in stdout.splitlines() if line.strip()]
        return "answer: " + (last[-1][:90] if last else "(empty)")
    lines = [line for line in stderr.splitlines() if line.startswith("error")]
    return (lines[0] if lines else (stderr.strip().splitlines() or ["?"])[-1])[:110]


def _run(args: list[str], limit: float, out: Path | None = None) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(
        ["procure", *args, "--time-limit", f"{limit:g}"],
        capture_output=True,
        text=True,
        timeout=max(600.0, 5 * limit),
        cwd=ROOT,
    )
    wall = time.perf_counter() - started
    return wall, done.returncode, _returned(done.returncode, done.stdout, done.stderr, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[10, 30, 60])
    ap.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=COMMANDS)
    ap.add_argument("--case", type=int, nargs=3, default=[10_000, 200, 12])
    ap.add_argument("--small-case", type=int, nargs=3, default=[1_000, 50, 12])
    ap.add_argument("--analysis-case", type=int, nargs=3, default=None)
    ap.add_argument("--busy", type=int, default=0, help="competing busy-loop jobs")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="procure-deadlines-"))
    busy = [
        subprocess.Popen(["nice", "-n", "0", sys.executable, "-c", "while True: pass"])
        for _ in range(args.busy)
    ]
    atexit.register(lambda: [job.kill() for job in busy])  # also when the run fails
    print(f"load average before: {os.getloadavg()}; {args.busy} competing job(s)", flush=True)
    o, w, p = args.case
    cat = _catalog_folder(o, work / "cat")
    prob = _problem_file(w, p, work / "large.yaml")
    a_cat, a_prob, a_case = cat, prob, f"{o:,} x {w} x {p}"
    if args.analysis_case and tuple(args.analysis_case) != tuple(args.case):
        ao, aw, ap_ = args.analysis_case
        a_cat = _catalog_folder(ao, work / "analysis-cat")
        a_prob = _problem_file(aw, ap_, work / "analysis.yaml")
        a_case = f"{ao:,} x {aw} x {ap_}"
    need_small = "resolve" in args.commands
    if need_small:
        so, sw, sp = args.small_case
        small_cat = _catalog_folder(so, work / "small-cat")
        small = _problem_file(sw, sp, work / "small.yaml")
        baseline = work / "baseline.json"
        subprocess.run(
            ["procure", "solve", str(small), "--catalog", str(small_cat), "--format", "json",
             "--out", str(baseline), "--gap", "0.01"],
            check=True, capture_output=True, cwd=ROOT,
        )  # fmt: skip
        moved = _moved_prices(small_cat, work / "moved-offerings.csv")
    stochastic = _stochastic_file(work / "seed-uncertain.yaml")
    case = f"{o:,} x {w} x {p}"
    rows = []
    for command in args.commands:
        for limit in args.limits:
            out = work / f"out-{command}-{limit:g}"
            if command.startswith("solve-"):
                method = command.split("-", 1)[1]
                argv = ["solve", str(prob), "--catalog", str(cat), "--method", method,
                        "--format", "json"]  # fmt: skip
                what = case
            elif command == "sensitivity":
                argv = ["sensitivity", str(a_prob), "--catalog", str(a_cat), "-q"]
                what = a_case
            elif command == "report":
                argv = ["report", str(a_prob), "--catalog", str(a_cat), "--out", str(out), "-q"]
                what = a_case
            elif command == "resolve":
                argv = ["resolve", str(small), "--catalog", str(small_cat), "--baseline",
                        str(baseline), "--prices", str(moved), "--format", "json", "-q",
                        "--accept-suspicious"]  # fmt: skip
                what = "{:,} x {} x {} (+5% prices)".format(*args.small_case)
            else:
                argv = ["solve", str(stochastic), "--format", "json"]
                what = "seed, 50 scenarios"
            wall, code, returned = _run(argv, limit, out if command == "report" else None)
            row = (command, what, limit, wall, wall / limit, code, returned)
            rows.append(row)
            print(
                f"{command:12s} {what:28s} limit {limit:4g} s  wall {wall:7.1f} s "
                f"({wall / limit:4.2f}x)  exit {code}  {returned}",
                flush=True,
            )
    for job in busy:
        job.kill()
    print(f"load average after: {os.getloadavg()}")
    print()
    print("| command | case | --time-limit | wall | wall / limit | exit | returned |")
    print("|---|---|---|---|---|---|---|")
    for command, what, limit, wall, ratio, code, returned in rows:
        print(
            f"| {command} | {what} | {limit:g} s | {wall:.1f} s | {ratio:.2f} | {code} | "
            f"{returned.replace('|', '/')} |"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
