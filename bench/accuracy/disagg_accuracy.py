"""Accuracy of disaggregated serving: procure's prefill and decode pools against published
runs (``bench/accuracy/disagg_cases.csv``, sources in ``ACCURACY_SOURCES.md`` style in the
row's ``source`` and ``notes``).

Run: python bench/accuracy/disagg_accuracy.py

Each row states a deployment (accelerator, model, precisions, runtime, prompt and output
tokens, limits, and for a disaggregated one its prefill workers and tensor-parallel degree,
its decode workers, degree and batch). The physics predicts, with the catalog's DEFAULT
efficiencies (nothing tuned per row):

- disaggregated: a prefill worker serves 1 / s requests/s (s =
  :func:`solver.physics.inference.prefill_s`; a row's TTFT limit is checked with the KV
  transfer over ``kv_link_gbps``), a decode worker b / t(b) output tokens/s at the stated
  batch with the decode-only step (:func:`solver.physics.disagg.decode_step_model`); the
  deployment's output tokens/s per accelerator is min(prefill workers x 1/s x O, decode
  workers x b / t(b)) / (its accelerators);
- aggregated: the replica's b / t(b) at the stated batch and degree
  (:func:`solver.physics.inference.best_decode` with ``batch``), per accelerator.

It prints predicted, measured, ratio and |error| per row, the median |error| and the rows
within 2x: the bands of the aggregated table (bench/accuracy/accuracy.py: median <= 15%
for holdout rows, every row within 2x). Exits 0.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver import physics  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.presets import resolve_model  # noqa: E402
from solver.physics.disagg import (  # noqa: E402
    decode_step_model,
    kv_gb_per_request,
    kv_transfer_s,
)

CASES_CSV = Path(__file__).with_name("disagg_cases.csv")
HEADROOM = 0.10  # vLLM's gpu_memory_utilization 0.9, the project's default


def _f(row: dict, key: str) -> float:
    return float(row[key])


def predict(row: dict, catalog) -> tuple[float, str]:
    """Predicted output tokens/s per accelerator of a row's deployment, and a note."""
    spec = resolve_model(row["model"], catalog, row["case_id"])
    model = physics.served_model(spec, row["weight_precision"], row["kv_precision"])
    acc = catalog.accelerators.loc[catalog.resolve_accelerator(row["accelerator"])]
    dev = physics.device_figures(
        physics.one_row_table(acc), row["weight_precision"], np.array([True]), row["runtime"]
    )
    p, o = _f(row, "prompt_tokens"), _f(row, "output_tokens")
    if row["architecture"] == "aggregated":
        d = _f(row, "agg_tp")
        res = physics.best_decode(
            model, prompt_tokens=p, output_tokens=o, tpot_slo_s=None, ttft_slo_s=None,
            d=np.array([d]), dev=dev, memory_headroom=HEADROOM, batch=int(_f(row, "agg_batch")),
        )  # fmt: skip
        why = str(res.reason[0])
        return float(res.tokens_per_s[0]) / d, why or f"step {float(res.step_s[0]) * 1e3:.2f} ms"
    pd_, nd = _f(row, "prefill_tp"), _f(row, "prefill_workers")
    dd, ndec, b = _f(row, "decode_tp"), _f(row, "decode_workers"), _f(row, "decode_batch")
    s = float(physics.prefill_s(model, p, np.array([pd_]), dev)[0])
    x = float(kv_transfer_s(kv_gb_per_request(model, p), _f(row, "kv_link_gbps")))
    sm = decode_step_model(model, p, o, np.array([dd]), dev)
    step = float(sm.step_s(b)[0])
    prefill_tps = nd * o / s
    decode_tps = ndec * b / step
    gpus = nd * pd_ + ndec * dd
    note = (
        f"prefill {s * 1e3:.1f} ms + KV {x * 1e3:.1f} ms (TTFT limit {row['ttft_ms']} ms); "
        f"decode step {step * 1e3:.2f} ms (TPOT limit {row['tpot_ms']} ms); "
        f"{'prefill' if prefill_tps < decode_tps else 'decode'}-bound"
    )
    return min(prefill_tps, decode_tps) / gpus, note


def main() -> None:
    catalog = load_catalog()
    rows = list(csv.DictReader(CASES_CSV.open()))
    errors: list[float] = []
    within = 0
    print(f"{'case':45s} {'predicted':>10s} {'measured':>10s} {'ratio':>6s} {'|err|':>6s}")
    for row in rows:
        pred, note = predict(row, catalog)
        meas = _f(row, "measured_value")
        ratio = pred / meas
        err = abs(pred - meas) / meas
        errors.append(err)
        within += 0.5 <= ratio <= 2.0
        print(f"{row['case_id']:45s} {pred:10.1f} {meas:10.1f} {ratio:6.3f} {err:6.1%}  {note}")
    by_arch: dict[str, list[float]] = {}
    for row, err in zip(rows, errors, strict=True):
        by_arch.setdefault(row["architecture"], []).append(err)
    print(f"\nrows: {len(rows)}; median |error| {statistics.median(errors):.1%}; within 2x: "
          f"{within}/{len(rows)}")  # fmt: skip
    for arch, errs in sorted(by_arch.items()):
        print(f"  {arch}: median |error| {statistics.median(errs):.1%} over {len(errs)} rows")
    # the gain disaggregation reports against aggregated serving, where a source gives both
    def source_key(case_id: str) -> str:
        return "_".join(case_id.split("_")[1:-1])  # d01_<deployment>_disagg -> <deployment>

    pairs: dict[str, dict[str, tuple[float, float]]] = {}
    for row in rows:
        pred, _ = predict(row, catalog)
        pairs.setdefault(source_key(row["case_id"]), {})[row["architecture"]] = (
            pred,
            _f(row, "measured_value"),
        )
    for key, both in pairs.items():
        if len(both) == 2:
            (pa, ma), (pd_, md) = both["aggregated"], both["disaggregated"]
            log_ratio = math.log(pd_ / pa / (md / ma))
            print(f"  {key}: disaggregated / aggregated predicted {pd_ / pa:.2f}x, "
                  f"published {md / ma:.2f}x (log ratio {log_ratio:+.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
