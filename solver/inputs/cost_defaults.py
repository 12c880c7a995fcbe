"""The cost categories' defaults: what a plan carries beside compute when the problem does
not give a category under ``costs:`` (all-in by default, issue 49 Build 1).

Each default is sized from the workloads and the plan, priced per provider where a
provider's own page states a price, and names its source on the plan's cost line
(catalogs/SOURCES.md, "Cost categories beside compute: the defaults"):

- storage: each training workload's dataset (tokens x :data:`DATASET_BYTES_PER_TOKEN`)
  and :data:`CHECKPOINTS_KEPT` checkpoint (parameters x :func:`checkpoint_bytes_per_param`)
  held at the provider that trains it, every month of the horizon, at
  :data:`STORAGE_USD_PER_GB_MONTH` (the reference price where the provider states none);
- egress: each serving deployment's output tokens x :data:`OUTPUT_BYTES_PER_TOKEN` at
  :data:`EGRESS_USD_PER_GB` (0 where the provider states it charges none; owned servers
  at a colocation's published per-GB transfer price);
- support: :data:`SUPPORT_DEFAULT` per provider the plan spends with (AWS Business; a
  provider that bills no support plan: none);
- staff: :data:`STAFF_USD_PER_INSTANCE_YEAR` per rented or reserved instance in use;
- taxes: where the problem names a ``tax_jurisdiction``, its VAT or consumption tax rate
  (:data:`TAX_RATE_PERCENT`) on everything each cloud provider bills; none without one
  (unless it gives ``costs.taxes``);
- contingency: 0 (the problem sets ``costs.contingency_percent``).

``costs: none`` turns every default off; a category given under ``costs:`` replaces its
default (an empty list zeroes it).
"""

from __future__ import annotations

from solver.physics.constants import LORA_TRAINABLE_FRACTION

#: Bytes per token of text, in a dataset and in an answer sent to a user: "one token
#: generally corresponds to ~4 characters of text for common English text" (OpenAI,
#: help.openai.com "What are tokens and how to count them?"; platform.openai.com/tokenizer),
#: one byte per character in UTF-8 for English. Protocol overhead (HTTP, SSE framing) is
#: not counted.
DATASET_BYTES_PER_TOKEN = 4.0
OUTPUT_BYTES_PER_TOKEN = 4.0
BYTES_PER_TOKEN_SOURCE = (
    "OpenAI, 'What are tokens and how to count them?' (help.openai.com): ~4 characters of "
    "English text per token, 1 byte per character in UTF-8"
)
#: Checkpoints of a training job kept for the horizon: the last one (the model a serving
#: workload loads, and what a restart resumes from).
CHECKPOINTS_KEPT = 1
#: Bytes per trainable parameter that a resumable checkpoint does not hold: the fp32
#: gradients of ZeRO's mixed-precision AdamW state (Rajbhandari et al., "ZeRO", SC'20,
#: section 3.1; solver/physics/training.py), recomputed on the next step.
_GRADIENT_BYTES = 4.0
_STATE_BYTES = {"adamw": 18.0, "sgd": 14.0}  # solver.physics.training's state per param
CHECKPOINT_SOURCE = (
    "Rajbhandari et al., 'ZeRO: Memory Optimizations Toward Training Trillion Parameter "
    "Models', SC'20, section 3.1: mixed-precision AdamW holds bf16 weights 2 + fp32 master "
    "weights 4 + Adam moments 8 bytes per parameter (the fp32 gradients, 4 more, are not "
    "checkpointed)"
)


def checkpoint_bytes_per_param(optimizer: str) -> float:
    """Bytes per (total) parameter of one resumable checkpoint: the training state of
    :func:`solver.physics.training.training_state_bytes_per_param` less the gradients;
    LoRA (and QLoRA) keep the frozen base weights (2 bytes; 0.5 at 4 bits) and the
    adapters' state on :data:`LORA_TRAINABLE_FRACTION` of the parameters."""
    if optimizer in _STATE_BYTES:
        return _STATE_BYTES[optimizer] - _GRADIENT_BYTES
    base = {"lora": 2.0, "qlora": 0.5}.get(optimizer)
    if base is None:
        raise ValueError(f"unknown optimizer {optimizer!r}; use adamw, sgd, lora or qlora")
    return base + (_STATE_BYTES["adamw"] - _GRADIENT_BYTES) * LORA_TRAINABLE_FRACTION


_GIB_PER_GB = 1e9 / 2**30
_LAMBDA_BILLING = (
    "docs.lambda.ai/public-cloud/billing (Lambda Cloud bills instances, 1-Click Clusters "
    "and filesystems only"
)
_AWS_S3 = "aws.amazon.com/s3/pricing: S3 Standard, first 50 TB/month, US East (N. Virginia)"
_AWS_EGRESS = (
    "aws.amazon.com/ec2/pricing/on-demand: data transfer out from EC2 to the internet, first "
    "10 TB/month"
)
#: provider -> (USD per GB-month, source): the provider's own published storage price.
STORAGE_USD_PER_GB_MONTH: dict[str, tuple[float, str]] = {
    "aws": (0.023, _AWS_S3),
    "lambda": (
        0.20 * _GIB_PER_GB,
        _LAMBDA_BILLING + "; filesystems $0.20 per GiB per month, the page's example rate) "
        "= $0.1863 per GB-month",
    ),
}
#: The price where a provider states none: S3 Standard's (an assumption, said on the line).
STORAGE_REFERENCE: tuple[float, str] = (
    0.023,
    "no storage price of this provider read: S3 Standard's $0.023/GB-month as a reference "
    f"({_AWS_S3}); give costs.storage with usd_per_gb_month to use its own",
)
#: provider -> (USD per GB to the internet, source): the first published band, or 0 where
#: the provider states it charges none.
EGRESS_USD_PER_GB: dict[str, tuple[float, str]] = {
    "aws": (0.09, _AWS_EGRESS),
    "lambda": (0.0, _LAMBDA_BILLING + ": 'you are not charged for ingress or egress')"),
    # owned servers at a colocation site: its own metered transit, not a cloud's egress
    "owned": (
        0.05,
        "arizonacolocation.com/blog/colocation-bandwidth-guide ('Understanding Colocation "
        "Bandwidth'): colocation per-GB transfer $0.01-0.05/GB, the top of the range taken "
        "(a site with committed or unmetered transit pays a flat fee instead: give "
        "costs.egress with provider owned and usd_per_gb)",
    ),
}
EGRESS_REFERENCE: tuple[float, str] = (
    0.09,
    "no egress price of this provider read: AWS's $0.09/GB (first band) as a reference "
    f"({_AWS_EGRESS}); give costs.egress with usd_per_gb to use its own (0 if it charges "
    "none)",
)
#: provider -> (published support plan name under solver.inputs.costs.SUPPORT_PLANS, or ''
#: for none, source): the plan charged by default on the plan's spend with the provider.
SUPPORT_DEFAULT: dict[str, tuple[str, str]] = {
    "aws": (
        "business",
        "AWS Business, the lowest plan with 24/7 access and a 1-hour response to a "
        "production system down (aws.amazon.com/premiumsupport/plans); fees from "
        "aws.amazon.com/premiumsupport/pricing (read 2026-11-25 from a stored copy)",
    ),
    "lambda": ("", _LAMBDA_BILLING + ": no support plan is billed)"),
}
SUPPORT_NONE = (
    "no paid support plan of this provider read: none charged; give costs.support with "
    "its minimum and bands if it bills one"
)
#: USD per rented instance per year for the people who run it: one administrator per 140
#: servers (catalogs/SOURCES.md STAFF_BY_SIZE, Armbrust et al. 2009 Table 2, the medium
#: data centre, as the owned sites' staff below 1,000 servers) at $135,262.41 a year
#: (STAFF_LOADING: BLS median pay $95,360 / 0.705 wages' share of compensation), a rented
#: instance counted as one server: $135,262.41 / 140 = $966.16.
STAFF_USD_PER_INSTANCE_YEAR = 135_262.41 / 140.0
STAFF_DEFAULT_SOURCE = (
    "catalogs/SOURCES.md STAFF_BY_SIZE and STAFF_LOADING: one administrator per 140 servers "
    "(Armbrust et al., 'Above the Clouds', UC Berkeley EECS-2009-28, Table 2, medium data "
    "centre) at $135,262.41 a year (BLS median pay $95,360 / 0.705, BLS ECEC Dec. 2024), a "
    "rented instance counted as one server: $966.16 per instance-year"
)
TAX_NONE = (
    "no jurisdiction named: no tax (name tax_jurisdiction, e.g. DE, or give costs.taxes with "
    "a provider and rate_percent)"
)
_AWS_VAT = (
    "aws.amazon.com/tax-help/emea-vat-tables (VAT/GST AWS charges accounts in the country, "
    "with or without a tax registration number)"
)
_AWS_JCT = (
    "aws.amazon.com/tax-help/japan (Japanese Consumption Tax at 10% on cloud services to "
    "accounts in Japan since 1 October 2019; prices on the website exclude it)"
)
#: ISO 3166 country code -> (percent, source): the VAT or consumption tax a cloud provider
#: charges a business buying cloud services with its account in the country (the rate AWS
#: publishes it charges there), applied to every cloud provider's bills as the buyer's
#: tax on imported electronic services (EU reverse charge at the same standard rate).
#: Whether the buyer recovers it (input VAT) is its own accounts' question: the plan
#: shows the tax paid.
TAX_RATE_PERCENT: dict[str, tuple[float, str]] = {
    "DE": (19.0, _AWS_VAT + ": Germany 19%"),
    "FR": (20.0, _AWS_VAT + ": France 20%"),
    "GB": (20.0, _AWS_VAT + ": United Kingdom 20%"),
    "IE": (23.0, _AWS_VAT + ": Ireland 23%"),
    "IT": (22.0, _AWS_VAT + ": Italy 22%"),
    "NL": (21.0, _AWS_VAT + ": Netherlands 21%"),
    "ES": (21.0, _AWS_VAT + ": Spain 21%"),
    "SE": (25.0, _AWS_VAT + ": Sweden 25%"),
    "PL": (23.0, _AWS_VAT + ": Poland 23%"),
    "NO": (25.0, _AWS_VAT + ": Norway 25%"),
    "JP": (10.0, _AWS_JCT),
}
CONTINGENCY_NONE = "costs.contingency_percent not set: 0 (the problem sets a reserve)"


def storage_price(provider: str) -> tuple[float, str]:
    """(USD per GB-month, source) of a provider's storage by default."""
    return STORAGE_USD_PER_GB_MONTH.get(provider, STORAGE_REFERENCE)


def egress_price(provider: str) -> tuple[float, str]:
    """(USD per GB, source) of a provider's egress to the internet by default."""
    return EGRESS_USD_PER_GB.get(provider, EGRESS_REFERENCE)


def tax_rate(jurisdiction: str | None) -> tuple[float, str]:
    """(percent, source) of the tax on cloud bills in a jurisdiction (None: 0, none
    named); a code not in :data:`TAX_RATE_PERCENT` raises ValueError naming them."""
    if jurisdiction is None:
        return 0.0, TAX_NONE
    found = TAX_RATE_PERCENT.get(jurisdiction.strip().upper())
    if found is None:
        raise ValueError(
            f"no published tax rate for jurisdiction {jurisdiction!r}; known: "
            f"{', '.join(sorted(TAX_RATE_PERCENT))}"
        )
    return found


def support_default(provider: str) -> tuple[str, str]:
    """(plan name or '', source) of a provider's support by default."""
    return SUPPORT_DEFAULT.get(provider, ("", SUPPORT_NONE))


__all__ = [
    "BYTES_PER_TOKEN_SOURCE",
    "CHECKPOINTS_KEPT",
    "CHECKPOINT_SOURCE",
    "CONTINGENCY_NONE",
    "DATASET_BYTES_PER_TOKEN",
    "OUTPUT_BYTES_PER_TOKEN",
    "STAFF_DEFAULT_SOURCE",
    "STAFF_USD_PER_INSTANCE_YEAR",
    "TAX_NONE",
    "TAX_RATE_PERCENT",
    "checkpoint_bytes_per_param",
    "egress_price",
    "storage_price",
    "support_default",
    "tax_rate",
]
