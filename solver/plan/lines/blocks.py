"""A capacity block read into a plan: the block bought (item ``capacity_block``, priced
as sold, charged upfront in the period it starts in) and the training job run on it
(item ``training``, mode ``capacity_block``, no charge of its own), and the block's
upfront charge as a cash-flow piece (:func:`block_charge_pieces`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pandas as pd

from solver.core.compile import Compiled
from solver.inputs.catalog.capacity_blocks import MODE
from solver.plan.lines.items import LineItem
from solver.units import Item

ITEM = Item.CAPACITY_BLOCK.value  # the line item of a block bought


def _provenance(compiled: Compiled, block_id: str) -> dict[str, object]:
    """The block's price provenance as the catalog states it (capacity_blocks.csv)."""
    blocks = compiled.inputs.catalog.capacity_blocks
    assert blocks is not None, "a block option comes from the catalog's capacity blocks"
    row = blocks.loc[block_id]
    return {
        "mode": MODE,
        "price_date": str(row["price_date"]),
        "price_source": str(row["source"]),
        "price_confidence": str(row["price_confidence"]),
        "price_currency": str(row["currency"]),
    }


def block_terms(k: Mapping[str, Any], horizon_hours: float) -> dict[str, Any]:
    """What a block line states about the block: its offer, length (days), the blocks'
    sizes and instances, its rate (USD per instance-hour), the days from the plan's start
    it starts and ends, the days to book it in (from ``max_advance_days`` before its start
    to ``min_lead_days`` before it) and the days it runs past the horizon."""
    start = float(k["start_day"])
    end = start + int(k["block_days"])
    return {
        "block_id": str(k["block_id"]),
        "days": int(k["block_days"]),
        "sizes": [int(s) for s in k["block_sizes"]],
        "instances": int(k["block_instances"]),
        "usd_per_instance_hour": float(k["usd_per_instance_hour"]),
        "start_day": start,
        "end_day": end,
        "book_from_day": start - int(k["max_advance_days"]),
        "book_by_day": start - int(k["min_lead_days"]),
        "days_after_horizon": max(0.0, end - horizon_hours / 24.0),
    }


def block_items(
    compiled: Compiled,
    r: Any,
    pool_fields: dict[str, object],
    p_names: list[str],
    mfu_fields: dict[str, object],
) -> list[LineItem]:
    """A chosen block option (variable row ``r`` of kind ``block``): its block line and
    one training line per period its job runs in. ``pool_fields`` are the offering's plan
    fields (provider, region, offering, ...), ``mfu_fields`` the training MFU fields."""
    opts = compiled.capacity_blocks.set_index("block_option_id")
    k = cast(dict[str, Any], opts.loc[int(r.block_option)].to_dict())
    fields = {**pool_fields, **_provenance(compiled, str(k["block_id"]))}
    apu = int(k["n_accelerators"]) // int(k["n_units"])
    start = p_names[int(k["start_period"])]
    horizon_h = float(compiled.periods["hours"].sum())
    usd = float(k["block_usd"])
    out = [
        LineItem(
            item=ITEM,
            period=start,
            **fields,
            units=float(k["block_instances"]),
            accelerators=float(k["block_instances"] * apu),
            hours=int(k["block_days"]) * 24.0,
            cost_usd=usd,
            co2e_t=0.0,
            start_period=start,
            cost_by_period_usd={start: usd},
            capacity_block=block_terms(k, horizon_h),
        )
    ]
    for t, h in k["hours_by_period"]:
        out.append(
            LineItem(
                item="training",
                period=p_names[int(t)],
                **fields,
                units=float(k["n_units"]),
                accelerators=float(k["n_accelerators"]),
                workload=str(k["workload"]),
                hours=float(h),
                cost_usd=0.0,
                co2e_t=float(k["kgco2e"]) * float(h) / float(k["job_hours"]) / 1000.0,
                start_period=start,
                job_hours=float(k["job_hours"]),
                **mfu_fields,
            )
        )
    return out


def block_charge_pieces(item: LineItem, start_month: float, end_month: float) -> list[tuple]:
    """A block's upfront charge as one cash-flow piece (begin, end, values) from
    ``start_month`` (its period's start) to ``end_month`` (the block's end): category
    commitments, its instance-hours at its rate."""
    terms = item.capacity_block or {}
    rate = float(terms.get("usd_per_instance_hour", 0.0))
    return [
        (
            start_month,
            end_month,
            {
                "category": "commitments",
                "usd": item.cost_usd,
                "billed_usd": item.cost_usd,
                "quantity": item.units * item.hours,
                "quantity_unit": "hours",
                "unit_price_usd": rate,
            },
        )
    ]


def block_variable_name(options: pd.DataFrame, item: LineItem, start: int) -> str:
    """The name of the model variable a training line on a block (a plan file's
    decision) was read from: the block option of its workload, offering, start period
    (index ``start``), units and job hours; "" when none is."""
    if options.empty:
        return ""
    hours = options["job_hours"].astype(float)
    mine = options[
        (options["workload"] == item.workload)
        & (options["offering_id"] == item.offering)
        & (options["start_period"].astype(int) == start)
        & (options["n_units"].astype(float) == float(item.units))
        & ((hours - item.job_hours).abs() <= 1e-6 * max(1.0, item.job_hours))
    ]
    return "" if mine.empty else f"block[{int(mine['block_option_id'].iloc[0])}]"
