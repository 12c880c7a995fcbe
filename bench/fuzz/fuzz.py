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
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the CLI runs in this process: its deadline watchdog must not end the fuzz run
os.environ.setdefault("PROCURE_HARD_DEADLINE", "0")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from typer.testing import CliRunner  # noqa: E402

from conftest import TINY_REGIONS, offering, write_catalog  # noqa: E402
from solver.cli import app  # noqa: E402

DOCUMENTED_EXIT_CODES = {0, 2, 3, 4}
#: a command stopped by SIGHUP, SIGINT or SIGTERM (128 + the signal): the ``outputs`` family
INTERRUPTED_EXIT_CODES = {129, 130, 143}
FAMILIES = ("valid", "yaml", "catalog", "plan", "outputs", "planfile", "shapes")
FAMILIES += ("semantic", "prices", "limits")  # issue 34, second round
MODELS = ["llama-3-8b", "mistral-7b", "dense-7b"]
TRAINING_MODELS = ["dense-7b", "llama-3-8b"]
HOSTILE_VALUES = [
    ".inf",
    "-.inf",
    ".nan",
    "-1",
    "0",
    "1e308",
    "1e-300",
    "abc",
    "0500",
    "1:30",
    "yes",
    "~",
    "[]",
    "{}",
    "'=cmd|'' /C calc''!A0'",
    '"@SUM(1+1)"',
    "9" * 400,
]


def catalog_offerings() -> list[dict]:
    return [
        offering("h1", "h100-sxm", 1, 4.0, spot=1.6, r1=2.8, r3=2.0),
        offering("h8", "h100-sxm", 8, 30.0, spot=14.0, r1=22.0, cap=4),
        offering("l4", "l4", 1, 0.9, spot=0.4, nvlink=False, cap=16),
        offering("l4b", "l4", 2, 1.9, r1=1.2, nvlink=False),
    ]


def random_problem(rng: random.Random) -> str:
    """A valid problem YAML over :func:`catalog_offerings` (it may still be infeasible)."""
    n_periods = rng.randint(1, 3)
    months = [rng.choice([1, 2, 3]) for _ in range(n_periods)]
    lines = [f"name: fuzz-{rng.randrange(10**6)}", f"horizon_months: {sum(months)}", "periods:"]
    lines += [f"  - {{name: p{i}, months: {m}}}" for i, m in enumerate(months)]
    modes = rng.sample(
        ["on_demand", "spot", "reserved_1y", "reserved_3y", "owned"], rng.randint(1, 5)
    )
    lines.append(f"modes: [{', '.join(modes)}]")
    if rng.random() < 0.3:
        lines.append(f"budget_usd: {rng.choice([500, 5_000, 50_000, 500_000])}")
    if rng.random() < 0.2:
        lines.append(f"carbon_cap_tco2e: {rng.choice([0.5, 5, 50])}")
    if rng.random() < 0.2:
        lines.append(
            "load_blocks: [{name: day, hours_per_day: 12, demand_factor: "
            f"{rng.choice([0, 1, 2])}}}, {{name: night, hours_per_day: 12, demand_factor: "
            f"{rng.choice([0, 0.5, 1])}}}]"
        )
    if rng.random() < 0.2:
        lines.append(f"objective: {rng.choice(['min_carbon', 'max_served', 'lexicographic'])}")
    lines.append("workloads:")
    for k in range(rng.randint(1, 3)):
        kind = rng.choice(["inference", "inference", "batch_inference", "training"])
        if kind == "inference":
            demand = rng.choice(
                [
                    f"{{tokens_per_s: {rng.choice([1e-6, 10, 500, 3000])}}}",
                    f"{{users: {rng.choice([1, 1000, 50000])}, requests_per_user_per_day: 10}}",
                ]
            )
            lines += [
                "  - kind: inference",
                f"    name: w{k}",
                f"    model: {rng.choice(MODELS)}",
                f"    demand: {demand}",
                f"    prompt_tokens: {rng.choice([100, 500, 2000])}",
                f"    output_tokens: {rng.choice([50, 200, 500])}",
                f"    ttft_slo: {rng.choice(['500 ms', '2 s'])}",
                f"    tpot_slo: {rng.choice(['30 ms', '100 ms'])}",
            ]
            if rng.random() < 0.2:
                lines.append("    redundancy: n_plus_1")
        elif kind == "batch_inference":
            lines += [
                "  - kind: batch_inference",
                f"    name: w{k}",
                f"    model: {rng.choice(MODELS)}",
                f"    output_tokens_total: {rng.choice([1e6, 1e9])}",
                "    prompt_tokens: 500",
                "    output_tokens: 200",
            ]
        else:
            lines += [
                "  - kind: training",
                f"    name: w{k}",
                f"    model: {rng.choice(TRAINING_MODELS)}",
                f"    tokens: {rng.choice([1e8, 1e9])}",
                f"    deadline_days: {rng.choice([10, 60])}",
                "    interruptible: " + rng.choice(["true", "false"]),
            ]
    return "\n".join(lines) + "\n"


def mutate_yaml(rng: random.Random, text: str) -> str | bytes:
    """One hostile edit of a valid problem."""
    lines = text.splitlines()
    i = rng.randrange(len(lines))
    kind = rng.choice(["value", "value", "value", "delete", "duplicate", "nest", "bytes", "cut"])
    if kind == "value" and ":" in lines[i]:
        key, _, _ = lines[i].partition(":")
        lines[i] = f"{key}: {rng.choice(HOSTILE_VALUES)}"
    elif kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "nest":
        depth = rng.choice([10, 70, 600])
        lines.append("description: " + "[" * depth + "]" * depth)
    elif kind == "bytes":
        return (text[: rng.randrange(len(text))]).encode() + b"\xff\xfe\x00" + text.encode()
    else:
        return text[: rng.randrange(len(text))]
    return "\n".join(lines) + "\n"


def mutate_catalog(rng: random.Random, folder: Path) -> None:
    """One hostile edit of offerings.csv or accelerators.csv in ``folder``."""
    file = folder / rng.choice(["offerings.csv", "offerings.csv", "accelerators.csv"])
    rows = file.read_text().splitlines()
    r = rng.randrange(1, len(rows))
    cells = rows[r].split(",")
    kind = rng.choice(["cell", "cell", "cell", "extra", "short", "empty_file", "header"])
    if kind == "cell":
        c = rng.randrange(len(cells))
        cells[c] = rng.choice(["inf", "-inf", "nan", "-1", "0", "1e300", "x", "", "=1+1"])
        rows[r] = ",".join(cells)
    elif kind == "extra":
        rows[r] += ",,"
    elif kind == "short":
        rows[r] = ",".join(cells[:-2])
    elif kind == "empty_file":
        rows = []
    else:
        rows[0] = rows[0].replace(rng.choice(rows[0].split(",")), "renamed", 1)
    file.write_text("\n".join(rows) + ("\n" if rows else ""))


PLAN_EDITS = [
    ("units x2000", lambda it, d: it.update(units=it["units"] * 2000)),
    ("units -1", lambda it, d: it.update(units=-1.0)),
    ("units 0.5", lambda it, d: it.update(units=0.5)),
    ("cost 0", lambda it, d: it.update(cost_usd=0.0)),
    ("cost x0.5", lambda it, d: it.update(cost_usd=it["cost_usd"] * 0.5)),
    ("hours x2", lambda it, d: it.update(hours=it["hours"] * 2)),
    ("mode leased", lambda it, d: it.update(mode="leased")),
    ("mode spot", lambda it, d: it.update(mode="spot")),
    ("offering ghost", lambda it, d: it.update(offering="acme/us-east/ghost")),
    ("provider =cmd", lambda it, d: it.update(provider="=cmd|' /C calc'!A0")),
    ("drop item", lambda it, d: d["line_items"].remove(it)),
    ("status infeasible", lambda it, d: d.update(status="infeasible")),
    ("verified false", lambda it, d: d.update(verified=False)),
    ("total 1", lambda it, d: d.update(total_cost_usd=1.0)),
    ("no inputs", lambda it, d: d.update(inputs=None)),
    ("problem edit", lambda it, d: d["inputs"]["problem"].update(budget_usd=1e9)),
    ("digest", lambda it, d: d["inputs"].update(catalog_sha256="0" * 64)),
    ("delete status", lambda it, d: d.pop("status")),
    ("delete totals", lambda it, d: d.pop("totals")),
]


@dataclass
class Tally:
    runs: collections.Counter = field(default_factory=collections.Counter)
    exits: collections.Counter = field(default_factory=collections.Counter)
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    tracebacks: int = 0
    unverified_shown: int = 0
    orders_from_unverified: int = 0
    silent_wrong: int = 0
    lost_or_half_written: int = 0
    past_deadline: int = 0  # runs past --time-limit by more than 20% (family limits)
    #: runs past it on the wall clock only, for the time they waited for a CPU (:func:`_clock`)
    starved: int = 0
    traps: collections.Counter = field(default_factory=collections.Counter)
    #: per family: wall seconds and each oracle's count (filled by :func:`fuzz`)
    seconds: collections.Counter = field(default_factory=collections.Counter)
    by_family: dict = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """The oracle counts, by name (the columns of :func:`family_table`)."""
        return {
            "tracebacks": self.tracebacks,
            "silent wrong": self.silent_wrong + self.unverified_shown + self.orders_from_unverified,
            "lost files": self.lost_or_half_written,
            "past deadline": self.past_deadline,
            "starved": self.starved,
            "failures": len(self.failures),
        }

    def fail(self, family: str, why: str, what: str) -> None:
        self.failures.append((family, why, what))


runner = CliRunner()


def _invoke(args: list[str]):
    return runner.invoke(app, args, catch_exceptions=True)


def _check_common(tally: Tally, family: str, result, what: str) -> bool:
    tally.exits[result.exit_code] += 1
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    if crashed or "Traceback" in result.output or "internal error" in result.output:
        tally.tracebacks += 1
        detail = repr(result.exception) if crashed else result.output.strip().splitlines()[0]
        tally.fail(family, f"traceback/bug: {detail[:200]}", what)
        return False
    if result.exit_code not in DOCUMENTED_EXIT_CODES:
        tally.fail(family, f"exit {result.exit_code}", what)
        return False
    return True


def _check_solve(tally: Tally, family: str, result, what: str) -> None:
    if not _check_common(tally, family, result, what) or result.exit_code != 0:
        return
    try:
        plan = json.loads(result.stdout)
    except json.JSONDecodeError:
        tally.fail(family, "stdout is not JSON", what)
        return
    if plan.get("verified") is not True:
        tally.unverified_shown += 1
        tally.fail(family, "unverified plan shown", what)


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


# --------------------------------------------------------------------------- issue 34
# Interrupted and repeated outputs, plan files from other versions and catalogs, semantic
# traps in valid problems. Each family's oracle is in the module docstring.

SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
MEASUREMENTS = ROOT / "tests" / "data" / "measurements.csv"


def _catalog_34(work: Path) -> Path:
    """The fuzz catalog with a second provider (beta), so that orders come in several
    files: acme's offerings and beta's 1- and 8-H100 instances a little dearer."""
    rows = catalog_offerings() + [
        offering("b1", "h100-sxm", 1, 4.2, provider="beta"),
        offering("b8", "h100-sxm", 8, 32.0, r1=24.0, provider="beta", cap=8),
    ]
    regions = [*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta"}]
    return write_catalog(work / f"cat34-{random.random():.12f}", rows, regions=regions)


def _problem_34(
    rng: random.Random, name: str | None = None, demand: float | None = None, quota: bool = True
) -> str:
    """A feasible problem over :func:`_catalog_34`: one chat service, sometimes owned
    servers with a residual value, a quota on acme that sends the rest to beta."""
    months = rng.choice([[1], [1, 1], [2, 3], [12, 12]])
    lines = [f"name: {name or f'io-{rng.randrange(10**6)}'}", f"horizon_months: {sum(months)}"]
    lines += ["periods:"] + [f"  - {{name: p{i}, months: {m}}}" for i, m in enumerate(months)]
    if rng.random() < 0.5:
        lines.append("start: 2027-01")
    modes = ["on_demand"] + rng.sample(["spot", "reserved_1y", "owned"], rng.randint(0, 2))
    lines.append(f"modes: [{', '.join(modes)}]")
    if "owned" in modes and rng.random() < 0.7:
        lines.append("residual_value: straight_line")
    if quota and rng.random() < 0.7:
        lines.append(f"quotas: [{{provider: acme, max_accelerators: {rng.choice([1, 2, 4])}}}]")
    tokens = demand if demand is not None else rng.choice([500, 5000, 40000])
    lines += [
        "workloads:",
        "  - kind: inference",
        "    name: chat",
        "    model: llama-3-8b",
        f"    demand: {{tokens_per_s: {tokens}}}",
        "    prompt_tokens: 500",
        "    output_tokens: 200",
        "    ttft_slo: 1 s",
        "    tpot_slo: 50 ms",
        f"    peak_to_average: {rng.choice([1, 1.5, 2])}",
    ]
    return "\n".join(lines) + "\n"


def _solve_to(prob: Path, cat: Path, out: Path) -> bool:
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--out", str(out)]
    return _invoke([*args, "--time-limit", "30"]).exit_code == 0


def _state(folder: Path) -> dict[str, bytes]:
    """A folder's files and their bytes, plans and reports without their timings, the
    folder's own path (a re-solved plan records where its problem was written) as
    ``<folder>``."""
    out = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        data = path.read_bytes().replace(str(folder.resolve()).encode(), b"<folder>")
        if path.suffix == ".json" and path.name != "procure-export.json":
            data = _without_timings(data)
        out[path.name] = data
    return out


def _without_timings(data: bytes) -> bytes:
    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if not k.endswith("_seconds")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    try:
        return json.dumps(strip(json.loads(data)), sort_keys=True).encode()
    except ValueError:
        return data


class _Interrupt:
    """Count the files staged and renamed by an output, and raise a signal at the k-th
    staged file (after it is written) or before the k-th rename: the two phases of a
    publication (solver.outputs.files)."""

    def __init__(self, phase: str | None = None, at: int = 0, signame: str = "SIGINT") -> None:
        self.phase, self.at, self.sig = phase, at, getattr(signal, signame)
        self.writes = self.renames = 0

    def __enter__(self):
        from solver.outputs import files

        self._files, self._write, self._replace = files, files._write, os.replace

        def write(fd, content):
            self.writes += 1
            self._write(fd, content)
            if self.phase == "staging" and self.writes == self.at:
                signal.raise_signal(self.sig)

        def replace(src, dst):
            self.renames += 1
            if self.phase == "publishing" and self.renames == self.at:
                signal.raise_signal(self.sig)
            return self._replace(src, dst)

        files._write, os.replace = write, replace
        return self

    def __exit__(self, *exc) -> None:
        self._files._write, os.replace = self._write, self._replace


def _output_command(rng: random.Random, work: Path, cat: Path, prob: Path, plan: Path):
    """(kind, make_args(folder, variant)): a multi-file output command writing into a
    folder; variant 0 is the run under test, 1 an earlier one of another plan or price."""
    kind = rng.choice(["export-csv", "export-combined", "export-xlsx", "export-focus"] * 2
                      + ["resolve", "calibrate"])  # fmt: skip
    other = work / "other.json"
    if kind.startswith("export"):
        prob2 = work / "p2.yaml"
        prob2.write_text(_problem_34(rng))
        if not _solve_to(prob2, cat, other):
            other = plan
        fmt = {"export-csv": [], "export-combined": ["--combined"]}.get(
            kind, ["--format", kind.split("-")[1]]
        )
        return kind, lambda folder, variant: [
            "export",
            str(other if variant else plan),
            "--out",
            str(folder),
            *fmt,
        ]
    if kind == "resolve":
        prices = [work / "prices0.csv", work / "prices1.csv"]
        for path, usd in zip(prices, (3.9, 4.4), strict=True):
            path.write_text(
                f"provider,region,offering,mode,price,date\nbeta,us-east,b1,on_demand,{usd},"
                "2026-12-01\n"
            )
        return kind, lambda folder, variant: [
            "resolve", str(prob), "--baseline", str(plan), "--prices", str(prices[variant]),
            "--catalog", str(cat), "--format", "json", "--out", str(folder / "report.json"),
            "--plan-out", str(folder / "plan.json"), "--problem-out", str(folder / "p.yaml"),
        ]  # fmt: skip
    return kind, lambda folder, variant: [
        "calibrate", str(MEASUREMENTS), "--out", str(folder),
        *(["--tpot-slo-ms", "50"] if variant else []),
    ]  # fmt: skip


def _outputs_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``outputs``: see the module docstring for the oracle."""
    cat = _catalog_34(work)
    prob = work / "p.yaml"
    prob.write_text(_problem_34(rng))
    plan = work / "plan.json"
    if not _solve_to(prob, cat, plan):
        return
    if rng.random() < 0.2:
        _input_as_output_case(rng, work, cat, prob, plan, tally)
        return
    kind, make = _output_command(rng, work, cat, prob, plan)
    folder, reference = work / "out", work / "reference"
    for target in (folder, reference):  # an earlier output of another plan in each
        target.mkdir()
        if rng.random() < 0.8:
            _invoke(make(target, 1))
    old = _state(folder)
    with _Interrupt() as counted:
        first = _invoke(make(reference, 0))
    if first.exit_code != 0:
        _check_common(tally, "outputs", first, f"{kind}: {first.output[:300]}")
        return
    new = _state(reference)
    phase = rng.choice(["staging", "publishing", None])
    at = rng.randint(1, max(1, counted.renames if phase == "publishing" else counted.writes))
    signame = rng.choice(SIGNALS)
    tally.traps[f"outputs:{kind}:{phase or 'whole'}"] += 1
    with _Interrupt(phase, at, signame) as seen:
        result = _invoke(make(folder, 0))
    what = (
        f"{kind} {phase} at {at} by {signame} (writes, renames: {counted.writes}, "
        f"{counted.renames} uninterrupted, {seen.writes}, {seen.renames} here; SIGINT "
        f"handler {signal.getsignal(signal.SIGINT)}): {make(folder, 0)}"
    )
    tally.exits[result.exit_code] += 1
    if "Traceback" in result.output or "internal error" in result.output:
        tally.tracebacks += 1
        tally.fail("outputs", "traceback/bug", what + result.output[-400:])
        return
    got = _state(folder)
    code = 128 + int(getattr(signal, signame)) if phase else 0
    said_nothing = "nothing was written" in result.output
    said_all = "every output was written" in result.output
    if any(name.startswith(".") for name in got):
        tally.lost_or_half_written += 1
        tally.fail("outputs", f"temporary files left: {sorted(got)}", what)
    elif result.exit_code != code:
        tally.fail("outputs", f"exit {result.exit_code}, expected {code}", what + result.output)
    elif phase == "staging" and not (got == old and said_nothing):
        tally.lost_or_half_written += 1
        tally.fail("outputs", "staging interrupted: not the old set, or not said", what)
    elif phase != "staging" and got != new:
        tally.lost_or_half_written += 1
        tally.fail("outputs", f"not the new set: {sorted(got)} vs {sorted(new)}", what)
    elif phase == "publishing" and not said_all:
        tally.silent_wrong += 1
        tally.fail("outputs", "publishing interrupted: the message does not say so", what)


def _input_as_output_case(rng, work: Path, cat: Path, prob: Path, plan: Path, tally) -> None:
    """An output path naming one of the command's inputs: refused, the input unchanged."""
    link = work / "alias"
    how = rng.choice(["same", "dotted", "symlink", "hardlink"])
    victim = rng.choice(["problem", "plan", "prices"])
    target = {"problem": prob, "plan": plan, "prices": work / "prices.csv"}[victim]
    if victim == "prices":
        target.write_text(
            "provider,region,offering,mode,price,date\nbeta,us-east,b1,on_demand,4.0,2026-12-01\n"
        )
    alias = {
        "same": target,
        "dotted": target.parent / "sub" / ".." / target.name,
        "symlink": link,
        "hardlink": link,
    }[how]
    (work / "sub").mkdir(exist_ok=True)
    if how == "symlink":
        link.symlink_to(target)
    elif how == "hardlink":
        os.link(target, link)
    before = target.read_bytes()
    if victim == "problem":
        args = rng.choice([["solve", str(prob)], ["sensitivity", str(prob), "--break-even", "0"]])
        args += ["--catalog", str(cat), "--out", str(alias)]
    elif victim == "plan":
        args = rng.choice([["diff", str(plan), str(plan), "--out", str(alias)],
                           ["resolve", str(prob), "--baseline", str(plan), "--prices",
                            str(work / "prices.csv"), "--plan-out", str(alias)]])  # fmt: skip
        (work / "prices.csv").write_text(
            "provider,region,offering,mode,price,date\nbeta,us-east,b1,on_demand,4.0,2026-12-01\n"
        )
    else:
        args = ["resolve", str(prob), "--baseline", str(plan), "--prices", str(alias)]
        args += ["--out", str(alias)] if how != "same" else ["--out", str(target)]
    if "--force" not in args and how == "symlink":
        args.append("--force")  # a link is refused anyway; --force must not open the way
    tally.traps[f"outputs:input-as-output:{victim}:{how}"] += 1
    result = _invoke(args)
    what = f"{victim} via {how}: {args}"
    if not _check_common(tally, "outputs", result, what):
        return
    if result.exit_code != 2 or "this command reads" not in result.output:
        tally.silent_wrong += 1
        tally.fail("outputs", f"an output over an input not refused ({result.exit_code})", what)
    if target.read_bytes() != before:
        tally.lost_or_half_written += 1
        tally.fail("outputs", "an input was overwritten", what)


def _shift_period(doc: dict) -> bool:
    """Move $1,000 of the first two periods' totals from one to the other (sum kept)."""
    periods = list(doc["totals"]["by_period"])
    if len(periods) < 2:
        return False
    doc["totals"]["by_period"][periods[0]] -= 1000.0
    doc["totals"]["by_period"][periods[1]] += 1000.0
    return True


def _shift_line_periods(doc: dict) -> bool:
    """Move $1,000 of a line's cost between two periods, the totals moved with it."""
    for item in doc["line_items"]:
        split = item.get("cost_by_period_usd") or {}
        if len(split) >= 2:
            a, b = list(split)[:2]
            split[a] -= 1000.0
            split[b] += 1000.0
            doc["totals"]["by_period"][a] -= 1000.0
            doc["totals"]["by_period"][b] += 1000.0
            return True
    return False


def _first(doc: dict, test) -> dict | None:
    return next((it for it in doc["line_items"] if test(it)), None)


def _edit_item(test, **change):
    def edit(doc: dict) -> bool:
        item = _first(doc, test)
        if item is None:
            return False
        item.update({k: v(item) if callable(v) else v for k, v in change.items()})
        return True

    return edit


def _on_doc(fn):
    def edit(doc: dict) -> bool:
        fn(doc)
        return True

    return edit


#: (name, edit of the plan's JSON returning whether it applied, whether it is a control)
PLANFILE_EDITS = [
    ("instance type", _edit_item(lambda i: i["instance_type"], instance_type="h8"), False),
    ("accelerators x8", _edit_item(lambda i: i["units"] > 0,
                                   accelerators=lambda i: i["accelerators"] * 8), False),
    ("workload renamed", _edit_item(lambda i: i["workload"], workload="batch"), False),
    ("block renamed", _edit_item(lambda i: i["block"], block="night"), False),
    ("residual +1000", _edit_item(lambda i: i["item"] == "purchase",
                                  residual_value_usd=lambda i: i["residual_value_usd"] + 1000),
     False),
    ("problem name", _on_doc(lambda d: d.update(problem="another")), False),
    ("start date", _on_doc(lambda d: d.update(start_date="2030-05-01")), False),
    ("provider total", _on_doc(lambda d: d["totals"]["by_provider"].update(
        {k: v + 1.0 for k, v in d["totals"]["by_provider"].items()})), False),
    ("period totals shifted", _shift_period, False),
    ("line periods shifted", _shift_line_periods, False),
    ("future key", _on_doc(lambda d: d.update(procure_version_99={"x": 1})), True),
    ("no cash flow", _on_doc(lambda d: d.update(cash_flow=[])), True),
    ("no deployments", _on_doc(lambda d: d.pop("deployments", None)), True),
]  # fmt: skip


def _planfile_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``planfile``: see the module docstring for the oracle."""
    cat = _catalog_34(work)
    prob = work / "p.yaml"
    text = _problem_34(rng)
    prob.write_text(text)
    plan = work / "plan.json"
    if not _solve_to(prob, cat, plan):
        return
    if rng.random() < 0.15:
        _diff_same_name_case(work, cat, plan, text, tally)
        return
    fmt = rng.choice([[], ["--combined"], ["--format", "xlsx"], ["--format", "focus"]])
    reference = work / "reference"
    if _invoke(["export", str(plan), "--out", str(reference), *fmt]).exit_code != 0:
        return
    expected = {k: v for k, v in _state(reference).items() if k != "procure-export.json"}
    doc = json.loads(plan.read_text())
    bad, args, control = work / "edited.json", [], False
    kind = rng.choice(["field"] * 6 + ["duplicate key", "problem changed", "problem removed",
                                       "other catalog"])  # fmt: skip
    if kind == "field":
        name, edit, control = rng.choice(PLANFILE_EDITS)
        if not edit(doc):
            return
        bad.write_text(json.dumps(doc))
    elif kind == "duplicate key":
        name = kind
        bad.write_text(plan.read_text().replace('"status": ', '"status": "optimal", "status": ', 1))
    elif kind in ("problem changed", "problem removed"):
        name, bad, control = kind, plan, kind == "problem removed"
        if control:
            prob.unlink()
        else:
            prob.write_text(text.replace("name: chat", "name: chat2"))
    else:
        name, bad = kind, plan
        other = write_catalog(work / "other-cat", [
            {**row, "instance_type": row["instance_type"] + "-v2"}
            for row in catalog_offerings()
            + [offering("b1", "h100-sxm", 1, 4.2, provider="beta"),
               offering("b8", "h100-sxm", 8, 32.0, r1=24.0, provider="beta", cap=8)]
        ], regions=[*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "beta"}])  # fmt: skip
        args = ["--catalog", str(other)]
    tally.traps[f"planfile:{name}"] += 1
    out = work / "orders"
    result = _invoke(["export", str(bad), "--out", str(out), *fmt, *args])
    what = f"{name}: {fmt} {args}"
    if not _check_common(tally, "planfile", result, what):
        return
    got = {k: v for k, v in _state(out).items() if k != "procure-export.json"}
    if result.exit_code == 0 and got != expected:
        tally.silent_wrong += 1
        tally.fail("planfile", "orders from an edited plan differ from the plan's", what)
    elif result.exit_code != 0 and control:
        tally.fail("planfile", f"a plan that holds was refused: {result.output[:300]}", what)
    elif result.exit_code != 0 and got:
        tally.lost_or_half_written += 1
        tally.fail("planfile", "files written by a refused export", what)


def _diff_same_name_case(work: Path, cat: Path, plan: Path, text: str, tally: Tally) -> None:
    """Two plans of different problems that share a name: the diff says so."""
    other = work / "p-other.yaml"  # the same name, another demand (500 -> 1500, ...)
    other.write_text(text.replace("tokens_per_s: ", "tokens_per_s: 1", 1))
    second = work / "plan-other.json"
    if not _solve_to(other, cat, second):
        return
    tally.traps["planfile:diff of different problems"] += 1
    result = _invoke(["diff", str(plan), str(second), "--format", "json"])
    if not _check_common(tally, "planfile", result, "diff") or result.exit_code != 0:
        return
    notes = json.loads(result.stdout)["notes"]
    if not any("different problems that share the name" in n for n in notes):
        tally.silent_wrong += 1
        tally.fail("planfile", "a diff of different problems does not say so", str(notes))


_MODELS: list[dict] = []


def _shape_of(row: dict) -> dict:
    shape = {k: row[k] for k in ("params_b", "layers", "hidden_size", "attention_heads",
                                 "kv_heads", "head_dim", "vocab_size")}  # fmt: skip
    shape = {k: float(v) if k.endswith("_b") else int(v) for k, v in shape.items()}
    if row["experts"] > row["experts_active"]:
        shape.update(
            active_params_b=float(row["active_params_b"]),
            experts=int(row["experts"]),
            experts_active=int(row["experts_active"]),
        )
    if row["kv_latent_dim"]:
        shape["kv_latent_dim"] = int(row["kv_latent_dim"])
    return shape


#: (trap, change to the inline shape returning whether it applies, the field named)
SHAPE_TRAPS = [
    ("params /10", lambda s: s.update(params_b=round(s["params_b"] / 10, 4)) or True, "params_b"),
    ("params x10", lambda s: s.update(params_b=s["params_b"] * 10) or True, "params_b"),
    ("active /10", lambda s: "active_params_b" in s
     and (s.update(active_params_b=round(s["active_params_b"] / 10, 4)) or True),
     "active_params_b"),
    ("kv heads", lambda s: s["attention_heads"] % (s["kv_heads"] + 1) != 0
     and (s.update(kv_heads=s["kv_heads"] + 1) or True), "kv_heads"),
    ("heads vs width", lambda s: s["hidden_size"] % (s["attention_heads"] + 3) != 0
     and (s.pop("head_dim") and s.update(attention_heads=s["attention_heads"] + 3,
                                         kv_heads=1) or True), "attention_heads"),
]  # fmt: skip


def _shapes_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``shapes``: see the module docstring for the oracle."""
    if not _MODELS:
        from solver.inputs.catalog import load_catalog

        _MODELS.extend(load_catalog(None).models.to_dict("records"))
    cat = _catalog_34(work)
    quota = rng.random() < 0.35
    trap, field_named = None, None
    if quota:
        model = "llama-3-8b"
        region = rng.choice(["us-east", "us-eats", "us-\u0435ast", "ｕｓ-east", "eu-north"])
        provider = rng.choice(["acme", "beta"])
        known = region == "us-east" or (region == "eu-north" and provider == "acme")
        if not known:
            trap, field_named = f"quota region {region!r} of {provider}", "quotas[0].region"
        extra = f'quotas: [{{provider: {provider}, region: "{region}", max_accelerators: 4}}]\n'
        kind = trap or "quota control"
    else:
        small = [m for m in _MODELS if m["params_b"] <= 10]
        row = rng.choice(_MODELS if rng.random() < 0.6 else small)
        shape, extra = _shape_of(row), ""
        name, change, named = rng.choice(SHAPE_TRAPS)
        if rng.random() < 0.6 and change(shape):
            trap, field_named = f"{name} ({row['model_id']})", named
        elif row["params_b"] > 10:
            return  # controls only where a solve is quick
        else:
            if rng.random() < 0.5:
                shape.pop("vocab_size")  # a shape without its vocabulary is still checked
            trap = None
        model = json.dumps(shape)
        kind = trap or f"shape control ({row['model_id']})"
    tally.traps[f"shapes:{kind.split(' (')[0]}"] += 1
    text = _problem_34(rng, demand=500, quota=False)
    text = text.replace("model: llama-3-8b", f"model: {model}")
    prob = work / "p.yaml"
    prob.write_text(extra + text, encoding="utf-8")
    args = ["solve", str(prob), "--catalog", str(cat), "--format", "json", "--time-limit", "30"]
    result = _invoke(args)
    what = f"{kind}: {extra}{model}"
    if not _check_common(tally, "shapes", result, what):
        return
    if trap is not None and not (result.exit_code == 2 and field_named in result.output):
        tally.silent_wrong += 1
        tally.fail("shapes", f"a trap not refused by name (exit {result.exit_code})", what)
    elif trap is None and result.exit_code == 2:
        tally.fail("shapes", f"a control refused: {result.output[:300]}", what)


ISSUE_34_FAMILIES = {"outputs": _outputs_case, "planfile": _planfile_case, "shapes": _shapes_case}


# --------------------------------------------------------------------------- semantic
#: the tiny catalog's server life (tests/conftest.py TINY_SERVERS, 5 years) and the
#: reserved_1y term, months
_LIFE_MONTHS, _TERM_1Y_MONTHS = 60.0, 12.0


def _semantic_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``semantic``: see the module docstring for the oracle."""
    months = rng.choice([6, 12, 13, 24, 36, 61, 72])
    modes = ["on_demand"] + rng.sample(["reserved_1y", "owned", "spot"], rng.randint(0, 2))
    tpot = rng.choice(["50 ms", "900 ms", "1 s", "1.5 s", "3 s"])
    text = _problem_34(rng, demand=rng.choice([500, 5000]), quota=False)
    head, _, body = text.partition("workloads:")
    lines = [ln for ln in head.splitlines() if not ln.startswith(("horizon_months", "periods",
             "  - {name: p", "modes", "residual_value"))]  # fmt: skip
    lines += [f"horizon_months: {months}", f"modes: [{', '.join(modes)}]"]
    if "owned" in modes:
        lines.append("residual_value: straight_line")
    text = "\n".join(lines) + "\nworkloads:" + body.replace("tpot_slo: 50 ms", f"tpot_slo: {tpot}")
    prob = work / "p.yaml"
    prob.write_text(text)
    cat = _catalog_34(work)
    result = _invoke(["solve", str(prob), "--catalog", str(cat), "--format", "json",
                      "--time-limit", "60"])  # fmt: skip
    expect_modes = {m for m, span in (("reserved_1y", _TERM_1Y_MONTHS), ("owned", _LIFE_MONTHS))
                    if m in modes and months > span}  # fmt: skip
    tpot_s = float(tpot.split()[0]) / (1000.0 if tpot.endswith("ms") else 1.0)
    kind = f"{months} months, {'+'.join(sorted(expect_modes)) or 'no restriction'}"
    tally.traps[f"semantic:{'restricted' if expect_modes else 'control'}"] += 1
    tally.traps[f"semantic:tpot {'implausible' if tpot_s > 1 else 'control'}"] += 1
    if not _check_common(tally, "semantic", result, f"{kind}: {text}") or result.exit_code:
        return
    plan = json.loads(result.stdout)
    warned = [w for w in plan["warnings"] if w["kind"] == "period_structure"]
    if warned:  # no period budget here: the solve splits the period instead of warning
        tally.silent_wrong += 1
        tally.fail("semantic", f"period warnings {[w['detail'][:120] for w in warned]}", text)
    split = (plan.get("compile_report") or {}).get("split_periods") or {}
    cuts = [float(c) for c in split.get("cuts_months", [])]
    reasons = split.get("reasons", {})
    if cuts and (
        not expect_modes
        or any(not 0 < c < months for c in cuts)
        or any(not reasons.get(f"{c:g}") for c in cuts)
    ):
        tally.silent_wrong += 1
        tally.fail("semantic", f"split at {cuts} ({reasons}) in {months} months", text)
    slo = [w for w in plan["warnings"] if w["field"].endswith(".tpot_slo")]
    if bool(slo) != (tpot_s > 1.0):
        tally.silent_wrong += 1
        tally.fail("semantic", f"tpot_slo {tpot}: warnings {slo}", text)


# --------------------------------------------------------------------------- prices
_PRICE_TRAPS = ("old date", "future date", "currency", "lost field", "duplicate", "zone")


def _price_file(rng: random.Random, work: Path, trap: str | None) -> tuple[Path, dict]:
    """A price file of one of the three kinds, with ``trap`` or clean; (path, read kwargs)."""
    from datetime import date, timedelta

    day = (date.today() - timedelta(days=rng.randint(0, 3000))).isoformat()
    if trap in ("duplicate",) or (trap is None and rng.random() < 0.3):
        h1 = offering("h1", "h100-sxm", 1, 4.0)
        rows = [h1, dict(h1, on_demand_usd_per_hour=3.0 if trap else 4.0)]
        folder = write_catalog(work / f"off{rng.randrange(10**9)}", rows)
        return folder / "offerings.csv", {}
    if trap == "zone" or (trap is None and rng.random() < 0.4):
        head = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
                "SpotPrice,Region,AvailabilityZone")  # fmt: skip
        zones = ["use1-az1", "use1-az1" if trap == "zone" else "use1-az2"]
        prices = [55.04, round(rng.uniform(40, 99), 2)]
        rows = [f"p5.48xlarge,H100,8.0,192.0,2048.0,,{p},20.0,us-east-1,{z}"
                for p, z in zip(prices, zones, strict=True)]  # fmt: skip
        path = work / f"vms{rng.randrange(10**9)}.csv"
        path.write_text(head + "\n" + "\n".join(rows) + "\n")
        return path, {"provider": "aws", "price_date": day}
    if trap == "old date":
        day = f"{rng.randint(1900, 2005)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    elif trap == "future date":
        day = (date.today() + timedelta(days=rng.randint(93, 40 * 365))).isoformat()
    header = "provider,region,offering,mode,price,date"
    row = f"acme,us-east,h1,on_demand,{rng.uniform(1, 9):.2f},{day}"
    if trap == "currency" or (trap is None and rng.random() < 0.3):
        header += ",currency"
        row += "," + (rng.choice(["EUR", "GBP", "JPY", "eur"]) if trap else rng.choice(["USD", ""]))
    if trap == "lost field":
        cells = row.split(",")
        del cells[rng.randrange(len(cells))]
        row = ",".join(cells)
    path = work / f"prices{rng.randrange(10**9)}.csv"
    path.write_text(header + "\n" + row + "\n")
    return path, {}


def _prices_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``prices``: see the module docstring for the oracle."""
    from solver.errors import ProcureError
    from solver.inputs.prices import read_price_update

    trap = rng.choice(_PRICE_TRAPS) if rng.random() < 0.7 else None
    path, kwargs = _price_file(rng, work, trap)
    tally.traps[f"prices:{trap or 'control'}"] += 1
    what = f"{trap or 'control'}: {path.name}: " + path.read_text()[:600]
    tally.exits[0] += 1
    try:
        update = read_price_update(path, check_dates=True, **kwargs)
    except ProcureError as exc:
        if trap is None:
            tally.fail("prices", f"a control refused: {exc.render()[:300]}", what)
        elif exc.file != str(path) or not exc.field or not exc.fix:
            tally.fail("prices", f"a refusal that names no file or field: {exc.render()}", what)
        return
    except Exception as exc:  # noqa: BLE001 (the oracle counts every escape)
        tally.tracebacks += 1
        tally.fail("prices", f"traceback: {exc!r}"[:300], what)
        return
    if trap is not None:
        tally.silent_wrong += 1
        tally.fail("prices", f"a trap read: {update.prices['price_usd'].tolist()}", what)


# --------------------------------------------------------------------------- limits
#: what a run may take past its --time-limit (x 1.2, the issue's bound) in absolute
#: seconds on top: the in-process runner (typer's parsing, CliRunner's capture) and the
#: unwinding after the alarm, 0.3-0.5 s measured at a load average of 10 on 2 cores
_DEADLINE_SLACK_S = 0.5
_WARM: list[bool] = []


def _runqueue_wait_s() -> float:
    """Seconds this thread has spent runnable but waiting for a CPU (Linux schedstat's
    second field, ``/proc/thread-self/schedstat``; 0 where it is not available)."""
    try:
        with open("/proc/thread-self/schedstat") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


@contextlib.contextmanager
def _clock(tally: Tally, bound_s: float):
    """Time a run against ``bound_s``; yields a list that gets (wall, wall less the time
    spent waiting for a CPU). A run counts as past its deadline when the second is over the
    bound: the time it ran, or blocked on its own (a socket, a lock), not the time the
    machine's scheduler gave others (on a shared 2-core machine at load 8, a nice 19 fuzz
    run got about 6% of a core: a 0.3 s solve took 4.9 s of wall clock, all of it waiting
    for a CPU). A run past the bound on the wall clock only is counted as ``starved``."""
    got: list[float] = []
    started, waited = time.perf_counter(), _runqueue_wait_s()
    yield got
    wall = time.perf_counter() - started
    own = wall - (_runqueue_wait_s() - waited)
    got += [wall, own]
    if wall > bound_s and own <= bound_s:
        tally.starved += 1


def _peer(greeting: bytes | None):
    """A localhost listener that accepts and sends ``greeting`` (None: nothing)."""
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    held: list = []

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            held.append(conn)
            if greeting is not None:
                conn.sendall(greeting)

    threading.Thread(target=serve, daemon=True).start()
    return sock, held, f"tcp://127.0.0.1:{sock.getsockname()[1]}"


def _limits_case(rng: random.Random, work: Path, tally: Tally) -> None:
    """Family ``limits``: see the module docstring for the oracle."""
    case = rng.choice(["deadline", "deadline", "deadline", "peer", "silent", "workers"])
    tally.traps[f"limits:{case}"] += 1
    prob = work / "p.yaml"
    if case == "deadline":
        limit = rng.choice([0.05, 0.2, 0.5, 1.0, 3.0])
        text = random_problem(rng)
        prob.write_text(text)
        cat = _catalog_34(work)
        if not _WARM:  # the first command of a process imports the solver: not its time
            _invoke(["solve", str(prob), "--catalog", str(cat), "--time-limit", "30"])
            _WARM.append(True)
        with _clock(tally, 1.2 * limit + _DEADLINE_SLACK_S) as clock:
            result = _invoke(["solve", str(prob), "--catalog", str(cat), "--format", "json",
                              "--time-limit", str(limit)])  # fmt: skip
        wall, own = clock
        what = f"--time-limit {limit}: wall {wall:.2f} s ({own:.2f} s not waiting): {text}"
        if not _check_common(tally, "limits", result, what):
            return
        if own > 1.2 * limit + _DEADLINE_SLACK_S:
            tally.past_deadline += 1
            tally.fail("limits", f"past the deadline: {own:.2f} s for {limit} s", what)
        if result.exit_code == 4 and "time limit" not in result.output:
            tally.fail("limits", "a stop at the limit that does not say so", what)
        return
    if case == "silent":
        import dask.distributed  # noqa: F401  (its first import is not the probe's time)

        from solver.analyses.runner import dask_client
        from solver.errors import ProcureError

        sock, held, address = _peer(None)
        with _clock(tally, 1.2 * 0.3 + _DEADLINE_SLACK_S) as clock:
            try:
                dask_client(address, timeout_s=0.3)
                tally.silent_wrong += 1
                tally.fail("limits", "a silent peer taken for a scheduler", address)
            except ProcureError as exc:
                if "sent nothing" not in exc.message:
                    tally.fail("limits", f"silent peer: {exc.message}", address)
            finally:
                for c in held:
                    c.close()
                sock.close()
        tally.exits[2] += 1
        if clock[1] > 1.2 * 0.3 + _DEADLINE_SLACK_S:
            tally.past_deadline += 1
            tally.fail("limits", "a silent peer waited past its timeout", address)
        return
    text = _problem_34(rng, demand=500, quota=False)
    prob.write_text(text)
    cat = _catalog_34(work)
    args = ["sensitivity", str(prob), "--catalog", str(cat), "-q", "--break-even", "1"]
    if case == "peer":
        greeting = rng.choice([b"HTTP/1.1 400 Bad Request\r\n\r\n", b"SSH-2.0-OpenSSH_9.6\r\n",
                               bytes(rng.randrange(256) for _ in range(64)), b""])  # fmt: skip
        if len(greeting) >= 8 and int.from_bytes(greeting[:8], "little") <= 1 << 20:
            greeting = b"\xff" * 8 + greeting  # a small length would wait for the Dask client
        sock, held, address = _peer(greeting or None)
        if not greeting:  # nothing listening: a closed port
            sock.close()
        try:
            result = _invoke([*args, "--scheduler", address])
        finally:
            for c in held:
                c.close()
            sock.close()
        what = f"peer {greeting[:20]!r} at {address}"
        if _check_common(tally, "limits", result, what) and (
            result.exit_code != 2 or "--scheduler" not in result.output
        ):
            tally.silent_wrong += 1
            tally.fail("limits", f"a non-Dask peer: exit {result.exit_code}", what)
        return
    from solver.analyses.runner import capped_workers

    cpus = capped_workers(1_000_000)[0]
    workers = rng.choice([1, cpus, cpus + 1, 10**6])
    result = _invoke([*args, "--workers", str(workers)])
    what = f"--workers {workers} ({cpus} CPUs)"
    if not _check_common(tally, "limits", result, what):
        return
    noted = "more than this machine's" in result.output
    if noted != (workers > cpus):
        tally.silent_wrong += 1
        tally.fail("limits", f"workers {workers}: note {noted}", what)


ISSUE_34_FAMILIES.update(
    {"semantic": _semantic_case, "prices": _prices_case, "limits": _limits_case}
)


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
