"""Commitments reconciled: the plan's reservations against the commitment rows of the bills.

FOCUS bills say how a commitment was used: its fee amortised onto usage rows that are
``PricingCategory`` Committed with ``CommitmentDiscountStatus`` ``Used`` (the hours it
covered) or ``Unused`` (hours paid for and not used); the plan's FOCUS 1.3 export writes
its own reservations the same way, with ``ContractApplied`` on those rows
(:mod:`solver.outputs.focus_contracts`). Per reserved instance (provider, region, instance
type) over the months compared (:class:`~solver.analyses.actuals.Actuals`), in USD:

- ``committed_usd``: the plan's reservation fees in those months (its commitment);
- ``used_usd``: billed Committed rows ``Used`` (or without a status: a 1.0 bill may leave
  it blank), the **burn-down**; ``burn_down_pct`` = used / committed x 100;
- ``unused_usd``: billed Committed rows ``Unused``, the **unused commitment** the
  provider reports;
- ``over_commitment_usd`` = max(0, committed - used): the commitment not burned down,
  however the bill words it (unused, or not billed at all);
- ``status``: ``planned`` (the plan commits to it), or ``unplanned commitment`` (the bills
  show a commitment the plan does not have; ``committed_usd`` 0).

Savings plans are spend commitments across instances; the bills' rows do not say which
planned savings plan covered them, so they are not reconciled here (their usage is in the
variance by line).
"""

from __future__ import annotations

import pandas as pd

from solver.analyses.actuals import Actuals

#: a reserved instance's identity in plan and bill
BURN_KEY = ["provider", "region", "instance_type"]
BURN_COLUMNS: tuple[str, ...] = (
    *BURN_KEY,
    "committed_usd",
    "used_usd",
    "unused_usd",
    "burn_down_pct",
    "over_commitment_usd",
    "status",
)


def commitment_burn(result: Actuals) -> pd.DataFrame:
    """The plan's reservations against the bills' commitment rows, one row per reserved
    instance (:data:`BURN_COLUMNS`; see the module docstring); empty when neither the
    plan nor the bills hold a commitment in the months compared."""

    def compared(frame: pd.DataFrame) -> pd.DataFrame:
        months = (frame["month"] >= result.first_month) & (frame["month"] <= result.last_month)
        return frame[months & (frame["pricing"] == "reserved")]

    planned = compared(result.planned)
    billed = compared(result.billed)
    status = (
        billed["commitment_status"].fillna("").str.lower()
        if "commitment_status" in billed
        else pd.Series("", index=billed.index)
    )
    committed = planned.groupby(BURN_KEY)["planned_usd"].sum()
    used = billed[status != "unused"].groupby(BURN_KEY)["cost_usd"].sum()
    unused = billed[status == "unused"].groupby(BURN_KEY)["cost_usd"].sum()
    keys = sorted(set(committed.index) | set(used.index) | set(unused.index))
    rows = []
    for key in keys:
        c = float(committed.get(key, 0.0))
        u = float(used.get(key, 0.0))
        rows.append(
            {
                **dict(zip(BURN_KEY, key, strict=True)),
                "committed_usd": c,
                "used_usd": u,
                "unused_usd": float(unused.get(key, 0.0)),
                "burn_down_pct": 100.0 * u / c if c > 0 else None,
                "over_commitment_usd": max(0.0, c - u),
                "status": "planned" if c > 0 else "unplanned commitment",
            }
        )
    return pd.DataFrame(rows, columns=list(BURN_COLUMNS))
