"""The replay's own error against published latency distributions, and its speed.

Usage: ``python bench/accuracy/replay.py [--quick] [--speed]`` (``--speed``: part 2 alone)

1. Error. (a) The runs the replay models: vLLM's own serving benchmark
   (``benchmark_serving.py``, Poisson arrivals, ShareGPT prompts) against one vLLM 0.8.3
   server with its defaults, whose saved result files give every request's prompt and output
   tokens, its time to first token and its inter-token gaps (VLLM_A100_SHAREGPT below); the
   replay runs those very requests at the run's rate, 20 arrival draws, the median of each
   percentile kept. Printed with the estimator's step as it is, and with the step and a
   fixed first-token overhead calibrated on the lightest run alone (as Vidur profiles the
   engine it simulates), judged on the other three. (b) MLPerf Server runs, printed for
   comparison but outside the replay's class (a harness that holds and batches queries,
   tuned until a latency limit binds): each is a published run whose latency distribution
   at a stated Poisson rate is in its log: MLPerf Inference Llama 2 70B Server runs, whose
   ``mlperf_log_summary.txt`` gives the first-token latency (TTFT) and the time per output
   token (TPOT) at p50, p90 and p99 (MLPerf's TPOT is a query's mean gap between tokens
   after the first, as the replay's). The replay runs the same fleet (replicas of the
   submission's tensor-parallel degree on its accelerators, its runtime's figures) at the
   scheduled rate with the data set's mean sizes (prompt 219 tokens, output 294:
   MLPERF_L2_PROMPT in bench/ACCURACY_SOURCES.md) and prints predicted / measured.
2. Speed. The same replay timed with the project's heap event loop and with SimPy 4 (the
   same engine steps driven by SimPy processes): requests simulated per second of each,
   and the seed plan's synthetic trace replayed end to end (``procure replay`` defaults).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from solver import physics  # noqa: E402
from solver.analyses.replay import engine  # noqa: E402
from solver.analyses.replay.fleet import replica_spec  # noqa: E402
from solver.analyses.replay.trace import poisson_trace  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.presets import resolve_model  # noqa: E402

PROMPT, OUTPUT = 219, 294  # MLPERF_L2_PROMPT (bench/ACCURACY_SOURCES.md)

#: published runs: mlperf_log_summary.txt of each (repository, path, commit); ns -> s
CASES = [
    {
        "name": "MLPerf v4.1 AMD 8x MI300X, vLLM, Llama 2 70B FP8, Server",
        "source": "mlcommons/inference_results_v4.1 @ a2f5d66d17e8f75c02fd74dfe810ecca6a046696 "
        "closed/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server/performance/run_1/"
        "mlperf_log_summary.txt (MLPINF41_AMD)",
        "accelerator": "mi300x",
        "runtime": None,  # the vendor's default: vllm-rocm
        "tp": 1,
        "replicas": 8,  # harness tensor_parallel_size 1 (bench/ACCURACY_SOURCES.md)
        "max_seqs": None,
        "rate": 73.66,  # "Scheduled samples per second"
        "offline_tokens_per_s": 23514.8,  # the same system's Offline run (MLPINF41_AMD)
        "ttft_s": (0.990199455, 1.319203675, 1.604171041),  # p50, p90, p99
        "tpot_s": (0.143943044, 0.175935833, 0.197873909),
    },
    {
        "name": "MLPerf v4.1 NVIDIA DGX-H100 (8x H100 SXM), TensorRT-LLM, Llama 2 70B FP8, Server",
        "source": "mlcommons/inference_results_v4.1 @ a2f5d66d17e8f75c02fd74dfe810ecca6a046696 "
        "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Server/performance/"
        "run_1/mlperf_log_summary.txt (MLPINF41_NVIDIA)",
        "accelerator": "h100-sxm",
        "runtime": "tensorrt-llm",
        "tp": 2,
        "replicas": 4,  # H100_SXM_80GB_TP2x4, gpu_batch_size 896 (MLPINF41_NVIDIA)
        "max_seqs": 896,
        "rate": 75.10,
        "offline_tokens_per_s": 24524.9,  # the same system's Offline run (MLPINF41_NVIDIA)
        "ttft_s": (0.272954995, 0.372923186, 0.461278089),
        "tpot_s": (0.156419276, 0.165773495, 0.175354317),
    },
]


def case_specs(case: dict) -> list[engine.ReplicaSpec]:
    """The run's replicas as the replay builds them from the catalog and the estimator."""
    catalog = load_catalog(None)
    model = physics.served_model(resolve_model("llama-2-70b", catalog, "bench"), "fp8", "fp8")
    acc = catalog.accelerators.loc[case["accelerator"]]
    table = physics.one_row_table(acc)
    dev = physics.device_figures(table, "fp8", np.array([True]), case["runtime"])
    spec = replica_spec(model, case["tp"], dev, 0.10)
    if case["max_seqs"]:
        spec = replace(spec, max_seqs=case["max_seqs"])
    return [spec] * case["replicas"]


def scaled_spec(spec: engine.ReplicaSpec, k: float) -> engine.ReplicaSpec:
    """The replica with every time of its step and its prefill multiplied by ``k``."""
    c = spec.cost
    cost = replace(
        c,
        weights_s=c.weights_s * k,
        routed_s=c.routed_s * k,
        kv_s_per_token=c.kv_s_per_token * k,
        compute_s_per_seq=c.compute_s_per_seq * k,
        compute_s_per_token=c.compute_s_per_token * k,
        fixed_s=c.fixed_s * k,
        comm_s_per_token=c.comm_s_per_token * k,
    )
    return replace(
        spec,
        cost=cost,
        prefill_s_per_token=spec.prefill_s_per_token * k,
        prefill_s_per_token_sq=spec.prefill_s_per_token_sq * k,
    )


def offline_scale(case: dict) -> float:
    """The factor on the replay's step times that makes its Offline throughput (every
    request waiting at once, the batch at the runtime's limit) the published Offline run's:
    capacity taken from a measurement, so the Server comparison judges the replay's
    queueing and batching alone, not the estimator's throughput."""
    spec = case_specs(case)[0]
    reqs = [engine.Request(0.0, PROMPT, OUTPUT) for _ in range(4 * spec.max_seqs)]
    done, _, end = engine.simulate([spec], reqs)
    per_replica = sum(r.output_tokens for r in done) / end
    measured = case["offline_tokens_per_s"] / case["replicas"]
    return per_replica / measured


def replay_case(case: dict, duration_s: float, seed: int, k: float = 1.0) -> dict:
    """Replay one case: Poisson arrivals at its rate, 20% warm-up before and after;
    step times multiplied by ``k``."""
    warm = 0.2 * duration_s
    rows = poisson_trace(case["rate"], warm + duration_s + warm, ((1.0, PROMPT, OUTPUT),), seed)
    reqs = [engine.Request(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in rows]
    specs = [scaled_spec(s, k) for s in case_specs(case)]
    done, stats, _ = engine.simulate(specs, reqs, (warm, warm + duration_s))
    measured = [r for r in done if warm <= r.arrival_s < warm + duration_s]
    ttft = np.array([r.first_token_s - r.arrival_s for r in measured])
    tpot = np.array([(r.done_s - r.first_token_s) / (r.output_tokens - 1) for r in measured])
    return {
        "ttft_s": tuple(np.percentile(ttft, [50, 90, 99])),
        "tpot_s": tuple(np.percentile(tpot, [50, 90, 99])),
        "requests": len(reqs),
        "mean_batch": statistics.fmean(s.mean_batch for s in stats),
    }


def error_table(duration_s: float, calibrated: bool) -> list[float]:
    """Print predicted / measured per case and percentile; return every |ln ratio|.
    ``calibrated``: step times scaled to the same system's Offline run first."""
    logs = []
    for case in CASES:
        k = offline_scale(case) if calibrated else 1.0
        got = replay_case(case, duration_s, seed=0, k=k)
        print(f"\n{case['name']}\n  source: {case['source']}")
        if calibrated:
            print(f"  step times x {k:.3f} (the replay's Offline throughput = the published one)")
        print(f"  {'':6} {'p50':>22} {'p90':>22} {'p99':>22}   (replay / measured)")
        for key, label in (("ttft_s", "TTFT"), ("tpot_s", "TPOT")):
            cells = []
            for want, have in zip(case[key], got[key], strict=True):
                ratio = have / want
                logs.append(abs(math.log(ratio)))
                cells.append(f"{have * 1000:7.0f}/{want * 1000:5.0f} ms {ratio:4.2f}x")
            print(f"  {label:6} " + " ".join(f"{c:>22}" for c in cells))
        # Little's law on the published run: sequences in flight per replica = arrival rate
        # per replica x time in the system (TTFT + the other output tokens x TPOT, medians)
        held = (
            case["rate"] / case["replicas"] * (case["ttft_s"][0] + (OUTPUT - 1) * case["tpot_s"][0])
        )
        print(
            f"  sequences in flight per replica: published run {held:.0f} (Little's law), "
            f"replay {got['mean_batch']:.0f} decoding"
        )
    errors = [math.exp(x) - 1 for x in logs]
    print(
        f"\nreplay error over {len(logs)} percentiles: median {statistics.median(errors):.0%}, "
        f"largest {max(errors):.0%} (|ratio - 1| of the nearer side, as exp|ln ratio| - 1)"
    )
    return logs


def simulate_simpy(
    specs: list[engine.ReplicaSpec], requests: list[engine.Request]
) -> list[engine.Request]:
    """The same engine steps driven by SimPy processes (one per replica, one for arrivals).
    SimPy is not a dependency of procure: ``pip install simpy`` to run this comparison."""
    import simpy

    env = simpy.Environment()
    reps = [engine._Replica(s) for s in specs]
    wake: list[simpy.Event | None] = [None] * len(reps)

    def replica(i: int):
        r = reps[i]
        while True:
            if r.head >= len(r.waiting) and not r.prefilling and not r.decoding:
                wake[i] = env.event()
                yield wake[i]
                continue
            seconds, chunks = engine._plan_step(r)
            r.busy = True
            yield env.timeout(seconds)
            engine._end_step(r, env.now, chunks)
            r.busy = False

    def arrivals():
        for req in requests:
            if req.arrival_s > env.now:
                yield env.timeout(req.arrival_s - env.now)
            i = engine._route(reps)
            req.replica = i
            reps[i].waiting.append(req)
            event = wake[i]
            if event is not None and not event.triggered:
                wake[i] = None
                event.succeed()

    for i in range(len(reps)):
        env.process(replica(i))
    env.process(arrivals())
    env.run()
    return requests


def speed(duration_s: float, repeats: int = 3) -> None:
    """Requests simulated per CPU second, heap loop against SimPy on the first case: each
    run ``repeats`` times, alternating, the fastest kept (CPU time, ``time.process_time``,
    so other processes on a shared machine do not count)."""
    case = CASES[0]
    rows = poisson_trace(case["rate"], duration_s, ((1.0, PROMPT, OUTPUT),), 0)
    specs = case_specs(case)
    try:
        import simpy  # noqa: F401
    except ImportError:
        print("\nspeed: SimPy is not installed (pip install simpy) - the heap loop alone")
        runs = (("heapq", engine.simulate),)
    else:
        runs = (("heapq", engine.simulate), ("simpy", simulate_simpy))
    timings: dict[str, float] = {}
    results = {}
    for _ in range(repeats):
        for name, run in runs:
            reqs = [engine.Request(r.arrival_s, r.prompt_tokens, r.output_tokens) for r in rows]
            began = time.process_time()
            out = run(specs, reqs)
            spent = time.process_time() - began
            timings[name] = min(spent, timings.get(name, math.inf))
            done = out[0] if isinstance(out, tuple) else out
            results[name] = [round(r.done_s, 9) for r in done]
    same = results["heapq"] == results.get("simpy", results["heapq"])
    print(
        f"\nspeed, {len(rows):,} requests ({duration_s:g} s at {case['rate']} req/s on 8 "
        f"replicas), fastest of {repeats}, CPU seconds:"
    )
    for name, seconds in timings.items():
        print(f"  {name}: {seconds:.2f} s, {len(rows) / seconds:,.0f} requests simulated per s")
    if len(timings) > 1:
        print(f"  same request times from both: {same}")


def seed_replay() -> None:
    """The seed plan's synthetic trace replayed as ``procure replay`` does by default."""
    from solver.analyses.replay import replay_plan
    from solver.inputs.problem import load_problem
    from solver.solve import solve_problem

    catalog = load_catalog(None)
    problem = load_problem(ROOT / "problems" / "seed-2m-13b.yaml")
    plan = solve_problem(problem, catalog)
    began = time.process_time()
    result = replay_plan(plan, problem, catalog)
    cpu_s = time.process_time() - began
    lost = [r for r in result.rows if r.case == "N+1 lost" and not r.deployment]
    worst = max(lost, key=lambda r: r.tpot.p99_s)
    print(
        f"\nseed plan, synthetic trace (600 s per block, 3 periods x 3 blocks x 2 cases): "
        f"{result.requests_simulated:,} requests simulated in {cpu_s:.1f} CPU s "
        f"({result.requests_simulated / cpu_s:,.0f} per s; {result.simulate_s:.1f} s wall); "
        f"meets every SLO: "
        f"{result.meets_slos}; worst block with one unit lost: {worst.period} {worst.block} "
        f"TTFT p99 {worst.ttft.p99_s * 1000:.0f} ms, TPOT p99 {worst.tpot.p99_s * 1000:.1f} ms "
        f"(limits {worst.ttft_slo_s * 1000:.0f} and {worst.tpot_slo_s * 1000:.0f} ms)"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the error table, the speed comparison and the seed replay's time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter replays (120 s)")
    parser.add_argument(
        "--speed", action="store_true", help="the speed and the seed's replay alone"
    )
    args = parser.parse_args(argv)
    duration = 120.0 if args.quick else 600.0
    if args.speed:
        speed(300.0)
        seed_replay()
        return
    import replay_vllm

    print("== (a) published vLLM serving runs, every request recorded (the replay's class)")
    replay_vllm.error_table(5 if args.quick else 20, scaled_spec)
    replay_vllm.error_table(5 if args.quick else 20, scaled_spec, additive=True)
    print(
        "\n== (b) MLPerf Server runs (outside the class: a harness that batches, tuned to a limit)"
    )
    print("== the estimator's step times as they are")
    error_table(duration, calibrated=False)
    print("\n== step times scaled to each system's published Offline throughput")
    error_table(duration, calibrated=True)
    speed(duration / 2)
    seed_replay()


if __name__ == "__main__":
    main()
