"""Where a price comes from: its date, its confidence and its currency.

Every catalog price carries

``price_date``
    the date its source observed or published it, ``YYYY-MM-DD``, or ``unknown`` (never
    guessed: a snapshot whose date is not known says so);
``price_confidence``
    how far it can be trusted, one of :data:`CONFIDENCE_LEVELS`:

    - ``quote``: a vendor's quote to us;
    - ``list``: the provider's own published price, read from its price page or price
      API (or a dated capture of that page);
    - ``third_party``: a third party's catalog or listing (the SkyPilot catalogs and their
      copies, a price tracker, an aggregator or reseller listing, a compiled table);
    - ``unverified``: a blog, a press claim, a figure recalled and not re-read, our own
      estimate, or a figure whose currency is not confirmed.

    Order, weakest first: ``unverified`` < ``third_party`` < ``list`` = ``quote``
    (:func:`confidence_rank`): a problem's ``min_price_confidence: list`` admits list
    prices and quotes;
``currency``
    the ISO 4217 code the source states the price in (``USD`` unless it says otherwise);
    the catalog converts it to USD at its exchange rate (catalogs/exchange_rates.csv).

A price's age is counted in days from its date to the plan's first day (the problem's
``start``): the age it has when the plan begins. An unknown date has no age, and counts as
too old wherever a problem sets ``max_price_age_days``.
"""

from __future__ import annotations

import re
from datetime import date

#: Price confidence levels, weakest first (``list`` and ``quote`` rank alike).
CONFIDENCE_LEVELS: tuple[str, ...] = ("unverified", "third_party", "list", "quote")
_RANK = {"unverified": 1, "third_party": 2, "list": 3, "quote": 3}

#: A price date nobody knows.
UNKNOWN_DATE = "unknown"

#: The currency every cost in a plan is computed in.
BASE_CURRENCY = "USD"

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")

#: Price-age classes of the report's spend by price age: (label, oldest day in the class).
AGE_CLASSES: tuple[tuple[str, float], ...] = (
    ("up to 90 days", 90.0),
    ("91 to 180 days", 180.0),
    ("181 to 365 days", 365.0),
    ("over a year", float("inf")),
)
UNKNOWN_AGE = "date unknown"


def confidence_rank(level: str) -> int:
    """Rank of a confidence level: 1 unverified, 2 third_party, 3 list or quote; 0 unknown."""
    return _RANK.get(level, 0)


def meets_confidence(level: str, minimum: str | None) -> bool:
    """Whether a price of confidence ``level`` meets ``minimum`` (None: no minimum)."""
    return minimum is None or confidence_rank(level) >= confidence_rank(minimum)


def is_price_date(text: str) -> bool:
    """Whether ``text`` is a valid price date: ``YYYY-MM-DD`` (a real day) or ``unknown``."""
    return text == UNKNOWN_DATE or parse_price_date(text) is not None


def parse_price_date(text: object) -> date | None:
    """The day of a ``YYYY-MM-DD`` price date; None for ``unknown`` or anything else."""
    value = str(text).strip()
    if not _ISO_DATE.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def price_age_days(price_date: object, on: date) -> float | None:
    """Days from a price's date to ``on`` (the plan's first day); None when unknown."""
    day = parse_price_date(price_date)
    return None if day is None else float((on - day).days)


def too_old(price_date: object, on: date, max_age_days: float | None) -> bool:
    """Whether a price is older than ``max_age_days`` on ``on`` (an unknown date always is,
    once a maximum is set)."""
    if max_age_days is None:
        return False
    age = price_age_days(price_date, on)
    return age is None or age > max_age_days


def age_class(age_days: float | None) -> str:
    """The :data:`AGE_CLASSES` label of an age (``date unknown`` without one)."""
    if age_days is None:
        return UNKNOWN_AGE
    return next(label for label, oldest in AGE_CLASSES if age_days <= oldest)


def is_currency_code(text: str) -> bool:
    """Whether ``text`` looks like an ISO 4217 code (three capital letters)."""
    return bool(_CURRENCY.match(text))
