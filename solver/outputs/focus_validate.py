"""Checks of FOCUS rows against the specification's rules (:func:`validate_focus`) and of
the Contract Commitment dataset (:func:`validate_contract_commitments`).

``procure export`` runs them on every export before writing it (a failure is a bug in
procure); the tests run them on hand-broken frames. Rules: FOCUS 1.2 and 1.3 column
definitions (https://focus.finops.org/focus-specification/v1-3/), as
:mod:`solver.outputs.focus_schema` lists them.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from solver.outputs.focus_schema import (
    CHARGE_CATEGORIES,
    CHARGE_FREQUENCIES,
    COMMITMENT_CATEGORIES,
    COMMITMENT_STATUSES,
    CONTRACT_COMMITMENT_COLUMNS,
    CONTRACT_COMMITMENT_NOT_NULL,
    FOCUS_1_3_CONDITIONAL,
    FOCUS_1_3_REQUIRED,
    FOCUS_CONDITIONAL,
    FOCUS_REQUIRED,
    LIFECYCLE_STATUSES,
    PRICING_CATEGORIES,
    PROVIDER_DISPLAY_NAMES,
    SERVICE_CATEGORIES,
    SKU_PRICE_DETAILS_KEYS,
)

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def validate_focus(frame: pd.DataFrame) -> list[str]:
    """Problems with a FOCUS frame against the FOCUS 1.2 rules this export relies on.

    Checks presence of every required column, nulls where the spec forbids
    them, allowed values, date format (``YYYY-MM-DDTHH:MM:SSZ``, end after
    start, charge period inside its billing period), ListCost = ListUnitPrice x
    PricingQuantity and ContractedCost = ContractedUnitPrice x PricingQuantity,
    EffectiveCost 0 on commitment purchases, and ``x_`` custom column names.
    Returns an empty list when the frame conforms.
    """
    problems: list[str] = []
    missing = [c for c in FOCUS_REQUIRED if c not in frame.columns]
    if missing:
        return [f"missing required column(s): {missing}"]
    known = set(FOCUS_REQUIRED) | set(FOCUS_CONDITIONAL)
    if any(c in frame for c in FOCUS_1_3_REQUIRED + FOCUS_1_3_CONDITIONAL):  # a 1.3 frame
        known |= set(FOCUS_1_3_REQUIRED) | set(FOCUS_1_3_CONDITIONAL)
        missing13 = [c for c in FOCUS_1_3_REQUIRED if c not in frame.columns]
        if missing13:
            return [f"missing required column(s): {missing13}"]
    problems += [
        f"custom column {c!r} lacks the x_ prefix"
        for c in frame.columns
        if c not in known and not c.startswith("x_")
    ]
    not_null = [
        "BilledCost",
        "BillingAccountId",
        "BillingCurrency",
        "BillingPeriodEnd",
        "BillingPeriodStart",
        "ChargeCategory",
        "ChargePeriodEnd",
        "ChargePeriodStart",
        "ContractedCost",
        "EffectiveCost",
        "InvoiceIssuerName",
        "ListCost",
        "ProviderName",
        "PublisherName",
        "ServiceCategory",
        "ServiceName",
    ]
    for c in not_null + [c for c in ("ChargeFrequency", "ServiceProviderName") if c in frame]:
        if frame[c].isna().any():
            problems.append(f"{c} has nulls")

    def allowed(column: str, values: tuple[str, ...], rows=None) -> None:
        if column not in frame:
            return
        series = frame[column] if rows is None else frame.loc[rows, column]
        bad = sorted(set(series.dropna()) - set(values))
        if bad:
            problems.append(f"{column} has values outside the allowed list: {bad}")

    allowed("ChargeCategory", CHARGE_CATEGORIES)
    allowed("ChargeFrequency", CHARGE_FREQUENCIES)
    allowed("ChargeClass", ("Correction",))
    allowed("PricingCategory", PRICING_CATEGORIES)
    allowed("CommitmentDiscountStatus", COMMITMENT_STATUSES)
    allowed("CommitmentDiscountCategory", COMMITMENT_CATEGORIES)
    allowed("ServiceCategory", SERVICE_CATEGORIES)
    if not frame["BillingCurrency"].dropna().str.fullmatch(r"[A-Z]{3}").all():
        problems.append("BillingCurrency is not an ISO 4217 code")
    purchase = frame["ChargeCategory"] == "Purchase"
    usage = frame["ChargeCategory"] == "Usage"
    priced = purchase | usage
    if (
        "ChargeFrequency" in frame
        and (purchase & (frame["ChargeFrequency"] == "Usage-Based")).any()
    ):
        problems.append("a Purchase row has ChargeFrequency Usage-Based")
    for c in (
        "PricingQuantity",
        "PricingUnit",
        "ListUnitPrice",
        "ContractedUnitPrice",
        "PricingCategory",
        "SkuId",
        "SkuPriceId",
    ):
        if c in frame and frame.loc[priced, c].isna().any():
            problems.append(f"{c} is null on a Usage or Purchase row")
    problems += _focus_commitment_problems(frame, usage, purchase)
    problems += _focus_date_problems(frame, problems)
    problems += _focus_price_and_name_problems(frame)
    if "ContractApplied" in frame:
        problems += contract_applied_problems(frame)
    return problems


def _focus_commitment_problems(frame: pd.DataFrame, usage, purchase) -> list[str]:
    """Commitment columns set together, purchases at EffectiveCost 0, consumed quantities."""
    problems: list[str] = []
    if "CommitmentDiscountId" in frame:
        has_cd = frame["CommitmentDiscountId"].notna()
        for c in (
            "CommitmentDiscountCategory",
            "CommitmentDiscountType",
            "CommitmentDiscountStatus",
        ):
            if c not in frame:
                continue
            if frame.loc[~has_cd, c].notna().any():
                problems.append(f"{c} is set on a row without CommitmentDiscountId")
        for c in ("CommitmentDiscountCategory", "CommitmentDiscountType"):
            if c in frame and frame.loc[has_cd, c].isna().any():
                problems.append(f"{c} is null on a commitment row")
        if frame.loc[has_cd & usage, "CommitmentDiscountStatus"].isna().any():
            problems.append("CommitmentDiscountStatus is null on a commitment Usage row")
        if (frame.loc[has_cd & purchase, "EffectiveCost"].abs() > 1e-9).any():
            problems.append("EffectiveCost is not 0 on a commitment purchase")
        if (has_cd & usage & (frame["PricingCategory"] != "Committed")).any():
            problems.append("PricingCategory is not Committed on commitment usage")
    if "ConsumedQuantity" in frame:
        unused = frame.get("CommitmentDiscountStatus") == "Unused"
        if frame.loc[~usage | unused, "ConsumedQuantity"].notna().any():
            problems.append("ConsumedQuantity is set on a row that is not used usage")
    return problems


def _focus_date_problems(frame: pd.DataFrame, problems_so_far: list[str]) -> list[str]:
    """Date format; charge periods that end after they start, inside their billing period
    (checked only when nothing else is wrong, as the dates must parse)."""
    problems: list[str] = []
    for c in ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"):
        if not frame[c].astype(str).str.match(_DATE_RE).all():
            problems.append(f"{c} is not YYYY-MM-DDTHH:MM:SSZ")
    if not problems and not problems_so_far:
        cs, ce = (
            pd.to_datetime(frame["ChargePeriodStart"]),
            pd.to_datetime(frame["ChargePeriodEnd"]),
        )
        bs, be = (
            pd.to_datetime(frame["BillingPeriodStart"]),
            pd.to_datetime(frame["BillingPeriodEnd"]),
        )
        if (ce <= cs).any():
            problems.append("a charge period ends before it starts")
        if ((cs < bs) | (ce > be)).any():
            problems.append("a charge period lies outside its billing period")
    return problems


def _focus_price_and_name_problems(frame: pd.DataFrame) -> list[str]:
    """Costs = unit price x quantity; display names, not ids; SkuMeter and SkuPriceDetails."""
    problems: list[str] = []
    for cost, price in (("ListCost", "ListUnitPrice"), ("ContractedCost", "ContractedUnitPrice")):
        if price in frame:
            rows = frame[price].notna() & frame["PricingQuantity"].notna()
            product = frame.loc[rows, price].astype(float) * frame.loc[
                rows, "PricingQuantity"
            ].astype(float)
            if not np.allclose(product, frame.loc[rows, cost].astype(float), rtol=1e-9, atol=1e-6):
                problems.append(f"{cost} != {price} x PricingQuantity")
    # display names, not ids (ProviderName "vast" is an id; "Vast.ai" the name)
    for column in ("ProviderName", "PublisherName", "InvoiceIssuerName"):
        raw = sorted(set(frame[column]) & set(PROVIDER_DISPLAY_NAMES))
        if raw:
            problems.append(f"{column} holds provider ids, not names: {raw}")
    if "SkuPriceId" in frame:
        priced = frame["SkuPriceId"].notna()
        if "SkuMeter" not in frame or frame.loc[priced, "SkuMeter"].isna().any():
            problems.append("SkuMeter missing where SkuPriceId is given")
        for text in frame.loc[priced, "SkuPriceDetails"] if "SkuPriceDetails" in frame else []:
            try:
                ok = isinstance(json.loads(text), dict)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                problems.append(f"SkuPriceDetails is not a JSON object: {text!r}")
                break
            custom = [k for k in json.loads(text) if k not in SKU_PRICE_DETAILS_KEYS]
            if any(not k.startswith("x_") for k in custom):
                problems.append(f"SkuPriceDetails has custom keys not prefixed x_: {text!r}")
                break
    return problems


def contract_applied_problems(frame: pd.DataFrame) -> list[str]:
    """FOCUS 1.3 ContractApplied: null or a JSON object whose ``Elements`` is a non-empty
    array of objects, each with ``ContractId`` and ``ContractCommitmentId`` (strings) and
    a numeric ``ContractCommitmentAppliedCost`` or ``ContractCommitmentAppliedQuantity``
    with ``ContractCommitmentAppliedUnit``; custom keys ``x_``-prefixed."""
    known = {
        "ContractId",
        "ContractCommitmentId",
        "ContractCommitmentAppliedCost",
        "ContractCommitmentAppliedQuantity",
        "ContractCommitmentAppliedUnit",
    }
    for text in frame["ContractApplied"].dropna():
        try:
            value = json.loads(text)
        except (TypeError, ValueError):
            return [f"ContractApplied is not JSON: {text!r}"]
        elements = value.get("Elements") if isinstance(value, dict) else None
        if not isinstance(elements, list) or not elements:
            return [f"ContractApplied has no Elements array: {text!r}"]
        bad_top = [k for k in value if k != "Elements" and not k.startswith("x_")]
        if bad_top:
            return [f"ContractApplied has keys not prefixed x_: {bad_top}"]
        for element in elements:
            if not isinstance(element, dict):
                return [f"a ContractApplied element is not an object: {text!r}"]
            ids = [element.get("ContractId"), element.get("ContractCommitmentId")]
            if not all(isinstance(i, str) and i for i in ids):
                return [
                    f"a ContractApplied element lacks ContractId or ContractCommitmentId: {text!r}"
                ]
            cost = element.get("ContractCommitmentAppliedCost")
            quantity = element.get("ContractCommitmentAppliedQuantity")
            if not isinstance(cost, (int, float)) and not (
                isinstance(quantity, (int, float))
                and isinstance(element.get("ContractCommitmentAppliedUnit"), str)
            ):
                return [
                    f"a ContractApplied element has no numeric applied cost or quantity: {text!r}"
                ]
            extra = [k for k in element if k not in known and not k.startswith("x_")]
            if extra:
                return [f"a ContractApplied element has keys not prefixed x_: {extra}"]
    return []


def validate_contract_commitments(
    frame: pd.DataFrame, cost_rows: pd.DataFrame | None = None
) -> list[str]:
    """Problems with a FOCUS 1.3 Contract Commitment frame: its 13 columns present, the
    identity, category and period columns not null, ContractCommitmentCategory Spend or
    Usage, quantity and unit set together (null for Spend), dates
    ``YYYY-MM-DDTHH:MM:SSZ`` with each commitment inside its contract's period, the
    lifecycle status one of the working draft's; with ``cost_rows``, every
    ContractApplied element names a commitment of the dataset (and of its contract).
    Returns an empty list when the frame conforms."""
    missing = [c for c in CONTRACT_COMMITMENT_COLUMNS if c not in frame.columns]
    if missing:
        return [f"missing required column(s): {missing}"]
    problems = [
        f"custom column {c!r} lacks the x_ prefix"
        for c in frame.columns
        if c not in CONTRACT_COMMITMENT_COLUMNS and not c.startswith("x_")
    ]
    problems += [f"{c} has nulls" for c in CONTRACT_COMMITMENT_NOT_NULL if frame[c].isna().any()]
    if frame["ContractCommitmentId"].duplicated().any():
        problems.append("ContractCommitmentId is not unique")
    bad = sorted(set(frame["ContractCommitmentCategory"].dropna()) - set(COMMITMENT_CATEGORIES))
    if bad:
        problems.append(f"ContractCommitmentCategory has values outside the allowed list: {bad}")
    if "x_ContractCommitmentLifecycleStatus" in frame:
        bad = sorted(
            set(frame["x_ContractCommitmentLifecycleStatus"].dropna()) - set(LIFECYCLE_STATUSES)
        )
        if bad:
            problems.append(
                f"x_ContractCommitmentLifecycleStatus has values outside the allowed list: {bad}"
            )
    if (frame["ContractCommitmentQuantity"].isna() != frame["ContractCommitmentUnit"].isna()).any():
        problems.append(
            "ContractCommitmentQuantity and ContractCommitmentUnit are not set together"
        )
    spend = frame["ContractCommitmentCategory"] == "Spend"
    if frame.loc[spend, "ContractCommitmentQuantity"].notna().any():
        problems.append("ContractCommitmentQuantity is set on a Spend commitment")
    if not frame["BillingCurrency"].dropna().astype(str).str.fullmatch(r"[A-Z]{3}").all():
        problems.append("BillingCurrency is not an ISO 4217 code")
    dates = (
        "ContractCommitmentPeriodStart",
        "ContractCommitmentPeriodEnd",
        "ContractPeriodStart",
        "ContractPeriodEnd",
    )
    for c in dates:
        if not frame[c].astype(str).str.match(_DATE_RE).all():
            problems.append(f"{c} is not YYYY-MM-DDTHH:MM:SSZ")
    if not problems:
        cs, ce, ks, ke = (pd.to_datetime(frame[c]) for c in dates)
        if ((ce <= cs) | (ke <= ks)).any():
            problems.append("a commitment or contract period ends before it starts")
        if ((cs < ks) | (ce > ke)).any():
            problems.append("a commitment's period lies outside its contract's period")
    if cost_rows is not None and "ContractApplied" in cost_rows:
        pairs = set(zip(frame["ContractId"], frame["ContractCommitmentId"], strict=True))
        for text in cost_rows["ContractApplied"].dropna():
            for e in json.loads(text)["Elements"]:
                if (e["ContractId"], e["ContractCommitmentId"]) not in pairs:
                    problems.append(
                        f"ContractApplied names {e['ContractCommitmentId']!r} of "
                        f"{e['ContractId']!r}, not in the Contract Commitment dataset"
                    )
                    return problems
    return problems
