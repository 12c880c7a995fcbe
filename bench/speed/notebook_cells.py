"""Wall time of every notebook cell, executed as nbmake runs them (one kernel per notebook).

Run: python bench/speed/notebook_cells.py [notebooks/01-sizing-the-seed.ipynb ...]
Prints each code cell's seconds and its first line, then each notebook's slowest cell;
exits 1 if a cell raised. nbmake's per-cell timeout is 300 s; the suite's target is
every cell under 60 s on this 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]


def time_cells(path: Path) -> list[tuple[int, float, str]]:
    """(cell index, seconds, first source line) for each code cell of one notebook."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(path.parent)}})
    out = []
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            started = time.perf_counter()
            client.execute_cell(cell, index)
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            out.append((index, time.perf_counter() - started, first[:70]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    status = 0
    summary = []
    for path in paths:
        print(f"{path.name}:", flush=True)
        try:
            cells = time_cells(path)
        except Exception as exc:  # a cell raised: report it and go on
            print(f"  FAILED: {type(exc).__name__}: {str(exc)[:300]}")
            status = 1
            continue
        for index, seconds, first in cells:
            print(f"  cell {index:2d} {seconds:7.1f} s  {first}", flush=True)
        slowest = max(cells, key=lambda c: c[1])
        total = sum(c[1] for c in cells)
        summary.append((path.name, total, slowest[1], slowest[0]))
    for name, total, worst, index in summary:
        print(f"{name}: {total:.1f} s in all, slowest cell {index} at {worst:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
