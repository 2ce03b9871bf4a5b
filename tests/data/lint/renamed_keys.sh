#!/usr/bin/env bash
# A PPO run written for verl 0.7.1: the critic's FSDP settings under critic.model.fsdp_config (verl
# 0.9.0 moved them to critic.fsdp) and the rollout skip switches (0.9.0: skip.rollout.*).
set -xeuo pipefail

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=gae \
    data.train_files=/data/gsm8k/train.parquet \
    data.val_files=/data/gsm8k/test.parquet \
    data.train_batch_size=64 \
    data.max_prompt_length=512 \
    data.max_response_length=1024 \
    actor_rollout_ref.model.path=Qwen/Qwen3-8B \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.rollout.skip_rollout=True \
    actor_rollout_ref.rollout.skip_dump_dir=/data/rollout_dump \
    critic.model.path=Qwen/Qwen3-8B \
    critic.optim.lr=1e-5 \
    critic.ppo_micro_batch_size_per_gpu=2 \
    critic.model.fsdp_config.fsdp_size=4 \
    critic.model.fsdp_config.forward_prefetch=True \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1
