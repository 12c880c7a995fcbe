"""The checks every line item takes: in the catalog, finite whole numbers, an allowed
mode, the workload's requirements and provider tier.
"""

from __future__ import annotations

import math

from solver.inputs.catalog import tier_allowed, tier_rank
from solver.inputs.hardware import LISTS
from solver.inputs.problem import BatchInferenceWorkload, InferenceWorkload, TrainingWorkload
from solver.plan import LineItem
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _known, _matches, _provenance
from solver.units import Item, Mode, server_and_site


def _check_line(run: _Run, item: LineItem) -> tuple | None:
    """Checks every line item takes: in the catalog, finite whole numbers, allowed mode,
    the workload's requirements. Returns (unit facts, owned, workload), or None when the
    rest cannot be checked."""
    c = run.c
    ctx = run.ctx
    p = run.p
    catalog = run.catalog
    allowed_modes = run.allowed_modes
    known = _known(item, catalog)
    c.check("offering in the catalog", known, f"{item.offering} {item.mode}")
    if not known:
        return None
    u = ctx.unit(item)
    owned = item.mode == Mode.OWNED
    c.check(
        "line item matches its offering",
        _matches(item, u),
        f"{item.offering}: {item.provider}/{item.region}/{item.accelerator}",
    )
    stated = (item.price_date, item.price_source, item.price_confidence, item.price_currency)
    c.check(
        "price provenance as in the catalog",
        stated == _provenance(item, u),
        f"{item.offering} {item.mode}: {item.price_confidence} {item.price_date} "
        f"{item.price_currency}",
    )
    c.check(
        "numbers are finite and not negative",
        all(
            math.isfinite(v) and v >= 0
            for v in (item.units, item.accelerators, item.hours, item.co2e_t)
        )
        and math.isfinite(item.cost_usd),
        f"{item.offering}: units {item.units}, hours {item.hours}, cost {item.cost_usd}",
    )
    if not math.isfinite(item.units):
        return None
    c.check(
        "unit counts are whole numbers",
        abs(item.units - round(item.units)) < 1e-6,
        f"{item.offering} {item.units}",
    )
    if item.item in {Item.RENT, Item.RESERVATION, Item.PURCHASE} or (
        item.item == Item.TRAINING and item.mode != Mode.OWNED
    ):
        c.check("purchase mode allowed", item.mode in allowed_modes, f"{item.mode}")
    if owned and p.site_ids is not None:
        c.check(
            "site allowed (sites)",
            server_and_site(item.offering)[1] in p.site_ids,
            f"{item.offering} at {item.region}",
        )
    w = ctx.workloads.get(item.workload)
    if w is not None:
        _check_requirements(run, item, u, owned, w)
    return u, owned, w


def _check_requirements(
    run: _Run,
    item: LineItem,
    u: dict,
    owned: bool,
    w: TrainingWorkload | InferenceWorkload | BatchInferenceWorkload,
) -> None:
    """The requirements common to every workload line: residency, providers, tier,
    regions, hardware lists, framework, ECC, precision support, spot only for
    interruptible work."""
    c = run.c
    p = run.p
    zones = [z for z in (p.residency, w.residency) if z is not None]
    c.check(
        "residency",
        all(u["zone"] in z for z in zones),
        f"{item.workload} on {item.offering} ({u['zone']})",
    )
    provs = [q for q in (p.providers, w.providers) if q is not None]
    c.check(
        "providers allowed",
        owned or all(item.provider in q for q in provs),
        f"{item.workload} on {item.provider}",
    )
    _check_tier(run, item, w, "owned" if owned else str(u["offering"]["provider"]))
    if not owned:
        regs = [q for q in (p.regions, w.regions) if q is not None]
        c.check(
            "regions allowed",
            all(item.region in q for q in regs),
            f"{item.workload} in {item.region}",
        )
    rule = run.hardware.get(w.name)
    if rule is not None and any(rule.values(name) for name in LISTS):
        broken = rule.broken(str(u["acc"]["accelerator_id"]), str(u["acc"]["vendor"]))
        c.check(
            "hardware allowed (accelerators, vendors, runtime)",
            broken is None,
            f"{item.workload} on {item.accelerator} (left out by {broken})",
        )
    frameworks = str(u["acc"]["frameworks"]).split(";")
    c.check(
        "framework supported",
        w.framework in frameworks,
        f"{item.workload} ({w.framework}) on {item.accelerator}",
    )
    if w.require_ecc:
        c.check("ECC memory", bool(u["acc"]["ecc"]), f"{item.workload} on {item.accelerator}")
    for precision in {"fp8": "fp8_dense_tflops", "int8": "int8_dense_tops"}.items():
        name, column = precision
        if name in {
            getattr(w, "precision", None),
            getattr(w, "weight_precision", None),
            getattr(w, "kv_precision", None),
        }:
            c.check(
                "precision supported by the hardware",
                float(u["acc"][column]) > 0,
                f"{item.workload} in {name} on {item.accelerator}",
            )
    c.check(
        "spot only for interruptible work",
        item.mode != Mode.SPOT or w.interruptible,
        f"{item.workload} on spot",
    )


def _check_tier(
    run: _Run,
    item: LineItem,
    w: TrainingWorkload | InferenceWorkload | BatchInferenceWorkload,
    provider: str,
) -> None:
    """The line's provider tier against the problem's and the workload's ``min_tier``, and
    online serving's default (no marketplace hosts unless a ``min_tier`` opts in)."""
    p = run.p
    floors: list[tuple[str, bool]] = [(t, False) for t in (p.min_tier, w.min_tier) if t is not None]
    floor = w.tier_floor(p.min_tier)
    if w.min_tier is None and floor is not None:
        floors.append((floor, True))
    if not floors:
        return
    tier = "owned" if provider == "owned" else run.catalog.tier_of(provider)
    run.c.check(
        "provider tier",
        all(tier_allowed(tier, t, default=d) for t, d in floors),
        f"{item.workload} on {item.offering} ({tier}; needs "
        f"{max((t for t, _ in floors), key=tier_rank)})",
    )
