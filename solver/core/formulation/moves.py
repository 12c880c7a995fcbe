"""Plans that stay put and that infra can operate: where an online workload is served in
each period (``serve_at`` binaries per provider and region), the moves between periods
charged in the objective (``move`` rows), and the operability limits (``max_providers``,
``min_units_per_deployment``, ``max_deployments``). docs/formulation/moves.md derives them.
"""

from __future__ import annotations

from collections import defaultdict

from solver.core.formulation.state import State
from solver.core.matrix import VarKind
from solver.inputs.costs import EGRESS_USD_PER_GB
from solver.inputs.problem import InferenceWorkload
from solver.inputs.staff import DEFAULT_USD_PER_MOVE
from solver.physics import bytes_per_value

__all__ = ["DEFAULT_USD_PER_MOVE", "add_moves_and_limits", "move_usd"]


def move_usd(m: State, w: InferenceWorkload) -> float:
    """USD one move of ``w`` costs: the fixed work plus its GB at the per-GB price (default
    GB: the model's weights, parameters x bytes per weight)."""
    fixed = w.migration_usd_per_move
    fixed = DEFAULT_USD_PER_MOVE if fixed is None else fixed
    gb = w.migration_gb
    if gb is None:
        gb = m.compiled.models[w.name].params * bytes_per_value(w.weight_precision) / 1e9
    per_gb = w.migration_usd_per_gb
    per_gb = EGRESS_USD_PER_GB["aws"][0] if per_gb is None else per_gb
    return fixed + gb * per_gb


def add_moves_and_limits(m: State) -> None:
    """``serve_at`` binaries, charged moves and operability limits of every online workload
    that must survive a loss, states a migration_ field or an operability limit."""
    for w in m.problem.workloads:
        if isinstance(w, InferenceWorkload) and (w.migration_charged or w.operability_limits):
            _add_workload(m, w)


def _serving_vars(m: State, name: str) -> list[int]:
    """The workload's serving x variables."""
    return [
        i for i, v in enumerate(m.B.vars) if v["kind"] == VarKind.X.value and v["workload"] == name
    ]


def _add_workload(m: State, w: InferenceWorkload) -> None:
    """One workload's ``serve_at`` and ``deployed`` binaries and their rows."""
    B, pools = m.B, m.pools
    xs = _serving_vars(m, w.name)
    most = (pools["availability_cap"] + pools["existing_units"]).to_numpy(dtype=float)
    provider, region = pools["provider"].to_numpy(), pools["region"].to_numpy()
    offering = pools["offering_id"].to_numpy()
    at: dict[tuple[int, str, str], list[int]] = defaultdict(list)
    deployed: dict[tuple[int, int, str], list[int]] = defaultdict(list)
    per_block = w.fleet == "per_block"
    for v in xs:
        p, t, b = int(B.vars[v]["pool"]), int(B.vars[v]["period"]), int(B.vars[v]["block"])
        at[(t, str(provider[p]), str(region[p]))].append(v)
        deployed[(t, b if per_block else -1, str(offering[p]))].append(v)
    serve_at = {key: _indicator(m, w, "serve_at", key, vs, most) for key, vs in at.items()}
    if w.migration_charged:
        _add_moves(m, w, serve_at)
    if w.max_providers is not None:
        _add_max_providers(m, w, serve_at)
    if w.min_units_per_deployment is not None or w.max_deployments is not None:
        dep = {key: _indicator(m, w, "deployed", key, vs, most) for key, vs in deployed.items()}
        if w.min_units_per_deployment is not None:
            _add_min_units(m, w, dep, deployed)
        if w.max_deployments is not None:
            by_period: dict[tuple[int, int], list[int]] = defaultdict(list)
            for (t, b, _o), d in dep.items():
                by_period[(t, b)].append(d)
            for (t, b), ds in by_period.items():
                row = dict.fromkeys(ds, 1.0)
                B.row("max_deployments", (w.name, t, b), row, "<=", float(w.max_deployments))


def _indicator(
    m: State, w: InferenceWorkload, what: str, key: tuple, xs: list[int], most: object
) -> int:
    """A binary that is 1 when any of ``xs`` has units and 0 when none has (``<what>_link``
    rows: x <= M indicator, M the pool's availability plus units held, or an autoscaled
    deployment's deploy variable <= indicator, the same and tighter; ``<what>_units``:
    indicator <= the units of ``xs``)."""
    B = m.B
    ind = B.var(
        f"{what}[{w.name},{','.join(str(k) for k in key)}]",
        VarKind.SERVE_AT,
        integer=True,
        ub=1.0,
        period=key[0],
        workload=w.name,
    )
    linked: set[int] = set()
    for v in xs:
        deploy = m.deploy_of.get(v)
        if deploy is not None:
            if deploy not in linked:
                linked.add(deploy)
                # a tie class's deploy counts its pools in use (up to its bound, k)
                top = -float(B.vars[deploy]["ub"])
                B.row(f"{what}_link", (w.name, *key, deploy), {deploy: 1.0, ind: top}, "<=", 0.0)
            continue
        bound = float(most[int(B.vars[v]["pool"])])  # type: ignore[index]
        B.row(f"{what}_link", (w.name, *key, v), {v: 1.0, ind: -bound}, "<=", 0.0)
    # and 0 without units, so that a move is not hidden by a place marked served for free
    B.row(f"{what}_units", (w.name, *key), {ind: 1.0, **{v: -1.0 for v in xs}}, "<=", 0.0)
    return ind


def _add_moves(m: State, w: InferenceWorkload, serve_at: dict[tuple[int, str, str], int]) -> None:
    """``move`` rows: arrive[t, place] >= serve_at[t, place] - serve_at[t', place] for t' the
    period before t the workload is served in; each arrival costs :func:`move_usd` in the
    objective (``migration_penalty_usd``). The first period's places are not moves."""
    periods = sorted({t for t, _, _ in serve_at})
    usd = move_usd(m, w)
    for before, t in zip(periods, periods[1:], strict=False):
        for (s, prov, reg), here in serve_at.items():
            if s != t:
                continue
            arrive = m.B.var(
                f"arrive[{w.name},{t},{prov},{reg}]",
                VarKind.MOVE,
                integer=False,
                ub=1.0,
                period=t,
                workload=w.name,
            )
            row = {arrive: 1.0, here: -1.0}
            was = serve_at.get((before, prov, reg))
            if was is not None:
                row[was] = 1.0
            m.B.row("move", (w.name, t, prov, reg), row, ">=", 0.0)
            m.migration.add(arrive, usd)


def _add_max_providers(
    m: State, w: InferenceWorkload, serve_at: dict[tuple[int, str, str], int]
) -> None:
    """``max_providers`` rows: uses[t, provider] >= serve_at[t, place] of its places, and
    the providers used in a period <= the limit."""
    B = m.B
    uses: dict[tuple[int, str], int] = {}
    for (t, prov, reg), here in serve_at.items():
        if (t, prov) not in uses:
            uses[(t, prov)] = B.var(
                f"uses[{w.name},{t},{prov}]",
                VarKind.SERVE_AT,
                integer=True,
                ub=1.0,
                period=t,
                workload=w.name,
            )
        key = (w.name, t, prov, reg)
        B.row("provider_used", key, {here: 1.0, uses[(t, prov)]: -1.0}, "<=", 0.0)
    by_period: dict[int, list[int]] = defaultdict(list)
    for (t, _), u in uses.items():
        by_period[t].append(u)
    for t, us in by_period.items():
        limit = float(w.max_providers or 0)
        B.row("max_providers", (w.name, t), dict.fromkeys(us, 1.0), "<=", limit)


def _add_min_units(
    m: State,
    w: InferenceWorkload,
    dep: dict[tuple[int, int, str], int],
    deployed: dict[tuple[int, int, str], list[int]],
) -> None:
    """``min_units_per_deployment`` rows: in every load block of a deployment, the units of
    its offering (every mode and configuration) >= the limit x deployed."""
    B = m.B
    need = float(w.min_units_per_deployment or 0)
    for key, d in dep.items():
        by_block: dict[int, dict[int, float]] = defaultdict(dict)
        for v in deployed[key]:
            b = int(B.vars[v]["block"])
            for c in range(m.n_b) if b < 0 else [b]:
                by_block[c][v] = 1.0
        for c, row in by_block.items():
            B.row("min_units_per_deployment", (w.name, *key, c), {**row, d: -need}, ">=", 0.0)
