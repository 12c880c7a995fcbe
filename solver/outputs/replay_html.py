"""The replay beside the plan, as an HTML section (``procure report`` and the workspace's
plan page): per workload, each load block with all units and with one unit lost, the plan's
limits and load beside the replayed TTFT, TPOT and utilisation, and the verdict."""

from __future__ import annotations

import math
from html import escape

from solver.analyses.replay import ReplayResult, ReplayRow

HEADER = (
    "period / block",
    "case",
    "units",
    "requests",
    "TTFT p50 / p90 / p99 (ms)",
    "TPOT p50 / p90 / p99 (ms)",
    "late (%)",
    "plan's load (%)",
    "replayed batch / plan's (%)",
    "verdict",
)


def _ms(seconds: float) -> str:
    return "never" if not math.isfinite(seconds) else f"{seconds * 1000:,.0f}"


def _three(p50_s: float, p90_s: float, p99_s: float) -> str:
    return " / ".join(_ms(v) for v in (p50_s, p90_s, p99_s))


def _row(r: ReplayRow) -> str:
    late = 100 * max(r.ttft_late_share, r.tpot_late_share)
    verdict = "meets" if r.meets_slo else "MISSES"
    if r.pool_role:  # a disaggregated deployment's pool under its block: no verdict of its own
        verdict = ""
    cells = (
        f"  {r.deployment}" if r.pool_role else f"{r.period} {r.block}",
        r.case,
        f"{r.units}",
        f"{r.requests:,}",
        _three(r.ttft.p50_s, r.ttft.p90_s, r.ttft.p99_s),
        _three(r.tpot.p50_s, r.tpot.p90_s, r.tpot.p99_s),
        f"{late:.1f}",
        f"{100 * r.planned_utilisation:.0f}",
        f"{100 * r.utilisation:.0f}",
        verdict,
    )
    cls = "pool" if r.pool_role else "meets" if r.meets_slo else "misses"
    return f'<tr class="{cls}">' + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>"


def replay_section_html(result: ReplayResult | None, note: str = "") -> str:
    """The section: a sentence of verdict and a table per online workload (blocks, and
    under a block the prefill and decode pools of a disaggregated deployment; the other
    per-deployment lines are in ``procure replay``'s own output). ``result`` None: the
    ``note`` alone (why there is no replay)."""
    out = ['<section id="replay"><h2>Replay against traffic</h2>']
    if result is None:
        return out[0] + f'<p class="note">{escape(note)}</p></section>'
    blocks = [r for r in result.rows if not r.deployment]
    misses = [r for r in blocks if not r.meets_slo]
    lost = any(r.case == "N+1 lost" for r in blocks)
    verdict = (
        "Every block meets its limits" + (", with one unit lost too" if lost else "")
        if not misses
        else f"{len(misses)} of {len(blocks)} block cases miss a limit at their percentile"
    )
    out.append(
        f'<p id="replay-verdict"><b>{escape(verdict)}</b>: {result.requests_simulated:,} '
        f"requests replayed ({escape(result.source)}; seed {result.seed}) on the plan's "
        "fleets, each block at its worst hour, with all units and with the largest unit lost "
        "(<code>procure replay</code>).</p>"
    )
    for workload in dict.fromkeys(r.workload for r in blocks):
        rows = [r for r in blocks if r.workload == workload]
        first = rows[0]
        sized = "the mean" if first.plan_percentile is None else f"p{100 * first.plan_percentile:g}"
        out.append(
            f"<h3>{escape(workload)}</h3><p>Limits TTFT {_ms(first.ttft_slo_s)} ms and TPOT "
            f"{_ms(first.tpot_slo_s)} ms, judged at p{100 * first.slo_percentile:g}; the plan "
            f"was sized at {escape(sized)}.</p>"
        )
        head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
        pools = [r for r in result.rows if r.pool_role and r.workload == workload]
        body = "".join(
            _row(r)
            + "".join(
                _row(q) for q in pools if (q.period, q.block, q.case) == (r.period, r.block, r.case)
            )
            for r in rows
        )
        out.append(
            f'<table class="replay"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        )
    out.append(
        "<p class=\"note\">late: requests over a limit; plan's load: the block's demand over "
        "the plan's capacity; replayed batch: the mean running batch over the plan's "
        f"batch. {escape(note)}</p></section>"
    )
    return "".join(out)
