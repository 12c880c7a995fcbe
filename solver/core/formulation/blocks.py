"""Training on capacity blocks (:mod:`solver.core.compile.blocks`): one binary per block
option, bought whole and priced as sold, counted as capacity only in the periods its job
runs in; ``block_instances`` holds the instances of a block offer held at once to what
it sells (docs/formulation/block_instances.md).
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace
from typing import Any, cast

from solver.core.families import new_row
from solver.core.formulation.state import State, guard_band
from solver.core.matrix import VarKind


def add_capacity_blocks(m: State) -> None:
    """b[k] (binary): a training workload runs on block option k. Its block's price is
    charged whole to the period it starts in; its units are in use in the periods the
    job runs in, on the offering's on-demand pool (so that pool's availability cap and
    the quotas count them); it joins its workload's ``train_once`` row; and
    ``block_instances`` per block offer and period it covers: instances held <= the most
    the offer sells at once (and the offering's availability cap)."""
    options = m.compiled.capacity_blocks
    if options.empty:
        return
    once: dict[str, dict[int, float]] = defaultdict(dict)
    held: dict[tuple[str, int], dict[int, float]] = defaultdict(dict)
    cap: dict[str, float] = {}
    caps = m.pools["availability_cap"].to_numpy(dtype=float)
    providers = m.pools["provider"].to_numpy()
    records = cast(list[dict[str, Any]], options.to_dict("records"))
    for k in (SimpleNamespace(**r) for r in records):
        p = m.pool_idx[k.pool_id]
        v = m.B.var(
            f"block[{k.block_option_id}]",
            VarKind.BLOCK,
            integer=True,
            ub=1.0,
            pool=p,
            period=int(k.start_period),
            block=-1,
            workload=k.workload,
            block_option=int(k.block_option_id),
        )
        once[k.workload][v] = 1.0
        m.add_cost(v, float(k.block_usd), str(providers[p]), {
            int(k.start_period): float(k.block_usd)
        }, guard_band(k))  # fmt: skip
        m.co2_kg.add(v, float(k.kgco2e))
        for t, _h in k.hours_by_period:
            for b in range(m.n_b):
                m.usage[p][(int(t), b)][v] += float(k.n_units)
        for t in k.block_periods:
            held[(k.block_id, int(t))][v] = float(k.block_instances)
        cap[k.block_id] = min(float(k.max_instances_total), float(caps[p]))
    _join_train_once(m, once)
    for (block_id, t), coefs in sorted(held.items()):
        m.B.row("block_instances", (block_id, t), coefs, "<=", cap[block_id])


def _join_train_once(m: State, once: dict[str, dict[int, float]]) -> None:
    """Each workload's ``train_once`` row (made by :func:`add_training`, empty when it has
    no other option) with its block options added."""
    for i, row in enumerate(m.B.rows):
        if row.family == "train_once" and row.key[0] in once:
            extra = once.pop(row.key[0])
            m.B.rows[i] = new_row("train_once", row.key, {**row.coefs, **extra}, "==", row.rhs)
    for wname, coefs in once.items():
        m.B.row("train_once", (wname,), coefs, "==", 1.0)
