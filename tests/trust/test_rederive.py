"""Plan files re-derived from their decisions (solver/trust/rederive.py) and their solve
record checked (solver/trust/solve_record.py), through the Python API: a solved plan
re-derives with no error; each class of edited field is named."""

from __future__ import annotations

import pytest

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.api import solve
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.inputs.yamlio import load_yaml
from solver.trust.rederive import LINE_FIELDS, rederived_errors
from solver.trust.solve_record import OPTIMAL_GAP_MAX, expected_objective, solve_record_errors

# One H100 at $4/h on demand or $1.50/h reserved for a year (worked in
# tests/hostile/test_planfile.py): the reservation, $13,140, owes $6,624 after the horizon.
PROBLEM = (
    "name: rederive\nhorizon_months: 6\nstart: 2027-01\n"
    "periods: [{name: a, months: 3}, {name: b, months: 3}]\n"
    "modes: [on_demand, reserved_1y]\nworkloads:\n" + CHAT_WORKLOAD
)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rederive") / "cat"
    catalog = load_catalog(write_catalog(folder, [offering("h1", "h100-sxm", 1, 4.0, r1=1.5)]))
    prob = parse_problem(load_yaml(PROBLEM, file="p.yaml"), file="p.yaml")
    plan = solve(prob, catalog)
    assert plan.total_cost_usd == pytest.approx(13_140.0)
    return plan, prob, catalog


def _fields(errors) -> list[str]:
    return [e.field for e in errors]


def test_a_solved_plan_re_derives_field_for_field(solved):
    plan, prob, catalog = solved
    assert rederived_errors(plan, prob, catalog) == []


def _line(plan, k: int, **update):
    items = list(plan.line_items)
    items[k] = items[k].model_copy(update=update)
    return plan.model_copy(update={"line_items": items})


@pytest.mark.parametrize(
    "k, update, field",
    [
        (0, {"liability_after_horizon_usd": 1.0}, "line_items[0].liability_after_horizon_usd"),
        (0, {"price_source": "a quote"}, "line_items[0].price_source"),
        (1, {"capacity_tokens_per_s": 1.0}, "line_items[1].capacity_tokens_per_s"),
        (1, {"tier": "hyperscaler"}, "line_items[1].tier"),
        # 2 units in use in b: the accelerators and capacity of 1 no longer follow
        (2, {"units": 2.0}, "line_items[2].accelerators"),
    ],
)
def test_an_edited_line_field_is_named(solved, k, update, field):
    plan, prob, catalog = solved
    assert plan.line_items[0].item == "reservation" and plan.line_items[1].item == "use"
    errors = rederived_errors(_line(plan, k, **update), prob, catalog)
    assert _fields(errors)[0] == field, errors


def test_a_line_of_no_option_is_named(solved):
    # tp_degree 8 on a one-accelerator instance: no option of the problem has that shape
    plan, prob, catalog = solved
    errors = rederived_errors(_line(plan, 1, tp_degree=8), prob, catalog)
    assert errors[0].field == "line_items[1]" and "tp_degree 8" in errors[0].message


def test_a_line_the_problem_gives_is_missed_when_gone(solved):
    # a reservation held at the start (2 months left) is a line of every plan of the
    # problem: a file without it is refused, the line named
    _, _, catalog = solved
    held = {"offering": "acme/us-east/h1", "mode": "reserved_1y", "units": 1}
    data = load_yaml(PROBLEM, file="p.yaml")
    data["existing_reservations"] = [{**held, "months_remaining": 2}]
    with_fleet = parse_problem(data, file="p.yaml")
    plan = solve(with_fleet, catalog)
    assert rederived_errors(plan, with_fleet, catalog) == []
    kept = [i for i in plan.line_items if i.item != "existing"]
    assert len(kept) < len(plan.line_items)
    errors = rederived_errors(plan.model_copy(update={"line_items": kept}), with_fleet, catalog)
    assert _fields(errors) == ["line_items"] and "no line for the existing" in errors[0].message


def test_cash_flow_and_cost_fields_are_re_derived(solved):
    plan, prob, catalog = solved
    months = list(plan.cash_flow)
    months[3] = months[3].model_copy(update={"period": "a"})  # 2027-04 is in period b
    errors = rederived_errors(plan.model_copy(update={"cash_flow": months}), prob, catalog)
    assert _fields(errors) == ["cash_flow[3].period"]
    errors = rederived_errors(plan.model_copy(update={"month_hours": "average_730"}), prob, catalog)
    assert _fields(errors) == ["month_hours"]
    errors = rederived_errors(plan.model_copy(update={"currency": "EUR"}), prob, catalog)
    assert _fields(errors) == ["currency"]


def test_the_line_fields_cover_what_exports_copy():
    # the orders and FOCUS rows copy these from a line item (solver/outputs/orders.py,
    # solver/plan/charges.py): each is re-derived
    copied = {"provider", "region", "instance_type", "accelerator", "accelerators", "hours"}
    copied |= {"cost_usd", "cost_by_period_usd", "residual_value_usd", "term_end_month"}
    copied |= {"price_date", "price_source", "price_confidence", "price_currency"}
    assert copied <= set(LINE_FIELDS)


def test_the_solve_record_holds_together(solved):
    plan, prob, _ = solved
    assert solve_record_errors(plan, prob) == []
    cases = [
        ({"gap": OPTIMAL_GAP_MAX * 2}, "gap"),
        ({"gap": -1e-3}, "gap"),
        ({"gap": float("inf")}, "gap"),
        ({"stopped_at_time_limit": True}, "status"),
        ({"objective": plan.objective + 100.0}, "objective"),
        ({"objective": None}, "objective"),
    ]
    for update, field in cases:
        assert _fields(solve_record_errors(plan.model_copy(update=update), prob)) == [field]
    # a feasible plan the time limit stopped may state any gap >= 0
    stopped = plan.model_copy(
        update={"status": "feasible", "gap": 0.2, "stopped_at_time_limit": True}
    )
    assert solve_record_errors(stopped, prob) == []


def test_the_expected_objective_of_each_kind(solved):
    # min_cost: total + switching (+ the egress the objective priced); min_npv: NPV +
    # switching (unchecked with egress: its discounted value is not on the plan);
    # cost_plus_carbon: total + price x tCO2e + switching; min_carbon: needs the model
    plan, prob, _ = solved
    p = plan.model_copy(
        update={"switching_penalty_usd": 10.0, "npv_usd": 12_000.0, "egress_in_objective_usd": None}
    )
    assert expected_objective(p, prob) == pytest.approx(13_150.0)
    with_egress = p.model_copy(update={"egress_in_objective_usd": 5.0})
    assert expected_objective(with_egress, prob) == pytest.approx(13_155.0)
    npv = prob.model_copy(update={"objective": "min_npv"})
    assert expected_objective(p, npv) == pytest.approx(12_010.0)
    assert expected_objective(with_egress, npv) is None
    carbon = prob.model_copy(
        update={"objective": "cost_plus_carbon", "carbon_price_usd_per_tco2e": 100.0}
    )
    assert expected_objective(p, carbon) == pytest.approx(13_150.0 + 100.0 * p.total_co2e_t)
    assert expected_objective(p, prob.model_copy(update={"objective": "min_carbon"})) is None
