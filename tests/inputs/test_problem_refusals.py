"""The refusal table: every bad input a user can cause gets one clear message and an exit code.

Each case is one bad input run through the CLI: the expected exit code (2 bad input,
3 infeasible), fragments the message must contain (what is wrong, where, the fix), and
never a traceback.
"""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import offering, write_catalog
from solver.cli import app

runner = CliRunner()

GOOD = """\
name: t
horizon_months: 12
budget_usd: 1000000
workloads:
  - kind: inference
    name: chat
    model: llama-3-8b
    demand: {users: 1000, requests_per_user_per_day: 10}
    prompt_tokens: 500
    output_tokens: 200
    ttft_slo: 1 s
    tpot_slo: 50 ms
"""
TRAIN = "  - {kind: training, name: tr, model: dense-7b, tokens: 1.0e9}\n"


def edit(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


# (id, problem text or None for GOOD, extra CLI args, catalog edit, exit code, fragments)
CASES = [
    (
        "yaml syntax",
        edit("prompt_tokens: 500", "prompt_tokens: [500"),
        [],
        None,
        2,
        ["YAML", "line"],
    ),
    ("not a mapping", "- just\n- a list\n", [], None, 2, ["mapping"]),
    ("empty file", "", [], None, 2, ["empty"]),
    (
        "typo top-level field",
        edit("budget_usd:", "budget_usdd:"),
        [],
        None,
        2,
        ["budget_usdd", "budget_usd"],
    ),
    (
        "typo workload field",
        edit("prompt_tokens:", "promt_tokens:"),
        [],
        None,
        2,
        ["promt_tokens", "prompt_tokens"],
    ),
    (
        "wrong type",
        edit("horizon_months: 12", "horizon_months: twelve"),
        [],
        None,
        2,
        ["horizon_months", "number"],
    ),
    (
        "negative budget",
        edit("budget_usd: 1000000", "budget_usd: -5"),
        [],
        None,
        2,
        ["budget_usd", "greater than 0"],
    ),
    (
        "zero horizon",
        edit("horizon_months: 12", "horizon_months: 0"),
        [],
        None,
        2,
        ["horizon_months", "greater than 0"],
    ),
    (
        "negative carbon cap",
        edit("budget_usd: 1000000", "carbon_cap_tco2e: -1"),
        [],
        None,
        2,
        ["carbon_cap_tco2e"],
    ),
    (
        "negative tokens",
        edit("workloads:\n", "workloads:\n" + TRAIN.replace("1.0e9", "-5")),
        [],
        None,
        2,
        ["tokens", "greater than 0"],
    ),
    (
        "slo without unit",
        edit("tpot_slo: 50 ms", "tpot_slo: 50"),
        [],
        None,
        2,
        ["tpot_slo", "no unit"],
    ),
    (
        "slo unknown unit",
        edit("tpot_slo: 50 ms", "tpot_slo: 50 parsecs"),
        [],
        None,
        2,
        ["tpot_slo", "not a duration"],
    ),
    (
        "impossible slo",
        edit("tpot_slo: 50 ms", "tpot_slo: 0.1 ms"),
        [],
        None,
        3,
        ["cannot run", "best reachable"],
    ),
    (
        "no demand",
        edit("    demand: {users: 1000, requests_per_user_per_day: 10}\n", ""),
        [],
        None,
        2,
        ["demand", "Field required"],
    ),
    (
        "half a demand",
        edit("{users: 1000, requests_per_user_per_day: 10}", "{users: 1000}"),
        [],
        None,
        2,
        ["requests_per_user_per_day"],
    ),
    (
        "two demands",
        edit(
            "{users: 1000, requests_per_user_per_day: 10}", "{tokens_per_s: 5, requests_per_s: 1}"
        ),
        [],
        None,
        2,
        ["exactly one"],
    ),
    ("unknown kind", edit("kind: inference", "kind: inferense"), [], None, 2, ["kind"]),
    (
        "unknown preset",
        edit("llama-3-8b", "llama-3-8bb"),
        [],
        None,
        2,
        ["llama-3-8bb", "llama-3-8b"],
    ),
    (
        "unknown measured accelerator",
        edit(
            "    tpot_slo: 50 ms\n",
            "    tpot_slo: 50 ms\n    measured_throughput_rps: {H1OO: [1]}\n"
            "    traffic_mix: [{prompt_tokens: 5, output_tokens: 5, share: 1}]\n",
        ),
        [],
        None,
        2,
        ["H1OO", "h100-sxm"],
    ),
    (
        "unknown provider",
        edit("budget_usd:", "providers: [acmee]\nbudget_usd:"),
        [],
        None,
        2,
        ["acmee", "acme"],
    ),
    (
        "unknown region",
        edit("budget_usd:", "regions: [us-easst]\nbudget_usd:"),
        [],
        None,
        2,
        ["us-easst", "us-east"],
    ),
    (
        "unknown residency zone",
        edit("budget_usd:", "residency: [mars]\nbudget_usd:"),
        [],
        None,
        2,
        ["mars", "residency"],
    ),
    (
        "unknown mode",
        edit("budget_usd:", "modes: [rented]\nbudget_usd:"),
        [],
        None,
        2,
        ["modes", "on_demand"],
    ),
    (
        "unknown objective",
        edit("budget_usd:", "objective: cheapest\nbudget_usd:"),
        [],
        None,
        2,
        ["objective", "min_cost"],
    ),
    (
        "period out of horizon",
        edit("tpot_slo: 50 ms", "tpot_slo: 50 ms\n    periods: [q9]"),
        [],
        None,
        2,
        ["q9"],
    ),
    (
        "periods do not fill horizon",
        edit("budget_usd:", "periods: [{name: a, months: 5}]\nbudget_usd:"),
        [],
        None,
        2,
        ["periods", "horizon"],
    ),
    (
        "duplicate workload names",
        edit("workloads:\n", "workloads:\n" + TRAIN.replace("tr,", "chat,")),
        [],
        None,
        2,
        ["chat", "unique"],
    ),
    (
        "unknown quota accelerator",
        edit(
            "budget_usd:",
            "quotas: [{provider: acme, accelerator: H1OO, max_accelerators: 8}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["quotas[0].accelerator", "h100-sxm"],
    ),
    (
        "unknown site",
        edit("budget_usd:", "sites: [colo-mars]\nbudget_usd:"),
        [],
        None,
        2,
        ["colo-mars", "colo-us"],
    ),
    (
        "unknown reserved offering",
        edit(
            "budget_usd:",
            "existing_reservations: [{offering: acme/us-east/h9, mode: reserved_1y,"
            " units: 1, months_remaining: 3}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["acme/us-east/h9", "acme/us-east/h1"],
    ),
    (
        "training window reversed",
        edit(
            "horizon_months: 12\n",
            "horizon_months: 12\nperiods: [{name: a, months: 6}, {name: b, months: 6}]\n",
        ).replace(
            "workloads:\n", "workloads:\n" + TRAIN.replace("}", ", start_period: b, end_period: a}")
        ),
        [],
        None,
        2,
        ["end_period"],
    ),
    (
        "infeasible budget",
        edit("budget_usd: 1000000", "budget_usd: 10"),
        [],
        None,
        3,
        ["no feasible plan", "short by"],
    ),
    # issue 28: accelerator and vendor lists, runtimes, sites described in the problem
    (
        "unknown accelerator in accelerators",
        edit("budget_usd:", "accelerators: [H1OO]\nbudget_usd:"),
        [],
        None,
        2,
        ["accelerators[0]", "unknown accelerator 'H1OO'", "h100-sxm"],
    ),
    (
        "unknown vendor",
        edit("budget_usd:", "vendors: [nvdia]\nbudget_usd:"),
        [],
        None,
        2,
        ["vendors[0]", "unknown vendor", "did you mean 'nvidia'?"],
    ),
    (
        "accelerator written singular",
        edit("budget_usd:", "accelerator: h100\nbudget_usd:"),
        [],
        None,
        2,
        ["remove 'accelerator' or rename it to 'accelerators'"],
    ),
    (
        "empty accelerators list",
        edit("budget_usd:", "accelerators: []\nbudget_usd:"),
        [],
        None,
        2,
        ["accelerators", "at least one"],
    ),
    (
        "unknown accelerator in a workload's deny list",
        edit("    tpot_slo: 50 ms\n", "    tpot_slo: 50 ms\n    exclude_accelerators: [l5]\n"),
        [],
        None,
        2,
        ["workloads[0] (chat).exclude_accelerators[0]", "'l4'"],
    ),
    (
        "accelerator allowed and excluded",
        edit("budget_usd:", "accelerators: [l4]\nexclude_accelerators: [L4]\nbudget_usd:"),
        [],
        None,
        2,
        ["accelerators[0]", "exclude_accelerators", "remove l4"],
    ),
    (
        "runtime with no hardware left",
        edit("    tpot_slo: 50 ms\n", "    tpot_slo: 50 ms\n    runtime: vllm-rocm\n"),
        [],
        None,
        2,
        ["runtime", "no accelerator", "runtime vllm-rocm runs on AMD hardware only"],
    ),
    (
        "unknown runtime",
        edit("    tpot_slo: 50 ms\n", "    tpot_slo: 50 ms\n    runtime: cuda\n"),
        [],
        None,
        2,
        ["runtime", "vllm-cuda", "write one of the values"],
    ),
    (
        "own site without region or figures",
        edit("budget_usd:", "sites: [{name: our-dc, pue: 1.5}]\nbudget_usd:"),
        [],
        None,
        2,
        ["sites[0] (our-dc)", "no region", "grid_gco2_per_kwh"],
    ),
    (
        "own site unknown region",
        edit(
            "budget_usd:",
            "sites: [{name: our-dc, region: us-eastt, pue: 1.5, power_cap_kw: 20}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["sites[0] (our-dc).region", "'us-east'"],
    ),
    (
        "own site named like a catalog site",
        edit(
            "budget_usd:",
            "sites: [{name: colo-us, region: us-east, pue: 1.5, power_cap_kw: 20}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["sites[0] (colo-us).name", "is a catalog site", "rename it"],
    ),
    (
        "own site pue below 1",
        edit(
            "budget_usd:",
            "sites: [{name: our-dc, region: us-east, pue: 0.9, power_cap_kw: 20}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["sites[0] (our-dc).pue", "greater than or equal to 1"],
    ),
    (
        "own site with nothing to host",
        edit("budget_usd:", "sites: [{name: our-dc, region: us-east, pue: 1.5}]\nbudget_usd:"),
        [],
        None,
        2,
        ["sites[0] (our-dc).power_cap_kw", "existing_fleet"],
    ),
    # staff by fleet size (issue 28): a ratio of 0 servers per admin, a negative salary,
    # and a flat figure given with a ratio
    (
        "own site staff ratio zero",
        edit(
            "budget_usd:",
            "sites: [{name: our-dc, region: us-east, pue: 1.5, power_cap_kw: 20,\n"
            "         staff_servers_per_admin: 0}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["sites[0] (our-dc).staff_servers_per_admin", "greater than 0"],
    ),
    (
        "own site staff salary negative",
        edit(
            "budget_usd:",
            "sites: [{name: our-dc, region: us-east, pue: 1.5, power_cap_kw: 20,\n"
            "         staff_usd_per_admin_year: -5}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["sites[0] (our-dc).staff_usd_per_admin_year", "greater than or equal to 0"],
    ),
    (
        "own site staff flat and ratio",
        edit(
            "budget_usd:",
            "sites: [{name: our-dc, region: us-east, pue: 1.5, power_cap_kw: 20,\n"
            "         staff_usd_per_server_year: 4768, staff_servers_per_admin: 20}]\n"
            "budget_usd:",
        ),
        [],
        None,
        2,
        ["sites[0]", "staff_usd_per_server_year", "keep staff_usd_per_server_year alone"],
    ),
    (
        "own site entry of the wrong type",
        edit("budget_usd:", "sites: [colo-us, 5]\nbudget_usd:"),
        [],
        None,
        2,
        ["sites[1]", "describe your own site"],
    ),
    (
        "fleet at a site nobody described",
        edit(
            "budget_usd:",
            "existing_fleet: [{server: box-h100, site: our-dc, units: 2}]\nbudget_usd:",
        ),
        [],
        None,
        2,
        ["existing_fleet[0].site", "unknown site 'our-dc'", "sites: {name: our-dc"],
    ),
    ("missing problem file", None, ["__missing__"], None, 2, ["not found"]),
    ("unknown format", None, ["--format", "xml"], None, 2, ["--format", "table"]),
    ("unknown solver", None, ["--solver", "gurobi"], None, 2, ["unknown solver", "highs"]),
    ("negative gap", None, ["--gap", "-1"], None, 2, ["gap"]),
    ("zero time limit", None, ["--time-limit", "0"], None, 2, ["time limit"]),
    (
        "catalog folder missing",
        None,
        ["--catalog", "__nowhere__"],
        None,
        2,
        ["catalog folder not found"],
    ),
    (
        "catalog missing column",
        None,
        [],
        ("offerings.csv", "drop", "on_demand_usd_per_hour"),
        2,
        ["offerings.csv", "on_demand_usd_per_hour", "header"],
    ),
    (
        "catalog negative price",
        None,
        [],
        ("offerings.csv", "set", "on_demand_usd_per_hour", "-1"),
        2,
        ["offerings.csv", "line 2", "positive"],
    ),
    (
        "catalog unknown accelerator",
        None,
        [],
        ("offerings.csv", "set", "accelerator_id", "h200x"),
        2,
        ["h200x", "accelerators.csv"],
    ),
    (
        "catalog duplicate key",
        None,
        [],
        ("offerings.csv", "dup", "offering_id"),
        2,
        ["duplicate", "offering_id"],
    ),
    (
        "catalog bad boolean",
        None,
        [],
        ("offerings.csv", "set", "nvlink", "maybe"),
        2,
        ["nvlink", "true or false"],
    ),
    (
        "catalog spot above on-demand",
        None,
        [],
        ("offerings.csv", "set", "spot_usd_per_hour", "99"),
        2,
        ["spot_usd_per_hour", "on-demand"],
    ),
    # issue 29: price provenance and currency
    (
        "unknown price confidence",
        edit("budget_usd:", "min_price_confidence: official\nbudget_usd:"),
        [],
        None,
        2,
        ["min_price_confidence", "'list'"],
    ),
    (
        "negative price age",
        edit("budget_usd:", "max_price_age_days: -5\nbudget_usd:"),
        [],
        None,
        2,
        ["max_price_age_days", "greater than 0"],
    ),
    (
        "currency not a code",
        edit("budget_usd:", "currency: euros\nbudget_usd:"),
        [],
        None,
        2,
        ["currency", "ISO 4217"],
    ),
    (
        "problem currency without a rate",
        edit("budget_usd:", "currency: EUR\nbudget_usd:"),
        [],
        None,
        2,
        ["p.yaml: currency", "EUR has no exchange rate", "exchange_rates.csv"],
    ),
    (
        "catalog price in a currency without a rate",
        None,
        [],
        ("offerings.csv", "all", "currency", "CHF"),
        2,
        ["offerings.csv: line 2, currency", "CHF has no exchange rate", "exchange_rates.csv"],
    ),
    (
        "catalog price date not a day",
        None,
        [],
        # with price_note the catalog is in the issue-29 format: a date is a day or unknown
        ("offerings.csv", "all", "price_note", "read in November", "price_date", "2026-11"),
        2,
        ["offerings.csv: line 2, price_date", "YYYY-MM-DD"],
    ),
    (
        "price older than the problem allows",
        edit("budget_usd:", "start: 2027-06\nmax_price_age_days: 30\nbudget_usd:"),
        [],
        None,
        2,
        ["offerings.csv", "191 days old at the start, over 30", "max_price_age_days"],
    ),
    # training_margin (issue 28 part 5): one message naming the field, the values it takes
    # and the fix, on the problem and on a training workload
    (
        "training margin word",
        edit("budget_usd:", "training_margin: lowest\nbudget_usd:"),
        [],
        None,
        2,
        ["p.yaml", "training_margin", "'lowest'", "'low'", "'point'", "(0, 1]", "fix:"],
    ),
    (
        "training margin above 1",
        edit("budget_usd:", "training_margin: 1.2\nbudget_usd:"),
        [],
        None,
        2,
        ["training_margin", "1.2", "number in (0, 1]"],
    ),
    (
        "training margin zero on a workload",
        edit("workloads:\n", "workloads:\n" + TRAIN.replace("}", ", training_margin: 0}")),
        [],
        None,
        2,
        ["workloads[0] (tr).training_margin", "is 0", "'low'"],
    ),
    (
        "training margin empty",
        edit("budget_usd:", "training_margin:\nbudget_usd:"),
        [],
        None,
        2,
        ["training_margin", "empty", "remove the key"],
    ),
    (
        "training margin on an inference workload",
        edit("    tpot_slo: 50 ms\n", "    tpot_slo: 50 ms\n    training_margin: low\n"),
        [],
        None,
        2,
        ["workloads[0] (chat).training_margin", "remove 'training_margin'"],
    ),
]


def catalog_edit(directory, change) -> None:
    file, action, column, *value = change
    frame = pd.read_csv(directory / file, dtype=str, keep_default_na=False)
    if action == "drop":
        frame = frame.drop(columns=[column])
    elif action == "set":
        frame.loc[0, column] = value[0]
    elif action == "all":  # column, value[, column, value ...]: set in every row
        pairs = [column, *value]
        for name, cell in zip(pairs[::2], pairs[1::2], strict=True):
            frame[name] = cell
    elif action == "dup":
        frame.loc[1, column] = frame.loc[0, column]
    frame.to_csv(directory / file, index=False)


@pytest.mark.parametrize(
    "case_id,text,args,cat_change,code,fragments", CASES, ids=[c[0] for c in CASES]
)
def test_refusal(tmp_path, case_id, text, args, cat_change, code, fragments):
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0, spot=2.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    if cat_change:
        catalog_edit(cat, cat_change)
    prob = tmp_path / "p.yaml"
    prob.write_text(GOOD if text is None else text)
    args = [str(tmp_path / a) if a.startswith("__") else a for a in args]
    target = args.pop(0) if args and args[0].endswith("__missing__") else str(prob)
    if "--catalog" not in args:
        args += ["--catalog", str(cat)]
    res = runner.invoke(app, ["solve", target, *args])
    output = res.output.replace(str(tmp_path), "TMP")  # fragments must not match the path
    assert res.exit_code == code, output
    assert (
        "Traceback" not in output and res.exception is None or isinstance(res.exception, SystemExit)
    ), output
    assert output.startswith("error: "), output
    for fragment in fragments:
        assert fragment in output, (fragment, output)
    assert "fix:" in output, output


def test_the_table_is_big_enough():
    assert len(CASES) >= 30 and len({c[0] for c in CASES}) == len(CASES)
