"""The replay against published vLLM serving runs whose every request is in the record.

Source (VLLM_A100_SHAREGPT in bench/accuracy/ACCURACY_SOURCES.md): ``surajssd/llm-k8s`` @
58b61c59450e06073120a8ad166c1e9c333851a7,
``results_serving_meta-llama-Llama-3.3-70B-Instruct/01_tp8_pp1/serving_*_qps_{01,04,16,inf}.json``
(2025-04-14): Llama 3.3 70B Instruct in BF16 on one Azure Standard_ND96asr_v4 (8x A100
40 GB SXM, NVLink), ``vllm serve`` 0.8.3 at tensor parallel 8 with its defaults, measured by
vLLM's ``benchmark_serving.py`` (200 ShareGPT prompts, seed 0, Poisson arrivals at 1, 4 and
16 requests/s, and all at once). Each file lists every request's ``input_lens``,
``output_lens``, ``ttfts`` and ``itls``; ``bench/accuracy/replay_vllm_sharegpt.csv`` holds
them (TPOT of a request: the sum of its gaps over its output tokens - 1, as
``benchmark_serving.py`` computes it; its medians and p99s are the file's own).

What the replay is given, from the same record: the engine limits vLLM 0.8.3 sets on a GPU
under 70 GiB (``vllm/engine/arg_utils.py``: ``max_num_batched_tokens`` 2048 and
``max_num_seqs`` 256 for the API server, the replay's defaults), and the prefix cache: vLLM
V1 caches prompts by default and the four runs sent the same 200 prompts to one server in
turn, so from the second run on every prompt's full 16-token blocks are cache hits (the
all-at-once run's 42,659 prompt tokens got their first tokens within 0.45 s, which is 13
PFLOP/s of prefill: five times the eight GPUs' 2.5 PFLOP/s BF16 peak, possible only from
the cache).
"""

from __future__ import annotations

import csv
import math
import statistics
from dataclasses import replace
from pathlib import Path

import numpy as np

from solver import physics
from solver.analyses.replay import engine
from solver.analyses.replay.fleet import replica_spec
from solver.inputs.catalog import load_catalog
from solver.inputs.presets import resolve_model

DATA = Path(__file__).with_name("replay_vllm_sharegpt.csv")
RUNS = ("01", "04", "16", "inf")  # request_rate column: req/s, "inf" all at once
BLOCK_TOKENS = 16  # vLLM's KV block on CUDA: a prefix hit covers whole blocks
SOURCE = (
    "surajssd/llm-k8s @ 58b61c59450e06073120a8ad166c1e9c333851a7 results_serving_meta-llama-"
    "Llama-3.3-70B-Instruct/01_tp8_pp1/serving_*_qps_*.json (VLLM_A100_SHAREGPT)"
)


def spec() -> engine.ReplicaSpec:
    """One replica of Llama 3.3 70B BF16 on 8x A100 40 GB, as the replay builds it."""
    catalog = load_catalog(None)
    model = physics.served_model(resolve_model("llama-3.3-70b", catalog, "bench"), "bf16", "bf16")
    acc = catalog.accelerators.loc["a100-40gb"]
    dev = physics.device_figures(physics.one_row_table(acc), "bf16", np.array([True]), None)
    return replica_spec(model, 8, dev, 0.10)


def load_runs() -> dict[str, list[dict[str, str]]]:
    """The recorded requests of each run, in the order they were sent."""
    runs: dict[str, list[dict[str, str]]] = {r: [] for r in RUNS}
    with DATA.open() as f:
        for row in csv.DictReader(f):
            runs[row["request_rate"]].append(row)
    return runs


def measured(rows: list[dict[str, str]]) -> np.ndarray:
    """TTFT p50, p90, p99 then TPOT p50, p90, p99 (seconds) of a recorded run."""
    ttft = [float(r["ttft_s"]) for r in rows]
    tpot = [float(r["tpot_s"]) for r in rows if r["tpot_s"]]
    return np.r_[np.percentile(ttft, [50, 90, 99]), np.percentile(tpot, [50, 90, 99])]


def replayed(
    rep: engine.ReplicaSpec, run: str, rows: list[dict[str, str]], draws: int, overhead_s: float
) -> np.ndarray:
    """The same percentiles replayed: the run's requests at its rate, ``draws`` Poisson
    arrival draws (the median of each percentile), ``overhead_s`` added to every TTFT."""
    warm = run != RUNS[0]  # the first run met a cold prefix cache
    out = []
    for seed in range(draws):
        rng = np.random.default_rng(seed)
        n = len(rows)
        at = np.zeros(n) if run == "inf" else np.cumsum(rng.exponential(1.0 / float(run), n))
        reqs = []
        for t, r in zip(at, rows, strict=True):
            p = int(r["prompt_tokens"])
            cached = min(BLOCK_TOKENS * (p // BLOCK_TOKENS), p - 1) if warm else 0
            reqs.append(engine.Request(float(t), p, int(r["output_tokens"]), cached_tokens=cached))
        done, _, _ = engine.simulate([rep], reqs)
        ttft = [q.first_token_s - q.arrival_s + overhead_s for q in done]
        tpot = [
            (q.done_s - q.first_token_s) / (q.output_tokens - 1)
            for q in done
            if q.output_tokens > 1
        ]
        out.append(np.r_[np.percentile(ttft, [50, 90, 99]), np.percentile(tpot, [50, 90, 99])])
    return np.median(np.array(out), axis=0)


def error_table(draws: int, scale: object, additive: bool = False) -> None:
    """Print the replay against each run, as the estimator gives the step and calibrated on
    the lightest run; ``scale(spec, k)`` multiplies every step time by ``k``. ``additive``:
    a diagnostic of the step's form, its memory and compute times added instead of
    overlapped (``StepCost.overlap`` False), the rest the same."""
    base = spec()
    if additive:
        base = replace(base, cost=replace(base.cost, overlap=False))
    runs = load_runs()
    want = {r: measured(rows) for r, rows in runs.items()}
    first = replayed(base, RUNS[0], runs[RUNS[0]], draws, 0.0)
    k = float(want[RUNS[0]][3] / first[3])  # TPOT p50 of the lightest run
    calibrated = scale(base, k)  # type: ignore[operator]
    again = replayed(calibrated, RUNS[0], runs[RUNS[0]], draws, 0.0)
    overhead = float(want[RUNS[0]][0] - again[0])  # TTFT p50 of the lightest run
    form = " (diagnostic: memory and compute added, not overlapped)" if additive else ""
    print(
        f"\nvLLM 0.8.3, Llama 3.3 70B BF16, 8x A100 40 GB TP8, ShareGPT{form}\n  source: {SOURCE}"
    )
    for label, rep, extra, judged in (
        ("the estimator's step as it is", base, 0.0, RUNS),
        (
            f"step x {k:.3f} and TTFT + {overhead * 1000:.1f} ms, both from the 1 req/s run "
            "(judged on the other three)",
            calibrated,
            overhead,
            RUNS[1:],
        ),
    ):
        print(f"\n  {label}")
        print(f"  {'req/s':>5} {'':5} {'p50':>20} {'p90':>20} {'p99':>20}   (replay / measured)")
        logs = []
        for run in RUNS:
            got = replayed(rep, run, runs[run], draws, extra)
            for i, name in ((0, "TTFT"), (3, "TPOT")):
                cells = []
                for j in range(3):
                    ratio = got[i + j] / want[run][i + j]
                    if run in judged:
                        logs.append(abs(math.log(ratio)))
                    cells.append(
                        f"{got[i + j] * 1000:6.0f}/{want[run][i + j] * 1000:4.0f} ms {ratio:4.2f}x"
                    )
                print(f"  {run:>5} {name:5} " + " ".join(f"{c:>20}" for c in cells))
        errors = [math.exp(x) - 1 for x in logs]
        inside = sum(e <= 1.0 for e in errors)
        print(
            f"  error over {len(errors)} percentiles: median {statistics.median(errors):.0%}, "
            f"largest {max(errors):.0%}; within 2x: {inside} of {len(errors)}"
        )
