"""The "buy more?" question under owned-hardware staff by fleet size (issue 28).

Run: python bench/quality/owned_staff.py

A team owns two 8x H100 servers (hgx-h100-8) in its own room in Ashburn (the problem of
tests/test_solve_words.py, with room for 24 servers and ``owned`` allowed), serving Llama 3
70B to 100,000 daily users for 36 months in the seed's four periods. For each staff rule
it prints the plan's cost, the servers it buys and what it rents, under the default cost
policy and under the policy that compares a server and a rental on the same footing
(amortised):

- the old default: $95.36 per server-year (one admin per 1,000 servers, flat);
- the new default: by the site's fleet size (140 servers per admin up to 1,000; $966.16
  per server-year at the loaded salary);
- the conventional hand-run ratio: 20 servers per admin.

Then the "buy more?" break-even: the factor on every rental price (catalogs/offerings.csv)
from which the plan buys a server, found by bisection to 0.01, per rule and policy.

Also the shipped seed (owned allowed, none bought), whose cost this change must not move.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem, parse_problem
from solver.inputs.yamlio import load_yaml
from solver.solve import solve_problem

ROOT = Path(__file__).resolve().parents[2]

OWN_SITE = """\
name: own-site-buy-more
horizon_months: 36
start: 2027-01
periods:  # as the seed's: a server bought in one period serves the next ones
  - {name: m01-03, months: 3}
  - {name: m04-15, months: 12}
  - {name: m16-27, months: 12}
  - {name: m28-36, months: 9}
modes: [on_demand, reserved_1y, owned]
accelerators: [h100, h200]
sites:
  - name: our-dc
    location: Ashburn, VA
    region: aws/us-east-1
    pue: 1.5
    power_cap_kw: 250
existing_fleet:
  - {server: hgx-h100-8, site: our-dc, units: 2}
workloads:
  - kind: inference
    name: chat-70b
    model: llama-3-70b
    demand: {users: 100000, requests_per_user_per_day: 10}
    prompt_tokens: 1000
    output_tokens: 400
    peak_to_average: 2
    redundancy: n_plus_1
    ttft_slo: 1 s
    tpot_slo: 50 ms
"""

RULES = {
    "old default, $95.36/server-year flat": {"staff_usd_per_server_year": 95.36},
    "new default, by fleet size": {},
    "20 servers per admin": {"staff_servers_per_admin": 20},
}
POLICIES = {
    "cash, no residual (default)": {},
    "amortised": {"owned_cost_policy": "amortised"},
}


def _summary(plan) -> str:
    bought = sum(i.units for i in plan.line_items if i.item == "purchase")
    rented = {}
    for i in plan.line_items:
        if i.item in ("rent", "reservation") or (i.item == "use" and i.mode != "owned"):
            rented[i.offering] = max(rented.get(i.offering, 0.0), i.units)
    rent = ", ".join(f"{o} x{u:g}" for o, u in sorted(rented.items())) or "none"
    return f"${plan.total_cost_usd:,.2f}; bought {bought:g}; rented/reserved (max units) {rent}"


PRICE_COLUMNS = (
    "on_demand_usd_per_hour",
    "spot_usd_per_hour",
    "reserved_1y_usd_per_hour",
    "reserved_3y_usd_per_hour",
)


def _bought(data: dict, catalog, rent_factor: float) -> float:
    """Servers the plan buys with every rental price x ``rent_factor``."""
    offerings = catalog.offerings.copy()
    for column in PRICE_COLUMNS:
        offerings[column] = offerings[column] * rent_factor
    plan = solve_problem(parse_problem(data), replace(catalog, offerings=offerings))
    assert plan.verified
    return sum(i.units for i in plan.line_items if i.item == "purchase")


def break_even_rent(data: dict, catalog, top: float = 4.0) -> float | None:
    """Least factor on every rental price (to 0.01) at which the plan buys a server;
    None if it buys none even at ``top``."""
    low, high = 1.0, top
    if _bought(data, catalog, low):
        return low
    if not _bought(data, catalog, high):
        return None
    while high - low > 0.01:
        mid = (low + high) / 2
        low, high = (low, mid) if _bought(data, catalog, mid) else (mid, high)
    return high


def main() -> None:
    catalog = load_catalog()
    base = load_yaml(OWN_SITE, file="bench/quality/owned_staff.py")
    for policy, extra in POLICIES.items():
        for rule, staff in RULES.items():
            data = {**base, **extra}
            data["sites"] = [{**base["sites"][0], **staff}]
            plan = solve_problem(parse_problem(data), catalog)
            assert plan.verified, [c for c in plan.checks if not c.ok]
            even = break_even_rent(data, catalog)
            buys = "never (to 4x)" if even is None else f"at rents x{even:.2f}"
            print(f"{policy:28s} | {rule:38s} | {_summary(plan)} | buys a server {buys}")
    seed = solve_problem(load_problem(ROOT / "problems" / "seed-2m-13b.yaml"), catalog)
    print(f"seed-2m-13b: ${seed.total_cost_usd:,.2f}, verified {seed.verified}")


if __name__ == "__main__":
    main()
