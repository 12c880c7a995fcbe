"""Fuzzing procure's command line (issue 16): random valid problems, mutated YAML,
mutated catalog rows and mutated plan JSON, each run through the CLI in-process.

The oracle, for every input:

- no exception escapes (a traceback) and no "internal error" (exit 70) is printed;
- the exit code is one of the documented ones: 0 plan shown, 2 bad input,
  3 infeasible, 4 no plan within the limit;
- ``solve`` exit 0: stdout is one JSON document with ``verified: true``;
- ``export`` exit 0 from a mutated plan: the oracle re-verifies the plan it was given
  (solver.trust.verify.verify_plan against the problem and catalog it was solved for); an
  order written from a plan that fails is counted as "orders from unverified plans".

Issue 34 adds three families, each with its own oracle (counted as "silent wrong" or
"lost or half-written"):

- ``outputs`` (interrupted and repeated outputs): a multi-file output (export in each
  format, resolve's three files, calibrate's two) into a folder holding an earlier
  output, with SIGINT, SIGTERM or SIGHUP raised at a random point of staging or
  publishing, or no signal; or an output path that names one of the command's inputs
  (the same path, a relative spelling, a symbolic or a hard link). Oracle: exit 128 +
  the signal; the folder holds exactly the old files (signal while staging; the message
  says nothing was written) or exactly the files an uninterrupted run writes, byte for
  byte (signal while publishing; the message says every output was written, naming
  them), never a mix, never a temporary file; an export into a folder of another plan's
  export leaves only this plan's order files; an output naming an input exits 2 and the
  input is unchanged, byte for byte.
- ``planfile`` (plan files from other versions and catalogs): a solved plan with one
  edit of a field exports copy (instance type, accelerators, workload, block, residual
  value, the problem's name, start date, totals by provider or period, a line's cost by
  period, duplicate keys), its problem file changed or removed since, keys of another
  version added or removed, another catalog; or two plans of different problems sharing
  a name, diffed. Oracle: an export exits 0 only with files byte-identical to the
  unedited plan's export (else "orders from an edited plan"), 2 otherwise naming the
  field; the diff of different problems says so in its notes.
- ``shapes`` (semantic traps in valid problems): a preset's shape written inline with a
  dropped or added digit in params_b or active_params_b, kv heads that do not divide the
  heads, heads that do not divide the width, or a quota whose region is misspelt, written
  with a look-alike letter or another provider's; and the same inputs without the trap.
  Oracle: every trap is refused (exit 2) with the field named; no control is refused for
  its shape or quota.

Issue 34's second round adds three more:

- ``semantic`` (traps in valid problems that the output would not show): one period of
  6-72 months with reserved_1y (12-month term) or owned servers (60-month life) among the
  modes, and a tpot_slo of 50 ms to 3 s. Oracle: the solve splits the period itself
  where a term or life ends, so the plan carries no ``period_structure`` warning (these
  problems have no period budget, the one split that would not be faithful); a split
  (``compile_report.split_periods``) only when a mode's term or life is shorter than the
  period, its cuts inside the horizon, each with the pools whose term or life ends there;
  a ``tpot_slo`` warning exactly when it is above 1 s.
- ``prices`` (price-update traps): a price CSV, a bare offerings.csv or a SkyPilot file,
  clean or with one trap (a date before 2006-08-24 or more than 92 days ahead, a
  non-USD currency column, a lost field, an offering twice with different prices, one
  zone priced twice). Oracle: every trap is refused naming the file, the field and a fix;
  no clean file is refused.
- ``limits`` (resource limits): a random problem solved at --time-limit 0.05-3 s; a
  --scheduler peer that is not Dask (HTTP, SSH, random bytes) or nothing listening; a
  peer that never answers (probed at a 0.3 s timeout); --workers 1, the CPUs, one more,
  a million. Oracle: wall time, less the time the run waited for a CPU (Linux
  schedstat), within 1.2 x the limit + 0.5 s (the in-process runner) (else "past
  deadline"; over it on the wall clock only is "starved", reported, not a failure: the
  machine's load, not the command), a stop at the limit says so; a non-Dask peer exits 2
  naming --scheduler; a silent peer is refused within 1.2 x its timeout + 0.5 s (the same
  clock); a note when --workers is above the CPUs, none otherwise.

    python bench/fuzz/fuzz.py --n 10000 --seed 1

prints counts per family, the exit-code histogram and every failure (the first few
with their input). tests/test_fuzz.py runs the same generators on a bounded sample.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_base import (  # noqa: E402, F401 - the test reads the exit codes here
    DOCUMENTED_EXIT_CODES,
    FAMILIES,
    INTERRUPTED_EXIT_CODES,
    PLAN_EDITS,
    Tally,
    _check_common,
    _check_solve,
    _invoke,
    catalog_offerings,
    mutate_catalog,
    mutate_yaml,
    random_problem,
    write_catalog,
)
from fuzz_traps import _DEADLINE_SLACK_S, ISSUE_34_FAMILIES  # noqa: E402, F401


def run_one(family: str, rng: random.Random, work: Path, base_cat: Path, tally: Tally) -> None:
    tally.runs[family] += 1
    prob = work / "p.yaml"
    text = random_problem(rng)
    if family == "valid":
        prob.write_text(text)
        args = ["solve", str(prob), "--catalog", str(base_cat), "--format", "json"]
        _check_solve(tally, family, _invoke(args + ["--time-limit", "30"]), text)
    elif family == "yaml":
        mutated = mutate_yaml(rng, text)
        if isinstance(mutated, bytes):
            prob.write_bytes(mutated)
        else:
            prob.write_text(mutated)
        args = ["solve", str(prob), "--catalog", str(base_cat), "--format", "json"]
        _check_solve(tally, family, _invoke(args + ["--time-limit", "30"]), str(mutated)[:2000])
    elif family == "catalog":
        cat = write_catalog(work / f"cat{rng.randrange(10**9)}", catalog_offerings())
        mutate_catalog(rng, cat)
        what = f"{cat}: " + (cat / "offerings.csv").read_text()[:1500]
        _check_common(tally, family, _invoke(["catalog", "validate", "--catalog", str(cat)]), what)
        prob.write_text(text)
        args = ["solve", str(prob), "--catalog", str(cat), "--format", "json"]
        _check_solve(tally, family, _invoke(args + ["--time-limit", "30"]), what)
    elif family == "plan":
        _run_plan_case(rng, work, base_cat, text, tally)
    else:
        ISSUE_34_FAMILIES[family](rng, work, tally)


def _run_plan_case(rng: random.Random, work: Path, cat: Path, text: str, tally: Tally) -> None:
    from solver.inputs.catalog import load_catalog
    from solver.inputs.problem import parse_problem
    from solver.plan import Plan
    from solver.trust.verify import verify_plan

    prob = work / "p.yaml"
    prob.write_text(text)
    plan_path = work / "plan.json"
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(plan_path)]
    if _invoke(args + ["--time-limit", "30"]).exit_code != 0:
        return  # infeasible or refused: nothing to mutate
    doc = json.loads(plan_path.read_text())
    if not doc["line_items"]:
        return
    name, edit = rng.choice(PLAN_EDITS)
    edit(rng.choice(doc["line_items"]), doc)
    raw = json.dumps(doc)
    if rng.random() < 0.1:
        raw = raw.replace('"units": ', '"units": NaN, "x": ', 1)
    bad = work / "bad.json"
    bad.write_text(raw)
    out = work / f"orders{rng.randrange(10**9)}"
    result = _invoke(["export", str(bad), "--out", str(out)])
    what = f"{name}: {raw[:1500]}"
    if not _check_common(tally, "plan", result, what) or result.exit_code != 0:
        if out.exists() and any(out.iterdir()):
            tally.orders_from_unverified += 1
            tally.fail("plan", "files written by a refused export", what)
        return
    # exported: the plan given must pass an independent re-verification here
    try:
        plan = Plan.model_validate(json.loads(raw))
        checks = verify_plan(plan, parse_problem(plan.inputs.problem), load_catalog(cat))
        ok = plan.verified and plan.status in ("optimal", "feasible") and all(c.ok for c in checks)
    except Exception:  # noqa: BLE001 - anything unreadable was not a verified plan
        ok = False
    if not ok:
        tally.orders_from_unverified += 1
        tally.fail("plan", "orders from an unverified plan", what)


def fuzz(n: int, seed: int, families=FAMILIES, progress: int = 0) -> Tally:
    """Run ``n`` inputs spread over ``families``; return the tally. With ``progress``,
    print the per-family table to stderr every ``progress`` inputs and each failure as it
    happens (a long run stopped early still leaves its figures)."""
    rng = random.Random(seed)
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp, _stray_signals_raise():
        work = Path(tmp)
        base_cat = write_catalog(work / "cat", catalog_offerings())
        for k in range(n):
            family = families[k % len(families)]
            case = work / f"case{k}"
            case.mkdir()
            before = tally.counts()
            started = time.perf_counter()
            run_one(family, rng, case, base_cat, tally)
            tally.seconds[family] += time.perf_counter() - started
            row = tally.by_family.setdefault(family, collections.Counter())
            row.update({k: v - before[k] for k, v in tally.counts().items()})
            if progress and row["failures"] and len(tally.failures) > before["failures"]:
                for failed in tally.failures[before["failures"] :]:
                    print(f"FAIL {k} {failed[0]}: {failed[1]}\n{failed[2][:600]}", file=sys.stderr)
            if progress and (k + 1) % progress == 0:
                print(f"after {k + 1} inputs:\n{family_table(tally)}", file=sys.stderr, flush=True)
    return tally


def family_table(tally: Tally) -> str:
    """A markdown table: per family the inputs, each oracle's count and the wall time
    ("silent wrong" adds unverified plans shown and orders from unverified plans)."""
    names = list(Tally().counts())
    lines = ["| family | inputs | " + " | ".join(names) + " | wall s |"]
    lines.append("|---" * (len(names) + 3) + "|")
    total = collections.Counter()
    for family, row in tally.by_family.items():
        total.update(row)
        cells = " | ".join(str(row[n]) for n in names)
        lines.append(f"| {family} | {tally.runs[family]} | {cells} | {tally.seconds[family]:.0f} |")
    cells = " | ".join(str(total[n]) for n in names)
    lines.append(
        f"| all | {sum(tally.runs.values())} | {cells} | {sum(tally.seconds.values()):.0f} |"
    )
    return "\n".join(lines)


@contextlib.contextmanager
def _stray_signals_raise():
    """The ``outputs`` family raises SIGTERM and SIGHUP inside commands (whose handlers turn
    them into an exit 143 or 129); one raised anywhere else must fail a case, not end the
    fuzz run. SIGINT raises KeyboardInterrupt, whatever the run inherited. (So a fuzz run
    is stopped with SIGKILL, or Ctrl-C in its terminal.)"""

    def stray(signum, frame):
        raise RuntimeError(f"signal {signum} outside a command")

    previous = {sig: signal.signal(sig, stray) for sig in (signal.SIGTERM, signal.SIGHUP)}
    # Ctrl-C as a terminal gives it: a run started in the background by a shell without job
    # control (``python bench/fuzz/fuzz.py ... &``) inherits SIGINT ignored, so every raised
    # SIGINT of the outputs family did nothing and the command exited 0 ("exit 0, expected
    # 130": a false alarm, 7 of 40 outputs cases in the first background rounds)
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--failures", type=Path, help="Write every failing input here (JSON)")
    parser.add_argument(
        "--families", default=",".join(FAMILIES), help=f"Comma-separated, of {FAMILIES}"
    )
    parser.add_argument(
        "--progress", type=int, default=0, help="Print the table to stderr every N inputs"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    tally = fuzz(args.n, args.seed, tuple(args.families.split(",")), args.progress)
    seconds = time.perf_counter() - started
    print(f"inputs: {sum(tally.runs.values())} ({dict(tally.runs)}) in {seconds:.0f} s")
    print(f"exit codes: {dict(sorted(tally.exits.items()))}")
    print(f"tracebacks or internal errors: {tally.tracebacks}")
    print(f"unverified plans shown: {tally.unverified_shown}")
    print(f"orders from unverified plans: {tally.orders_from_unverified}")
    print(f"silent wrong (issue 34 oracles): {tally.silent_wrong}")
    print(f"lost or half-written files: {tally.lost_or_half_written}")
    print(f"runs past their deadline by more than 20%: {tally.past_deadline}")
    print(f"runs past it on the wall clock only, waiting for a CPU: {tally.starved}")
    print(f"cases by kind: {dict(sorted(tally.traps.items()))}")
    print(f"failures: {len(tally.failures)}")
    print(family_table(tally))
    if args.failures is not None:
        args.failures.write_text(json.dumps(tally.failures, indent=1))
    for family, why, what in tally.failures[:10]:
        print(f"--- {family}: {why}\n{what[:600]}")


if __name__ == "__main__":
    main()
