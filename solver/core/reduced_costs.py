"""Reduced costs of the columns a column-generation master leaves out, from its row duals
and the compiled tables, without building the columns (:class:`Pricing`), and the check
of those reduced costs against the solver's own on the columns in the master
(:func:`check_pricing`). The method around them is :mod:`solver.core.columns`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from solver.core.compile import Compiled
from solver.core.cuts import mir_coefficients
from solver.core.dominance import served_capacity
from solver.core.formulation.support import support_modelled
from solver.core.ledger import discount_factors
from solver.core.matrix import LinearModel
from solver.errors import ProcureError
from solver.inputs.costs import served_tokens_per_s
from solver.inputs.egress import (
    block_average_factor,
    egress_in_model,
    egress_usd_per_token,
    served_per_capacity,
)
from solver.inputs.load import resolve_load
from solver.inputs.problem import InferenceWorkload
from solver.units import RENTED_MODES

SECONDS_PER_HOUR = 3600.0

#: Option columns the pricing reads (absent when no workload of that kind exists).
_NEEDED = (
    "tokens_per_s_per_unit",
    "energy_usd_per_unit_hour",
    "kgco2e_per_unit_hour",
    "rent_usd",
    "energy_usd",
    "kgco2e",
    "n_units",
    "job_hours",
    "guard_band_fraction",
)


def _guard(options: pd.DataFrame) -> pd.Series:
    """Pool id -> the guard's band of its price (``guard_band_fraction``; 0 when the
    options carry none: the guard off)."""
    if options.empty:
        return pd.Series(dtype=float)
    band = options["guard_band_fraction"].astype(float).fillna(0.0)
    return band.groupby(options["pool_id"]).first()


def options_table(compiled: Compiled) -> pd.DataFrame:
    """The options table with every column the pricing reads (NaN where absent)."""
    opt = compiled.options
    missing = [c for c in _NEEDED if c not in opt]
    return opt.assign(**{c: np.nan for c in missing}) if missing else opt


class Pricing:
    """Reduced costs of every priced column from the row duals, without building them.

    Serving columns are (option, period, block) of rented options; training columns are
    the option's z. Each column's objective coefficient and its coefficient in every row
    family it enters are those :mod:`solver.core.formulation` builds (the check against HiGHS's
    reduced costs keeps the two in step).
    """

    def __init__(self, compiled: Compiled, mask: np.ndarray) -> None:
        problem = compiled.problem
        self.compiled = compiled
        # the encoded keys of this pricing's tables, kept across rounds (_lookup)
        self._keys: dict[tuple[int, tuple[str, ...]], _Keys] = {}
        opt = options_table(compiled)[mask]
        pools = compiled.pools.set_index("pool_id")
        p_hours = compiled.periods["hours"].to_numpy(float)
        b_frac = compiled.blocks["fraction"].to_numpy(float)
        disc = discount_factors(compiled.periods, problem.discount_rate)
        carbon_price = problem.carbon_price_usd_per_tco2e or 0.0
        rate_factor = disc if problem.objective == "min_npv" else np.ones(len(p_hours))
        d = compiled.demand[compiled.demand["bucket"] < 0][
            ["workload", "period", "block", "demand"]
        ]
        serving = opt[opt["workload_kind"] != "training"]
        # per option once, spread to its (period, block) pieces by position (``at``):
        # mapping pool ids over a million pieces costs seconds at fleet scale
        cols = pd.DataFrame({"at": np.arange(len(serving)), "workload": serving["workload"]})
        cols = cols.merge(d, on="workload")
        at = cols["at"].to_numpy()
        t = cols["period"].to_numpy(int)
        b = cols["block"].to_numpy(int)
        rented_o = serving["mode"].isin(RENTED_MODES).to_numpy()
        rented = rented_o[at]
        price_o = serving["price_usd_per_hour"].to_numpy(float)
        energy_o = serving["energy_usd_per_unit_hour"].astype(float).fillna(0.0).to_numpy()
        tps_o = serving["tokens_per_s_per_unit"].to_numpy(float)
        pool_o = serving["pool_id"]
        option_o = serving["option_id"].to_numpy(int)
        # a rented column is (option, period, block), paid for the block's hours; a
        # reserved one is (option, period), flat over the day: its pieces (one per block,
        # for the rows) share one column, which pays energy for the period's hours
        hours = np.where(rented, p_hours[t] * b_frac[b], np.where(b == 0, p_hours[t], 0.0))
        price = np.where(rented, price_o[at], energy_o[at])
        cost = price * hours  # ledger.rent_usd for rented units
        co2_t = serving["kgco2e_per_unit_hour"].to_numpy(float)[at] * hours / 1000.0
        # the guard (price_guard): the objective's money at the top of the price's band
        g = 1.0 + pool_o.map(_guard(serving)).fillna(0.0).to_numpy(float)[at]
        obj = {
            "min_npv": disc[t] * cost * g,
            "cost_plus_carbon": cost * g + carbon_price * co2_t,
        }
        col_block = np.where(rented, b, -1)
        # one column per (option, period, block), a reserved one's blocks at -1
        key = (option_o[at] * len(p_hours) + t) * (len(b_frac) + 1) + col_block + 1
        col_id, _ = pd.factorize(key)
        demand = cols["demand"].to_numpy(float)
        self.serving = pd.DataFrame(
            {
                "col": col_id,
                "option_id": option_o[at],
                "workload": serving["workload"].to_numpy(object)[at],
                "pool_id": pool_o.to_numpy(object)[at],
                "provider": serving["provider"].to_numpy(object)[at],
                "period": t,
                "block": b,
                "cost": cost,
                "co2_t": co2_t,
                "obj": obj.get(problem.objective, cost * g),
                # the masters' demand row coefficient, and the row's demand
                "tps": served_capacity(tps_o[at], demand),
                "demand": demand,
                "ub": pool_o.map(pools["availability_cap"]).to_numpy(float)[at],
                "accels": pool_o.map(pools["accels_per_unit"]).to_numpy(float)[at],
                # (a commitment's objective counts its charge in each period at that
                # period's discount under min_npv: so does this rate)
                "absent_dual": np.where(rented, 0.0, -price_o[at])
                * g
                * p_hours[t]
                * b_frac[b]
                * rate_factor[t],
            }
        )
        # support (formulation.support), priced where every period is one whole month
        # (support_priced): a rented column at a provider whose support the model prices
        # spends its rent in its period's month (the support_spend row (provider, month))
        self.supported = support_modelled(compiled) if support_priced(compiled) else set()
        months = np.floor(compiled.periods["start_month"].to_numpy(float) + 1e-9).astype(int)
        self.serving["month"] = months[t]
        supported_o = serving["provider"].astype(str).isin(self.supported).to_numpy()
        self.serving["spend"] = np.where(rented & supported_o[at], cost, 0.0)
        first = pd.Series(np.arange(len(col_id))).groupby(col_id).first().to_numpy()
        self.columns = pd.DataFrame(
            {
                "option_id": self.serving["option_id"].to_numpy()[first],
                "workload": self.serving["workload"].to_numpy()[first],
                "period": self.serving["period"].to_numpy()[first],
                "block": col_block[first],
                "obj": np.bincount(col_id, weights=self.serving["obj"].to_numpy()),
                "ub": self.serving["ub"].to_numpy()[first],
            }
        )
        self.shared = egress_shared(compiled)
        self.egress = _egress_pieces(compiled, self.serving, tps_o[at], rate_factor)
        # egress a supported provider sends is its spend (when no other provider of the
        # workload shares its price): USD per token/s of the egress variable
        e = self.egress
        attributed = self._attributed(e["workload"], e["provider"].astype(str))
        e["spend_unit"] = np.where(attributed, e["seconds"].to_numpy(float), 0.0)
        e["month"] = months[e["period"].to_numpy(int)] if len(e) else np.zeros(0, dtype=int)
        hours_per_day = np.asarray(resolve_load(problem).hours_per_day, dtype=float)
        # seconds of each (period, block), its discount, and each period's month
        self._seconds = np.outer(p_hours, hours_per_day) / 24.0 * SECONDS_PER_HOUR
        self._rate_factor, self._months = rate_factor, months
        self._training_tables(opt, pools, p_hours, b_frac, disc, carbon_price, rate_factor)
        self.quota_pools = _quota_pools(compiled)

    def _training_tables(
        self,
        opt: pd.DataFrame,
        pools: pd.DataFrame,
        p_hours: np.ndarray,
        b_frac: np.ndarray,
        disc: np.ndarray,
        carbon_price: float,
        rate_factor: np.ndarray,
    ) -> None:
        """The training columns (one z per option), their cost by period and their units
        in use by period and block (:attr:`training`, :attr:`train_periods`,
        :attr:`train_usage`)."""
        problem = self.compiled.problem
        n_b = len(b_frac)
        train = opt[opt["workload_kind"] == "training"]
        th = self.compiled.training_hours.merge(
            train[["option_id", "job_hours", "rent_usd", "energy_usd"]], on="option_id"
        )
        share = th["hours"].to_numpy(float) / th["job_hours"].to_numpy(float)
        usd = (th["rent_usd"] + th["energy_usd"]).to_numpy(float)
        band = _guard(train)
        g_th = 1.0 + th["option_id"].map(train.set_index("option_id")["pool_id"].map(band))
        th = th.assign(
            cost_share=usd * share,
            disc_share=disc[th["period"].to_numpy(int)]
            * usd
            * share
            * g_th.fillna(1.0).to_numpy(float),
        )
        self.train_periods = th[["option_id", "period", "cost_share", "disc_share"]]
        cost_z = (train["rent_usd"] + train["energy_usd"]).to_numpy(float)
        g_z = 1.0 + train["pool_id"].map(band).fillna(0.0).to_numpy(float)
        co2_z = train["kgco2e"].to_numpy(float) / 1000.0
        npv_z = self.train_periods.groupby("option_id")["disc_share"].sum()
        obj_z = {
            "min_npv": train["option_id"].map(npv_z).fillna(0.0).to_numpy(float),
            "cost_plus_carbon": cost_z * g_z + carbon_price * co2_z,
        }
        self.training = pd.DataFrame(
            {
                "option_id": train["option_id"].to_numpy(int),
                "workload": train["workload"].to_numpy(object),
                "pool_id": train["pool_id"].to_numpy(object),
                "provider": train["provider"].to_numpy(object),
                "cost": cost_z,
                "co2_t": co2_z,
                "obj": obj_z.get(problem.objective, cost_z * g_z),
                "n_units": train["n_units"].to_numpy(float),
                "accels": train["pool_id"].map(pools["accels_per_unit"]).to_numpy(float),
                # reserved pools: the hourly rate a unit's reservation costs (0 if rented)
                "unit_usd_per_hour": np.where(
                    train["mode"].isin(RENTED_MODES), 0.0, train["price_usd_per_hour"].astype(float)
                )
                * g_z,
            }
        )
        # a training option's units in use: (option, period, block) for each period it runs
        self.train_usage = pd.DataFrame(
            {
                "option_id": np.repeat(th["option_id"].to_numpy(int), n_b),
                "period": np.repeat(th["period"].to_numpy(int), n_b),
                "block": np.tile(np.arange(n_b), len(th)),
            }
        ).merge(
            self.training[["option_id", "pool_id", "n_units", "accels", "unit_usd_per_hour"]],
            on="option_id",
        )
        t_u, b_u = self.train_usage["period"].to_numpy(int), self.train_usage["block"].to_numpy(int)
        self.train_usage["absent_dual"] = (
            -self.train_usage["unit_usd_per_hour"].to_numpy()
            * p_hours[t_u]
            * b_frac[b_u]
            * rate_factor[t_u]
        )

    def _lookup(
        self,
        by_key: dict | None,
        frame: pd.DataFrame,
        columns: list[str],
        absent: float | np.ndarray = 0.0,
    ) -> np.ndarray:
        """:func:`_lookup` on one of this pricing's own tables, its keys encoded once."""
        return _lookup(by_key, frame, columns, absent, self._keys)

    # ---- duals by family
    @staticmethod
    def duals(model: LinearModel, row_dual: np.ndarray) -> dict[str, pd.DataFrame | dict]:
        """The rows' duals by family: family -> {row key: dual} (rows with no coefficient
        left out); the column generation adds the cuts' frame."""
        out: dict[str, dict] = {}
        for r, row in enumerate(model.rows):
            if row.coefs:
                out.setdefault(row.family, {})[row.key] = float(row_dual[r])
        if "support_billed" in out:  # (provider, variable) -> the variable's column key
            v = model.variables
            key = list(
                zip(
                    v["option_id"].to_numpy(),
                    v["period"].to_numpy(),
                    v["block"].to_numpy(),
                    strict=True,
                )
            )
            is_x = (v["kind"] == "x").to_numpy()
            out["support_billed"] = {
                (int(key[i][0]), int(key[i][1]), int(key[i][2])): y
                for (_, i), y in out["support_billed"].items()
                if is_x[i]
            }
        return dict(out)

    def reduced_costs(self, duals: dict) -> tuple[np.ndarray, np.ndarray]:
        """(reduced cost per serving column (rows of :attr:`columns`), per training column),
        HiGHS's sign: c - A^T y."""
        s, z = self.serving, self.training
        scalar = _scalar_terms(duals, self.compiled)
        rc_s = s["obj"].to_numpy() - scalar(s, s["period"].to_numpy(int))
        rc_s -= s["tps"].to_numpy() * self._lookup(
            duals.get("demand"), s, ["workload", "period", "block"]
        )
        rc_s -= self._lookup(duals.get("redundancy"), s, ["workload", "period", "block"])
        rc_s -= self._lookup(duals.get("availability"), s, ["pool_id", "period", "block"])
        rc_s -= self._lookup(
            duals.get("reserved_capacity"),
            s,
            ["pool_id", "period", "block"],
            _absent_pool(duals, s),
        )
        rc_s -= s["accels"].to_numpy() * self._quota(duals, s)
        rc_s -= self._cuts(duals.get("_cuts"))
        rc_s -= self._egress(duals)
        if self.supported:  # rent in the month's support_spend row: coefficient -spend
            rc_s += s["spend"].to_numpy() * self._lookup(
                duals.get("support_spend"), s, ["provider", "month"]
            )
        rc_s = np.bincount(s["col"].to_numpy(), weights=rc_s, minlength=len(self.columns))
        rc_s = rc_s.astype(float)  # (an int array when there is no serving column)
        if self.supported:  # support_billed: x <= big u, one row per column in the master
            keys = ["option_id", "period", "block"]
            rc_s -= self._lookup(duals.get("support_billed"), self.columns, keys)
        rc_z = z["obj"].to_numpy() - scalar(z, None)
        by_t = _period_budget_duals(duals, self.compiled.periods["name"])
        if by_t.any():
            tp = self.train_periods
            extra = pd.Series(tp["cost_share"].to_numpy() * by_t[tp["period"].to_numpy(int)])
            rc_z -= (
                extra.groupby(tp["option_id"].to_numpy())
                .sum()
                .reindex(z["option_id"])
                .fillna(0.0)
                .to_numpy()
            )
        rc_z -= self._lookup(duals.get("train_once"), z, ["workload"])
        u = self.train_usage
        per_row = u["n_units"].to_numpy() * (
            self._lookup(duals.get("availability"), u, ["pool_id", "period", "block"])
            + self._lookup(
                duals.get("reserved_capacity"),
                u,
                ["pool_id", "period", "block"],
                _absent_pool(duals, u),
            )
            + u["accels"].to_numpy() * self._quota(duals, u)
        )
        rc_z -= (
            pd.Series(per_row)
            .groupby(u["option_id"].to_numpy())
            .sum()
            .reindex(z["option_id"])
            .fillna(0.0)
            .to_numpy()
        )
        return rc_s, rc_z

    def _cuts(self, cuts: pd.DataFrame | None) -> np.ndarray:
        """sum over the MIR cuts of a serving column's row: its coefficient x dual."""
        out = np.zeros(len(self.serving))
        if cuts is None or cuts.empty:
            return out
        s = self.serving[["workload", "period", "block", "tps", "demand"]].reset_index()
        m = s.merge(cuts, on=["workload", "period", "block"])
        coef = mir_coefficients(m["tps"].to_numpy(), m["demand"].to_numpy(), m["cap"].to_numpy())
        np.add.at(out, m["index"].to_numpy(int), coef * m["dual"].to_numpy())
        return out

    def egress_duals(self, duals: dict) -> np.ndarray:
        """The ``egress_capacity`` dual (USD per token/s of the row, <= 0) of each egress
        piece (rows of :attr:`egress`): the master's where it has the row, else the one
        that prices the provider's missing egress variable at zero reduced cost,
        min(0, c_e - y_serve) (docs/guides/large-problems.md, "Egress rows in the
        pricing"). ``y_serve`` is the ``egress_serve`` row's dual, or, where the master's
        options of the workload share one egress price and its egress is a constant, that
        price's objective coefficient (``duals["_egress_master"]``: workload -> USD per
        token); 0 where neither (a block that asks for nothing)."""
        e = self.egress
        serve = self._lookup(duals.get("egress_serve"), e, ["workload", "period", "block"], np.nan)
        master = duals.get("_egress_master", {})
        single = e["workload"].map({w: u for w, (u, _) in master.items()}).astype(float)
        fallback = e["c_unit"].to_numpy() * single.to_numpy()
        spend = self._lookup(duals.get("support_spend"), e, ["provider", "month"])
        if self.supported and master:  # the master's one provider's egress is its spend
            owner = e["workload"].map({w: p for w, (_, p) in master.items()})
            own = pd.DataFrame({"provider": owner, "month": e["month"]})
            y_own = _lookup(duals.get("support_spend"), own, ["provider", "month"])
            fallback += np.where(owner.notna(), e["seconds"] * single * y_own, 0.0)
        serve = np.where(np.isnan(serve), np.nan_to_num(fallback), serve)
        # the missing egress variable: objective c_e, spend coefficient -seconds x price
        c_e = e["usd_per_token"].to_numpy() * (
            e["c_unit"].to_numpy() + e["spend_unit"].to_numpy() * spend
        )
        absent = np.minimum(0.0, c_e - serve)
        return self._lookup(
            duals.get("egress_capacity"), e, ["workload", "period", "block", "provider"], absent
        )

    def egress_cost(self, duals: dict, frame: pd.DataFrame) -> np.ndarray:
        """USD per token/s of the egress variable of each (workload, period, block,
        provider) row of ``frame``: the objective's (the block's seconds x the provider's
        price, discounted under min_npv) and, where it is a supported provider's spend,
        seconds x price x that month's ``support_spend`` dual."""
        t, b = frame["period"].to_numpy(int), frame["block"].to_numpy(int)
        provider = frame["provider"].astype(str)
        price = provider.map({p: egress_usd_per_token(p) for p in provider.unique()})
        seconds = self._seconds[t, b]
        attributed = self._attributed(frame["workload"], provider)
        months = pd.DataFrame({"provider": provider.to_numpy(), "month": self._months[t]})
        spend = _lookup(duals.get("support_spend"), months, ["provider", "month"])
        rate = self._rate_factor[t] + np.where(attributed, spend, 0.0)
        return price.to_numpy(float) * seconds * rate

    def _attributed(self, workload: pd.Series, provider: pd.Series) -> np.ndarray:
        """Whether the egress of each (workload, provider) is that provider's support
        spend: a supported provider whose price no other provider of the workload's has."""
        out = provider.isin(self.supported).to_numpy().copy()
        if out.any():
            pairs = zip(workload.to_numpy()[out], provider.to_numpy()[out], strict=True)
            out[out] = [(str(w), str(p)) not in self.shared for w, p in pairs]
        return out

    def _egress(self, duals: dict) -> np.ndarray:
        """sum over the egress_capacity rows of a serving piece: its coefficient x dual."""
        out = np.zeros(len(self.serving))
        e = self.egress
        if not e.empty:
            y = self.egress_duals(duals)
            np.add.at(out, e["piece"].to_numpy(int), e["coef"].to_numpy() * y)
        return out

    def _quota(self, duals: dict, frame: pd.DataFrame) -> np.ndarray:
        """sum over quotas the column's pool falls under of the quota row's dual."""
        q = duals.get("quota")
        out = np.zeros(len(frame))
        if not q:
            return out
        for qi, pool_ids in self.quota_pools.items():
            hit = frame["pool_id"].isin(pool_ids).to_numpy()
            if hit.any():
                keys = zip(
                    frame["period"].to_numpy(int)[hit],
                    frame["block"].to_numpy(int)[hit],
                    strict=True,
                )
                out[hit] += np.array([q.get((qi, t, b), 0.0) for t, b in keys])
        return out


def routed_workloads(compiled: Compiled) -> set[str]:
    """Workloads whose egress the model routes between prices (egress_serve and
    egress_capacity rows, :mod:`solver.core.formulation.egress`): their options sit at
    providers of more than one egress price."""
    opt = compiled.options
    out = set()
    for w, providers in opt.groupby("workload")["provider"].unique().items():
        if len({egress_usd_per_token(str(p)) for p in providers}) > 1 and egress_in_model(
            compiled.problem, str(w)
        ):
            out.add(str(w))
    return out


def _egress_pieces(
    compiled: Compiled, serving: pd.DataFrame, tps: np.ndarray, rate_factor: np.ndarray
) -> pd.DataFrame:
    """One row per serving piece (row of ``serving``) of a routed workload
    (:func:`routed_workloads`) in a block that asks for tokens: ``piece`` (its row),
    workload, period, block, provider; ``coef``, its coefficient in the provider's
    ``egress_capacity`` row (-served_per_capacity x tokens/s per unit, as
    :func:`solver.core.formulation.egress.add_egress` builds it); ``c_unit``, the
    objective's USD of a token/s of egress sent for the block per USD/token of price (the
    block's seconds, discounted under min_npv); ``usd_per_token``, the provider's egress
    price."""
    names = ["piece", "workload", "period", "block", "provider", "coef", "c_unit", "seconds"]
    routed = routed_workloads(compiled)
    hit = serving["workload"].isin(routed).to_numpy()
    if not hit.any():
        return pd.DataFrame(columns=[*names, "usd_per_token"])
    problem = compiled.problem
    load = resolve_load(problem)
    period_names = list(compiled.periods["name"])
    p_hours = compiled.periods["hours"].to_numpy(float)
    idx = np.flatnonzero(hit)
    w = serving["workload"].to_numpy(object)[idx]
    t = serving["period"].to_numpy(int)[idx]
    b = serving["block"].to_numpy(int)[idx]
    share: dict[tuple[str, int, int], float] = {}
    # (workload, period, block) as one integer: a MultiIndex of a million pieces is slow
    w_code, w_names = pd.factorize(w)
    n_t, n_b = len(period_names), max(len(load.hours_per_day), int(b.max()) + 1)
    code, unique = pd.factorize((w_code.astype(np.int64) * n_t + t) * n_b + b)
    uniques = [
        (w_names[u // (n_t * n_b)], int(u // n_b % n_t), int(u % n_b)) for u in unique.tolist()
    ]
    for key in uniques:
        wl = next(x for x in problem.workloads if x.name == key[0])
        assert isinstance(wl, InferenceWorkload)  # egress_in_model
        average = (
            served_tokens_per_s(wl)
            * wl.demand_by_period.get(period_names[key[1]], 1.0)
            * block_average_factor(load, key[0], key[2])
        )  # no rows where the block asks for nothing (add_egress)
        share[key] = served_per_capacity(problem, load, key[0], key[2]) if average > 0 else 0.0
    share_of = np.array([share[k] for k in uniques], dtype=float)
    seconds = p_hours[t] * np.asarray(load.hours_per_day)[b] / 24.0 * SECONDS_PER_HOUR
    provider = serving["provider"].to_numpy(object)[idx]
    price = pd.Series(provider).map({p: egress_usd_per_token(str(p)) for p in set(provider)})
    out = pd.DataFrame(
        {
            "piece": idx,
            "workload": w,
            "period": t,
            "block": b,
            "provider": provider,
            "coef": -share_of[code] * tps[idx],
            "c_unit": rate_factor[t] * seconds,
            "seconds": seconds,
            "usd_per_token": price.to_numpy(float),
        }
    )
    return out[out["coef"] != 0].reset_index(drop=True)


def master_egress_prices(
    options: pd.DataFrame, routed: set[str], shared: frozenset[tuple[str, str]] = frozenset()
) -> dict[str, tuple[float, str | None]]:
    """Routed workload -> (the one egress price in USD per token, the provider whose
    support spend it is or None) of its options in a master that holds options at one
    price only: its egress is then a constant (the ``_egress_master`` entry of the duals,
    :meth:`Pricing.egress_duals`), a provider's spend when one provider serves it and no
    other provider of the workload's (``shared``, :func:`egress_shared`) has its price."""
    out: dict[str, tuple[float, str | None]] = {}
    sub = options[options["workload"].isin(routed)]
    for w, providers in sub.groupby("workload")["provider"].unique().items():
        prices = {egress_usd_per_token(str(p)) for p in providers}
        if len(prices) == 1:
            one = str(providers[0]) if len(providers) == 1 else None
            out[str(w)] = (prices.pop(), None if (str(w), one) in shared else one)
    return out


def egress_shared(compiled: Compiled) -> frozenset[tuple[str, str]]:
    """(workload, provider) of the options whose egress price another provider of the
    workload's options has too (:func:`solver.core.formulation.egress.add_egress` leaves
    their egress out of the provider's spend)."""
    out = set()
    for w, providers in compiled.options.groupby("workload")["provider"].unique().items():
        price = {str(p): egress_usd_per_token(str(p)) for p in providers}
        values = list(price.values())
        out |= {(str(w), p) for p, u in price.items() if values.count(u) > 1}
    return frozenset(out)


def support_priced(compiled: Compiled) -> bool:
    """Whether the pricing knows the support rows (formulation.support): every period one
    whole month, so each month's support_spend row is its own (no class of months) and a
    rented column spends in its period's month only."""
    p = compiled.periods
    start = p["start_month"].to_numpy(float)
    return bool(
        len(p)
        and np.allclose(p["months"].to_numpy(float), 1.0)
        and np.allclose(start, np.round(start))
    )


def _quota_pools(compiled: Compiled) -> dict[int, set[str]]:
    """Quota index -> the cloud pools it counts (as
    :func:`solver.core.formulation.limits.add_quotas` does)."""
    pools = compiled.pools
    out = {}
    for qi, q in enumerate(compiled.problem.quotas):
        match = (pools["kind"] == "cloud") & (pools["provider"] == q.provider)
        if q.region:
            match &= pools["region"] == q.region
        if compiled.quota_accelerators[qi]:
            match &= pools["accelerator_id"] == compiled.quota_accelerators[qi]
        out[qi] = set(pools.loc[match, "pool_id"])
    return out


def _absent_pool(duals: dict, frame: pd.DataFrame) -> np.ndarray:
    """The dual taken for a reserved-capacity row the master lacks: the reservation's hourly
    rate for the row's hours (``absent_dual``) when the pool is not in the master at all,
    so that its commitments left out keep a reduced cost >= 0 (a commitment costs at least
    its rate for the periods it covers); 0 when the pool is in the master (its commitment
    columns there were priced without the row)."""
    present = {k[0] for k in duals.get("reserved_capacity", {})}
    return np.where(frame["pool_id"].isin(present).to_numpy(), 0.0, frame["absent_dual"])


class _Keys:
    """A frame's rows keyed by some of its columns, encoded once as one integer per row
    (each column factorized, the codes combined in mixed radix), so that a dual table
    keyed the same way is looked up by integers rather than by building a MultiIndex
    of strings per call (the pricing looks up the same frames' keys every round)."""

    def __init__(self, frame: pd.DataFrame, columns: list[str]) -> None:
        self.frame = frame  # held: the cache is keyed by id()
        self.levels: list[pd.Index] = []
        code = np.zeros(len(frame), dtype=np.int64)
        for c in columns:
            codes, uniques = pd.factorize(frame[c], use_na_sentinel=False)
            self.levels.append(pd.Index(uniques))
            code = code * max(len(uniques), 1) + codes.astype(np.int64)
        self.code = code

    def where(self, keys: list[tuple]) -> np.ndarray:
        """The row of ``keys`` (tuples in the columns' order) each frame row matches, -1
        where none does."""
        n, width = len(keys), len(self.levels)
        comb = np.zeros(n, dtype=np.int64)
        # a key of another length (a row family keyed otherwise) matches no frame row
        valid = np.fromiter((len(k) == width for k in keys), dtype=bool, count=n)
        keys = [k if ok else (None,) * width for k, ok in zip(keys, valid, strict=True)]
        for j, level in enumerate(self.levels):
            part = level.get_indexer(pd.Index([k[j] for k in keys], tupleize_cols=False))
            valid &= part >= 0
            comb = comb * max(len(level), 1) + np.maximum(part, 0)
        pos = np.flatnonzero(valid)
        if pos.size == 0:  # no key matches any level: no frame row has a row
            return np.full(len(self.code), -1, dtype=np.int64)
        index = pd.Index(comb[pos])
        if not index.is_unique:  # equal keys of different types (1 and 1.0): as before
            raise ValueError("duplicate keys")
        hit = index.get_indexer(pd.Index(self.code))
        return np.where(hit >= 0, pos[np.maximum(hit, 0)], -1)


def _lookup(
    by_key: dict | None,
    frame: pd.DataFrame,
    columns: list[str],
    absent: float | np.ndarray = 0.0,
    cache: dict[tuple[int, tuple[str, ...]], _Keys] | None = None,
) -> np.ndarray:
    """The dual of the row keyed by ``columns`` of each frame row; ``absent`` (a number or
    one per frame row) where the master has no such row; ``cache`` keeps the frame's
    encoded keys (:class:`_Keys`) for the next call (frames that live as long as the
    :class:`Pricing` holding the cache).

    A row the master lacks may take any dual of the right sign in the Lagrangian bound
    (its right-hand side times the dual is 0 for the rows given a non-zero ``absent``:
    reserved capacity of a pool with no existing units)."""
    fill = np.broadcast_to(np.asarray(absent, dtype=float), (len(frame),))
    if not by_key or not len(frame):
        return fill.copy()
    key = (id(frame), tuple(columns))
    enc = None if cache is None else cache.get(key)
    if enc is None or enc.frame is not frame or len(enc.code) != len(frame):
        enc = _Keys(frame, columns)
        if cache is not None:
            cache[key] = enc
    values = np.fromiter(by_key.values(), dtype=float, count=len(by_key))
    try:
        where = enc.where(list(by_key))
    except ValueError:
        return _lookup_by_index(by_key, frame, columns, fill, values)
    return np.where(where >= 0, values[where], fill)


def _lookup_by_index(
    by_key: dict, frame: pd.DataFrame, columns: list[str], fill: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """:func:`_lookup` by pandas' indexes (keys that only Python equality tells apart)."""
    keys = (
        pd.MultiIndex.from_tuples(list(by_key))
        if len(columns) > 1
        else pd.Index([k[0] for k in by_key])
    )
    if len(columns) > 1:
        where = keys.get_indexer(pd.MultiIndex.from_frame(frame[columns]))
    else:
        where = keys.get_indexer(pd.Index(frame[columns[0]]))
    return np.where(where >= 0, values[where], fill)


def _period_budget_duals(duals: dict, names: pd.Series) -> np.ndarray:
    """The ``period_budget`` row's dual of each period (0 where it has none)."""
    pb = duals.get("period_budget", {})
    return np.array([pb.get((n,), 0.0) for n in names])


def _scalar_terms(
    duals: dict, compiled: Compiled
) -> Callable[[pd.DataFrame, np.ndarray | None], np.ndarray]:
    """A function (columns, period or None) -> sum of cost-row duals x their coefficients:
    budget, period budget (serving columns), carbon cap, provider shares."""
    problem = compiled.problem
    budget = duals.get("budget", {}).get((), 0.0)
    carbon = duals.get("carbon_cap", {}).get((), 0.0)
    shares = duals.get("provider_share", {})
    by_t = _period_budget_duals(duals, compiled.periods["name"])

    def terms(frame: pd.DataFrame, period: np.ndarray | None) -> np.ndarray:
        cost = frame["cost"].to_numpy()
        out = cost * budget + frame["co2_t"].to_numpy() * carbon
        for (provider,), y in shares.items():
            own = (frame["provider"] == provider).to_numpy(float)
            out += y * cost * (own - problem.provider_share_max[provider])
        if period is not None:
            out += cost * by_t[period]
        return out

    return terms


def check_pricing(
    model: LinearModel, col_dual: np.ndarray, pricing: Pricing, rc_s: np.ndarray, rc_z: np.ndarray
) -> float:
    """Largest gap between the pricing's reduced costs and HiGHS's on the master's priced
    columns, relative to the column's cost; above 1e-6 it is a bug and stops the solve."""
    v = model.variables
    s = pricing.columns.assign(rc=rc_s)
    x = v[v["kind"] == "x"].reset_index()
    x = x.merge(
        s[["option_id", "period", "block", "rc", "obj"]], on=["option_id", "period", "block"]
    )
    z = (
        v[v["kind"] == "z"]
        .reset_index()
        .merge(pricing.training.assign(rc=rc_z)[["option_id", "rc", "obj"]], on="option_id")
    )
    worst = 0.0
    for frame in (x, z):
        if len(frame):
            got = col_dual[frame["index"].to_numpy(int)]
            scale = np.maximum(1.0, np.abs(frame["obj"].to_numpy(float)))
            worst = max(worst, float(np.max(np.abs(got - frame["rc"].to_numpy()) / scale)))
    if worst > 1e-6:
        raise ProcureError(
            f"column generation: the pricing's reduced costs differ from the solver's by "
            f"{worst:.3g} of a column's cost",
            fix="this is a bug in procure; solve with --method full and report the problem",
        )
    return worst
