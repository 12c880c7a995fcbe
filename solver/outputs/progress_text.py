"""A running MIP's progress in words (the CLI's progress line, a workspace job's stage)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from solver.core.backends.progress import MipProgress


def _amount(value: float, unit: str) -> str:
    """``$1,234,567`` for a cost in USD, ``3.00 plans reused`` for a count."""
    return f"${value:,.0f}" if unit == "USD" else f"{value:,.2f} {unit}"


def mip_progress_text(progress: MipProgress) -> str:
    """E.g. ``incumbent $1,234,567, bound $1,230,000, gap 0.37%, 12 s`` (a cost), or
    ``incumbent 3.00 plans reused, ...`` (the alternatives' search)."""
    parts = [
        "no plan yet"
        if progress.incumbent is None
        else f"incumbent {_amount(progress.incumbent, progress.unit)}",
    ]
    if progress.bound is not None:
        parts.append(f"bound {_amount(progress.bound, progress.unit)}")
    if progress.gap is not None:
        parts.append(f"gap {100 * progress.gap:.2f}%")
    elapsed = f"{progress.elapsed_s:.0f} s"
    if progress.time_limit_s is not None:
        left = max(0.0, progress.time_limit_s - progress.elapsed_s)
        elapsed += f" (at most {left:.0f} s left of its {progress.time_limit_s:.0f} s)"
    parts.append(elapsed)
    return ", ".join(parts)
