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

A row that measures one pool (``phase`` prefill or decode, the other pool unlimited, as
DeepSeek's and SGLang's profiles run) predicts that pool's tokens/s per accelerator: a
prefill pool at its stated pass of ``prefill_batch_tokens`` tokens per device
(:func:`solver.physics.disagg.prefill_batch_s`), input tokens; a decode pool at its batch.

Every row is holdout: no default is fitted to it. ``evidence`` says whether the figure was
served on hardware or modelled by a sizing tool; ``scope`` whether the deployment uses the
parallelism procure plans (tensor parallelism within a replica) or expert parallelism
across nodes, which procure does not plan (its tensor-parallel replica stands in).

It prints predicted, measured, ratio and |error| per row, then the bands of the aggregated
table (bench/accuracy/accuracy.py: median |error| <= 15% over holdout rows, every row
within 2x) for the rows in procure's scope and, apart, for those outside it; the same
section :func:`disagg_section_lines` prints under bench/accuracy/accuracy.py. Exits 0.
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
    prefill_batch_s,
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
    if row["phase"] == "prefill":  # one pool at its stated pass: input tokens/s
        d = _f(row, "prefill_tp")
        k = _f(row, "prefill_batch_tokens") * d / p  # whole prompts per pass
        s = float(prefill_batch_s(model, p, k, np.array([d]), dev)[0])
        return k * p / s / d, f"pass of {k:.0f} prompts {s * 1e3:.0f} ms on {d:.0f} devices"
    if row["phase"] == "decode":
        dd, b = _f(row, "decode_tp"), _f(row, "decode_batch")
        step = float(decode_step_model(model, p, o, np.array([dd]), dev).step_s(b)[0])
        return b / step / dd, f"decode step {step * 1e3:.1f} ms at batch {b:.0f} on {dd:.0f}"
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


def _band(errors: list[float], ratios: list[float]) -> str:
    within = sum(0.5 <= r <= 2.0 for r in ratios)
    median = statistics.median(errors)
    verdict = "within" if median <= 0.15 and within == len(ratios) else "outside"
    return (
        f"median |error| {median:.1%}, within 2x {within}/{len(ratios)} "
        f"({verdict} the holdout bands: median <= 15%, each within 2x)"
    )


def disagg_section_lines(catalog=None) -> list[str]:
    """The disaggregated rows' bands, as the aggregated table prints its holdout: over the
    rows in procure's scope (tensor parallelism), by evidence (served or modelled), and
    apart the rows outside it (expert parallelism across nodes)."""
    catalog = catalog if catalog is not None else load_catalog()
    rows = list(csv.DictReader(CASES_CSV.open()))
    out = [f"disaggregated serving (bench/accuracy/disagg_cases.csv, {len(rows)} holdout rows):"]
    groups: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        pred, _ = predict(row, catalog)
        ratio = pred / _f(row, "measured_value")
        in_scope = row["scope"] == "tensor_parallel"
        key = f"{'in scope' if in_scope else 'outside scope (expert parallel)'}, {row['evidence']}"
        groups.setdefault(key, []).append((abs(ratio - 1.0), ratio))
        if in_scope:
            groups.setdefault("in scope, all", []).append((abs(ratio - 1.0), ratio))
    for key in sorted(groups):
        errs = [e for e, _ in groups[key]]
        ratios = [r for _, r in groups[key]]
        out.append(f"  {key} ({len(errs)} rows): {_band(errs, ratios)}")
    return out


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
    print()
    for line in disagg_section_lines(catalog):
        print(line)

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
