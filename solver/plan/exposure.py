"""The largest single point of failure of a plan as chosen: for each serving workload that
must survive a loss and each kind of failure domain (zone, region, provider), the domain
that holds the largest share of its serving capacity in any period and load block, and
what its loss leaves (:func:`points_of_failure`)."""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, Field

from solver.inputs.problem import InferenceWorkload, Problem
from solver.plan.lines.items import LineItem
from solver.units import Item

KINDS: tuple[str, ...] = ("zone", "region", "provider")


class PointOfFailure(BaseModel):
    """The domain of one kind whose loss takes the largest share of a workload's serving
    capacity, in the period and load block where that share is largest."""

    workload: str
    kind: str = Field(description="zone | region | provider")
    domain: str = Field(
        description="provider/region/zone, provider/region or provider (owned sites: owned/...)"
    )
    period: str
    block: str
    share_of_capacity: float = Field(description="Its share of the block's serving tokens/s")
    capacity_left_tokens_per_s: float = Field(
        description="Serving capacity outside it in that block (output tokens/s)"
    )


class LossCost(BaseModel):
    """What surviving the loss of one kind of domain costs: the plan against the same
    problem solved again without that kind in any workload's ``survive_loss_of`` (verified
    like any plan), and the plan's largest single point of failure of that kind."""

    kind: str = Field(description="zone | region | provider")
    workloads: list[str] = Field(description="The serving workloads that must survive it")
    total_cost_usd: float = Field(description="The plan's total_cost_usd (USD)")
    without_total_usd: float | None = Field(
        None, description="USD: total_cost_usd of the plan without the rule (None: not solved)"
    )
    without_gap: float | None = Field(
        None, description="The proven relative gap of the plan without the rule"
    )
    cost_usd: float | None = Field(
        None,
        description="USD: total_cost_usd - without_total_usd, what surviving it costs (each "
        "plan within its gap of its optimum)",
    )
    largest_domain: str | None = Field(
        None, description="The plan's largest single point of failure of this kind"
    )
    largest_share_of_capacity: float | None = Field(
        None, description="Its share of the serving capacity in its period and block"
    )
    note: str = Field("", description="Why the plan without the rule was not priced, if not")


def _domains(item: LineItem) -> dict[str, dict[str, float]]:
    """Kind -> {domain: share of the line's units in it}."""
    zones = item.zone_units or {f"{item.provider}/{item.region}": item.units}
    total = sum(zones.values()) or 1.0
    return {
        "zone": {z: n / total for z, n in zones.items()},
        "region": {f"{item.provider}/{item.region}": 1.0},
        "provider": {item.provider: 1.0},
    }


def points_of_failure(items: list[LineItem], problem: Problem) -> list[PointOfFailure] | None:
    """Per workload with ``survive_loss_of`` and kind, its largest single point of failure in
    the plan's serving lines (capacity_tokens_per_s split by zone_units for zones); None when
    no workload must survive a loss, so that other plans do not carry the field."""
    rules = [
        w.name for w in problem.workloads if isinstance(w, InferenceWorkload) and w.survive_loss_of
    ]
    if not rules:
        return None
    return largest_domains(items, rules)


def largest_domains(items: list[LineItem], workloads: list[str]) -> list[PointOfFailure]:
    """Per named serving workload and kind of domain, the domain holding the largest share
    of its serving capacity in any period and block of the plan's serving lines (for any
    workload, whether or not it must survive a loss: the alternatives table shows it)."""
    rules = workloads
    blocks = sorted({i.block for i in items if i.block})
    held: dict[tuple[str, str, str, str], dict[str, float]] = defaultdict(
        lambda: defaultdict(float)
    )
    for item in items:
        if item.workload not in rules or item.item not in {Item.RENT, Item.USE}:
            continue
        for block in [item.block] if item.block else blocks:
            for kind, shares in _domains(item).items():
                for domain, share in shares.items():
                    key = (item.workload, kind, item.period, block)
                    held[key][domain] += item.capacity_tokens_per_s * share
    out = []
    for wname in rules:
        for kind in KINDS:
            worst: PointOfFailure | None = None
            for (w, k, period, block), by_domain in held.items():
                if w != wname or k != kind:
                    continue
                total = sum(by_domain.values())
                domain, inside = max(sorted(by_domain.items()), key=lambda d: d[1])
                share = inside / total if total > 0 else 0.0
                if worst is None or share > worst.share_of_capacity:
                    worst = PointOfFailure(
                        workload=wname,
                        kind=kind,
                        domain=domain,
                        period=period,
                        block=block,
                        share_of_capacity=share,
                        capacity_left_tokens_per_s=total - inside,
                    )
            if worst is not None:
                out.append(worst)
    return out
