"""The questions a sizing meeting asks, as fields of a variant (issue 51, Build 1).

Each field is a change to the problem's YAML data, read afterwards by the problem reader
(:func:`solver.inputs.problem.parse_problem`, the CLI's): a bad value gets exactly the
message ``procure solve`` gives, naming the field. Three kinds:

- :data:`PROBLEM_FIELDS`: fields of the problem itself (an accelerator allow-list, the
  weakest price confidence, the price guard, the capacity margin ``demand_headroom``);
- :data:`WORKLOAD_FIELDS`: fields set on every online (inference) workload (failure
  domains ``survive_loss_of``, the largest region and provider shares, the most
  providers, the switching cost, the SLO percentile);
- a region group (:func:`region_groups`): a residency zone of the catalog's
  ``regions.csv`` (eu, us, apac, ...), resolved to the regions in it
  (:func:`group_regions`), so "EU only" is one choice, not 43 region codes;
- :data:`UNCERTAINTY_FIELDS`: drawn scenarios for a two-stage plan (``uncertainty:
  {n_scenarios, price_sigma, demand_range}``).
"""

from __future__ import annotations

from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import InferenceWorkload, Problem

#: problem fields a variant may set: field -> what it does
PROBLEM_FIELDS: dict[str, str] = {
    "accelerators": "only these accelerator types (ids or aliases)",
    "min_price_confidence": "weakest price a plan may rest on",
    "price_guard": "band_top: a weak price must win by more than its band",
    "demand_headroom": "capacity margin: extra capacity over demand (0.2 = +20%)",
}
#: fields set on every online workload: field -> what it does
WORKLOAD_FIELDS: dict[str, str] = {
    "survive_loss_of": "failure domains the service survives the loss of (zone, region, provider)",
    "max_region_share": "most of a workload's capacity in one region (fraction)",
    "max_provider_share": "most of a workload's capacity at one provider (fraction)",
    "max_providers": "most providers a workload is served from in a period",
    "switching_cost_usd": "USD per serving unit started within the day (objective only)",
    "slo_percentile": "percentile the SLOs are checked at (0.99 = p99)",
}
#: drawn scenarios for a two-stage plan: field -> what it does
UNCERTAINTY_FIELDS: dict[str, str] = {
    "n_scenarios": "draw this many equally likely scenarios (two-stage plan)",
    "price_sigma": "drawn: each provider's rented prices x exp(N(0, sigma))",
    "demand_range": "drawn: online demand x uniform(low, high)",
}
#: the region group field
REGION_GROUP = {"region_group": "only the regions of this residency zone (catalog regions.csv)"}
#: every field this module adds to a variant's changes
MEETING_FIELDS: dict[str, str] = {
    **REGION_GROUP,
    **PROBLEM_FIELDS,
    **WORKLOAD_FIELDS,
    **UNCERTAINTY_FIELDS,
}
#: the failure domains a workload may survive the loss of (the reader's values)
DOMAINS = ("zone", "region", "provider")
#: price confidences, weakest first (the reader's values), and the guard's values
CONFIDENCES = ("unverified", "third_party", "list", "quote")
GUARDS = ("none", "band_top")


def region_groups(catalog: Catalog) -> list[str]:
    """The residency zones the catalog's regions name (``regions.csv`` ``residency_zone``),
    sorted: the region groups a variant may choose."""
    zones = catalog.regions["residency_zone"].dropna().astype(str).str.strip().str.lower()
    return sorted({z for z in zones if z})


def group_regions(catalog: Catalog, group: str, file: str | None = None) -> list[str]:
    """The regions of residency zone ``group`` (any case), sorted.

    Raises
    ------
    ProcureError
        The catalog knows no such zone (its message lists the zones it knows).
    """
    key = group.strip().lower()
    frame = catalog.regions.reset_index(drop=True)
    zones = frame["residency_zone"].fillna("").astype(str).str.strip().str.lower()
    regions = sorted(set(frame.loc[zones == key, "region"].astype(str)))
    if not regions:
        known = ", ".join(region_groups(catalog))
        raise ProcureError(
            f"no region group {group!r} in the catalog's regions.csv",
            file=file,
            field="region_group",
            fix=f"choose one of {known}",
        )
    return regions


def resolved(changes: dict, catalog: Catalog, file: str | None = None) -> dict:
    """``changes`` with a region group replaced by its regions (intersected with the regions
    the variant names, when it names some).

    Raises
    ------
    ProcureError
        An unknown group, or a group none of whose regions the variant allows.
    """
    group = changes.get("region_group")
    if not group:
        return changes
    out = {k: v for k, v in changes.items() if k != "region_group"}
    regions = group_regions(catalog, str(group), file)
    if out.get("regions"):
        named = set(out["regions"])
        regions = [r for r in regions if r in named]
        if not regions:
            raise ProcureError(
                f"none of the regions allowed is in region group {group!r}",
                file=file,
                field="region_group",
                fix="clear 'regions allowed' or choose another group",
            )
    out["regions"] = regions
    return out


def apply_meeting_fields(new: dict, problem: Problem, changes: dict) -> None:
    """Set the problem, workload and uncertainty fields of ``changes`` on the problem data
    ``new`` (in place; the reader checks them afterwards); the workload fields go on each
    workload ``problem`` (``new`` as read) reads as an online one."""
    for key in PROBLEM_FIELDS:
        if key in changes:
            new[key] = changes[key]
    workload_changes = {k: changes[k] for k in WORKLOAD_FIELDS if k in changes}
    if workload_changes:
        for raw, w in zip(new.get("workloads") or [], problem.workloads, strict=False):
            if isinstance(w, InferenceWorkload) and isinstance(raw, dict):
                raw.update(workload_changes)
    drawn = {k: changes[k] for k in UNCERTAINTY_FIELDS if k in changes}
    if drawn:
        new["uncertainty"] = {"seed": 0, **drawn}


def _number(form, key: str, example: str) -> float | int | None:
    """A number field ('' for none; a whole number as an int, so an integer field reads it)."""
    raw = str(form.get(key) or "").replace(",", "").replace("_", "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ProcureError(f"{raw!r} is not a number", field=key, fix=f"e.g. {example}") from None
    return int(value) if value.is_integer() and "." not in raw else value


def _demand_range(form) -> list[float] | None:
    raw = str(form.get("demand_range") or "").replace(",", " ").strip()
    if not raw:
        return None
    parts = raw.split()
    fix = "two factors, low and high, e.g. 0.8 1.3"
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ProcureError(f"{raw!r} is not two numbers", field="demand_range", fix=fix) from None
    if len(values) != 2:
        raise ProcureError(
            f"{raw!r} has {len(values)} numbers, not two", field="demand_range", fix=fix
        )
    return values


#: examples of each number field, for its message
_EXAMPLES = {
    "demand_headroom": "0.2",
    "max_region_share": "0.5",
    "max_provider_share": "0.6",
    "max_providers": "2",
    "switching_cost_usd": "50",
    "slo_percentile": "0.99",
    "n_scenarios": "20",
    "price_sigma": "0.1",
}


def form_meeting_changes(form) -> dict:
    """The changes of the meeting's fields from a posted variant form (empty fields: the
    problem's own value; values as typed, checked by the problem reader).

    Raises
    ------
    ProcureError
        A number field that is not a number (naming the field).
    """
    changes: dict = {}
    group = str(form.get("region_group") or "").strip()
    if group:
        changes["region_group"] = group
    names = [n.strip() for n in str(form.get("accelerators") or "").replace("\n", ",").split(",")]
    if any(names):
        changes["accelerators"] = [n for n in names if n]
    for key in ("min_price_confidence", "price_guard"):
        if form.get(key):
            changes[key] = str(form.get(key))
    domains = [d for d in form.getlist("survive_loss_of") if d]
    if domains:
        changes["survive_loss_of"] = domains
    for key, example in _EXAMPLES.items():
        value = _number(form, key, example)
        if value is not None:
            changes[key] = value
    demand_range = _demand_range(form)
    if demand_range is not None:
        changes["demand_range"] = demand_range
    return changes
