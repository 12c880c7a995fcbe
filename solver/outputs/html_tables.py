"""Money and tables in HTML for the report and the workspace's pages: whole dollars, and a
frame as an HTML table with its money and percent columns formatted.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from solver.money import whole_usd


def table_html(frame: pd.DataFrame, money: Sequence[str] = (), percent: Sequence[str] = ()) -> str:
    """A frame as an HTML table: ``money`` columns in whole dollars, ``percent`` columns
    (fractions) in percent, other floats to 4 significant digits."""
    if frame.empty:
        return "<p><em>none</em></p>"
    shown = frame.copy()
    for col in money:
        if col in shown:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else whole_usd(v))
    for col in percent:
        if col in shown:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
    for col in shown.columns:
        if col not in money and col not in percent and pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:,.4g}")
    return shown.to_html(index=False, escape=True, border=0, classes="t", na_rep="")
