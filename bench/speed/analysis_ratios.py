"""Issue 50's three analysis ratios, measured in one run.

Run: python bench/speed/analysis_ratios.py [--skip report,break_even,workspace]

1. ``procure report problems/seed-2m-13b.yaml`` / ``procure solve`` of the same problem
   (Must show: within 10x);
2. ``procure sensitivity --break-even 3`` on the seed with ``carbon_cap_tco2e: 40`` /
   ``procure solve`` of that problem (within 5x);
3. the workspace's "what moves it" (a sensitivity job, break-even 3, the form's default)
   on that capped plan / ``procure sensitivity --break-even 3`` on the same problem
   (within 2x). The workspace job runs in a server made here (a SQLite workspace, its job
   runner as ``procure serve`` starts it), timed from the submit to ``done``.

Each command runs as a user runs it (a new process, Python start-up included, bytecode
and the checked catalog kept in a cache folder warmed by a first solve). Prints each
time, the machine's load (``os.getloadavg``) before and after, and the three ratios.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "problems" / "seed-2m-13b.yaml"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

#: the workspace's sensitivity job, timed in a process of its own (as a server runs it)
WORKSPACE = """
import json, sys, time
from pathlib import Path
from sqlalchemy import select
from solver.web.app import create_app
from solver.web.store import Analysis, Job
from solver.web.workspace import add_problem

yaml_text, db = Path(sys.argv[1]).read_text(), sys.argv[2]
app = create_app(f"sqlite:///{db}")  # its job runner started, as procure serve's
runner = app.state.runner

def wait(job_id):
    while True:
        with app.state.store.sessions() as s:
            job = s.get(Job, job_id)
            if job.status not in ("queued", "running"):
                return job.status, job.plan_id, job.error, job.stage
        time.sleep(0.2)

with app.state.store.sessions() as s:
    variant = add_problem(s, yaml_text).variants[0].id
status, plan_id, error, _ = wait(runner.submit(variant).id)
assert status == "done", (status, error)
began = time.perf_counter()
# a limit far past the CLI's time, so the job's break-even search leaves no pool out
job_id = runner.submit_sensitivity(plan_id, 3, time_limit_s=7200).id
status, _, error, stage = wait(job_id)
seconds = time.perf_counter() - began
assert status == "done", (status, error, stage)
with app.state.store.sessions() as s:
    stored = json.loads(s.scalars(select(Analysis.result_json)).one())
assert not stored["break_even_left_out"], stored["break_even_left_out"]
print(f"{seconds:.3f}")
runner.close()
"""


def run(args: list[str], cache: Path) -> float:
    """Wall seconds of ``procure ARGS`` (exits if it fails)."""
    began = time.perf_counter()
    done = subprocess.run(
        ["procure", *args], capture_output=True, text=True, cwd=ROOT,
        env={**ENV, "PROCURE_CACHE_DIR": str(cache)},
    )  # fmt: skip
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"procure {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    print(f"  procure {' '.join(args[:2])} ... {seconds:.1f} s", flush=True)
    return seconds


def capped(folder: Path, tco2e: float = 40.0) -> Path:
    """The seed with ``carbon_cap_tco2e: tco2e`` (issue 50's binding case)."""
    line = "budget_usd: 2000000"
    text = SEED.read_text().replace(line, f"{line}\ncarbon_cap_tco2e: {tco2e:g}")
    assert "carbon_cap_tco2e" in text
    path = folder / "seed-cap40.yaml"
    path.write_text(text)
    return path


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip", default="", help="comma-separated: report, break_even, workspace")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    folder = Path(tempfile.mkdtemp(prefix="procure-ratios-"))
    cache = folder / "cache"
    cap = capped(folder)
    print(f"before: {load()} ({os.cpu_count()} CPUs)", flush=True)
    run(["solve", str(SEED)], cache)  # warms the catalog cache
    ratios: dict[str, float] = {}
    if "report" not in skip:
        solve_s = run(["solve", str(SEED)], cache)
        out = str(folder / "report")
        report_s = run(["report", str(SEED), "--out", out, "--force", "-q"], cache)
        ratios["report / solve (seed)"] = report_s / solve_s
    sens_s = None
    if not {"break_even", "workspace"} <= skip:
        cap_solve_s = run(["solve", str(cap)], cache)
        sens_s = run(["sensitivity", str(cap), "--break-even", "3", "-q"], cache)
        ratios["sensitivity --break-even 3 / solve (seed, cap 40 t)"] = sens_s / cap_solve_s
    if "workspace" not in skip and sens_s is not None:
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", WORKSPACE, str(cap), str(folder / "w.db")],
            capture_output=True, text=True, cwd=ROOT,
            env={**ENV, "PROCURE_CACHE_DIR": str(cache)},
        )  # fmt: skip
        if done.returncode != 0:
            sys.exit(f"workspace job failed: {done.stderr[-3000:]}")
        job_s = float(done.stdout.split()[-1])
        print(f"  workspace what-moves-it job ... {job_s:.1f} s "
              f"(process {time.perf_counter() - began:.1f} s)", flush=True)  # fmt: skip
        ratios["workspace what-moves-it / CLI sensitivity (cap 40 t)"] = job_s / sens_s
    print(f"after: {load()}")
    for name, ratio in ratios.items():
        print(f"{name:>55} = {ratio:5.1f}")


if __name__ == "__main__":
    main()
