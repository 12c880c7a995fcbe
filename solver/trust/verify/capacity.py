"""Capacity against demand: the load curve, demand and redundancy in every period and
block, N+1 and the failure domains a plan must survive.
"""

from __future__ import annotations

from collections import defaultdict

from solver.inputs.problem import InferenceWorkload, Problem, TrainingWorkload
from solver.trust.verify.context import REL_TOL, _Block, _close, _Context, _le
from solver.trust.verify.disagg import n_plus_1_left
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _known, _unit_tokens_per_s
from solver.units import Item


def _n_plus_1_units(run: _Run) -> dict[tuple, list[tuple[float, float, str, str]]]:
    """For N+1 and failure domains: per (workload, period, block), (tokens/s of one unit,
    units, provider, region) of every serving line."""
    ctx = run.ctx
    p = run.p
    catalog = run.catalog
    specs = run.specs
    calibration_of = run.calibration_of
    plan = run.plan
    unit_capacity: dict[tuple, list[tuple[float, float, str, str]]] = defaultdict(list)
    for item in plan.line_items:
        w = ctx.workloads.get(item.workload)
        if (
            item.item in {Item.RENT, Item.USE}
            and isinstance(w, InferenceWorkload)
            and (w.n_plus_1 or w.domains)
            and item.units > 0.5
            and item.pool_role is None  # a group's units: verify/disagg.py
            and _known(item, catalog)
        ):
            cap = _unit_tokens_per_s(
                w,
                specs[w.name],
                ctx.unit(item),
                item,
                catalog,
                p.memory_headroom,
                calibration=calibration_of(w, specs[w.name]),
                problem=p,
            )
            where = (item.provider, item.region)
            blocks = [item.block] if item.block else list(ctx.blocks)  # owned: every block
            for block in blocks:
                unit_capacity[(w.name, item.period, block)].append((cap, item.units, *where))
    return unit_capacity


def _check_load_curves(run: _Run) -> None:
    """The daily load curve: blocks cover the day once; each curve has mean 1 and, when it
    is the default shape, its maximum is the workload's peak_to_average."""
    c = run.c
    ctx = run.ctx
    p = run.p
    c.check(
        "load blocks cover 24 h",
        _close(sum(b.hours_per_day for b in ctx.blocks.values()), 24.0)
        and (
            not ctx.load.hours or sorted(h for hs in ctx.load.hours for h in hs) == list(range(24))
        ),
        f"{[(b.name, b.hours_per_day) for b in ctx.blocks.values()]}",
    )
    for name, curve in ctx.load.hourly.items():
        w = ctx.workloads[name]
        assert isinstance(w, InferenceWorkload)  # hourly curves are of serving workloads
        c.check("load curve mean 1", _close(sum(curve) / 24.0, 1.0), name)
        if w.load_profile is None and p.load_profile is None:
            c.check(
                "load curve peak = peak_to_average", _close(max(curve), w.peak_to_average), name
            )


def _average_tps(w: InferenceWorkload) -> float:
    """A serving workload's average demand in output tokens/s, from the problem."""
    dem = w.demand
    if dem.tokens_per_s is not None:
        return dem.tokens_per_s
    if dem.requests_per_s is not None:
        return dem.requests_per_s * w.output_tokens
    assert dem.users is not None and dem.requests_per_user_per_day is not None  # validated
    return dem.users * dem.requests_per_user_per_day * w.output_tokens / 86400


def _peak_scale(
    ctx: _Context, p: Problem, w: InferenceWorkload, period: str, block: _Block
) -> float:
    """Demand in a block over the average: the block's load factor, the period's demand
    factor, and capacity for it at the utilisation target, not flat out."""
    factor = ctx.demand_factor(w, block) * w.demand_by_period.get(period, 1.0)
    return factor * (1 + p.demand_headroom) / w.max_utilisation


def _mix_output_factor(w: InferenceWorkload) -> float:
    """Output tokens of the mix per request over the workload's ``output_tokens`` (1
    without a traffic mix): its average output tokens/s of the whole mix."""
    if not w.traffic_mix:
        return 1.0
    return sum(b.share * b.output_tokens for b in w.traffic_mix) / w.output_tokens


def _total_and_largest(units: list[tuple]) -> tuple[float, float]:
    """Tokens/s of all serving units, and of the largest one, from (tokens/s, units, ...)."""
    return sum(u[0] * u[1] for u in units), max((u[0] for u in units), default=0.0)


def _check_failure_domains(run: _Run) -> None:
    """``survive_loss_of``: with any one region (provider) lost, the units outside it
    (each counted for at most the demand) meet the block's peak; ``max_region_share`` and
    ``max_provider_share``: no domain holds more of the workload's capacity."""
    p, ctx, c = run.p, run.ctx, run.c
    for w in p.workloads:
        if not isinstance(w, InferenceWorkload) or not w.domains:
            continue
        for period in w.periods or ctx.period_names:
            for bname, block in ctx.blocks.items():
                need = _average_tps(w) * _peak_scale(ctx, p, w, period, block)
                need *= _mix_output_factor(w)
                units = run.unit_capacity.get((w.name, period, bname), [])
                total = sum(cap * n for cap, n, _, _ in units)
                for kind, at in (("provider", 2), ("region", 3)):
                    domains = sorted({u[at] for u in units})
                    if kind in w.survive_loss_of and p.objective != "max_served":
                        for r in domains or ["(none)"]:
                            left = sum(min(u[0], need) * u[1] for u in units if u[at] != r)
                            c.check(
                                f"peak met with one {kind} lost",
                                need <= left + REL_TOL * max(1.0, need),
                                f"{w.name} {period}/{bname} without {r}: {left:.1f} < "
                                f"{need:.1f} tokens/s",
                            )
                    share = w.max_region_share if kind == "region" else w.max_provider_share
                    if share is not None:
                        for r in domains:
                            inside = sum(u[0] * u[1] for u in units if u[at] == r)
                            c.check(
                                f"capacity share per {kind}",
                                inside <= share * total + REL_TOL * max(1.0, total),
                                f"{w.name} {period}/{bname} {r}: {inside / max(total, 1e-12):.1%}"
                                f" > {share:.1%}",
                            )


def _check_served_within_n_plus_1(run: _Run) -> None:
    """max_served: the served fraction a plan claims for an N+1 workload is at most what
    its units serve with the largest unit lost, block by block (output tokens/s of the
    whole mix, as the N+1 check counts them)."""
    p, ctx, c = run.p, run.ctx, run.c
    if p.objective != "max_served":
        return
    for w in p.workloads:
        if not isinstance(w, InferenceWorkload) or not w.n_plus_1:
            continue
        demanded = servable = 0.0
        for period in w.periods or ctx.period_names:
            for bname, block in ctx.blocks.items():
                hours = ctx.period_hours(period) * block.hours_per_day / 24.0
                need = _average_tps(w) * _peak_scale(ctx, p, w, period, block)
                need *= _mix_output_factor(w)
                total, largest = _total_and_largest(
                    run.unit_capacity.get((w.name, period, bname), [])
                )
                demanded += need * hours
                servable += min(need, max(0.0, total - largest)) * hours
        claimed = run.plan.served_fraction.get(w.name, 1.0) * demanded
        c.check(
            "served within N+1 (max_served)",
            claimed <= servable + REL_TOL * max(1.0, demanded),
            f"{w.name}: claims {claimed / max(demanded, 1e-12):.4%} served, its units less "
            f"the largest serve {servable / max(demanded, 1e-12):.4%}",
        )


def _check_demand(run: _Run) -> None:
    """Training runs once; demand, redundancy and N+1 met in every period and block
    (recomputed from the problem, not from the model's rows)."""
    c = run.c
    ctx = run.ctx
    p = run.p
    served = run.served
    serving_units = run.serving_units
    trained = run.trained
    unit_capacity = run.unit_capacity
    for w in p.workloads:
        if isinstance(w, TrainingWorkload):
            c.check(
                "each training job runs once",
                trained.get(w.name, 0) == 1,
                f"{w.name}: {trained.get(w.name, 0)} clusters",
            )
            continue
        names = w.periods or ctx.period_names
        for period in names:
            for bname, block in ctx.blocks.items():
                if isinstance(w, InferenceWorkload):
                    avg_tps = _average_tps(w)
                    scale = _peak_scale(ctx, p, w, period, block)
                    # one unit is what any demand needs; the rule binds from two (as the
                    # model's redundancy rows do), so a block without demand may have none
                    if p.objective != "max_served" and w.min_serving_units > 1:
                        c.check(
                            "redundancy",
                            serving_units[(w.name, period, bname)] >= w.min_serving_units - 1e-9,
                            f"{w.name} {period}/{bname}",
                        )
                    if w.n_plus_1 and p.objective != "max_served":
                        # output tokens/s of the whole mix (or the one request size)
                        need_tps = avg_tps * scale * _mix_output_factor(w)
                        total, largest = _total_and_largest(
                            unit_capacity.get((w.name, period, bname), [])
                        )
                        left = n_plus_1_left(run, (w.name, period, bname), total, largest)
                        c.check(
                            "N+1 (capacity without the largest unit meets peak)",
                            # tolerance relative to the row's largest term, as the solver's
                            need_tps <= left + REL_TOL * max(1.0, total + left),
                            f"{w.name} {period}/{bname}: {total:.1f} - {largest:.1f} < "
                            f"{need_tps:.1f} tokens/s",
                        )
                    if w.traffic_mix:
                        rps = avg_tps / w.output_tokens * scale
                        for j, bucket in enumerate(w.traffic_mix):
                            need = rps * bucket.share
                            got = served[(w.name, period, bname, j)]
                            if p.objective != "max_served":
                                c.check(
                                    "demand met",
                                    _le(need, got),
                                    f"{w.name} {period}/{bname} bucket {j}: {got:.3f} < "
                                    f"{need:.3f} req/s",
                                )
                        continue
                    need = avg_tps * scale
                else:
                    hours = sum(ctx.period_hours(n) for n in names)
                    need = w.output_tokens_total / (hours * 3600)
                got = served[(w.name, period, bname, -1)]
                if p.objective != "max_served":
                    c.check(
                        "demand met",
                        _le(need, got),
                        f"{w.name} {period}/{bname}: {got:.1f} < {need:.1f} tokens/s",
                    )
