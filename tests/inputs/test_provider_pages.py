"""Prices read from the providers' own pages (scripts/provider_pages.py): Lambda's
lambda.ai/instances (USD, read 2026-09-20) and Scaleway's scaleway.com/en/pricing/gpu (EUR,
read 2026-09-27) replace the snapshot rows they cover, as ``list`` prices dated by the
reading; catalogs/SOURCES.md, "Providers' own pages"."""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from conftest import ROOT
from solver.inputs.catalog import load_catalog


@pytest.fixture(scope="module")
def pages():
    spec = importlib.util.spec_from_file_location(
        "provider_pages", ROOT / "scripts" / "provider_pages.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(provider: str, itype: str, acc: str, n: int, od: float) -> dict:
    return {
        "offering_id": f"{provider}/r/{itype}",
        "provider": provider,
        "instance_type": itype,
        "accelerator_id": acc,
        "accelerators_per_instance": n,
        "on_demand_usd_per_hour": od,
        "currency": "USD",
        "price_date": "2026-05-20",
        "price_date_basis": "published",
        "price_confidence": "third_party",
        "price_note": "",
        "source": "snapshot",
    }


def test_lambda_rows_the_page_lists_become_list_prices(pages):
    rows = pd.DataFrame(
        [
            _row("lambda", "gpu_1x_gh200", "gh200", 1, 2.29),
            _row("lambda", "gpu_8x_h100_sxm5", "h100-sxm", 8, 30.00),  # not the page's
            _row("lambda", "gpu_1x_a100", "a100-40gb", 1, 1.99),  # not on the reading
            _row("vast", "gpu_1x_gh200", "gh200", 1, 1.00),  # another provider
        ]
    )
    out = pages.lambda_from_page(rows).set_index("offering_id")
    gh200 = out.loc["lambda/r/gpu_1x_gh200"]
    # the page: "1x NVIDIA GH200 ... $2.29" per GPU-hour, the same figure as the snapshot
    assert gh200["on_demand_usd_per_hour"] == 2.29
    assert (gh200["price_confidence"], gh200["price_date"]) == ("list", "2026-09-20")
    assert gh200["price_date_basis"] == "read"
    assert gh200["source"].startswith("https://lambda.ai/instances: USD 2.29 per GPU-hour")
    assert "the same figure" in gh200["price_note"]
    # 8x H100 SXM at $3.99 per GPU-hour = $31.92; the snapshot's 30 is kept in the note
    h100 = out.loc["lambda/r/gpu_8x_h100_sxm5"]
    assert h100["on_demand_usd_per_hour"] == pytest.approx(8 * 3.99)
    assert "had 30" in h100["price_note"]
    # types the reading does not list, and other providers, are left as they were
    assert out.loc["lambda/r/gpu_1x_a100", "price_confidence"] == "third_party"
    assert out.loc["vast/r/gpu_1x_gh200", "on_demand_usd_per_hour"] == 1.00


def test_scaleway_rows_take_scaleways_euro_price(pages):
    rows = pd.DataFrame(
        [
            _row("scaleway", "scaleway_H100x2", "h100-sxm", 2, 6.60),
            _row("scaleway", "scaleway_L4x8", "l4", 8, 7.60),
            _row("scaleway", "scaleway_L40S", "l40s", 1, 1.70),
        ]
    )
    out = pages.scaleway_from_page(rows).set_index("offering_id")
    # H100-1-80G EUR 2.87 per GPU-hour x 2 = EUR 5.74 (Shadeform's USD 6.60 in the note)
    h100 = out.loc["scaleway/r/scaleway_H100x2"]
    assert (h100["on_demand_usd_per_hour"], h100["currency"]) == (5.74, "EUR")
    assert (h100["price_confidence"], h100["price_date"]) == ("list", "2026-09-27")
    assert "USD 6.6" in h100["price_note"]
    assert "scaleway.com/en/pricing/gpu" in h100["source"]
    # L4-1-24G EUR 0.79 x 8 = EUR 6.32; L40S-1-48G EUR 1.47
    assert out.loc["scaleway/r/scaleway_L4x8", "on_demand_usd_per_hour"] == pytest.approx(6.32)
    assert out.loc["scaleway/r/scaleway_L40S", "on_demand_usd_per_hour"] == 1.47


def test_a_scaleway_card_the_page_reading_does_not_price_stops_the_build(pages):
    rows = pd.DataFrame([_row("scaleway", "scaleway_B300", "b300", 1, 9.0)])
    with pytest.raises(ValueError, match="Scaleway rows with no page price: \\['b300'\\]"):
        pages.scaleway_from_page(rows)


def test_the_shipped_scaleway_rows_load_in_dollars_at_the_ecb_rate():
    # EUR 2.87 x 1.1761 USD/EUR (ECB, 2026-05-08) = $3.375407 per H100-hour, above Shadeform's
    # $3.30; L4 EUR 0.79 x 1.1761 = $0.929119, below Shadeform's $0.95
    off = load_catalog().offerings
    scaleway = off[off["provider"] == "scaleway"]
    assert len(scaleway) == 12 and set(scaleway["currency"]) == {"EUR"}
    assert set(scaleway["price_confidence"]) == {"list"}
    h100 = scaleway.loc["scaleway/paris-france-1/scaleway_H100"]
    assert h100["on_demand_usd_per_hour"] == pytest.approx(2.87 * 1.1761)
    l4 = scaleway.loc["scaleway/paris-france-5/scaleway_L4"]
    assert l4["on_demand_usd_per_hour"] == pytest.approx(0.79 * 1.1761)


def test_the_seeds_serving_line_is_a_list_price_from_lambdas_page():
    off = load_catalog().offerings
    gh200 = off.loc["lambda/europe-central-1/gpu_1x_gh200"]
    assert gh200["on_demand_usd_per_hour"] == 2.29
    assert (gh200["price_confidence"], gh200["price_date"]) == ("list", "2026-09-20")
    assert "lambda.ai/instances" in gh200["source"]
