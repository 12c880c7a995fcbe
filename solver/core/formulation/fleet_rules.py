"""How a rented fleet may change over the day (an online workload's ``fleet``): the
``fleet_flat``, ``fleet_base``, ``fleet_deploy`` and ``fleet_start`` rows, and the cuts that
tie an autoscaled fleet to the unit N+1 takes as lost (``fleet_class``,
``fleet_top_used``, ``fleet_small_cover``, ``fleet_same_top``).
"""

from __future__ import annotations

import numpy as np

from solver.core.formulation.state import Builder, OptionRow, State
from solver.core.matrix import VarKind
from solver.inputs.problem import InferenceWorkload, Workload

# one block's N+1 classes (:func:`add_fleet_tops`): (D_b, [(class capacity, top var,
# the class's x vars)]), classes largest first
BlockTops = tuple[float, list[tuple[float, int, list[int]]]]


def add_fleet_rule(
    m: State, k: OptionRow, p: int, t: int, w: Workload, block_vars: list[int]
) -> None:
    """How a rented offering's units may change over the day (an online workload's
    ``fleet``): ``per_block`` (opt-in) freely; ``flat`` not at all (``fleet_flat``:
    every block as the first); ``autoscale`` (the default) by adding and removing units of the
    offerings deployed for the period: deploy[k,t] in {0, 1}, at least one unit in every
    block when deployed (``fleet_base``) and none when not (``fleet_deploy``: units <= M
    deploy, M the pool's availability plus units held, which no plan exceeds). So a
    workload runs the same offerings all day, from the same providers and regions.
    Under N+1, ``fleet_class`` rows (:func:`add_fleet_class`) tie each deployment to the
    class taken as the largest unit lost."""
    if not isinstance(w, InferenceWorkload):  # only an online workload has a fleet
        return
    fleet = getattr(w, "fleet", "per_block")
    if fleet != "flat" and getattr(w, "switching_cost_usd", 0.0) > 0 and len(block_vars) > 1:
        _add_starts(m, k, p, t, w, block_vars)
    if fleet == "per_block" or len(block_vars) < 2:
        return
    B = m.B
    if fleet == "flat":
        for b, v in enumerate(block_vars[1:], start=1):
            B.row("fleet_flat", (k.option_id, t, b), {v: 1.0, block_vars[0]: -1.0}, "==", 0.0)
        return
    pool = m.pools.iloc[p]
    # a tie class of k identical pools (solver.core.compile.ties): deploy counts the pools
    # in use, 0..k, and each holds at most its own availability
    # (docs/formulation/fleet_deploy.md, "Tie classes")
    ties = int(pool["tie_count"]) if "tie_count" in pool.index else 1
    deploy = B.var(
        f"deploy[{k.option_id},{t}]",
        VarKind.DEPLOY,
        integer=True,
        ub=float(ties),
        option_id=k.option_id,
        pool=p,
        period=t,
        block=-1,
        workload=k.workload,
    )
    most = float(pool["availability_cap"]) / ties + float(pool["existing_units"])
    plain = not w.traffic_mix and not m.problem.provider_share_max
    for b, v in enumerate(block_vars):
        bound = most
        need = m.block_demand.get((k.workload, t, b), 0.0)
        if plain and k.tokens_per_s_per_unit > 0:
            # units that alone meet the block (dominance rule 1): a plan can cut back to
            # them and keep the offering deployed
            alone = np.ceil(need / k.tokens_per_s_per_unit - 1e-9) + (1 if w.n_plus_1 else 0)
            bound = min(most, max(alone, w.min_serving_units, 1.0))
        m.deploy_of[v] = deploy
        B.row("fleet_base", (k.option_id, t, b), {v: 1.0, deploy: -1.0}, ">=", 0.0)
        B.row("fleet_deploy", (k.option_id, t, b), {v: 1.0, deploy: -bound}, "<=", 0.0)


def _add_starts(
    m: State, k: OptionRow, p: int, t: int, w: InferenceWorkload, block_vars: list[int]
) -> None:
    """A switching cost (the workload's ``switching_cost_usd``): start[k,t,b,c] >= x[k,t,c]
    - x[k,t,b] for each pair of load blocks b -> c the day passes from one to the other
    (``fleet_start``), each start charged switching_cost_usd x the times a day the day
    passes from b to c (:func:`solver.inputs.load.block_changes`) x the period's days, in
    the objective only (``switching_penalty_usd``). Exact: the units started a day are the
    sum over the day's hour-to-hour changes of max(0, units after - units before), and the
    objective keeps each start at its max."""
    days = float(m.p_hours[t]) / 24.0
    for (b, c), per_day in m.block_starts.items():
        start = m.B.var(
            f"start[{k.option_id},{t},{b},{c}]",
            VarKind.START,
            integer=False,
            option_id=k.option_id,
            pool=p,
            period=t,
            block=c,
            workload=k.workload,
        )
        row = {start: 1.0, block_vars[c]: -1.0, block_vars[b]: 1.0}
        m.B.row("fleet_start", (k.option_id, t, b, c), row, ">=", 0.0)
        m.switching.add(start, w.switching_cost_usd * per_day * days)


def add_fleet_class(
    B: Builder, deploy_of: dict[int, int], members: list[int], tops: list[int], tb: tuple
) -> None:
    """``fleet_class``: deploy[k,t] <= the sum of top_h over the classes h at least as large as
    k's class in block ``tb`` (``tops``, largest first, up to k's own), for every option k of
    an autoscaled fleet in the class: an exact cut (docs/formulation/fleet_class.md). A tie
    class's deploy counts up to its k pools: the tops then take k (its upper bound).
    """
    for v in members:
        deploy = deploy_of.get(v)
        if deploy is not None:
            row_tops = dict.fromkeys(tops, -float(B.vars[deploy]["ub"]))
            B.row(
                "fleet_class", (B.vars[v]["option_id"], *tb), {deploy: 1.0, **row_tops}, "<=", 0.0
            )


#: beyond, each block to the peak block and back (the same cut, implied through the peak,
#: in fewer rows: 2 (blocks - 1) x classes instead of blocks (blocks - 1) x classes).
PAIRWISE_BLOCKS = 4


def add_fleet_tops(
    B: Builder,
    deploy_of: dict[int, int],
    w: InferenceWorkload,
    t: int,
    day: dict[int, BlockTops],
    full_need: bool = True,
) -> None:
    """The cuts tying an autoscaled workload ``w`` under N+1 to the unit lost in period t:
    ``fleet_top_used`` and ``fleet_same_top`` (why they cut off no plan:
    docs/formulation/fleet_top_used.md), and ``fleet_small_cover`` when the whole demand is
    served (``full_need``); none for another fleet, or a period with no demand.

    ``day``: block -> (D_b, [(class capacity, top variable, the class's x variables)]),
    classes largest first.
    """
    busy = max(need for need, _classes in day.values()) > 0
    if not busy or getattr(w, "fleet", "per_block") != "autoscale":
        return
    wname = w.name
    for b, (_need, classes) in day.items():
        for g, (_cap, top, members) in enumerate(classes):
            row = {top: 1.0}
            for v in members:
                k = deploy_of.get(v, v)
                row[k] = row.get(k, 0.0) - 1.0
            B.row("fleet_top_used", (wname, t, b, g), row, "<=", 0.0)
    if full_need:  # with shortfall allowed N+1 covers only what is served
        add_fleet_small_cover(B, wname, t, day)
    peak = max(day, key=lambda b: day[b][0])
    pairs = [(b, c) for b in day for c in day if b != c]
    if len(day) > PAIRWISE_BLOCKS:
        pairs = [pair for b in day if b != peak for pair in ((b, peak), (peak, b))]
    for src, dst in pairs:
        limit = day[dst][0] if day[dst][0] > 0 else np.inf
        for g, (cap, _top, _members) in enumerate(day[src][1]):
            row = {top: 1.0 for c, top, _m in day[src][1] if c >= cap * (1 - 1e-9)}
            floor = min(cap, limit) * (1 - 1e-9)
            for c, top, _m in day[dst][1]:
                if c >= floor:
                    row[top] = row.get(top, 0.0) - 1.0
            B.row("fleet_same_top", (wname, t, src, dst, g), row, "<=", 0.0)


def add_fleet_small_cover(B: Builder, wname: str, t: int, day: dict[int, tuple]) -> None:
    """``fleet_small_cover``: for each block with demand D_b and each class g but the largest,
    the units of classes no larger than g carry the block with the unit lost when one of them
    is taken as lost, sum_{h <= g} c_h x_h >= sum_{h <= g} (D_b + c_h) top_h: an exact cut
    (docs/formulation/fleet_small_cover.md).
    """
    for b, (need, classes) in day.items():
        if need <= 0 or len(classes) < 2:
            continue
        row: dict[int, float] = {}
        for g in range(len(classes) - 1, 0, -1):  # smallest class first
            cap, top, members = classes[g]
            for v in members:
                row[v] = row.get(v, 0.0) + cap
            row[top] = row.get(top, 0.0) - (need + cap)
            B.row("fleet_small_cover", (wname, t, b, g), dict(row), ">=", 0.0)
