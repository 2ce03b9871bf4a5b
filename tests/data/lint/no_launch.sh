#!/usr/bin/env bash
# Downloads the data; starts no training run.
set -euo pipefail
mkdir -p data
echo "python -m verl.trainer.main_ppo is started by run.sh"
