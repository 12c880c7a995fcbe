"""The report's sweeps as tables and charts: the carbon frontier, the budget and demand
sweeps, each point with the gap it is proven to (``procure report --sweep-gap``).

Pure functions from sweep points (:class:`~solver.analyses.sensitivity.results.SweepPoint`)
to frames and PNG bytes; :mod:`solver.outputs.report` puts them in the HTML and XLSX.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pandas as pd

from solver.analyses.report_analysis import Analysis
from solver.analyses.sensitivity.results import SweepPoint
from solver.money import whole_usd


def within(gap: float | None) -> str:
    """A point's proven gap in words: "optimal" when it is proven to the solve's own
    default gap (0.01%) or closer, else "within 0.5%" (the gap rounded up, so the words
    never claim more than the proof)."""
    if gap is None:
        return "not proven"
    if gap <= 1e-4 * 1.0001:
        return "optimal"
    for digits in (1, 2):  # "within 0.5%", "within 0.13%"
        shown = round(gap * 100, digits)
        if shown >= gap * 100 * (1 - 1e-9) and shown > 0:  # float noise is no claim
            return f"within {shown:g}%"
    return f"within {gap * 100 + 0.01:.2f}%"


def plans_label(points: Sequence[SweepPoint]) -> str:
    """The chart's legend for a sweep's points: "optimal plans" when every point is proven
    to the solve's default gap, else "plans within X% of optimal" (the largest gap)."""
    gaps = [  # a point stored before points kept their gap: optimal, as its status says
        0.0 if p.gap is None and p.status == "optimal" else p.gap
        for p in points
        if p.total_cost_usd is not None
    ]
    if any(g is None for g in gaps):
        return "plans (some not proven)"
    worst = within(max(gaps, default=0.0))  # type: ignore[type-var]
    return "optimal plans" if worst == "optimal" else f"plans {worst} of optimal"


def sweep_frame(points: Sequence[SweepPoint]) -> pd.DataFrame:
    """Sweeps for finance: each point's value under its sweep's name (``budget_usd``,
    ``carbon_cap_tco2e``, ``demand_factor``), status, total cost, CO2e, the share of demand
    served, the pools used, the point's proven relative gap (a fraction: its plan is within
    it of the point's optimum) and, when the plan shown is a tighter point's
    (:mod:`solver.analyses.sensitivity.monotone`), that point's value. The solver's
    objective is left out: under ``max_served`` (the budget sweep) it is the shortfall
    penalty, not money (``analysis.json`` keeps it)."""
    return pd.DataFrame(
        [
            {
                "sweep": p.sweep,
                **{name: (p.value if name == p.sweep else None) for name in SWEEPS},
                "status": p.status,
                "total_cost_usd": p.total_cost_usd,
                "total_co2e_t": p.total_co2e_t,
                "served_fraction": p.served_fraction,
                "pools_used": "; ".join(p.used),
                "gap": p.gap,
                "plan_of": p.plan_of,
            }
            for p in points
        ]
    )


#: the sweeps' names (:class:`SweepPoint.sweep`), each with what its value is, in words
SWEEPS = {
    "budget_usd": "budget",
    "carbon_cap_tco2e": "CO2e cap, t",
    "demand_factor": "demand x today",
}


def sweep_table(points: Sequence[SweepPoint]) -> pd.DataFrame:
    """The report's table of a sweep, in words and currency: the value, total cost, share
    of demand served, CO2e, status, how close to its optimum the point is proven
    (:func:`within`) and pools used (no solver objective)."""

    def value(p: SweepPoint) -> str:
        if p.sweep == "budget_usd":
            return whole_usd(p.value)
        if p.sweep == "demand_factor":
            return f"{p.value:g} x"
        return f"{p.value:,.1f}"

    def proven(p: SweepPoint) -> str:
        if p.total_cost_usd is None:
            return "-"
        if p.gap is None and p.status == "optimal":  # stored before points kept their gap
            return "optimal"
        taken = (
            ""
            if p.plan_of is None
            else f" (the plan of {value(p.model_copy(update={'value': p.plan_of}))})"
        )
        return within(p.gap) + taken

    return pd.DataFrame(
        {
            SWEEPS.get(points[0].sweep, "value") if points else "value": [value(p) for p in points],
            "total cost": [whole_usd(p.total_cost_usd) for p in points],
            "demand served": [_pct(p.served_fraction, 1) for p in points],
            "CO2e, t": [_num(p.total_co2e_t, 1) for p in points],
            "status": [p.status for p in points],
            "proven": [proven(p) for p in points],
            "pools used": ["; ".join(p.used) for p in points],
        }
    )


def _pct(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:.{digits}%}"


def _num(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def frontier_png(analysis: Analysis) -> bytes:
    """The cost-versus-CO2e frontier and the budget and demand sweeps, as one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, PercentFormatter

    dollars = FuncFormatter(lambda v, _: f"${v:,.0f}")
    plan = analysis.plan
    panels = [
        ("carbon_frontier", "total CO2e, t", "total cost", "total_co2e_t", "total_cost_usd"),
        ("budget_sweep", "budget", "share of demand served", "value", "served_fraction"),
        ("demand_sweep", "demand x today", "total cost", "value", "total_cost_usd"),
    ]
    chosen = {  # where the chosen plan sits on each panel
        "carbon_frontier": (plan.total_co2e_t, plan.total_cost_usd),
        "budget_sweep": (plan.total_cost_usd, 1.0),
        "demand_sweep": (1.0, plan.total_cost_usd),
    }
    panels = [p for p in panels if getattr(analysis, p[0])]
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(5.2 * max(1, len(panels)), 4))
    axes = [axes] if not hasattr(axes, "__len__") else list(axes)
    for ax, (name, xlabel, ylabel, xcol, ycol) in zip(axes, panels, strict=False):
        pts = [p for p in getattr(analysis, name) if getattr(p, ycol) is not None]
        xs = [getattr(p, xcol) for p in pts]
        ys = [getattr(p, ycol) for p in pts]
        ax.plot(xs, ys, marker="o", label=plans_label(pts))
        ax.plot(
            *chosen[name],
            marker="*",
            markersize=14,
            color="#c00000",
            linestyle="",
            label="the chosen plan",
        )
        if name == "budget_sweep":
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v / 1e3:,.0f}k"))
            ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        else:
            ax.yaxis.set_major_formatter(dollars)
        if name == "budget_sweep" and analysis.budget_usd is not None:
            if analysis.budget_usd <= 1.5 * max(xs + [plan.total_cost_usd]):
                ax.axvline(analysis.budget_usd, color="#888", linestyle="--", label="budget")
            else:
                ax.set_title(
                    f"budget sweep (budget {whole_usd(analysis.budget_usd)} is off the chart)"
                )
        elif analysis.budget_usd is not None and ycol == "total_cost_usd":
            if analysis.budget_usd <= 1.5 * max(ys + [plan.total_cost_usd]):
                ax.axhline(analysis.budget_usd, color="#888", linestyle="--", label="budget")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(name.replace("_", " "))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{analysis.plan.problem}: frontiers")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


def sweep_note(analysis: Analysis) -> str:
    """The report's note over its sweeps: the gap each point is proven to, the largest
    any point has, and the monotone repair (docs/concepts/sensitivity.md, "Sweeps")."""
    points = [
        p
        for p in (
            *analysis.carbon_frontier,
            *analysis.budget_sweep,
            *analysis.demand_sweep,
            *analysis.scenario_points,
        )
        if p.total_cost_usd is not None
    ]
    if not points:
        return "No sweep point has a plan."
    gaps = [p.gap for p in points if p.gap is not None]
    worst = within(max(gaps)) if gaps else "not proven"
    asked = analysis.sweep_gap
    if asked is None or asked <= 1e-4 * 1.0001:
        head = "Every point below is a re-solve proven optimal (to the solve's default gap, 0.01%)"
    else:
        head = (
            f"Every point below and every price scenario is a re-solve proven {within(asked)} "
            f"of its own optimum (--sweep-gap {asked:g}; the plan itself is proven to "
            f"0.01%): a point's objective (its cost as the solve counts it) is at most "
            f"that much above the best plan's there. "
            + (
                "Each closed to 0.01% or better"
                if worst == "optimal"
                else f"The largest gap proven is {worst.removeprefix('within ')}"
            )
        )
    taken = sum(p.plan_of is not None for p in points)
    repair = (
        f"; {taken} point{'s' if taken != 1 else ''} show{'' if taken != 1 else 's'} a "
        "tighter limit's plan, better there than its own solve found"
        if taken
        else ""
    )
    return (
        f"{head}{repair}. A looser CO2e cap never shows a higher cost than a tighter cap's "
        "plan, and more budget never serves less: each such plan is a plan of the looser "
        "point too, and is shown there when it is better."
    )
