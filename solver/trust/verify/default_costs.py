"""The cost lines a plan carries by default (all-in by default), re-derived from the
problem, the catalog's model sizes and the published figures of
:mod:`solver.inputs.cost_defaults`, not from the plan's own cost code:

- storage: each training workload's dataset (tokens x bytes/token) and checkpoints
  (parameters x bytes/parameter x kept) x the horizon's months x the price of the provider
  of its training line;
- egress: all serving lines' output tokens (recomputed from the demand, as the capacity
  checks do) x bytes/token = the egress lines' GB together; each line its GB x its
  provider's price; the egress the objective priced (``egress_in_objective_usd``) = the
  lines' USD to the cent (at most that where some workloads' egress is charged after);
- staff: rented and reserved instance-hours in use x the default rate;
- support: each provider spent with, at its default plan, month by month (as
  :func:`solver.trust.verify.money._check_support`), or 0 where it bills none;
- tax and contingency: 0 by default.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver.inputs.cost_defaults import (
    CHECKPOINTS_KEPT,
    DATASET_BYTES_PER_TOKEN,
    OUTPUT_BYTES_PER_TOKEN,
    STAFF_USD_PER_INSTANCE_YEAR,
    checkpoint_bytes_per_param,
    egress_price,
    storage_price,
)
from solver.inputs.costs import CATEGORY_OF_FIELD, SUPPORT_PLANS, Costs
from solver.inputs.egress import egress_in_model
from solver.inputs.problem import InferenceWorkload, TrainingWorkload
from solver.plan.lines import CostLine
from solver.trust.verify.capacity import _average_tps, _mix_output_factor
from solver.trust.verify.context import _close
from solver.trust.verify.run import _Run
from solver.units import Item, Mode

#: a costs: field -> the category it gives (its absence: the category's default)
_FIELDS = CATEGORY_OF_FIELD


def defaulted(costs: Costs | str | None) -> set[str]:
    """The categories a problem's ``costs:`` leaves to their defaults: every one without
    a block or under ``default``, those not given in a block with ``defaults: true``, else none."""
    if costs is None or costs == "default":
        return set(_FIELDS.values())
    if not isinstance(costs, Costs) or not costs.defaults:
        return set()
    return set(_FIELDS.values()) - {_FIELDS[f] for f in costs.model_fields_set if f in _FIELDS}


def expected_default_lines(run: _Run, categories: set[str]) -> dict[tuple[str, str, int], float]:
    """(category, provider, -1) -> USD of the default storage and staff lines."""
    ctx, plan = run.ctx, run.plan
    out: dict[tuple[str, str, int], float] = {}
    if "storage" in categories:
        for w in run.p.workloads:
            if not isinstance(w, TrainingWorkload):
                continue
            trained = [
                i for i in plan.line_items if i.workload == w.name and i.item == Item.TRAINING
            ]
            if not trained:
                continue
            params = run.specs[w.name].params
            gb = (
                w.tokens * DATASET_BYTES_PER_TOKEN
                + CHECKPOINTS_KEPT * params * checkpoint_bytes_per_param(w.optimizer)
            ) / 1e9
            provider = trained[0].provider
            key = ("storage", provider, -1)
            out[key] = out.get(key, 0.0) + gb * ctx.horizon * storage_price(provider)[0]
    if "staff" in categories:
        instance_hours = sum(
            i.units * i.hours
            for i in plan.line_items
            if i.item in {Item.RENT, Item.USE, Item.TRAINING} and i.mode != Mode.OWNED
        )
        if instance_hours:
            out[("staff", "", -1)] = instance_hours * STAFF_USD_PER_INSTANCE_YEAR / 8760.0
    return out


def check_default_egress(run: _Run, lines: list[CostLine]) -> None:
    """The egress lines' GB together = every serving workload's output tokens over the
    horizon x bytes per token; each line's cost = its GB x its provider's price."""
    c, ctx = run.c, run.ctx
    tokens = 0.0
    for w in run.p.workloads:
        if not isinstance(w, InferenceWorkload):
            continue
        tps = (
            _average_tps(w) * _mix_output_factor(w)
            if w.demand.tokens_per_s is None
            else (w.demand.tokens_per_s)
        )
        tps *= run.plan.served_fraction.get(w.name, 1.0)
        tokens += sum(
            tps * w.demand_by_period.get(n, 1.0) * ctx.period_hours(n) * 3600.0
            for n in (w.periods or ctx.period_names)
        )
    mine = [x for x in lines if x.category == "egress"]
    gb = sum(x.quantity for x in mine)
    c.check(
        "egress GB recomputed",
        _close(gb, tokens * OUTPUT_BYTES_PER_TOKEN / 1e9, 1e-6),
        f"{gb:,.3f} GB vs recomputed {tokens * OUTPUT_BYTES_PER_TOKEN / 1e9:,.3f}",
    )
    for x in mine:
        usd = x.quantity * egress_price(x.provider)[0]
        c.check(
            "egress cost recomputed",
            _close(x.cost_usd, usd, 1e-6),
            f"{x.provider}: {x.cost_usd} vs recomputed {usd:.2f}",
        )
    priced = run.plan.egress_in_objective_usd
    # (None on a plan solved over split periods, solver.trust.refinement.split_form)
    if priced is not None:  # egress in the objective: what it priced is what lines charge
        serving = [w.name for w in run.p.workloads if isinstance(w, InferenceWorkload)]
        charged = sum(x.cost_usd for x in mine)
        every = all(egress_in_model(run.p, w) for w in serving)
        c.check(
            "egress priced in the objective",
            abs(priced - charged) <= 0.005 if every else priced <= charged + 0.005,
            f"objective {priced:.2f} vs egress lines {charged:.2f}"
            + ("" if every else " (some workloads' egress charged after the solve)"),
        )


Terms = tuple[float, Sequence[tuple[float | None, float]]]


def default_support_plans(providers: set[str]) -> dict[str, Terms | None]:
    """Provider -> (minimum per month, bands) of its default support plan (None: none)."""
    from solver.inputs.cost_defaults import SUPPORT_DEFAULT

    out: dict[str, Terms | None] = {}
    for provider in providers:
        name = SUPPORT_DEFAULT.get(provider, ("", ""))[0]
        plan = SUPPORT_PLANS.get((provider, name)) if name else None
        out[provider] = None if plan is None else (plan.minimum_usd_per_month, plan.bands)
    return out


__all__ = ["check_default_egress", "default_support_plans", "defaulted", "expected_default_lines"]
