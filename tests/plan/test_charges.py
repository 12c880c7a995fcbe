"""The charges table (solver/plan/charges.py, issue 26 item 1): one row per line item and
calendar month, checked against plans worked by hand on the calendar, not against the
formulas the table is built with."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
from core.test_ledger_owned_life import RENT, SITES, _problem

from conftest import offering, serve
from solver.inputs.problem import parse_problem
from solver.plan.charges import charges
from solver.solve import solve_problem

ALL_DAY = [{"name": "all-day", "hours_per_day": 24, "demand_factor": 1}]


def _months(table: pd.DataFrame) -> list[str]:
    return list(table["month_start"].dt.strftime("%Y-%m"))


def test_two_rented_units_are_charged_by_the_real_hours_of_each_month(tiny_catalog):
    # 20 requests/s for January and February 2027, one H100 serves 10 at $2.50/h on demand:
    # 2 units rented. By hand, on the calendar:
    #   January  (31 days = 744 h): 2 x $2.50 x 744 = $3,720.00, 2 x 744 = 1,488 unit-hours
    #   February (28 days = 672 h): 2 x $2.50 x 672 = $3,360.00, 2 x 672 = 1,344 unit-hours
    cat = tiny_catalog([offering("h1", "h100-sxm", 1, 2.5)])
    p = parse_problem(
        {
            "name": "two-units",
            "horizon_months": 2,
            "costs": "none",  # compute by hand
            "start": "2027-01",
            "periods": [{"name": "jan-feb", "months": 2}],
            "load_blocks": ALL_DAY,
            "workloads": [serve(20)],
        }
    )
    plan = solve_problem(p, cat)
    table = charges(plan, p, cat, date(2030, 6, 1))  # the problem's own start wins
    assert _months(table) == ["2027-01", "2027-02"]
    assert list(table["category"]) == ["rented", "rented"]
    assert list(table["usd"]) == pytest.approx([3_720.0, 3_360.0])
    assert list(table["billed_usd"]) == pytest.approx([3_720.0, 3_360.0])
    assert list(table["hours"]) == pytest.approx([1_488.0, 1_344.0])
    assert list(table["unit_price_usd"]) == pytest.approx([2.5, 2.5])
    assert list(table["charge_end"].dt.strftime("%Y-%m-%d")) == ["2027-02-01", "2027-03-01"]
    # the line item's own unit price, set once on it
    (rent,) = plan.line_items
    assert rent.unit_price_usd_per_hour == pytest.approx(2.5)


def test_a_bought_server_capex_hosting_and_residual_by_month(tiny_catalog):
    # Rent an 8x H100 unit at $10/h or buy the box: $200,000, no lead time, 60-month life,
    # hosting 10 kW x $50/kW-month = $500 a month, free electricity. 30 months from March
    # 2027 buy (tests/core/test_ledger_owned_life.py: the break-even is 29.41 months). By hand:
    #   March 2027: capex $200,000 (cash policy: all of it, billed in full) and hosting $500
    #     for 31 days = 744 server-hours;
    #   every month to August 2029: hosting $500 (a monthly fee, whatever its hours);
    #   August 2029, the last month: the residual value of the 30 months of life left,
    #     straight-line, $200,000 x 30 / 60 = $100,000, credited (counted, not billed).
    #   Total 200,000 + 30 x 500 - 100,000 = $115,000.
    cat = tiny_catalog([RENT], sites=SITES)
    p = _problem(30, start="2027-03", residual_value="straight_line")
    plan = solve_problem(p, cat)
    assert plan.total_cost_usd == pytest.approx(115_000.0)
    table = charges(plan, p, cat, date(2030, 6, 1))
    capex = table[table["category"] == "capex"]
    assert _months(capex) == ["2027-03"]
    assert list(capex["usd"]) == pytest.approx([200_000.0])
    assert list(capex["billed_usd"]) == pytest.approx([200_000.0])
    hosting = table[table["category"] == "owned_opex"]
    assert len(hosting) == 30 and _months(hosting)[-1] == "2029-08"
    assert hosting["usd"].tolist() == pytest.approx([500.0] * 30)
    assert hosting["hours"].iloc[0] == pytest.approx(744.0)
    credit = table[table["category"] == "residual_credit"]
    assert _months(credit) == ["2029-08"]
    assert list(credit["usd"]) == pytest.approx([-100_000.0])
    assert list(credit["billed_usd"]) == [0.0]
    assert table["usd"].sum() == pytest.approx(115_000.0)
    # the cash flow reads the same rows: the purchase in March, the credit in August 2029
    flow = {m.month: m for m in plan.cash_flow}
    assert flow["2027-03"].capex_usd == pytest.approx(200_000.0)
    assert flow["2027-03"].owned_opex_usd == pytest.approx(500.0)
    assert flow["2027-03"].billed_usd == pytest.approx(200_500.0)
    assert flow["2029-08"].capex_usd == pytest.approx(-100_000.0)
    assert flow["2029-08"].total_usd == pytest.approx(-99_500.0)
    assert flow["2029-08"].period == "m30"
