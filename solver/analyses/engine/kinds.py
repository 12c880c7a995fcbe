"""Which kind of variant a problem is of the engine's base problem, and the options a
variant allows (docs/concepts/warm-engine.md, "Kinds of variant").

The kinds the engine changes in place: a budget, a carbon cap (row bounds), a provider or
region left out (columns fixed at 0), rented prices times a factor (costs and budget
coefficients); the last two only where the base's proof carries over, since they can make
a pruned option optimal, and a demand factor moves the pruning's bounds: else compiled
afresh. Anything else is solved cold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from solver.inputs.problem import Problem

#: the problem fields a kind may change in place
IN_PLACE_FIELDS = frozenset({"budget_usd", "carbon_cap_tco2e", "providers", "regions"})
#: a budget (USD) and a carbon cap (tCO2e) that bind no plan: the base structure always
#: has both rows, so a variant sets their bounds (1e15 USD and 1e12 t are far above any
#: plan's total; the rows are then never binding)
OPEN_BUDGET_USD = 1e15
OPEN_CAP_TCO2E = 1e12


@dataclass(frozen=True)
class Change:
    """What a variant changes of the base problem.

    Attributes
    ----------
    fields
        The problem fields changed in place (of :data:`IN_PLACE_FIELDS`).
    demand
        Whether a workload's demand changed (compiled afresh).
    multipliers
        Rented prices times factor (the workspace's ``price_multipliers``).
    """

    fields: frozenset[str] = frozenset()
    demand: bool = False
    multipliers: tuple[tuple[str | None, str | None, float], ...] = field(default=())

    @property
    def excludes(self) -> bool:
        return bool(self.fields & {"providers", "regions"})

    @property
    def prices(self) -> bool:
        return any(f != 1.0 for _p, _a, f in self.multipliers)

    @property
    def kind(self) -> str:
        """A short name: budget, carbon_cap, exclude, price, demand, base or mixed."""
        kinds = {"budget_usd": "budget", "carbon_cap_tco2e": "carbon_cap"}
        names = {kinds.get(f, "exclude") for f in self.fields}
        names |= {"price"} if self.prices else set()
        names |= {"demand"} if self.demand else set()
        if not names:
            return "base"
        return names.pop() if len(names) == 1 else "mixed"


def _multipliers(raw: list[dict]) -> tuple[tuple[str | None, str | None, float], ...] | None:
    out = []
    for m in raw:
        if set(m) - {"provider", "accelerator", "factor"}:
            return None  # a mode or currency: not a kind the engine knows
        out.append((m.get("provider"), m.get("accelerator"), float(m["factor"])))
    return tuple(out)


def _narrower(base: list[str] | None, variant: list[str] | None) -> bool:
    """Whether allow-list ``variant`` allows nothing ``base`` does not (None: all)."""
    if variant is None:
        return base is None
    return base is None or set(variant) <= set(base)


def change_of(base: Problem, variant: Problem, multipliers: list[dict]) -> Change | None:
    """The change from ``base`` to ``variant`` (with ``multipliers`` on rented prices), or
    None when it is not one the engine makes in place or compiles afresh."""
    b, v = base.model_dump(), variant.model_dump()
    changed = {k for k in set(b) | set(v) if b.get(k) != v.get(k)}
    demand = False
    if "workloads" in changed:
        bw, vw = b["workloads"], v["workloads"]
        if len(bw) != len(vw):
            return None
        for x, y in zip(bw, vw, strict=True):
            if {k: x[k] for k in x if k != "demand_by_period"} != {
                k: y[k] for k in y if k != "demand_by_period"
            }:
                return None
        demand = True
        changed.discard("workloads")
    if not changed <= IN_PLACE_FIELDS:
        return None
    for key in ("providers", "regions"):
        if key in changed and not _narrower(b.get(key), v.get(key)):
            return None  # a wider allow-list adds pools: a new structure
    factors = _multipliers(multipliers)
    if factors is None:
        return None
    return Change(frozenset(changed), demand, factors)


def allowed_options(options: pd.DataFrame, pools: pd.DataFrame, variant: Problem) -> pd.DataFrame:
    """The options whose pool the variant's providers and regions allow (owned servers
    are governed by modes, as the compile's pools are)."""
    by_pool = pools.set_index("pool_id")
    cloud = by_pool["kind"] != "owned"
    ok = pd.Series(True, index=by_pool.index)
    if variant.providers is not None:
        ok &= ~cloud | by_pool["provider"].isin(variant.providers)
    if variant.regions is not None:
        ok &= ~cloud | by_pool["region"].isin(variant.regions)
    keep = options["pool_id"].map(ok).fillna(True).astype(bool)
    return options[keep.to_numpy()].reset_index(drop=True)
