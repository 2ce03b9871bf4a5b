#!/usr/bin/env bash
# an if that never closes
if [ -n "$X" ]; then
    python3 -m verl.trainer.main_ppo trainer.nnodes=1 \
