"""Moves between periods (``migration_penalty_usd``), recomputed from the plan's serving
lines alone: for each serving workload whose moves are charged, the places (provider,
region) it serves from in each of its periods; every place served in a period and not in
the one before is a move, at the workload's fixed cost per move plus its GB at the
per-GB price (the problem's migration_ fields, else the published defaults:
solver.inputs.staff.DEFAULT_USD_PER_MOVE, the model's weights, and EC2's first egress
band). The first period's places are not moves.
"""

from __future__ import annotations

from solver.inputs.costs import EGRESS_USD_PER_GB
from solver.inputs.problem import InferenceWorkload
from solver.inputs.staff import DEFAULT_USD_PER_MOVE
from solver.physics.constants import bytes_per_value
from solver.trust.verify.context import REL_TOL
from solver.trust.verify.run import _Run
from solver.units import Item


def usd_per_move(run: _Run, w: InferenceWorkload) -> float:
    """USD one move of ``w`` costs: fixed work plus GB copied at the per-GB price."""
    fixed = DEFAULT_USD_PER_MOVE if w.migration_usd_per_move is None else w.migration_usd_per_move
    gb = w.migration_gb
    if gb is None:
        gb = run.specs[w.name].params * bytes_per_value(w.weight_precision) / 1e9
    per_gb = w.migration_usd_per_gb
    per_gb = EGRESS_USD_PER_GB["aws"][0] if per_gb is None else per_gb
    return fixed + gb * per_gb


def moves(run: _Run, w: InferenceWorkload) -> list[tuple[str, str, str]]:
    """(period, provider, region) of each move of ``w`` in the plan: a place served in a
    period of the workload and not in the period before."""
    places: dict[str, set[tuple[str, str]]] = {}
    for item in run.plan.line_items:
        if item.workload == w.name and item.item in {Item.RENT, Item.USE} and item.units > 0.5:
            places.setdefault(item.period, set()).add((item.provider, item.region))
    periods = [t for t in run.ctx.period_names if not w.periods or t in w.periods]
    out = []
    for before, t in zip(periods, periods[1:], strict=False):
        for prov, reg in sorted(places.get(t, set()) - places.get(before, set())):
            out.append((t, prov, reg))
    return out


def _check_migration(run: _Run) -> None:
    """``migration penalty recomputed``: the plan's ``migration_penalty_usd`` is the moves
    of its serving workloads whose moves are charged, each at its cost (absent when no
    workload's moves are charged; not run when none is and the plan claims none)."""
    charged = [
        w for w in run.p.workloads if isinstance(w, InferenceWorkload) and w.migration_charged
    ]
    claimed = run.plan.migration_penalty_usd
    if not charged and claimed is None:  # nothing charged, nothing claimed: no check
        return
    if not charged:
        run.c.check(
            "migration penalty recomputed",
            claimed is None or abs(claimed) <= 0.005,
            f"${claimed or 0:,.2f} claimed with no workload's moves charged",
        )
        return
    expected, said = 0.0, []
    for w in charged:
        found = moves(run, w)
        expected += len(found) * usd_per_move(run, w)
        said += [f"{w.name} {t} into {p}/{r}" for t, p, r in found]
    got = claimed or 0.0
    run.c.check(
        "migration penalty recomputed",
        abs(got - expected) <= REL_TOL * max(1.0, expected) + 0.005,
        f"${got:,.2f} vs recomputed ${expected:,.2f} ({len(said)} moves"
        + (f": {'; '.join(said[:5])}" if said else "")
        + ")",
    )
