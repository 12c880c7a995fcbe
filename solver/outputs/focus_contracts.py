"""FOCUS 1.3 contract commitments of a plan: ``ContractApplied`` on its cost rows and the
Contract Commitment dataset.

FOCUS 1.3 (https://focus.finops.org/focus-specification/v1-3/) adds a Contract Commitment
dataset (one row per commitment of a contract: its category, cost, quantity and period)
and a ``ContractApplied`` column on Cost and Usage rows, a JSON object whose ``Elements``
name the contract and commitment a row applies to and the amount it applies
(``ContractCommitmentAppliedCost``, in the row's billing currency).

A plan's commitments, one contract per invoice issuer (``ContractId``
``<billing account>:<InvoiceIssuerName>``: the provider, or the server seller):

- a reservation (``Usage``, its instance-hours) or an existing one (already signed, so
  ``Active`` whatever the plan's state);
- a savings plan (``Spend``: no quantity);
- a capacity block (``Usage``, its instance-hours, bought whole);
- servers bought (``Usage``, in units: the one-time purchase row).

``ContractApplied`` is set on the rows a commitment burns down: its purchase rows
(``BilledCost`` applied) and the ``Used`` and ``Unused`` rows its fee is amortised onto
(``EffectiveCost`` applied), a capacity block's rows, a server purchase's capex row.
A commitment's ``ContractCommitmentCost`` is the sum of ``BilledCost`` over its rows.

Lifecycle: FOCUS 1.3 has no lifecycle column; the working draft (FOCUS 1.4's
``ContractCommitmentLifecycleStatus``) gives commitments the states Proposed ("being
negotiated or modeled"), Pending, Active, Exhausted, Expired, Canceled and Superseded.
The file carries it as the custom column ``x_ContractCommitmentLifecycleStatus``:
``Proposed`` for a plan not yet approved, ``Active`` once the workspace approves it.
"""

from __future__ import annotations

import json

import pandas as pd

from solver.outputs.focus_schema import CONTRACT_COMMITMENT_COLUMNS, CONTRACT_COMMITMENT_CUSTOM

#: a plan line kind -> ContractCommitmentType (reservations and savings plans take the
#: row's CommitmentDiscountType, which names the term)
_TYPES = {"capacity_block": "Capacity Block", "purchase": "Hardware Purchase"}


def commitment_id(row: pd.Series) -> str | None:
    """The ContractCommitmentId of a FOCUS cost row, or None when no commitment applies.

    Reservations and savings plans keep their ``CommitmentDiscountId``; a capacity block
    is ``planned:<offering>@<period>``; a server purchase's capex row
    ``planned:purchase:<offering>:<region>@<period>``.
    """
    item = row.get("x_PlanItem")
    if item in ("reservation", "existing", "savings_plan"):
        cid = row.get("CommitmentDiscountId")
        return str(cid) if isinstance(cid, str) and cid else None
    if item == "capacity_block":
        return f"planned:{row['x_Offering']}@{row['x_PlanPeriod']}"
    if item == "purchase" and row.get("ChargeCategory") == "Purchase":
        return f"planned:purchase:{row['x_Offering']}:{row['RegionId']}@{row['x_PlanPeriod']}"
    return None


def contract_id(row: pd.Series) -> str:
    """The ContractId of a commitment's row: one contract per account and invoice issuer
    (the provider for cloud commitments, the server seller for servers bought)."""
    return f"{row['BillingAccountId']}:{row['InvoiceIssuerName']}"


def with_contract_applied(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (FOCUS 1.3 cost rows) with ``ContractApplied`` set on the rows a
    commitment burns down (see the module docstring); null elsewhere."""
    out = frame.copy()
    values: list[str | None] = []
    for _, row in out.iterrows():
        cid = commitment_id(row)
        if cid is None:
            values.append(None)
            continue
        applied = row["BilledCost"] if row["ChargeCategory"] == "Purchase" else row["EffectiveCost"]
        element = {
            "ContractId": contract_id(row),
            "ContractCommitmentId": cid,
            "ContractCommitmentAppliedCost": round(float(applied), 10),
        }
        values.append(json.dumps({"Elements": [element]}, sort_keys=True))
    out["ContractApplied"] = values
    return out


def contract_commitment_frame(frame: pd.DataFrame, *, lifecycle: str = "Proposed") -> pd.DataFrame:
    """The FOCUS 1.3 Contract Commitment dataset of a plan's cost rows (``frame``, with
    ``ContractApplied`` set): one row per commitment, its contract's period spanning all
    of the provider's commitments.

    Parameters
    ----------
    lifecycle
        ``x_ContractCommitmentLifecycleStatus`` of the plan's new commitments:
        ``Proposed`` until the plan is approved, then ``Active`` (existing reservations
        are ``Active`` always).
    """
    columns = list(CONTRACT_COMMITMENT_COLUMNS + CONTRACT_COMMITMENT_CUSTOM)
    rows = frame[frame["ContractApplied"].notna()].copy()
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows["_cid"] = [
        json.loads(t)["Elements"][0]["ContractCommitmentId"] for t in rows["ContractApplied"]
    ]
    rows["_contract"] = [
        json.loads(t)["Elements"][0]["ContractId"] for t in rows["ContractApplied"]
    ]
    out: list[dict] = []
    for cid, group in rows.groupby("_cid", sort=True):
        first = group.iloc[0]
        item = str(first["x_PlanItem"])
        spend = first["CommitmentDiscountCategory"] == "Spend"
        if item in ("reservation", "existing"):
            purchases = group[group["ChargeCategory"] == "Purchase"]
            quantity, unit = float(purchases["CommitmentDiscountQuantity"].sum()), "Hours"
        elif item == "capacity_block":
            quantity, unit = float(group["PricingQuantity"].sum()), "Hours"
        elif item == "purchase":
            quantity, unit = float(group["x_Units"].sum()), "Units"
        else:
            quantity, unit = None, None
        out.append(
            {
                "ContractCommitmentId": cid,
                "ContractCommitmentType": _TYPES.get(item) or first["CommitmentDiscountType"],
                "ContractCommitmentCategory": "Spend" if spend else "Usage",
                "ContractCommitmentCost": float(group["BilledCost"].sum()),
                "ContractCommitmentQuantity": None if spend else quantity,
                "ContractCommitmentUnit": None if spend else unit,
                "ContractCommitmentDescription": first["CommitmentDiscountName"]
                if isinstance(first["CommitmentDiscountName"], str)
                else str(first["ChargeDescription"]),
                "ContractCommitmentPeriodStart": group["ChargePeriodStart"].min(),
                "ContractCommitmentPeriodEnd": group["ChargePeriodEnd"].max(),
                "ContractId": first["_contract"],
                "BillingCurrency": first["BillingCurrency"],
                "x_ContractCommitmentLifecycleStatus": "Active"
                if item == "existing"
                else lifecycle,
                "x_ServiceProviderName": first["ServiceProviderName"],
                "x_PlanItem": item,
                "x_PlanPeriod": first["x_PlanPeriod"],
                "x_Offering": first["x_Offering"],
                "x_Units": first["x_Units"],
                "x_ContractCommitmentCostUsd": float(group["x_BilledCostUsd"].sum()),
            }
        )
    result = pd.DataFrame(out)
    span = result.groupby("ContractId").agg(
        start=("ContractCommitmentPeriodStart", "min"), end=("ContractCommitmentPeriodEnd", "max")
    )
    result["ContractPeriodStart"] = result["ContractId"].map(span["start"])
    result["ContractPeriodEnd"] = result["ContractId"].map(span["end"])
    return result[columns]
