"""Hostile catalogs for price dates and currencies: a date basis or currency basis that is not
one of the words, a basis left empty beside a real day, an undated price and an unstated
currency. Each is refused or reported by file, line and field, never a traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import offering, write_catalog
from solver.cli import app

runner = CliRunner()


def _row(instance: str, **changes: str) -> dict:
    row = {
        **offering(instance, "h100-sxm", 1, 4.0),
        "currency": "USD",
        "price_confidence": "list",
        "price_note": "",
        "price_date_basis": "published",
        "currency_basis": "stated",
    }
    row.update(changes)
    return row


def _validate(folder, *options: str):
    return runner.invoke(app, ["catalog", "validate", *options, "--catalog", str(folder)])


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"price_date_basis": "guessed"}, "price_date_basis", "published, read"),
        ({"price_date_basis": "Published"}, "price_date_basis", "published, read"),
        ({"price_date_basis": ""}, "price_date_basis", "published, read"),  # beside a day
        ({"currency_basis": "stated?"}, "currency_basis", "stated, assumed"),
        ({"currency_basis": "likely"}, "currency_basis", "stated, assumed"),
    ],
)
def test_a_bad_basis_is_refused_with_its_file_line_and_field(tmp_path, changes, field, words):
    folder = write_catalog(tmp_path / "c", [_row("h1"), _row("h2", **changes)])
    result = _validate(folder)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "is valid" not in result.output
    assert "offerings.csv" in result.output and f"line 3, {field}" in result.output
    assert words in result.output


def test_an_empty_basis_is_taken_beside_an_unknown_date_and_counted(tmp_path):
    folder = write_catalog(
        tmp_path / "c", [_row("h1"), _row("h2", price_date="unknown", price_date_basis="")]
    )
    result = _validate(folder)
    assert result.exit_code == 0, result.output
    assert "price dates: 1 of 2 offerings with an unknown date" in result.output
    assert "offerings.csv line 3, price_date: unknown (acme/us-east/h2)" in result.output


def test_an_unstated_currency_is_reported_by_file_line_and_field(tmp_path):
    folder = write_catalog(
        tmp_path / "c",
        [_row("h1"), _row("h2"), _row("h3", currency="EUR", currency_basis="assumed")],
    )
    (folder / "exchange_rates.csv").write_text(
        "date,currency,usd_per_unit,source\n2026-05-08,EUR,1.1761,test\n"
    )
    result = _validate(folder)
    assert result.exit_code == 0, result.output
    assert "currencies: 1 of 3 offerings in a currency no source states" in result.output
    assert "offerings.csv line 4, currency_basis: EUR assumed" in result.output
    strict = _validate(folder, "--strict")
    assert strict.exit_code == 2 and "line 4, currency_basis" in strict.output
    assert "Traceback" not in strict.output


def test_many_unsettled_offerings_are_listed_twenty_then_counted(tmp_path):
    rows = [_row(f"h{i}", price_date="unknown", price_date_basis="") for i in range(25)]
    result = _validate(write_catalog(tmp_path / "c", rows))
    assert result.exit_code == 0, result.output
    assert "price dates: 25 of 25 offerings with an unknown date" in result.output
    assert result.output.count(", price_date: unknown") == 20
    assert "... and 5 more" in result.output


def test_a_price_date_that_is_a_word_is_still_refused(tmp_path):
    # the bases do not loosen the date itself: "read 2026-11" is words, not a day
    folder = write_catalog(
        tmp_path / "c", [_row("h1"), _row("h2", price_date="read 2026-11", price_date_basis="read")]
    )
    result = _validate(folder)
    assert result.exit_code == 2, result.output
    assert "line 3, price_date" in result.output and "is not a day" in result.output
