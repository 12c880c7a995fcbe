"""Staff for owned servers, by the size of the fleet at a site (honest defaults).

One systems administrator looks after about 140 servers in a medium data centre (about
1,000 servers) and more than 1,000 in a very large one (about 50,000 servers): Armbrust
et al., "Above the Clouds: A Berkeley View of Cloud Computing", UC Berkeley
EECS-2009-28 (2009), Table 2, after James Hamilton (catalogs/SOURCES.md, STAFF_BY_SIZE).
The ratio is per data centre, so the fleet counted is the owned servers at one site
(existing and bought), not the organisation's.

The default headcount at a site of ``n`` servers (:func:`admins`):

- up to 1,000 servers: ``n / 140`` (the medium data centre's ratio held flat below it:
  the source gives no smaller size);
- 1,000 to 50,000: the ratio log-linear in ``n`` between the two published points,
  evaluated at :data:`BREAKPOINTS_SERVERS` (1,000, 2,000, 5,000, 10,000, 20,000, 50,000),
  the headcount linear between those points (an assumption: the source gives two sizes);
- beyond 50,000: ``n / 1,000`` (flat at the very large data centre's ratio).

Each administrator costs :data:`USD_PER_ADMIN_YEAR`: the BLS median pay of network and
computer systems administrators ($95,360, May 2023) over the share wages are of employer
compensation cost in private industry (70.5%, BLS ECEC, December 2024), $135,262 a year.

A site may give its own ``staff_servers_per_admin`` (a flat ratio) or
``staff_usd_per_admin_year`` (the salary), or a flat ``staff_usd_per_server_year`` as
before; a catalog site gives a flat figure in ``staff_usd_per_server_year`` or leaves it
empty for the size-dependent default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Servers per administrator in a medium data centre (about 1,000 servers): Armbrust et
#: al. 2009, Table 2 (catalogs/SOURCES.md STAFF_BY_SIZE).
SERVERS_PER_ADMIN_MEDIUM = 140.0
MEDIUM_SITE_SERVERS = 1_000.0
#: ... and in a very large one (about 50,000 servers): "> 1,000", the same table.
SERVERS_PER_ADMIN_LARGE = 1_000.0
LARGE_SITE_SERVERS = 50_000.0
#: Fleet sizes where the log-linear ratio is evaluated; the headcount is linear between.
BREAKPOINTS_SERVERS: tuple[float, ...] = (1_000.0, 2_000.0, 5_000.0, 10_000.0, 20_000.0, 50_000.0)
#: BLS Occupational Outlook Handbook, network and computer systems administrators,
#: median pay May 2023 (catalogs/SOURCES.md STAFF_RATIO).
ADMIN_WAGE_USD_PER_YEAR = 95_360.0
#: Wages and salaries as a share of employer compensation cost, private industry, BLS
#: ECEC December 2024, USDL-25-0335 (catalogs/SOURCES.md STAFF_LOADING).
WAGE_SHARE_OF_COMPENSATION = 0.705
USD_PER_ADMIN_YEAR = ADMIN_WAGE_USD_PER_YEAR / WAGE_SHARE_OF_COMPENSATION
#: Working hours in a year (40 h x 52 weeks) and those one move of a serving deployment
#: takes (one working day, an assumption): the default ``migration_usd_per_move`` is
#: USD_PER_ADMIN_YEAR / 2,080 x 8 = $520.24 (solver.core.formulation.moves charges it; the
#: verifier recomputes the migration penalty with it).
WORK_HOURS_PER_YEAR = 2080.0
HOURS_PER_MOVE = 8.0
DEFAULT_USD_PER_MOVE = USD_PER_ADMIN_YEAR / WORK_HOURS_PER_YEAR * HOURS_PER_MOVE
STAFF_BY_SIZE_SOURCE = (
    "catalogs/SOURCES.md STAFF_BY_SIZE: 140 servers per administrator up to 1,000 servers "
    "at a site, log-linear to 1,000 per administrator at 50,000 (Armbrust et al. 2009, "
    "Table 2); $135,262 per administrator-year (BLS median $95,360 / 70.5% wage share, ECEC)"
)


def servers_per_admin(n_servers: float) -> float:
    """Servers one administrator looks after at a site of ``n_servers`` (the published
    points and their log-linear interpolation; flat outside 1,000-50,000)."""
    if n_servers <= MEDIUM_SITE_SERVERS:
        return SERVERS_PER_ADMIN_MEDIUM
    if n_servers >= LARGE_SITE_SERVERS:
        return SERVERS_PER_ADMIN_LARGE
    slope = math.log(SERVERS_PER_ADMIN_LARGE / SERVERS_PER_ADMIN_MEDIUM) / math.log(
        LARGE_SITE_SERVERS / MEDIUM_SITE_SERVERS
    )
    return SERVERS_PER_ADMIN_MEDIUM * (n_servers / MEDIUM_SITE_SERVERS) ** slope


def headcount_points() -> list[tuple[float, float]]:
    """(servers, administrators) at 0 and each of :data:`BREAKPOINTS_SERVERS`."""
    return [(0.0, 0.0)] + [(n, n / servers_per_admin(n)) for n in BREAKPOINTS_SERVERS]


def admins(n_servers: float) -> float:
    """Administrators a site of ``n_servers`` needs by default (module docstring): linear
    between :func:`headcount_points`, ``n / 1,000`` beyond the last."""
    points = headcount_points()
    last_n, last_a = points[-1]
    if n_servers >= last_n:
        return last_a + (n_servers - last_n) / SERVERS_PER_ADMIN_LARGE
    for (n0, a0), (n1, a1) in zip(points, points[1:], strict=False):
        if n_servers <= n1:
            return a0 + (a1 - a0) * (n_servers - n0) / (n1 - n0)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class StaffRule:
    """How one site charges staff for its owned servers.

    ``usd_per_server_year`` set: a flat figure per server the site gives. Else
    ``servers_per_admin`` set: a flat ratio. Else by fleet size (:func:`admins`). Every
    administrator costs ``usd_per_admin_year``.
    """

    usd_per_server_year: float | None = None
    servers_per_admin: float | None = None
    usd_per_admin_year: float = USD_PER_ADMIN_YEAR

    @property
    def by_fleet_size(self) -> bool:
        return self.usd_per_server_year is None and self.servers_per_admin is None

    @property
    def basis(self) -> str:
        """by_size, ratio (a flat servers-per-admin) or flat (USD per server-year)."""
        if self.usd_per_server_year is not None:
            return "flat"
        return "by_size" if self.servers_per_admin is None else "ratio"

    @property
    def small_fleet_usd_per_server_year(self) -> float:
        """Staff per server-year while the site holds at most 1,000 servers (every server
        at this rate; the saving of a larger fleet is its own charge)."""
        if self.usd_per_server_year is not None:
            return self.usd_per_server_year
        ratio = self.servers_per_admin or SERVERS_PER_ADMIN_MEDIUM
        return self.usd_per_admin_year / ratio


def _given(row: object, column: str) -> float | None:
    value = row.get(column) if hasattr(row, "get") else None
    if value is None or value == "":
        return None
    value = float(value)
    return None if math.isnan(value) else value


def staff_rule(site: object) -> StaffRule:
    """The :class:`StaffRule` of a sites-table row (a catalog site or a problem's own).

    ``site`` is read with ``.get(column)`` (a ``pd.Series`` row or a mapping); an object
    without ``get`` gives none of the staff figures, so the defaults.
    """
    salary = _given(site, "staff_usd_per_admin_year")
    return StaffRule(
        usd_per_server_year=_given(site, "staff_usd_per_server_year"),
        servers_per_admin=_given(site, "staff_servers_per_admin"),
        usd_per_admin_year=USD_PER_ADMIN_YEAR if salary is None else salary,
    )


__all__ = [
    "BREAKPOINTS_SERVERS",
    "STAFF_BY_SIZE_SOURCE",
    "USD_PER_ADMIN_YEAR",
    "StaffRule",
    "admins",
    "headcount_points",
    "servers_per_admin",
    "staff_rule",
]
