"""Power, energy, energy cost and CO2e of one unit-hour in use, per pool."""

from __future__ import annotations

import numpy as np
import pandas as pd

from solver import physics
from solver.physics.constants import (
    HOST_POWER_FRACTION,
    IDLE_POWER_FRACTION,
)


def unit_power_kw(pools: pd.DataFrame, utilisation: float) -> np.ndarray:
    """Power of one unit in use at a utilisation, kW.

    Cloud: GPUs + host, all of it (the price covers idle time). Owned: only the power
    above idle, as the idle draw is charged with the hosting for every month in service.
    """
    frac = IDLE_POWER_FRACTION + (1.0 - IDLE_POWER_FRACTION) * utilisation
    cloud_kw = (
        pools["tdp_w"].to_numpy()
        * pools["accels_per_unit"].to_numpy()
        * frac
        * (1.0 + HOST_POWER_FRACTION)
        / 1000.0
    )
    owned_kw = pools["power_kw_max"].to_numpy() * (1.0 - IDLE_POWER_FRACTION) * utilisation
    return np.where(pools["kind"].to_numpy() == "owned", owned_kw, cloud_kw)


def unit_hour_coefficients(pools: pd.DataFrame, utilisation: float) -> dict[str, np.ndarray]:
    """Per unit-hour in use: energy (kWh), energy cost (USD, owned only), CO2e (kg).

    Cloud units also carry amortised embodied CO2e per hour; owned units carry
    theirs at purchase (or amortised by policy) on the purchase variable.
    """
    kwh = unit_power_kw(pools, utilisation) * pools["pue"].to_numpy()
    co2 = kwh * pools["grid_gco2_per_kwh"].to_numpy() / 1000.0
    cloud = pools["kind"].to_numpy() == "cloud"
    co2 = co2 + np.where(
        cloud, physics.embodied_kgco2e_per_hour(pools["embodied_kgco2e_unit"].to_numpy()), 0.0
    )
    energy_cost = np.where(cloud, 0.0, kwh * pools["electricity_usd_per_kwh"].to_numpy())
    return {"kwh": kwh, "energy_usd": energy_cost, "kgco2e": co2}
