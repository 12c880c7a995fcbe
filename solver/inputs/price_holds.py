"""Prices held for review: a feed's price that is not a price an instance could cost.

A pulled price (``procure prices pull``) is held, not stored as the offering's latest
price, when it is:

- **zero or negative**: no cloud rents an instance for nothing; a ``0.00`` is a
  placeholder (a product sold another way, a price not published yet);
- **not finite** (NaN, inf): no figure at all;
- **above the market ceiling**, :data:`~solver.inputs.quotes.MAX_USD_PER_INSTANCE_HOUR`
  ($10,000 per instance-hour, the bound vendor quotes are held to: no quote comes near
  it, a larger figure is a monthly or yearly price in the hourly column) per server of
  up to :data:`SERVER_ACCELERATORS` accelerators: an instance of n accelerators (a TPU
  pod slice: SkyPilot's GCP catalog prices tpu-v5p-12288, 6,144 chips, at $27,399/h) is
  n / 8 such servers, and its ceiling n / 8 times as high;
- **implausible against the offering's own history**: more than :data:`HOLD_FACTOR`
  times, or less than 1 / :data:`HOLD_FACTOR` of, its reference price, the latest
  stored snapshot's price of the same offering and mode, else the catalog's.

Why x10 and not the x2 that ``resolve`` and ``watch`` apply (``--max-factor``,
:data:`solver.inputs.prices.DEFAULT_MAX_FACTOR`): a snapshot is a record of what the
source said, and real list prices do move by more than half (AWS cut P4d and P5
on-demand prices by up to 45% in June 2025; the AWS sample offer file prices p4d at
x1.49 the catalog's). The x2 check still applies when a snapshot's prices are applied to
a plan. An order of magnitude is what the slips that reach a feed look like: a monthly
price for an hourly one (x730), cents for dollars (x100), a lost decimal point (x10). A
per-GPU price for an 8-GPU instance (/8) is within it and is left to the x2 check.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Protocol, cast

import pandas as pd

from solver.inputs.quotes import MAX_USD_PER_INSTANCE_HOUR

#: a price more than this times its reference (or less than its inverse) is held
HOLD_FACTOR = 10.0
#: accelerators of the largest common server (an HGX board's 8 GPUs, a quote's instance)
SERVER_ACCELERATORS = 8
#: the reason of a held price in a snapshot's ``unmapped`` list starts with this
HELD_PREFIX = "held for review"
HELD_COLUMNS = ["provider", "region", "offering", "offering_id", "mode", "price"]
HELD_COLUMNS += ["reference_usd", "reason"]


def ceiling_usd(accelerators: int) -> float:
    """The market ceiling of an instance of ``accelerators`` (0: unknown), USD per
    instance-hour (module docstring)."""
    return MAX_USD_PER_INSTANCE_HOUR * max(1.0, accelerators / SERVER_ACCELERATORS)


def hold_reason(
    price_usd: float, reference_usd: float | None, reference: str, accelerators: int = 0
) -> str:
    """Why ``price_usd`` (USD per instance-hour) is held, or '' when it is not.

    Parameters
    ----------
    price_usd
        The price read.
    reference_usd
        The offering's reference price in the same mode (USD per instance-hour), None
        when there is none.
    reference
        What the reference is ("the previous snapshot (2026-10-15)", "the catalog").
    accelerators
        The instance's accelerators (0 when not known), for the market ceiling.
    """
    if not math.isfinite(price_usd):
        return f"the price {price_usd!r} is not a number"
    if price_usd <= 0:
        return f"the price ${price_usd:g}/h is not above zero"
    ceiling = ceiling_usd(accelerators)
    if price_usd > ceiling:
        per = "" if ceiling == MAX_USD_PER_INSTANCE_HOUR else f" for {accelerators} accelerators"
        return (
            f"the price ${price_usd:,.6g}/h is above ${ceiling:,.0f} per instance-hour{per}, "
            "more than any quote (a monthly or yearly price as hourly?)"
        )
    if reference_usd is None or not math.isfinite(reference_usd) or reference_usd <= 0:
        return ""
    ratio = price_usd / reference_usd
    if ratio > HOLD_FACTOR or ratio < 1.0 / HOLD_FACTOR:
        return (
            f"the price ${price_usd:,.6g}/h is x{ratio:.3g} the ${reference_usd:,.6g}/h of "
            f"{reference} (more than x{HOLD_FACTOR:g} either way)"
        )
    return ""


class _PricedRow(Protocol):
    """A priced row as :func:`split_held` reads it (price in USD per instance-hour)."""

    offering_id: str
    mode: str
    price: float


def split_held(
    rows: pd.DataFrame, references: dict[tuple[str, str], tuple[float, str]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows whose price may be stored, and those held (:data:`HELD_COLUMNS`).

    Parameters
    ----------
    rows
        Priced rows with ``provider, region, offering, offering_id, mode, price`` (price
        numeric, USD per instance-hour; NaN for a figure that is not a number) and
        optionally ``accelerators`` (per instance, 0 when not known).
    references
        (offering_id, mode) -> (reference price in USD per instance-hour, what it is).
    """
    reasons = []
    refs = []
    counts = rows["accelerators"] if "accelerators" in rows.columns else [0] * len(rows)
    # the stubs type a row's fields as any scalar; the docstring names these columns
    priced = cast("Iterator[_PricedRow]", rows.itertuples(index=False))
    for r, count in zip(priced, counts, strict=True):
        ref, what = references.get((str(r.offering_id), str(r.mode)), (None, ""))
        n = int(count) if pd.notna(count) else 0
        reasons.append(hold_reason(float(r.price), ref, what, n))
        refs.append(float("nan") if ref is None else float(ref))
    reasons_s = pd.Series(reasons, index=rows.index, dtype=object)
    held_mask = reasons_s != ""
    held = rows.loc[held_mask].assign(
        reference_usd=pd.Series(refs, index=rows.index)[held_mask], reason=reasons_s[held_mask]
    )
    return rows.loc[~held_mask], held[HELD_COLUMNS].reset_index(drop=True)


def held_from_listed(unmapped_json: str) -> pd.DataFrame:
    """The held prices of a stored snapshot's list of what it did not store (its
    ``unmapped_json``): ``offering_id, mode, price, reason``, price in USD per
    instance-hour (NaN or inf as held)."""
    import json

    columns = ["offering_id", "mode", "price", "reason"]
    held = [
        {c: r.get(c, "") for c in columns}
        for r in json.loads(unmapped_json or "[]")
        if isinstance(r, dict) and str(r.get("reason", "")).startswith(HELD_PREFIX)
    ]
    out = pd.DataFrame(held, columns=columns)
    out["price"] = pd.to_numeric(out["price"], errors="coerce")
    return out


__all__ = ["HELD_COLUMNS", "HELD_PREFIX", "HOLD_FACTOR", "ceiling_usd", "hold_reason"]
__all__ += ["held_from_listed", "split_held"]
