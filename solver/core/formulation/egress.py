"""Egress by default in the objective (issue 49): the served output tokens of each
serving workload the model prices (:func:`solver.inputs.egress.egress_in_model`) leave
the provider that serves them at its $/GB (:func:`solver.inputs.egress.egress_usd_per_token`).

Where every option of a workload is at one egress price, its egress is a constant (its
tokens x the price). Where the prices differ, ``egress[w,t,b,provider]`` (output tokens/s
the provider serves in the block) with ``egress_serve`` (they serve the block's average
tokens/s) and ``egress_capacity`` (each provider at most the share of its units'
capacity the demand row sized for) route the tokens; the LP's optimum serves cheapest
egress first, the rule :func:`solver.inputs.egress.route_tokens` charges on the plan.
The objective's ``egress_usd`` expression is what the plan's egress lines charge, to the
cent (docs/formulation/egress_serve.md).
"""

from __future__ import annotations

from collections import defaultdict

from solver.core.formulation.state import State
from solver.core.matrix import VarKind
from solver.inputs.costs import served_tokens_per_s
from solver.inputs.egress import (
    block_average_factor,
    egress_in_model,
    egress_usd_per_token,
    served_per_capacity,
)
from solver.inputs.load import resolve_load
from solver.inputs.problem import InferenceWorkload

SECONDS_PER_HOUR = 3600.0


def priced_workloads(m: State) -> set[str]:
    """Serving workloads whose egress the model prices (and whose options reach ``m``)."""
    return {w for w in {k[0] for k in m.unit_capacity} if egress_in_model(m.problem, w)}


def add_egress(m: State) -> None:
    """The egress of every priced workload into ``m.egress`` (and ``m.egress_by_period``):
    a constant where its options share one price, else the routing variables and rows."""
    load = resolve_load(m.problem)
    provider_of = dict(zip(m.options["option_id"], m.options["provider"], strict=True))
    names = list(m.periods["name"])
    priced = priced_workloads(m)
    if not priced:
        return
    for (wname, t, b), caps in sorted(m.unit_capacity.items()):
        if wname not in priced:
            continue
        w = m.workloads[wname]
        assert isinstance(w, InferenceWorkload)  # egress_in_model
        tps = served_tokens_per_s(w) * w.demand_by_period.get(names[t], 1.0)
        average = tps * block_average_factor(load, wname, b)  # tokens/s over the block
        if average <= 0:
            continue
        seconds = float(m.p_hours[t]) * load.hours_per_day[b] / 24.0 * SECONDS_PER_HOUR
        by_provider: dict[str, dict[int, float]] = defaultdict(dict)
        for v, a in caps.items():
            by_provider[str(provider_of[m.B.vars[v]["option_id"]])][v] = a
        prices = {p: egress_usd_per_token(p) for p in by_provider}
        full = m.compiled.egress_shared  # a master's: the whole problem's sharing
        if full is None:
            shared = {p for p in prices if list(prices.values()).count(prices[p]) > 1}
        else:
            shared = {p for p in prices if (wname, p) in full}
        if len(set(prices.values())) == 1:
            usd = average * seconds * next(iter(prices.values()))
            m.egress.constant += usd
            m.egress_by_period[t].constant += usd
            if len(prices) == 1 and not shared:  # one provider serves it all (support)
                m.egress_by_provider[(next(iter(prices)), t)].constant += usd
            continue
        share = served_per_capacity(m.problem, load, wname, b)
        serve: dict[int, float] = {}
        for provider, units in sorted(by_provider.items()):
            e = m.B.var(
                f"egress[{wname},{t},{b},{provider}]",
                VarKind.EGRESS,
                integer=False,
                period=t,
                block=b,
                workload=wname,
            )
            serve[e] = 1.0
            usd = seconds * prices[provider]
            m.egress.add(e, usd)
            m.egress_by_period[t].add(e, usd)
            if provider not in shared:
                m.egress_by_provider[(provider, t)].add(e, usd)
            row = {v: -share * a for v, a in units.items()}
            row[e] = 1.0
            m.B.row("egress_capacity", (wname, t, b, provider), row, "<=", 0.0)
        m.B.row("egress_serve", (wname, t, b), serve, ">=", average)


__all__ = ["add_egress", "priced_workloads"]
