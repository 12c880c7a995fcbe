"""A serving line (rent, use) recomputed: hours, replica shape, memory, SLOs, capacity,
cost and CO2e.
"""

from __future__ import annotations

from solver.inputs.problem import BatchInferenceWorkload, InferenceWorkload
from solver.physics.constants import INFERENCE_UTILISATION
from solver.plan import LineItem
from solver.trust.verify.context import _close, _le
from solver.trust.verify.disagg import check_disagg_line
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _capacity_share, _decode, _measured_here
from solver.units import Item


def _check_serving(
    run: _Run, item: LineItem, u: dict, owned: bool, w: InferenceWorkload | BatchInferenceWorkload
) -> None:
    """A serving line (rent, use): hours, shape, memory and SLOs recomputed, capacity
    served, cost and CO2e."""
    c = run.c
    ctx = run.ctx
    p = run.p
    catalog = run.catalog
    specs = run.specs
    calibration_of = run.calibration_of
    served = run.served
    units_in_use = run.units_in_use
    serving_units = run.serving_units
    block = ctx.blocks[item.block]
    hours_expected = ctx.period_hours(item.period) * block.hours_per_day / 24.0
    c.check("line hours", _close(item.hours, hours_expected), f"{item.offering}")
    units_in_use[(item.offering, item.mode, item.period, item.block)] += item.units
    serving_units[(item.workload, item.period, item.block)] += item.units
    spec = specs[item.workload]
    if item.tp_degree > 1 and not getattr(w, "allow_tensor_parallel_over_pcie", False):
        c.check("tensor parallelism over NVLink", u["nvlink"], f"{item.offering}")
    c.check(
        "replica shape fits the unit",
        item.tp_degree >= 1 and u["apu"] % item.tp_degree == 0,
        f"{item.offering}",
    )
    measured = _measured_here(w, spec, catalog, p.memory_headroom, item.accelerator)
    mix = isinstance(w, InferenceWorkload) and w.traffic_mix
    if item.pool_role is not None and isinstance(w, InferenceWorkload):
        check_disagg_line(run, item, u, w, spec)  # capacity settled with its group
        mix = None
    share = _capacity_share(p, w, u, measured is not None, spec)
    if mix:
        assert isinstance(w, InferenceWorkload) and w.traffic_mix  # what mix holds
        share_used = 0.0
        for j, y in item.bucket_requests_per_s.items():
            bucket = w.traffic_mix[int(j)]
            if measured is not None:
                r = measured[int(j)] * u["apu"]
            else:
                res = _decode(
                    w,
                    spec,
                    u,
                    item.tp_degree,
                    bucket.prompt_tokens,
                    bucket.output_tokens,
                    p.memory_headroom,
                )
                r = (
                    float(res.tokens_per_s[0])
                    * (u["apu"] // item.tp_degree)
                    / bucket.output_tokens
                    * calibration_of(w, spec)
                )
            r *= share
            c.check(
                "bucket served only where it fits",
                r > 0 or y <= 1e-9,
                f"{item.offering} bucket {j}",
            )
            share_used += y / r if r > 0 else 0.0
            served[(item.workload, item.period, item.block, int(j))] += y
        c.check(
            "unit time split across buckets",
            _le(share_used, item.units, 1e-5),
            f"{item.offering}: {share_used:.4f} > {item.units}",
        )
    elif item.pool_role is None:
        prompt, output = w.prompt_tokens, w.output_tokens
        res = _decode(w, spec, u, item.tp_degree, prompt, output, p.memory_headroom)
        ok = res.reason[0] == ""
        c.check(
            "memory and SLOs met (physics recomputed)",
            ok,
            f"{item.workload} on {item.offering}: {res.reason[0]}",
        )
        cap = float(res.tokens_per_s[0]) * (u["apu"] // item.tp_degree) * item.units * share
        served[(item.workload, item.period, item.block, -1)] += cap
    # cost and CO2 of the line
    if item.item == Item.RENT:
        cost = u["price"] * item.units * item.hours
    else:
        kwh, _ = ctx.kg_per_unit_hour(u, INFERENCE_UTILISATION, owned)
        cost = kwh * u["usd_per_kwh"] * item.units * item.hours if owned else 0.0
    _, kg = ctx.kg_per_unit_hour(u, INFERENCE_UTILISATION, owned)
    c.check(
        "line cost recomputed",
        _close(cost, item.cost_usd, 1e-5),
        f"{item.offering}: {item.cost_usd:.2f} vs {cost:.2f}",
    )
    c.check(
        "line CO2e recomputed",
        _close(kg * item.units * item.hours / 1000.0, item.co2e_t, 1e-5),
        f"{item.offering}",
    )
    run.add_line(item, cost, kg * item.units * item.hours)
