"""Names and shapes checked everywhere (issue 34): a quota's region is a region of its
provider in the catalog (a typo, or a look-alike letter, used to switch the quota off
without a word), and a model shape's parameter count agrees with its layers and widths,
its heads with its kv heads (one dropped digit planned a 70B model as a 7B one).

Each refusal is one message naming the file, the field and the fix; exit 2, no plan.
"""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, ROOT, TINY_REGIONS, offering, write_catalog
from solver.cli import app
from solver.errors import ProcureError, closest, lookalikes, skeleton, suggestion
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem
from solver.physics.shapes import active_agrees, shape_count

runner = CliRunner()

CYRILLIC_E = "\u0435"  # CYRILLIC SMALL LETTER IE: drawn as the Latin e in most fonts


def _problem(quota_region: str | None) -> str:
    quota = (
        ""
        if quota_region is None
        else (f'quotas: [{{provider: acme, region: "{quota_region}", max_accelerators: 0}}]\n')
    )
    return (
        "name: quota\nhorizon_months: 1\nmodes: [on_demand]\n"
        + quota
        + "workloads:\n"
        + CHAT_WORKLOAD
    )


@pytest.fixture
def two_regions(tmp_path):
    """The same 1-H100 instance at $4/h in us-east and $5/h in eu-north."""
    return write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("h1", "h100-sxm", 1, 5.0, region="eu-north")],
    )


def _solve(tmp_path, catalog, text):
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    args = ["solve", str(path), "--catalog", str(catalog), "--format", "json"]
    return runner.invoke(app, args)


def test_a_quota_in_a_known_region_holds(tmp_path, two_regions):
    # A quota of 0 accelerators in us-east moves the whole plan to eu-north ($5/h, not $4/h):
    # the quota is on. This is the plan a typo in the region used to lose.
    import json

    free = json.loads(_solve(tmp_path, two_regions, _problem(None)).stdout)
    capped = json.loads(_solve(tmp_path, two_regions, _problem("us-east")).stdout)
    assert {i["region"] for i in free["line_items"]} == {"us-east"}
    assert {i["region"] for i in capped["line_items"]} == {"eu-north"}
    units = sum(i["units"] for i in capped["line_items"])
    # the same units at $5 instead of $4 for the month's 730 hours
    assert capped["total_cost_usd"] == pytest.approx(free["total_cost_usd"] * 5 / 4)
    assert capped["total_cost_usd"] == pytest.approx(units * 5.0 * 730)


@pytest.mark.parametrize(
    "typed, fragments",
    [
        ("us-eats", ["quotas[0].region", "unknown acme region 'us-eats'",
                     "did you mean 'us-east'"]),
        (
            f"us-{CYRILLIC_E}ast",
            ["quotas[0].region", "did you mean 'us-east'?", "U+0435 CYRILLIC SMALL LETTER IE",
             "position 4"],
        ),
        ("ＵＳ-east", ["quotas[0].region", "did you mean 'us-east'?", "FULLWIDTH"]),
        ("us-west-2", ["quotas[0].region", "unknown acme region 'us-west-2'"]),
    ],
)  # fmt: skip
def test_a_quota_region_the_catalog_lacks_is_refused(tmp_path, two_regions, typed, fragments):
    # Before: the quota matched no offering and the plan ignored it (all of it in us-east at
    # $4/h, exit 0). Now: exit 2, one message, no plan.
    result = _solve(tmp_path, two_regions, _problem(typed))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


def test_a_quota_region_of_another_provider_is_refused(tmp_path):
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("g1", "h100-sxm", 1, 4.5, provider="gx")],
        regions=[*TINY_REGIONS, {**TINY_REGIONS[0], "provider": "gx"}],
    )
    text = _problem("us-east").replace("provider: acme", "provider: gx")
    result = _solve(tmp_path, cat, text)
    # gx has offerings only in us-east: that quota is fine
    assert result.exit_code == 0, result.output
    result = _solve(tmp_path, cat, _problem("eu-north").replace("provider: acme", "provider: gx"))
    assert result.exit_code == 2 and "unknown gx region 'eu-north'" in result.output


def test_lookalike_letters_are_named_and_mapped_back():
    name = f"us-{CYRILLIC_E}ast-1"
    assert name != "us-east-1" and skeleton(name) == "us-east-1"
    assert lookalikes(name) == [f"'{CYRILLIC_E}' (U+0435 CYRILLIC SMALL LETTER IE) at position 4"]
    # the name that reads the same is the only suggestion, before any spelling neighbour
    assert closest(name, ["us-east-2", "us-east-1", "eu-east-1"]) == ["us-east-1"]
    assert suggestion(name, ["us-east-1"]).startswith("did you mean 'us-east-1'?")
    # a non-breaking hyphen, a zero-width space, Greek capitals
    assert skeleton("us\u2011east\u200b-1") == "us-east-1"
    # Greek capital A and M are mapped; a delta looks like no Latin letter
    assert skeleton("\u0391\u039c\u0394") == "am\u03b4"
    assert lookalikes("plain-ascii") == []


# --------------------------------------------------------------------------- shapes

LLAMA_3_70B = dict(
    params_b=70.55,
    layers=80,
    hidden_size=8192,
    attention_heads=64,
    kv_heads=8,
    head_dim=128,
    vocab_size=128256,
)
MIXTRAL = dict(
    params_b=46.7,
    active_params_b=12.9,
    layers=32,
    hidden_size=4096,
    attention_heads=32,
    kv_heads=8,
    head_dim=128,
    vocab_size=32000,
    experts=8,
    experts_active=2,
)


def _with_model(model: dict) -> dict:
    data = yaml.safe_load((ROOT / "problems" / "moe-mixtral.yaml").read_text())
    data["workloads"][0]["model"] = model
    return data


def test_the_count_a_shape_holds_worked_by_hand():
    # Llama 3 8B (config.json: 32 layers, hidden 4096, 32 heads, 8 kv heads of 128,
    # intermediate 14336, vocabulary 128256, untied embeddings):
    #   attention 4096 x 128 x (2 x 32 + 2 x 8) = 41,943,040 per layer
    #   MLP 3 x 4096 x 14336 = 176,160,768 per layer
    #   32 x 218,103,808 = 6,979,321,856, + 2 x 128256 x 4096 = 1,050,673,152
    #   = 8,029,995,008: the 8.03B of the model card (untied: the high end of the range)
    count = shape_count(
        params=8.03e9,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        vocab_size=128256,
        intermediate_size=14336,
    )
    assert count.total_high == 8_029_995_008
    assert count.total_low == 8_029_995_008 - 128256 * 4096  # tied: one embedding table
    assert count.total_agrees


def test_every_shipped_preset_agrees_with_its_shape():
    # The tolerance is wide enough for every preset, MoE and MLA included, and the catalog
    # loads (it runs the same check on its models table).
    catalog = load_catalog(None)
    for model_id, row in catalog.models.iterrows():
        count = shape_count(
            params=row["params_b"] * 1e9,
            layers=row["layers"],
            hidden_size=row["hidden_size"],
            attention_heads=row["attention_heads"],
            kv_heads=row["kv_heads"],
            head_dim=row["head_dim"],
            vocab_size=row["vocab_size"],
            experts=row["experts"],
            experts_active=row["experts_active"],
            compressed_kv=row["kv_latent_dim"] > 0,
        )
        assert count.total_agrees, model_id
        assert active_agrees(count, row["active_params_b"] * 1e9), model_id


@pytest.mark.parametrize(
    "change, field, fragments",
    [
        # one dropped digit: 80 layers of 8192 hold 45.3B-159B whatever the MLP width
        ({"params_b": 7.055}, "params_b", ["params_b 7.055 disagrees", "45.3B to 159B",
                                           "dropped or added digit"]),
        ({"params_b": 705.5}, "params_b", ["params_b 705.5 disagrees"]),
        # with the width given the range is tight: 69.5B (tied) to 70.55B (untied)
        ({"intermediate_size": 28672, "params_b": 60}, "params_b",
         ["params_b 60 disagrees", "69.5B to 70.6B", "or intermediate_size"]),
        ({"kv_heads": 7}, "kv_heads", ["attention_heads 64 do not divide evenly by kv_heads 7",
                                       "[1, 2, 4, 8, 16, 32, 64]"]),
        ({"kv_heads": 128}, "kv_heads", ["do not divide evenly by kv_heads 128"]),
        ({"head_dim": None, "attention_heads": 48}, "head_dim",
         ["hidden_size 8192 does not divide evenly by attention_heads 48", "add head_dim"]),
    ],
)  # fmt: skip
def test_a_shape_that_disagrees_with_itself_is_refused(change, field, fragments):
    model = {k: v for k, v in {**LLAMA_3_70B, **change}.items() if v is not None}
    with pytest.raises(ProcureError) as err:
        parse_problem(_with_model(model))
    text = err.value.render()
    assert err.value.field == "workloads[0] (chat-mixtral).model"
    assert field in text
    for fragment in fragments:
        assert fragment in text, text
    assert "more error" not in text


def test_a_shape_that_agrees_is_accepted():
    parse_problem(_with_model(LLAMA_3_70B))
    parse_problem(_with_model({**LLAMA_3_70B, "intermediate_size": 28672}))
    parse_problem(_with_model({**LLAMA_3_70B, "intermediate_size": 28672, "params_b": 65}))
    parse_problem(_with_model(MIXTRAL))
    parse_problem(_with_model({"params_b": 7.0}))  # no layers: nothing to compare


def test_a_mixture_with_a_dropped_digit_in_its_active_count_is_refused():
    # Mixtral's 46.7B over 8 experts gives 2 experts per token 11.1B-16B; 1.29 is a
    # dropped digit of 12.9 (the FLOPs, and so training time, would be 10x too low)
    with pytest.raises(ProcureError) as err:
        parse_problem(_with_model({**MIXTRAL, "active_params_b": 1.29}))
    assert "active_params_b 1.29 disagrees" in err.value.message
    assert "2 of 8 experts" in err.value.message and "active_params_b (a dropped" in err.value.fix


def test_the_cli_refuses_a_bad_shape_with_one_message(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(_with_model({**LLAMA_3_70B, "params_b": 7.055})))
    result = runner.invoke(app, ["solve", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("error:") == 1 and "Traceback" not in result.output
    assert str(path) in result.output and "params_b 7.055" in result.output
    assert "fix:" in result.output


def test_a_catalog_model_row_with_a_dropped_digit_is_refused(tmp_path):
    cat = write_catalog(tmp_path / "cat", [offering("h1", "h100-sxm", 1, 4.0)])
    models = cat / "models.csv"
    lines = models.read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("llama-3-70b,"))
    lines[k] = lines[k].replace(",70.55,70.55,", ",7.055,7.055,", 1)
    models.write_text("\n".join(lines) + "\n")
    with pytest.raises(ProcureError) as err:
        load_catalog(cat)
    assert err.value.field == f"line {k + 1}, params_b"
    assert "params_b 7.055 disagrees" in err.value.message
    result = runner.invoke(app, ["catalog", "validate", "--catalog", str(cat)])
    assert result.exit_code == 2 and "Traceback" not in result.output
