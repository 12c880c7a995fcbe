"""Disaggregated serving: what a group of prefill and decode units serves, s[g,t,b], in its
workload's ``demand`` row, and the ``disagg_prefill`` and ``disagg_decode`` rows that bound
it by each role's capacity (docs/formulation/disagg_prefill.md)."""

from __future__ import annotations

from collections import defaultdict

from solver.core.formulation.state import State
from solver.core.matrix import VarKind
from solver.inputs.problem import InferenceWorkload


def add_disagg(m: State) -> None:
    """s[g,t,b] >= 0 (output tokens/s group g serves in period t, block b) in the demand
    row of its workload; s <= sum of the prefill units' capacity (``disagg_prefill``) and
    s <= sum of the decode units' capacity (``disagg_decode``), each unit's capacity in
    output tokens/s (a prefill unit's requests/s x output tokens per request).

    Exact: a plan of aggregated units A, prefill units P and decode units Q of one group
    serves D when A + min(P, Q) >= D (the aggregated units take any share of the
    requests); s = min(P, Q, D) meets every row, and rows met imply it. Built before
    ``add_demand``, which writes the demand rows.

    Under N+1 a binary used[g,t,b] (``disagg_used``: s <= D used) takes the group's largest
    unit of each role out of its capacity when the group serves: s <= P - r_max used and
    s <= Q - c_max used, r_max and c_max the largest unit of the group's prefill and decode
    options; the workload's ``n_plus_1`` row counts s beside its aggregated units less the
    largest (:func:`solver.core.formulation.redundancy.add_n_plus_1`). A loss takes one
    unit, so a plan of one group, or of aggregated units alone, is held exactly; a plan
    that mixes them keeps a spare in each (safe, and at most one unit dearer per group)."""
    B = m.B
    spare = {w.name for w in m.problem.workloads if isinstance(w, InferenceWorkload) and w.n_plus_1}
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
        m.disagg_served[(wname, t, b)][s] = 1.0
        used = None
        if wname in spare:  # N+1: s is what the group serves with its largest unit lost
            used = B.var(f"disagg_used[{group},{t},{b}]", VarKind.DISAGG, integer=True, ub=1.0,
                         workload=wname, period=t, block=b)  # fmt: skip
            B.row("disagg_used", (group, t, b), {s: 1.0, used: -max(float(need), 0.0)}, "<=", 0.0)
        for role in ("prefill", "decode"):
            row = dict(roles[role])
            if used is not None:
                row[used] = -max(roles[role].values())
            row[s] = -1.0
            B.row(f"disagg_{role}", (group, t, b), row, ">=", 0.0)
