"""Settings every recipe has, whatever its axes: data, model, batch, rollout sampling, trainer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rlcat.diagnostics import diag
from rlcat.lower.context import Lowering
from rlcat.model.paths import split_placeholder
from rlcat.syntax.hydra_value import Interpolation, inert
from rlcat.verl.names import ARF


def _files(files: list[str]) -> str | list[str]:
    paths = [launch_path(f) for f in files]
    return paths[0] if len(paths) == 1 else paths


def launch_path(path: str) -> str:
    """A path as verl receives it: a leading `~`, `$HOME` or `$PWD` (model/paths.py has the rule;
    other placeholders were refused when the entry was read) becomes `${oc.env:HOME}` or
    `${oc.env:PWD}`. verl opens paths as given and expands neither, while OmegaConf resolves the
    interpolation when verl resolves its config (verl/trainer/main_ppo.py, TaskRunner.run:
    `OmegaConf.resolve(config)`), in the environment of the launch. The rest of the path stays data
    (its own `${` escaped)."""
    variable, rest = split_placeholder(path)
    if variable is None:
        return path
    return Interpolation("${oc.env:" + variable + "}" + inert(rest))


def split_prefix(key: str) -> tuple[str, str]:
    """`++a.b` → ("++", "a.b"): Hydra's add (`+`) or add-or-override (`++`) prefix of an override key,
    as `overrides:` and --override write it, and the key itself."""
    name = key.lstrip("+")
    return key[: len(key) - len(name)], name


def flatten(prefix: str, mapping: dict[str, Any]) -> list[tuple[str, Any]]:
    """Nested mapping → dotted (key, value) pairs, in the mapping's order."""
    out: list[tuple[str, Any]] = []
    for key, value in mapping.items():
        dotted = f"{prefix}.{key}"
        if isinstance(value, dict) and value:
            out += flatten(dotted, value)
        else:
            out.append((dotted, value))
    return out


def lower_data(lo: Lowering) -> None:
    ds, origin = lo.resolved.dataset, lo.resolved.dataset_origin
    batch = lo.recipe.batch
    lo.set("data.train_files", _files(ds.train_files), origin=origin)
    lo.set("data.val_files", _files(ds.val_files), origin=origin)
    lo.set("data.prompt_key", ds.prompt_key, origin=origin)
    lo.set("data.max_prompt_length", batch.max_prompt_length, "batch.max_prompt_length")
    lo.set("data.max_response_length", batch.max_response_length, "batch.max_response_length")
    lo.set("data.truncation", ds.truncation, origin=origin)
    if ds.filter_overlong_prompts:
        lo.set("data.filter_overlong_prompts", True, origin=origin)
    if ds.image_key is not None:
        lo.set("data.image_key", ds.image_key, origin=origin)
    if ds.return_raw_chat is not None:
        lo.set("data.return_raw_chat", ds.return_raw_chat, origin=origin)


def lower_model(lo: Lowering) -> None:
    actor, model = lo.recipe.actor, lo.resolved.model
    if actor.model_path is not None:
        lo.set(f"{ARF}.model.path", launch_path(actor.model_path), "actor.model_path")
    else:
        lo.set(f"{ARF}.model.path", launch_path(model.hf_id), origin=lo.resolved.model_origin)
    lo.set_if(f"{ARF}.model.use_remove_padding", actor.use_remove_padding, "actor.use_remove_padding")
    lo.set_if(
        f"{ARF}.model.enable_gradient_checkpointing",
        actor.gradient_checkpointing,
        "actor.gradient_checkpointing",
    )
    # the tokenizer and processor verl loads for the dataset read data.trust_remote_code (0.7.1
    # verl/trainer/main_ppo.py:314; 0.9.x verl/experimental/fully_async_policy/fully_async_main.py:62),
    # the models read model.trust_remote_code: one switch sets both. Optional: a release without
    # the data key leaves it out with a note.
    for key in (f"{ARF}.model.trust_remote_code", "data.trust_remote_code"):
        if actor.trust_remote_code is not None:
            lo.set(key, actor.trust_remote_code, "actor.trust_remote_code", optional=key.startswith("data."))
        elif model.trust_remote_code:
            lo.set(key, True, origin=lo.resolved.model_origin, optional=key.startswith("data."))
    for key, value in flatten(f"{ARF}.model.override_config", actor.model_override_config):
        lo.set(key, value, "actor.model_override_config." + key.split("override_config.", 1)[1])
    lo.set_if(f"{ARF}.model.use_fused_kernels", actor.use_fused_kernels, "actor.use_fused_kernels")
    # the reference reads the actor's value through an interpolation, but upstream scripts write
    # both, and a `--set` on one then reads the same in either role
    for role in ("actor", "ref"):
        lo.set_if(f"{ARF}.{role}.use_torch_compile", actor.use_torch_compile, "actor.use_torch_compile")
        lo.set_if(
            f"{ARF}.{role}.entropy_from_logits_with_chunking",
            actor.entropy_from_logits_with_chunking,
            "actor.entropy_from_logits_with_chunking",
        )


def lower_batch(lo: Lowering) -> None:
    b = lo.recipe.batch
    lo.set(f"{ARF}.rollout.n", b.responses_per_prompt, "batch.responses_per_prompt")
    lo.set(f"{ARF}.actor.ppo_mini_batch_size", b.mini_batch_size, "batch.mini_batch_size")
    lo.set_if(
        f"{ARF}.actor.ppo_micro_batch_size_per_gpu",
        b.micro_batch_size_per_gpu,
        "batch.micro_batch_size_per_gpu",
    )
    lo.set(f"{ARF}.actor.use_dynamic_bsz", b.dynamic_batch_size, "batch.dynamic_batch_size")
    lo.set_if(
        f"{ARF}.actor.ppo_max_token_len_per_gpu", b.max_token_len_per_gpu, "batch.max_token_len_per_gpu"
    )
    for role in ("ref", "rollout"):
        lo.set_if(
            f"{ARF}.{role}.log_prob_micro_batch_size_per_gpu",
            b.log_prob_micro_batch_size_per_gpu,
            "batch.log_prob_micro_batch_size_per_gpu",
        )
        lo.set(f"{ARF}.{role}.log_prob_use_dynamic_bsz", b.dynamic_batch_size, "batch.dynamic_batch_size")
        lo.set_if(
            f"{ARF}.{role}.log_prob_max_token_len_per_gpu",
            b.log_prob_max_token_len_per_gpu,
            "batch.log_prob_max_token_len_per_gpu",
        )


def lower_actor_optim(lo: Lowering) -> None:
    optim = lo.recipe.actor.optim
    lo.set(f"{ARF}.actor.optim.lr", optim.lr, "actor.optim.lr")
    lo.set_if(f"{ARF}.actor.optim.lr_warmup_steps", optim.lr_warmup_steps, "actor.optim.lr_warmup_steps")
    lo.set_if(f"{ARF}.actor.optim.lr_decay_steps", optim.lr_decay_steps, "actor.optim.lr_decay_steps")
    lo.set_if(f"{ARF}.actor.optim.weight_decay", optim.weight_decay, "actor.optim.weight_decay")


def lower_rollout(lo: Lowering) -> None:
    r, p = lo.recipe.rollout, lo.recipe.parallelism.rollout
    pre = f"{ARF}.rollout"
    lo.set_if(f"{pre}.tensor_model_parallel_size", p.tp, "parallelism.rollout.tp")
    lo.set_if(f"{pre}.data_parallel_size", p.dp, "parallelism.rollout.dp")
    lo.set_if(f"{pre}.expert_parallel_size", p.ep, "parallelism.rollout.ep")
    for name in (
        "gpu_memory_utilization",
        "max_model_len",
        "max_num_batched_tokens",
        "enable_chunked_prefill",
        "temperature",
        "top_p",
        "top_k",
        "dtype",
        "cudagraph_capture_sizes",
        "enforce_eager",
        "free_cache_engine",
        "enable_prefix_caching",
        "max_num_seqs",
        "ignore_eos",
        "load_format",
        "quantization",
    ):
        lo.set_if(f"{pre}.{name}", getattr(r, name), f"rollout.{name}")
    lo.set_if(
        f"{pre}.checkpoint_engine.update_weights_bucket_megabytes",
        r.weight_sync_bucket_mb,
        "rollout.weight_sync_bucket_mb",
    )
    lo.set_if(f"{pre}.enable_rollout_routing_replay", r.routing_replay, "rollout.routing_replay")
    for name in ("temperature", "top_p", "top_k", "do_sample", "n"):
        lo.set_if(f"{pre}.val_kwargs.{name}", getattr(r.val, name), f"rollout.val.{name}")
    _multi_turn(lo)


def _multi_turn(lo: Lowering) -> None:
    """Multi-turn rollout with tools: verl's agent loop reads rollout.multi_turn and rollout.agent
    (verl/experimental/agent_loop/tool_agent_loop.py)."""
    mt = lo.recipe.rollout.multi_turn
    if mt is None:
        return
    pre = f"{ARF}.rollout.multi_turn"
    lo.set(f"{pre}.enable", mt.enabled, "rollout.multi_turn.enabled")
    if mt.tool_config_path is not None:
        lo.set(
            f"{pre}.tool_config_path", launch_path(mt.tool_config_path), "rollout.multi_turn.tool_config_path"
        )
    for name in (
        "format",
        "max_user_turns",
        "max_assistant_turns",
        "max_parallel_calls",
        "max_tool_response_length",
    ):
        lo.set_if(f"{pre}.{name}", getattr(mt, name), f"rollout.multi_turn.{name}")
    lo.set_if(f"{ARF}.rollout.agent.default_agent_loop", mt.agent_loop, "rollout.multi_turn.agent_loop")
    lo.set_if(f"{ARF}.rollout.agent.num_workers", mt.agent_workers, "rollout.multi_turn.agent_workers")


def lower_trainer(lo: Lowering) -> None:
    t = lo.recipe.trainer
    lo.set("trainer.logger", list(t.logger), "trainer.logger")
    lo.set("trainer.project_name", t.project, "trainer.project")
    if t.experiment is not None:
        lo.set("trainer.experiment_name", t.experiment, "trainer.experiment")
    else:
        lo.set("trainer.experiment_name", lo.recipe.name, "name")
    lo.set_if("trainer.total_epochs", t.epochs, "trainer.epochs")
    lo.set_if("trainer.total_training_steps", t.total_training_steps, "trainer.total_training_steps")
    lo.set_if("trainer.test_freq", t.test_freq, "trainer.test_freq")
    lo.set_if("trainer.save_freq", t.save_freq, "trainer.save_freq")
    lo.set_if("trainer.val_before_train", t.val_before_train, "trainer.val_before_train")
    lo.set_if("trainer.resume_mode", t.resume_mode, "trainer.resume_mode")
    lo.set_if("trainer.log_val_generations", t.log_val_generations, "trainer.log_val_generations")
    lo.set_if("trainer.balance_batch", t.balance_batch, "trainer.balance_batch")
    _checkpoint(lo)


def _checkpoint(lo: Lowering) -> None:
    """Checkpoint folder, contents and retention (trainer.save_freq says how often)."""
    c = lo.recipe.trainer.checkpoint
    if c.dir is not None:
        lo.set("trainer.default_local_dir", launch_path(c.dir), "trainer.checkpoint.dir")
    if c.resume_from is not None:
        lo.set("trainer.resume_from_path", launch_path(c.resume_from), "trainer.checkpoint.resume_from")
    roles = [f"{ARF}.actor"] + (["critic"] if lo.recipe.critic is not None else [])
    for role in roles:
        for name in ("save_contents", "load_contents"):
            value = getattr(c, name)
            lo.set_if(
                f"{role}.checkpoint.{name}",
                None if value is None else list(value),
                f"trainer.checkpoint.{name}",
            )
    lo.set_if("trainer.max_actor_ckpt_to_keep", c.keep_actor, "trainer.checkpoint.keep_actor")
    lo.set_if("trainer.max_critic_ckpt_to_keep", c.keep_critic, "trainer.checkpoint.keep_critic")


def lower_escape_hatches(lo: Lowering) -> None:
    """The recipe's own `overrides:` and `env:`: verl keys and variables the schema does not model.
    An override key keeps Hydra's `+` or `++` as written; the check judges it against the release."""
    written: dict[str, str] = {}
    for key, value in lo.recipe.overrides.items():
        prefix, name = split_prefix(key)
        found = lo.resolved.source.origin(("overrides", key)) or lo.origin("overrides")
        if name in written:
            lo.out.diagnostics.append(
                diag(
                    "RLC103",
                    f"overrides: '{written[name]}' and '{key}' set the same verl key",
                    **found.position(),
                    key=f"overrides.{key}",
                    hint="keep one of them",
                )
            )
            continue
        written[name] = key
        if not prefix and name in lo.target.groups and isinstance(value, str):
            # a config-group choice (`model_engine: veomni`): it picks part of verl's config tree,
            # as on the command line; the check judges the option against the release
            lo.out.group_choices[name] = value
            continue
        lo.set(name, value, origin=replace(found, field="overrides"), prefix=prefix)
    for name, value in lo.recipe.env.items():
        lo.env(name, value, origin=lo.origin(f"env.{name}"))
        lo.out.recipe_env.add(name)
