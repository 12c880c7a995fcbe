"""Catalog loading: the shipped catalog is valid; each class of broken catalog is refused."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import ROOT, offering, write_catalog
from solver.catalog import load_catalog
from solver.errors import ProcureError

OFFERINGS = [offering("h1", "h100-sxm", 1, 4.0, spot=2.0), offering("l4", "l4", 1, 1.0)]


def broken(tmp_path, file: str, edit) -> ProcureError:
    directory = write_catalog(tmp_path / "cat", OFFERINGS)
    frame = pd.read_csv(directory / file, dtype=str, keep_default_na=False)
    frame = edit(frame)
    frame.to_csv(directory / file, index=False)
    with pytest.raises(ProcureError) as err:
        load_catalog(directory)
    return err.value


def test_shipped_catalog_is_valid_and_big_enough():
    cat = load_catalog(ROOT / "catalogs")
    counts = cat.counts()
    assert counts["accelerators"] >= 22
    assert counts["offerings"] >= 250
    assert counts["providers"] >= 8
    assert counts["regions"] >= 25
    for required in [
        "h100-sxm",
        "h100-pcie",
        "h200",
        "b200",
        "a100-80gb",
        "a100-40gb",
        "a10g",
        "l4",
        "l40s",
        "t4",
        "v100",
        "rtx-4090",
        "rtx-3090",
        "rtx-6000-ada",
        "mi300x",
        "mi250x",
        "tpu-v5e",
        "tpu-v5p",
        "trainium",
        "trainium2",
        "inferentia2",
        "gaudi2",
        "gaudi3",
    ]:
        assert required in cat.accelerators.index, required
    # dense, never sparse: the H100 SXM is 989 dense BF16 (1,979 is the 2:4 sparse figure)
    assert cat.accelerators.loc["h100-sxm", "bf16_dense_tflops"] == pytest.approx(989.4, abs=1)
    for name in ["H100", "H100 SXM5 80GB", "h100_sxm", "h100-sxm"]:
        assert cat.resolve_accelerator(name) == "h100-sxm"


def test_unknown_accelerator_gets_closest_matches(tiny_catalog):
    cat = tiny_catalog(OFFERINGS)
    with pytest.raises(ProcureError) as err:
        cat.resolve_accelerator("H1OO")
    assert "did you mean" in err.value.fix and "h100-sxm" in err.value.fix


def test_missing_column(tmp_path):
    err = broken(tmp_path, "offerings.csv", lambda f: f.drop(columns=["on_demand_usd_per_hour"]))
    assert "offerings.csv" in err.file and "on_demand_usd_per_hour" in err.message
    assert err.field == "line 1 (header)"


def test_unknown_accelerator_referenced(tmp_path):
    def edit(f):
        f.loc[1, "accelerator_id"] = "h200x"
        return f

    err = broken(tmp_path, "offerings.csv", edit)
    assert err.field == "line 3, accelerator_id" and "h200x" in err.message


def test_negative_price(tmp_path):
    def edit(f):
        f.loc[0, "on_demand_usd_per_hour"] = "-4"
        return f

    err = broken(tmp_path, "offerings.csv", edit)
    assert err.field == "line 2, on_demand_usd_per_hour" and "positive" in err.message


def test_missing_price(tmp_path):
    def edit(f):
        f.loc[1, "on_demand_usd_per_hour"] = ""
        return f

    err = broken(tmp_path, "offerings.csv", edit)
    assert err.field == "line 3, on_demand_usd_per_hour" and "missing" in err.message


def test_duplicate_key(tmp_path):
    def edit(f):
        f.loc[1, "offering_id"] = f.loc[0, "offering_id"]
        return f

    err = broken(tmp_path, "offerings.csv", edit)
    assert err.field == "line 3, offering_id" and "duplicate" in err.message


def test_not_a_number(tmp_path):
    def edit(f):
        f.loc[0, "memory_gb"] = "80GB"
        return f

    err = broken(tmp_path, "accelerators.csv", edit)
    assert err.field == "line 2, memory_gb" and "not a number" in err.message


def test_spot_dearer_than_on_demand(tmp_path):
    def edit(f):
        f.loc[0, "spot_usd_per_hour"] = "9"
        return f

    err = broken(tmp_path, "offerings.csv", edit)
    assert "above the on-demand price" in err.message


def test_region_missing_from_regions(tmp_path):
    def edit(f):
        f.loc[0, "region"] = "mars-1"
        return f

    err = broken(tmp_path, "offerings.csv", edit)
    assert "regions.csv" in err.message and err.field.startswith("line 2")
