"""The checked catalog kept between runs (``load_catalog(..., cache_dir=)``, issue 27):
a cached copy is the catalog the files give, never an older one."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import offering, write_catalog
from solver.cli.common import cache_dir
from solver.errors import ProcureError
from solver.inputs.catalog import CACHED_CATALOGS, load_catalog

OFFERINGS_TINY = [offering("h1", "h100-sxm", 1, 4.0, spot=2.0), offering("l4", "l4", 1, 1.0)]


def _tables_equal(a, b) -> None:
    for name in ("accelerators", "offerings", "regions", "servers", "sites", "models"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))


def test_second_load_is_the_cached_copy_of_the_same_catalog(tmp_path):
    directory = write_catalog(tmp_path / "cat", OFFERINGS_TINY)
    cache = tmp_path / "cache"
    first = load_catalog(directory, cache_dir=cache)
    assert len(list(cache.glob("catalog-*.pickle"))) == 1  # written on the first load
    second = load_catalog(directory, cache_dir=cache)
    _tables_equal(second, load_catalog(directory))  # the catalog the files give
    _tables_equal(first, second)


def test_an_edited_file_is_read_again(tmp_path):
    directory = write_catalog(tmp_path / "cat", OFFERINGS_TINY)
    cache = tmp_path / "cache"
    load_catalog(directory, cache_dir=cache)
    frame = pd.read_csv(directory / "offerings.csv", dtype=str, keep_default_na=False)
    frame.loc[0, "on_demand_usd_per_hour"] = "7.5"  # was 4.0 (OFFERINGS_TINY's first row)
    frame.to_csv(directory / "offerings.csv", index=False)
    again = load_catalog(directory, cache_dir=cache)
    assert again.offerings["on_demand_usd_per_hour"].iloc[0] == 7.5
    assert len(list(cache.glob("catalog-*.pickle"))) == 2  # one copy per content


def test_a_broken_catalog_is_refused_every_time(tmp_path):
    directory = write_catalog(tmp_path / "cat", OFFERINGS_TINY)
    frame = pd.read_csv(directory / "offerings.csv", dtype=str, keep_default_na=False)
    frame.loc[0, "on_demand_usd_per_hour"] = "-1"
    frame.to_csv(directory / "offerings.csv", index=False)
    for _ in range(2):  # nothing is cached from a refused catalog
        with pytest.raises(ProcureError, match="on_demand_usd_per_hour"):
            load_catalog(directory, cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("catalog-*.pickle"))


def test_a_damaged_or_unwritable_cache_is_passed_over(tmp_path):
    directory = write_catalog(tmp_path / "cat", OFFERINGS_TINY)
    cache = tmp_path / "cache"
    load_catalog(directory, cache_dir=cache)
    (copy,) = cache.glob("catalog-*.pickle")
    copy.write_bytes(b"not a pickle")
    _tables_equal(load_catalog(directory, cache_dir=cache), load_catalog(directory))
    assert copy.read_bytes() != b"not a pickle"  # replaced by a good copy
    blocked = tmp_path / "a-file"
    blocked.write_text("in the way of a folder")
    _tables_equal(load_catalog(directory, cache_dir=blocked), load_catalog(directory))


def test_the_cache_keeps_the_newest_copies(tmp_path):
    cache = tmp_path / "cache"
    for i in range(CACHED_CATALOGS + 2):  # 10 different catalogs
        rows = [dict(OFFERINGS_TINY[0], on_demand_usd_per_hour=4.0 + i), *OFFERINGS_TINY[1:]]
        load_catalog(write_catalog(tmp_path / f"cat{i}", rows), cache_dir=cache)
    assert len(list(cache.glob("catalog-*.pickle"))) == CACHED_CATALOGS


def test_cache_folder_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PROCURE_CACHE_DIR", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    monkeypatch.setenv("PROCURE_CACHE_DIR", "off")
    assert cache_dir() is None
    monkeypatch.delenv("PROCURE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "procure"
