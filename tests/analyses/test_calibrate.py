"""procure calibrate: reading measurements, the factor fit, per-bucket profiles, refusals.

Fixtures in tests/data/:

- ``vllm-infqps-concurrency4-Llama-2-7b-hf-20250301-120000.json``: a hand-made result in
  the field layout vLLM's benchmarks/benchmark_serving.py writes with --save-result (named
  as it names its files): 8 requests of 200 prompt and 20 output tokens, 4 in flight,
  2.5 s, so 3.2 requests/s and 8 x 20 / 2.5 = 64 output tokens/s.
- ``measurements.csv``: three runs in the plain CSV (two on an L4, one on an H100).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from conftest import ROOT, SHARED_DATA
from solver.analyses.calibrate import (
    BUCKET_EDGES_TOKENS,
    bucket_index,
    bucket_midpoints,
    bucket_order,
    calibrate,
    fit_factors,
    parse_accelerator_options,
    read_measurements,
)
from solver.cli import app
from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import InferenceWorkload

DATA = Path(__file__).resolve().parents[1] / "data"
VLLM_RESULT = DATA / "vllm-infqps-concurrency4-Llama-2-7b-hf-20250301-120000.json"
MEASUREMENTS_CSV = DATA / "measurements.csv"
PROFILES = SHARED_DATA / "external" / "throughput-profiles"
MELANGE_FILES = [
    PROFILES / "profiles_llama2-7b_A10G_A100_6f0c10c.json",
    PROFILES / "profiles_llama2-7b_L4_A10G_A100_H100_3d13f19.json",
]
needs_shared = pytest.mark.skipif(
    not all(f.is_file() for f in MELANGE_FILES),
    reason="../shared/data (throughput profiles) not present",
)
# How the shipped problem names the profile's GPUs (its header: A100 = A100-80GB, H100 SXM).
PROBLEM_NAMES = {"L4": "l4", "A10G": "a10g", "A100": "a100-80gb", "H100": "h100-sxm"}

runner = CliRunner()


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _texts(*paths: Path) -> list[tuple[str, str]]:
    return [(str(p), p.read_text()) for p in paths]


# --------------------------------------------------------------------------- buckets


def test_buckets_follow_melange_and_the_problem_file():
    # Melange get_size_bucket_idx: size <= 25 -> 0, <= 100 -> 1, ...; upper edge inclusive.
    assert [bucket_index(t) for t in (1, 25, 26, 100, 101, 1000, 2000)] == [0, 0, 1, 1, 2, 4, 5]
    assert bucket_index(2001) == -1  # beyond the last edge: no bucket
    # Midpoints rounded down: (0+25)//2 = 12, (25+100)//2 = 62, ..., (1000+2000)//2 = 1500.
    assert bucket_midpoints() == [12, 62, 175, 375, 750, 1500]
    # The problem's traffic_mix lists its 31 non-empty buckets in our order (output
    # bucket from the longest down, prompt bucket from the shortest up): a subsequence.
    problem = yaml.safe_load((ROOT / "problems" / "traffic-mix-measured.yaml").read_text())
    mix = [(b["prompt_tokens"], b["output_tokens"]) for b in problem["workloads"][0]["traffic_mix"]]
    mids = bucket_midpoints()
    ours = [(mids[i], mids[j]) for i, j in bucket_order()]
    assert len(ours) == 36 and ours[0] == (12, 1500) and ours[-1] == (1500, 12)
    positions = [ours.index(b) for b in mix]
    assert positions == sorted(positions) and len(mix) == 31


def test_accelerator_options():
    # A bare ID is the accelerator of vLLM results; NAME=ID maps names found in files.
    assert parse_accelerator_options(["l4", "A100=a100-40gb"]) == ("l4", {"A100": "a100-40gb"})
    assert parse_accelerator_options(None) == (None, {})
    with pytest.raises(ProcureError, match="two accelerators"):
        parse_accelerator_options(["l4", "h100"])


# --------------------------------------------------------------------------- the fit


def test_fit_factors_geometric_mean_hand_case():
    # Two points measured at 0.5x and 0.8x the physics: factor = sqrt(0.5 x 0.8) =
    # sqrt(0.4) = 0.632456; each point is off the fit by |ln(0.8 / 0.632456)| =
    # ln(0.8 / 0.5) / 2 = ln(1.6) / 2 = 0.235002, so median = max = 0.235002.
    # A third group has one point at 2x (factor 2, error 0) and one the physics
    # cannot run (predicted 0): no ratio, counted as excluded.
    points = pd.DataFrame(
        {
            "accelerator": ["a", "a", "b", "b"],
            "runtime": ["vllm"] * 4,
            "model": ["m1", "m2", "m1", "m1"],
            "measured": [50.0, 80.0, 30.0, 10.0],
            "predicted": [100.0, 100.0, 15.0, 0.0],
        }
    )
    factors = fit_factors(points).set_index("accelerator")
    a = factors.loc["a"]
    assert a["factor"] == pytest.approx(math.sqrt(0.4))
    assert a["factor"] == pytest.approx(0.632456, abs=1e-6)
    assert a["median_abs_log_ratio"] == pytest.approx(math.log(1.6) / 2)
    assert a["max_abs_log_ratio"] == pytest.approx(0.235002, abs=1e-6)
    assert (a["n_points"], a["n_excluded"], a["model"]) == (2, 0, "m1;m2")
    b = factors.loc["b"]
    assert (b["factor"], b["n_points"], b["n_excluded"]) == (pytest.approx(2.0), 1, 1)
    assert b["max_abs_log_ratio"] == pytest.approx(0.0)
    # One factor over every usable point: exp(mean(ln 0.5, ln 0.8, ln 2)) = 0.8 ** (1/3).
    (whole,) = fit_factors(points, by=()).to_dict(orient="records")
    assert whole["factor"] == pytest.approx(0.8 ** (1 / 3)) and whole["n_excluded"] == 1


def test_fit_factors_without_usable_points_is_nan_not_one():
    points = pd.DataFrame(
        {"accelerator": ["a"], "runtime": ["vllm"], "measured": [0.0], "predicted": [5.0]}
    )
    (row,) = fit_factors(points).to_dict(orient="records")
    assert math.isnan(row["factor"]) and row["n_points"] == 0 and row["n_excluded"] == 1


# --------------------------------------------------------------------------- reading


def test_vllm_result_is_one_point_at_its_mean_size(catalog):
    (point,), notes = read_measurements(
        str(VLLM_RESULT), VLLM_RESULT.read_text(), catalog, accelerator="L4"
    )
    # 1600 / 8 = 200 prompt and 160 / 8 = 20 output tokens per request, in bucket
    # (100-250, 0-25) = (2, 0); max_concurrency 4; model_id meta-llama/Llama-2-7b-hf is
    # the catalog's llama-2-7b once "-hf" is dropped; backend vllm.
    assert (point["prompt_tokens"], point["output_tokens"]) == (200, 20)
    assert (point["prompt_bucket"], point["output_bucket"], point["per_bucket"]) == (2, 0, True)
    assert point["concurrency"] == 4
    assert (point["measured_rps"], point["measured"]) == (3.2, 64.0)
    assert (point["ttft_ms"], point["tpot_ms"]) == (150.0, 60.0)
    assert (point["accelerator"], point["model"], point["runtime"]) == ("l4", "llama-2-7b", "vllm")
    assert notes == []


def test_vllm_result_littles_law_mixed_sizes_and_failures(catalog):
    data = json.loads(VLLM_RESULT.read_text())
    # No cap, a finite rate: requests in flight = 3.2 requests/s x 1.25 s mean end-to-end
    # latency = 4.0 (Little's law).
    data.update(max_concurrency=None, request_rate=4.0, mean_e2el_ms=1250.0)
    # One request failed (no output, an error) and one ran 40 output tokens: the mean over
    # the 7 that completed is (6 x 20 + 40) / 7 = 22.857 output tokens, and the run spans
    # two output buckets (0-25 and 25-100), so it is no bucket's measured figure.
    data["output_lens"][0] = 0
    data["errors"][0] = "timeout"
    data["output_lens"][1] = 40
    (point,), notes = read_measurements("run.json", json.dumps(data), catalog, accelerator="l4")
    assert point["concurrency"] == pytest.approx(4.0)
    assert point["output_tokens"] == pytest.approx(160 / 7)
    assert point["per_bucket"] is False
    assert any("span 2 size buckets" in n for n in notes)
    # Without latencies either, the point is fitted at the physics' best batch.
    for key in ("mean_e2el_ms", "mean_ttft_ms"):
        data.pop(key, None)
    (point,), notes = read_measurements("run.json", json.dumps(data), catalog, accelerator="l4")
    assert point["concurrency"] is None and any("best batch" in n for n in notes)


def test_csv_rows(catalog):
    points, _ = read_measurements(str(MEASUREMENTS_CSV), MEASUREMENTS_CSV.read_text(), catalog)
    frame = pd.DataFrame(points)
    assert list(frame["accelerator"]) == ["l4", "l4", "h100-sxm"]
    assert set(frame["model"]) == {"llama-2-7b"}  # "Llama 2 7B", "llama2-7b", an HF id
    # requests/s = output tokens/s / output tokens: 118 / 20 = 5.9, 240 / 300 = 0.8,
    # 2400 / 400 = 6.0; the empty concurrency of row 2 means "at the best batch".
    assert list(frame["measured_rps"]) == pytest.approx([5.9, 0.8, 6.0])
    assert points[1]["concurrency"] is None
    # 1200 prompt tokens is in 1000-2000 (bucket 5), 400 output in 250-500 (bucket 3).
    assert (frame["prompt_bucket"].iloc[2], frame["output_bucket"].iloc[2]) == (5, 3)


def test_calibrated_buckets_are_factor_times_physics(catalog):
    # The physics worked by hand from the shipped catalog: the L4 reads 300 GB/s, derated to
    # 65% under vllm-cuda (NIM_H100_PERF in solver/physics/constants.py) = 195 GB/s; Llama 2
    # 7B is 6.74e9 params x 2 B = 13.48 GB of BF16 weights and 2 (K, V) x 32 layers x 32 KV
    # heads x 128 x 2 B = 524,288 B of KV cache per token. Both steps below are memory-bound:
    # their compute (2 x 6.74e9 FLOP for each token decoded or prefilled, at 50% of the L4's
    # 121 TFLOPS) takes under a quarter of the time their reads take, and a step carrying a
    # whole prompt as a chunk (44.7 ms for 200 tokens, 84.2 ms for 375) stays under them too.
    # The run (tests/data): 4 in flight, 200 prompt + 20 output tokens; each step reads the
    # weights once and 4 sequences' KV at the mean context 200 + 20 / 2 = 210 tokens:
    #   (13.48e9 + 4 x 210 x 524,288) B / 195 GB/s = 71.387 ms for 4 tokens: 56.0329 tok/s.
    # Measured 8 x 20 / 2.5 s = 64 tok/s, so factor = 64 / 56.0329 = 1.142187 (one point,
    # error 0).
    step_run_s = (13.48e9 + 4 * 210 * 524_288) / 195e9
    # Bucket 250-500 prompt, 100-250 output (midpoints 375, 175) at the best batch: 21.6 GB
    # usable (24 GB x 0.9) - 13.48 GB of weights = 8.12 GB for KV at the mean context
    # 375 + 175 / 2 = 462.5 tokens (242.5 MB a sequence): 33 sequences. A step reads
    #   (13.48e9 + 33 x 462.5 x 524,288) B / 195 GB/s = 110.164 ms for 33 tokens: 299.554
    #   tok/s, x 1.142187 / 175 output tokens = 1.955123 requests/s (the bandwidth cancels).
    step_bucket_s = (13.48e9 + 33 * 462.5 * 524_288) / 195e9
    result = calibrate(_texts(VLLM_RESULT), catalog, accelerator="l4")
    (profile,) = result.profiles
    (factor_row,) = result.factors.to_dict(orient="records")
    point = result.points.iloc[0]
    assert point["measured"] == pytest.approx(64.0)
    assert point["predicted"] == pytest.approx(4 / step_run_s, rel=1e-6)
    assert point["predicted"] == pytest.approx(56.0329, abs=1e-4)
    assert factor_row["factor"] == pytest.approx(64 / (4 / step_run_s), rel=1e-6)
    assert factor_row["factor"] == pytest.approx(1.142187, abs=1e-6)
    assert factor_row["max_abs_log_ratio"] == pytest.approx(0.0, abs=1e-12)
    buckets = [(b["prompt_tokens"], b["output_tokens"]) for b in profile["buckets"]]
    values = profile["measured_throughput_rps"]["l4"]
    basis = profile["basis"]["l4"]
    # The measured bucket (100-250 prompt, 0-25 output) holds the run's 3.2 requests/s.
    k = buckets.index((175, 12))
    assert (values[k], basis[k]) == (3.2, "measured")
    # Any other bucket: factor x the physics at its midpoint sizes, best batch, in
    # requests/s, rounded to 6 decimals.
    k = buckets.index((375, 175))
    assert basis[k] == "calibrated"
    assert values[k] == pytest.approx(64 / (4 / step_run_s) * 33 / step_bucket_s / 175, abs=1e-6)
    assert values[k] == pytest.approx(1.955123, abs=1e-6)


def test_profile_pastes_into_a_workload(catalog):
    # The layout is the one problems use: buckets as traffic_mix (plus shares), the values
    # as measured_throughput_rps; the workload model accepts it.
    result = calibrate(_texts(VLLM_RESULT, MEASUREMENTS_CSV), catalog, accelerator="l4")
    (profile,) = result.profiles
    share = 1 / len(profile["buckets"])
    workload = InferenceWorkload(
        kind="inference",
        name="w",
        model=profile["model"],
        demand={"requests_per_s": 1},
        prompt_tokens=375,
        output_tokens=175,
        ttft_slo="2 s",
        tpot_slo="100 ms",
        traffic_mix=[{**b, "share": share} for b in profile["buckets"]],
        measured_throughput_rps=profile["measured_throughput_rps"],
    )
    assert set(workload.measured_throughput_rps) == {"l4", "h100-sxm"}


# --------------------------------------------------------------------------- the shared profiles


@needs_shared
def test_reproduces_the_shared_per_bucket_figures(catalog):
    result = calibrate(_texts(*MELANGE_FILES), catalog)
    (profile,) = result.profiles
    assert (profile["model"], profile["runtime"]) == ("llama-2-7b", "vllm")
    assert profile["bucket_edges_tokens"] == list(BUCKET_EDGES_TOKENS)
    rps = profile["measured_throughput_rps"]
    index = {(b["prompt_tokens"], b["output_tokens"]): k for k, b in enumerate(profile["buckets"])}
    mids = bucket_midpoints()
    # Every one of the 36 figures per GPU is the file's tputs[input i][output j], exactly.
    for path in MELANGE_FILES:
        for gpu, info in json.loads(path.read_text())["gpu_info"].items():
            acc = PROBLEM_NAMES[gpu]
            assert profile["basis"][acc] == "measured"
            for i in range(6):
                for j in range(6):
                    assert rps[acc][index[(mids[i], mids[j])]] == info["tputs"][i][j]
    # And the shipped problem's figures, which were read from the same file (H100
    # rounded to 3 decimals there): same accelerators, same values bucket by bucket.
    problem = yaml.safe_load((ROOT / "problems" / "traffic-mix-measured.yaml").read_text())
    workload = problem["workloads"][0]
    for acc, values in workload["measured_throughput_rps"].items():
        for bucket, value in zip(workload["traffic_mix"], values, strict=True):
            ours = rps[acc][index[(bucket["prompt_tokens"], bucket["output_tokens"])]]
            assert ours == pytest.approx(value, abs=5e-4)
    # A10G and A100 are in both files with equal figures: counted once, 36 per GPU.
    factors = result.factors.set_index("accelerator")
    assert sorted(factors.index) == ["a100-80gb", "a10g", "h100-sxm", "l4"]
    assert set(factors["n_points"]) == {36} and set(factors["n_excluded"]) == {0}
    assert (factors["factor"] > 0).all() and factors["factor"].map(math.isfinite).all()
    assert any("72 point(s) repeat" in n for n in result.notes)
    assert any("rows 7-10" in n for n in result.notes)


@needs_shared
def test_cli_on_the_shared_profiles_prints_figures_and_factors(tmp_path):
    result = runner.invoke(
        app, ["calibrate", *map(str, MELANGE_FILES), "--out", str(tmp_path / "cal")]
    )
    assert result.exit_code == 0, result.output
    assert "fitted factors" in result.stdout
    for acc in PROBLEM_NAMES.values():
        assert acc in result.stdout
    # H100 in the (12, 1500) bucket: 0.6212185252 requests/s, printed to 4 figures.
    assert "0.6212" in result.stdout
    written = yaml.safe_load((tmp_path / "cal" / "profiles.yaml").read_text())
    h100 = json.loads(MELANGE_FILES[1].read_text())["gpu_info"]["H100"]["tputs"]
    assert written["profiles"][0]["measured_throughput_rps"]["h100-sxm"][0] == h100[0][5]
    factors = pd.read_csv(tmp_path / "cal" / "factors.csv")
    assert list(factors.columns[:5]) == [
        "accelerator",
        "runtime",
        "model",
        "n_points",
        "n_excluded",
    ]
    assert len(factors) == 4


# --------------------------------------------------------------------------- refusals


def _vllm(**changes) -> str:
    data = json.loads(VLLM_RESULT.read_text())
    for key, value in changes.items():
        if value is _DROP:
            data.pop(key)
        else:
            data[key] = value
    return json.dumps(data)


_DROP = object()
_GOOD_CSV = MEASUREMENTS_CSV.read_text()
_MELANGE = {
    "_model": "meta-llama/Llama-2-7b-hf, vLLM, 1 GPU per replica",
    "_bucket_upper_bounds_tokens": [25, 100, 250, 500, 1000, 2000],
    "gpu_info": {"L4": {"cost": 0.7, "tputs": [[1.0] * 6 for _ in range(6)]}},
}


def _melange(gpu_info: dict) -> str:
    return json.dumps({**_MELANGE, "gpu_info": gpu_info})


REFUSALS = [
    # (file name, text, --accelerator, field named, words in the message)
    ("run.json", "{not json", "l4", "line 1", "not JSON"),
    ("run.json", "[1, 2]", "l4", "top level", "JSON object"),
    ("run.json", _vllm(completed=_DROP), "l4", "completed", "missing"),
    ("run.json", _vllm(), None, "accelerator", "does not say which accelerator"),
    ("run.json", _vllm(), "b9000", "--accelerator", "unknown accelerator"),
    ("run.json", _vllm(output_throughput=float("nan")), "l4", "output_throughput", "finite"),
    ("run.json", _vllm(duration=float("inf")), "l4", "duration", "finite"),
    ("run.json", _vllm(total_output_tokens=-160), "l4", "total_output_tokens", "positive"),
    ("run.json", _vllm(completed="8"), "l4", "completed", "not a number"),
    ("run.json", _vllm(model_id="/models/my-finetune"), "l4", "model_id", "not a catalog model"),
    ("run.json", _vllm(output_lens=[20, 20]), "l4", "output_lens", "8 input_lens but 2"),
    ("run.json", _vllm(max_concurrency=0), "l4", "max_concurrency", "positive"),
    ("m.csv", _GOOD_CSV.replace("tpot_ms", "tpot"), None, "tpot_ms", "missing"),
    ("m.csv", _GOOD_CSV.replace(",240,", ",fast,"), None, "line 3: output_tokens_per_s", "fast"),
    (
        "m.csv",
        _GOOD_CSV.replace(",240,", ",-240,"),
        None,
        "line 3: output_tokens_per_s",
        "positive",
    ),
    ("m.csv", _GOOD_CSV.replace("600,300", "600,nan"), None, "line 3: output_tokens", "finite"),
    ("m.csv", _GOOD_CSV.replace("H100,", "H900,"), None, "line 4: accelerator", "H900"),
    ("m.csv", _GOOD_CSV.replace("L4,llama2-7b", "L4,"), None, "line 3: model", "model"),
    ("m.csv", _GOOD_CSV.splitlines()[0] + "\n", None, "line 2", "no measurements"),
    (
        "p.json",
        _melange({"L4": {"tputs": [[1.0] * 6] * 5 + [[1.0] * 3]}}),
        None,
        "gpu_info.L4.tputs[5]",
        "needs 6 values",
    ),
    (
        "p.json",
        _melange({"L4": {"tputs": [[1.0] * 6] * 5 + [[1.0] * 5 + [-0.1]]}}),
        None,
        "gpu_info.L4.tputs[5][5]",
        "zero or more",
    ),
    ("p.json", _melange({"X9": {"tputs": [[1.0] * 6] * 6}}), None, "gpu_info.X9", "X9"),
]


@pytest.mark.parametrize(("name", "text", "acc", "field", "words"), REFUSALS)
def test_refusals_name_the_file_and_the_field(catalog, name, text, acc, field, words):
    with pytest.raises(ProcureError) as caught:
        read_measurements(name, text, catalog, accelerator=acc)
    error = caught.value
    assert error.file == name and error.field == field
    assert words in error.message and error.fix


def test_cli_refusal_is_one_message_and_exit_2(tmp_path):
    bad = tmp_path / "run.json"
    bad.write_text(_vllm(output_throughput=-1))
    result = runner.invoke(app, ["calibrate", str(bad), "--accelerator", "l4"])
    assert result.exit_code == 2
    assert f"{bad}: output_throughput:" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["calibrate", str(VLLM_RESULT)])
    assert result.exit_code == 2 and "--accelerator" in result.output
    result = runner.invoke(app, ["calibrate", str(tmp_path / "absent.json")])
    assert result.exit_code == 2 and "absent.json" in result.output
    result = runner.invoke(
        app, ["calibrate", str(VLLM_RESULT), "--accelerator", "l4", "--runtime", "ollama"]
    )
    assert result.exit_code == 2 and "unknown runtime" in result.output


# --------------------------------------------------------------------------- CLI round trip


def test_cli_round_trip(tmp_path):
    out = tmp_path / "cal"
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(VLLM_RESULT),
            str(MEASUREMENTS_CSV),
            "--accelerator",
            "l4",
            "--out",
            str(out),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # stdout is the JSON alone
    assert {"profiles", "factors", "points", "notes"} <= set(report)
    factors = {r["accelerator"]: r for r in report["factors"]}
    # Three L4 points (the vLLM run and two CSV rows), one H100 row; one H100 point has
    # factor = measured / predicted exactly and no error.
    assert (factors["l4"]["n_points"], factors["h100-sxm"]["n_points"]) == (3, 1)
    assert factors["h100-sxm"]["max_abs_log_ratio"] == pytest.approx(0.0, abs=1e-12)
    written = yaml.safe_load((out / "profiles.yaml").read_text())
    assert written["profiles"] == report["profiles"]
    csv_factors = pd.read_csv(out / "factors.csv")
    assert csv_factors["factor"].tolist() == pytest.approx([r["factor"] for r in report["factors"]])
    # The CSV's first row (200 prompt, 20 output, 5.9 requests/s at concurrency 8) and the
    # vLLM run (3.2 at 4) share a bucket: the profile keeps the higher, 5.9.
    profile = written["profiles"][0]
    k = [(b["prompt_tokens"], b["output_tokens"]) for b in profile["buckets"]].index((175, 12))
    assert profile["measured_throughput_rps"]["l4"][k] == pytest.approx(5.9)
    # With a TPOT SLO of 61 ms the CSV row (62 ms) no longer counts: the vLLM run's 3.2.
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(VLLM_RESULT),
            str(MEASUREMENTS_CSV),
            "--accelerator",
            "l4",
            "--tpot-slo-ms",
            "61",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    profile = json.loads(result.stdout)["profiles"][0]
    assert profile["measured_throughput_rps"]["l4"][k] == pytest.approx(3.2)
