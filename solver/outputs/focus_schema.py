"""FOCUS column sets and allowed values (FOCUS 1.2 and 1.3) of :mod:`solver.outputs.focus`.

Sources: the FOCUS specification, https://focus.finops.org/focus-specification/v1-2/ and
https://focus.finops.org/focus-specification/v1-3/ (normative column text in the
``FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec`` repository, ``specification/columns``
and ``specification/datasets``); the 1.3 column sets agree with the FinOps Foundation's
FOCUS data model as ``focus-data-toolkit`` ships it (``schema/registry.py``:
Cost and Usage has 65 columns at 1.3).
"""

from __future__ import annotations

from solver.inputs.importers.focus_billing import PROVIDER_NAMES

#: Columns FOCUS 1.2 says MUST be present in every dataset (1.3 adds :data:`FOCUS_1_3_REQUIRED`).
FOCUS_REQUIRED: tuple[str, ...] = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "ServiceCategory",
    "ServiceName",
)
#: Conditional and recommended columns written as well (the provider supports them).
FOCUS_CONDITIONAL: tuple[str, ...] = (
    "ChargeFrequency",
    # InvoiceId (introduced 1.2; RECOMMENDED in 1.2, SHOULD be present in 1.3): written
    # null on every row, because it "MUST be null when the charge is not associated
    # either with an invoice or with a pre-generated provisional invoice" and a plan's
    # charges are forecast, not invoiced (FOCUS_Spec specification/datasets/
    # cost_and_usage/columns/invoiceid.md, 1.3; specification/columns/invoiceid.md, 1.2).
    "InvoiceId",
    "CommitmentDiscountCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountQuantity",
    "CommitmentDiscountStatus",
    "CommitmentDiscountType",
    "CommitmentDiscountUnit",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ContractedUnitPrice",
    "ListUnitPrice",
    "PricingCategory",
    "RegionId",
    "RegionName",
    "ServiceSubcategory",
    "SkuId",
    "SkuMeter",
    "SkuPriceDetails",
    "SkuPriceId",
    "PricingCurrency",
)
FOCUS_CUSTOM: tuple[str, ...] = (
    "x_PlanItem",
    "x_PlanPeriod",
    "x_Workload",
    "x_LoadBlock",
    "x_Offering",
    "x_Mode",
    "x_Accelerator",
    "x_Units",
    "x_ExchangeRateUsdPerUnit",
    "x_ExchangeRateDate",
    "x_BilledCostUsd",
    "x_EffectiveCostUsd",
)
#: FOCUS 1.2 cost rows' columns (``procure export --focus-version 1.2``).
FOCUS_1_2_COLUMNS = FOCUS_REQUIRED + FOCUS_CONDITIONAL + FOCUS_CUSTOM

#: Columns FOCUS 1.3 adds to Cost and Usage that it says MUST be present (its Column
#: Normative Requirements; ProviderName and PublisherName stay, deprecated, until 1.4).
FOCUS_1_3_REQUIRED: tuple[str, ...] = ("ServiceProviderName", "HostProviderName")
#: FOCUS 1.3's conditional column for a provider that supports contract commitments: a
#: JSON object ``{"Elements": [{"ContractId", "ContractCommitmentId",
#: "ContractCommitmentAppliedCost"}]}`` on the rows a commitment applies to.
FOCUS_1_3_CONDITIONAL: tuple[str, ...] = ("ContractApplied",)
#: Every column of FOCUS 1.3 cost rows, the default export.
FOCUS_COLUMNS = (
    FOCUS_REQUIRED + FOCUS_1_3_REQUIRED + FOCUS_CONDITIONAL + FOCUS_1_3_CONDITIONAL + FOCUS_CUSTOM
)

#: FOCUS 1.3 conditional and recommended Cost and Usage columns this export leaves out,
#: each with the condition it does not meet (the specification requires a conditional
#: column only where the provider supports the feature its condition names).
FOCUS_1_3_ABSENT: dict[str, str] = {
    "AvailabilityZone": "recommended only; a plan picks regions, not zones",
    "BillingAccountType": "one kind of billing account (the plan's)",
    "SubAccountId": "a plan has no sub accounts",
    "SubAccountName": "a plan has no sub accounts",
    "SubAccountType": "a plan has no sub accounts",
    "ResourceId": "a plan has no provisioned resources yet",
    "ResourceName": "a plan has no provisioned resources yet",
    "ResourceType": "a plan has no provisioned resources yet",
    "Tags": "a plan sets no tags",
    "CapacityReservationId": "no capacity reservation ids before purchase",
    "CapacityReservationStatus": "no capacity reservation ids before purchase",
    "AllocatedMethodId": "no split cost allocation",
    "AllocatedMethodDetails": "no split cost allocation",
    "AllocatedResourceId": "no split cost allocation",
    "AllocatedResourceName": "no split cost allocation",
    "AllocatedTags": "no split cost allocation",
    "PricingCurrencyContractedUnitPrice": "no virtual currency",
    "PricingCurrencyEffectiveCost": "no virtual currency",
    "PricingCurrencyListUnitPrice": "no virtual currency",
}

#: FOCUS 1.3's Contract Commitment dataset: its 13 columns, all of which MUST be present.
CONTRACT_COMMITMENT_COLUMNS: tuple[str, ...] = (
    "ContractCommitmentId",
    "ContractCommitmentType",
    "ContractCommitmentCategory",
    "ContractCommitmentCost",
    "ContractCommitmentQuantity",
    "ContractCommitmentUnit",
    "ContractCommitmentDescription",
    "ContractCommitmentPeriodStart",
    "ContractCommitmentPeriodEnd",
    "ContractId",
    "ContractPeriodStart",
    "ContractPeriodEnd",
    "BillingCurrency",
)
#: Contract Commitment columns that MUST NOT be null (1.3 column definitions).
CONTRACT_COMMITMENT_NOT_NULL: tuple[str, ...] = (
    "ContractCommitmentId",
    "ContractCommitmentType",
    "ContractCommitmentCategory",
    "ContractCommitmentPeriodStart",
    "ContractCommitmentPeriodEnd",
    "ContractId",
    "ContractPeriodStart",
    "ContractPeriodEnd",
)
#: Custom columns of the Contract Commitment file: the lifecycle status of the FOCUS
#: working draft (1.4's ContractCommitmentLifecycleStatus) and ties to the plan.
CONTRACT_COMMITMENT_CUSTOM: tuple[str, ...] = (
    "x_ContractCommitmentLifecycleStatus",
    "x_ServiceProviderName",
    "x_PlanItem",
    "x_PlanPeriod",
    "x_Offering",
    "x_Units",
    "x_ContractCommitmentCostUsd",
)
#: The lifecycle states of the working draft (1.4 ContractCommitmentLifecycleStatus);
#: a plan's commitments are Proposed until it is approved, then Active.
LIFECYCLE_STATUSES = (
    "Proposed",
    "Pending",
    "Active",
    "Exhausted",
    "Expired",
    "Canceled",
    "Superseded",
)
COMMITMENT_CATEGORIES_1_3 = ("Spend", "Usage")

#: Allowed values (FOCUS 1.2, unchanged in 1.3).
CHARGE_CATEGORIES = ("Adjustment", "Credit", "Purchase", "Tax", "Usage")
CHARGE_FREQUENCIES = ("One-Time", "Recurring", "Usage-Based")
PRICING_CATEGORIES = ("Standard", "Dynamic", "Committed", "Other")
COMMITMENT_STATUSES = ("Used", "Unused")
COMMITMENT_CATEGORIES = ("Spend", "Usage")
SERVICE_CATEGORIES = (
    "AI and Machine Learning",
    "Analytics",
    "Business Applications",
    "Compute",
    "Databases",
    "Developer Tools",
    "Multicloud",
    "Identity",
    "Integration",
    "Internet of Things",
    "Management and Governance",
    "Media",
    "Migration",
    "Mobile",
    "Networking",
    "Security",
    "Storage",
    "Web",
    "Other",
)

#: Provider ids -> the names on their invoices (ProviderName, PublisherName and
#: InvoiceIssuerName are display names, not ids): one table, the billing reader's.
PROVIDER_DISPLAY_NAMES = PROVIDER_NAMES

#: SkuPriceDetails' FOCUS-defined properties (1.2 and 1.3 skupricedetails.md, "FOCUS-Defined
#: Properties"); any other key MUST be prefixed ``x_``.
SKU_PRICE_DETAILS_KEYS: tuple[str, ...] = (
    "CoreCount",
    "DiskMaxIops",
    "DiskSpace",
    "DiskType",
    "GpuCount",
    "InstanceType",
    "InstanceSeries",
    "MemorySize",
    "NetworkMaxIops",
    "NetworkMaxThroughput",
    "OperatingSystem",
    "Redundancy",
    "StorageClass",
)
