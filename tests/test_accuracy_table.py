"""The accuracy table (bench/accuracy/accuracy_cases.csv) is well formed.

These tests check the table, not the error figures (those are bench output, see
bench/RESULTS.md): every id resolves in the shipped catalog, units match the row
kind, every row cites a source listed in bench/accuracy/ACCURACY_SOURCES.md, the sets have
the sizes the accuracy requirement names, and main and holdout rows come from
different source documents.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from solver.inputs.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "accuracy"


def _accuracy_module():
    spec = importlib.util.spec_from_file_location("bench_accuracy", BENCH / "accuracy.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while it loads
    spec.loader.exec_module(module)
    return module


ACC = _accuracy_module()
ROWS = ACC.read_cases(BENCH / "accuracy_cases.csv")  # also checks the header
SOURCES_MD = (BENCH / "ACCURACY_SOURCES.md").read_text()


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_case_ids_unique_and_sets_known():
    ids = [r["case_id"] for r in ROWS]
    assert len(ids) == len(set(ids)), "duplicate case_id"
    assert {r["set"] for r in ROWS} <= {"main", "holdout"}
    assert {r["kind"] for r in ROWS} <= {"inference", "training"}


def test_set_sizes_meet_the_requirement():
    # The requirement: >= 25 main rows with >= 10 inference and >= 8 training, and
    # >= 10 holdout rows.
    main = [r for r in ROWS if r["set"] == "main"]
    holdout = [r for r in ROWS if r["set"] == "holdout"]
    assert len(main) >= 25
    assert sum(r["kind"] == "inference" for r in main) >= 10
    assert sum(r["kind"] == "training" for r in main) >= 8
    assert len(holdout) >= 10


def test_main_set_spans_four_vendors(catalog):
    # NVIDIA, AMD, Google TPU, Intel Gaudi and AWS rows are in main: >= 4 vendors.
    vendors = {
        catalog.accelerators.loc[catalog.resolve_accelerator(r["accelerator"]), "vendor"]
        for r in ROWS
        if r["set"] == "main"
    }
    assert len(vendors) >= 4, vendors


def test_accelerators_and_models_resolve(catalog):
    for r in ROWS:
        assert r["accelerator"] in catalog.accelerators.index, r["case_id"]
        if r["model"].strip():
            assert r["model"] in catalog.models.index, r["case_id"]
        else:
            # a model not in the catalog is given by its parameter count
            assert float(r["params_b"]) > 0, r["case_id"]


def test_units_match_kind_and_values_are_positive():
    for r in ROWS:
        allowed = ACC.INFERENCE_UNITS if r["kind"] == "inference" else ACC.TRAINING_UNITS
        assert r["measured_unit"] in allowed, r["case_id"]
        value = float(r["measured_value"])
        assert value > 0, r["case_id"]
        if r["measured_unit"] == "mfu":
            assert value <= 1.0, f"{r['case_id']}: MFU is a fraction"
        assert int(float(r["n_accelerators"])) >= 1, r["case_id"]


def test_inference_rows_have_lengths_and_tp_dividing_the_accelerators():
    for r in ROWS:
        if r["kind"] != "inference":
            continue
        assert int(r["prompt_tokens"]) > 0 and int(r["output_tokens"]) > 0, r["case_id"]
        tp = int(r["tp_degree"])
        # per-accelerator figures divide a replica's output by its tp degree, so the
        # accelerators counted must be whole replicas
        assert int(r["n_accelerators"]) % tp == 0, r["case_id"]
        if r["measured_unit"] in {"tpot_ms", "ttft_ms"}:
            assert r["batch"].strip(), f"{r['case_id']}: latency rows state their batch"


def test_server_rows_carry_both_slo_limits():
    # MLPerf Server rows are compared under the scenario's TTFT and TPOT limits.
    for r in ROWS:
        if "_server" in r["case_id"]:
            assert ACC.note_value(r["notes"], "slo_tpot_ms") == "200", r["case_id"]
            assert ACC.note_value(r["notes"], "slo_ttft_ms") == "2000", r["case_id"]


def test_every_source_is_cited_and_holdout_sources_differ_from_main():
    keys = set(re.findall(r"\*\*([A-Z0-9_]+)\*\*", SOURCES_MD))
    for r in ROWS:
        assert r["source"] in keys, f"{r['case_id']}: source {r['source']!r} not cited"
    main_sources = {r["source"] for r in ROWS if r["set"] == "main"}
    holdout_sources = {r["source"] for r in ROWS if r["set"] == "holdout"}
    assert not main_sources & holdout_sources


def test_note_value_reads_key_value_tokens():
    # the script reads SLOs and the KV precision from the notes column
    notes = "Server ...; slo_tpot_ms=200 slo_ttft_ms=2000; kv=fp8; prompt 500"
    assert ACC.note_value(notes, "slo_tpot_ms") == "200"
    assert ACC.note_value(notes, "kv") == "fp8"
    assert ACC.note_value(notes, "slo_ttft") is None


def test_every_source_has_markers_to_detect_its_use_by_a_default():
    # The script flags rows whose source also sets a default; a source without markers
    # would silently count as independent.
    for r in ROWS:
        assert ACC.SOURCE_MARKERS.get(r["source"]), r["source"]
    text = "TRAINING_MFU ... Dubey et al., arXiv 2407.21783, Table 4 ... Databricks"
    assert ACC.sources_used_by_defaults(text) == {"LLAMA3_PAPER", "DATABRICKS_GAUDI2"}


# Issue 33: the holdout added for AMD (MLPerf Inference v5.1) and Google TPU (JetStream)
NEW_HOLDOUT_SOURCES = ("MLPINF51_AMD", "MLPINF51_PARTNERS", "JETSTREAM_PT_V5E")


def test_new_holdout_sources_are_holdout_and_cited_by_no_default():
    # A holdout row never sets a default: no text in solver/ or catalogs/SOURCES.md may
    # cite these documents (bench/accuracy/ACCURACY_SOURCES.md says which they are).
    rows = [r for r in ROWS if r["source"] in NEW_HOLDOUT_SOURCES]
    # 6 AMD rows (MI300X and MI325X, three scenarios each), 6 partner rows, 6 TPU rows
    assert len(rows) == 18
    assert {r["set"] for r in rows} == {"holdout"}
    used = ACC.sources_used_by_defaults(ACC.defaults_text())
    assert not used & set(NEW_HOLDOUT_SOURCES), used & set(NEW_HOLDOUT_SOURCES)
    # ...and the markers do detect a citation, were a default to make one
    cited = "figures from mlcommons/inference_results_v5.1 and AI-Hypercomputer/jetstream-pytorch"
    assert ACC.sources_used_by_defaults(cited) == set(NEW_HOLDOUT_SOURCES)


def test_interactive_rows_carry_the_interactive_limits():
    # MLPerf v5.1 Interactive: TTFT 450 ms and TPOT 40 ms (the logs' ttft_latency 450000000
    # ns, tpot_latency 40000000 ns)
    rows = [r for r in ROWS if "_interactive" in r["case_id"]]
    assert len(rows) == 4
    for r in rows:
        assert ACC.note_value(r["notes"], "slo_tpot_ms") == "40", r["case_id"]
        assert ACC.note_value(r["notes"], "slo_ttft_ms") == "450", r["case_id"]


def test_per_source_lines_by_hand():
    # Source A: predicted 1 vs measured 2 (ratio 0.5, |error| 50%) and 1.2 vs 1 (ratio 1.2,
    # |error| 20%): median (50 + 20) / 2 = 35.0%, largest factor max(1 / 0.5, 1.2) = 2.00x,
    # worst row a1. Source B, cited by a default: 1.1 vs 1 -> 10.0%, 1.10x. A main row of
    # source A is left out of the holdout lines.
    C = ACC.Comparison
    results = [
        C("a1", "holdout", "inference", "tpot_ms", 1.0, 2.0),
        C("a2", "holdout", "inference", "tpot_ms", 1.2, 1.0),
        C("b1", "holdout", "inference", "tpot_ms", 1.1, 1.0, calibration=True),
        C("m1", "main", "inference", "tpot_ms", 9.0, 1.0),
    ]
    rows = [{"source": s} for s in ("A", "A", "B", "A")]
    lines = ACC.source_lines(rows, results, "holdout")
    assert lines[1] == "  A: 2 rows, median 35.0%, largest 2.00x (a1)"
    assert lines[2] == "  B (cited by a default): 1 rows, median 10.0%, largest 1.10x (b1)"
    assert len(lines) == 3


def test_mlperf_server_and_interactive_rows_are_compared_at_p99():
    # MLPerf's rules (bench/accuracy/ACCURACY_SOURCES.md MLPERF_RULES): Server and Interactive
    # latency limits hold at the 99th percentile of Poisson-arrival queries. 3 main Server
    # rows (m02, m05, m61), 2 holdout v4.0 Server rows (h02, h04), 4 v5.1 Server rows (h20,
    # h23, h26, h29) and 4 v5.1 Interactive rows: 13 rows, every one at 0.99.
    rows = [r for r in ROWS if r["source"].startswith("MLPINF") and "slo_tpot_ms=" in r["notes"]]
    assert len(rows) == 13
    for r in rows:
        assert ACC.note_value(r["notes"], "slo_percentile") == "0.99", r["case_id"]


def test_predict_at_percentile_takes_the_best_served_rate_over_load():
    # A replica of 1,000 tok/s whose p99 limits hold up to 80% utilisation and fail above
    # (throughput 0): served rho x 1,000 is largest at rho = 0.80, 800 tok/s; a replica
    # whose batch shrinks with load (1,000 at rho <= 0.6, then 700) serves max(0.6 x 1,000,
    # 1.0 x 700) = 700 at rho = 1.
    def cliff(*, slo_percentile, utilisation):
        assert slo_percentile == 0.99
        return {"served_output_tokens_per_s": utilisation * (1000.0 if utilisation <= 0.8 else 0)}

    def shrinking(*, slo_percentile, utilisation):
        return {"served_output_tokens_per_s": utilisation * (1000.0 if utilisation <= 0.6 else 700)}

    assert ACC.predict_at_percentile(cliff, 0.99) == pytest.approx(800.0)
    assert ACC.predict_at_percentile(shrinking, 0.99) == pytest.approx(700.0)


def test_jetstream_int8_rows_are_weight_only():
    # the source's int8 is --quantize_weights with bf16 multiplies (ACCURACY_SOURCES.md
    # JETSTREAM_PT_V5E): the three int8 rows say int8-weight-only, the KV cache int8
    rows = [r for r in ROWS if r["source"] == "JETSTREAM_PT_V5E" and "_int8_" in r["case_id"]]
    assert len(rows) == 3
    for r in rows:
        assert r["precision"] == "int8-weight-only", r["case_id"]
        assert ACC.note_value(r["notes"], "kv") == "int8", r["case_id"]


def test_mlperf_v50_mi325x_rows_are_main_and_apart_from_the_v51_holdout():
    # Helper h33d: AMD's MLPerf Inference v5.0 MI325X rows (m60 Offline 33,928.1 / 8 =
    # 4,241.01 tok/s per GPU, m61 Server 30,724.51 / 8 = 3,840.56) are main rows of their
    # own source; a citation of v5.0 is not one of v5.1 (the holdout), and back.
    rows = {r["case_id"]: r for r in ROWS if r["source"] == "MLPINF50_AMD"}
    assert sorted(rows) == [
        "m60_mlperf50_mi325x_x8_l2_70b_offline",
        "m61_mlperf50_mi325x_x8_l2_70b_server",
    ]
    assert {r["set"] for r in rows.values()} == {"main"}
    assert float(rows["m60_mlperf50_mi325x_x8_l2_70b_offline"]["measured_value"]) == (
        pytest.approx(33_928.1 / 8, abs=0.01)
    )
    assert float(rows["m61_mlperf50_mi325x_x8_l2_70b_server"]["measured_value"]) == (
        pytest.approx(30_724.51 / 8, abs=0.01)
    )
    v50 = ACC.sources_used_by_defaults("mlcommons/inference_results_v5.0 (MLPINF50_AMD)")
    v51 = ACC.sources_used_by_defaults("mlcommons/inference_results_v5.1")
    assert "MLPINF50_AMD" in v50 and not v50 & set(NEW_HOLDOUT_SOURCES)
    assert "MLPINF50_AMD" not in v51


def test_token_dropping_moe_rows_carry_their_recipes_capacity_factor():
    # Issue 47: the tpu-recipes Mixtral v6e-256 recipe runs mixtral_8x7b_dropped with
    # capacity_factor 1.25 (TPU_RECIPES_MIXTRAL_V6E); every other MoE row is dropless (1.0,
    # MaxText's and Megatron Core's default), so none of them carries the key.
    carried = {r["case_id"]: ACC.note_value(r["notes"], "capacity_factor") for r in ROWS}
    assert {c: v for c, v in carried.items() if v} == {"h39_tpurecipes_mixtral_v6e_256": "1.25"}
