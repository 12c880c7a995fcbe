"""Price updates over the tiny catalog, with every expected price worked out by hand.

The tiny catalog (tests/conftest.py): acme/us-east/h1 (H100) on-demand $4/h, spot $2,
1-year reserved $3, 3-year reserved $2; acme/us-east/l4 on-demand $1/h, spot $0.40;
server box-h100 capex $200,000.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from conftest import SHARED_DATA, offering, write_catalog
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.prices import apply_prices, detect_format, read_price_update
from solver.outputs.text import price_report_text

H1 = offering("h1", "h100-sxm", 1, 4.0, spot=2.0, r1=3.0, r3=2.0)
L4 = offering("l4", "l4", 1, 1.0, spot=0.4, nvlink=False)
HEADER = "provider,region,offering,mode,price,date\n"
SNAPSHOTS = SHARED_DATA / "external" / "skypilot-catalog" / "anycloud-sh-catalog"
GCP_OLD = SNAPSHOTS / "69b86f0bec0f152ed452516e6fac70ff53106a5a" / "gcp" / "vms.csv"
GCP_NEW = SNAPSHOTS / "62ff0a987e0c257a89235415d2877812fb1aaf29" / "gcp" / "vms.csv"


def price_file(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return path


def apply(catalog, path, **kw):
    return apply_prices(catalog, read_price_update(path), **kw)


def row(report, offering_id, mode):
    rows = report.rows
    return rows[(rows["offering_id"] == offering_id) & (rows["mode"] == mode)].iloc[0]


def test_price_cut_applied_and_dated(tiny_catalog, tmp_path):
    # L4 on-demand $1.00 -> $0.70: a 30% cut (factor 0.7, inside x2), applied and dated.
    cat = tiny_catalog([H1, L4])
    out = apply(cat, price_file(tmp_path, "acme,us-east,l4,on_demand,0.70,2026-12-01"))
    l4 = out.catalog.offerings.loc["acme/us-east/l4"]
    assert l4["on_demand_usd_per_hour"] == pytest.approx(0.70)
    assert l4["spot_usd_per_hour"] == pytest.approx(0.40)  # not in the update: kept
    assert l4["price_date"] == "2026-12-01"
    r = row(out.report, "acme/us-east/l4", "on_demand")
    assert r["status"] == "changed" and r["applied"] and r["ratio"] == pytest.approx(0.7)
    # the input catalog is untouched (a new Catalog is returned)
    assert cat.offerings.loc["acme/us-east/l4", "on_demand_usd_per_hour"] == 1.0


def test_reserved_prices_move_with_on_demand(tiny_catalog, tmp_path):
    # H100 on-demand $4 -> $5 (x1.25); reserved prices are not in the update, so they keep
    # their discount: 1y $3 x 1.25 = $3.75, 3y $2 x 1.25 = $2.50. Spot $2 is not derived.
    out = apply(
        tiny_catalog([H1, L4]),
        price_file(tmp_path, "acme,us-east,h1,on_demand,5,2026-12-01"),
    )
    h1 = out.catalog.offerings.loc["acme/us-east/h1"]
    assert h1["reserved_1y_usd_per_hour"] == pytest.approx(3.75)
    assert h1["reserved_3y_usd_per_hour"] == pytest.approx(2.50)
    assert h1["spot_usd_per_hour"] == pytest.approx(2.0)
    assert row(out.report, "acme/us-east/h1", "reserved_1y")["status"] == "derived"


def test_an_applied_price_brings_its_provenance(tiny_catalog, tmp_path):
    # issue 29: our CSV may say how sure a price is (confidence column); an applied price
    # takes its date, confidence and source (the file and line); an unapplied one keeps
    # the catalog's. L4 $1.00 -> $0.70 (list, line 2); H100 $4 -> $5 with no confidence
    # (unverified, line 3): its reserved prices move with it (the catalog's discount kept)
    # and are no surer than the catalog's reserved prices (unverified) nor the update.
    path = tmp_path / "prices.csv"
    path.write_text(
        "provider,region,offering,mode,price,date,confidence\n"
        "acme,us-east,l4,on_demand,0.70,2026-12-01,list\n"
        "acme,us-east,h1,on_demand,5,2026-12-02,\n"
    )
    off = apply(tiny_catalog([H1, L4]), path).catalog.offerings
    l4, h1 = off.loc["acme/us-east/l4"], off.loc["acme/us-east/h1"]
    assert (l4["price_date"], l4["price_confidence"]) == ("2026-12-01", "list")
    assert l4["source"] == f"price update {path}, line 2"
    assert (h1["price_date"], h1["price_confidence"]) == ("2026-12-02", "unverified")
    assert (h1["reserved_price_date"], h1["reserved_price_confidence"]) == (
        "2026-12-02",
        "unverified",
    )
    assert h1["reserved_source"].startswith(f"price update {path}, line 3, with the catalog's")


def test_an_unknown_confidence_in_a_price_file_is_refused(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text(
        "provider,region,offering,mode,price,date,confidence\n"
        "acme,us-east,l4,on_demand,0.70,2026-12-01,official\n"
    )
    with pytest.raises(ProcureError) as err:
        read_price_update(path)
    assert err.value.field == "line 2, confidence"
    assert "unknown price confidence 'official'" in err.value.message


def test_suspicious_change_reported_not_taken(tiny_catalog, tmp_path):
    # H100 on-demand $4 -> $40 is x10 (> x2): reported as suspicious and not applied.
    cat = tiny_catalog([H1, L4])
    path = price_file(tmp_path, "acme,us-east,h1,on_demand,40,2026-12-01")
    out = apply(cat, path)
    assert out.catalog.offerings.loc["acme/us-east/h1", "on_demand_usd_per_hour"] == 4.0
    r = row(out.report, "acme/us-east/h1", "on_demand")
    assert r["status"] == "suspicious" and not r["applied"]
    assert "suspicious (1)" in price_report_text(out.report)
    # with a looser factor (x20) or accept_suspicious it is taken: 1y $3 x 10 = $30
    loose = apply(cat, path, max_factor=20.0)
    assert loose.catalog.offerings.loc["acme/us-east/h1", "on_demand_usd_per_hour"] == 40.0
    accepted = apply(cat, path, accept_suspicious=True)
    assert accepted.catalog.offerings.loc[
        "acme/us-east/h1", "reserved_1y_usd_per_hour"
    ] == pytest.approx(30.0)


def test_unknown_offerings_reported_with_reason(tiny_catalog, tmp_path):
    out = apply(
        tiny_catalog([H1, L4]),
        price_file(
            tmp_path,
            "acme,us-east,h9,on_demand,3,2026-12-01",  # instance not in the catalog
            "acme,mars-1,h1,on_demand,3,2026-12-01",  # region not in regions.csv
            "acme,us-east,h1,on_demand,3.5,2026-12-01",  # known: $4 -> $3.50
        ),
    )
    unknown = out.report.with_status("unknown").set_index("offering_id")["note"]
    assert unknown.to_dict() == {
        "acme/mars-1/h1": "region not in regions.csv",
        "acme/us-east/h9": "offering not in offerings.csv",
    }
    assert len(out.catalog.offerings) == 2
    assert out.catalog.offerings.loc["acme/us-east/h1", "on_demand_usd_per_hour"] == 3.5


def test_price_file_naming_nothing_in_the_catalog_is_refused(tiny_catalog, tmp_path):
    # every row unknown: a wrong file (another provider's, a typo in every region) is
    # refused with one message rather than applied as "no change"
    with pytest.raises(ProcureError, match="names nothing in the catalog"):
        apply(
            tiny_catalog([H1, L4]),
            price_file(tmp_path, "acmee,us-east,h1,on_demand,3,2026-12-01"),
        )


def test_inconsistent_update_rejected_as_a_whole(tiny_catalog, tmp_path):
    # L4: on-demand $1 -> $0.70 and spot $0.40 -> $0.75 (each within x2), but spot would then
    # cost more than on-demand ($0.75 > $0.70): neither price is applied.
    out = apply(
        tiny_catalog([H1, L4]),
        price_file(
            tmp_path,
            "acme,us-east,l4,on_demand,0.70,2026-12-01",
            "acme,us-east,l4,spot,0.75,2026-12-01",
        ),
    )
    l4 = out.catalog.offerings.loc["acme/us-east/l4"]
    assert (l4["on_demand_usd_per_hour"], l4["spot_usd_per_hour"]) == (1.0, 0.4)
    assert set(out.report.with_status("inconsistent")["mode"]) == {"on_demand", "spot"}


def test_offering_id_and_owned_server_prices(tiny_catalog, tmp_path):
    # A whole offering id needs no provider/region; mode owned prices a server's capex:
    # box-h100 $200,000 -> $180,000 (x0.9).
    out = apply(
        tiny_catalog([H1, L4]),
        price_file(
            tmp_path,
            ",,acme/us-east/h1,spot,1.5,2026-12-01",
            ",,box-h100,owned,180000,2026-12-01",
        ),
    )
    assert out.catalog.offerings.loc["acme/us-east/h1", "spot_usd_per_hour"] == 1.5
    assert out.catalog.servers.loc["box-h100", "capex_usd"] == 180_000


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("acme,us-east,h1,on_demand,-3,2026-12-01", "line 2, price"),
        ("acme,us-east,h1,monthly,3,2026-12-01", "line 2, mode"),
        (",,h1,on_demand,3,2026-12-01", "line 2, provider/region"),
    ],
)
def test_bad_price_rows_name_the_line(tmp_path, line, field):
    with pytest.raises(ProcureError) as err:
        read_price_update(price_file(tmp_path, line))
    assert err.value.field == field and err.value.fix


def test_duplicate_price_refused(tmp_path):
    path = price_file(
        tmp_path, "acme,us-east,h1,spot,1,2026-12-01", "acme,us-east,h1,spot,1.1,2026-12-02"
    )
    with pytest.raises(ProcureError, match="priced twice"):
        read_price_update(path)


def test_whole_catalog_update(tiny_catalog, tmp_path):
    # A new catalog folder: H100 on-demand $4 -> $3.50 (x0.875), L4 unchanged, and a new
    # offering acme/eu-north/h1eu. Reported as unknown; taken only with add_new.
    cat = tiny_catalog([H1, L4])
    h1eu = offering("h1eu", "h100-sxm", 1, 5.0, region="eu-north")
    new_dir = write_catalog(tmp_path / "new", [dict(H1, on_demand_usd_per_hour=3.5), L4, h1eu])
    assert detect_format(new_dir) == "catalog"
    out = apply(cat, new_dir)
    assert out.catalog.offerings.loc["acme/us-east/h1", "on_demand_usd_per_hour"] == 3.5
    # 1y $3 x 0.875 = $2.625: the new catalog gives 1y $3 itself, which wins over derivation
    assert out.catalog.offerings.loc["acme/us-east/h1", "reserved_1y_usd_per_hour"] == 3.0
    assert "acme/eu-north/h1eu" in set(out.report.with_status("unknown")["offering_id"])
    assert "acme/eu-north/h1eu" not in out.catalog.offerings.index
    added = apply(cat, new_dir, add_new=True)
    assert added.catalog.offerings.loc["acme/eu-north/h1eu", "on_demand_usd_per_hour"] == 5.0
    # its offerings.csv alone works too
    assert detect_format(new_dir / "offerings.csv") == "catalog"
    only = apply(cat, new_dir / "offerings.csv")
    assert only.catalog.offerings.loc["acme/us-east/h1", "on_demand_usd_per_hour"] == 3.5


def test_unknown_file_refused(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(ProcureError, match="not a price file"):
        read_price_update(path)


@pytest.mark.skipif(not GCP_NEW.is_file(), reason="../shared/data (GCP snapshots) not present")
def test_gcp_snapshots_change_only_spot_prices():
    # Between the two GCP snapshots (2026-04-02 -> 2026-05-20) GCP changed spot prices only:
    # rewinding the shipped catalog to the old snapshot and forward again touches spot
    # columns alone, nothing moves by more than x2, and the round trip restores the catalog.
    shipped = load_catalog()
    old = apply_prices(shipped, read_price_update(GCP_OLD, provider="gcp"))
    new = apply_prices(old.catalog, read_price_update(GCP_NEW, provider="gcp"))
    changed = new.report.with_status("changed")
    assert len(changed) > 50
    assert set(changed["mode"]) == {"spot"}
    assert new.report.with_status("suspicious").empty
    # The catalog builder drops implausible spot quotes that the raw snapshots carry (equal
    # to on-demand, or more than 80% off an 8-accelerator box: scripts/build_offerings.py
    # clean_spot), so the round trip restores every quote the catalog kept.
    gcp = (shipped.offerings["provider"] == "gcp") & shipped.offerings["spot_usd_per_hour"].notna()
    pd.testing.assert_series_equal(
        new.catalog.offerings.loc[gcp, "spot_usd_per_hour"],
        shipped.offerings.loc[gcp, "spot_usd_per_hour"],
        rtol=1e-9,
    )


def test_apply_price_file_takes_its_options_by_keyword_and_records_them(tmp_path):
    # a call such as apply_price_file(cat, path, "csv", None, None, 2.0, False, False)
    # cannot be read at its call site: everything after the file is keyword-only, and
    # the names are the keys a re-solved plan records (inputs.prices), so that a
    # recorded entry is applied again as apply_price_file(cat, **entry)
    import inspect

    from solver.inputs.prices import PRICE_FILE_OPTIONS, apply_price_file

    params = inspect.signature(apply_price_file).parameters
    keyword = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keyword == list(PRICE_FILE_OPTIONS[1:])
    assert list(params)[1] == PRICE_FILE_OPTIONS[0] == "prices"
    with pytest.raises(TypeError):
        apply_price_file(None, tmp_path / "p.csv", "csv")  # type: ignore[misc]


def test_a_price_decision_takes_its_prices_and_flags_by_keyword():
    # the report row of one decision: old and new prices, status and flag named at the
    # call; the ratio is new / old = 4.4 / 4.0 = 1.1
    from solver.inputs.prices.applying import Decisions

    decisions = Decisions()
    decisions.record(
        "acme/us-east/h1", "acme", "us-east", "on_demand",
        old_usd=4.0, new_usd=4.4, status="changed", applied=True, line=2,
    )  # fmt: skip
    [row] = decisions.rows
    assert row["ratio"] == pytest.approx(1.1)
    assert (row["status"], row["applied"], row["line"]) == ("changed", True, 2)
    with pytest.raises(TypeError):
        decisions.record("x", "acme", "us-east", "spot", 4.0, 4.4, "changed", True)  # type: ignore[misc]


def test_a_recorded_price_file_entry_applies_the_file_again(tmp_path):
    # a re-solved plan records how its price file was applied (inputs.prices); load_plan
    # applies each entry again as apply_price_file(catalog, **entry): the keys are the
    # function's parameters, and the same file gives the same price (old x 1.1 here)
    from solver.inputs.prices import PRICE_FILE_OPTIONS, apply_price_file, price_file_entry

    cat = load_catalog(None)
    offering_id, row = next(iter(cat.offerings.iterrows()))
    new_usd = float(row["on_demand_usd_per_hour"]) * 1.1
    path = tmp_path / "prices.csv"
    path.write_text(f"provider,region,offering,mode,price\n,,{offering_id},on_demand,{new_usd}\n")
    entry = price_file_entry(
        path, fmt="auto", provider=None, price_date=None, max_factor=2.0, accept=False,
        add_new=False,
    )  # fmt: skip
    assert tuple(entry) == PRICE_FILE_OPTIONS
    assert entry["prices"] == str(path.resolve())
    again = apply_price_file(cat, **{**entry, "prices": Path(str(entry["prices"]))})
    rows = again.report.rows
    mine = rows[(rows["offering_id"] == offering_id) & (rows["mode"] == "on_demand")]
    assert mine["status"].tolist() == ["changed"]
    assert mine["ratio"].iloc[0] == pytest.approx(1.1)
