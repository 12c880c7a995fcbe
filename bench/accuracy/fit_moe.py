"""Fit the mixture-of-experts training constants on the accuracy table's FITTED MoE rows.

    python bench/accuracy/fit_moe.py

A mixture of experts reaches MOE_EFFICIENCY_MAX / (1 + x R / B) of a dense model's MFU
(solver/physics/training.py, ``moe_training_efficiency``): x its all-to-all bytes per
training FLOP, R the dense rate on the device (the family's point MFU x the dense peak at
the run's precision, TFLOP/s), B an effective rate of the expert-parallel work outside the
multiplies (GB/s). For each fitted training row of a mixture of experts the script runs
the estimator with the MoE factor taken out (the dense prediction), reads the share
e = measured / dense prediction, and solves e_i (1 + x_i R_i / B) = m on the two rows:

    B = (e1 x1 R1 - e2 x2 R2) / (e2 - e1),    m = e2 (1 + x2 R2 / B).

Rows go through ``accuracy.fitting_rows``, which refuses a holdout row. It prints each
row's figures and the two constants solver/physics/constants.py carries.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "bench" / "accuracy"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import accuracy  # noqa: E402

from solver import physics  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.presets import resolve_model  # noqa: E402
from solver.physics import training  # noqa: E402


def _dense_share(catalog, row: dict[str, str]) -> tuple[float, float, float]:
    """(x bytes/FLOP, R dense TFLOP/s, e = measured / dense prediction) of one row."""
    from solver.analyses.training_estimate import estimate_training

    spec = resolve_model(row["model"], catalog, "fit_moe")
    x = physics.training.moe_all_to_all_bytes_per_flop(
        float(spec.active_params),
        float(spec.experts),
        float(spec.experts_active),
        spec.hidden_size,
        spec.layers,
    )
    kept = training.moe_training_efficiency
    training.moe_training_efficiency = lambda *_: 1.0  # the dense prediction
    try:
        dense = accuracy.compare(catalog, row).predicted
        est = estimate_training(
            catalog,
            model=row["model"],
            tokens=float(row["tokens"]),
            precision=row["precision"],
            seq_len=int(row["seq_len"]),
            accelerator=row["accelerator"],
            n_accelerators=int(row["n_accelerators"]),
            training_margin="point",
        )
    finally:
        training.moe_training_efficiency = kept
    rate = float(est["mfu_point"]) * float(est["peak_dense_tflops"])
    return x, rate, float(row["measured_value"]) / float(dense)


def main() -> int:
    catalog = load_catalog(None)
    rows = [
        r
        for r in accuracy.read_cases()
        if r["role"] == "fitted" and r["kind"] == "training" and r["model"].strip()
    ]
    moe = []
    for r in accuracy.fitting_rows(rows):
        spec = resolve_model(r["model"], catalog, "fit_moe")
        if float(spec.experts) > float(spec.experts_active):
            moe.append(r)
    if len(moe) != 2:
        print(f"expected two fitted MoE rows, found {len(moe)}", file=sys.stderr)
        return 1
    figures = [_dense_share(catalog, r) for r in moe]
    for r, (x, rate, e) in zip(moe, figures, strict=True):
        print(
            f"{r['case_id']}: x {x:.4e} bytes/FLOP, R {rate:.1f} TFLOP/s, "
            f"x R {x * rate * 1e12 / 1e9:.2f} GB/s, e {e:.4f}"
        )
    (x1, r1, e1), (x2, r2, e2) = figures
    a1, a2 = x1 * r1 * 1e12 / 1e9, x2 * r2 * 1e12 / 1e9  # GB/s
    b = (e1 * a1 - e2 * a2) / (e2 - e1)
    m = e2 * (1.0 + a2 / b)
    print(f"MOE_A2A_EFFECTIVE_GB_PER_S = {b:.1f}")
    print(f"MOE_EFFICIENCY_MAX = {m:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
