"""How rented serving units may change over the day (``fleet``, issue 28): per load
block, autoscaled (the offerings deployed for a period run all day, units added at
peak) or flat; worked by hand on the tiny catalog, and on the shipped seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import H1, HOURS, L4, check, problem, serve
from solver.core import dominance
from solver.core.backends import SolveOptions
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.solve import optimise, solve_problem

ROOT = Path(__file__).resolve().parents[2]

# Two 12-hour blocks, factors 1.6 and 0.4 (mean 1): 10 req/s on average is 16 req/s at
# peak and 4 at base. An H100 instance (H1) serves 10 req/s for $4/h, an L4 2 for $1/h.
BLOCKS = {
    "blocks": [
        {"name": "peak", "hours_per_day": 12, "factor": 1.6},
        {"name": "base", "hours_per_day": 12, "factor": 0.4},
    ]
}
BLOCK_HOURS = HOURS / 2  # 365 h of each block in the one-month period


def _plan(tiny_catalog, fleet: str | None):
    extra = {} if fleet is None else {"fleet": fleet}
    p = problem([serve(10, **extra)], load_profile=BLOCKS)
    return solve_problem(p, tiny_catalog([H1, L4]))


def _units(plan) -> dict[tuple[str, str], float]:
    return {(i.instance_type, i.block): i.units for i in plan.line_items if i.item == "rent"}


def test_per_block_is_the_default_and_swaps_hardware(tiny_catalog):
    # Peak 16 req/s: 1 H1 + 3 L4 = $7/h (2 H1 or 8 L4 cost $8); base 4 req/s: 2 L4 = $2/h.
    # $7 x 365 + $2 x 365 = $3,285; the H100 runs at peak only.
    plan = _plan(tiny_catalog, None)
    assert plan.total_cost_usd == pytest.approx(7 * BLOCK_HOURS + 2 * BLOCK_HOURS)
    assert _units(plan) == {("h1", "peak"): 1, ("l4", "peak"): 3, ("l4", "base"): 2}
    h1 = next(d for d in plan.deployments if d.offering.endswith("/h1"))
    assert (h1.base_units, h1.peak_units) == (0, 1)


def test_autoscale_keeps_the_offerings_all_day(tiny_catalog):
    # Every deployed offering runs at least one unit in both blocks:
    #   {H1, L4}: peak 1 H1 + 3 L4 $7, base 1 H1 + 1 L4 $5 -> $12 per hour of a block pair;
    #   {H1}:     peak 2 H1 $8, base 1 H1 $4 -> $12;
    #   {L4}:     peak 8 L4 $8, base 2 L4 $2 -> $10, the cheapest.
    # $8 x 365 + $2 x 365 = $3,650 (+$365, +11% on the per-block plan).
    plan = _plan(tiny_catalog, "autoscale")
    assert plan.total_cost_usd == pytest.approx(8 * BLOCK_HOURS + 2 * BLOCK_HOURS)
    assert _units(plan) == {("l4", "peak"): 8, ("l4", "base"): 2}
    (d,) = plan.deployments
    assert (d.base_units, d.peak_units, d.units_by_block) == (2, 8, {"peak": 8, "base": 2})
    ok, detail = check(plan, "autoscaled fleet: a deployed offering runs all day")
    assert ok, detail


def test_flat_runs_the_peak_fleet_all_day(tiny_catalog):
    # The same units in both blocks, so the peak's cheapest mix all day: 1 H1 + 3 L4 at
    # $7/h x 730 h = $5,110.
    plan = _plan(tiny_catalog, "flat")
    assert plan.total_cost_usd == pytest.approx(7 * HOURS)
    assert _units(plan) == {
        ("h1", "peak"): 1,
        ("l4", "peak"): 3,
        ("h1", "base"): 1,
        ("l4", "base"): 3,
    }
    ok, detail = check(plan, "flat fleet: the same units in every block")
    assert ok, detail


def test_a_bad_fleet_names_the_field():
    data = {
        "name": "x",
        "horizon_months": 1,
        "workloads": [serve(10, fleet="steady")],
    }
    with pytest.raises(ProcureError) as err:
        parse_problem(data)
    assert "fleet" in str(err.value) + str(err.value.field or "")
    assert "autoscale" in str(err.value) + str(err.value.fix or "")


def _seed(fleet: str):
    p = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    workloads = [
        w.model_copy(update={"fleet": fleet}) if w.kind == "inference" else w for w in p.workloads
    ]
    return p.model_copy(update={"workloads": workloads})


def test_the_seed_autoscaled_changes_no_hardware_within_a_day():
    # Per block (the default) the seed serves 4 Seeweb H200 at peak and shoulder, 3 Seeweb
    # A100 at base and a Lambda GH200 at peak, for $313,143.42 (tests/golden; its training,
    # 5 MI325X-8x sized at the low end of the MFU band, is $142,525.82 of it). Autoscaled,
    # each period deploys one offering, Seeweb A100s (3 at base, 12 at shoulder, 14 at
    # peak), for $329,762.54: +$16,619 (+5.3%) for a fleet no one swaps twice a day (the
    # same serving cost as at training_margin: point, $301,257.38 - $284,638.26).
    plan = solve_problem(_seed("autoscale"), load_catalog())
    assert plan.verified
    assert plan.total_cost_usd == pytest.approx(329_762.54, abs=0.01)
    for d in plan.deployments:
        assert d.base_units >= 1, d
    assert len({(d.workload, d.period) for d in plan.deployments}) == len(plan.deployments)


def test_pruning_keeps_the_autoscaled_optimum():
    # Dominance leaves steady fleets' columns alone and asks one cheaper pool to hold a
    # pool's units (solver/core/dominance.py, prune_dominated_pools): the pruned and the
    # unpruned model of the autoscaled eu-70b problem have the same optimal objective.
    p = load_problem(ROOT / "problems" / "eu-70b-chat-carbon.yaml")
    workloads = [
        w.model_copy(update={"fleet": "autoscale"}) if w.kind == "inference" else w
        for w in p.workloads
    ]
    p = p.model_copy(update={"workloads": workloads})
    assert any(dominance.steady_fleet(w) for w in p.workloads)
    cat = load_catalog()
    costs = []
    for prune in (True, False):
        compiled = compile_problem(p, cat, prune_dominated=prune)
        solution = optimise(
            compiled, build_model(compiled), solver="highs", options=SolveOptions(relative_gap=1e-9)
        )
        costs.append(solution.result.objective)
    assert costs[0] == pytest.approx(costs[1], rel=1e-9)
