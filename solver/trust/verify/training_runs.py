"""A training line recomputed: memory, hours at the MFU it is sized at, window and
deadline, cost and CO2e.
"""

from __future__ import annotations

import numpy as np

from solver import physics
from solver.inputs.problem import TrainingWorkload
from solver.physics.constants import TRAINING_UTILISATION
from solver.physics.training import MfuMeasurement
from solver.plan import LineItem
from solver.trust.verify.context import _close
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _peak
from solver.units import Mode


def _check_training(run: _Run, item: LineItem, u: dict, owned: bool, w: TrainingWorkload) -> None:
    """A training line: memory (ZeRO-3), hours recomputed, window and deadline, cost and CO2e."""
    c = run.c
    ctx = run.ctx
    p = run.p
    specs = run.specs
    units_in_use = run.units_in_use
    trained = run.trained
    spec = specs[item.workload]
    trained[item.workload] += 1 if item.period == item.start_period else 0
    for b in ctx.blocks:
        units_in_use[(item.offering, item.mode, item.period, b)] += item.units
    n_acc = int(item.units) * u["apu"]
    act = physics.activation_gb_per_device(
        seq_len=w.seq_len,
        micro_batch=w.micro_batch,
        hidden_size=spec.hidden_size,
        layers=spec.layers,
        attention_heads=spec.attention_heads,
        recompute=w.recompute,
        params=spec.params,
    )
    mem = float(physics.training_memory_per_device_gb(spec.params, w.optimizer, n_acc, act))
    usable = float(u["acc"]["memory_gb"]) * (1 - p.memory_headroom)
    c.check(
        "training fits memory (ZeRO-3)",
        mem <= usable + 1e-9,
        f"{item.workload}: {mem:.1f} GB per device > {usable:.1f}",
    )
    acc = u["acc"]
    peak = _peak(acc, w.precision)
    family = (acc["accelerator_id"], acc["vendor"], acc["device_class"])
    scaleup = float(acc["scaleup_gbps"])
    published = (
        physics.own_mfu(float(w.mfu))
        if w.mfu is not None
        else physics.moe_mfu(
            physics.default_mfu(
                *family, scaleup, w.precision, float(acc["bf16_dense_tflops"]), peak
            ),
            spec,
        )
    )
    mfu = _check_training_mfu(run, item, w, published)
    hours = float(
        physics.cluster_training_hours(
            physics.training_flops(
                spec.active_params,
                w.tokens,
                w.optimizer,
                w.recompute,
                layers=spec.layers,
                hidden_size=spec.hidden_size,
                seq_len=w.seq_len,
            ),
            n_acc,
            u["apu"],
            peak,
            mfu,
            published.measured_at_accelerators,
            u["network_gbps"],
            physics.scaleup_joins_units(*family, scaleup),
            physics.spot_preemptions_per_instance_hour(item.provider)
            if item.mode == Mode.SPOT
            else 0.0,
        )[0]
    )
    c.check(
        "training hours recomputed",
        _close(hours, item.job_hours, 1e-6),
        f"{item.workload}: {item.job_hours:.1f} h vs {hours:.1f} h",
    )
    names = ctx.period_names
    first = names.index(w.start_period) if w.start_period else 0
    last = names.index(w.end_period) if w.end_period else len(names) - 1
    start = names.index(item.start_period)
    window_h = sum(ctx.period_hours(n) for n in names[start : last + 1])
    c.check(
        "training inside its window",
        first <= start <= last and hours <= window_h + 1e-6,
        f"{item.workload}",
    )
    if item.slack_fraction is not None:
        limit_h = min(window_h, w.deadline_days * 24 if w.deadline_days else np.inf)
        c.check(
            "training slack recomputed",
            _close(item.window_hours, limit_h, 1e-9)
            and _close(item.slack_fraction, 1.0 - hours / limit_h, 1e-6),
            f"{item.workload}: slack {item.slack_fraction:.4f} of {item.window_hours:.1f} h vs "
            f"{1.0 - hours / limit_h:.4f} of {limit_h:.1f} h",
        )
    if w.deadline_days:
        c.check(
            "training deadline",
            hours <= w.deadline_days * 24 + 1e-6,
            f"{item.workload}: {hours:.0f} h > {w.deadline_days * 24:.0f} h",
        )
    share = item.hours / hours if hours > 0 else 0.0
    kwh, kg = ctx.kg_per_unit_hour(u, TRAINING_UTILISATION, owned)
    if owned:
        cost = kwh * u["usd_per_kwh"] * item.units * item.hours
    elif item.mode in (Mode.ON_DEMAND, Mode.SPOT):
        cost = u["price"] * item.units * hours * share
    else:
        cost = 0.0
    c.check(
        "line cost recomputed",
        _close(cost, item.cost_usd, 1e-5),
        f"{item.workload} training: {item.cost_usd:.2f} vs {cost:.2f}",
    )
    run.add_line(item, cost, kg * item.units * item.hours)


def _check_training_mfu(
    run: _Run, item: LineItem, w: TrainingWorkload, published: MfuMeasurement
) -> float:
    """The MFU a training line is sized at (its family's band at the problem's margin),
    checked against the line's own figures; returns it."""
    margin = run.p.training_margin_of(w)
    mfu = physics.planning_mfu(published, margin)
    run.c.check(
        "training MFU at its margin",
        item.mfu is None
        or (
            _close(item.mfu, mfu, 1e-9)
            and _close(item.mfu_low or 0.0, published.low, 1e-9)
            and _close(item.mfu_high or 0.0, published.high, 1e-9)
            and _close(item.mfu_point or 0.0, published.mfu, 1e-9)
        ),
        f"{item.workload}: MFU {item.mfu} (band {item.mfu_low}-{item.mfu_high}) vs {mfu:.4g} "
        f"at training_margin {margin} (band {published.low:.4g}-{published.high:.4g})",
    )
    return mfu
