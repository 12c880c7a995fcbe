"""Quote requests: one CSV per provider in the quotes file format
(:mod:`solver.inputs.quotes`), asking the provider to confirm the prices a plan rests on.

Each request holds one line per price to confirm (an offering and a term), with what the
plan runs on it (``requested_units``: the most instances at once;
``requested_instance_hours``; ``requested_from``/``requested_until``: the first and last
day) and the cells the provider fills in left as :data:`~solver.inputs.quotes.UNFILLED`:
``price_per_instance_hour`` (in the ``currency`` column, the currency the catalog's price
is stated in), ``valid_until``, ``quoted_on`` and ``reference``. ``#`` lines before the
header say what the request is for, how to fill it in, and each plan line it covers.
Once filled in, the file is a quotes file ``procure solve --quotes`` reads; until then
``solve`` refuses it, naming the cell.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import pandas as pd

from solver.analyses.price_check import CheckedPrice, PriceCheck
from solver.inputs.quotes import UNFILLED
from solver.outputs.files import csv_text

#: The request's columns, in order (all of them columns of a quotes file).
REQUEST_COLUMNS: tuple[str, ...] = (
    "provider",
    "region",
    "offering",
    "term",
    "price_per_instance_hour",
    "currency",
    "valid_until",
    "quoted_on",
    "reference",
    "requested_units",
    "requested_instance_hours",
    "requested_from",
    "requested_until",
)
#: A request file's name: ``quote-request-<provider>.csv``.
REQUEST_PREFIX = "quote-request-"


def request_file_name(provider: str, taken: set[str]) -> str:
    """The file name of a provider's request: its name made safe for a file name, with a
    short digest of the provider's name when another provider's name made the same one."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", provider).strip("-.") or "provider"
    name = f"{REQUEST_PREFIX}{slug}.csv"
    if name in taken:
        digest = hashlib.sha256(provider.encode()).hexdigest()[:8]
        name = f"{REQUEST_PREFIX}{slug}-{digest}.csv"
    return name


def _one_line(text: str) -> str:
    """Text safe in a ``#`` comment line: no line breaks or other control characters."""
    return re.sub(r"[\x00-\x1f\x7f\u2028\u2029\x85]+", " ", str(text)).rstrip()


def _comment_lines(
    provider: str, prices: Sequence[CheckedPrice], check: PriceCheck, plan_ref: str
) -> list[str]:
    lines = [
        f"Quote request to {provider}, written by procure prices check",
        f"for the plan {check.problem} (total {check.total_cost_usd:,.2f} USD), {plan_ref}.",
        f"Fill in every {UNFILLED} cell: price_per_instance_hour (the price per instance-hour,",
        "in the line's currency; change currency if you bill in another), valid_until (the",
        "quote's last day, YYYY-MM-DD), quoted_on (the day you quote, YYYY-MM-DD) and",
        "reference (your quote's reference). The requested_* columns say what we plan to run:",
        "the most instances at once, their instance-hours, and the first and last day.",
        "Filled in, this is a quotes file: procure solve PROBLEM --quotes THIS_FILE (several",
        "filled requests: cat quote-request-*.csv > quotes.csv, then --quotes quotes.csv).",
        "The lines this request covers:",
    ]
    for p in prices:
        lines.append(
            f"  {p.offering} {p.mode} (term {p.term}): catalog {p.price_per_hour_in_currency:.4f}"
            f" {p.currency} per instance-hour, {p.confidence or 'unverified'}, dated "
            f"{p.price_date or 'unknown'}, {p.carried_usd:,.2f} USD in the plan"
        )
        for line in p.lines:
            when = f", {line.from_day} to {line.until_day}" if line.from_day else ""
            what = " ".join(x for x in (line.item, line.workload, line.block) if x)
            lines.append(
                f"    {line.period} {what}: {line.units:g} units x {line.hours:,.1f} h{when}"
            )
    return ["# " + _one_line(text) if text.strip() else "#" for text in lines]


def _row(p: CheckedPrice) -> dict[str, object]:
    return {
        "provider": p.provider,
        "region": p.region,
        "offering": p.offering,
        "term": p.term,
        "price_per_instance_hour": UNFILLED,
        "currency": p.currency,
        "valid_until": UNFILLED,
        "quoted_on": UNFILLED,
        "reference": UNFILLED,
        "requested_units": f"{p.peak_units:g}",
        "requested_instance_hours": f"{p.instance_hours:.1f}",
        "requested_from": p.from_day,
        "requested_until": p.until_day,
    }


def quote_requests(
    check: PriceCheck, prices: Sequence[CheckedPrice], plan_ref: str
) -> dict[str, str]:
    """The quote request files of ``prices`` (those a quote can confirm), one per provider.

    Parameters
    ----------
    check
        The plan's price check (its problem and total head each request).
    prices
        The prices to request, in the order they are listed; those that are not
        :attr:`~solver.analyses.price_check.CheckedPrice.to_confirm` are left out.
    plan_ref
        How the request names the plan (its file and digest), in one line.

    Returns
    -------
    dict
        File name (``quote-request-<provider>.csv``) -> CSV text; empty when nothing is to
        confirm.
    """
    by_provider: dict[str, list[CheckedPrice]] = {}
    for p in prices:
        if p.to_confirm:
            by_provider.setdefault(p.provider, []).append(p)
    files: dict[str, str] = {}
    for provider in sorted(by_provider):
        chosen = sorted(by_provider[provider], key=lambda p: (p.offering, p.mode))
        frame = pd.DataFrame([_row(p) for p in chosen], columns=list(REQUEST_COLUMNS))
        head = "\n".join(_comment_lines(provider, chosen, check, _one_line(plan_ref)))
        files[request_file_name(provider, set(files))] = head + "\n" + csv_text(frame)
    return files
