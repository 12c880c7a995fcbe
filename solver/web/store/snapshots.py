"""Price snapshots in the workspace database: every ``procure prices
pull`` is kept with its date and source, so an offering's prices have a history, and a
stored snapshot can stand for a price file (``--prices snapshot:latest`` or
``snapshot:ID``).

- ``price_snapshots``: one per pull: the source (skypilot, azure-retail, aws-offer,
  gcp-billing), the day the prices are of (``price_date``), what was read (``origin``: a
  file or URL), when it was stored, and the rows the pull could not map (JSON);
- ``price_rows``: its prices, one per offering and mode, USD per instance-hour, with
  whether the catalog held the offering when pulled and its accelerator and count;
- ``price_watches``: a stored plan compared with a snapshot by a workspace "watch" job
  (:mod:`solver.web.price_watch`): the verdict and ``procure watch --format json``'s
  document.

Snapshots are never updated: a newer pull is a new snapshot.
"""

from __future__ import annotations

import json
from datetime import datetime

import pandas as pd
from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, Text, select
from sqlalchemy.orm import Mapped, mapped_column

from solver.errors import ProcureError
from solver.web.store.db import Store
from solver.web.store.models import Base, utc_now

SNAPSHOT_PREFIX = "snapshot:"


class PriceSnapshot(Base):
    __tablename__ = "price_snapshots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(String(40))
    price_date: Mapped[str] = mapped_column(String(10), index=True)
    origin: Mapped[str] = mapped_column(Text, default="")
    row_count: Mapped[int] = mapped_column(Integer, default=0)
    unmapped_json: Mapped[str] = mapped_column(Text, default="[]")
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    created_by: Mapped[str] = mapped_column(String(200), default="")


class PriceRow(Base):
    __tablename__ = "price_rows"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("price_snapshots.id"), index=True)
    offering_id: Mapped[str] = mapped_column(String(300), index=True)
    provider: Mapped[str] = mapped_column(String(60))
    region: Mapped[str] = mapped_column(String(100))
    instance_type: Mapped[str] = mapped_column(String(200))
    mode: Mapped[str] = mapped_column(String(20))
    price_usd_per_hour: Mapped[float] = mapped_column(Float)
    in_catalog: Mapped[bool] = mapped_column(Boolean, default=False)
    accelerator_id: Mapped[str] = mapped_column(String(60), default="")
    accelerators_per_instance: Mapped[int] = mapped_column(Integer, default=0)


class PriceWatch(Base):
    __tablename__ = "price_watches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"), index=True)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"), nullable=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("price_snapshots.id"))
    verdict: Mapped[str] = mapped_column(String(40))
    result_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    created_by: Mapped[str] = mapped_column(String(200), default="")


def save_snapshot(store: Store, pull, record=None) -> int:
    """Store a :class:`~solver.inputs.importers.feeds.PricePull`; its new id. ``record``
    (session, snapshot id) adds what goes in the same transaction: the audit entry
    (:func:`solver.web.audit.record`: the audit trail lists price changes)."""
    with store.sessions() as session, session.begin():
        snap = PriceSnapshot(
            source=pull.source,
            price_date=pull.price_date,
            origin=pull.origin,
            row_count=len(pull.rows),
            unmapped_json=json.dumps(pull.unmapped.to_dict("records"), default=str),
        )
        session.add(snap)
        session.flush()
        session.add_all(
            PriceRow(
                snapshot_id=snap.id,
                offering_id=r.offering_id,
                provider=r.provider,
                region=r.region,
                instance_type=r.offering,
                mode=r.mode,
                price_usd_per_hour=float(r.price),
                in_catalog=bool(r.in_catalog),
                accelerator_id=str(r.accelerator_id),
                accelerators_per_instance=int(r.accelerators_per_instance),
            )
            for r in pull.rows.itertuples(index=False)
        )
        if record is not None:
            record(session, snap.id)
        return snap.id


def list_snapshots(store: Store) -> list[PriceSnapshot]:
    """Every snapshot, oldest price date first (then in the order stored)."""
    with store.sessions() as session:
        query = select(PriceSnapshot).order_by(PriceSnapshot.price_date, PriceSnapshot.id)
        return list(session.scalars(query))


def find_snapshot(store: Store, ref: str) -> PriceSnapshot:
    """The snapshot ``ref`` names: ``latest`` (the newest price date, the last stored of
    that day) or an id; ``snapshot:`` in front is optional.

    Raises
    ------
    ProcureError
        No snapshot is stored, or none has that id.
    """
    key = ref.removeprefix(SNAPSHOT_PREFIX).strip()
    snapshots = list_snapshots(store)
    fix = "pull one first (procure prices pull), or see procure prices list"
    if not snapshots:
        raise ProcureError(
            f"no price snapshot is stored in {store.label}", field="--prices", fix=fix
        )
    if key == "latest":
        return snapshots[-1]
    found = [s for s in snapshots if key.isdigit() and s.id == int(key)]
    if not found:
        raise ProcureError(
            f"no price snapshot {key!r} in {store.label}",
            field="--prices",
            fix="write snapshot:latest or snapshot:ID with an id from procure prices list",
        )
    return found[0]


def snapshot_rows(store: Store, snapshot_id: int) -> pd.DataFrame:
    """A snapshot's prices as our price CSV (``provider, region, offering, mode, price,
    date``), plus ``offering_id`` and ``in_catalog`` (the catalog held the offering when
    pulled); sorted by offering and mode."""
    with store.sessions() as session:
        snap = session.get(PriceSnapshot, snapshot_id)
        query = select(PriceRow).where(PriceRow.snapshot_id == snapshot_id)
        rows = [
            {
                "provider": r.provider,
                "region": r.region,
                "offering": r.instance_type,
                "mode": r.mode,
                "price": r.price_usd_per_hour,
                "date": snap.price_date,
                "offering_id": r.offering_id,
                "in_catalog": r.in_catalog,
            }
            for r in session.scalars(query)
        ]
    columns = ["provider", "region", "offering", "mode", "price", "date", "offering_id"]
    columns.append("in_catalog")
    out = pd.DataFrame(rows, columns=columns)
    return out.sort_values(["offering_id", "mode"], kind="stable").reset_index(drop=True)


def price_history(store: Store, offering_id: str) -> pd.DataFrame:
    """An offering's prices in every snapshot that has it: ``price_date, snapshot_id,
    source, mode, price_usd_per_hour``, oldest first."""
    with store.sessions() as session:
        query = (
            select(PriceSnapshot, PriceRow)
            .join(PriceRow, PriceRow.snapshot_id == PriceSnapshot.id)
            .where(PriceRow.offering_id == offering_id)
            .order_by(PriceSnapshot.price_date, PriceSnapshot.id, PriceRow.mode)
        )
        rows = [
            {
                "price_date": snap.price_date,
                "snapshot_id": snap.id,
                "source": snap.source,
                "mode": row.mode,
                "price_usd_per_hour": row.price_usd_per_hour,
            }
            for snap, row in session.execute(query)
        ]
    columns = ["price_date", "snapshot_id", "source", "mode", "price_usd_per_hour"]
    return pd.DataFrame(rows, columns=columns)


def stored_references(store: Store, price_date: str) -> dict[tuple[str, str], tuple[float, str]]:
    """(offering_id, mode) -> (its latest stored price, USD per instance-hour, "the
    snapshot N of DAY"): the newest snapshot dated on or before ``price_date`` that has
    it. A pulled price is held against it (:mod:`solver.inputs.price_holds`)."""
    refs: dict[tuple[str, str], tuple[float, str]] = {}
    for snap in list_snapshots(store):  # oldest price date first: the newest wins
        if snap.price_date > price_date:
            continue
        rows = snapshot_rows(store, snap.id)
        label = f"snapshot {snap.id} ({snap.source}, {snap.price_date})"
        for offering_id, mode, price in zip(
            rows["offering_id"], rows["mode"], rows["price"], strict=True
        ):
            refs[(str(offering_id), str(mode))] = (float(price), label)
    return refs
