"""Classes of interchangeable pools, searched as one: the same kind, mode, price and
options, so a break-even row stands for the class.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import pandas as pd

from solver.core.compile import Compiled, with_options
from solver.core.dominance import carbon_counts

_CLASS_COLUMNS = (
    "workload",
    "tokens_per_s_per_unit",
    "n_units",
    "job_hours",
    "start_period",
    "end_period",
    "rent_usd",
    "energy_usd_per_unit_hour",
)


def pool_classes(compiled: Compiled, pool_ids: Iterable[str]) -> list[list[str]]:
    """The pools grouped into classes of interchangeable ones: the same kind, mode and
    price, the same options for every workload (capacity, clusters, hours), the same
    CO2e where carbon counts, and none holding existing units. The same offering at the
    same price in several regions is one class: a break-even row for each member would
    only say that its twins replace it at any higher price (a $0 tie). No classes under
    quotas or provider shares (there the region or provider of a unit matters).
    """
    pool_ids = sorted(set(pool_ids))
    problem = compiled.problem
    if problem.quotas or problem.provider_share_max:
        return [[p] for p in pool_ids]
    opts = compiled.options[compiled.options["pool_id"].isin(pool_ids)]
    columns = [c for c in _CLASS_COLUMNS if c in opts]
    if carbon_counts(problem):
        columns += [c for c in ("kgco2e_per_unit_hour", "kgco2e") if c in opts]
    rows = pd.Series(
        ["|".join(map(str, r)) for r in opts[columns].round(9).itertuples(index=False)],
        index=opts.index,
    )
    buckets = compiled.bucket_capacity.groupby("option_id")["requests_per_s_per_unit"]
    mix = buckets.agg(lambda v: ",".join(f"{x:.9g}" for x in v)).to_dict()
    rows = rows + "|" + opts["option_id"].map(lambda k: mix.get(k, ""))
    shape = rows.groupby(opts["pool_id"]).agg(lambda v: ";".join(sorted(v)))
    pools = compiled.pools.set_index("pool_id").loc[pool_ids]
    key = (
        pools["kind"]
        + "|"
        + pools["mode"]
        + "|"
        + pools["price_usd_per_hour"].round(9).astype(str)
        + "|"
        + pools["capex_usd"].round(6).astype(str)
        + "|"
        + shape.reindex(pools.index).fillna("")
    )
    key = key.where(pools["existing_units"] <= 0, "own|" + pools.index.to_series())
    return [sorted(g.index) for _, g in key.groupby(key, sort=True)]


def merged_class(compiled: Compiled, pool_id: str, twins: Iterable[str]) -> Compiled:
    """``compiled`` with a class as one pool: the twins' options gone and their
    availability added to ``pool_id``'s (its price then moves for the whole class)."""
    twins = set(twins)
    if not twins:
        return compiled
    pools = compiled.pools.copy()
    is_twin = pools["pool_id"].isin(twins)
    rep = pools["pool_id"] == pool_id
    pools.loc[rep, "availability_cap"] += pools.loc[is_twin, "availability_cap"].sum()
    options = compiled.options[~compiled.options["pool_id"].isin(twins)]
    return with_options(replace(compiled, pools=pools), options)
