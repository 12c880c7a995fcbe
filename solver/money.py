"""Amounts of money as people read them: ``$1,234.50``, the one USD formatter.

Every output that writes an amount in words (tables, notes, messages) formats it here, so
one amount reads the same everywhere: the sign before the dollar sign (``-$12.00``, never
``$-12.00``), thousands separated by commas, cents or whole dollars, and an amount that
rounds to zero never shown as negative. Prices per unit (``$2.5/h``, ``$0.02/GB``) keep the
significant digits of their source and are not formatted here.
"""

from __future__ import annotations


def usd(
    amount_usd: float | None,
    *,
    cents: bool = True,
    signed: bool = False,
    missing: str = "n/a",
) -> str:
    """An amount in USD as text.

    Parameters
    ----------
    amount_usd
        The amount (USD); None or NaN is shown as ``missing``.
    cents
        Two decimals (``$1,234.50``) or whole dollars (``$1,235``).
    signed
        Mark every amount as a change: ``+$5.00``, ``-$5.00``, and ``+$0.00`` for one that
        rounds to zero. Unsigned, only a negative amount has a sign.
    missing
        The text for an amount that is not there.

    Returns
    -------
    str
        The amount rounded to the cent (or dollar), with its sign first.
    """
    if amount_usd is None or amount_usd != amount_usd:
        return missing
    digits = 2 if cents else 0
    rounded = round(amount_usd, digits)
    text = f"${abs(rounded):,.{digits}f}"
    if rounded < 0:
        return "-" + text
    return ("+" + text) if signed else text


def whole_usd(amount_usd: float | None) -> str:
    """An amount in whole dollars (``$1,235``; ``n/a`` when missing): the report's and the
    workspace pages' amounts."""
    return usd(amount_usd, cents=False)
