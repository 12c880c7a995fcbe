"""The one way the workspace's pages write money, numbers, column names and durations
(solver/web/formats.py, issue 51 Build 5): no "-$0", no "None", no raw float, no
snake_case header; a totals row that sums the money columns."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pandas as pd
import pytest

from solver.web.analysis_pages import abatement_usd_per_t
from solver.web.formats import MISSING, duration, frame_table, header, money, number, price


@pytest.mark.parametrize(
    ("amount", "cents", "shown"),
    [
        (361_753.34, False, "$361,753"),  # the seed's total, whole dollars
        (-0.4, False, "$0"),  # rounds to zero: never "-$0"
        (-0.004, True, "$0.00"),
        (-1_250.5, False, "-$1,250"),  # round half to even: 1,250.5 -> 1,250
        (2.4899999999999998, True, "$2.49"),  # a float-noise price, to the cent
        (None, False, MISSING),  # never "None"
        (float("nan"), True, MISSING),
    ],
)
def test_money(amount, cents, shown):
    assert money(amount, cents=cents) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    # a price per hour keeps its source's digits (up to 4 decimals), at least the cents
    [
        (68.8, "$68.80"),
        (0.347, "$0.347"),
        (2.4899999999999998, "$2.49"),
        (0.00004, "$0.00"),
        (1234.5, "$1,234.50"),
        (None, MISSING),
    ],
)
def test_price(value, shown):
    assert price(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1464, "1,464"),
        (0.30000000000000004, "0.3"),
        (-0.001, "0"),
        (2.4651, "2.47"),
        (None, MISSING),
        (True, "yes"),
    ],  # fmt: skip
)
def test_number(value, shown):
    assert number(value) == shown


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("rented_usd", "rented (USD)"),
        ("owned_opex_usd", "owned, operating (USD)"),
        ("old_cost_usd", "old cost (USD)"),
        ("delta_usd", "change (USD)"),
        ("usd_per_hour", "price (USD per hour)"),
        ("on_demand_usd_per_gpu_hour", "on demand (USD per GPU-hour)"),
        ("base_units", "base units"),
        ("carbon_cap_tco2e", "carbon cap (t CO2e)"),
    ],
)
def test_header(name, words):
    assert header(name) == words


def test_a_table_has_words_for_headers_and_a_total_row():
    frame = pd.DataFrame(
        {"provider": ["lambda", "tensorwave"], "units": [5, 2], "cost_usd": [110_579.52, -0.2]}
    )
    html = frame_table(frame, money_columns=["cost_usd"], total="total")
    assert "<th>cost (USD)</th>" in html and "cost_usd" not in html
    # the total: 110,579.52 - 0.2 = 110,579.32, shown in whole dollars; -0.2 shown as $0
    assert '<tr class="total">' in html and "<td>$110,579</td>" in html
    assert "<td>$0</td>" in html and "-$0" not in html and "None" not in html


def test_abatement_worked_by_hand():
    # three points of a frontier (CO2e t, cost USD): (100, 1,000), (80, 1,400), (50, 2,600).
    # 80 t from 100 t: (1,400 - 1,000) / (100 - 80) = $20 per t; 50 t from 80 t:
    # (2,600 - 1,400) / (80 - 50) = $40 per t; the 100 t point (least cost) has none
    assert abatement_usd_per_t([80.0, 100.0, 50.0], [1_400.0, 1_000.0, 2_600.0]) == [
        20.0,
        None,
        40.0,
    ]


def test_duration():
    start = datetime(2026, 12, 2, 14, 0, 0)
    assert duration(SimpleNamespace(started_at=None, finished_at=None)) == MISSING
    done = SimpleNamespace(started_at=start, finished_at=datetime(2026, 12, 2, 14, 0, 2, 400_000))
    assert duration(done) == "2.4 s"
    long = SimpleNamespace(started_at=start, finished_at=datetime(2026, 12, 2, 14, 3, 5))
    assert duration(long) == "3 min 05 s"


def test_what_binds_in_words_on_the_seed():
    # the seed's golden plan binds 6 rows: N+1 capacity and the two-unit rule for
    # chat-13b, each in periods 1, 2 and 3 at load block 2 (the peak): two sentences
    import json

    from conftest import ROOT
    from solver.plan import Plan
    from solver.web.views import binds_in_words

    golden = json.loads((ROOT / "tests" / "golden" / "seed-2m-13b.json").read_text())["output"]
    sentences = binds_in_words(Plan.model_validate(golden))
    assert [s.split(":")[0] for s in sentences] == [
        "N+1 capacity for chat-13b binds in periods 1, 2 and 3 (load block 2)",
        "Two serving units (N+1) for chat-13b binds in periods 1, 2 and 3 (load block 2)",
    ]
    assert not any("[" in s or "_" in s for s in sentences)  # no raw constraint name
