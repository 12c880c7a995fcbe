"""Prices read from the providers' own pricing pages, for scripts/build_offerings.py.

A snapshot row (a third party's transcription of a provider's API) is replaced by the
provider's own published price where a dated reading of the page exists: the price is
``list``, dated by the day the page was read (basis ``read``: the pages carry no date), in
the currency the page prices in, and the row's ``source`` names the page and the reading.
Seeweb's page is applied in scripts/price_provenance.py (``seeweb_from_page``); this module
holds the others (catalogs/SOURCES.md, "Providers' own pages"):

* **Lambda** (``lambda.ai/instances``, USD, read 2026-09-20): every instance type the page
  lists, per GPU-hour x GPUs. Where the page's figure equals the snapshot's, only the
  provenance changes.
* **Scaleway** (``scaleway.com/en/pricing/gpu``, EUR, read 2026-09-27): the catalog's
  Scaleway rows came from Shadeform's listing, which prices Scaleway's instances in US
  dollars (Shadeform's H100 at 3.30 is Scaleway's EUR 2.87 x 1.15). Scaleway bills in euros,
  so the rows take Scaleway's own euro price, converted on load at the shipped rate
  (catalogs/exchange_rates.csv), like Seeweb's.
"""

from __future__ import annotations

import pandas as pd

# ---------------------------------------------------------------------------
# Lambda
# ---------------------------------------------------------------------------
LAMBDA_PAGE = "https://lambda.ai/instances"
#: A transcription of the page in which "every price_text was found verbatim in the fetched
#: page text" (its header), read 2026-09-20.
LAMBDA_READING = (
    "https://github.com/api-evangelist/lambda-labs/blob/"
    "1929382e7f9b4777d980aec12b6fc9e04e6718cb/plans/lambda-labs-plans-pricing.yml"
)
LAMBDA_READ_DAY = "2026-09-20"
#: Lambda on-demand USD per GPU-hour by instance type, as the page showed it on 2026-09-20
#: ("GPU instance hourly pricing per GPU"; e.g. "1x NVIDIA GH200 ... $2.29"). Instance types
#: the reading does not list (1x/2x/4x A100 40 GB, 1x/2x A6000, gpu_8x_v100_n) are left to
#: the snapshot.
LAMBDA_USD_PER_GPU_HOUR: dict[str, float] = {
    "gpu_8x_b200_sxm6": 6.69,
    "gpu_8x_h100_sxm5": 3.99,
    "gpu_8x_a100_80gb_sxm4": 2.79,
    "gpu_8x_a100": 1.99,
    "gpu_8x_v100": 0.79,
    "gpu_4x_b200_sxm6": 6.79,
    "gpu_4x_h100_sxm5": 4.09,
    "gpu_4x_a6000": 1.09,
    "gpu_2x_b200_sxm6": 6.89,
    "gpu_2x_h100_sxm5": 4.19,
    "gpu_1x_b200_sxm6": 6.99,
    "gpu_1x_gh200": 2.29,
    "gpu_1x_h100_sxm5": 4.29,
    "gpu_1x_h100_pcie": 3.29,
    "gpu_1x_a10": 1.29,
}

# ---------------------------------------------------------------------------
# Scaleway
# ---------------------------------------------------------------------------
SCALEWAY_PAGE = "https://www.scaleway.com/en/pricing/gpu/"
#: A dated reading of the page (section 3 and 4: "scaleway.com/en/pricing/gpu ... fetched
#: 2026-09-27"; L4-1-24G 0.79, L40S-1-48G 1.47, H100-1-80G 2.87 EUR/h).
SCALEWAY_READING = (
    "https://github.com/bricelalu/claude-code-pii-guardian/blob/"
    "541f43140c2ab77722e19c05907f55b56012982b/docs/capacity-simulation.md"
)
SCALEWAY_READ_DAY = "2026-09-27"
#: Scaleway on-demand EUR per GPU-hour by the card the catalog maps the row to, with the
#: one-GPU instance it is read from. Multi-GPU instances are priced linearly: Shadeform's
#: listing of the same instances is exactly linear in the GPU count (H100 x2 6.60 = 2 x 3.30;
#: L4 x2/x4/x8 1.90/3.80/7.60 = n x 0.95; L40S x2 3.40 = 2 x 1.70).
SCALEWAY_EUR_PER_GPU_HOUR: dict[str, tuple[str, float]] = {
    "h100-sxm": ("H100-1-80G", 2.87),
    "l40s": ("L40S-1-48G", 1.47),
    "l4": ("L4-1-24G", 0.79),
}


def lambda_from_page(off: pd.DataFrame) -> pd.DataFrame:
    """Lambda rows of an instance type the page lists: the page's price, ``list``, dated
    by the reading (the snapshot's figure is kept in the note where it differs)."""
    out = off.copy()
    rows = (out["provider"] == "lambda") & out["instance_type"].isin(LAMBDA_USD_PER_GPU_HOUR)
    for i in out.index[rows]:
        itype = str(out.at[i, "instance_type"])
        n = int(out.at[i, "accelerators_per_instance"])
        per_gpu = LAMBDA_USD_PER_GPU_HOUR[itype]
        page = round(per_gpu * n, 5)
        before = float(out.at[i, "on_demand_usd_per_hour"])
        same = abs(before - page) < 1e-9
        _page_priced(
            out,
            i,
            page,
            "USD",
            LAMBDA_READ_DAY,
            note=f"Lambda's page as read on {LAMBDA_READ_DAY}; the anycloud-sh snapshot of "
            f"2026-05-20 had {'the same figure' if same else f'{before:g}'}",
            source=f"{LAMBDA_PAGE}: USD {per_gpu:.2f} per GPU-hour on-demand x {n} GPU(s), "
            f"as read on {LAMBDA_READ_DAY} in {LAMBDA_READING}",
        )
    return out


def scaleway_from_page(off: pd.DataFrame) -> pd.DataFrame:
    """Scaleway rows at Scaleway's own euro price (``list``, EUR, dated by the reading);
    a Scaleway card the reading does not price stops the build."""
    out = off.copy()
    rows = out["provider"] == "scaleway"
    unpriced = set(out.loc[rows, "accelerator_id"]) - set(SCALEWAY_EUR_PER_GPU_HOUR)
    if unpriced:
        raise ValueError(f"Scaleway rows with no page price: {sorted(unpriced)}")
    for i in out.index[rows]:
        instance, eur = SCALEWAY_EUR_PER_GPU_HOUR[str(out.at[i, "accelerator_id"])]
        n = int(out.at[i, "accelerators_per_instance"])
        before = float(out.at[i, "on_demand_usd_per_hour"])
        _page_priced(
            out,
            i,
            round(eur * n, 5),
            "EUR",
            SCALEWAY_READ_DAY,
            note=f"Scaleway's page as read on {SCALEWAY_READ_DAY}; Shadeform's listing (read "
            f"by 2026-11-24) had USD {before:g}",
            source=f"{SCALEWAY_PAGE}: {instance} EUR {eur:.2f} per GPU-hour on-demand x {n} "
            f"GPU(s) (linear in GPUs), as read on {SCALEWAY_READ_DAY} in {SCALEWAY_READING}",
        )
    return out


def _page_priced(
    out: pd.DataFrame,
    i: object,
    price_per_hour: float,
    currency: str,
    day: str,
    *,
    note: str,
    source: str,
) -> None:
    """Row ``i`` of ``out`` priced, in place, at a provider's own page: the on-demand price
    per instance-hour in ``currency``, ``list`` confidence, dated ``day`` as read."""
    out.at[i, "on_demand_usd_per_hour"] = price_per_hour
    out.at[i, "currency"] = currency
    out.at[i, "price_date"] = day
    out.at[i, "price_date_basis"] = "read"
    out.at[i, "price_confidence"] = "list"
    out.at[i, "price_note"] = note
    out.at[i, "source"] = source
