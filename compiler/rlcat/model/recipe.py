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
    """Where the run goes: nodes × GPUs, and for fully_async and one_step_off how the GPUs split."""

    nodes: PositiveInt = 1
    gpus_per_node: PositiveInt = 8
    trainer_gpus: PositiveInt | None = Field(
        default=None, description="fully_async and one_step_off: GPUs of the trainer pool"
    )
    rollout_gpus: PositiveInt | None = Field(
        default=None, description="fully_async and one_step_off: GPUs of the rollout pool"
    )


class RoleParallelism(Strict):
    """Model parallelism of one trained role (Megatron: tp/pp/cp/ep/etp; FSDP: sp, fsdp_size, strategy)."""

    tp: PositiveInt | None = None
    pp: PositiveInt | None = None
    vpp: PositiveInt | None = Field(
        default=None, description="Megatron virtual pipeline stages per pipeline rank (interleaved schedule)"
    )
    cp: PositiveInt | None = None
    ep: PositiveInt | None = Field(default=None, description="Megatron expert parallel size (MoE)")
    etp: PositiveInt | None = Field(default=None, description="Megatron expert tensor parallel size (MoE)")
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
    ep: PositiveInt | None = Field(
        default=None, description="Expert parallel size of the rollout engine (MoE)"
    )


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


class MultiTurn(Strict):
    """Multi-turn rollout with tool calls (verl's agent loop; `rollout.multi_turn`)."""

    enabled: bool = Field(default=True, description="Turn multi-turn rollout on (multi_turn.enable)")
    tool_config_path: LaunchPath | None = Field(
        default=None, description="YAML file naming the tools the model may call (verl imports their classes)"
    )
    format: str | None = Field(
        default=None,
        description="Tool-call parser of the chat template: hermes (verl's default), qwen3_coder, ...",
    )
    max_user_turns: PositiveInt | None = None
    max_assistant_turns: PositiveInt | None = None
    max_parallel_calls: PositiveInt | None = Field(
        default=None, description="Tool calls run at once per turn"
    )
    max_tool_response_length: PositiveInt | None = Field(
        default=None, description="Tokens of a tool response kept (the rest is truncated)"
    )
    agent_loop: str | None = Field(
        default=None,
        description="verl agent loop for samples that name none (rollout.agent.default_agent_loop): "
        "single_turn_agent (verl's default) or tool_agent",
    )
    agent_workers: PositiveInt | None = Field(default=None, description="Agent-loop worker processes")


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
    free_cache_engine: bool | None = Field(
        default=None,
        description="Release the engine's KV cache between rollouts (colocate: frees it for training)",
    )
    enable_prefix_caching: bool | None = None
    max_num_seqs: PositiveInt | None = Field(default=None, description="Sequences the engine runs at once")
    ignore_eos: bool | None = None
    load_format: Literal["dummy", "auto", "safetensors", "hf"] | None = Field(
        default=None,
        description="How the engine first loads weights: dummy (verl's default: random, then synced from "
        "the actor), or from the checkpoint (auto, safetensors: what LoRA with layered summon reads)",
    )
    quantization: Literal["fp8", "torchao"] | None = Field(
        default=None,
        description="Low-precision rollout: the engine quantizes the synced weights on the fly (fp8: vLLM "
        "and SGLang; torchao: vLLM only)",
    )
    weight_sync_bucket_mb: PositiveInt | None = Field(
        default=None,
        description="Size of the buckets weights are synced to the engine in "
        "(checkpoint_engine.update_weights_bucket_megabytes)",
    )
    routing_replay: bool | None = Field(
        default=None,
        description="MoE: record the rollout's expert routes for the actor to replay (router replay R3; "
        "enable_rollout_routing_replay)",
    )
    multi_turn: MultiTurn | None = None
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
    dtype: Literal["bfloat16", "float16", "float32"] | None = Field(
        default=None, description="Mixed-precision training dtype of Megatron (float16: FP16 training)"
    )
    use_dist_checkpointing: bool | None = Field(
        default=None, description="Load the actor and reference from a Megatron distributed checkpoint"
    )
    router_replay: Literal["disabled", "R2", "R3"] | None = Field(
        default=None,
        description="MoE router replay of the actor: R2 replays the routes of the old-log-prob pass, R3 "
        "the rollout's (set rollout.routing_replay too)",
    )
    override_transformer_config: OpenMapping = Field(default_factory=dict)


class FsdpSettings(Strict):
    """FSDP settings of the actor, written for the reference too (fsdp_config)."""

    dtype: Literal["bfloat16", "float16"] | None = Field(
        default=None, description="Mixed-precision training dtype (float16: FP16 training)"
    )
    model_dtype: Literal["fp32", "bf16", "fp16"] | None = Field(
        default=None, description="dtype the weights are held in (verl's default: fp32)"
    )
    reshard_after_forward: bool | None = None
    forward_prefetch: bool | None = None
    offload_policy: bool | None = Field(
        default=None, description="FSDP2: offload parameters with CPUOffloadPolicy"
    )


class LoRA(Strict):
    """Low-rank adapters: train a small adapter instead of the full weights."""

    rank: PositiveInt = Field(description="Adapter rank (vLLM serves ranks up to 512)")
    alpha: PositiveInt | None = Field(
        default=None, description="Adapter scaling (verl's default: 16 FSDP, 32 Megatron)"
    )
    target_modules: str | list[str] | None = Field(
        default=None,
        description="Modules that get adapters: FSDP takes all-linear (verl's default) or module names; "
        "Megatron a list such as [linear_qkv, linear_proj, linear_fc1, linear_fc2]",
    )
    adapter_path: LaunchPath | None = Field(
        default=None, description="Load a trained adapter to continue from. May start with ~, $HOME or $PWD"
    )
    layered_summon: bool | None = Field(
        default=None,
        description="Gather the adapted weights layer by layer when syncing them to the rollout (FSDP: "
        "saves memory on large models)",
    )


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
    use_fused_kernels: bool | None = Field(
        default=None, description="verl's fused log-prob and entropy kernels"
    )
    use_torch_compile: bool | None = Field(
        default=None, description="torch.compile the actor's and reference's log-prob computation"
    )
    entropy_from_logits_with_chunking: bool | None = Field(
        default=None, description="Compute entropy in chunks (actor and reference): less peak memory"
    )
    lora: LoRA | None = None
    trust_remote_code: bool | None = Field(
        default=None,
        description=(
            "Let transformers run the model repository's code: sets the model's and the dataset "
            "tokenizer's trust_remote_code (Default: the catalog model's)"
        ),
    )
    model_override_config: OpenMapping = Field(default_factory=dict)
    fsdp: FsdpSettings = Field(default_factory=FsdpSettings)
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


# verl's registered policy losses (core_algos.py register_policy_loss; dro from 0.9.0)
PolicyLoss = Literal[
    "vanilla", "gspo", "sapo", "gpg", "clip_cov", "kl_cov", "geo_mean", "cispo", "dppo_tv", "dppo_kl", "dro"
]


class RolloutCorrection(Strict):
    """Off-policy correction between the rollout's and the trainer's log probs
    (`algorithm.rollout_correction`: importance sampling and rejection sampling)."""

    importance_sampling: Literal["token", "sequence"] | None = Field(
        default=None, description="IS weights per token or per sequence (rollout_is; none: off)"
    )
    is_threshold: float | str | None = Field(
        default=None,
        description="Upper bound of the IS weights (truncated IS), or 'lower_upper' (rollout_is_threshold)",
    )
    is_batch_normalize: bool | None = Field(
        default=None, description="Normalise IS weights to mean 1 per batch"
    )
    rejection_sampling: str | None = Field(
        default=None, description="Rejection-sampling criteria, e.g. token_k1, seq_mean_k3 (rollout_rs)"
    )
    rs_threshold: float | str | None = Field(default=None, description="Threshold of rejection sampling")
    bypass_mode: bool | None = Field(
        default=None,
        description="Use the rollout's log probs as the old policy (2 policies) instead of recomputing "
        "them (3 policies, decoupled)",
    )
    loss_type: Literal["ppo_clip", "reinforce"] | None = Field(
        default=None, description="Loss of bypass mode: ppo_clip (verl's default) or reinforce"
    )


class AlgorithmSettings(Strict):
    kl_loss: KLLoss | None = None
    kl_in_reward: KLInReward | None = None
    entropy_coeff: float | None = None
    clip_ratio: ClipRatio = Field(default_factory=ClipRatio)
    loss_agg_mode: (
        Literal["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"] | None
    ) = Field(
        default=None,
        description="How token losses add up (actor.loss_agg_mode); GSPO is meant for seq-mean-token-mean",
    )
    policy_loss: PolicyLoss | None = Field(
        default=None,
        description="Policy loss (actor.policy_loss.loss_mode): vanilla PPO clip (verl's default), gspo "
        "(sequence-level ratios), sapo, gpg, clip_cov, kl_cov, geo_mean, cispo, dppo_tv, dppo_kl, dro "
        "(verl 0.9 on)",
    )
    gamma: float | None = Field(default=None, ge=0, le=1, description="Discount factor (GAE)")
    lam: float | None = Field(default=None, ge=0, le=1, description="GAE lambda")
    rollout_correction: RolloutCorrection | None = None
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


class Checkpoint(Strict):
    """What a checkpoint holds, where it goes and how many are kept (saved every trainer.save_freq steps)."""

    dir: LaunchPath | None = Field(
        default=None,
        description="Folder checkpoints go to (trainer.default_local_dir; verl's default: "
        "checkpoints/PROJECT/EXPERIMENT). May start with ~, $HOME or $PWD",
    )
    save_contents: list[Literal["model", "optimizer", "extra", "hf_model"]] | None = Field(
        default=None,
        description="Parts saved (actor's checkpoint.save_contents; verl's default: model, optimizer, extra; "
        "hf_model adds a Hugging Face copy)",
    )
    load_contents: list[Literal["model", "optimizer", "extra", "hf_model"]] | None = Field(
        default=None, description="Parts loaded on resume (verl's default: save_contents)"
    )
    keep_actor: PositiveInt | None = Field(
        default=None, description="Actor checkpoints kept (older are deleted)"
    )
    keep_critic: PositiveInt | None = Field(default=None, description="Critic checkpoints kept")
    resume_from: LaunchPath | None = Field(
        default=None, description="Checkpoint folder to resume from (with resume_mode: resume_path)"
    )


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
    checkpoint: Checkpoint = Field(default_factory=Checkpoint)


class CustomRewardFunction(Strict):
    """A Python file whose function scores each response (verl imports and runs it)."""

    path: LaunchPath = Field(description="The file. May start with ~, $HOME or $PWD")
    name: str | None = Field(default=None, description="The function (verl's default: compute_score)")


class RewardModel(Strict):
    """A model that scores responses (served by a rollout engine of its own)."""

    enabled: bool = True
    path: LaunchPath = Field(description="The reward model. May start with ~, $HOME or $PWD")


class Reward(Strict):
    """How responses are scored: the reward manager, a custom function, a reward model."""

    manager: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = Field(
        default=None,
        description="verl reward manager: naive (verl's default), prime, batch, dapo (DAPO's overlong "
        "buffer sets it), ...",
    )
    custom_function: CustomRewardFunction | None = None
    model: RewardModel | None = None
    workers: PositiveInt | None = Field(default=None, description="Reward workers (reward.num_workers)")


class Variants(Strict):
    """Other axis values this recipe may be compiled with (its own are always allowed)."""

    engine: list[Engine] = Field(default_factory=lambda: list(ENGINES))
    mode: list[Mode] = Field(default_factory=list)
    backend: list[Backend] = []


# Where an imported recipe comes from: a GitHub repository, a file path inside it and the full commit
# id. No path segment starts with a dot (no `..`) nor the path with `/`: it is shown and linked on
# the docs page, never opened.
RepositoryName = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", max_length=140)
]
RepositoryPath = Annotated[
    str,
    StringConstraints(
        pattern=r"^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*$", max_length=1000
    ),
]
CommitId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]


class Provenance(Strict):
    """The upstream file a recipe was converted from (`rlcat import --provenance`)."""

    repository: RepositoryName = Field(description="GitHub repository, owner/name (verl-project/verl)")
    path: RepositoryPath = Field(description="The source file inside the repository")
    commit: CommitId = Field(description="The full commit id the file was read at")

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"


class Recipe(Strict):
    """A named, typed verl run."""

    name: Name
    summary: str
    extends: Name | None = None
    provenance: Provenance | None = Field(
        default=None,
        description="The upstream file this recipe was imported from (not inherited by `extends`)",
    )
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
    reward: Reward = Field(default_factory=Reward)
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

    @property
    def trains_with(self) -> str:
        """What the actor trains with, as a reader means "backend": the backend, or on an FSDP
        backend the FSDP implementation `parallelism.actor.strategy` picks (an imported
        `*_fsdp2_*` example is backend fsdp with the actor on FSDP2). `rlcat list` and the docs
        show this; the matrix's axes stay the backend's."""
        strategy = self.parallelism.actor.strategy
        return strategy if self.backend in ("fsdp", "fsdp2") and strategy else self.backend
