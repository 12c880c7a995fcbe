"""Vendor quotes (issue 29, part 2): a quotes file enters the catalog as prices of
confidence ``quote``; worked by hand on the tiny catalog.

The neocloud ``neo`` sells one H100 instance in ``eu-west`` on demand at $4/h and has
no reserved price. A steady 24/7 workload of 10 req/s fills exactly one H100 (10 req/s
each, ``max_utilisation`` 1) for 12 months = 12 x 730 = 8,760 h (no start: 730-hour
months), so:

- on demand: 4 x 8,760 = $35,040;
- a 1-year reservation quoted at $p/h: p x 8,760 (every hour of the term owed), which
  beats on demand exactly when p < $4: at $3, 3 x 8,760 = $26,280; at $4.50 it does not.

The break-even quote price is therefore $4.00/h either way: the reservation leaves the
plan above it (quoted at $3) and enters below it (quoted at $4.50).
"""

from __future__ import annotations

from datetime import date

import pytest

from conftest import H1, offering, problem, serve, units
from solver.errors import ProcureError
from solver.inputs.quotes import apply_quotes, parse_quotes, quoted_pools
from solver.solve import solve_problem

HOURS_PER_YEAR = 12 * 730.0
NEO = offering("gpu-1x-h100", "h100-sxm", 1, 4.0, provider="neo", region="eu-west")
NEO_REGION = dict(
    provider="neo",
    region="eu-west",
    country="NL",
    residency_zone="eu",
    grid_gco2_per_kwh=300,
    grid_year=2023,
    grid_source="test",
    pue=1.2,
    electricity_usd_per_kwh=0.1,
    source="test",
)
HEADER = (
    "provider,region,offering,accelerator,accelerators_per_instance,term,"
    "price_per_instance_hour,currency,upfront_share,min_units,valid_until,quoted_on,reference\n"
)
ON = date(2026, 11, 25)


def _catalog(tiny_catalog):
    from conftest import TINY_REGIONS

    return tiny_catalog([H1, NEO], regions=[*TINY_REGIONS, NEO_REGION])


def _quotes(*lines: str) -> str:
    return HEADER + "".join(line + "\n" for line in lines)


def _steady_year():
    return problem(
        [serve(10)],
        horizon_months=12,
        modes=["on_demand", "reserved_1y"],
        providers=["neo"],
    )


def _one_year_quote(price: float, upfront: str = "") -> str:
    return _quotes(
        f"neo,eu-west,gpu-1x-h100,,,1y,{price},USD,{upfront},1,2099-12-31,2026-11-20,NEO-114"
    )


def test_a_quote_below_on_demand_moves_the_steady_load_to_the_reservation(tiny_catalog):
    base = _catalog(tiny_catalog)
    # Without the quote: on demand, 4 x 8,760 = $35,040.
    plan = solve_problem(_steady_year(), base)
    assert plan.total_cost_usd == pytest.approx(4.0 * HOURS_PER_YEAR)
    assert units(plan) == {"neo/eu-west/gpu-1x-h100": 1}
    # Quoted at $3/h for a year: 3 x 8,760 = $26,280, all of it the reservation.
    quoted = apply_quotes(base, parse_quotes(_one_year_quote(3.0), "q.csv"), on=ON)
    plan = solve_problem(_steady_year(), quoted)
    assert plan.total_cost_usd == pytest.approx(3.0 * HOURS_PER_YEAR)
    assert units(plan, "reservation") == {"neo/eu-west/gpu-1x-h100": 1}
    (line,) = [i for i in plan.line_items if i.item == "reservation"]
    assert (line.price_confidence, line.price_source, line.price_date) == (
        "quote",
        "quote NEO-114",
        "2026-11-20",
    )


def test_a_quote_above_on_demand_leaves_the_plan_on_demand(tiny_catalog):
    # Quoted at $4.50/h: 4.5 x 8,760 = $39,420 > $35,040 on demand.
    quoted = apply_quotes(
        _catalog(tiny_catalog), parse_quotes(_one_year_quote(4.5), "q.csv"), on=ON
    )
    plan = solve_problem(_steady_year(), quoted)
    assert plan.total_cost_usd == pytest.approx(4.0 * HOURS_PER_YEAR)
    assert units(plan, "reservation") == {}


@pytest.mark.parametrize(("price", "direction"), [(3.0, "leaves above"), (4.5, "enters below")])
def test_the_break_even_quote_price_is_the_on_demand_price(tiny_catalog, price, direction):
    # break_even_limit=0 searches the plan's pools and no other: the quoted pool is
    # searched all the same (the quote hook), and breaks even at $4.00/h.
    from solver.analyses.sensitivity import sensitivity_report
    from solver.solve import solve_for_analysis

    quoted = apply_quotes(
        _catalog(tiny_catalog), parse_quotes(_one_year_quote(price), "q.csv"), on=ON
    )
    assert quoted_pools(quoted) == ["neo/eu-west/gpu-1x-h100#reserved_1y"]
    _, solution = solve_for_analysis(_steady_year(), quoted)
    report = sensitivity_report(solution, break_even_limit=0)
    row = next(b for b in report.break_even if b.pool_id == "neo/eu-west/gpu-1x-h100#reserved_1y")
    assert row.direction == direction
    assert row.break_even_price == pytest.approx(4.0, rel=1e-3)


def test_the_upfront_share_is_billed_in_the_first_month_and_the_total_kept(tiny_catalog):
    # Quoted at $3/h with half up front: the term costs 3 x 8,760 = $26,280, of which
    # $13,140 is billed in month 1 beside that month's half fee (3 x 730 / 2 = $1,095),
    # and $1,095 in each month after.
    from solver.plan.cashflow import cash_flow

    quoted = apply_quotes(
        _catalog(tiny_catalog), parse_quotes(_one_year_quote(3.0, "0.5"), "q.csv"), on=ON
    )
    p = _steady_year()
    plan = solve_problem(p, quoted)
    months = cash_flow(plan, p, quoted, date(2027, 1, 1))
    assert months[0].billed_usd == pytest.approx(13_140 + 1_095)
    assert [m.billed_usd for m in months[1:]] == pytest.approx([1_095.0] * 11)
    assert sum(m.billed_usd for m in months) == pytest.approx(26_280)
    assert sum(m.total_usd for m in months) == pytest.approx(26_280)


def test_a_quote_by_accelerator_creates_the_offering_with_copied_specs(tiny_catalog):
    # neo sells no 1x L4: the quote creates neo/eu-west/quote-1xl4, specs from acme's L4.
    from conftest import L4, TINY_REGIONS

    cat = tiny_catalog([H1, L4, NEO], regions=[*TINY_REGIONS, NEO_REGION])
    text = _quotes("neo,eu-west,,L4,1,3y,0.5,USD,,,2099-12-31,,NEO-L4")
    quoted = apply_quotes(cat, parse_quotes(text, "q.csv"), on=ON)
    row = quoted.offerings.loc["neo/eu-west/quote-1xl4"]
    assert row["accelerator_id"] == "l4"
    assert row["reserved_3y_usd_per_hour"] == 0.5
    assert row["on_demand_usd_per_hour"] != row["on_demand_usd_per_hour"]  # none: NaN
    assert row["reserved_price_confidence"] == "quote"
    assert row["reserved_source"] == "quote NEO-L4"
    assert "acme/us-east/l4" in row["price_note"]


def test_a_quote_in_euros_is_converted_at_the_catalogs_rate(tiny_catalog, tmp_path):
    from conftest import TINY_REGIONS, write_catalog
    from solver.inputs.catalog import load_catalog

    folder = write_catalog(tmp_path / "c", [H1, NEO], regions=[*TINY_REGIONS, NEO_REGION])
    (folder / "exchange_rates.csv").write_text(
        "date,currency,usd_per_unit,source\n2026-11-20,EUR,1.1,test\n"
    )
    cat = load_catalog(folder)
    text = _quotes("neo,eu-west,gpu-1x-h100,,,1y,2.0,EUR,,,2099-12-31,,NEO-EUR")
    quoted = apply_quotes(cat, parse_quotes(text, "q.csv"), on=ON)
    # the offering's on-demand price is in USD: the EUR quote goes to its own offering
    row = quoted.offerings.loc["neo/eu-west/gpu-1x-h100~NEO-EUR"]
    assert row["reserved_1y_usd_per_hour"] == pytest.approx(2.2)
    assert row["currency"] == "EUR"
    assert (
        quoted.offerings.loc["neo/eu-west/gpu-1x-h100", "reserved_1y_usd_per_hour"]
        != (quoted.offerings.loc["neo/eu-west/gpu-1x-h100", "reserved_1y_usd_per_hour"])
    )


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        # a bad value
        ("neo,eu-west,gpu-1x-h100,,,1y,-3,USD,,,2099-12-31,,R", "price_per_instance_hour", "above"),
        ("neo,eu-west,gpu-1x-h100,,,1y,3,USD,1.5,,2099-12-31,,R", "upfront_share", "0 to 1"),
        ("neo,eu-west,gpu-1x-h100,,,2y,3,USD,,,2099-12-31,,R", "term", "unknown term"),
        ("neo,eu-west,gpu-1x-h100,,,block:14d,3,USD,,,2099-12-31,,R", "term", "not modelled"),
        ("neo,eu-west,gpu-1x-h100,,,1y,3,USD,,4,2099-12-31,,R", "min_units", "not modelled"),
        ("neo,eu-west,gpu-1x-h100,,,1y,3,USD,,,31/12/2099,,R", "valid_until", "not a day"),
        # an expired quote
        ("neo,eu-west,gpu-1x-h100,,,1y,3,USD,,,2026-10-31,,R", "valid_until", "expired on"),
        # unknown provider, region, offering, accelerator
        ("noe,eu-west,gpu-1x-h100,,,1y,3,USD,,,2099-12-31,,R", "provider", "unknown provider"),
        ("neo,us-east,gpu-1x-h100,,,1y,3,USD,,,2099-12-31,,R", "region", "no region"),
        ("neo,eu-west,gpu-8x-h100,,,1y,3,USD,,,2099-12-31,,R", "offering", "no offering"),
        ("neo,eu-west,,B300,1,1y,3,USD,,,2099-12-31,,R", "accelerator", "unknown accelerator"),
        ("neo,eu-west,gpu-1x-h100,,,1y,3,JPY,,,2099-12-31,,R", "currency", "no exchange rate"),
    ],
)  # fmt: skip
def test_a_bad_quote_is_refused_naming_file_line_field_and_fix(tiny_catalog, line, field, words):
    with pytest.raises(ProcureError) as err:
        apply_quotes(_catalog(tiny_catalog), parse_quotes(_quotes(line), "q.csv"), on=ON)
    exc = err.value
    assert exc.file == "q.csv"
    assert exc.field == f"line 2, {field}"
    assert words in exc.message
    assert exc.fix


def test_the_expiry_is_counted_from_the_plans_start(tiny_catalog):
    text = _quotes("neo,eu-west,gpu-1x-h100,,,1y,3,USD,,,2027-01-31,,R")
    quotes = parse_quotes(text, "q.csv")
    apply_quotes(_catalog(tiny_catalog), quotes, on=date(2027, 1, 31))  # its last day: valid
    with pytest.raises(ProcureError, match="expired on 2027-01-31, before the plan's start"):
        apply_quotes(_catalog(tiny_catalog), quotes, on=date(2027, 2, 1))


def test_two_quotes_for_one_price_are_refused(tiny_catalog):
    text = _quotes(
        "neo,eu-west,gpu-1x-h100,,,1y,3,USD,,,2099-12-31,,R",
        "neo,eu-west,gpu-1x-h100,,,1y,2.9,USD,,,2099-12-31,,R",
    )
    with pytest.raises(ProcureError, match="line 2 has one") as err:
        apply_quotes(_catalog(tiny_catalog), parse_quotes(text, "q.csv"), on=ON)
    assert err.value.field == "line 3, term"


def test_the_orders_cite_the_quote_reference(tiny_catalog):
    from solver.outputs.orders import order_lines

    quoted = apply_quotes(
        _catalog(tiny_catalog), parse_quotes(_one_year_quote(3.0), "q.csv"), on=ON
    )
    orders = order_lines(solve_problem(_steady_year(), quoted))
    reserved = orders[orders["price_confidence"] == "quote"]
    assert len(reserved) >= 1 and set(reserved["price_source"]) == {"quote NEO-114"}
