"""The cost ledger worked by hand, with non-zero hosting (solver/core/ledger.py).

Periods of 3, 12 and 9 months (starts 0, 3, 15; horizon 24); 730 h per month.
"""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from solver.core import ledger
from solver.core.clock import Clock

AVERAGE = Clock()  # no start: 730-hour months

PERIODS = pd.DataFrame(
    {
        "name": ["q1", "y1", "rest"],
        "months": [3.0, 12.0, 9.0],
        "start_month": [0.0, 3.0, 15.0],
        "end_month": [3.0, 15.0, 24.0],
    }
)


def _server(policy: str) -> ledger.Charge:
    # $100,000 server, $500/month hosting, 60-month life, 1-month lead, bought in q1
    return ledger.purchase(
        capex_usd=100_000.0,
        hosting_usd_per_month=500.0,
        lifetime_months=60.0,
        lead_months=1.0,
        bought_in=0,
        periods=PERIODS,
        horizon_months=24.0,
        policy=policy,
    )


def test_purchase_amortised_counts_the_months_in_service():
    # delivered at month 1, in service 23 months: capex x 23/60 = $38,333.33; hosting
    # 500 x 23 = $11,500 split 2 / 12 / 9 months = $1,000 / $6,000 / $4,500.
    c = _server("amortised")
    assert c.in_service_months == pytest.approx(23.0)
    assert c.capex_fraction == pytest.approx(23 / 60)
    assert c.capex_usd == pytest.approx(38_333.333, abs=0.01)
    assert c.total_usd == pytest.approx(49_833.333, abs=0.01)
    assert c.by_period_usd[0] == pytest.approx(38_333.333 + 1_000.0, abs=0.01)
    assert c.by_period_usd[1] == pytest.approx(6_000.0)
    assert c.by_period_usd[2] == pytest.approx(4_500.0)
    assert sum(c.by_period_usd.values()) == pytest.approx(c.total_usd)


def test_purchase_cash_counts_all_the_capex_when_bought():
    # $100,000 + $11,500 hosting = $111,500; the capex in q1
    c = _server("cash")
    assert c.capex_fraction == 1.0
    assert c.total_usd == pytest.approx(111_500.0)
    assert c.by_period_usd[0] == pytest.approx(101_000.0)


def test_reservation_past_the_horizon_is_owed_in_the_last_period():
    # $2/h for 12 months from month 15: 12 x 730 x 2 = $17,520 in all; 9 months inside
    # the horizon ($13,140) and 3 after it ($4,380), all charged to the last period.
    c = ledger.reservation(
        price_usd_per_hour=2.0, term_months=12.0, begins_in=2, periods=PERIODS, clock=AVERAGE
    )
    assert c.total_usd == pytest.approx(17_520.0)
    assert c.beyond_horizon_usd == pytest.approx(4_380.0)
    assert c.by_period_usd == {2: pytest.approx(17_520.0)}


def test_existing_fleet_is_charged_for_what_remains():
    # a reservation with 5 months left at $2/h: 3 months in q1 ($4,380), 2 in y1 ($2,920)
    r = ledger.existing_reservation(
        price_usd_per_hour=2.0, months_remaining=5.0, periods=PERIODS, clock=AVERAGE
    )
    assert r.by_period_usd == {0: pytest.approx(4_380.0), 1: pytest.approx(2_920.0)}
    assert r.total_usd == pytest.approx(7_300.0)
    # a server owned at the start: $500/month for 3 / 12 / 9 months
    s = ledger.existing_server(hosting_usd_per_month=500.0, periods=PERIODS)
    assert s.by_period_usd == {0: 1_500.0, 1: 6_000.0, 2: 4_500.0}
    assert s.total_usd == pytest.approx(12_000.0)


def test_rent_and_price_columns():
    # 3 instances at $4.10/h for 730 h = $8,979
    assert ledger.rent_usd(4.10, 3, 730.0) == pytest.approx(8_979.0)
    assert ledger.PRICE_COLUMN["reserved_3y"] == "reserved_3y_usd_per_hour"


def test_amortised_reservation_counts_only_the_months_inside():
    # the same reservation under the amortised policy: 9 months inside = $13,140 charged;
    # the 3 months after the horizon ($4,380) are still reported as owed
    c = ledger.reservation(
        price_usd_per_hour=2.0,
        term_months=12.0,
        begins_in=2,
        periods=PERIODS,
        clock=AVERAGE,
        policy="amortised",
    )
    assert c.total_usd == pytest.approx(13_140.0)
    assert c.beyond_horizon_usd == pytest.approx(4_380.0)
    assert c.by_period_usd == {2: pytest.approx(13_140.0)}


def test_discount_factors_at_the_middle_of_each_period():
    # 10%/year: q1 middle 1.5 months -> 1.1 ** -0.125 = 0.98816; y1 middle 9 months ->
    # 1.1 ** -0.75 = 0.93101; rest middle 19.5 months -> 1.1 ** -1.625 = 0.85652
    f = ledger.discount_factors(PERIODS, 0.10)
    assert list(f) == pytest.approx([0.98816, 0.93101, 0.85652], abs=1e-5)
    assert list(ledger.discount_factors(PERIODS, None)) == [1.0, 1.0, 1.0]


def test_reservation_on_the_calendar_pays_the_real_hours():
    # The same periods from 2027-01-01. A 1-year reservation from month 3 (2027-04-01) at
    # $2/h runs to 2028-04-01: 366 days (it holds 2028-02-29) = 8,784 h = $17,568.
    # Inside y1 (2027-04-01 .. 2028-04-01) all of it; nothing past the horizon.
    clock = Clock(date(2027, 1, 1))
    c = ledger.reservation(
        price_usd_per_hour=2.0, term_months=12.0, begins_in=1, periods=PERIODS, clock=clock
    )
    assert c.total_usd == pytest.approx(17_568.0)
    assert c.by_period_usd[1] == pytest.approx(17_568.0)
    assert c.beyond_horizon_usd == pytest.approx(0.0)
    # From month 15 (2028-04-01) to 2029-04-01: 365 days = 8,760 h = $17,520, of which
    # 2028-04-01 .. 2029-01-01 (275 days = 6,600 h, $13,200) inside the 24-month horizon
    # and 2029-01-01 .. 2029-04-01 (90 days = 2,160 h, $4,320) after it.
    c = ledger.reservation(
        price_usd_per_hour=2.0, term_months=12.0, begins_in=2, periods=PERIODS, clock=clock
    )
    assert c.total_usd == pytest.approx(17_520.0)
    assert c.beyond_horizon_usd == pytest.approx(4_320.0)
    # an existing reservation with 2 months left from 2027-01-01: January 744 h and
    # February 672 h at $2/h = $2,832, all in q1
    r = ledger.existing_reservation(
        price_usd_per_hour=2.0, months_remaining=2.0, periods=PERIODS, clock=clock
    )
    assert r.by_period_usd == {0: pytest.approx(2_832.0)}
