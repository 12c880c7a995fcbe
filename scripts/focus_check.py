"""Run the outside FOCUS checker (``focus-data-toolkit``'s ``validate``, the dev extra) on
a ``procure export --format focus`` folder, with its FOCUS 1.4-only rules for the two
columns FOCUS 1.3 still requires excluded, each exclusion cited.

``focus-toolkit validate`` lints against the FOCUS 1.4 model only, and 1.4 removed
``ProviderName`` and ``PublisherName``. FOCUS 1.3 deprecates both but keeps them
Mandatory: "ProviderName MUST be present in a Cost and Usage FOCUS dataset", "Deprecated
(version) 1.3 Replaced by ServiceProviderName", and the same words for PublisherName
(FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec, specification/datasets/cost_and_usage/
columns/providername.md and publishername.md, 1.3; the toolkit's own
``schema/registry.py`` REMOVED_COLUMNS records them as removed in 1.4). A 1.3 export
that left them out would break 1.3, so the checker's ``unknown_column`` finding on those
two columns, and only that finding on only those columns, is excluded here
(:data:`EXCLUDED`). The Contract Commitment dataset is new in 1.3 with 13 columns; 1.4
adds 16 more, 12 of them Mandatory (the toolkit's model records each column's
``version``, the version that introduced it). A 1.3 file cannot carry a column 1.3 does
not define, so a ``missing_mandatory_column`` finding on a column introduced after 1.3 is
excluded too, its reason naming the version the model gives (:func:`after_1_3`). Every
other finding counts. The excluded columns' 1.3 requirements (String, not null) are
tests/outputs/test_focus_1_3.py's.

Usage: ``python scripts/focus_check.py EXPORT_DIR``; prints each file's findings and
exits 0 when there are none, 1 otherwise, 2 when the folder holds no FOCUS file.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

#: (dataset, rule, column) -> why the finding is not an error in a FOCUS 1.3 file.
EXCLUDED: dict[tuple[str, str, str], str] = {
    ("Cost and Usage", "unknown_column", "ProviderName"): (
        "FOCUS 1.3 providername.md: 'ProviderName MUST be present in a Cost and Usage FOCUS "
        "dataset', deprecated in 1.3 (replaced by ServiceProviderName), removed in 1.4"
    ),
    ("Cost and Usage", "unknown_column", "PublisherName"): (
        "FOCUS 1.3 publishername.md: 'PublisherName MUST be present in a Cost and Usage "
        "FOCUS dataset', deprecated in 1.3, removed in 1.4"
    ),
}

#: export file name -> the FOCUS dataset it holds (solver/outputs/focus*.py).
FILES: dict[str, str] = {
    "focus.csv": "Cost and Usage",
    "focus-contract-commitment.csv": "Contract Commitment",
}


@dataclass(frozen=True)
class Finding:
    """One checker finding on one file: its message, and why it is excluded ('' if not)."""

    file: str
    message: str
    excluded_because: str


def after_1_3(dataset: str, rule: str, column: str) -> str:
    """Why a missing mandatory column is not a 1.3 error: the toolkit's model introduced it
    after FOCUS 1.3 ('' when it did not, or for any other rule)."""
    from focus_data_toolkit.model.validator import load_model

    if rule != "missing_mandatory_column":
        return ""
    spec = load_model()["datasets"].get(dataset, {}).get("columns", {}).get(column, {})
    major, minor = (int(x) for x in str(spec.get("version", "0.0")).split(".")[:2])
    if (major, minor) <= (1, 3):
        return ""
    return (
        f"{column} was introduced in FOCUS {spec['version']} (focus-data-toolkit's model, "
        "column version): not a FOCUS 1.3 column"
    )


def check(folder: Path) -> list[Finding]:
    """Every finding of the checker on the export folder's FOCUS files.

    Parameters
    ----------
    folder
        A ``procure export --format focus`` output folder.

    Returns
    -------
    list[Finding]
        One per violation the toolkit reports, excluded ones marked with their reason.
    """
    from focus_data_toolkit.io.row_source import read_source_rows
    from focus_data_toolkit.model.validator import lint_focus_1_4_structure

    out: list[Finding] = []
    for name, dataset in FILES.items():
        path = folder / name
        if not path.exists():
            continue
        report = lint_focus_1_4_structure(dataset, read_source_rows(path, dataset=dataset))
        for v, message in zip(report.violations, report.messages(), strict=True):
            key = (v.dataset, v.rule, v.column or "")
            why = EXCLUDED.get(key, "") or after_1_3(*key)
            out.append(Finding(name, message, why))
    return out


def errors(folder: Path) -> list[Finding]:
    """The findings that are not excluded (:data:`EXCLUDED`)."""
    return [f for f in check(folder) if not f.excluded_because]


def main(argv: list[str]) -> int:
    """Print the findings; exit 0 with none, 1 with some, 2 without a FOCUS file."""
    if len(argv) != 1:
        print("usage: python scripts/focus_check.py EXPORT_DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    present = [n for n in FILES if (folder / n).exists()]
    if not present:
        print(f"{folder}: no FOCUS file ({', '.join(FILES)}); fix: give the folder "
              "procure export --format focus wrote", file=sys.stderr)  # fmt: skip
        return 2
    found = check(folder)
    for f in found:
        tag = f"excluded ({f.excluded_because})" if f.excluded_because else "ERROR"
        print(f"{f.file}: {tag}: {f.message}")
    bad = [f for f in found if not f.excluded_because]
    print(f"{', '.join(present)}: {len(bad)} error(s), {len(found) - len(bad)} excluded")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
