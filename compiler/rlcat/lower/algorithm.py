"""Algorithm axis: advantage estimator, KL, clipping, loss aggregation, DAPO extras, PPO critic."""

from __future__ import annotations

from rlcat.lower.context import Lowering, axis
from rlcat.verl.names import ARF

ESTIMATOR = {"grpo": "grpo", "dapo": "grpo", "ppo": "gae"}


def lower_algorithm(lo: Lowering) -> None:
    r = lo.recipe
    algo, s = r.algorithm, r.algorithm_settings
    why = axis("algorithm", algo, "the algorithm's advantage estimator")
    lo.set("algorithm.adv_estimator", ESTIMATOR[algo], origin=why)

    if s.kl_in_reward is not None:
        lo.set("algorithm.use_kl_in_reward", s.kl_in_reward.enabled, "algo.kl_in_reward.enabled")
        lo.set("algorithm.kl_ctrl.kl_coef", s.kl_in_reward.coef, "algo.kl_in_reward.coef")
    elif algo in ("grpo", "dapo"):
        lo.set(
            "algorithm.use_kl_in_reward",
            False,
            origin=axis("algorithm", algo, "group-relative methods keep KL out of the reward"),
        )
        if algo == "dapo":
            lo.set("algorithm.kl_ctrl.kl_coef", 0.0, origin=axis("algorithm", algo, "DAPO drops the KL term"))

    if s.kl_loss is not None:
        lo.set(f"{ARF}.actor.use_kl_loss", s.kl_loss.enabled, "algo.kl_loss.enabled")
        lo.set(f"{ARF}.actor.kl_loss_coef", s.kl_loss.coef, "algo.kl_loss.coef")
        lo.set(f"{ARF}.actor.kl_loss_type", s.kl_loss.type, "algo.kl_loss.type")
    elif algo == "dapo":
        no_kl = axis("algorithm", algo, "DAPO drops the KL term")
        lo.set(f"{ARF}.actor.use_kl_loss", False, origin=no_kl)
        lo.set(f"{ARF}.actor.kl_loss_coef", 0.0, origin=no_kl)

    lo.set_if(f"{ARF}.actor.entropy_coeff", s.entropy_coeff, "algo.entropy_coeff")
    lo.set_if(f"{ARF}.actor.clip_ratio_low", s.clip_ratio.low, "algo.clip_ratio.low")
    lo.set_if(f"{ARF}.actor.clip_ratio_high", s.clip_ratio.high, "algo.clip_ratio.high")
    lo.set_if(f"{ARF}.actor.clip_ratio_c", s.clip_ratio.c, "algo.clip_ratio.c")
    if s.loss_agg_mode is not None:
        lo.set(f"{ARF}.actor.loss_agg_mode", s.loss_agg_mode, "algo.loss_agg_mode")
    elif algo == "dapo":
        lo.set(
            f"{ARF}.actor.loss_agg_mode",
            "token-mean",
            origin=axis("algorithm", algo, "DAPO's token-level policy-gradient loss"),
        )

    lo.set_if(f"{ARF}.actor.policy_loss.loss_mode", s.policy_loss, "algo.policy_loss")
    lo.set_if("algorithm.gamma", s.gamma, "algo.gamma")
    lo.set_if("algorithm.lam", s.lam, "algo.lam")
    _rollout_correction(lo)

    if algo == "dapo":
        _dapo(lo)
    else:
        for extra in ("overlong_buffer", "filter_groups"):
            if getattr(s, extra) is not None:
                lo.error(
                    "RLC301",
                    f"algo.{extra} is a DAPO setting; this recipe's algorithm is {algo}",
                    f"algo.{extra}",
                )
    if algo == "ppo":
        _critic(lo)


# recipe field → verl key under algorithm.rollout_correction (algorithm/rollout_correction.yaml,
# the same keys in 0.7.1, 0.9.0 and 0.9.1)
ROLLOUT_CORRECTION = {
    "importance_sampling": "rollout_is",
    "is_threshold": "rollout_is_threshold",
    "is_batch_normalize": "rollout_is_batch_normalize",
    "rejection_sampling": "rollout_rs",
    "rs_threshold": "rollout_rs_threshold",
    "bypass_mode": "bypass_mode",
    "loss_type": "loss_type",
}


def _rollout_correction(lo: Lowering) -> None:
    """Importance and rejection sampling between the rollout's and the trainer's policies. Both
    compare against the log probs the rollout sampled with, which the rollout only returns with
    rollout.calculate_log_probs (verl/trainer/ppo/rollout_corr_helper.py reads rollout_log_probs)."""
    rc = lo.recipe.algorithm_settings.rollout_correction
    if rc is None:
        return
    for field, key in ROLLOUT_CORRECTION.items():
        lo.set_if(
            f"algorithm.rollout_correction.{key}", getattr(rc, field), f"algo.rollout_correction.{field}"
        )
    if rc.importance_sampling is not None or rc.rejection_sampling is not None or rc.bypass_mode:
        lo.set(f"{ARF}.rollout.calculate_log_probs", True, "algo.rollout_correction")


def _dapo(lo: Lowering) -> None:
    s, r = lo.recipe.algorithm_settings, lo.recipe
    if s.clip_ratio.high is None or s.clip_ratio.low is None or s.clip_ratio.high <= s.clip_ratio.low:
        lo.error(
            "RLC301",
            "DAPO decouples the clip range: set algo.clip_ratio.low and a larger "
            "algo.clip_ratio.high (clip-higher)",
            "algo.clip_ratio",
            hint="the DAPO paper uses low: 0.2, high: 0.28",
        )
    ob = s.overlong_buffer
    if ob is not None:
        lo.set(
            "reward.reward_manager.name",
            "dapo",
            origin=axis("algorithm", "dapo", "the overlong buffer is applied by verl's dapo reward manager"),
            alternatives=("reward_model.reward_manager",),
        )
        # reward.reward_kwargs is open in every indexed release; the legacy reward_model.reward_kwargs
        # (migrated there by 0.7.1's main_ppo and the fully-async entrypoint) is its other name
        for name, value, field in (
            ("overlong_buffer_cfg.enable", ob.enabled, "algo.overlong_buffer.enabled"),
            ("overlong_buffer_cfg.len", ob.length, "algo.overlong_buffer.length"),
            ("overlong_buffer_cfg.penalty_factor", ob.penalty_factor, "algo.overlong_buffer.penalty_factor"),
            ("overlong_buffer_cfg.log", ob.log, "algo.overlong_buffer.log"),
            ("max_resp_len", r.batch.max_response_length, "batch.max_response_length"),
        ):
            lo.set(
                f"reward.reward_kwargs.{name}",
                value,
                field,
                alternatives=(f"reward_model.reward_kwargs.{name}",),
            )
        if ob.length >= r.batch.max_response_length:
            lo.error(
                "RLC301",
                f"the overlong buffer ({ob.length} tokens) must be shorter than "
                f"batch.max_response_length ({r.batch.max_response_length})",
                "algo.overlong_buffer.length",
            )
    fg = s.filter_groups
    if fg is not None:
        lo.set("algorithm.filter_groups.enable", fg.enabled, "algo.filter_groups.enabled")
        lo.set("algorithm.filter_groups.metric", fg.metric, "algo.filter_groups.metric")
        lo.set(
            "algorithm.filter_groups.max_num_gen_batches",
            fg.max_num_gen_batches,
            "algo.filter_groups.max_num_gen_batches",
        )


def _critic(lo: Lowering) -> None:
    r = lo.recipe
    c = r.critic
    assert c is not None  # the Recipe validator requires a critic for ppo
    if c.model_path is not None:
        lo.set("critic.model.path", c.model_path, "critic.model_path")
    else:
        actor_model = lo.current(f"{ARF}.model.path")
        lo.set("critic.model.path", actor_model.value, origin=actor_model.origin)
    lo.set_if("critic.model.use_remove_padding", c.use_remove_padding, "critic.use_remove_padding")
    lo.set_if(
        "critic.model.enable_gradient_checkpointing",
        c.gradient_checkpointing,
        "critic.gradient_checkpointing",
    )
    lo.set("critic.optim.lr", c.optim.lr, "critic.optim.lr")
    lo.set_if("critic.optim.lr_warmup_steps", c.optim.lr_warmup_steps, "critic.optim.lr_warmup_steps")
    lo.set_if("critic.optim.weight_decay", c.optim.weight_decay, "critic.optim.weight_decay")
    lo.set("critic.use_dynamic_bsz", r.batch.dynamic_batch_size, "batch.dynamic_batch_size")
    lo.set_if(
        "critic.ppo_max_token_len_per_gpu", r.batch.max_token_len_per_gpu, "batch.max_token_len_per_gpu"
    )
    lo.set_if(
        "critic.ppo_micro_batch_size_per_gpu",
        r.batch.micro_batch_size_per_gpu,
        "batch.micro_batch_size_per_gpu",
    )
    lo.set_if("trainer.critic_warmup", c.warmup, "critic.warmup")
