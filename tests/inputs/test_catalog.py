"""Catalog loading: the shipped catalog is valid; each class of broken catalog is refused."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import ROOT, TINY_REGIONS, check, offering, write_catalog
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog

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


def test_quote_left_open_is_refused_with_its_line(tmp_path):
    directory = write_catalog(tmp_path / "cat", OFFERINGS)
    text = (directory / "offerings.csv").read_text().splitlines()
    last = text[-1].rsplit(",", 1)[0] + ',"source with no closing quote'
    (directory / "offerings.csv").write_text("\n".join([*text[:-1], last]) + "\n")
    with pytest.raises(ProcureError) as err:
        load_catalog(directory)
    assert "never closed" in str(err.value) and err.value.field == f"line {len(text)}"


def test_oversized_cell_is_refused_not_a_crash(tmp_path):
    directory = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    text = (directory / "offerings.csv").read_text().splitlines()
    (directory / "offerings.csv").write_text(f"{text[0]}\n{text[1]}{'x' * 200_000}\n")
    with pytest.raises(ProcureError, match="not a readable CSV"):
        load_catalog(directory)


def test_header_names_follow_pandas():
    # the one parse (csv) names columns as pandas read_csv does: a blank one, repeats
    import io

    from solver.inputs.catalog import header_names

    for header in (["a", "", "a", "a", "a.1"], ["a.1", "a", "a", "b", ""], ["x", "x", "x.1"]):
        text = ",".join(header) + "\n" + ",".join("1" * len(header)) + "\n"
        expected = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False).columns
        assert header_names(header) == list(expected), header


def test_region_missing_from_regions(tmp_path):
    def edit(f):
        f.loc[0, "region"] = "mars-1"
        return f

    err = broken(tmp_path, "offerings.csv", edit)
    assert "regions.csv" in err.message and err.field.startswith("line 2")


# --------------------------------------------------------------- providers.csv and tiers

PROVIDER_ROWS = [
    dict(
        provider="acme",
        tier="marketplace",
        sla="none",
        data_terms="host sees data",
        hosts="third-party hosts",
        source="test",
        read_date="2026-11",
    ),
    dict(
        provider="bigco",
        tier="neocloud",
        sla="99.9%",
        data_terms="DPA",
        hosts="own datacenters",
        source="test",
        read_date="2026-11",
    ),
]
BIGCO_REGION = dict(TINY_REGIONS[0], provider="bigco")
# acme's L4 is the cheaper one (1.0 vs 1.5 USD/h), so only a tier rule keeps it out.
TIER_OFFERINGS = [
    offering("l4", "l4", 1, 1.0, nvlink=False),
    offering("l4", "l4", 1, 1.5, nvlink=False, provider="bigco"),
]
TIER_PROBLEM = {
    "name": "tiers",
    "horizon_months": 1,
    "modes": ["on_demand"],
    "workloads": [
        {
            "kind": "inference",
            "name": "chat",
            "model": "llama-3-8b",
            "demand": {"tokens_per_s": 500},
            "prompt_tokens": 500,
            "output_tokens": 200,
            "ttft_slo": "2 s",
            "tpot_slo": "150 ms",  # an L4 reaches ~90 ms per token on this 8B model
            "min_tier": "neocloud",
        }
    ],
}


def tier_catalog(tmp_path, providers=PROVIDER_ROWS):
    directory = write_catalog(
        tmp_path / "cat", TIER_OFFERINGS, regions=[*TINY_REGIONS, BIGCO_REGION]
    )
    if providers is not None:
        pd.DataFrame(providers).to_csv(directory / "providers.csv", index=False)
    return directory


def test_providers_csv_loads_and_gives_tiers(tmp_path):
    cat = load_catalog(tier_catalog(tmp_path))
    assert cat.tier_of("acme") == "marketplace"
    assert cat.tier_of("bigco") == "neocloud"
    assert cat.tier_of("owned") == "owned"


def test_catalog_without_providers_csv_still_loads(tmp_path):
    cat = load_catalog(tier_catalog(tmp_path, providers=None))
    assert cat.providers is None
    assert cat.tier_of("acme") == "unknown"


def test_unknown_tier_in_providers_csv_is_refused(tmp_path):
    rows = [dict(PROVIDER_ROWS[0], tier="datacentre"), PROVIDER_ROWS[1]]
    with pytest.raises(ProcureError) as err:
        load_catalog(tier_catalog(tmp_path, providers=rows))
    text = str(err.value)
    assert "unknown tier 'datacentre'" in text and "providers.csv" in text
    assert "line 2, tier" in text and "marketplace, neocloud, hyperscaler" in text


def test_offering_provider_missing_from_providers_csv_is_refused(tmp_path):
    with pytest.raises(ProcureError) as err:
        load_catalog(tier_catalog(tmp_path, providers=PROVIDER_ROWS[:1]))
    assert "'bigco' is not in providers.csv" in str(err.value)


def test_unknown_min_tier_in_a_problem_is_refused():
    from solver.inputs.problem import parse_problem

    data = dict(TIER_PROBLEM, min_tier="datacentre")
    with pytest.raises(ProcureError) as err:
        parse_problem(data)
    assert "min_tier" in str(err.value) and "'neocloud'" in str(err.value)


def test_min_tier_filters_the_marketplace_offering_out(tmp_path):
    from solver.core.compile import build_pools, requirement_mask
    from solver.inputs.problem import parse_problem
    from solver.solve import solve_problem
    from solver.trust.verify import verify_plan

    cat = load_catalog(tier_catalog(tmp_path))
    problem = parse_problem(TIER_PROBLEM)
    pools = build_pools(problem, cat)
    ok, why = requirement_mask(problem.workloads[0], pools)
    by_provider = dict(zip(pools["provider"], ok, strict=True))
    assert by_provider == {"acme": False, "bigco": True}
    assert set(why[~ok]) == {"provider tier below neocloud"}
    # Problem-level min_tier drops the pool before any workload sees it.
    top = parse_problem(dict(TIER_PROBLEM, min_tier="neocloud"))
    assert set(build_pools(top, cat)["provider"]) == {"bigco"}
    # The solver then buys the dearer bigco L4 (1.5 > 1.0 USD/h) and the verifier's
    # "provider tier" check passes; moving the line to acme breaks it.
    plan = solve_problem(problem, cat)
    assert check(plan, "provider tier") == (True, "1 checked")
    assert {i.provider for i in plan.line_items} == {"bigco"}
    items = [
        i.model_copy(update={"offering": "acme/us-east/l4", "provider": "acme"})
        for i in plan.line_items
    ]
    bad = plan.model_copy(update={"line_items": items})
    failed = {c.name for c in verify_plan(bad, problem, cat) if not c.ok}
    assert "provider tier" in failed


def test_shipped_catalog_breadth_issue_11():
    """Issue 11: >= 1,500 offerings across >= 14 providers, every provider tiered."""
    cat = load_catalog(ROOT / "catalogs")
    counts = cat.counts()
    assert counts["offerings"] >= 1500
    assert counts["providers"] >= 14
    assert cat.providers is not None
    assert set(cat.offerings["provider"]) <= set(cat.providers.index)
    assert cat.tier_of("vast") == "marketplace" and cat.tier_of("aws") == "hyperscaler"
    # RunPod's plain "H100"/"A100-80GB" pods are PCIe cards (SXM ones say "-SXM").
    off = cat.offerings
    assert off.loc["runpod/US/1x_H100_SECURE", "accelerator_id"] == "h100-pcie"
    assert off.loc["runpod/US/1x_A100-80GB_SECURE", "accelerator_id"] == "a100-80gb-pcie"
    assert off.loc["runpod/US/1x_H100-SXM_SECURE", "accelerator_id"] == "h100-sxm"
    # No spot quote equals on-demand (the Azure ND H200 v5 rows used to).
    spot = off["spot_usd_per_hour"].dropna()
    assert (spot < 0.99 * off.loc[spot.index, "on_demand_usd_per_hour"]).all()
    # Every accelerator has an offering except those the catalog says are not offered.
    bare = set(cat.accelerators.index) - set(off["accelerator_id"])
    assert bare <= {"mi250x", "trainium2", "gaudi3"}, bare
