"""The price guard's bands measured (issue 46, Build 3): how far two sources for the same
offering disagree.

    python bench/quality/price_bands.py [--shared ../shared/data] [--pairs]

A *pair* is one offering (provider, instance type, accelerator, GPU count, on-demand) priced
by a weaker source and by a stronger one. Its error, as a fraction of the weaker price
``p_weak`` (the band's own unit: the price billed lies in ``[p (1 - b), p (1 + b)]``), is

    e = |p_strong / p_weak - 1|

and a level's band is the 90th percentile of ``e`` over its pairs (nearest-rank, so the
figure is one measured pair's error, not an interpolation): nine weak prices in ten lie
within their band of the stronger source. Regions are not counted separately: every source
read here prices an instance type the same in all its regions (checked: the script refuses a
source that does not), so a region would only repeat a pair.

Pairs read:

* **third_party against list.** The providers' own pages as read for the catalog
  (scripts/provider_pages.py: Lambda USD, read 2026-09-20; Scaleway EUR, read 2026-09-27;
  scripts/price_provenance.py: Seeweb EUR, captured 2026-09-15) against the third-party
  catalogs the catalog's ``third_party`` rows come from (``../shared/data/external/
  skypilot-catalog``, SOURCES.md there): anycloud-sh's two snapshots of SkyPilot's Lambda
  file (2026-04-02 and 2026-05-20), Shadeform's listing (Lambda and Scaleway rows), Prime
  Intellect's listing (Lambda rows, mapped by their upstream instance type) and SkyPilot's
  Seeweb file. Euro pages are converted at the catalog's rate (catalogs/exchange_rates.csv);
  the snapshots state US dollars.
* **unverified against a stronger source.** The catalog's own history: the rows that were
  ``unverified`` when confidences were first recorded (git a623d52) and were later re-read
  from another source (Seeweb's page, AWS prices read in tsaol/aws-gpu), old price against
  new. The ``unverified`` band is the larger of that measurement and the third_party band
  (a price no source vouches for is at least as uncertain as a third party's).
* **list against quote.** The catalog holds no quote (0 rows at ``quote``) and no shipped
  quotes file prices an offering that has a list price, so there are no pairs. The list
  band is measured as the next-nearest thing: how far one source's own published price
  moves between two dated readings (SkyPilot's GCP file, read from Google's billing catalog,
  on 2026-04-02 and 2026-05-20, one pair per accelerator, count and region), i.e. the
  error of a list price read weeks before it is billed.
"""

from __future__ import annotations

import argparse
import io
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

import price_provenance  # noqa: E402
import provider_pages  # noqa: E402

#: The quantile a band is read at (two-sided: of |p_strong / p_weak - 1|).
QUANTILE = 0.90
#: The git commit at which the catalog first recorded each price's confidence.
FIRST_CONFIDENCES = "a623d52"
SKY = "external/skypilot-catalog"
ANY_OLD = f"{SKY}/anycloud-sh-catalog/69b86f0bec0f152ed452516e6fac70ff53106a5a"
ANY_NEW = f"{SKY}/anycloud-sh-catalog/62ff0a987e0c257a89235415d2877812fb1aaf29"
V8 = f"{SKY}/skypilot-catalog/catalogs/v8"
#: Shadeform's Lambda instance names -> Lambda's own instance type (by accelerator, memory
#: and count; ``lambdalabs_H100`` at 4.29 is the SXM5 1x, the one 1x H100 at that figure).
SHADEFORM_LAMBDA = {
    "lambdalabs_A10": "gpu_1x_a10",
    "lambdalabs_A100-sxm4-80GBx8": "gpu_8x_a100_80gb_sxm4",
    "lambdalabs_A100x8": "gpu_8x_a100",
    "lambdalabs_A6000x4": "gpu_4x_a6000",
    "lambdalabs_H100": "gpu_1x_h100_sxm5",
    "lambdalabs_H100-sxm5x2": "gpu_2x_h100_sxm5",
    "lambdalabs_H100-sxm5x4": "gpu_4x_h100_sxm5",
    "lambdalabs_H100-sxm5x8": "gpu_8x_h100_sxm5",
}
SCALEWAY_CARD = {"H100": "h100-sxm", "L40S": "l40s", "L4": "l4"}
SEEWEB_CARD = {"H200": "h200", "A100": "a100-80gb"}


@dataclass(frozen=True)
class Pair:
    """One offering priced by two sources (USD per GPU-hour)."""

    level: str
    source: str
    offering: str
    weak_usd_per_gpu_hour: float
    strong_usd_per_gpu_hour: float

    @property
    def error_fraction(self) -> float:
        """``|strong / weak - 1|``: the weak price's error as a fraction of itself."""
        return abs(self.strong_usd_per_gpu_hour / self.weak_usd_per_gpu_hour - 1.0)


def nearest_rank(values: list[float], q: float) -> float:
    """The ``q`` quantile by nearest rank (the ``ceil(q n)``-th smallest value)."""
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def eur_usd() -> float:
    """The catalog's EUR rate (USD per EUR)."""
    rates = pd.read_csv(ROOT / "catalogs" / "exchange_rates.csv")
    return float(rates.loc[rates["currency"] == "EUR", "usd_per_unit"].iloc[0])


def _per_type(df: pd.DataFrame, name: str, key: str = "InstanceType") -> pd.Series:
    """Price per instance type; refuses a source that prices one type differently by region."""
    gpu = df[df["AcceleratorCount"].fillna(0) > 0]
    spread = gpu.groupby(key)["Price"].nunique()
    if (spread > 1).any():
        raise SystemExit(
            f"{name}: an instance type priced differently by region: "
            f"{list(spread[spread > 1].index)}"
        )
    per = gpu.groupby(key)[["Price", "AcceleratorCount"]].first()
    return per["Price"] / per["AcceleratorCount"]


def third_party_pairs(shared: Path) -> list[Pair]:
    """third_party snapshots against the providers' own pages."""
    pairs: list[Pair] = []
    lam = provider_pages.LAMBDA_USD_PER_GPU_HOUR
    for label, path in (
        ("anycloud-sh Lambda 2026-04-02", ANY_OLD),
        ("anycloud-sh Lambda 2026-05-20", ANY_NEW),
    ):
        per = _per_type(pd.read_csv(shared / path / "lambda" / "vms.csv"), label)
        for itype, usd in per.items():
            if itype in lam:
                pairs.append(Pair("third_party", label, f"lambda {itype}", usd, lam[itype]))
    shade = pd.read_csv(shared / V8 / "shadeform" / "vms.csv")
    per = _per_type(shade, "shadeform")
    for name, itype in SHADEFORM_LAMBDA.items():
        pairs.append(Pair("third_party", "Shadeform", f"lambda {itype}", per[name], lam[itype]))
    rate = eur_usd()
    for name, usd in per.items():
        if str(name).startswith("scaleway_"):
            card = SCALEWAY_CARD[str(name).removeprefix("scaleway_").split("x")[0]]
            eur = provider_pages.SCALEWAY_EUR_PER_GPU_HOUR[card][1]
            pairs.append(Pair("third_party", "Shadeform", f"scaleway {name}", usd, eur * rate))
    prime = pd.read_csv(shared / V8 / "primeintellect" / "vms.csv")
    prime = prime[prime["InstanceType"].str.startswith("lambdalabs")]
    for itype, usd in _per_type(prime, "primeintellect", "UpstreamCloudId").items():
        if itype in lam:
            pairs.append(Pair("third_party", "Prime Intellect", f"lambda {itype}", usd, lam[itype]))
    seeweb = pd.read_csv(shared / V8 / "seeweb" / "vms.csv")
    seeweb = seeweb[seeweb["AcceleratorName"].isin(list(SEEWEB_CARD))]
    for _, r in seeweb.iterrows():
        eur = price_provenance.SEEWEB_EUR_PER_GPU_HOUR[SEEWEB_CARD[r["AcceleratorName"]]]
        usd = float(r["Price"]) / float(r["AcceleratorCount"])
        pairs.append(
            Pair("third_party", "SkyPilot Seeweb", f"seeweb {r['InstanceType']}", usd, eur * rate)
        )
    return pairs


def _catalog_at(commit: str) -> pd.DataFrame:
    text = subprocess.check_output(["git", "show", f"{commit}:catalogs/offerings.csv"], cwd=ROOT)
    return pd.read_csv(io.StringIO(text.decode()))


def unverified_pairs() -> list[Pair]:
    """Rows ``unverified`` at the first recorded confidences, against their later reading."""
    old = _catalog_at(FIRST_CONFIDENCES)
    now = pd.read_csv(ROOT / "catalogs" / "offerings.csv")
    m = old.merge(now, on="offering_id", suffixes=("_old", "_now"))
    m = m[(m["price_confidence_old"] == "unverified") & (m["price_confidence_now"] != "unverified")]
    rate = eur_usd()
    pairs: list[Pair] = []
    for _, r in m.iterrows():
        n = float(r["accelerators_per_instance_now"])
        to_usd = rate if r["currency_now"] == "EUR" else 1.0
        strong = float(r["on_demand_usd_per_hour_now"]) * to_usd
        pairs.append(
            Pair(
                "unverified",
                f"catalog {FIRST_CONFIDENCES} -> now",
                r["offering_id"],
                float(r["on_demand_usd_per_hour_old"]) / n,
                strong / n,
            )
        )
    return pairs


def list_drift_pairs(shared: Path) -> list[Pair]:
    """Google's own published GPU prices (SkyPilot's GCP file) at two dated readings."""
    keys = ["InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone"]
    a, b = (pd.read_csv(shared / d / "gcp" / "vms.csv") for d in (ANY_OLD, ANY_NEW))
    a, b = (x.assign(InstanceType=x["InstanceType"].fillna("")) for x in (a, b))
    m = a[[*keys, "Price"]].merge(b[[*keys, "Price"]], on=keys, suffixes=("_apr", "_may"))
    m = m[(m["AcceleratorCount"].fillna(0) > 0) & (m["Price_apr"] > 0) & (m["Price_may"] > 0)]
    # one pair per offering and region: zones of a region repeat its price
    m = m.groupby(keys[:4])[["Price_apr", "Price_may"]].median().reset_index()
    pairs: list[Pair] = []
    for _, r in m.iterrows():
        n = float(r["AcceleratorCount"])
        pairs.append(
            Pair(
                "list",
                "GCP (anycloud-sh) 2026-04-02 -> 2026-05-20",
                f"gcp {r['InstanceType'] or 'gpu'} {r['AcceleratorName']}x{n:g} {r['Region']}",
                float(r["Price_apr"]) / n,
                float(r["Price_may"]) / n,
            )
        )
    return pairs


def main(argv: list[str] | None = None) -> int:
    """Print every level's pairs, quantiles and band."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--pairs", action="store_true", help="print every pair")
    a = ap.parse_args(argv)
    if not (a.shared / SKY).is_dir():
        print(f"{a.shared / SKY}: not found (the reference data sit in ../shared/data)")
        return 2
    groups = {
        "third_party": third_party_pairs(a.shared),
        "unverified": unverified_pairs(),
        "list": list_drift_pairs(a.shared),
    }
    bands: dict[str, float] = {}
    print(f"{'level':<12} {'source':<44} {'n':>3} {'equal':>5} {'median':>7} {'p90':>7} {'max':>7}")
    for level, pairs in groups.items():
        by_source: dict[str, list[float]] = {}
        for p in pairs:
            by_source.setdefault(p.source, []).append(p.error_fraction)
            if a.pairs:
                print(
                    f"  {level} {p.source}: {p.offering}: weak {p.weak_usd_per_gpu_hour:.4f} "
                    f"strong {p.strong_usd_per_gpu_hour:.4f} e {p.error_fraction:.4f}"
                )
        for src, errs in [*by_source.items(), ("ALL", [p.error_fraction for p in pairs])]:
            eq = sum(1 for e in errs if e < 5e-4)
            print(
                f"{level:<12} {src:<44} {len(errs):>3} {eq:>5} {nearest_rank(errs, 0.5):>7.4f} "
                f"{nearest_rank(errs, QUANTILE):>7.4f} {max(errs):>7.4f}"
            )
        bands[level] = nearest_rank([p.error_fraction for p in pairs], QUANTILE)
    bands["unverified"] = max(bands["unverified"], bands["third_party"])
    print(
        f"bands (p{QUANTILE * 100:.0f} of |strong/weak - 1|; unverified at least third_party): "
        + ", ".join(
            f"{k} {v:.2f}"
            for k, v in (
                ("quote", 0.0),
                ("list", bands["list"]),
                ("third_party", bands["third_party"]),
                ("unverified", bands["unverified"]),
            )
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
