"""Rule 2 by size class (solver/core/dominance.py ``_dominated``, ``_stand_ins``) and the
fixpoint that looks again only at changed demand rows drop exactly the columns that the
pairwise matrix over every stand-in (``_dominance_pairwise``) and a fixpoint that looks
at every row each round drop, on random rows built to hit ties: few sizes, prices equal
or within the 1e-9 tolerance of each other, CO2e equal or zero."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.core import dominance

SIZES = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0]
#: price nudges: equal, inside the pairwise tolerance (1e-9), just outside it, and
#: around the size-class margin (MARGIN = 1e-8)
NUDGES = [1.0, 1.0 + 5e-10, 1.0 - 5e-10, 1.0 + 2e-9, 1.0 + 1e-8, 1.0 + 3e-8, 1.0 - 2e-8]


@st.composite
def demand_row(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """One demand row's columns, sorted as ``_columns`` sorts them (price, then size,
    largest first): size (counted at most the demand), price, CO2e, alive, room."""
    n = draw(st.integers(1, 40))
    demand = draw(st.sampled_from([0.0, 5.0, 8.0]))
    cap = np.array(draw(st.lists(st.sampled_from(SIZES), min_size=n, max_size=n)))
    base = np.array(draw(st.lists(st.integers(1, 12), min_size=n, max_size=n)), float)
    nudge = np.array(draw(st.lists(st.sampled_from(NUDGES), min_size=n, max_size=n)))
    price = base * nudge
    carbon = draw(st.booleans())
    co2 = (
        np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), float)
        if carbon
        else np.zeros(n)
    )
    mostly = st.sampled_from([True, True, True, False])  # enough stand-ins to reduce (> 8)
    alive = np.array(draw(st.lists(mostly, min_size=n, max_size=n)))
    room = np.array(draw(st.lists(mostly, min_size=n, max_size=n)))
    order = np.lexsort((-cap, price))
    size = dominance.served_capacity(cap[order], np.full(n, demand))
    return size, price[order], co2[order], alive[order], room[order]


@settings(max_examples=400, deadline=None)
@given(demand_row(), st.booleans())
def test_size_classes_drop_what_the_pairwise_matrix_drops(row, whole_multiples):
    size, price, co2, alive, room = row
    _, mask = dominance._dominance_pairwise(size, price, co2, alive, room, whole_multiples)
    expected = alive & mask.any(axis=0)
    got = alive & dominance._dominated(size, price, co2, alive, room, whole_multiples)
    assert got.tolist() == expected.tolist()


def test_stand_ins_keep_one_per_size_and_its_near_ties():
    # Sizes 4, 4, 4, 8, 8 at $1, $1 + 5e-10 (within the tolerance: kept), $2, $3, $3:
    # size 4 keeps positions 0 and 1 ($2 is more than 1e-8 above $1), size 8 keeps both $3.
    size = np.array([4.0, 4.0, 4.0, 8.0, 8.0])
    price = np.array([1.0, 1.0 + 5e-10, 2.0, 3.0, 3.0])
    by = dominance._stand_ins(size, price, np.zeros(5), np.arange(5))
    assert by.tolist() == [0, 1, 3, 4]
    # With CO2e: the $2 unit of size 4 emits less (1 kg against 2) and stays.
    co2 = np.array([2.0, 2.0, 1.0, 1.0, 1.0])
    assert dominance._stand_ins(size, price, co2, np.arange(5)).tolist() == [0, 1, 2, 3, 4]


def _reference_fixpoint(cols: pd.DataFrame, avail: np.ndarray, whole_multiples: bool):
    """The fixpoint as it was: every row, every round, the pairwise matrix."""
    row, group = cols["row"].to_numpy(), cols["group"].to_numpy()
    ub = cols["ub"].to_numpy(float)
    size = dominance.served_capacity(cols["cap"], cols["demand"])
    price, co2 = cols["price"].to_numpy(float), cols["co2"].to_numpy(float)
    alive = np.ones(len(cols), dtype=bool)
    while True:
        load = np.bincount(row, weights=np.where(alive, ub, 0.0))
        room = load[row] <= avail + 1e-9
        dominated = np.zeros(len(cols), dtype=bool)
        for g in np.unique(group):
            at = np.flatnonzero(group == g)
            lo, hi = at[0], at[-1] + 1
            args = (size[lo:hi], price[lo:hi], co2[lo:hi], alive[lo:hi], room[lo:hi])
            _, mask = dominance._dominance_pairwise(*args, whole_multiples)
            dominated[lo:hi] = alive[lo:hi] & mask.any(axis=0)
        if not dominated.any():
            return alive
        alive &= ~dominated


@st.composite
def demand_rows(draw: st.DrawFn) -> tuple[pd.DataFrame, np.ndarray]:
    """Columns of up to 3 blocks (demand rows) over up to 6 pools of random
    availability, the frame ``_serving_fixpoint`` reads, and each column's availability."""
    n_pools = draw(st.integers(1, 6))
    n_opts = draw(st.integers(1, 14))
    pools = draw(st.lists(st.integers(0, n_pools - 1), min_size=n_opts, max_size=n_opts))
    cap = draw(st.lists(st.sampled_from(SIZES), min_size=n_opts, max_size=n_opts))
    price = draw(st.lists(st.integers(1, 6), min_size=n_opts, max_size=n_opts))
    availability = draw(st.lists(st.integers(0, 12), min_size=n_pools, max_size=n_pools))
    demands = draw(st.lists(st.sampled_from([2.0, 5.0, 8.0, 20.0]), min_size=1, max_size=3))
    rows = [
        (k, "w", pools[k], "", cap[k], float(price[k]), 0.0, 0, b, d)
        for b, d in enumerate(demands)
        for k in range(n_opts)
    ]
    names = ["opt", "workload", "pool", "key", "cap", "price", "co2", "period", "block"]
    cols = pd.DataFrame(rows, columns=[*names, "demand"])
    cols = cols.sort_values(["block", "price", "cap", "opt"], ascending=[True, True, False, True])
    cols = cols.reset_index(drop=True)
    units = np.ceil(cols["demand"] / cols["cap"] - 1e-9)
    cols["ub"] = units.to_numpy(float)
    cols["whole_day"] = False
    cols["group"] = cols["block"]
    cols["row"] = cols.groupby(["pool", "period", "block"], sort=False).ngroup()
    avail = np.array(availability, float)[cols["pool"].to_numpy()]
    return cols, avail


@settings(max_examples=200, deadline=None)
@given(demand_rows(), st.booleans())
def test_fixpoint_over_changed_rows_equals_every_row_every_round(case, whole_multiples):
    cols, avail = case
    n = len(cols)
    got = dominance._serving_fixpoint(
        cols,
        np.ones(n, dtype=bool),
        0.0,
        avail,
        np.zeros(n, dtype=bool),
        np.zeros(n, dtype=bool),
        whole_multiples=whole_multiples,
    )
    assert got.tolist() == _reference_fixpoint(cols, avail, whole_multiples).tolist()
