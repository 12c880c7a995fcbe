"""Disaggregated serving: what a group of prefill and decode units serves, s[g,t,b], in its
workload's ``demand`` row, and the ``disagg_prefill`` and ``disagg_decode`` rows that bound
it by each role's capacity (docs/formulation/disagg_prefill.md)."""

from __future__ import annotations

from collections import defaultdict

from solver.core.formulation.state import State
from solver.core.matrix import VarKind


def add_disagg(m: State) -> None:
    """s[g,t,b] >= 0 (output tokens/s group g serves in period t, block b) in the demand
    row of its workload; s <= sum of the prefill units' capacity (``disagg_prefill``) and
    s <= sum of the decode units' capacity (``disagg_decode``), each unit's capacity in
    output tokens/s (a prefill unit's requests/s x output tokens per request).

    Exact: a plan of aggregated units A, prefill units P and decode units Q of one group
    serves D when A + min(P, Q) >= D (the aggregated units take any share of the
    requests); s = min(P, Q, D) meets every row, and rows met imply it. Built before
    ``add_demand``, which writes the demand rows."""
    B = m.B
    by_group: dict[tuple[str, int, int], dict[str, dict[int, float]]] = defaultdict(dict)
    for (group, role, t, b), coefs in m.disagg_rows.items():
        by_group[(group, t, b)][role] = coefs
    for (group, t, b), roles in sorted(by_group.items()):
        if set(roles) != {"prefill", "decode"}:
            continue  # a group with one role serves nothing
        wname = group.split("|", 1)[0]
        need = m.block_demand.get((wname, t, b), 0.0)
        s = B.var(
            f"s[{group},{t},{b}]",
            VarKind.DISAGG,
            integer=False,
            ub=max(float(need), 0.0),
            workload=wname,
            period=t,
            block=b,
        )
        m.demand_rows[(wname, t, b, -1)][s] += 1.0
        for role in ("prefill", "decode"):
            row = dict(roles[role])
            row[s] = -1.0
            B.row(f"disagg_{role}", (group, t, b), row, ">=", 0.0)
