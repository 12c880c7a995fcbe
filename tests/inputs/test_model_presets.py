"""Model presets for the models teams serve today (issue 28): cited shapes, the names
people type, a "did you mean" that ranks the family first, and one message per bad value
of the expert columns (catalog) and fields (problem file)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from solver.errors import ProcureError
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import parse_problem

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
MODELS = CATALOG.models

# The presets before issue 28.
BEFORE = {
    "llama-3-8b",
    "llama-3-70b",
    "llama-3-405b",
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "mistral-7b",
    "mixtral-8x7b",
    "dense-7b",
    "dense-13b",
}


def test_at_least_ten_new_presets_each_citing_its_config():
    new = sorted(set(MODELS.index) - BEFORE)
    assert len(new) >= 10, new
    for model_id in new:
        source = MODELS.at[model_id, "source"]
        assert source.startswith("hf:") and "config.json" in source, (model_id, source)
    # The families the issue names are all there.
    for family in ("llama-3.1", "llama-3.3", "qwen2.5", "qwen3", "mixtral", "deepseek", "gemma"):
        assert any(m.startswith(family) for m in MODELS.index), family


@pytest.mark.parametrize(
    "typed,preset",
    [
        ("llama-3.3-70b-instruct", "llama-3.3-70b"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("llama-3.1-405b", "llama-3-405b"),
        ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"),
        ("qwen2.5-7b-instruct", "qwen2.5-7b"),
        ("Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"),
        ("Qwen/Qwen3-32B", "qwen3-32b"),
        ("mixtral-8x7b", "mixtral-8x7b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("Mixtral 8x22B", "mixtral-8x22b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),
        ("deepseek-v3", "deepseek-v3"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("gemma-2-27b", "gemma-2-27b"),
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        # names resolved before issue 28 still resolve to the same rows
        ("Llama 3 70B", "llama-3-70b"),
        ("llama3-8b", "llama-3-8b"),
        ("mistral-7b-instruct", "mistral-7b"),
        ("13b", "dense-13b"),
    ],
)
def test_names_people_type_resolve(typed, preset):
    assert CATALOG.resolve_model(typed) == preset


def _catalog_with_models(tmp_path: Path, models: pd.DataFrame) -> Path:
    """The shipped catalog with another models.csv."""
    folder = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalogs", folder)
    models.to_csv(folder / "models.csv", index=False)
    return folder


def _shipped_models() -> pd.DataFrame:
    return pd.read_csv(ROOT / "catalogs" / "models.csv", dtype=str, keep_default_na=False)


def test_did_you_mean_ranks_the_family_first(tmp_path):
    # With the presets of before issue 28, "llama-3.3-70b-instruct" was answered "did you
    # mean 'mistral-7b'" first: spelling alone matched the shared "instruct" in
    # mistral-7b-instruct. The family (llama) and the size (70b) now come first.
    old = _shipped_models()
    old = old[old["model_id"].isin(BEFORE)].drop(
        columns=["experts", "experts_active", "kv_latent_dim"]
    )
    catalog = load_catalog(_catalog_with_models(tmp_path, old))
    with pytest.raises(ProcureError) as err:
        catalog.resolve_model("llama-3.3-70b-instruct")
    assert err.value.fix.startswith("did you mean 'llama-3-70b'"), err.value.fix
    assert "mistral" not in err.value.fix
    # On the shipped presets, near misses land in their family, closest first.
    for typed, first in [
        ("llama-3.3-70b-instruc", "llama-3.3-70b"),
        ("meta-llama/Llama-3.2-70B-Instruct", "llama-3"),
        ("qwen2.5-32b-instruct", "qwen"),
        ("mixtral-8x7b-instruct-v0.2", "mixtral-8x7b"),
        ("deepseek-v2", "deepseek-v3"),
        ("gemma-3-12b-it", "gemma-3-27b"),
    ]:
        with pytest.raises(ProcureError) as err:
            CATALOG.resolve_model(typed)
        assert err.value.fix.startswith(f"did you mean '{first}"), (typed, err.value.fix)


def test_expert_rows_agree_with_their_config_shapes():
    # The routed parameters the physics derives from the two published counts,
    # (params - active) / (experts - experts_active) per expert over the MoE layers, are
    # those of the config's expert MLPs (3 matrices of hidden x moe_intermediate):
    shapes = {
        # model: (hidden, expert intermediate, MoE layers)
        "mixtral-8x7b": (4096, 14336, 32),  # 5.637e9; (46.7 - 12.9) / 6 = 5.633e9
        "mixtral-8x22b": (6144, 16384, 56),  # 16.91e9; (141 - 39) / 6 = 17.0e9
        "qwen3-235b-a22b": (4096, 1536, 94),  # 1.774e9; (235 - 22) / 120 = 1.775e9
        "deepseek-v3": (7168, 2048, 58),  # 2.554e9 (61 layers less 3 dense); 634/248 = 2.556e9
    }
    moe = MODELS[MODELS["experts"] > MODELS["experts_active"]]
    assert set(moe.index) == set(shapes)
    for model_id, (hidden, inter, layers) in shapes.items():
        row = MODELS.loc[model_id]
        per_expert = (row["params_b"] - row["active_params_b"]) * 1e9
        per_expert /= row["experts"] - row["experts_active"]
        assert per_expert == pytest.approx(3 * hidden * inter * layers, rel=0.01), model_id
    # Every dense row uses all its parameters, with one expert and a standard KV cache
    # except DeepSeek-V3's latent one (kv_lora_rank 512 + qk_rope_head_dim 64).
    dense = MODELS.drop(index=moe.index)
    assert (dense["active_params_b"] == dense["params_b"]).all()
    assert (dense[["experts", "experts_active"]] == 1).all().all()
    assert MODELS["kv_latent_dim"].to_dict() == {
        m: (576 if m == "deepseek-v3" else 0) for m in MODELS.index
    }


def test_a_catalog_without_the_expert_columns_loads_as_dense(tmp_path):
    # Catalogs written before issue 28 have no experts, experts_active, kv_latent_dim:
    # they load with 1, 1 and 0 (a dense model, standard KV cache).
    old = _shipped_models().drop(columns=["experts", "experts_active", "kv_latent_dim"])
    catalog = load_catalog(_catalog_with_models(tmp_path, old))
    row = catalog.models.loc["llama-3-8b"]
    assert (row["experts"], row["experts_active"], row["kv_latent_dim"]) == (1, 1, 0)


@pytest.mark.parametrize(
    "model_id,column,value,words,fix",
    [
        ("mixtral-8x7b", "experts_active", "9", "experts_active 9 is above experts 8", "at most"),
        ("mixtral-8x7b", "experts", "0", "experts is 0", "correct experts"),
        ("mixtral-8x7b", "experts", "2.5", "experts must be a whole number", "whole number"),
        ("mixtral-8x7b", "active_params_b", "46.7", "needs active_params_b below", "model card"),
        ("llama-3-8b", "active_params_b", "9", "active_params_b 9 is above", "at most params_b"),
        ("deepseek-v3", "kv_latent_dim", "-576", "kv_latent_dim is -576", "correct"),
        ("deepseek-v3", "kv_latent_dim", "", "kv_latent_dim is missing", "fill in"),
    ],
)
def test_a_bad_expert_value_gets_one_message_naming_the_field(
    tmp_path, model_id, column, value, words, fix
):
    models = _shipped_models()
    line = int(models.index[models["model_id"] == model_id][0]) + 2
    models.loc[models["model_id"] == model_id, column] = value
    with pytest.raises(ProcureError) as err:
        load_catalog(_catalog_with_models(tmp_path, models))
    assert words in err.value.message, err.value.message
    assert err.value.field == f"line {line}, {column}"
    assert err.value.file.endswith("models.csv")
    assert fix in err.value.fix, err.value.fix


def _problem_with_model(model) -> dict:
    data = yaml.safe_load((ROOT / "problems" / "moe-mixtral.yaml").read_text())
    data["workloads"][0]["model"] = model
    return data


@pytest.mark.parametrize(
    "shape,field,words",
    [
        (
            {"params_b": 47, "active_params_b": 13, "experts": 8, "experts_active": 9},
            "model",
            "experts_active 9 is above experts 8; set experts_active",
        ),
        (
            {"params_b": 47, "experts": 8, "experts_active": 2},
            "model",
            "needs active_params_b below params_b; add active_params_b",
        ),
        (
            {"params_b": 47, "active_params_b": 50},
            "model",
            "active_params_b 50 is above params_b 47; set active_params_b",
        ),
        ({"params_b": 47, "experts": 0}, "model.experts", "greater than 0"),
        ({"params_b": 47, "kv_latent_dim": -1}, "model.kv_latent_dim", "greater than or equal"),
        ({"params_b": 47, "num_experts": 8}, "model.num_experts", "Extra inputs"),
    ],
)
def test_a_bad_inline_shape_gets_one_message_naming_the_field(shape, field, words):
    # The message is about the shape, not "Input should be a valid string" (the preset-name
    # branch of `model: str | shape`), and says what to write.
    with pytest.raises(ProcureError) as err:
        parse_problem(_problem_with_model(shape))
    assert err.value.field == f"workloads[0] (chat-mixtral).{field}"
    assert words in err.value.message, err.value.message
    assert "more error" not in err.value.message
    if "num_experts" in shape:
        assert err.value.fix == "remove 'num_experts' or rename it to 'experts'"


def test_an_inline_mixture_of_experts_is_served_as_the_preset():
    # The Mixtral preset written out inline gives the same model to the physics.
    from solver.inputs.presets import resolve_model

    inline = {
        "params_b": 46.7,
        "active_params_b": 12.9,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "experts": 8,
        "experts_active": 2,
    }
    problem = parse_problem(_problem_with_model(inline))
    spec = resolve_model(problem.workloads[0].model, CATALOG, "w")
    preset = resolve_model("mixtral-8x7b", CATALOG, "w")
    for field in ("params", "active_params", "layers", "kv_heads", "head_dim", "experts"):
        assert getattr(spec, field) == getattr(preset, field), field
    assert spec.is_moe and spec.experts_active == 2 and spec.kv_latent_dim == 0
