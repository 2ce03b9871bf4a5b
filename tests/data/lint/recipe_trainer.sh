#!/usr/bin/env bash
# verl-recipe's DAPO trainer: not in the verl release, so not checked against a key index.
python3 -m recipe.dapo.main_dapo \
    data.train_batch_size=64 \
    trainer.n_gpus_per_node=8
