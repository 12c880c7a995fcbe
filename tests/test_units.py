"""The fixed vocabulary in solver/units.py: line kinds and modes as StrEnums, the mode
tuples derived from them, and the words plans carry unchanged."""

from __future__ import annotations

import json
import typing

from solver.inputs import problem
from solver.plan.lines import LineItem
from solver.units import CLOUD_MODES, PRICE_COLUMN, RENTED_MODES, RESERVED_TERM_MONTHS, Item, Mode


def test_modes_derived_from_the_enum():
    assert CLOUD_MODES == ("on_demand", "spot", "reserved_1y", "reserved_3y")
    assert set(RENTED_MODES) | set(RESERVED_TERM_MONTHS) == set(Mode) - {Mode.OWNED}
    assert PRICE_COLUMN["spot"] == "spot_usd_per_hour"
    # plain strings in the tuples: tables and plans hold the words, never members
    assert all(type(mode) is str for mode in (*CLOUD_MODES, *PRICE_COLUMN))


def test_problem_modes_are_the_enum():
    # the problem's pydantic Literal (its JSON schema) names exactly the enum's modes
    assert set(typing.get_args(problem.Mode)) == {m.value for m in Mode}


def test_line_item_keeps_the_plain_word():
    item = LineItem(
        item=Item.RESERVATION,
        period="p",
        provider="aws",
        region="r",
        offering="o",
        accelerator="a",
        mode=Mode.RESERVED_1Y,
        units=1.0,
        accelerators=1.0,
        hours=1.0,
        cost_usd=1.0,
        co2e_t=0.0,
    )
    assert type(item.item) is str and item.item == Item.RESERVATION
    dumped = json.loads(item.model_dump_json())
    assert (dumped["item"], dumped["mode"]) == ("reservation", "reserved_1y")
    assert json.dumps(Item.USE) == '"use"' and f"{Mode.SPOT}" == "spot"
    described = LineItem.model_fields["item"].description
    assert described == " | ".join(Item)


def test_solver_names_are_the_backends_registry():
    from solver.core.backends import BACKENDS
    from solver.units import DEFAULT_SOLVER, SOLVERS, WARM_SOLVER

    assert SOLVERS == tuple(BACKENDS)
    assert {DEFAULT_SOLVER, WARM_SOLVER} <= set(SOLVERS)


def test_every_solver_name_says_what_it_is():
    # the two HiGHS names are the ones a reader confuses: the help of --solver (solve's,
    # here) says which is which, and every name has its words
    import re

    from typer.testing import CliRunner

    from solver.cli import app
    from solver.units import SOLVER_HELP, SOLVER_MEANINGS, SOLVERS

    assert set(SOLVER_MEANINGS) == set(SOLVERS)
    assert "highspy = HiGHS direct (default)" in SOLVER_HELP
    assert "highs = HiGHS through PuLP" in SOLVER_HELP
    out = CliRunner().invoke(app, ["solve", "--help"], env={"COLUMNS": "400"}).output
    words = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())
    assert "highs = HiGHS through PuLP" in words
    assert "highspy = HiGHS direct (default)" in words
