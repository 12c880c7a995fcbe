"""Fit a serving runtime's figures on the accuracy table's MAIN rows (issue 33).

    python bench/accuracy/fit_runtime.py gaudi --bw 0.75,0.8,0.85,0.9,0.95 --compute 0.35,0.4,0.45 \
        --overhead-ms 3,4,5,6,8 --combine sum
    python bench/accuracy/fit_runtime.py neuron --bw 0.3,0.5,0.7,0.9,1.0 --compute 0.05,0.07,0.1 \
        --overhead-ms 0,5,10,15,20 --combine max
    python bench/accuracy/fit_runtime.py tpu --bw 0.5,0.6,0.7,0.8 --compute 0.45,0.55,0.65 \
        --overhead-ms 0,2,4 --combine max
    python bench/accuracy/fit_runtime.py vllm-cuda --bw 0.55,0.6,0.65,0.7,0.75 \
        --compute 0.4,0.45,0.5,0.55 --overhead-ms 0 --combine max --rank table
    python bench/accuracy/fit_runtime.py vllm-rocm --bw 0.55 --overhead-ms 2 --combine sum \
        --compute 0.80,0.85,0.90,0.92,0.94,0.96,0.98,1.00,1.02,1.05

(vllm-rocm's compute fraction is of each device's sustained GEMM rate since session 61:
constants.SUSTAINED_COMPUTE_SHARE x the data-sheet peak.)

Over the grid of (fraction of bandwidth, fraction of peak, step overhead) it runs every
main serving row of the runtime's accelerators through the estimator and ranks the points
by the largest |ln(predicted / measured)| (then the median |error|); it prints the best
eight and, for the best, every row of the runtime (main and holdout). Holdout rows never
enter the ranking. The figures in solver/physics/constants.py were read off these runs;
the hand derivations beside them check two rows each.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "bench" / "accuracy"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import accuracy  # noqa: E402

from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.physics import constants  # noqa: E402

ACCELERATORS = {
    # NVIDIA: vLLM (CUDA) and TensorRT-LLM share the kernels' fractions (constants.py)
    "vllm-cuda": ("h100-sxm", "h100-pcie", "h200", "gh200", "a100-80gb", "a100-40gb", "b200"),
    "gaudi": ("gaudi2", "gaudi3"),
    "neuron": ("inferentia2", "trainium", "trainium2"),
    "vllm-rocm": ("mi300x", "mi325x"),
    "tpu": ("tpu-v5e", "tpu-v5p", "tpu-v6e"),
}


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


def _ratios(catalog, rows) -> list[tuple[str, float | None]]:
    return [(r["case_id"], accuracy.compare(catalog, r).ratio) for r in rows]


# Runtimes that share another's fractions and differ only in how they hold the KV cache
# (constants.py: JetStream is the `tpu` runtime's kernels with a dense cache).
DERIVED = {"tpu": ("jetstream",), "vllm-cuda": ("tensorrt-llm",)}


def _set(runtime: str, base, bw: float, ce: float, f_ms: float, combine: str) -> None:
    """Put one grid point's figures on the runtime (and the runtimes derived from it)."""
    for name in (runtime, *DERIVED.get(runtime, ())):
        constants.RUNTIME_EFFICIENCY[name] = dataclasses.replace(
            constants.RUNTIME_EFFICIENCY[name] if name != runtime else base,
            eta_bandwidth=bw,
            eta_compute=ce,
            step_overhead_s=f_ms / 1e3,
            overlap=combine == "max",
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runtime", choices=sorted(ACCELERATORS))
    ap.add_argument("--bw", type=_floats, required=True, help="fractions of bandwidth")
    ap.add_argument("--compute", type=_floats, required=True, help="fractions of dense peak")
    ap.add_argument("--overhead-ms", type=_floats, required=True, help="ms per step")
    ap.add_argument("--combine", choices=["max", "sum"], default="max")
    ap.add_argument(
        "--rank",
        choices=["worst", "median", "table"],
        default="worst",
        help="worst: by the largest factor, then the median |error|; median: by the median "
        "|error| among the points whose every row is within 2x; table: by the median "
        "|error| over every fitted row of the accuracy table (all runtimes: the target it "
        "is judged on), among the points whose every fitted row is within 2x",
    )
    args = ap.parse_args(argv)
    catalog = load_catalog(None)
    accs = ACCELERATORS[args.runtime]
    rows = [
        r for r in accuracy.read_cases() if r["kind"] == "inference" and r["accelerator"] in accs
    ]
    # the fit ranks main rows only (as when the constants were read off it); fitting_rows
    # refuses any row that is not role=fitted (issue 47: holdout rows never set a default)
    main_rows = accuracy.fitting_rows([r for r in rows if r["set"] == "main"])
    if args.rank == "table":  # every fitted row of the table, not only this runtime's
        main_rows = accuracy.fitting_rows(
            [r for r in accuracy.read_cases() if r.get("role") == "fitted"]
        )
    base = constants.RUNTIME_EFFICIENCY[args.runtime]
    ranked = []
    for bw, ce, f_ms in itertools.product(args.bw, args.compute, args.overhead_ms):
        _set(args.runtime, base, bw, ce, f_ms, args.combine)
        ratios = [x for _, x in _ratios(catalog, main_rows) if x]
        worst = max(abs(math.log(x)) for x in ratios)
        ranked.append((worst, statistics.median(abs(x - 1) for x in ratios), bw, ce, f_ms))
    if args.rank in ("median", "table"):
        within = [r for r in ranked if r[0] <= math.log(2.0)]
        ranked = sorted(within or ranked, key=lambda r: (r[1], r[0]))
    else:
        ranked.sort()
    for worst, med, bw, ce, f_ms in ranked[:8]:
        print(
            f"largest {math.exp(worst):.2f}x  median {med:.1%}  eta_bw {bw:.2f}  "
            f"eta_c {ce:.2f}  overhead {f_ms:g} ms"
        )
    _, _, bw, ce, f_ms = ranked[0]
    _set(args.runtime, base, bw, ce, f_ms, args.combine)
    for (case, ratio), r in zip(_ratios(catalog, rows), rows, strict=True):
        print(f"  {case:44} {r['set']:7} " + ("-" if ratio is None else f"{ratio:.2f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
