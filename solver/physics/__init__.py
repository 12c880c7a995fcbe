"""Physics: pure, vectorised functions of DESIGN.md section 4.

Every function takes numbers or numpy arrays (broadcasting) and returns the same;
units are in the names. Nothing here reads files or knows about the MIP.
"""

from solver.physics.constants import BYTES_PER_VALUE, bytes_per_value
from solver.physics.energy import (
    embodied_kgco2e_per_hour,
    energy_kwh,
    operational_kgco2e,
    power_w_at_utilisation,
)
from solver.physics.hardware import (
    DEVICE_COLUMNS,
    Device,
    compute_peak_tflops,
    device_figures,
    one_row_table,
)
from solver.physics.inference import (
    DecodeResult,
    ServedModel,
    StepModel,
    best_decode,
    calibration_factor,
    demand_tokens_per_s,
    experts_hit_share,
    kv_bytes_per_token,
    max_batch,
    prefill_s,
    routed_share_per_step,
    served_model,
    step_model,
)
from solver.physics.training import (
    activation_gb_per_device,
    cluster_training_hours,
    default_mfu,
    mfu_family,
    scaleup_joins_units,
    scaling_efficiency,
    spot_lost_fraction,
    spot_preemptions_per_instance_hour,
    training_flops,
    training_hours,
    training_memory_per_device_gb,
    training_min_devices,
    training_nodes,
    training_state_bytes_per_param,
)

__all__ = [
    "BYTES_PER_VALUE",
    "DEVICE_COLUMNS",
    "DecodeResult",
    "Device",
    "ServedModel",
    "StepModel",
    "activation_gb_per_device",
    "best_decode",
    "calibration_factor",
    "bytes_per_value",
    "compute_peak_tflops",
    "device_figures",
    "default_mfu",
    "demand_tokens_per_s",
    "embodied_kgco2e_per_hour",
    "energy_kwh",
    "experts_hit_share",
    "one_row_table",
    "kv_bytes_per_token",
    "max_batch",
    "operational_kgco2e",
    "power_w_at_utilisation",
    "prefill_s",
    "routed_share_per_step",
    "served_model",
    "step_model",
    "scaling_efficiency",
    "cluster_training_hours",
    "mfu_family",
    "scaleup_joins_units",
    "spot_lost_fraction",
    "spot_preemptions_per_instance_hour",
    "training_flops",
    "training_hours",
    "training_nodes",
    "training_memory_per_device_gb",
    "training_min_devices",
    "training_state_bytes_per_param",
]
