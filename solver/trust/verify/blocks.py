"""Capacity blocks re-checked from the catalog and the problem, not from the model: each
block bought is a length and sizes the offer sells, priced as sold, bookable by its
start; each training job on a block runs inside it; the instances of an offer held at
once stay within what it sells and the offering's availability cap.
"""

from __future__ import annotations

from collections import defaultdict
from typing import cast

import pandas as pd

from solver.inputs.catalog.capacity_blocks import MODE
from solver.inputs.problem import TrainingWorkload
from solver.plan import LineItem
from solver.trust.verify.context import _close
from solver.trust.verify.items import _check_requirements
from solver.trust.verify.run import _Run
from solver.trust.verify.training_runs import _check_training
from solver.units import Item, Mode

BLOCK_ITEM = Item.CAPACITY_BLOCK.value


def is_block_line(item: LineItem) -> bool:
    """Whether a line buys a capacity block or runs on one."""
    return item.item == BLOCK_ITEM or item.mode == MODE


def check_capacity_blocks(
    run: _Run, lines: list[tuple[int, LineItem]]
) -> dict[int, dict[str, float]]:
    """Check the block lines (index, line) of a plan; return each line's cost by period."""
    c, blocks = run.c, run.catalog.capacity_blocks
    out: dict[int, dict[str, float]] = {}
    bought: dict[tuple[str, str], list[LineItem]] = defaultdict(list)
    held: dict[tuple[str, str], float] = defaultdict(float)
    for index, item in lines:
        offer = _offer(run, item)
        c.check(
            "capacity block in the catalog",
            offer is not None,
            f"{item.offering} {item.item} ({(item.capacity_block or {}).get('block_id', '')})",
        )
        c.check("purchase mode allowed", Mode.ON_DEMAND in run.allowed_modes, f"{item.mode}")
        if offer is None or blocks is None:
            continue
        if item.item == BLOCK_ITEM:
            cost = _check_block(run, item, offer, held)
            bought[(item.offering, item.period)].append(item)
            out[index] = {item.period: cost}
        else:
            _check_run(run, item, offer)
            out[index] = {}
    _check_cover(run, [i for _, i in lines if i.item != BLOCK_ITEM], bought)
    for (block_id, period), n in held.items():
        assert blocks is not None, "a block held is one of the catalog's"
        offer = cast(pd.Series, blocks.loc[block_id])
        cap = run.p.availability_caps.get(
            str(offer["offering_id"]),
            int(run.catalog.offerings.loc[offer["offering_id"], "availability_cap_instances"]),
        )
        most = min(int(offer["max_instances_total"]), cap)
        c.check("capacity block instances", n <= most + 1e-9, f"{block_id} {period}: {n:g}>{most}")
    return out


def _offer(run: _Run, item: LineItem) -> pd.Series | None:
    """The catalog's block offer a line rests on: the one it names (a block line), else
    the one of its offering whose provenance it states (a training line)."""
    blocks = run.catalog.capacity_blocks
    if blocks is None or item.offering not in run.catalog.offerings.index:
        return None
    if item.item == BLOCK_ITEM:
        block_id = str((item.capacity_block or {}).get("block_id", ""))
        if block_id not in blocks.index:
            return None
        offer = cast(pd.Series, blocks.loc[block_id])
        return offer if offer["offering_id"] == item.offering else None
    same = blocks[
        (blocks["offering_id"] == item.offering) & (blocks["source"] == item.price_source)
    ]
    return None if same.empty else cast(pd.Series, same.iloc[0])


def _facts(run: _Run, item: LineItem, offer: pd.Series) -> dict:
    """The unit facts of the offering a block holds (as the verifier's other checks
    read them), priced at the block's rate."""
    cat = run.catalog
    off = cast(pd.Series, cat.offerings.loc[item.offering])
    reg = cast(pd.Series, cat.regions.loc[(off["provider"], off["region"])])
    network = off["network_gbps"]
    return {
        "acc": cast(pd.Series, cat.accelerators.loc[off["accelerator_id"]]),
        "apu": int(off["accelerators_per_instance"]),
        "nvlink": bool(off["nvlink"]),
        "zone": reg["residency_zone"],
        "pue": float(reg["pue"]),
        "grid": float(reg["grid_gco2_per_kwh"]),
        "price": float(offer["usd_per_instance_hour"]),
        "offering": off,
        "network_gbps": float(network) if network == network else 100.0,
    }


def _check_common(run: _Run, item: LineItem, offer: pd.Series, u: dict) -> None:
    """Offering, provenance and whole numbers of any block line."""
    c, off = run.c, u["offering"]
    c.check(
        "line item matches its offering",
        (item.provider, item.region, item.accelerator)
        == (off["provider"], off["region"], off["accelerator_id"]),
        f"{item.offering}: {item.provider}/{item.region}/{item.accelerator}",
    )
    stated = (item.price_date, item.price_source, item.price_confidence, item.price_currency)
    known = (offer["price_date"], offer["source"], offer["price_confidence"], offer["currency"])
    c.check("price provenance as in the catalog", stated == known, f"{item.offering} {MODE}")
    c.check(
        "unit counts are whole numbers",
        item.units >= 0 and abs(item.units - round(item.units)) < 1e-6,
        f"{item.offering} {item.units}",
    )


def _check_run(run: _Run, item: LineItem, offer: pd.Series) -> None:
    """A training line on a block: the training checks (memory, hours, window, deadline,
    no charge of its own) and the workload's requirements."""
    u = _facts(run, item, offer)
    _check_common(run, item, offer, u)
    w = run.ctx.workloads.get(item.workload)
    run.c.check("training line of a training workload", isinstance(w, TrainingWorkload), "")
    if isinstance(w, TrainingWorkload):
        _check_requirements(run, item, u, False, w)
        _check_training(run, item, u, False, w)


def _lengths_sold(offer: pd.Series, days: int) -> bool:
    """Whether ``days`` is a length the offer sells (read from its rules here)."""
    lo, daily, step, most = (
        int(offer[c]) for c in ("min_days", "daily_until_days", "long_step_days", "max_days")
    )
    return lo <= days <= most and (days <= daily or days % step == 0)


def _check_block(
    run: _Run, item: LineItem, offer: pd.Series, held: dict[tuple[str, str], float]
) -> float:
    """A block bought: length and sizes sold, price as sold, booking lead, the periods it
    covers (instances held there added to ``held``); returns its recomputed cost."""
    c, ctx = run.c, run.ctx
    u = _facts(run, item, offer)
    _check_common(run, item, offer, u)
    terms = item.capacity_block or {}
    days = int(terms.get("days", 0))
    sizes = [int(s) for s in terms.get("sizes", [])]
    counts = set(offer["instance_counts"])
    c.check("capacity block length sold", _lengths_sold(offer, days), f"{item.offering}: {days}d")
    c.check(
        "capacity block sizes sold",
        bool(sizes) and all(s in counts for s in sizes) and sum(sizes) == round(item.units),
        f"{item.offering}: {sizes} for {item.units:g} instances",
    )
    start_h = ctx.hours_at(ctx.start_month[item.period])
    c.check(
        "capacity block booked in time",
        start_h / 24.0 + 1e-9 >= int(offer["min_lead_days"])
        and _close(float(terms.get("start_day", -1.0)), start_h / 24.0, 1e-9),
        f"{item.offering}: starts day {start_h / 24:.2f}, lead {offer['min_lead_days']} days",
    )
    cost = float(offer["usd_per_instance_hour"]) * sum(sizes) * days * 24.0
    c.check(
        "line cost recomputed",
        _close(cost, item.cost_usd, 1e-6) and _close(item.hours, days * 24.0, 1e-9),
        f"{item.offering} capacity block: {item.cost_usd:.2f} vs {cost:.2f}",
    )
    run.add_line(item, cost, 0.0)
    end_h = start_h + days * 24.0
    for name in ctx.period_names:
        s = ctx.hours_at(ctx.start_month[name])
        e = ctx.hours_at(ctx.start_month[name] + ctx.months[name])
        if s < end_h - 1e-9 and e > start_h:
            held[(str(offer["block_id"]), name)] += sum(sizes)
    return cost


def _check_cover(
    run: _Run, runs: list[LineItem], bought: dict[tuple[str, str], list[LineItem]]
) -> None:
    """The training jobs starting on an offering's blocks in a period are held by the
    blocks of that offering bought then: each by blocks lasting its hours with room for
    its units, all together by their instances."""
    starting: dict[tuple[str, str], list[LineItem]] = defaultdict(list)
    for item in runs:
        if item.period == item.start_period:
            starting[(item.offering, item.start_period)].append(item)
    for key, jobs in starting.items():
        blocks = bought.get(key, [])
        for job in jobs:
            room = sum(b.units for b in blocks if b.hours + 1e-6 >= job.job_hours)
            run.c.check(
                "training on a capacity block inside it",
                job.units <= room + 1e-9,
                f"{job.workload} on {job.offering}: {job.units:g} units for "
                f"{job.job_hours:.1f} h, {room:g} instances held that long",
            )
        total = sum(j.units for j in jobs)
        held = sum(b.units for b in blocks)
        run.c.check(
            "training on a capacity block inside it",
            total <= held + 1e-9,
            f"{key[0]} {key[1]}: {total:g} units in use, {held:g} instances bought",
        )
