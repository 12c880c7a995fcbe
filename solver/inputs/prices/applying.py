"""Applying a price update over a catalog (:func:`apply_prices`): each price judged
against the catalog's, applied with its provenance or reported as not taken, and why."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np
import pandas as pd

from solver.errors import ProcureError
from solver.inputs.catalog import SCHEMAS, Catalog
from solver.inputs.price_holds import ceiling_usd
from solver.inputs.price_traps import PriceRow, price_rows
from solver.inputs.prices.update import (
    APPLIED_STATUSES,
    DEFAULT_MAX_FACTOR,
    OWNED,
    PRICE_COLUMNS,
    REPORT_COLUMNS,
    RESERVED_MODES,
    PriceReport,
    PriceUpdate,
    Repriced,
    price_day,
)
from solver.inputs.provenance import BASE_CURRENCY, UNKNOWN_DATE, confidence_rank

_DISCOUNTED = ("spot", "reserved_1y", "reserved_3y")
_SAME = 1e-9


def apply_prices(
    catalog: Catalog,
    update: PriceUpdate,
    *,
    max_factor: float = DEFAULT_MAX_FACTOR,
    accept_suspicious: bool = False,
    add_new: bool = False,
) -> Repriced:
    """Apply ``update`` over ``catalog``; return the new catalog and the report.

    Parameters
    ----------
    max_factor
        A price moving by more than this factor (either way) is ``suspicious``
        and not applied unless ``accept_suspicious``. Must be > 1.
    add_new
        Add offerings the catalog does not have (catalog and SkyPilot sources;
        only those whose provider/region and accelerator the catalog knows).
    """
    if not max_factor > 1.0:
        raise ProcureError(
            f"max factor {max_factor:g} must be above 1",
            field="--max-factor",
            fix="e.g. --max-factor 2 (a price may halve or double)",
        )
    off = catalog.offerings.copy()
    srv = catalog.servers.copy()
    prices = update.prices
    decisions = Decisions()
    rows = decisions.rows
    new_values: dict[tuple[Hashable, str], float] = {}  # (offering, column) -> price
    new_provenance: dict[Hashable, dict[str, tuple[str, str, str]]] = {}

    def judge(old: float, new: float) -> tuple[str, str]:
        if old != old:
            return "new_mode", ""
        ratio = new / old
        if abs(ratio - 1.0) <= _SAME:
            return "unchanged", ""
        if ratio > max_factor or ratio < 1.0 / max_factor:
            if accept_suspicious:
                return "changed", f"moved by more than x{max_factor:g}; accepted"
            return "suspicious", ""
        return "changed", ""

    _decide_servers(prices[prices["mode"] == OWNED], srv, judge, decisions)

    # --- cloud offerings
    cloud = prices[prices["mode"] != OWNED]
    known_regions = set(zip(catalog.regions["provider"], catalog.regions["region"], strict=True))
    unknown_ids: list[str] = []
    offering_id: Hashable
    for offering_id, group in cloud.groupby("offering_id", sort=True):
        if offering_id not in off.index:
            unknown_ids.append(str(offering_id))
            first = group.iloc[0]
            where = (
                "region not in regions.csv"
                if (first["provider"], first["region"]) not in known_regions
                else "offering not in offerings.csv"
            )
            for r in price_rows(group):
                decisions.record(
                    offering_id, r.provider, r.region, r.mode, old_usd=None, new_usd=r.price_usd,
                    status="unknown", applied=False, note=where, line=r.line,
                )  # fmt: skip
            continue
        # offering ids are unique in a catalog, so .loc gives the offering's row
        base = cast(pd.Series, off.loc[offering_id])
        values, provenance = _decide_offering(offering_id, base, group, judge, decisions)
        new_values.update(values)
        if provenance:
            new_provenance[offering_id] = provenance
    for (offering_id, column), value in new_values.items():
        off.at[offering_id, column] = value
    _set_provenance(off, new_provenance)

    # --- offerings the update adds, or does not mention
    if add_new and update.offerings is not None and unknown_ids:
        off = _add_offerings(off, update.offerings, unknown_ids, catalog, rows)
    if update.covers:
        mentioned = set(cloud["offering_id"])
        for offering_id, row in catalog.offerings.iterrows():
            if row["provider"] in update.covers and offering_id not in mentioned:
                decisions.record(
                    offering_id, row["provider"], row["region"], "", old_usd=None, new_usd=None,
                    status="missing", applied=False, note="not in the update; old prices kept",
                )  # fmt: skip

    if rows and all(r["status"] in ("unknown", "missing") for r in rows):
        raise ProcureError(
            f"the price update names nothing in the catalog ({len(update.prices)} prices, "
            "every offering unknown)",
            file=str(update.source),
            fix="check the provider and region names, or pass --add-new to add its offerings",
        )
    report = PriceReport(
        rows=pd.DataFrame(rows, columns=REPORT_COLUMNS),
        source=update.source,
        kind=update.kind,
        max_factor=max_factor,
        skipped=dict(update.skipped),
    )
    new_catalog = replace(catalog, offerings=off, servers=srv)
    return Repriced(catalog=new_catalog, report=report)


#: Judges a price move: (old USD, new USD) -> (status, note); old NaN for a new mode.
Judge = Callable[[float, float], tuple[str, str]]


@dataclass
class Decisions:
    """The price decisions of one update, one report row each (:data:`REPORT_COLUMNS`)."""

    rows: list[dict] = field(default_factory=list)

    def record(
        self,
        key: Hashable,
        provider: str,
        region: str,
        mode: str,
        *,
        old_usd: float | None,
        new_usd: float | None,
        status: str,
        applied: bool,
        note: str = "",
        line: int = 0,
    ) -> None:
        """Add one decision: the old and new price in USD (``None`` when there is none),
        its status, whether it was applied, a note and the update's line (0: none)."""
        old, new = old_usd, new_usd
        ratio = new / old if old and old == old and new is not None and new == new else float("nan")
        self.rows.append(
            {
                "offering_id": key,
                "provider": provider,
                "region": region,
                "mode": mode,
                "old_usd": float(old) if old is not None else float("nan"),
                "new_usd": float(new) if new is not None else float("nan"),
                "ratio": ratio,
                "status": status,
                "applied": applied,
                "note": note,
                "line": int(line),
            }
        )


#: Columns of an offering's provenance per price group: (date, confidence, source).
_PROVENANCE_COLUMNS = {
    "price": ("price_date", "price_confidence", "source"),
    "reserved": ("reserved_price_date", "reserved_price_confidence", "reserved_source"),
}


def _set_provenance(
    off: pd.DataFrame, provenance: dict[Hashable, dict[str, tuple[str, str, str]]]
) -> None:
    """Write the provenance of applied prices into ``off`` in place: per offering and price
    group (``price``: on-demand and spot, ``reserved``) its date, confidence and source;
    new on-demand or spot prices are in USD."""
    for offering_id, groups in provenance.items():
        for group, values in groups.items():
            for column, value in zip(_PROVENANCE_COLUMNS[group], values, strict=True):
                off.at[offering_id, column] = value
        if "price" in groups and "currency" in off.columns:
            off.at[offering_id, "currency"] = BASE_CURRENCY


def _decide_servers(
    prices: pd.DataFrame, srv: pd.DataFrame, judge: Judge, decisions: Decisions
) -> None:
    """Owned servers' capex: each price judged, applied to ``srv`` in place (with its
    provenance), recorded."""
    for r in price_rows(prices):
        if r.offering_id not in srv.index:
            decisions.record(
                r.offering_id, OWNED, "", OWNED, old_usd=None, new_usd=r.price_usd,
                status="unknown", applied=False, note="server not in servers.csv", line=r.line,
            )  # fmt: skip
            continue
        # the stubs type a cell as any scalar; capex_usd is a number
        old = float(srv.at[r.offering_id, "capex_usd"])  # type: ignore[arg-type]
        status, note = judge(old, r.price_usd)
        applied = status in APPLIED_STATUSES
        if applied:
            srv.at[r.offering_id, "capex_usd"] = float(r.price_usd)
            srv.at[r.offering_id, "price_date"] = r.price_date
            srv.at[r.offering_id, "price_confidence"] = r.price_confidence
            srv.at[r.offering_id, "currency"] = BASE_CURRENCY
            srv.at[r.offering_id, "source"] = f"capex from {r.price_source}; " + cast(
                str, srv.at[r.offering_id, "source"]
            )
        decisions.record(
            r.offering_id, OWNED, "", OWNED, old_usd=old, new_usd=r.price_usd, status=status,
            applied=applied, note=note, line=r.line,
        )  # fmt: skip


def _decide_offering(
    offering_id: Hashable, base: pd.Series, group: pd.DataFrame, judge: Judge, decisions: Decisions
) -> tuple[dict[tuple[Hashable, str], float], dict[str, tuple[str, str, str]]]:
    """The prices of one catalog offering the update moves: each given mode judged;
    reserved prices not given move with on-demand; nothing applied that would put a
    discounted mode above on-demand. Returns ((offering, column) -> new price, the
    provenance of what was applied: price group -> (date, confidence, source)); every
    decision is recorded in ``decisions``."""
    values: dict[tuple[Hashable, str], float] = {}
    given = {r.mode: r for r in price_rows(group)}
    decided: dict[str, tuple[float, float, str, str, int]] = {}
    ceiling = ceiling_usd(_count(base.get("accelerators_per_instance")))
    for mode, r in given.items():
        old = float(base[PRICE_COLUMNS[mode]]) if pd.notna(base[PRICE_COLUMNS[mode]]) else None
        status, note = judge(old if old is not None else float("nan"), r.price_usd)
        if r.price_usd > ceiling:  # not even --accept-suspicious takes it (price_holds)
            status = "suspicious"
            note = f"above the market ceiling ${ceiling:,.0f} per instance-hour; not applied"
        decided[mode] = (
            old if old is not None else float("nan"),
            r.price_usd,
            status,
            note,
            r.line,
        )
    # reserved prices not in the update move with on-demand
    od = decided.get("on_demand")
    if od is not None and od[2] == "changed":
        factor = od[1] / od[0]
        for mode in RESERVED_MODES:
            old = base[PRICE_COLUMNS[mode]]
            if mode not in decided and pd.notna(old):
                decided[mode] = (
                    float(old),
                    float(old) * factor,
                    "derived",
                    "moved with on-demand (discount kept)",
                    0,
                )
    # consistency: discounted modes never above on-demand
    final = {m: float(base[c]) if pd.notna(base[c]) else None for m, c in PRICE_COLUMNS.items()}
    for mode, (_, new, status, _, _) in decided.items():
        if status in APPLIED_STATUSES:
            final[mode] = new
    # on_demand_usd_per_hour is a required, non-null catalog column: final["on_demand"] is set
    dearer = [
        m
        for m in _DISCOUNTED
        if final[m] is not None and final[m] > final["on_demand"] * 1.0001  # type: ignore[operator]
    ]
    inconsistent = bool(dearer) and any(
        decided.get(m, (0, 0, "unchanged"))[2] in APPLIED_STATUSES for m in ("on_demand", *dearer)
    )
    provenance: dict[str, tuple[str, str, str]] = {}
    for mode, (old, new, status, note, line) in sorted(decided.items()):
        applied = status in APPLIED_STATUSES
        if inconsistent and applied:
            status, applied = "inconsistent", False
            note = (
                f"{dearer[0]} ${final[dearer[0]]:,.4g}/h would exceed on-demand "
                f"${final['on_demand']:,.4g}/h"
            )
        if applied:
            values[(offering_id, PRICE_COLUMNS[mode])] = new
            provenance[_group(mode)] = _applied_provenance(mode, given, base)
        decisions.record(
            offering_id, base["provider"], base["region"], mode, old_usd=old, new_usd=new,
            status=status, applied=applied, note=note, line=line,
        )  # fmt: skip
    return values, provenance


def _count(value: object) -> int:
    """An accelerator count cell as an int (0 when empty)."""
    # the stubs take scalars only; pandas coerces None or any other object to NaN
    number = pd.to_numeric(value, errors="coerce")  # type: ignore[call-overload]
    return int(number) if pd.notna(number) else 0


def _group(mode: str) -> str:
    return "reserved" if mode in RESERVED_MODES else "price"


def _applied_provenance(
    mode: str, given: dict[str, PriceRow], base: pd.Series
) -> tuple[str, str, str]:
    """(date, confidence, source) of an applied price: the update row's; a reserved price
    moved with on-demand keeps the catalog's discount, so it is no stronger than the
    catalog's reserved price and cites both."""
    if mode in given:
        r = given[mode]
        return r.price_date, r.price_confidence, r.price_source
    r = given["on_demand"]
    old = str(base.get("reserved_price_confidence", "") or "unverified")
    level = min((r.price_confidence, old), key=confidence_rank)
    return (
        r.price_date,
        level,
        f"{r.price_source}, with the catalog's discount ({base.get('reserved_source', '')})",
    )


def _add_offerings(
    off: pd.DataFrame,
    offerings: pd.DataFrame,
    ids: list[str],
    catalog: Catalog,
    rows: list[dict],
) -> pd.DataFrame:
    """Append unknown offerings whose region and accelerator the catalog knows."""
    known_regions = set(zip(catalog.regions["provider"], catalog.regions["region"], strict=True))
    new = offerings[offerings["offering_id"].isin(ids)].copy()
    ok = np.array(
        [
            (p, r) in known_regions and a in catalog.accelerators.index
            for p, r, a in zip(new["provider"], new["region"], new["accelerator_id"], strict=True)
        ],
        dtype=bool,
    )
    new = new[ok]
    if new.empty:
        return off
    for column in off.columns:
        if column not in new.columns:
            new[column] = np.nan
    defaults: dict[str, str | float] = {
        "currency": BASE_CURRENCY,
        "price_date": UNKNOWN_DATE,
        "price_confidence": "unverified",
        "price_note": "",
        "usd_per_unit": 1.0,
        "exchange_rate_date": "",
    }
    for column, value in defaults.items():
        if column in new.columns:
            new[column] = new[column].fillna(value).replace("", value)
    new["price_date"] = new["price_date"].map(price_day)
    for own, row in (
        ("reserved_price_date", "price_date"),
        ("reserved_price_confidence", "price_confidence"),
        ("reserved_source", "source"),
    ):
        if own in new.columns:
            new[own] = new[own].fillna("").where(new[own].fillna("") != "", new[row])
    new = new[list(off.columns)]
    for column, declared in SCHEMAS["offerings.csv"].items():
        if declared.dtype == "bool":
            new[column] = new[column].astype(bool)
        elif declared.dtype == "int":
            new[column] = pd.to_numeric(new[column], errors="coerce").astype("Int64")
        elif declared.dtype == "float":
            new[column] = pd.to_numeric(new[column], errors="coerce").astype(float)
    added = set(new["offering_id"])
    for r in rows:
        if r["status"] == "unknown" and r["offering_id"] in added:
            r["status"], r["applied"], r["note"] = "added", True, "new offering added"
    new.index = pd.Index(new["offering_id"], name=off.index.name)
    return pd.concat([off, new]).sort_index(kind="stable")
