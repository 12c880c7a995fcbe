"""Golden files: every shipped problem gives the same plan, costs and refusals as recorded
in tests/golden/ (``procure solve --format json --reproducible``). A refactor must not
change them; a change meant to change plans rewrites them with
``python scripts/update_golden.py`` and says why in its commit.

The plan's dates are left out for problems without ``start`` (their default start is the
first of next month, so the labels move with the day the test runs); their costs,
line items, checks and cash-flow amounts are compared."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from solver.cli import app

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
PROBLEMS = sorted((ROOT / "problems").glob("*.yaml"))


def solve_shipped(problem: Path) -> tuple[int, str]:
    """(exit code, output) of ``procure solve <problem> --format json --reproducible``,
    run from the project root with the shipped catalog."""
    args = ["solve", f"problems/{problem.name}", "--format", "json", "--reproducible"]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def normalised(output: str, code: int):
    """The output as compared: the plan JSON with the problem's file name (not the
    clone's path) and without date labels when the problem has no start; a refusal's
    text as printed."""
    if code != 0:
        return output
    plan = json.loads(output)
    plan["inputs"]["problem_file"] = Path(plan["inputs"]["problem_file"]).name  # no clone path
    if plan["month_hours"] == "average_730":  # dated from the first of next month
        plan["start_date"] = None
        for month in plan["cash_flow"]:
            month["month"] = None
            month["new_commitments"] = len(month["new_commitments"])
    return plan


def _same(a, b, path: str = "") -> list[str]:
    """Differences between two JSON values (numbers to 1e-9 relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only in one" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += _same(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} entries"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _same(x, y, f"{path}[{i}]")
        ]
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) else [f"{path}: {a} vs {b}"]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_shipped_problem_matches_its_golden_file(problem, monkeypatch, request):
    monkeypatch.chdir(ROOT)
    golden = json.loads((GOLDEN / f"{problem.stem}.json").read_text())
    if problem.stem == "seed-2m-13b":  # solved once per run for every test that needs it
        code, output = request.getfixturevalue("seed_solved")
    else:
        code, output = solve_shipped(problem)
    assert code == golden["exit_code"], output
    differences = _same(normalised(output, code), golden["output"])
    assert not differences, "\n".join(differences[:20])


def test_every_shipped_problem_has_a_golden_file():
    assert {p.stem for p in PROBLEMS} == {g.stem for g in GOLDEN.glob("*.json")}
