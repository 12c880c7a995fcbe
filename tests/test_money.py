"""The one USD formatter (solver/money.py): each case worked by hand."""

from __future__ import annotations

import math

from solver.money import usd


def test_amounts_with_cents_and_thousands():
    assert usd(1234.5) == "$1,234.50"
    assert usd(0.0) == "$0.00"
    assert usd(329762.54) == "$329,762.54"  # the seed's optimum, as the plan table shows it
    assert usd(1234567.891) == "$1,234,567.89"  # 0.891 rounds to 0.89


def test_whole_dollars():
    assert usd(1234.5, cents=False) == "$1,234"  # half to even: 1234.5 -> 1234
    assert usd(1235.5, cents=False) == "$1,236"
    assert usd(135262.0, cents=False) == "$135,262"


def test_the_sign_goes_before_the_dollar_sign():
    assert usd(-12.0) == "-$12.00"
    assert usd(-4730.8) == "-$4,730.80"


def test_an_amount_that_rounds_to_zero_is_not_negative():
    # -0.004 rounds to -0.00: shown as $0.00, not -$0.00; whole dollars likewise
    assert usd(-0.004) == "$0.00"
    assert usd(-0.4, cents=False) == "$0"
    assert usd(-0.004, signed=True) == "+$0.00"


def test_signed_amounts_are_changes():
    assert usd(5.0, signed=True) == "+$5.00"
    assert usd(-5.0, signed=True) == "-$5.00"
    assert usd(0.0, signed=True) == "+$0.00"  # no change reads as +$0.00, never -$0.00
    assert usd(0.006, signed=True) == "+$0.01"


def test_missing_amounts():
    assert usd(None) == "n/a"
    assert usd(math.nan) == "n/a"
    assert usd(math.nan, missing="-") == "-"


def test_whole_dollars_as_the_workspace_pages_show_them():
    from solver.money import whole_usd

    assert whole_usd(329762.54) == "$329,763"  # the seed's optimum on the plan page
    assert whole_usd(-1500.4) == "-$1,500"
    assert whole_usd(None) == "n/a"
