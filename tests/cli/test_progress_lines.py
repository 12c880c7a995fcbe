"""Progress as a command runs (issue 50): a stage's time left, and a running MIP's
incumbent, bound and gap from HiGHS's MIP callbacks (solver/core/backends/progress.py)."""

from __future__ import annotations

import pytest

from conftest import H1, L4, problem, serve
from solver.cli.common import PROGRESS_EVERY_S, Stages, time_left_estimate
from solver.core.backends import SolveOptions
from solver.core.backends.progress import MipProgress, mip_progress
from solver.core.compile import compile_problem
from solver.core.model import build_model
from solver.outputs.progress_text import mip_progress_text
from solver.solve import optimise


def test_time_left_is_the_mean_step_times_the_steps_left():
    # 4 of 7 steps in 12 s: 3 s a step, 3 steps left = 9 s
    assert time_left_estimate(12.0, 4, 7) == pytest.approx(9.0)
    assert time_left_estimate(12.0, 0, 7) is None  # no step yet: no estimate
    assert time_left_estimate(12.0, 7, 7) == 0.0


def test_a_mips_line_once_it_has_run_past_the_period(capsys):
    with Stages(quiet=False) as stages:  # stderr captured: not a terminal, plain lines
        early = MipProgress(416_419.0, 402_027.0, 0.0346, 1.0, None)
        stages.mip(early)  # 1 s in: no line yet (a quick MIP prints nothing)
        late = MipProgress(416_419.0, 414_006.0, 0.0058, PROGRESS_EVERY_S + 1.0, 60.0)
        stages.mip(late)
    err = capsys.readouterr().err
    # gap (416,419 - 414,006) / 416,419 = 0.58%; 60 - 6 = 54 s left of the solve's limit
    assert err == (
        "procure: MIP: incumbent $416,419, bound $414,006, gap 0.58%, 6 s "
        "(at most 54 s left of its 60 s)\n"
    )


def test_quiet_stages_listen_to_no_mip(capsys):
    with Stages(quiet=True) as stages:
        stages.mip(MipProgress(1.0, 1.0, 0.0, 100.0, None))
        stages("break-even prices", 1, 2)
    assert capsys.readouterr().err == ""


def test_highs_reports_a_real_mips_incumbent_and_bound(tiny_catalog):
    # the tiny world of test_break_even_periods (N+1, 25 requests/s): its optimum is
    # 14 L4 at $1/h over 730 h = $10,220; the last look has that plan and a bound at most it
    p = problem([serve(25, redundancy="n_plus_1")])
    compiled = compile_problem(p, tiny_catalog([H1, L4]))
    seen: list[MipProgress] = []
    with mip_progress(seen.append, every_s=0.0):
        sol = optimise(compiled, build_model(compiled), solver="highspy", options=SolveOptions())
    assert sol.result.objective == pytest.approx(14 * 730.0, rel=1e-9)
    with_plan = [s for s in seen if s.incumbent is not None]
    assert with_plan, seen
    last = with_plan[-1]
    assert last.incumbent == pytest.approx(14 * 730.0, rel=1e-9)
    assert last.bound is None or last.bound <= last.incumbent * (1 + 1e-9)
    assert all(s.elapsed_s >= 0 and s.time_limit_s is None for s in seen)


def test_a_count_objective_is_not_shown_as_money():
    # the alternatives' search minimises how many earlier plans reuse its providers (plus
    # a cost term scaled below 1e-3): 2 reused, bound 1, gap (2 - 1) / 2 = 50%
    line = mip_progress_text(MipProgress(2.0, 1.0, 0.5, 3.0, None, unit="plans reused"))
    assert line == "incumbent 2.00 plans reused, bound 1.00 plans reused, gap 50.00%, 3 s"
    assert "$" not in line


def test_highs_reports_in_the_models_objective_unit(tiny_catalog):
    # the tiny world above, its model marked as counting something else (procure
    # alternatives marks its searches "plans reused"): every look says so, same figures
    from dataclasses import replace

    from solver.core.backends import get_backend

    p = problem([serve(25, redundancy="n_plus_1")])
    compiled = compile_problem(p, tiny_catalog([H1, L4]))
    model = replace(build_model(compiled), objective_unit="plans reused")
    seen: list[MipProgress] = []
    with mip_progress(seen.append, every_s=0.0):
        get_backend("highspy").solve(model, SolveOptions())
    assert seen and {s.unit for s in seen} == {"plans reused"}
    assert [s.incumbent for s in seen if s.incumbent is not None][-1] == pytest.approx(
        14 * 730.0, rel=1e-9
    )
