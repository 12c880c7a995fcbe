"""Every price dated and in the currency its seller bills: the bases on offerings.csv
(price_date_basis, currency_basis), what ``procure catalog validate`` counts, and the build
script's rules that set them (scripts/price_provenance.py)."""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import ROOT, offering, write_catalog
from solver.cli import app
from solver.inputs.catalog import load_catalog
from solver.inputs.catalog.dating import dating_lines, dating_report

runner = CliRunner()


def _script(name: str):
    """A module of scripts/ (scripts are not part of the package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def provenance():
    return _script("price_provenance")


# --------------------------------------------------------------------------- shipped catalog


def test_no_shipped_price_is_undated_and_every_date_says_what_it_is():
    off = load_catalog().offerings
    report = dating_report(off)
    # 0 on-demand dates unknown, and 0 commitment prices with an unknown date
    assert report.unknown_dates == ()
    assert set(off["price_date_basis"]) == {"published", "read"}
    # published: the anycloud-sh HEAD of 2026-05-20 (gcp 438, azure 444, lambda 112 = the 7
    # instance types Lambda's page reading does not list x 16 regions, vast 41), CoreWeave's
    # dated capture (20), tsaol/aws-gpu's dated tables (21), the Vantage table (6), the
    # Capacity Block scrape (3), the TensorWave blog (1) = 1,086; read: the skypilot-catalog
    # files dated by the day they were read (594 - 23 FluidStack rows left out - 12 Scaleway
    # rows now read off Scaleway's page = 559), 240 Lambda rows dated by the page reading
    # (2026-09-20), 12 Scaleway (2026-09-27) = 811 (4 of the 559 are Seeweb page captures).
    assert report.date_bases == {"published": 1086, "read": 811}
    read = off[off["price_date_basis"] == "read"]
    skypilot = read[read["source"].str.contains("skypilot-catalog")]
    assert set(skypilot["price_date"]) == {"2026-11-22", "2026-11-24"}


def test_every_shipped_source_is_an_address_a_person_can_open():
    off = load_catalog().offerings
    # a URL (https://...), or a page named by its host (aws.amazon.com/..., cliffcenter.com/...)
    openable = off["source"].str.contains(r"https://|[a-z0-9-]+\.(?:com|ai|io|it)/", regex=True)
    assert openable.all(), off.loc[~openable, "source"].head().tolist()
    # a repository file is named with its full commit, never a short one
    sky = off[off["source"].str.contains("skypilot-catalog/blob/")]
    assert sky["source"].str.contains(r"/blob/[0-9a-f]{40}/catalogs/", regex=True).all()


def test_no_shipped_currency_is_assumed():
    # Every seller's currency is named by a source (catalogs/SOURCES.md, "Currencies"): Vast's
    # API reference ($/hour, dlperf_usd), Shadeform's fetcher and FinOps profile (cents of US
    # dollars) for the 71 rows it resells, Scaleway's page (EUR); FluidStack, which no source
    # names the currency of, is left out. This fails on the first row a build leaves assumed.
    off = load_catalog().offerings
    report = dating_report(off)
    assumed = off[off["currency_basis"] != "stated"]
    assert assumed.empty, assumed["provider"].value_counts().to_dict()
    assert report.assumed_currencies == ()
    # EUR: Seeweb 10 + Scaleway 12 = 22; USD: the other 1,897 - 22 = 1,875
    assert report.currencies == {"EUR": 22, "USD": 1875}
    assert "fluidstack" not in set(off["provider"])


def test_validate_prints_both_counts_on_the_shipped_catalog():
    result = runner.invoke(app, ["catalog", "validate"])
    assert result.exit_code == 0, result.output
    assert "price dates: 0 of 1897 offerings with an unknown date" in result.output
    assert "currencies: 0 of 1897 offerings in a currency no source states" in result.output
    assert "(22 EUR, 1875 USD)" in result.output


def test_validate_strict_passes_on_the_shipped_catalog():
    # --strict fails on an unknown date or an assumed currency (the test below); the shipped
    # catalog has neither
    result = runner.invoke(app, ["catalog", "validate", "--strict"])
    assert result.exit_code == 0, result.output


# --------------------------------------------------------------------------- the counts


def _rows() -> list[dict]:
    """Three offerings: dated and stated; undated; dated but in an assumed currency."""
    good = {
        **offering("h1", "h100-sxm", 1, 4.0),
        "currency": "USD",
        "price_confidence": "list",
        "price_note": "",
        "price_date_basis": "published",
        "currency_basis": "stated",
    }
    undated = {**good, **offering("h2", "h100-sxm", 1, 4.5), "price_date": "unknown"}
    undated.update(price_date_basis="", currency_basis="stated")
    assumed = {**good, **offering("h3", "h100-sxm", 1, 5.0), "currency_basis": "assumed"}
    return [good, undated, assumed]


def test_the_report_names_each_unsettled_offering_by_line_and_field(tmp_path):
    off = load_catalog(write_catalog(tmp_path / "c", _rows())).offerings
    report = dating_report(off)
    # header is line 1, so the three rows are lines 2, 3, 4
    assert [(u.line, u.field, u.offering_id) for u in report.unknown_dates] == [
        (3, "price_date", "acme/us-east/h2")
    ]
    assert [(u.line, u.field, u.value) for u in report.assumed_currencies] == [
        (4, "currency_basis", "USD")
    ]
    lines = dating_lines(report, "c/offerings.csv")
    assert lines[0].startswith("price dates: 1 of 3 offerings with an unknown date")
    assert lines[1].startswith("currencies: 1 of 3 offerings in a currency no source states")
    assert "  c/offerings.csv line 3, price_date: unknown (acme/us-east/h2)" in lines
    assert any(
        line.startswith("  c/offerings.csv line 4, currency_basis: USD assumed") for line in lines
    )


def test_a_commitment_date_counts_only_where_there_is_a_commitment_price(tmp_path):
    rows = _rows()[:1]
    # a 1-year price of unknown date: counted; no 1y/3y price: its empty date is the row's
    with_r1 = {**rows[0], **offering("h4", "h100-sxm", 1, 4.0, r1=3.0)}
    with_r1.update(reserved_price_date="unknown", reserved_price_confidence="list")
    with_r1.update(currency="USD", price_confidence="list", price_note="")
    with_r1.update(price_date_basis="published", currency_basis="stated")
    # (write_catalog takes its columns from the first row: the one with the reserved columns)
    off = load_catalog(write_catalog(tmp_path / "c", [with_r1, *rows])).offerings
    report = dating_report(off)
    assert [(u.line, u.field) for u in report.unknown_dates] == [(2, "reserved_price_date")]
    assert report.undated_offerings == 1


def test_an_older_catalog_without_the_bases_loads_with_assumed_currencies(tmp_path):
    # no price_date_basis / currency_basis columns: dates as the source observed them
    # (published), currencies named by nothing (assumed), so validate counts them all
    off = load_catalog(write_catalog(tmp_path / "c", [offering("h1", "h100-sxm", 1, 4.0)]))
    report = dating_report(off.offerings)
    assert report.date_bases == {"published": 1}
    assert len(report.assumed_currencies) == 1


def test_validate_strict_fails_on_an_unsettled_offering_and_passes_a_settled_one(tmp_path):
    bad = write_catalog(tmp_path / "bad", _rows())
    result = runner.invoke(app, ["catalog", "validate", "--strict", "--catalog", str(bad)])
    assert result.exit_code == 2, result.output
    assert "1 offering(s) with an unknown price date, 1 in an assumed currency" in result.output
    assert "line 3, price_date" in result.output and "Traceback" not in result.output
    good = write_catalog(tmp_path / "good", _rows()[:1])
    result = runner.invoke(app, ["catalog", "validate", "--strict", "--catalog", str(good)])
    assert result.exit_code == 0, result.output
    assert "price dates: 0 of 1 offerings" in result.output


# --------------------------------------------------------------------------- the build rules


def test_seeweb_rows_take_the_page_price_in_euros(provenance):
    rows = pd.DataFrame(
        [
            {
                "offering_id": f"seeweb/it-fr2/{t}",
                "provider": "seeweb",
                "accelerator_id": acc,
                "accelerators_per_instance": n,
                "on_demand_usd_per_hour": od,
                "currency": "USD",
                "price_date": "2026-11-24",
                "price_date_basis": "read",
                "price_confidence": "third_party",
                "price_note": "",
                "source": "snapshot",
            }
            for t, acc, n, od in (
                ("ECS1GPU3", "a100-80gb", 1, 0.99),
                ("ECS4GPU10", "h200", 4, 10.4),
                ("ECS1GPU7", "l40s", 1, 0.85),
            )
        ]
    )
    out = provenance.seeweb_from_page(rows).set_index("offering_id")
    # the page's A100 is EUR 1.15 per GPU-hour (the snapshot had 0.99): list, dated by capture
    a100 = out.loc["seeweb/it-fr2/ECS1GPU3"]
    assert (a100["on_demand_usd_per_hour"], a100["currency"]) == (1.15, "EUR")
    assert (a100["price_confidence"], a100["price_date"]) == ("list", "2026-09-15")
    assert "seeweb.it/en/products/cloud-server-gpu" in a100["source"]
    # four H200 at EUR 2.60 each = EUR 10.40 (the page prices GPUs linearly)
    assert out.loc["seeweb/it-fr2/ECS4GPU10", "on_demand_usd_per_hour"] == pytest.approx(10.4)
    # a card the capture did not keep: the snapshot's figure, now read as EUR, not raised
    l40s = out.loc["seeweb/it-fr2/ECS1GPU7"]
    assert (l40s["on_demand_usd_per_hour"], l40s["currency"]) == (0.85, "EUR")
    assert l40s["price_confidence"] == "third_party"


def test_a_resold_row_takes_its_resellers_currency(provenance):
    shade = "https://github.com/skypilot-org/skypilot-catalog/blob/x/catalogs/v8/shadeform/vms.csv"
    prime = shade.replace("shadeform", "primeintellect")
    # Shadeform's cents are US cents: a row it resells is USD even where the upstream (here
    # Scaleway) bills its own customers in euros
    assert provenance.currency_of("scaleway", shade) == ("USD", "stated")
    assert provenance.currency_of("crusoe", prime) == ("USD", "stated")
    assert provenance.currency_of("scaleway", "https://www.scaleway.com/") == ("EUR", "stated")
    assert provenance.currency_of("seeweb", "https://www.seeweb.it/") == ("EUR", "stated")
    assert provenance.currency_of("newcloud", "x") == (None, "assumed")


def test_the_build_stops_on_a_row_in_an_assumed_currency(provenance):
    rows = pd.DataFrame([{"offering_id": "a/b/c", "currency_basis": "assumed"}])
    with pytest.raises(ValueError, match="assumed currency: \\['a/b/c'\\]"):
        provenance.check_currencies(rows)
    provenance.check_currencies(rows.assign(currency_basis="stated"))  # no error


def test_a_provider_no_source_names_the_currency_of_is_left_out(provenance, capsys):
    rows = pd.DataFrame(
        [{"offering_id": "fluidstack/CANADA/x", "provider": "fluidstack"}]
        + [{"offering_id": "vast/us/y", "provider": "vast"}]
    )
    kept = provenance.drop_unstated_currencies(rows)
    assert list(kept["offering_id"]) == ["vast/us/y"]
    assert "fluidstack: 1 offerings left out, no source states their currency" in (
        capsys.readouterr().out
    )


def test_the_build_stops_on_an_undated_row(provenance):
    rows = pd.DataFrame([{"offering_id": "a/b/c", "price_date": "unknown", "price_date_basis": ""}])
    with pytest.raises(ValueError, match="undated offerings: \\['a/b/c'\\]"):
        provenance.check_dated(rows)
