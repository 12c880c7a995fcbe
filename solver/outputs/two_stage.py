"""The report's "Commit now, adapt later" section for a problem with uncertainty: the
two-stage plan's costs per scenario, their distribution, what the commitments buy in
words, its chart and its HTML, and the workbook's summary rows.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from solver.analyses.stochastic import StochasticPlan
from solver.money import whole_usd
from solver.outputs.html_tables import table_html


def _weighted(probs: Sequence[float], values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    if len(known) < len(values):
        return None
    return float(sum(p * v for p, v in zip(probs, known, strict=True)))


def two_stage_frame(sp: StochasticPlan) -> pd.DataFrame:
    """Per scenario: the cost of the two-stage plan, of the deterministic (EV) plan's
    commitments and of no new commitments (everything rented), rentals re-planned in each
    scenario, and with hindsight; what the commitments save against renting everything
    and against the deterministic commitments (negative: what they cost). The last row,
    ``expected``, weighs each column by the scenarios' probabilities (empty where some
    scenario has no feasible plan)."""
    rows: list[dict[str, Any]] = [
        {
            "scenario": o.name,
            "probability": o.probability,
            "two_stage_plan_usd": o.total_cost_usd,
            "deterministic_plan_usd": o.deterministic_cost_usd,
            "all_rented_usd": o.all_rented_cost_usd,
            "hindsight_usd": o.hindsight_cost_usd,
            "saved_vs_all_rented_usd": o.saved_vs_all_rented_usd,
            "saved_vs_deterministic_usd": None
            if o.deterministic_cost_usd is None
            else o.deterministic_cost_usd - o.total_cost_usd,
        }
        for o in sp.scenarios
    ]
    probs = [r["probability"] for r in rows]
    expected: dict[str, Any] = {"scenario": "expected", "probability": float(sum(probs))}
    for col in list(rows[0])[2:]:
        expected[col] = _weighted(probs, [r[col] for r in rows])
    return pd.DataFrame([*rows, expected])


def two_stage_distribution(sp: StochasticPlan) -> pd.DataFrame:
    """The two-stage plan's cost, scenarios from cheapest to dearest, with the probability
    that the cost is at most that much."""
    frame = pd.DataFrame(
        {
            "scenario": [o.name for o in sp.scenarios],
            "probability": [o.probability for o in sp.scenarios],
            "total_cost_usd": [o.total_cost_usd for o in sp.scenarios],
        }
    ).sort_values(["total_cost_usd", "scenario"], kind="stable")
    frame["cumulative_probability"] = frame["probability"].cumsum().clip(upper=1.0)
    return frame.reset_index(drop=True)


def two_stage_sentences(sp: StochasticPlan) -> list[str]:
    """What the commitments buy in the bad scenarios and cost in the good ones, in words."""
    saved = [(v, o) for o in sp.scenarios if (v := o.saved_vs_all_rented_usd) is not None]
    gain = sorted([(v, o) for v, o in saved if v > 0.005], key=lambda x: -x[0])
    loss = sorted([(v, o) for v, o in saved if v < -0.005], key=lambda x: x[0])
    out = []
    if gain:
        out.append(
            f"Against renting everything, the commitments save money in {len(gain)} of the "
            f"{len(sp.scenarios)} scenarios (probability {sum(o.probability for _, o in gain):.0%}"
            f"), up to {whole_usd(gain[0][0])} in {gain[0][1].name!r}."
        )
    if loss:
        out.append(
            f"They cost more than renting in {len(loss)} scenario{'s' * (len(loss) > 1)} "
            "(probability "
            f"{sum(o.probability for _, o in loss):.0%}), up to {whole_usd(-loss[0][0])} in "
            f"{loss[0][1].name!r}: the premium paid for that insurance."
        )
    if not sp.commitments:
        out.append("No commitments: renting as the future comes is cheapest in expectation.")
    if sp.all_rented_expected_cost_usd is not None:
        out.append(
            f"In expectation the plan costs {whole_usd(sp.expected_cost_usd)} against "
            f"{whole_usd(sp.all_rented_expected_cost_usd)} with everything rented: the commitments "
            f"save {whole_usd(sp.all_rented_expected_cost_usd - sp.expected_cost_usd)}."
        )
    if sp.value_of_stochastic_solution_usd is not None:
        out.append(
            f"Planning for the scenarios rather than for the average is worth "
            f"{whole_usd(sp.value_of_stochastic_solution_usd)} (VSS): the deterministic plan's "
            f"commitments cost {whole_usd(sp.deterministic_expected_cost_usd)} in expectation."
        )
    if sp.risk_weight is not None:
        assert sp.cvar_level is not None  # a risk weight comes with its CVaR level
        out.append(
            f"The plan minimises expected cost + {sp.risk_weight:g} x CVaR at "
            f"{sp.cvar_level:.0%} (the mean cost of the worst {1 - sp.cvar_level:.0%} of "
            f"scenarios): CVaR {whole_usd(sp.cvar_usd)}, objective {whole_usd(sp.objective_usd)}."
        )
    out.append(
        "Knowing the future would be worth "
        f"{whole_usd(sp.expected_value_of_perfect_information_usd)} (EVPI): with hindsight "
        f"every scenario would cost {whole_usd(sp.wait_and_see_usd)} in expectation."
    )
    return out


def two_stage_png(sp: StochasticPlan) -> bytes:
    """The cost distribution of the two-stage plan, the deterministic plan's commitments and
    everything rented: the probability that the cost is at most $x, one step per scenario."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, PercentFormatter

    probs = np.array([o.probability for o in sp.scenarios])
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for field, label in (
        ("total_cost_usd", "two-stage plan"),
        ("deterministic_cost_usd", "deterministic plan's commitments"),
        ("all_rented_cost_usd", "everything rented"),
    ):
        costs = [getattr(o, field) for o in sp.scenarios]
        if any(c is None for c in costs):
            continue
        order = np.argsort(costs, kind="stable")
        xs = np.array(costs, dtype=float)[order]
        (line,) = ax.step(
            np.r_[xs[0], xs], np.r_[0.0, np.cumsum(probs[order])], where="post", label=label
        )
        ax.plot(xs, np.cumsum(probs[order]), "o", color=line.get_color())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:,.0f}"))
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("total cost in a scenario")
    ax.set_ylabel("probability cost is at most")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


def two_stage_html(sp: StochasticPlan | None) -> str:
    """The report's "Commit now, adapt later" section (template ``two_stage.html.j2``);
    empty without uncertainty."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    if sp is None:
        return ""
    money = [c for c in two_stage_frame(sp).columns if c.endswith("whole_usd")]
    env = Environment(
        loader=PackageLoader("solver.outputs", "templates"), autoescape=select_autoescape(["j2"])
    )
    line = "{} {:g} x {} ({}) in {}"
    return env.get_template("two_stage.html.j2").render(
        sp=sp,
        usd=whole_usd,
        commitments=[
            line.format(i.item, i.units, i.offering, i.mode, i.period) for i in sp.commitments
        ],
        deterministic=[
            line.format(i.item, i.units, i.offering, i.mode, i.period)
            for i in sp.deterministic_commitments
        ],
        sentences=two_stage_sentences(sp),
        table=table_html(two_stage_frame(sp), money=money),
        distribution=table_html(two_stage_distribution(sp), money=["total_cost_usd"]),
        png=base64.b64encode(two_stage_png(sp)).decode("ascii"),
    )


def two_stage_summary_rows(sp: StochasticPlan) -> list[tuple[str, float | None]]:
    """The workbook summary's two-stage figures."""
    return [
        ("two-stage: expected cost (USD)", sp.expected_cost_usd),
        ("two-stage: deterministic plan's commitments, expected (USD)",
         sp.deterministic_expected_cost_usd),
        ("two-stage: everything rented, expected (USD)", sp.all_rented_expected_cost_usd),
        ("two-stage: value of the stochastic solution (USD)", sp.value_of_stochastic_solution_usd),
        ("two-stage: expected value of perfect information (USD)",
         sp.expected_value_of_perfect_information_usd),
        ("two-stage: cost p5 (USD)", sp.cost_percentiles_usd["p5"]),
        ("two-stage: cost median (USD)", sp.cost_percentiles_usd["p50"]),
        ("two-stage: cost p95 (USD)", sp.cost_percentiles_usd["p95"]),
        (f"two-stage: worst case, {sp.worst_scenario} (USD)", sp.worst_case_usd),
    ] + ([] if sp.risk_weight is None else [
        (f"two-stage: CVaR at {sp.cvar_level:g} (USD)", sp.cvar_usd),
        (f"two-stage: objective, expected + {sp.risk_weight:g} x CVaR (USD)", sp.objective_usd),
    ])  # fmt: skip
