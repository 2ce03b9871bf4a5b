"""The recipe schema: one point in the algorithm × backend × engine × mode space, with its settings.

Fields left unset (None) keep verl's own default and emit nothing; fields with a default carry
rlcat's choice, and that default lives here and nowhere else.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from rlcat.model.axes import ENGINES, Algorithm, Backend, Engine, Mode
from rlcat.model.base import (
    EnvName,
    Fraction,
    GuardAllowances,
    Name,
    NonNegativeInt,
    OpenMapping,
    PositiveInt,
    Strict,
)
from rlcat.model.paths import LaunchPath
from rlcat.model.validate import field_error

# A key of `overrides:`: a dotted verl key, with Hydra's `+` (add a key verl's config lacks) or `++`
# (add or override) in front when written.
OverrideKey = Annotated[
    str, StringConstraints(pattern=r"^(\+\+?)?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_0-9][A-Za-z0-9_]*)*$")
]
# FSDP's two implementations in verl (`strategy: fsdp | fsdp2` of the actor, reference and critic)
FsdpStrategy = Literal["fsdp", "fsdp2"]


class Resources(Strict):
    """Where the run goes: nodes × GPUs, and for fully_async how the GPUs split."""

    nodes: PositiveInt = 1
    gpus_per_node: PositiveInt = 8
    trainer_gpus: PositiveInt | None = Field(
        default=None, description="fully_async: GPUs of the trainer pool"
    )
    rollout_gpus: PositiveInt | None = Field(
        default=None, description="fully_async: GPUs of the rollout pool"
    )


class RoleParallelism(Strict):
    """Model parallelism of one trained role (Megatron: tp/pp/cp/ep/etp; FSDP: sp, fsdp_size, strategy)."""

    tp: PositiveInt | None = None
    pp: PositiveInt | None = None
    cp: PositiveInt | None = None
    ep: PositiveInt | None = None
    etp: PositiveInt | None = None
    sp: PositiveInt | None = Field(default=None, description="Ulysses sequence parallel size (FSDP)")
    fsdp_size: int | None = Field(default=None, ge=-1, description="FSDP shard group size (-1: all)")
    strategy: FsdpStrategy | None = Field(
        default=None,
        description=(
            "FSDP implementation of this role when it differs from `backend` (fsdp or fsdp2 backends "
            "only): backend fsdp with parallelism.actor.strategy: fsdp2 trains the actor with FSDP2 "
            "and the reference and critic with FSDP. Default: the backend's"
        ),
    )


class RolloutParallelism(Strict):
    tp: PositiveInt | None = None
    dp: PositiveInt | None = None
    ep: PositiveInt | None = None


class Parallelism(Strict):
    actor: RoleParallelism = Field(default_factory=RoleParallelism)
    ref: RoleParallelism = RoleParallelism()
    critic: RoleParallelism = Field(default_factory=RoleParallelism)
    rollout: RolloutParallelism = RolloutParallelism()


class Batch(Strict):
    """Batch sizes and sequence lengths."""

    train_batch_size: PositiveInt | None = Field(
        default=None, description="Prompts per step (colocate; fully_async streams one prompt at a time)"
    )
    mini_batch_size: PositiveInt = Field(description="Prompts per PPO mini batch")
    micro_batch_size_per_gpu: PositiveInt | None = None
    log_prob_micro_batch_size_per_gpu: PositiveInt | None = None
    responses_per_prompt: PositiveInt = Field(description="Rollouts per prompt (rollout.n)")
    max_prompt_length: PositiveInt
    max_response_length: PositiveInt
    dynamic_batch_size: bool = False
    max_token_len_per_gpu: PositiveInt | None = Field(
        default=None, description="Token budget per GPU for the actor update (dynamic batch size)"
    )
    log_prob_max_token_len_per_gpu: PositiveInt | None = Field(
        default=None, description="Token budget per GPU for ref and rollout log-prob passes"
    )


class ValSampling(Strict):
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    do_sample: bool | None = None
    n: PositiveInt | None = None


class Rollout(Strict):
    """Engine-independent rollout settings; engine_kwargs holds the engine-specific rest."""

    gpu_memory_utilization: Fraction | None = None
    max_model_len: PositiveInt | None = None
    max_num_batched_tokens: PositiveInt | None = None
    enable_chunked_prefill: bool | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    dtype: Literal["bfloat16", "float16", "float32"] | None = None
    enforce_eager: bool | None = None
    cudagraph_capture_sizes: list[PositiveInt] | None = None
    val: ValSampling = Field(default_factory=ValSampling)
    engine_kwargs: dict[Engine, OpenMapping] = Field(default_factory=dict)


class Optim(Strict):
    lr: float = Field(gt=0)
    lr_warmup_steps: int | None = Field(default=None, ge=-1)
    lr_decay_steps: PositiveInt | None = None
    weight_decay: float | None = Field(default=None, ge=0)
    grad_clip: float | None = Field(default=None, gt=0)


class Offload(Strict):
    param: bool | None = None
    optimizer: bool | None = None
    grad: bool | None = Field(default=None, description="Megatron only")
    optimizer_cpu: bool = Field(
        default=False, description="Megatron: run the optimizer step on the CPU (precision-aware optimizer)"
    )


class MegatronSettings(Strict):
    use_mbridge: bool | None = None
    vanilla_mbridge: bool | None = None
    use_remove_padding: bool | None = None
    dtype: Literal["bfloat16", "float16", "float32"] | None = None
    override_transformer_config: OpenMapping = Field(default_factory=dict)


class Actor(Strict):
    """The policy: optimizer, offload, model flags."""

    optim: Optim
    offload: Offload = Field(default_factory=Offload)
    ref_param_offload: bool | None = None
    model_path: LaunchPath | None = Field(
        default=None,
        description="Default: the catalog model's hf_id. May start with ~, $HOME or $PWD (resolved at "
        "launch)",
    )
    use_remove_padding: bool | None = None
    gradient_checkpointing: bool | None = None
    trust_remote_code: bool | None = Field(
        default=None,
        description=(
            "Let transformers run the model repository's code: sets the model's and the dataset "
            "tokenizer's trust_remote_code (Default: the catalog model's)"
        ),
    )
    model_override_config: OpenMapping = Field(default_factory=dict)
    megatron: MegatronSettings = Field(default_factory=MegatronSettings)


class KLLoss(Strict):
    enabled: bool = True
    coef: float = Field(default=0.001, ge=0)
    type: Literal["kl", "abs", "mse", "low_var_kl", "full"] = "low_var_kl"


class KLInReward(Strict):
    enabled: bool = True
    coef: float = Field(default=0.001, ge=0)


class ClipRatio(Strict):
    low: float | None = Field(default=None, gt=0)
    high: float | None = Field(default=None, gt=0)
    c: float | None = Field(default=None, gt=1)


class OverlongBuffer(Strict):
    """DAPO's soft overlong punishment."""

    enabled: bool = True
    length: PositiveInt = 4096
    penalty_factor: float = Field(default=1.0, ge=0)
    log: bool = False


class FilterGroups(Strict):
    """DAPO's dynamic sampling: drop groups whose responses all score alike."""

    enabled: bool = True
    metric: Literal["acc", "score", "seq_reward", "seq_final_reward", "reward"] = "acc"
    max_num_gen_batches: NonNegativeInt = 10


class AlgorithmSettings(Strict):
    kl_loss: KLLoss | None = None
    kl_in_reward: KLInReward | None = None
    entropy_coeff: float | None = None
    clip_ratio: ClipRatio = Field(default_factory=ClipRatio)
    loss_agg_mode: (
        Literal["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"] | None
    ) = None
    overlong_buffer: OverlongBuffer | None = None
    filter_groups: FilterGroups | None = None


class Critic(Strict):
    """PPO's value model."""

    optim: Optim
    model_path: LaunchPath | None = Field(
        default=None,
        description="Default: the actor's model. May start with ~, $HOME or $PWD (resolved at launch)",
    )
    offload: Offload = Field(default_factory=Offload)
    warmup: NonNegativeInt | None = Field(default=None, description="Steps of critic-only training")
    use_remove_padding: bool | None = None
    gradient_checkpointing: bool | None = None


class AsyncTraining(Strict):
    """fully_async: how far rollout may run ahead of training, and when weights sync."""

    staleness_threshold: float = Field(default=0.1, ge=0)
    trigger_parameter_sync_step: PositiveInt = 4
    require_batches: PositiveInt = 1
    partial_rollout: bool = True
    total_rollout_steps: PositiveInt | None = None


class Trainer(Strict):
    logger: list[str] = Field(default_factory=lambda: ["console"])
    project: str = "rlcat"
    experiment: str | None = Field(default=None, description="Default: the recipe name")
    epochs: PositiveInt | None = None
    total_training_steps: PositiveInt | None = None
    test_freq: int | None = Field(default=None, ge=-1)
    save_freq: int | None = Field(default=None, ge=-1)
    val_before_train: bool | None = None
    resume_mode: Literal["auto", "disable", "resume_path"] | None = None
    log_val_generations: NonNegativeInt | None = None
    balance_batch: bool | None = None


class Variants(Strict):
    """Other axis values this recipe may be compiled with (its own are always allowed)."""

    engine: list[Engine] = Field(default_factory=lambda: list(ENGINES))
    mode: list[Mode] = Field(default_factory=list)
    backend: list[Backend] = []


class Recipe(Strict):
    """A named, typed verl run."""

    name: Name
    summary: str
    extends: Name | None = None
    algorithm: Algorithm
    backend: Backend
    engine: Engine
    mode: Mode
    model: Name
    dataset: Name
    variants: Variants = Field(default_factory=Variants)
    resources: Resources = Resources()
    parallelism: Parallelism = Field(default_factory=Parallelism)
    batch: Batch
    rollout: Rollout = Field(default_factory=Rollout)
    actor: Actor
    algorithm_settings: AlgorithmSettings = Field(default=AlgorithmSettings(), alias="algo")
    critic: Critic | None = None
    async_training: AsyncTraining = Field(default=AsyncTraining(), alias="async")
    trainer: Trainer = Field(default_factory=Trainer)
    platforms: dict[Name, dict[str, Any]] = Field(
        default={}, description="Per-platform adjustments: a partial recipe merged over this one"
    )
    env: dict[EnvName, str] = Field(default_factory=dict)
    allow: GuardAllowances = Field(
        default={},
        description=(
            "Guards this recipe silences (and RLC303: a known-broken platform cell it accepts), "
            "each with the reason"
        ),
    )
    overrides: dict[OverrideKey, Any] = Field(
        default={},
        description=(
            "verl keys the schema does not model, checked against the key index of the target "
            "release as Hydra judges them: `key` overrides a key verl's config has (inside an open "
            "dict such as engine_kwargs rlcat writes it with `++`); `+key` adds a key verl's config "
            'lacks (refused where verl has a value: Hydra\'s "Could not append to config"); '
            "`++key` adds or overrides, anywhere. The prefix is kept in every output format"
        ),
    )

    @model_validator(mode="after")
    def _critic_matches_algorithm(self) -> Recipe:
        if self.algorithm == "ppo" and self.critic is None:
            raise field_error(
                "algorithm",
                "algorithm ppo trains a critic: add a `critic:` section (at least critic.optim.lr)",
            )
        if self.algorithm != "ppo" and self.critic is not None:
            raise field_error("critic", f"`critic:` is only used by ppo, not {self.algorithm}")
        return self
