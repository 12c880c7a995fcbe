"""``procure prices check`` as text and as JSON: the prices a plan rests on, ranked by the
money they put at risk (:mod:`solver.analyses.price_check`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from solver.analyses.price_check import CheckedPrice, PriceCheck

#: what the raised totals are, in words
REPRICING_WORDS = (
    "fixed-plan re-pricing: the plan's units x hours at the raised price, one price at a "
    "time, not re-solved (a re-solve could only cost the same or less)"
)


def _money(usd: float) -> str:
    return f"${usd:,.0f}"


def _source(text: str, width: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def price_check_text(check: PriceCheck, shown: Sequence[CheckedPrice]) -> str:
    """The check as a table, the ``shown`` prices (the top of the ranking) one per row."""
    out = [
        f"prices of {check.problem} (total {_money(check.total_cost_usd)}), ranked by money "
        f"at risk: {len(shown)} of {len(check.prices)}",
        f"if at the top of its band: {REPRICING_WORDS}",
    ]
    everything = f"every price at the top of its band at once: {_money(check.all_raised_total_usd)}"
    if check.budget_usd is not None:
        over = " (over the budget)" if check.all_raised_total_usd > check.budget_usd else ""
        everything += f"{over}; budget {_money(check.budget_usd)}"
    out.append(everything)
    header = (
        f"{'#':>2}  {'provider':12} {'offering':34} {'mode':11} {'confidence':11} "
        f"{'date':10} {'price/h':>10} {'band':>5} {'carried':>11} {'at risk':>10} "
        f"{'total if top':>12}  source"
    )
    out.append(header)
    for rank, p in enumerate(shown, start=1):
        flag = " over budget" if p.over_budget else ""
        out.append(
            f"{rank:>2}  {p.provider:12} {p.offering:34} {p.mode:11} "
            f"{p.confidence or 'unverified':11} {p.price_date or 'unknown':10} "
            f"{p.price_per_hour_in_currency:>6,.2f} {p.currency:3} {p.band_fraction:>5.0%} "
            f"{_money(p.carried_usd):>11} {_money(p.at_risk_usd):>10} "
            f"{_money(p.raised_total_usd):>12}{flag}  {_source(p.source)}"
        )
    if not check.prices:
        out.append("  (no plan line rests on a cloud offering's price)")
    for n in check.not_checked:
        out.append(
            f"not checked: {n.lines} {n.item} line(s), {_money(n.cost_usd)} (they rest on "
            "server, power or commitment prices, not a cloud offering's)"
        )
    return "\n".join(out)


def price_check_json(
    check: PriceCheck, shown: Sequence[CheckedPrice], written: Sequence[str]
) -> str:
    """The check as JSON: the plan's figures, the ``shown`` prices with their lines, the
    lines not checked, and the request files ``written``."""
    prices = []
    for p in shown:
        row = asdict(p)
        row["raised_price_usd_per_hour"] = p.raised_price_usd_per_hour
        row["to_confirm"] = p.to_confirm
        prices.append(row)
    data = {
        "problem": check.problem,
        "total_cost_usd": check.total_cost_usd,
        "budget_usd": check.budget_usd,
        "repricing": check.repricing,
        "repricing_note": REPRICING_WORDS,
        "prices_in_plan": len(check.prices),
        "all_raised_total_usd": check.all_raised_total_usd,
        "prices": prices,
        "not_checked": [asdict(n) for n in check.not_checked],
        "quote_requests": list(written),
    }
    return json.dumps(data, indent=2) + "\n"
