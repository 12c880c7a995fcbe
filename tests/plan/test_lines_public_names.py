"""``solver.plan.lines`` is a package (items, digests, schema, summary, extract): every
public name the single module had is still importable from ``solver.plan.lines``, and the
plan's classes keep their JSON (a class moved is not a field renamed)."""

from __future__ import annotations

import importlib

#: the public names of the last single-module solver/plan/lines.py
PUBLIC = [
    "Binding", "CashFlowMonth", "Check", "CostLine", "CurrencyView", "Deployment",
    "FrameRow", "LATER_FIELDS", "LineItem", "Plan", "PlanInputs", "Totals", "binding_rows",
    "deployments_of", "extract_plan", "input_digests", "owned_utilisation", "problem_json",
    "savings_plan_offering", "served_fraction", "totals_of",
]  # fmt: skip


def test_every_old_public_name_is_importable_from_solver_plan_lines() -> None:
    lines = importlib.import_module("solver.plan.lines")
    missing = [n for n in PUBLIC if not hasattr(lines, n)]
    assert not missing, f"solver.plan.lines no longer exposes {missing}"
    assert sorted(lines.__all__) == sorted(PUBLIC)


def test_solver_plan_and_solver_plan_lines_give_the_same_classes() -> None:
    import solver.plan as plan
    import solver.plan.lines as lines

    for name in plan.__all__:
        if hasattr(lines, name):
            assert getattr(plan, name) is getattr(lines, name), name


def test_a_plan_round_trips_through_its_json_field_for_field() -> None:
    # the schema's field names and order are the JSON contract: a plan written and read
    # back is equal, and its first keys are the ones the contract names first
    from solver.plan.lines import Plan, Totals

    totals = Totals(by_period={"y1": 1.0}, by_provider={}, by_mode={}, by_workload={},
                    co2e_t_by_workload={})  # fmt: skip
    plan = Plan(problem="p", status="optimal", objective=1.0, objective_kind="min_cost",
                total_cost_usd=1.0, total_co2e_t=0.0, gap=0.0, solver="highspy",
                solve_seconds=0.0, line_items=[], totals=totals)  # fmt: skip
    text = plan.model_dump_json()
    assert Plan.model_validate_json(text) == plan
    assert list(plan.model_dump())[:6] == [
        "problem", "status", "objective", "objective_kind", "total_cost_usd", "total_co2e_t",
    ]  # fmt: skip
