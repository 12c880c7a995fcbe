"""Price provenance in the catalog (issue 29, parts 1 and 4): every price's date, confidence
and currency, dated exchange rates, and the one-message refusals of bad ones.

The worked catalogs are the tiny one of tests/conftest.py: round prices, so every converted
figure can be checked by hand.
"""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from conftest import ROOT, offering, write_catalog
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.provenance import (
    CONFIDENCE_LEVELS,
    age_class,
    confidence_rank,
    is_price_date,
    meets_confidence,
    price_age_days,
    too_old,
)

RATES = (
    "date,currency,usd_per_unit,source\n"
    "2026-01-02,EUR,1.05,older test rate\n"
    "2026-05-08,EUR,1.1761,ECB reference rate (test copy)\n"
)


def dated(row: dict, *, confidence: str, day: str, currency: str = "USD") -> dict:
    """An offering row in the provenance format (issue 29): price_note present, so
    price_date must be a day or unknown."""
    return {
        **row,
        "currency": currency,
        "price_date": day,
        "price_confidence": confidence,
        "price_note": "test",
    }


def catalog_with(tmp_path, offerings: list[dict], rates: str | None = RATES, **tables):
    folder = write_catalog(tmp_path / "catalog", offerings, **tables)
    if rates is not None:
        (folder / "exchange_rates.csv").write_text(rates)
    return folder


# --------------------------------------------------------------------------- vocabulary


def test_confidence_order_is_unverified_third_party_list_equal_to_quote():
    assert CONFIDENCE_LEVELS == ("unverified", "third_party", "list", "quote")
    ranks = [confidence_rank(level) for level in CONFIDENCE_LEVELS]
    assert ranks == [1, 2, 3, 3]  # a quote is no weaker than a list price, nor stronger
    assert meets_confidence("quote", "list") and meets_confidence("list", "quote")
    assert not meets_confidence("third_party", "list")
    assert meets_confidence("unverified", None)  # no minimum, everything passes


def test_price_age_counts_days_to_the_plan_start_and_unknown_is_too_old():
    start = date(2027, 1, 1)
    # 2026-10-10 to 2027-01-01: 21 days left in October + 30 + 31 + 1 = 83 days
    assert price_age_days("2026-10-10", start) == 83
    assert price_age_days("unknown", start) is None
    assert not too_old("2026-10-10", start, 90) and too_old("2026-10-10", start, 60)
    assert too_old("unknown", start, 10_000)  # an unknown date is too old for any maximum
    assert not too_old("unknown", start, None)  # unless none is set
    assert age_class(83) == "up to 90 days" and age_class(226) == "181 to 365 days"
    assert age_class(None) == "date unknown"
    assert is_price_date("2026-02-28") and not is_price_date("2026-02-30")
    assert not is_price_date("2026-11") and not is_price_date("after 2025-06")


# --------------------------------------------------------------------------- currency


def test_a_price_in_euros_is_converted_at_the_latest_rate(tmp_path):
    # EUR 3.00/h at the latest rate (2026-05-08, 1.1761 USD per EUR, not 2026-01-02's 1.05):
    # 3.00 x 1.1761 = $3.5283/h; spot EUR 1.00 -> $1.1761
    row = dated(offering("e1", "h100-sxm", 1, 3.0, spot=1.0), confidence="list",
                day="2026-10-10", currency="EUR")  # fmt: skip
    cat = load_catalog(catalog_with(tmp_path, [row]))
    off = cat.offerings.loc["acme/us-east/e1"]
    assert off["on_demand_usd_per_hour"] == pytest.approx(3.5283)
    assert off["spot_usd_per_hour"] == pytest.approx(1.1761)
    assert off["currency"] == "EUR" and off["exchange_rate_date"] == "2026-05-08"
    assert cat.rate("EUR").usd_per_unit == 1.1761
    assert cat.rate("USD").usd_per_unit == 1.0  # by definition, no row needed


def test_a_price_in_a_currency_without_a_rate_is_refused_with_file_field_and_fix(tmp_path):
    rows = [
        dated(offering("h1", "h100-sxm", 1, 4.0), confidence="list", day="2026-10-10"),
        dated(offering("g1", "h100-sxm", 1, 3.0), confidence="list", day="2026-10-10",
              currency="GBP"),
    ]  # fmt: skip
    folder = catalog_with(tmp_path, rows)  # rates for EUR only
    with pytest.raises(ProcureError) as err:
        load_catalog(folder)
    text = err.value.render()
    assert "offerings.csv: line 3, currency" in text  # the GBP row is the file's line 3
    assert "GBP has no exchange rate" in text
    assert "exchange_rates.csv" in err.value.fix and "GBP" in err.value.fix


def test_a_catalog_without_exchange_rates_takes_only_dollars(tmp_path):
    row = dated(offering("e1", "h100-sxm", 1, 3.0), confidence="list", day="2026-10-10",
                currency="EUR")  # fmt: skip
    with pytest.raises(ProcureError, match="EUR has no exchange rate"):
        load_catalog(catalog_with(tmp_path, [row], rates=None))


def test_a_server_priced_in_euros_is_converted(tmp_path):
    from conftest import TINY_SERVERS

    server = {**TINY_SERVERS[0], "currency": "EUR", "price_date": "2026-03-01",
              "price_confidence": "quote"}  # fmt: skip
    row = dated(offering("h1", "h100-sxm", 1, 4.0), confidence="list", day="2026-10-10")
    cat = load_catalog(catalog_with(tmp_path, [row], servers=[server]))
    # EUR 200,000 x 1.1761 = $235,220
    assert cat.servers.loc["box-h100", "capex_usd"] == pytest.approx(235_220)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("price_confidence", "official", "unknown price confidence 'official'"),
        ("price_date", "2026-11", "price date '2026-11' is not a day"),
        ("currency", "euro", "currency 'euro' is not an ISO 4217 code"),
    ],
)
def test_a_bad_provenance_cell_is_refused_with_its_line(tmp_path, column, value, message):
    row = dated(offering("h1", "h100-sxm", 1, 4.0), confidence="list", day="2026-10-10")
    row[column] = value
    with pytest.raises(ProcureError) as err:
        load_catalog(catalog_with(tmp_path, [row]))
    assert message in err.value.message
    assert err.value.field == f"line 2, {column}"
    assert err.value.fix  # says what to write


def test_a_bad_exchange_rate_is_refused(tmp_path):
    row = dated(offering("h1", "h100-sxm", 1, 4.0), confidence="list", day="2026-10-10")
    rates = "date,currency,usd_per_unit,source\n2026-05-08,EUR,-1.2,typo\n"
    with pytest.raises(ProcureError, match="usd_per_unit is -1.2; it must be positive"):
        load_catalog(catalog_with(tmp_path, [row], rates=rates))
    rates = "date,currency,usd_per_unit,source\n2026-05-08,EUR,1.1,a\n2026-05-08,EUR,1.2,b\n"
    with pytest.raises(ProcureError, match="two rates for EUR on one date"):
        load_catalog(catalog_with(tmp_path, [row], rates=rates))


def test_an_older_catalog_loads_its_date_words_into_the_note(tmp_path):
    # Before issue 29 price_date was free text and there was no confidence or currency:
    # the words go to price_note, the date is kept only where it is a day, every price is
    # USD and (nothing saying more) unverified.
    rows = [
        {**offering("h1", "h100-sxm", 1, 4.0), "price_date": "after 2025-06 (v8, read 2026-11)"},
        {**offering("h2", "h100-sxm", 1, 4.5), "price_date": "2026-05-20"},
    ]
    off = load_catalog(catalog_with(tmp_path, rows, rates=None)).offerings
    assert off.loc["acme/us-east/h1", "price_date"] == "unknown"
    assert off.loc["acme/us-east/h1", "price_note"] == "after 2025-06 (v8, read 2026-11)"
    assert off.loc["acme/us-east/h2", "price_date"] == "2026-05-20"
    assert set(off["price_confidence"]) == {"unverified"} and set(off["currency"]) == {"USD"}
    # reserved prices without provenance of their own have the row's
    assert off.loc["acme/us-east/h2", "reserved_price_date"] == "2026-05-20"


# --------------------------------------------------------------------------- the shipped catalog


def test_every_shipped_price_has_a_valid_date_confidence_and_currency():
    cat = load_catalog()
    off, srv = cat.offerings, cat.servers
    assert off["price_confidence"].isin(CONFIDENCE_LEVELS).all()
    assert off["price_date"].map(is_price_date).all()
    assert set(off["currency"]) == {"USD", "EUR"} and set(srv["currency"]) == {"USD"}
    assert srv["price_confidence"].isin(CONFIDENCE_LEVELS).all()
    # the counts catalogs/SOURCES.md gives (Prices: provenance): 276 list prices (20 CoreWeave
    # from coreweave.com/pricing captured 2026-10-10, 4 Seeweb H200/A100 from Seeweb's page
    # captured 2026-09-15, 240 Lambda rows = the 15 instance types lambda.ai/instances listed
    # on 2026-09-20 x 16 regions, 12 Scaleway rows from Scaleway's page read 2026-09-27); 10
    # unverified (6 Vantage-quoted AWS p5en/p6-b200, 3 Capacity Block rates, 1 TensorWave blog
    # price); the other 1,611 third-party. 1,920 - 23 FluidStack rows (no source states their
    # currency, left out) = 1,897 = 276 + 10 + 1,611.
    assert off["price_confidence"].value_counts().to_dict() == {
        "third_party": 1611,
        "list": 276,
        "unverified": 10,
    }
    assert (off["price_date"] == "unknown").sum() == 0  # every price dated
    listed = off[off["price_confidence"] == "list"]
    assert listed.groupby("provider")["price_date"].unique().map(list).to_dict() == {
        "coreweave": ["2026-10-10"],
        "lambda": ["2026-09-20"],
        "scaleway": ["2026-09-27"],
        "seeweb": ["2026-09-15"],
    }


def test_seeweb_is_priced_in_euros_as_seewebs_page_shows():
    # catalogs/SOURCES.md, "Seeweb": Seeweb's page prices every card in EUR (a verbatim
    # capture of 2026-09-15 shows H200 2.60, A100 1.15 EUR per GPU-hour); the snapshot's
    # figures for the cards the capture kept are the page's (H200 2.60), so its RTX A6000
    # 0.74 and L40S 0.85 are EUR too. Converted at the ECB rate of 2026-05-08, 1.1761 USD/EUR.
    off = load_catalog().offerings
    seeweb = off[off["provider"] == "seeweb"]
    assert len(seeweb) == 10
    assert set(seeweb["currency"]) == {"EUR"} and set(seeweb["currency_basis"]) == {"stated"}
    a100 = seeweb.loc["seeweb/it-fr2/ECS1GPU3"]
    assert a100["price_confidence"] == "list" and a100["price_date"] == "2026-09-15"
    assert a100["on_demand_usd_per_hour"] == pytest.approx(1.15 * 1.1761)  # 1.352515
    assert seeweb.loc["seeweb/it-fr2/ECS4GPU10", "on_demand_usd_per_hour"] == pytest.approx(
        4 * 2.60 * 1.1761
    )  # four H200 at 2.60 EUR each: 12.23144 USD
    assert seeweb.loc["seeweb/it-fr2/ECS1GPU2", "on_demand_usd_per_hour"] == pytest.approx(
        0.74 * 1.1761
    )


def test_shipped_exchange_rates_are_the_cited_ecb_reference_rates():
    rates = pd.read_csv(ROOT / "catalogs" / "exchange_rates.csv")
    eur = rates[rates["currency"] == "EUR"].iloc[-1]
    # ECB eurofxref-daily.xml, 2026-05-08: USD 1.1761 per EUR; GBP 0.86410 per EUR, so
    # 1 GBP = 1.1761 / 0.86410 = 1.361069 USD (cross rate through the euro)
    assert (eur["date"], eur["usd_per_unit"]) == ("2026-05-08", 1.1761)
    assert "ecb.europa.eu" in eur["source"]
    gbp = rates[rates["currency"] == "GBP"].iloc[-1]
    assert gbp["usd_per_unit"] == pytest.approx(1.1761 / 0.86410, abs=1e-6)
