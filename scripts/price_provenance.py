"""Price dates, their bases and the currencies as billed, for scripts/build_offerings.py.

Every offering's ``price_date`` is a day, and ``price_date_basis`` says which day it is:

* ``published``: a date the source itself states (a repository commit's date, a data
  file's "Last updated" stamp, a capture's dated file name);
* ``read``: the day the source was read, where it states no date of its own. The
  skypilot-org/skypilot-catalog files carry no date and their commits' dates could not be
  read here (the repository is 1.78 GB, above what can be fetched; the file index names the
  commit, not its date), so they are dated by the day each entered this catalog: the day of
  the project's commit that first wrote rows from it (``git log -S<commit>`` on
  catalogs/offerings.csv: 789f3c5 of 2026-11-22, 1085470 of 2026-11-24), the latest day on
  which it can have been read. The prices are at least that old.

Every offering's ``currency`` is the currency its seller bills, and ``currency_basis`` says
whether a source names it (``stated``) or not (``assumed``): :data:`CURRENCIES`, one
citation per provider (catalogs/SOURCES.md, "Price dates and currencies"). Every shipped row
is ``stated`` (:func:`check_currencies`); a provider no source names the currency of is left
out (:data:`UNSTATED_CURRENCY`).
"""

from __future__ import annotations

import pandas as pd

SKYPILOT_REPO = "https://github.com/skypilot-org/skypilot-catalog/blob"

#: skypilot-org/skypilot-catalog files imported: key -> (path under catalogs/, commit the
#: file index stores, the day the file entered this catalog).
SKYPILOT_FILES: dict[str, tuple[str, str, str]] = {
    "nebius": ("v8/nebius/vms.csv", "0082b0435f3912ae4c566856b272455cc78f4f61", "2026-11-22"),
    "runpod": ("v6/runpod/vms.csv", "098741e70562f65d7af1cceb81e33b284f742604", "2026-11-22"),
    "aws": ("v8/aws/vms.csv", "00148f2af3672e2229b4f7bf8157d5a3f36e3c35", "2026-11-22"),
    "oci": ("v8/oci/vms.csv", "0588751183820cf2dab5c8a89447e8aac9f73fd5", "2026-11-22"),
    "hyperstack": (
        "v8/hyperstack/vms.csv",
        "fdc9d908ab0b2af9f468f139fb3f662c8c6b3257",
        "2026-11-24",
    ),
    "verda": ("v8/verda/vms.csv", "000c1d0bf24621f4ac37cfa585f0897c1aa1d9cf", "2026-11-24"),
    "jarvislabs": (
        "v8/jarvislabs/vms.csv",
        "57d65781a544958d7d07014f062f7d1cad8415a7",
        "2026-11-24",
    ),
    "seeweb": ("v8/seeweb/vms.csv", "004a1aef76542bb40d12fcedaaf091551ddf5fb4", "2026-11-24"),
    "hyperbolic": (
        "v8/hyperbolic/vms.csv",
        "0082b0435f3912ae4c566856b272455cc78f4f61",
        "2026-11-24",
    ),
    "fluidstack": (
        "v6/fluidstack/vms.csv",
        "002403bca05e2ab5110637448f3b1654c983d5d5",
        "2026-11-24",
    ),
    "paperspace": (
        "v6/paperspace/vms.csv",
        "e520054145d1bce6748bcf18c9a25ddd6ea9a348",
        "2026-11-24",
    ),
    "digitalocean": ("v6/do/vms.csv", "1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a", "2026-11-24"),
    "shadeform": (
        "v8/shadeform/vms.csv",
        "002363dac75913b446b2d3d564ae795678849dfd",
        "2026-11-24",
    ),
    "primeintellect": (
        "v8/primeintellect/vms.csv",
        "d9a304ea01e96cd4a043159c60d9326d8de4cf0f",
        "2026-11-24",
    ),
}


def skypilot_url(key: str) -> str:
    """The openable address of one skypilot-catalog file at the commit read."""
    path, commit, _day = SKYPILOT_FILES[key]
    return f"{SKYPILOT_REPO}/{commit}/catalogs/{path}"


def skypilot_read_day(key: str) -> str:
    """The day a skypilot-catalog file entered this catalog (its price date, basis read)."""
    return SKYPILOT_FILES[key][2]


def skypilot_note(key: str) -> str:
    """``price_note`` of a row from a skypilot-catalog file: what is known of its date."""
    return (
        f"read by {skypilot_read_day(key)} (the day the file entered this catalog); the "
        "commit's own date could not be read"
    )


ANYCLOUD_COMMIT = "62ff0a987e0c257a89235415d2877812fb1aaf29"


def anycloud_url(cloud: str) -> str:
    """The openable address of one anycloud-sh/catalog file at the HEAD read (2026-05-20)."""
    return f"https://github.com/anycloud-sh/catalog/blob/{ANYCLOUD_COMMIT}/{cloud}/vms.csv"


#: AWS instance types whose us-east-1, us-east-2 and us-west-2 prices were read in
#: tsaol/aws-gpu (instances.vantage.sh data of the AWS Price List, "Last updated:
#: 2026-08-26" in each file): type -> (file, commit the file index stores).
TSAOL_FILES: dict[str, tuple[str, str]] = {
    "g4dn.12xlarge": ("data/g4dn_instances.js", "299375be7a2b940b53b3d80ec79fd66ee688f4fa"),
    "g5.4xlarge": ("data/g5_instances.js", "18aebd1d72819fea767dd5b5f835114120b2ad39"),
    "g6.2xlarge": ("data/g6_instances.js", "299375be7a2b940b53b3d80ec79fd66ee688f4fa"),
    "inf2.xlarge": ("data/inf2_instances.js", "299375be7a2b940b53b3d80ec79fd66ee688f4fa"),
    "inf2.48xlarge": ("data/inf2_instances.js", "299375be7a2b940b53b3d80ec79fd66ee688f4fa"),
    "trn1.2xlarge": ("data/trn1_instances.js", "299375be7a2b940b53b3d80ec79fd66ee688f4fa"),
    "trn1.32xlarge": ("data/trn1_instances.js", "299375be7a2b940b53b3d80ec79fd66ee688f4fa"),
}
TSAOL_DAY = "2026-08-26"


def tsaol_source(itype: str) -> str:
    """``source`` of an AWS price read in tsaol/aws-gpu."""
    path, commit = TSAOL_FILES[itype]
    return (
        f"AWS Linux on-demand (AWS Price List data via instances.vantage.sh) as in "
        f"https://github.com/tsaol/aws-gpu/blob/{commit}/{path} (file's 'Last updated: "
        f"{TSAOL_DAY}'; us-east-1, us-east-2 and us-west-2 read 2026-12-02)"
    )


# ---------------------------------------------------------------------------
# Seeweb: the provider's own page, in euros
# ---------------------------------------------------------------------------
SEEWEB_PAGE = "https://www.seeweb.it/en/products/cloud-server-gpu"
SEEWEB_CAPTURE = (
    "https://github.com/markrusch/Compute-Indices/blob/5ff190ee2f65b9a52fd98dd23cc90037179aa43c/"
    "tests/fixtures/seeweb_cloud_server_gpu.html"
)
SEEWEB_CAPTURE_DAY = "2026-09-15"
#: Seeweb Cloud Server GPU on-demand "Hourly Cost" per GPU, EUR, as the page showed it on
#: 2026-09-15 (a verbatim capture of the card markup: SEEWEB_CAPTURE). Per-GPU pricing is
#: linear in the GPU count (the page's 8x H100 at EUR 15.12/h = 8 x 1.89, read 2026-09-13:
#: markrusch/Compute-Indices config/providers/seeweb.yaml@cc088357).
SEEWEB_EUR_PER_GPU_HOUR: dict[str, float] = {"h200": 2.60, "a100-80gb": 1.15}


def seeweb_from_page(off: pd.DataFrame) -> pd.DataFrame:
    """Seeweb rows priced by Seeweb's own page where it shows the card (list, EUR, dated
    by the capture); the other Seeweb rows keep the snapshot's figures, in EUR (the page
    prices every card in euros, and the snapshot's figures are the page's: H200 2.60)."""
    out = off.copy()
    seeweb = out["provider"] == "seeweb"
    out.loc[seeweb, "currency"] = "EUR"
    for acc, eur in SEEWEB_EUR_PER_GPU_HOUR.items():
        rows = seeweb & (out["accelerator_id"] == acc)
        for i in out.index[rows]:
            n = int(out.at[i, "accelerators_per_instance"])
            before = float(out.at[i, "on_demand_usd_per_hour"])
            out.at[i, "on_demand_usd_per_hour"] = round(eur * n, 5)
            out.at[i, "price_date"] = SEEWEB_CAPTURE_DAY
            out.at[i, "price_date_basis"] = "read"
            out.at[i, "price_confidence"] = "list"
            out.at[i, "price_note"] = (
                f"the page as read on {SEEWEB_CAPTURE_DAY} (a verbatim capture); the "
                f"skypilot-catalog file read by 2026-11-24 had {before:g}"
            )
            out.at[i, "source"] = (
                f"{SEEWEB_PAGE}: EUR {eur:.2f} per GPU-hour on-demand x {n} GPU(s), as "
                f"captured on {SEEWEB_CAPTURE_DAY} in {SEEWEB_CAPTURE}"
            )
    return out


# ---------------------------------------------------------------------------
# Currencies as billed
# ---------------------------------------------------------------------------
#: provider -> (ISO 4217 code its prices are billed in, currency_basis), for rows the provider
#: sells itself. Each citation is in catalogs/SOURCES.md, "Price dates and currencies".
CURRENCIES: dict[str, tuple[str, str]] = {
    "aws": ("USD", "stated"),
    "gcp": ("USD", "stated"),
    "azure": ("USD", "stated"),
    "oci": ("USD", "stated"),
    "coreweave": ("USD", "stated"),
    "lambda": ("USD", "stated"),
    "nebius": ("USD", "stated"),
    "runpod": ("USD", "stated"),
    "hyperstack": ("USD", "stated"),
    "verda": ("USD", "stated"),
    "jarvislabs": ("USD", "stated"),
    "seeweb": ("EUR", "stated"),
    "hyperbolic": ("USD", "stated"),
    "paperspace": ("USD", "stated"),
    "digitalocean": ("USD", "stated"),
    "tensorwave": ("USD", "stated"),
    # Vast's API reference: dph_total "Total $/hour rental cost", searched as dlperf_usd
    "vast": ("USD", "stated"),
    # Scaleway's own page prices in euros (rows repriced by provider_pages.scaleway_from_page)
    "scaleway": ("EUR", "stated"),
}

#: Rows resold by an aggregator are billed by the aggregator: its currency, by the skypilot
#: file the row came from. Prime Intellect bills a USD wallet; Shadeform's price is "in cents"
#: of US dollars (the fetcher that wrote the file: "Price is in cents per hour, convert to
#: dollars"; its FinOps profile: BillingCurrency USD).
RESELLERS: dict[str, tuple[str, str]] = {
    "/v8/primeintellect/": ("USD", "stated"),
    "/v8/shadeform/": ("USD", "stated"),
}

#: Providers whose rows are left out of the catalog because no page read states the currency
#: their prices are in (a price no one can say the currency of cannot be signed on), with
#: what was searched (catalogs/SOURCES.md, "Currencies").
UNSTATED_CURRENCY: dict[str, str] = {
    "fluidstack": (
        "FluidStack's API (fluidstackio/fern-config fern/openapi/fluidstack-openapi.json: "
        "current_rate, 'hourly price ... per processor', no currency), its docs (billing: "
        "'credit balance'), its terms (fluidstack.io/legal/terms-conditions: Fees 'as set "
        "out in an Order') and the skypilot fetcher (price_per_gpu_hr, no currency) name none"
    ),
}


def currency_of(provider: str, source: str) -> tuple[str | None, str]:
    """(currency, basis) of a row: its reseller's where an aggregator sold it, else its
    provider's; (None, "assumed") for a provider not listed."""
    for marker, billed in RESELLERS.items():
        if marker in source:
            return billed
    return CURRENCIES.get(provider, (None, "assumed"))


def with_currencies(off: pd.DataFrame) -> pd.DataFrame:
    """Each row's currency and its basis (:func:`currency_of`); a row of a provider not
    listed keeps its currency, assumed."""
    out = off.copy()
    known = [currency_of(p, s) for p, s in zip(out["provider"], out["source"], strict=True)]
    out["currency"] = [c if c else cur for (c, _b), cur in zip(known, out["currency"], strict=True)]
    out["currency_basis"] = [b for _c, b in known]
    return out


def drop_unstated_currencies(off: pd.DataFrame) -> pd.DataFrame:
    """The rows of :data:`UNSTATED_CURRENCY` providers left out, with a line saying so."""
    gone = off["provider"].isin(UNSTATED_CURRENCY)
    for provider, why in UNSTATED_CURRENCY.items():
        count = int((off["provider"] == provider).sum())
        if count:
            print(f"{provider}: {count} offerings left out, no source states their currency: {why}")
    return off[~gone].reset_index(drop=True)


def check_currencies(off: pd.DataFrame) -> None:
    """Stop the build if a row's currency is not stated by a source."""
    assumed = off[off["currency_basis"] != "stated"]
    if not assumed.empty:
        raise ValueError(f"offerings in an assumed currency: {list(assumed['offering_id'][:5])}")


def check_dated(off: pd.DataFrame) -> None:
    """Stop the build if a row is undated or its date has no basis."""
    undated = off[(off["price_date"] == "unknown") | (off["price_date_basis"].fillna("") == "")]
    if not undated.empty:
        raise ValueError(f"undated offerings: {list(undated['offering_id'][:5])}")
