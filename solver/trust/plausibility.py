"""Values that are legal but implausible for what they describe.

A problem file can be valid and still not say what its author meant: ``tpot_slo: 2 s``
on a chat service (seconds per token, where chat streams in tens of milliseconds: "2 s"
was probably meant for the time to first token, or "200 ms"), or a growth factor of 150
(probably 1.5, or 150 %). The plan is solved as written; each such value becomes a
``implausible_value`` warning on it (:class:`solver.plan.warnings.PlanWarning`).

Bounds and their sources (catalogs/SOURCES.md, "Plausibility bounds"):

- ``tpot_slo`` above 1 s per output token: five times the loosest published serving
  bound, MLPerf Inference's server scenario for Llama 2 70B (TPOT p99 <= 200 ms, TTFT p99
  <= 2 s; MLCommons inference rules, https://github.com/mlcommons/inference_policies
  /blob/master/inference_rules.adoc, "Llama2-70B" latency constraints), and slower than
  people read (1 token/s against ~4 words/s silent reading, Brysbaert 2019, "How many
  words do we read per minute?", J. Memory and Language 109, 104047).
- ``ttft_slo`` above 60 s: thirty times the same MLPerf server bound (2 s).
- ``demand_by_period`` (growth) above 10x the base demand: more than twice the growth of
  the fastest-growing consumer service on record over its comparable stretch (ChatGPT,
  100M weekly users in Nov 2023 to 400M in Feb 2025, 4x in 15 months: OpenAI's figures,
  https://techcrunch.com/2025/02/20/chatgpt-doubled-its-weekly-active-users-in-under-6-months-thanks-to-new-releases/).
"""

from __future__ import annotations

from solver.inputs.problem import InferenceWorkload, Problem
from solver.plan.warnings import PlanWarning

#: above this an online workload's time per output token is implausible, s (module docstring)
TPOT_IMPLAUSIBLE_S = 1.0
#: above this an online workload's time to first token is implausible, s
TTFT_IMPLAUSIBLE_S = 60.0
#: above this a period's demand multiple (growth) is implausible
GROWTH_IMPLAUSIBLE = 10.0


def implausible_values(problem: Problem) -> list[PlanWarning]:
    """One ``implausible_value`` warning per implausible SLO or growth factor."""
    out: list[PlanWarning] = []
    for i, w in enumerate(problem.workloads):
        if not isinstance(w, InferenceWorkload):
            continue
        where = f"workloads[{i}] ({w.name})"
        if w.tpot_slo_s > TPOT_IMPLAUSIBLE_S:
            out.append(
                PlanWarning(
                    kind="implausible_value",
                    field=f"{where}.tpot_slo",
                    detail=f"tpot_slo {w.tpot_slo!r} allows {w.tpot_slo_s:g} s per output token "
                    f"on an online service, slower than people read; published serving bounds "
                    f"are 200 ms or less (MLPerf server scenario): did you mean ms, or the "
                    "time to first token (ttft_slo)?",
                )
            )
        if w.ttft_slo_s > TTFT_IMPLAUSIBLE_S:
            out.append(
                PlanWarning(
                    kind="implausible_value",
                    field=f"{where}.ttft_slo",
                    detail=f"ttft_slo {w.ttft_slo!r} lets an online request wait "
                    f"{w.ttft_slo_s:g} s for its first token (published serving bounds: 2 s "
                    "or less, MLPerf server scenario): did you mean ms, or a batch_inference "
                    "workload?",
                )
            )
        for period, factor in w.demand_by_period.items():
            if factor > GROWTH_IMPLAUSIBLE:
                out.append(
                    PlanWarning(
                        kind="implausible_value",
                        field=f"{where}.demand_by_period.{period}",
                        detail=f"demand in period {period!r} is {factor:g}x the base demand "
                        f"(more than {GROWTH_IMPLAUSIBLE:g}x: ChatGPT grew 4x in 15 months): "
                        f"did you mean {factor / 100:g} ({factor:g} %) or a smaller factor?",
                    )
                )
    return out
