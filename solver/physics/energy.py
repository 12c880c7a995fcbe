"""Energy and carbon: power at a utilisation, energy, operational and embodied CO2e."""

from __future__ import annotations

import numpy as np

from solver.physics.constants import CLOUD_ACCELERATOR_LIFETIME_YEARS, IDLE_POWER_FRACTION


def power_w_at_utilisation(tdp_w: np.ndarray | float, utilisation: float) -> np.ndarray:
    """Power drawn at a utilisation: TDP x (idle + (1 - idle) x u)."""
    return np.asarray(tdp_w, dtype=float) * (
        IDLE_POWER_FRACTION + (1.0 - IDLE_POWER_FRACTION) * utilisation
    )


def energy_kwh(
    power_w: np.ndarray | float, hours: np.ndarray | float, pue: np.ndarray | float
) -> np.ndarray:
    """Facility energy: IT power x hours x PUE, kWh."""
    return np.asarray(power_w, dtype=float) / 1000.0 * np.asarray(hours) * np.asarray(pue)


def operational_kgco2e(
    energy: np.ndarray | float, grid_gco2_per_kwh: np.ndarray | float
) -> np.ndarray:
    """Operational emissions: energy (kWh) x grid intensity (g/kWh), kgCO2e."""
    return np.asarray(energy, dtype=float) * np.asarray(grid_gco2_per_kwh) / 1000.0


def embodied_kgco2e_per_hour(
    embodied_kgco2e: np.ndarray | float, lifetime_years: float = CLOUD_ACCELERATOR_LIFETIME_YEARS
) -> np.ndarray:
    """Embodied emissions amortised per hour of use over a service life."""
    return np.asarray(embodied_kgco2e, dtype=float) / (lifetime_years * 8760.0)
