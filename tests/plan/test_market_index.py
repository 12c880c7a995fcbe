"""The market reference (catalogs/market_index.csv): each rented line's price against the
published rental index of its accelerator, flagged when more than 2x away from it
(docs/concepts/price-guard.md, The market reference).

Worked by hand. The tiny catalog's one H100 instance (1 GPU) serves a workload of 10
requests/s for one month of 730 hours: one unit rented, 730 GPU-hours. This test's own
market_index.csv puts the h100-sxm index at $2.00 per GPU-hour as of 2026-05-31, so a
line's premium is ``price / 2.00 - 1``:

- at $5.00/h: 5.00 / 2.00 = 2.5x the index, premium 1.5 > 1.0: flagged (above);
- at $2.40/h: 2.40 / 2.00 = 1.2x, premium 0.2: not flagged;
- at $0.90/h: 0.90 / 2.00 = 0.45x < 0.5: flagged (below), premium -0.55.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import HOURS, offering, problem, serve, write_catalog
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.solve import solve_problem

INDEX_USD = 2.00
HEADER = "accelerator_id,usd_per_gpu_hour,as_of,index,measures,source\n"
ROW = 'h100-sxm,2.00,2026-05-31,Test H100 index,"a test level, USD per GPU-hour",https://example.org/index\n'


def _folder(tmp_path, usd_per_hour: float, market: str | None = HEADER + ROW):
    folder = write_catalog(tmp_path / "cat", [offering("one", "h100-sxm", 1, usd_per_hour)])
    if market is not None:
        (folder / "market_index.csv").write_text(market)
    return folder


def _plan(tmp_path, usd_per_hour: float, market: str | None = HEADER + ROW):
    catalog = load_catalog(_folder(tmp_path, usd_per_hour, market))
    return solve_problem(problem([serve(10)]), catalog), catalog


def test_a_line_at_two_and_a_half_times_the_index_is_flagged(tmp_path):
    plan, _ = _plan(tmp_path, 5.00)
    assert plan.verified
    (line,) = plan.line_items
    # 5.00 x 730 = $3,650.00 over 1 GPU x 730 h = $5.00 per GPU-hour; 5.00 / 2.00 - 1 = 1.5
    assert line.cost_usd == pytest.approx(5.00 * HOURS)
    assert line.market_index_usd_per_gpu_hour == INDEX_USD
    assert line.market_index_date == "2026-05-31"
    assert line.market_premium_fraction == pytest.approx(1.5)
    (warning,) = [w for w in plan.warnings if w.kind == "market_index"]
    assert warning.field == "line_items: rent acme/us-east/one on_demand all"
    assert "2.500x the h100-sxm rental index ($2.00, 2026-05-31)" in warning.detail
    assert "above" in warning.detail


def test_a_line_at_one_point_two_times_the_index_is_not_flagged(tmp_path):
    plan, _ = _plan(tmp_path, 2.40)
    assert plan.verified
    (line,) = plan.line_items
    # 2.40 / 2.00 - 1 = 0.2: inside [0.5x, 2x], no warning
    assert line.market_premium_fraction == pytest.approx(0.2)
    assert [w for w in plan.warnings if w.kind == "market_index"] == []


def test_a_line_below_half_the_index_is_flagged(tmp_path):
    plan, _ = _plan(tmp_path, 0.90)
    (line,) = plan.line_items
    # 0.90 / 2.00 - 1 = -0.55: the price is 0.45x the index, below half of it
    assert line.market_premium_fraction == pytest.approx(-0.55)
    (warning,) = [w for w in plan.warnings if w.kind == "market_index"]
    assert "0.450x" in warning.detail and "below" in warning.detail


def test_without_an_index_the_fields_are_left_out(tmp_path):
    plan, _ = _plan(tmp_path, 5.00, market=None)
    dumped = plan.model_dump(mode="json")["line_items"][0]
    assert not {"market_index_usd_per_gpu_hour", "market_index_date"} & set(dumped)
    assert "market_premium_fraction" not in dumped
    assert [w for w in plan.warnings if w.kind == "market_index"] == []


def test_the_verifier_refuses_a_premium_that_does_not_match_the_index(tmp_path):
    from solver.trust.verify import verify_plan

    plan, catalog = _plan(tmp_path, 5.00)
    p = problem([serve(10)])
    (line,) = plan.line_items
    # 1.5 written as 0.5 (the price read against a $3.33 index): refused
    bad = plan.model_copy(
        update={"line_items": [line.model_copy(update={"market_premium_fraction": 0.5})]}
    )
    failed = {c.name for c in verify_plan(bad, p, catalog) if not c.ok}
    assert failed == {"market premium recomputed"}


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ("nope,2.00,2026-05-31,I,m,https://x\n", "line 2, accelerator_id", "unknown accelerator"),
        ("h100-sxm,-1,2026-05-31,I,m,https://x\n", "line 2, usd_per_gpu_hour", "positive"),
        ("h100-sxm,2.00,May 2026,I,m,https://x\n", "line 2, as_of", "not a date"),
        ("h100-sxm,2.00,2026-05-31,I,m,\n", "line 2, source", "no source"),
        (ROW + ROW, "line 3, accelerator_id", "given twice"),
    ],
)
def test_a_bad_market_index_is_refused_naming_file_field_and_fix(tmp_path, row, field, words):
    folder = _folder(tmp_path, 2.40, market=None)
    (folder / "market_index.csv").write_text(HEADER + row)
    with pytest.raises(ProcureError) as raised:
        load_catalog(folder)
    err = raised.value
    assert err.file.endswith("market_index.csv") and err.field == field and err.fix
    assert words in str(err)


def test_catalog_validate_counts_and_names_the_flagged_offerings_and_strict_passes(tmp_path):
    # two offerings of one GPU: $5.00/h (2.5x, flagged) and $2.40/h (1.2x, not flagged);
    # their currency stated, so that --strict has nothing else to refuse
    stated = {"currency": "USD", "currency_basis": "stated"}
    folder = write_catalog(
        tmp_path / "cat",
        [
            offering("one", "h100-sxm", 1, 5.00) | stated,
            offering("two", "h100-sxm", 1, 2.40) | stated,
        ],
    )
    (folder / "market_index.csv").write_text(HEADER + ROW)
    for args in ([], ["--strict"]):  # flagged, never refused (docs: a look, not a refusal)
        result = CliRunner().invoke(app, ["catalog", "validate", "--catalog", str(folder), *args])
        assert result.exit_code == 0, result.output
        assert "market index: 1 of 2 offerings with an index priced more than 2x away" in (
            result.output
        )
        assert "line 2, on_demand_usd_per_hour: $5.00 per GPU-hour is 2.500x" in result.output
        market = result.output[result.output.index("market index:") :]
        assert "acme/us-east/two" not in market


def test_the_shipped_index_is_dated_and_sourced():
    # catalogs/market_index.csv: Silicon Data's SDH100RT ~$2.60 and SDB200RT ~$5.30 per
    # GPU-hour (https://chris-gpu-rental.pages.dev/), as of 2026-05-31
    from solver.inputs.catalog.tables import DEFAULT_CATALOG_DIR
    from solver.inputs.market_index import load_market_index

    levels = load_market_index(DEFAULT_CATALOG_DIR, {"h100-sxm", "b200"} | set())
    assert {a: (v.usd_per_gpu_hour, v.as_of) for a, v in levels.items()} == {
        "h100-sxm": (2.60, "2026-05-31"),
        "b200": (5.30, "2026-05-31"),
    }
    assert all(v.source.startswith("https://") for v in levels.values())
    json.dumps([v.__dict__ for v in levels.values()])  # plain values, writable as JSON
