"""Price updates that would take the wrong number are refused, one message each (issue 34).

Before issue 34 each of these was applied without a word (the issue's list): a price
dated decades ago or far in the future, a currency column in our price CSV, one offering
twice with different prices in a bare offerings.csv, one SkyPilot zone priced twice
differently, and a row that lost a field (its later values shifted one column left).
Each test has a control: the same file without the trap is read.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from conftest import offering, write_catalog
from solver.errors import ProcureError
from solver.inputs.price_traps import AHEAD_DAYS, FIRST_CLOUD_PRICE_DAY
from solver.inputs.prices import read_price_update

HEADER = "provider,region,offering,mode,price,date\n"


def _file(tmp_path: Path, text: str, name: str = "prices.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _refused(path: Path, **kw) -> ProcureError:
    with pytest.raises(ProcureError) as err:
        read_price_update(path, check_dates=True, **kw)  # as the CLI reads (resolve, diff)
    assert err.value.file == str(path) and err.value.fix  # names the file and the fix
    return err.value


@pytest.mark.parametrize(
    "day,words",
    [
        ("1925-06-01", "before any cloud sold compute by the hour (2006-08-24)"),
        ("2062-06-01", f"more than {AHEAD_DAYS} days after today"),
    ],
)
def test_a_price_dated_decades_off_is_refused(tmp_path, day, words):
    err = _refused(_file(tmp_path, HEADER + f"acme,us-east,h1,on_demand,3.5,{day}\n"))
    assert words in err.message and err.field == "line 2, date"


def test_dates_inside_the_range_are_read(tmp_path):
    # the first day of EC2, today, and a price announced a month ahead: all read
    days = [FIRST_CLOUD_PRICE_DAY, date.today(), date.today() + timedelta(days=30)]
    rows = "".join(f"acme,us-east,h{i},on_demand,3.5,{d.isoformat()}\n" for i, d in enumerate(days))
    update = read_price_update(_file(tmp_path, HEADER + rows), check_dates=True)
    assert len(update.prices) == 3


def test_the_date_option_is_checked_too(tmp_path):
    path = _file(tmp_path, HEADER + "acme,us-east,h1,on_demand,3.5,\n")
    err = _refused(path, price_date="1995-01-01")
    assert "before any cloud" in err.message


def test_a_currency_column_is_refused(tmp_path):
    text = "provider,region,offering,mode,price,date,currency\n"
    err = _refused(_file(tmp_path, text + "acme,us-east,h1,on_demand,3.5,2026-01-05,EUR\n"))
    assert "EUR" in err.message and err.field == "line 2, currency"
    # USD (or empty) is what an update is in: read
    ok = _file(tmp_path, text + "acme,us-east,h1,on_demand,3.5,2026-01-05,USD\n", "ok.csv")
    assert read_price_update(ok).prices["price_usd"].tolist() == [3.5]


def test_a_row_that_lost_a_field_is_refused(tmp_path):
    # the mode was lost: 3.5 would be read as the mode... and with it dropped at the end,
    # the date as the price: "line 3 has 5 fields where the header has 6"
    text = HEADER + "acme,us-east,h1,on_demand,3.5,2026-01-05\nacme,us-east,l4,0.9,2026-01-05\n"
    err = _refused(_file(tmp_path, text))
    assert "line 3 has 5 fields where the header has 6" in err.message
    assert err.field == "line 3"


def test_disagreeing_rows_of_a_bare_offerings_csv_are_refused(tmp_path):
    h1 = offering("h1", "h100-sxm", 1, 4.0)
    folder = write_catalog(tmp_path / "cat", [h1, dict(h1, on_demand_usd_per_hour=3.0)])
    err = _refused(folder / "offerings.csv")
    assert "acme/us-east/h1 is listed on lines [2, 3]" in err.message
    assert "on_demand_usd_per_hour" in err.message
    # the same row twice agrees with itself: read
    same = write_catalog(tmp_path / "same", [h1, dict(h1)])
    assert len(read_price_update(same / "offerings.csv").prices) == 2


def test_a_bare_offerings_csv_that_lost_a_field_is_refused(tmp_path):
    folder = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    path = folder / "offerings.csv"
    header, row = path.read_text().splitlines()[:2]
    cells = row.split(",")
    del cells[5]  # one field lost somewhere in the middle
    path.write_text(header + "\n" + ",".join(cells) + "\n")
    err = _refused(path)
    assert "line 2 has" in err.message and "fields where the header has" in err.message


SKY = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone\n"
)


def test_one_skypilot_zone_priced_twice_differently_is_refused(tmp_path):
    rows = [
        "p5.48xlarge,H100,8.0,192.0,2048.0,,55.04,20.0,us-east-1,use1-az1",
        "p5.48xlarge,H100,8.0,192.0,2048.0,,98.32,20.0,us-east-1,use1-az1",
    ]
    err = _refused(_file(tmp_path, SKY + "\n".join(rows) + "\n", "vms.csv"), provider="aws")
    assert "zone use1-az1" in err.message and "55.04, 98.32" in err.message
    # two zones at two prices: each zone once, read (the lower on-demand is taken)
    rows[1] = rows[1].replace("use1-az1", "use1-az2")
    update = read_price_update(
        _file(tmp_path, SKY + "\n".join(rows) + "\n", "two.csv"), provider="aws"
    )
    on_demand = update.prices[update.prices["mode"] == "on_demand"]["price_usd"].tolist()
    assert on_demand == [55.04]


def test_a_skypilot_row_that_lost_a_field_is_refused(tmp_path):
    row = "p5.48xlarge,H100,8.0,192.0,2048.0,55.04,20.0,us-east-1,use1-az1"  # GpuInfo lost
    err = _refused(_file(tmp_path, SKY + row + "\n", "vms.csv"), provider="aws")
    assert "line 2 has 9 fields where the header has 10" in err.message


def test_the_api_takes_future_dates_when_not_asked_to_check(tmp_path):
    # a notebook that plays out next year's price sheets reads them (check_dates off)
    path = _file(tmp_path, HEADER + "acme,us-east,h1,on_demand,3.5,2062-06-01\n")
    assert read_price_update(path).prices["price_date"].tolist() == ["2062-06-01"]
