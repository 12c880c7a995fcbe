"""Several FOCUS billing exports read as one set of charges, each charge counted once.

A bill is identified by its content, not its file name: each row by its FOCUS identity and
content digests (:func:`solver.inputs.importers.focus_billing.row_identity`), each file by
the digest of its rows (:func:`bill_digest`: the same rows under another name, in another
order or with the columns reordered give the same digest). Files are taken in the order
given, and:

- a row equal in every cell to a row already read (from an earlier file, or earlier in
  the same file), or with the identity and the amounts of an earlier file's row (the same
  charge in an export with other ``x_`` columns) is **a duplicate**: dropped, and counted
  in :attr:`Bills.duplicates` by file (the same file passed twice, two exports whose
  months overlap, a file joined with itself). An export lists each charge once, so two
  rows alike in every column are one charge passed twice;
- a row with the identity of a row of an **earlier file** but other amounts is refused:
  the two files are exports of the same charges taken at different times (a month's export
  is revised until its invoice closes), and counting both, or choosing one, would be a
  guess. Within one file two rows of one identity and different amounts are both counted
  (the provider splits the charge finer than the FOCUS columns show).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast

import pandas as pd

from solver.errors import ProcureError
from solver.inputs.importers.focus_billing import BILLING_COLUMNS, read_focus_billing


@dataclass(frozen=True)
class Bills:
    """Billed rows of one or more exports, duplicates dropped.

    Attributes
    ----------
    rows
        The rows counted (:data:`~solver.inputs.importers.focus_billing.BILLING_COLUMNS`).
    read
        File -> rows read from it.
    duplicates
        One entry per file that had rows dropped: ``file``, ``rows`` (how many),
        ``duplicate_of`` (the files holding the rows counted, the file itself for a repeat
        within it) and ``same_bill_as`` (an earlier file with the same digest, else '').
    digests
        File -> :func:`bill_digest` of its rows.
    """

    rows: pd.DataFrame
    read: dict[str, int] = field(default_factory=dict)
    duplicates: list[dict] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)

    @property
    def dropped(self) -> int:
        """How many duplicate rows were dropped, over every file."""
        return sum(int(d["rows"]) for d in self.duplicates)


def bill_digest(frame: pd.DataFrame) -> str:
    """SHA-256 (hex) of a bill's rows: their content digests sorted, so neither the file's
    name nor the order of its rows or columns changes it."""
    digest = hashlib.sha256()
    for row in sorted(frame["digest"]):
        digest.update(row.encode() + b"\n")
    return digest.hexdigest()


class _BillRow(Protocol):
    """A bill row as :func:`dedupe` reads it (:data:`BILLING_COLUMNS`; amounts in the
    bill's currency)."""

    file: str
    row: int
    cost: float
    quantity: float
    identity: str
    digest: str
    amounts: str


def _conflict(row: _BillRow, first: _BillRow) -> ProcureError:
    return ProcureError(
        f"this row is the charge of {first.file} row {first.row} (the same FOCUS identity: "
        f"account, charge period, resource, SKU, pricing ...) with other amounts "
        f"(EffectiveCost {row.cost:g} here, {first.cost:g} there; PricingQuantity "
        f"{row.quantity:g} and {first.quantity:g})",
        file=str(row.file),
        field=f"row {row.row}",
        fix="the two files are exports of the same charges taken at different times (a "
        "month's export is revised until its invoice closes): pass only the newer export "
        "of each period",
    )


def dedupe(frames: Sequence[pd.DataFrame]) -> Bills:
    """The rows of ``frames`` (one per file, in the order given) with every duplicate
    dropped (module docstring).

    Raises
    ------
    ProcureError
        A row with the identity of an earlier file's row and other amounts.
    """
    by_digest: dict[str, str] = {}
    by_identity: dict[str, list[_BillRow]] = {}
    keep: list[pd.DataFrame] = []
    duplicates: list[dict] = []
    read: dict[str, int] = {}
    digests: dict[str, str] = {}
    for frame in frames:
        if frame.empty:
            continue
        name = str(frame["file"].iloc[0])
        read[name] = read.get(name, 0) + len(frame)
        digest = bill_digest(frame)
        same = next((f for f, d in digests.items() if d == digest), "")
        digests[name] = digest
        mask, of = [], []
        # the stubs type a row's fields as any scalar; these columns are BILLING_COLUMNS
        for row in cast("Iterator[_BillRow]", frame.itertuples(index=False)):
            earlier = [r for r in by_identity.get(row.identity, ()) if r.file != row.file]
            twin = next((r for r in earlier if r.amounts == row.amounts), None)
            if row.digest in by_digest or twin is not None:
                mask.append(False)
                # a digest seen before maps to its file's (non-empty) name, so twin is
                # only read when it was found
                of.append(by_digest.get(row.digest) or str(cast(_BillRow, twin).file))
                continue
            if earlier:
                raise _conflict(row, earlier[0])
            by_identity.setdefault(row.identity, []).append(row)
            by_digest[row.digest] = str(row.file)
            mask.append(True)
        keep.append(frame[mask])
        if of:
            entry = {"file": name, "rows": len(of), "duplicate_of": sorted(set(of))}
            duplicates.append(entry | {"same_bill_as": same})
    rows = (
        pd.concat(keep, ignore_index=True) if keep else pd.DataFrame(columns=list(BILLING_COLUMNS))
    )
    return Bills(rows, read, duplicates, digests)


def read_focus_bills(paths: Sequence[str | Path]) -> Bills:
    """Read each export (:func:`~solver.inputs.importers.focus_billing.
    read_focus_billing`) and drop the rows passed twice (:func:`dedupe`)."""
    return dedupe([read_focus_billing(path) for path in paths])


__all__ = ["Bills", "bill_digest", "dedupe", "read_focus_bills"]
