"""What every fuzz family shares: the tiny catalog, random problems and their
mutations, the tally of oracles, and the CLI run in this process (bench/fuzz/fuzz.py
describes the families and their oracles)."""

from __future__ import annotations

import collections
import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the CLI runs in this process: its deadline watchdog must not end the fuzz run
os.environ.setdefault("PROCURE_HARD_DEADLINE", "0")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from typer.testing import CliRunner  # noqa: E402

from conftest import TINY_REGIONS, offering, write_catalog  # noqa: E402, F401 - shared with the families
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
