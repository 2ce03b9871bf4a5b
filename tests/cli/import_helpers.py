"""Importing the upstream reference scripts as their records were made: `$HOME` and `$PWD` standing
for the user's paths, `date` pinned, the GPU branch of the device probe (tests/data/upstream_scripts)."""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlcat.catalog import Catalog
from rlcat.diagnostics import RlcatError
from rlcat.importer import Imported, Report, import_run, prove, read_source, target_for, write_files
from rlcat.importer.source import SourceRun

DATA = Path(__file__).resolve().parent.parent / "data" / "upstream_scripts"
SCRIPTS = sorted(p.stem for p in DATA.glob("*.sh"))
PINNED = datetime.datetime(2026, 1, 1, 0, 0, 0)
# A PPO run on Megatron, given after `--`, that imports with nothing unexplained
MEGATRON_COMMAND = (
    "python3", "-m", "verl.trainer.main_ppo", "--config-name", "ppo_megatron_trainer",
    "algorithm.adv_estimator=gae", "critic.optim.lr=1e-5",
    "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2",
    "trainer.logger=[console]", "actor_rollout_ref.rollout.n=1", "data.train_batch_size=256",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4",
    "critic.ppo_micro_batch_size_per_gpu=4",
)  # fmt: skip


def record(name: str, folder: Path = DATA) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / f"{name}.json").read_text())
    return data


def outputs(command: str) -> str | None:
    match = re.fullmatch(r"date \+(\S+)", command)
    if match:
        return PINNED.strftime(match.group(1))
    return "gpu" if "import torch_npu" in command else None


def environment(name: str, folder: Path = DATA) -> dict[str, str]:
    return {"HOME": "$HOME", "PWD": "$PWD", **record(name, folder)["required_env_placeholders"]}


@dataclass
class Done:
    run: SourceRun
    imported: Imported
    report: Report
    folder: Path


def import_reference(name: str, folder: Path, platform: str = "cuda", *, migrate: bool = False) -> Done:
    """Import one reference script into `folder` and prove it, as `rlcat import` does (with
    `--migrate` when `migrate`)."""
    catalog = Catalog.default()
    target = target_for(platform, catalog)
    run = read_source(DATA / f"{name}.sh", env=environment(name), outputs=outputs, groups=list(target.groups))
    recipe = name.rsplit("__", 1)[-1].lower().replace("-", "_")
    imported = import_run(run, target, catalog, recipe, migrate=migrate)
    written = write_files(imported, folder, force=False)
    report = prove(written[0], Catalog([folder, *catalog.roots]), platform, run, imported.solution)
    return Done(run, imported, report, folder)


def launches_verl(name: str) -> bool:
    try:
        read_source(DATA / f"{name}.sh", env=environment(name), outputs=outputs)
    except RlcatError:
        return False
    return True
