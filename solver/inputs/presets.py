"""Model presets resolved to their shape (the catalog/problem layer): a workload's
``model`` (a preset name from the catalog's models table, or a shape given inline)
becomes a :class:`ModelSpec` that compile, estimate and the verifier read alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from solver.errors import ProcureError
from solver.inputs.catalog import Catalog
from solver.inputs.problem import ModelShape

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: parameters (counts) and shape.

    ``params`` are all the weights (what memory holds), ``active_params`` those one token
    uses (what the FLOPs count): the same for a dense model. ``experts`` routed experts per
    mixture-of-experts layer, ``experts_active`` of them per token (1 and 1 when dense);
    ``kv_latent_dim`` values per token per layer in a compressed (MLA) KV cache, 0 for
    standard attention.
    """

    model_id: str
    params: float
    active_params: float
    layers: float | None
    hidden_size: float | None
    attention_heads: float | None
    kv_heads: float | None
    head_dim: float | None
    experts: float = 1.0
    experts_active: float = 1.0
    kv_latent_dim: float = 0.0

    @property
    def is_moe(self) -> bool:
        """Whether each token uses fewer routed experts than the model has."""
        return self.experts > self.experts_active


def resolve_model(model: str | ModelShape, catalog: Catalog, where: str) -> ModelSpec:
    """Turn a preset name or a shape into a :class:`ModelSpec`."""
    if isinstance(model, str):
        try:
            model_id = catalog.resolve_model(model)
        except ProcureError as exc:
            raise ProcureError(exc.message, field=f"{where}.model", fix=exc.fix) from None
        row = cast("pd.Series", catalog.models.loc[model_id])  # one id: one row, not a frame
        return ModelSpec(
            model_id=model_id,
            params=float(row["params_b"]) * 1e9,
            active_params=float(row["active_params_b"]) * 1e9,
            layers=float(row["layers"]),
            hidden_size=float(row["hidden_size"]),
            attention_heads=float(row["attention_heads"]),
            kv_heads=float(row["kv_heads"]),
            head_dim=float(row["head_dim"]),
            experts=float(row.get("experts", 1)),
            experts_active=float(row.get("experts_active", 1)),
            kv_latent_dim=float(row.get("kv_latent_dim", 0)),
        )
    head_dim = model.head_dim
    if head_dim is None and model.hidden_size and model.attention_heads:
        head_dim = model.hidden_size // model.attention_heads
    return ModelSpec(
        model_id="custom",
        params=model.params_b * 1e9,
        active_params=(model.active_params_b or model.params_b) * 1e9,
        layers=model.layers,
        hidden_size=model.hidden_size,
        attention_heads=model.attention_heads,
        kv_heads=model.kv_heads or model.attention_heads,
        head_dim=head_dim,
        experts=float(model.experts),
        experts_active=float(model.experts_active),
        kv_latent_dim=float(model.kv_latent_dim),
    )
