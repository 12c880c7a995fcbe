"""The workloads of a problem: training, online inference and batch inference, with the
demand, traffic mix and daily load curve of a served model."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from solver.inputs.problem.fields import (
    ACCELERATORS_HELP,
    DEFAULT_MAX_UTILISATION,
    DEFAULT_SERVING_TIER,
    DEFAULT_SLO_PERCENTILE,
    EXCLUDE_ACCELERATORS_HELP,
    EXCLUDE_VENDORS_HELP,
    MIX_SHARE_TOLERANCE,
    RUNTIME_HELP,
    TRAINING_MARGIN_HELP,
    VENDORS_HELP,
    AcceleratorList,
    Framework,
    HardwareName,
    Precision,
    Runtime,
    StrictModel,
    Tier,
    TrainingMargin,
    VendorList,
    check_kv_precision,
    check_training_margin,
    parse_duration_s,
)
from solver.inputs.problem.shape import ModelShape
from solver.physics.inference import LoadPercentile


class LoadBlock(StrictModel):
    """A block of hours within each day with its own demand level."""

    name: str
    hours_per_day: float = Field(gt=0, le=24, description="Hours per day in this block")
    demand_factor: float | None = Field(
        None,
        ge=0,
        description="Demand as a multiple of the daily average; omitted = each "
        "workload's peak_to_average",
    )


class ProfileBlock(StrictModel):
    """A named block of whole hours in a daily load profile."""

    name: str
    hours_per_day: int = Field(gt=0, le=24, description="Whole hours per day in this block")
    factor: float = Field(
        ge=0,
        allow_inf_nan=False,
        description="Demand relative to the daily average (the blocks are rescaled so "
        "their hour-weighted mean is 1)",
    )


class LoadProfile(StrictModel):
    """A daily load curve: 24 hourly factors, or named blocks (exactly one).

    Factors are relative to the daily average and are normalised so that their
    (hour-weighted) mean is 1; the workload's demand gives the average.
    """

    hourly: list[Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None = Field(
        None,
        description="24 demand factors, hour 0 to 23 (normalised so their mean is 1)",
    )
    blocks: list[ProfileBlock] | None = Field(
        None,
        description="Named blocks of whole hours covering 24 h, each with a factor "
        "(normalised so the hour-weighted mean is 1)",
    )

    @model_validator(mode="after")
    def _valid(self) -> LoadProfile:
        if (self.hourly is None) == (self.blocks is None):
            raise ValueError("load_profile needs exactly one of 'hourly' (24 factors) or 'blocks'")
        if self.hourly is not None:
            if len(self.hourly) != 24:
                raise ValueError(
                    f"load_profile.hourly has {len(self.hourly)} values; give 24, one per "
                    "hour from 0 to 23"
                )
            if not any(f > 0 for f in self.hourly):
                raise ValueError("load_profile.hourly is all zeros; give at least one factor > 0")
        if self.blocks is not None:
            hours = sum(b.hours_per_day for b in self.blocks)
            if hours != 24:
                raise ValueError(f"load_profile.blocks cover {hours} h/day; they must cover 24")
            names = [b.name for b in self.blocks]
            if len(set(names)) != len(names):
                raise ValueError(f"load_profile.blocks names must be unique: {names}")
            if not any(b.factor > 0 for b in self.blocks):
                raise ValueError("load_profile.blocks factors are all zero; give one > 0")
        return self


class Demand(StrictModel):
    """Inference demand: users x requests, or tokens/s, or requests/s (exactly one)."""

    users: float | None = Field(None, gt=0, description="Daily active users")
    requests_per_user_per_day: float | None = Field(None, gt=0)
    tokens_per_s: float | None = Field(None, gt=0, description="Average output tokens/s")
    requests_per_s: float | None = Field(None, gt=0, description="Average requests/s")

    @model_validator(mode="after")
    def _one_way(self) -> Demand:
        ways = [
            self.users is not None or self.requests_per_user_per_day is not None,
            self.tokens_per_s is not None,
            self.requests_per_s is not None,
        ]
        if sum(ways) != 1:
            raise ValueError(
                "give exactly one of: users + requests_per_user_per_day, tokens_per_s, "
                "requests_per_s"
            )
        if ways[0] and (self.users is None or self.requests_per_user_per_day is None):
            raise ValueError("users and requests_per_user_per_day go together; give both")
        return self


class TrafficBucket(StrictModel):
    """One request-size bucket of a traffic mix."""

    prompt_tokens: int = Field(gt=0, description="Representative prompt length, tokens")
    output_tokens: int = Field(gt=0, description="Representative output length, tokens")
    share: float = Field(ge=0, le=1, description="Fraction of requests in this bucket")


class _WorkloadBase(StrictModel):
    name: str = Field(description="Unique workload name")
    model: str | ModelShape = Field(description="A preset id (see catalogs/models.csv) or a shape")
    framework: Framework = "pytorch"
    providers: list[str] | None = Field(
        None, description="Restrict to these cloud providers (owned servers: see modes)"
    )
    regions: list[str] | None = Field(None, description="Restrict to these regions")
    residency: list[str] | None = Field(None, description="Allowed residency zones (us, eu, ...)")
    min_tier: Tier | None = Field(
        None,
        description="Lowest provider tier allowed (marketplace < neocloud < hyperscaler; "
        "see catalogs/providers.csv); owned servers always qualify. Online inference without "
        "one (here or on the problem) is served from datacenter hosts, neocloud and up: "
        "write min_tier: marketplace to allow marketplace hosts (no SLA)",
    )
    require_ecc: bool = False

    def tier_floor(self, problem_min_tier: str | None) -> str | None:
        """The lowest tier this workload may use beside the problem's: its own
        ``min_tier``; for an online service with neither, ``neocloud`` (a production
        service needs datacenter hosts; marketplaces are an explicit opt-in)."""
        if self.min_tier is not None:
            return self.min_tier
        if isinstance(self, InferenceWorkload) and problem_min_tier is None:
            return DEFAULT_SERVING_TIER
        return None

    accelerators: AcceleratorList | None = Field(
        None, description=ACCELERATORS_HELP + "; narrows the problem's list (within it)"
    )
    vendors: VendorList | None = Field(
        None, description=VENDORS_HELP + "; narrows the problem's list (within it)"
    )
    exclude_accelerators: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_ACCELERATORS_HELP + ", besides the problem's"
    )
    exclude_vendors: list[HardwareName] = Field(
        default_factory=list, description=EXCLUDE_VENDORS_HELP + ", besides the problem's"
    )


class TrainingWorkload(_WorkloadBase):
    """Train (or fine-tune) a model on a number of tokens within a window."""

    kind: Literal["training"]
    tokens: float = Field(gt=0, description="Training tokens")
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    optimizer: Literal["adamw", "sgd", "lora", "qlora"] = "adamw"
    seq_len: int = Field(4096, gt=0, description="Sequence length, tokens")
    micro_batch: int = Field(1, gt=0, description="Sequences per device per step")
    recompute: Literal["none", "selective", "full"] = Field(
        "selective",
        description="Activation recomputation: selective (default; Korthikanti et al. 2022, "
        "no extra FLOPs), full (one more forward pass: x4/3 FLOPs, least memory) or none",
    )
    start_period: str | None = Field(None, description="First period the job may run in")
    end_period: str | None = Field(None, description="Last period the job must finish in")
    deadline_days: float | None = Field(None, gt=0, description="Wall-clock limit, days")
    mfu: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Model FLOPs utilisation override (your own measurement, taken at the "
        "job's scale; it has no band, so training_margin low and point both use it)",
    )
    training_margin: TrainingMargin | None = Field(
        None, description=TRAINING_MARGIN_HELP + ". Default: the problem's training_margin"
    )
    interruptible: bool = Field(False, description="Spot capacity allowed (checkpoint/restart)")
    max_accelerators: int | None = Field(None, gt=0, description="Largest cluster to consider")

    @field_validator("training_margin", mode="before")
    @classmethod
    def _margin(cls, value: object) -> object:
        return check_training_margin(value)


class InferenceWorkload(_WorkloadBase):
    """Serve a model online to a demand within latency SLOs."""

    kind: Literal["inference"]
    weight_precision: Precision = "bf16"
    kv_precision: Precision = "bf16"

    @field_validator("kv_precision", mode="before")
    @classmethod
    def _kv_precision(cls, value: object) -> object:
        return check_kv_precision(value)

    runtime: Runtime | None = Field(None, description=RUNTIME_HELP)
    demand: Demand
    prompt_tokens: int = Field(gt=0)
    output_tokens: int = Field(gt=0)
    ttft_slo: str = Field(description="Time to first token SLO with unit, e.g. '1 s'")
    tpot_slo: str = Field(description="Time per output token SLO with unit, e.g. '50 ms'")
    slo_percentile: float | None = Field(
        DEFAULT_SLO_PERCENTILE,
        ge=0.5,
        lt=1,
        description="Check ttft_slo and tpot_slo at this percentile of requests (0.9 = p90, "
        "0.99 = p99) under Poisson arrivals at max_utilisation (M/G/infinity decode slots, "
        "M/D/1 prefill queue; solver/physics/inference.py), on top of the batch's own mean "
        "step and TTFT; 'mean' (or null) checks them at the mean only. Default: 0.99 "
        "(MLPerf Inference's server scenario states its limits at p99)",
    )

    @field_validator("slo_percentile", mode="before")
    @classmethod
    def _mean_percentile(cls, value: object) -> object:
        return None if isinstance(value, str) and value.strip().lower() == "mean" else value

    peak_to_average: float = Field(
        1.0,
        ge=1,
        description="Peak demand / average demand; without a load_profile it shapes the "
        "default day (24 hourly factors, max = this, mean 1; solver/load.py)",
    )
    load_profile: LoadProfile | None = Field(
        None,
        description="This workload's daily load curve (wins over the problem's): "
        "{hourly: [24 factors]} or {blocks: [{name, hours_per_day, factor}]}",
    )
    periods: list[str] | None = Field(
        None, min_length=1, description="Periods served (at least one); default all"
    )
    demand_by_period: dict[str, Annotated[float, Field(gt=0, le=1e3)]] = Field(
        default_factory=dict,
        description="Demand in a named period as a multiple of ``demand`` (growth: "
        "{y2: 1.5, y3: 2}); periods not named keep 1",
    )
    max_utilisation: float = Field(
        DEFAULT_MAX_UTILISATION,
        gt=0,
        le=1,
        description="Highest fraction of serving capacity (tokens/s or requests/s) in use at "
        "peak: capacity >= peak demand x (1 + demand_headroom) / max_utilisation. Default 0.8, "
        "the utilisation target a capacity planner keeps (Compute Engine's load-balancing "
        "autoscaler default); 1 plans capacity to run flat out at peak",
    )
    redundancy: int | Literal["n_plus_1"] = Field(
        1,
        description="Either a whole number >= 1: at least this many serving units at all "
        "times; or 'n_plus_1': in every period and load block, serving capacity with its "
        "largest unit lost still meets peak demand / max_utilisation",
    )
    min_units: int | None = Field(
        None,
        ge=1,
        description="At least this many serving units at all times, for use with "
        "redundancy: n_plus_1 (redundancy: <n> alone means the same as min_units: <n>)",
    )
    interruptible: bool = Field(False, description="Spot capacity allowed")
    survive_loss_of: list[Literal["zone", "region", "provider"]] = Field(
        default_factory=list,
        description="Failure domains the service must survive: with any one availability "
        "zone (catalogs/zones.csv; an offering whose zones are not listed is one zone, its "
        "region), any one region (an owned site counts as a region and a zone) or any one "
        "provider (all owned sites count as one, 'owned') lost, the capacity left still "
        "meets the block's peak demand / max_utilisation, in every period and load block. "
        "[] (default): no such rule (redundancy and N+1 are about units)",
    )
    max_region_share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Most of the workload's serving capacity (tokens/s) in one region, as a "
        "fraction, in every period and load block",
    )
    max_provider_share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Most of the workload's serving capacity (tokens/s) at one provider, as a "
        "fraction, in every period and load block",
    )
    migration_usd_per_move: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        ge=0,
        le=1e9,
        description="USD of work each time the workload's serving moves into a provider and "
        "region it did not serve from in the period before (a move), on top of its data "
        "moved at migration_usd_per_gb. Default: one working day of a systems "
        "administrator, 8 h x $135,262 a year / 2,080 h = $520.24 (solver.inputs.staff's "
        "cited salary and on-costs). Charged in the objective, not in the plan's cost "
        "(the plan gives it as migration_penalty_usd), for a workload that must survive "
        "a loss (survive_loss_of) or that states any migration_ field",
    )
    migration_gb: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        ge=0,
        le=1e9,
        description="GB (1e9 bytes) copied to the new place on each move. Default: the "
        "model's weights at weight_precision (13e9 parameters x 2 bytes = 26 GB)",
    )
    migration_usd_per_gb: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        ge=0,
        le=1e6,
        description="USD per GB copied on a move. Default (left out) $0.09: data transfer "
        "out from EC2 to the internet, first 10 TB/month (aws.amazon.com/ec2/pricing/on-demand)",
    )
    max_providers: int | None = Field(
        None,
        exclude_if=lambda v: v is None,
        ge=1,
        le=10_000,
        description="Most providers the workload is served from in any one period",
    )
    min_units_per_deployment: int | None = Field(
        None,
        exclude_if=lambda v: v is None,
        ge=1,
        le=1_000_000,
        description="Fewest serving units of an offering in use, in every load block, "
        "whenever the workload uses it in the period (a deployment)",
    )
    max_deployments: int | None = Field(
        None,
        exclude_if=lambda v: v is None,
        ge=1,
        le=10_000,
        description="Most offerings (deployments) the workload is served from in any one period",
    )
    fleet: Literal["per_block", "autoscale", "flat"] = Field(
        "autoscale",
        description="How rented serving units may change over the day. 'autoscale' "
        "(default): the workload deploys a set of offerings for each period and adds and "
        "removes units of those offerings between load blocks (every deployed offering "
        "runs at least one unit all day: no hardware, provider or region swapped within a "
        "day); 'flat': the same units all day; 'per_block' (opt-in): each load block "
        "chooses its own offerings (the cheapest; hardware, provider and region may change "
        "between blocks, so the fleet may be swapped twice a day)",
    )
    switching_cost_usd: float = Field(
        0.0,
        ge=0,
        description="USD per rented serving unit started within the day: each unit of an "
        "offering added from one load block to the next, every day of every period (an "
        "offering swapped in under 'per_block', a unit added for the peak under "
        "'autoscale'). Charged in the objective, not in the plan's cost or budget (as "
        "resolve's --switching-cost-usd); the plan gives it as switching_penalty_usd. "
        "Default 0: starts are free",
    )
    allow_tensor_parallel_over_pcie: bool = False
    architecture: Literal["aggregated", "disaggregated", "auto"] = Field(
        "aggregated",
        exclude_if=lambda v: v == "aggregated",  # the default: echoed plans stay as they were
        description="How replicas serve: 'aggregated' (default: each replica prefills and "
        "decodes its requests); 'disaggregated': a prefill pool and a decode pool, each on "
        "its own offering, in one provider and region, the KV cache sent between them "
        "(docs/formulation/disagg_prefill.md); 'auto': both offered, the MIP takes the "
        "cheaper (or a mix)",
    )
    traffic_mix: list[TrafficBucket] | None = None
    measured_throughput_rps: dict[str, list[float]] | None = Field(
        None,
        description="Per accelerator: requests/s ONE accelerator sustains per traffic-mix bucket "
        "at the SLO (e.g. vLLM measurements); replaces the physics estimate",
    )

    @field_validator("ttft_slo", "tpot_slo", mode="before")
    @classmethod
    def _has_unit(cls, value: object) -> str:
        parse_duration_s(value)
        return value  # type: ignore[return-value]

    @field_validator("redundancy", mode="before")
    @classmethod
    def _redundancy_kind(cls, value: object) -> object:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        whole = isinstance(value, int) and not isinstance(value, bool) and value >= 1
        if whole or value == "n_plus_1":
            return value
        raise ValueError(
            f"redundancy is {value!r}; give a whole number of serving units >= 1 (e.g. 2) "
            "or 'n_plus_1' (capacity with the largest unit lost still meets peak)"
        )

    @property
    def min_serving_units(self) -> int:
        """Fewest serving units in every period and block (``min_units`` or ``redundancy: n``)."""
        if self.min_units is not None:
            return self.min_units
        return self.redundancy if isinstance(self.redundancy, int) else 1

    @property
    def domains(self) -> bool:
        """Whether a failure-domain or capacity-share rule holds (:func:`add_failure_domains`)."""
        return bool(self.survive_loss_of) or (
            self.max_region_share is not None or self.max_provider_share is not None
        )

    @property
    def migration_charged(self) -> bool:
        """Whether moves between periods are charged (:mod:`solver.core.formulation.moves`)."""
        return bool(self.survive_loss_of) or any(
            name in self.model_fields_set
            for name in ("migration_usd_per_move", "migration_gb", "migration_usd_per_gb")
        )

    @property
    def operability_limits(self) -> bool:
        """Whether any of max_providers, min_units_per_deployment, max_deployments holds."""
        return (
            self.max_providers is not None
            or self.min_units_per_deployment is not None
            or self.max_deployments is not None
        )

    @property
    def n_plus_1(self) -> bool:
        """Serving capacity must survive the loss of its largest unit."""
        return self.redundancy == "n_plus_1"

    @property
    def ttft_slo_s(self) -> float:
        return parse_duration_s(self.ttft_slo)

    @property
    def load_percentile(self) -> LoadPercentile | None:
        """The SLO percentile and the planned utilisation (physics.LoadPercentile), or None
        when the SLOs are checked at the mean."""
        if self.slo_percentile is None:
            return None
        return LoadPercentile(p=self.slo_percentile, rho=self.max_utilisation)

    @property
    def tpot_slo_s(self) -> float:
        return parse_duration_s(self.tpot_slo)

    @model_validator(mode="after")
    def _mix(self) -> InferenceWorkload:
        if self.min_units is not None and isinstance(self.redundancy, int) and self.redundancy > 1:
            raise ValueError(
                f"redundancy: {self.redundancy} and min_units: {self.min_units} both set the "
                "fewest serving units; keep min_units and set redundancy to 1 or 'n_plus_1'"
            )
        if self.traffic_mix is not None:
            total = sum(b.share for b in self.traffic_mix)
            if abs(total - 1.0) > MIX_SHARE_TOLERANCE:
                effect = (
                    f"{(1.0 - total) * 100:.4g}% of the demand would go unserved"
                    if total < 1.0
                    else f"{(total - 1.0) * 100:.4g}% more demand than given would be planned"
                )
                raise ValueError(
                    f"traffic_mix shares sum to {total:.9g}, not 1 (within "
                    f"{MIX_SHARE_TOLERANCE:g}): {effect}; correct the shares so they sum to 1 "
                    f"(e.g. change the largest bucket's share by {1.0 - total:+.9g})"
                )
        if self.architecture != "aggregated":
            clash = [
                name
                for name, on in (
                    ("traffic_mix", self.traffic_mix is not None),
                    ("survive_loss_of", bool(self.survive_loss_of)),
                )
                if on
            ]
            if clash:
                raise ValueError(
                    f"architecture: {self.architecture} is not built with {', '.join(clash)}; "
                    "set architecture: aggregated or leave those out"
                )
        if self.measured_throughput_rps is not None:
            if self.traffic_mix is None:
                raise ValueError("measured_throughput_rps needs a traffic_mix to refer to")
            for acc, values in self.measured_throughput_rps.items():
                if len(values) != len(self.traffic_mix):
                    raise ValueError(
                        f"measured_throughput_rps[{acc}] has {len(values)} values; "
                        f"traffic_mix has {len(self.traffic_mix)} buckets"
                    )
                if any(v < 0 for v in values):
                    raise ValueError(f"measured_throughput_rps[{acc}] has a negative value")
        return self


class BatchInferenceWorkload(_WorkloadBase):
    """Generate a number of tokens offline before a deadline (no latency SLO)."""

    kind: Literal["batch_inference"]
    weight_precision: Precision = "bf16"
    kv_precision: Precision = "bf16"

    @field_validator("kv_precision", mode="before")
    @classmethod
    def _kv_precision(cls, value: object) -> object:
        return check_kv_precision(value)

    runtime: Runtime | None = Field(None, description=RUNTIME_HELP)
    output_tokens_total: float = Field(gt=0, description="Output tokens to generate")
    prompt_tokens: int = Field(gt=0, description="Prompt length per request, tokens")
    output_tokens: int = Field(gt=0, description="Output length per request, tokens")
    periods: list[str] | None = Field(
        None, min_length=1, description="Periods the job runs in (at least one); default all"
    )
    interruptible: bool = True
    allow_tensor_parallel_over_pcie: bool = False


Workload = Annotated[
    TrainingWorkload | InferenceWorkload | BatchInferenceWorkload, Field(discriminator="kind")
]
