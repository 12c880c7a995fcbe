"""solver.outputs.files.workbook: the same sheets give the same bytes, and each data row's
cells carry their formats however long the sheet (rows are addressed, not searched)."""

from __future__ import annotations

import io
import zipfile

import openpyxl
import pandas as pd

from solver.outputs.files import USD_FORMAT, workbook


def _frame(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"offering": [f"o{i}" for i in range(n)], "cost_usd": [i + 0.25 for i in range(n)]}
    )


def test_the_workbook_is_dated_2000_whenever_it_is_written():
    # openpyxl dates the "modified" property and every zip part at the second of saving;
    # equal input must give equal bytes (the report is compared and hashed), so all are
    # 2000-01-01 00:00:00
    data = workbook({"lines": _frame(3)})
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert {info.date_time for info in archive.infolist()} == {(2000, 1, 1, 0, 0, 0)}
    book = openpyxl.load_workbook(io.BytesIO(data))
    assert book.properties.modified.year == 2000
    assert book.properties.created.year == 2000


def test_every_row_of_a_long_sheet_keeps_its_format_and_the_total_row_its_sum():
    # 1,200 rows: cost_usd i + 0.25 for i = 0..1199, in currency on every row; the total
    # row (after one blank row) is sum(i) + 1200 x 0.25 = 1199 x 1200 / 2 + 300 = 719,700
    n = 1200
    book = openpyxl.load_workbook(
        io.BytesIO(workbook({"lines": _frame(n)}, {"lines": ["cost_usd"]}))
    )
    sheet = book["lines"]
    assert [sheet.cell(row=r, column=2).number_format for r in (2, 600, n + 1)] == [USD_FORMAT] * 3
    assert sheet.cell(row=n + 1, column=2).value == n - 1 + 0.25
    assert sheet.cell(row=n + 3, column=1).value == "total"
    # a formula over every data row (a spreadsheet computes 719,700 on opening it)
    assert sheet.cell(row=n + 3, column=2).value == f"=ROUND(SUM(B2:B{n + 1}),2)"
