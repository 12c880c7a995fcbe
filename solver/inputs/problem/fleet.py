"""What a team already holds or may commit to: owned servers and the sites they stand in,
running reservations, savings plans it may buy, and quotas on cloud accelerators."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from solver.inputs.problem.fields import StrictModel


class ExistingServer(StrictModel):
    """Servers already owned at the start of the horizon."""

    server: str
    site: str
    units: int = Field(gt=0)


SITE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class Site(StrictModel):
    """A site of the problem's own (a server room, a data centre, a colocation cage): it
    joins the catalog's sites for this problem, and ``existing_fleet`` may name it.

    The grid, residency zone and power price come from ``region`` (a catalog cloud region
    on the same grid) unless given; without a region all three are required.
    """

    name: str = Field(
        pattern=SITE_NAME_PATTERN,
        description="The site's id (letters, digits, '.', '_', '-'), as existing_fleet[].site "
        "names it; not the id of a catalog site",
    )
    location: str | None = Field(
        None, max_length=200, description="Where it is, for people (e.g. 'Ashburn, VA')"
    )
    region: str | None = Field(
        None,
        description="A catalog region on the same grid, 'provider/region' (aws/us-east-1) or "
        "a region name one provider uses (`procure catalog list regions`): the site takes its "
        "country, residency zone, grid intensity and electricity price unless given here",
    )
    country: str | None = Field(None, max_length=64, description="Country code, e.g. US")
    residency_zone: str | None = Field(
        None, description="Residency zone for residency: (us, eu, ...); default the region's"
    )
    grid_gco2_per_kwh: float | None = Field(
        None, ge=0, le=2000, description="Grid carbon intensity, gCO2e/kWh; default the region's"
    )
    electricity_usd_per_kwh: float | None = Field(
        None, ge=0, le=10, description="Power price, USD/kWh; default the region's tariff"
    )
    pue: float = Field(
        ge=1,
        le=3,
        description="Power usage effectiveness of the room (facility kW / IT kW), e.g. 1.4; "
        "small rooms without containment run 1.8-2.5 (catalogs/SOURCES.md, ASSUMP_PUE)",
    )
    colocation_usd_per_kw_month: float | None = Field(
        None,
        ge=0,
        le=1e5,
        description="Colocation rent, USD per kW of a server's maximum power per month. "
        "Default 0: a room of your own, whose space is a sunk cost",
    )
    colocation_usd_per_rack_month: float | None = Field(
        None,
        ge=0,
        le=1e6,
        description="Or colocation rent per rack per month, with rack_power_kw: charged as "
        "colocation_usd_per_rack_month / rack_power_kw per kW-month",
    )
    rack_power_kw: float | None = Field(
        None, gt=0, le=1e3, description="Power one rack is sold with, kW (with the rack price)"
    )
    staff_usd_per_server_year: float | None = Field(
        None,
        ge=0,
        le=1e7,
        description="Staff per owned server per year, USD, flat whatever the fleet. Default: "
        "by the site's fleet size, 140 servers per administrator up to 1,000 servers, rising "
        "log-linearly to 1,000 per administrator at 50,000 (catalogs/SOURCES.md "
        "STAFF_BY_SIZE), at $135,262 per administrator-year",
    )
    staff_servers_per_admin: float | None = Field(
        None,
        gt=0,
        le=1e5,
        description="Servers one administrator looks after at this site, flat whatever the "
        "fleet (instead of the default by fleet size; e.g. 20 for varied hand-run boxes)",
    )
    staff_usd_per_admin_year: float | None = Field(
        None,
        ge=0,
        le=1e7,
        description="What one administrator costs a year, USD, salary and benefits. Default "
        "135,262: the BLS median pay $95,360 / 70.5% wage share (catalogs/SOURCES.md "
        "STAFF_LOADING)",
    )
    power_cap_kw: float | None = Field(
        None,
        gt=0,
        le=1e6,
        description="Most kW of servers (their maximum power) the site holds. Default: the "
        "servers already there (existing_fleet), so none can be added until it is given",
    )
    source: str = Field("", max_length=500, description="Where the site's figures come from")

    @model_validator(mode="after")
    def _complete(self) -> Site:
        if self.region is None:
            missing = [
                f
                for f in ("residency_zone", "grid_gco2_per_kwh", "electricity_usd_per_kwh")
                if getattr(self, f) is None
            ]
            if missing:
                raise ValueError(
                    f"site {self.name!r} has no region, so it needs {', '.join(missing)}; give "
                    "them, or a catalog region on the same grid (e.g. region: aws/us-east-1)"
                )
        if self.colocation_usd_per_rack_month is not None:
            if self.colocation_usd_per_kw_month is not None:
                raise ValueError(
                    f"site {self.name!r} gives colocation both per kW and per rack; keep one"
                )
            if self.rack_power_kw is None:
                raise ValueError(
                    f"site {self.name!r}: colocation_usd_per_rack_month needs rack_power_kw "
                    "(the kW a rack is sold with), to charge rent per kW of each server"
                )
        elif self.rack_power_kw is not None:
            raise ValueError(
                f"site {self.name!r}: rack_power_kw goes with colocation_usd_per_rack_month; "
                "give the rack price too, or remove rack_power_kw"
            )
        if self.staff_usd_per_server_year is not None and (
            self.staff_servers_per_admin is not None or self.staff_usd_per_admin_year is not None
        ):
            raise ValueError(
                f"site {self.name!r} gives staff_usd_per_server_year (a flat figure per server) "
                "and staff_servers_per_admin or staff_usd_per_admin_year; keep "
                "staff_usd_per_server_year alone, or the ratio and the salary"
            )
        return self

    @property
    def colocation_usd_per_kw_month_charged(self) -> float:
        """Colocation rent per kW-month: as given, from the rack price, or 0 (own room)."""
        if self.colocation_usd_per_rack_month is not None and self.rack_power_kw:
            return self.colocation_usd_per_rack_month / self.rack_power_kw
        return self.colocation_usd_per_kw_month or 0.0


def _site_entry_kind(value: object) -> str:
    """A ``sites:`` entry is a catalog site's id (a string) or a site described in full."""
    return "site" if isinstance(value, dict | Site) else "site_id"


SiteEntry = Annotated[
    Annotated[str, Tag("site_id")] | Annotated[Site, Tag("site")],
    Discriminator(_site_entry_kind),
]


class ExistingReservation(StrictModel):
    """A reservation already paid for, still running at the start of the horizon."""

    offering: str
    mode: Literal["reserved_1y", "reserved_3y"]
    units: int = Field(gt=0)
    months_remaining: float = Field(gt=0)


class SavingsPlan(StrictModel):
    """A spend-based commitment the plan may buy (a savings plan).

    ``usd_per_hour`` committed for the term is paid every hour of it, used or not; in each
    hour it pays for covered usage at the plan's rate of each offering (``rates``) up to
    the commitment, and the rest is billed on demand. The solver chooses the commitment
    (0 when none pays); ``max_usd_per_hour`` limits it. The rates come from the
    provider's price files (solver/inputs/importers: AWS Savings Plans offer files,
    Azure Retail Prices ``savingsPlan`` arrays, GCP Cloud Billing SKUs).
    """

    provider: str = Field(description="The provider selling the plan (catalogs/providers.csv)")
    term: Literal["1y", "3y"] = Field(description="1y (12 months) or 3y (36 months)")
    rates: dict[str, Annotated[float, Field(gt=0)]] = Field(
        min_length=1,
        description="offering_id -> USD per instance-hour under the plan (below its on-demand "
        "price); usage of other offerings is not covered",
    )
    max_usd_per_hour: float | None = Field(
        None, ge=0, description="Most USD per hour the plan may commit (default: no limit)"
    )
    source: str = Field(
        "", description="Where the rates come from (a price file, its URL and date)"
    )
    price_date: str = Field(
        "unknown", description="When the rates were read: YYYY-MM-DD, or unknown"
    )
    confidence: Literal["unverified", "third_party", "list", "quote"] = Field(
        "unverified",
        description="How far the rates can be trusted (solver/inputs/provenance.py): list "
        "when read from the provider's own price file (procure catalog commitments)",
    )

    @field_validator("price_date")
    @classmethod
    def _a_date(cls, text: str) -> str:
        if text != "unknown" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(f"price_date {text!r} is not YYYY-MM-DD or unknown")
        return text

    @property
    def term_months(self) -> float:
        """12 or 36."""
        return 12.0 if self.term == "1y" else 36.0


class Quota(StrictModel):
    """A cap on cloud accelerators (rented and reserved) per provider, region, type."""

    provider: str
    region: str | None = None
    accelerator: str | None = None
    max_accelerators: int = Field(ge=0)
