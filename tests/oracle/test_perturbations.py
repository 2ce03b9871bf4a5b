"""Seeded perturbations of good plans, judged by verl's own start-up checks and by rlcat: the two
verdicts must agree.

Each perturbation puts one to three changes on a plan rlcat compiles from the built-in catalog —
batch sizes, micro batches, `n`, GPU counts, parallel sizes, dynamic batch size, sequence parallel,
remove-padding, the rollout mode, sampling, a key verl removed, a `+` key — as `--override`s, the
way a user would. rlcat compiles it; the verl release of its platform runs its start-up checks on
what rlcat would launch (or, where rlcat refuses, on the good plan with the same overrides).

- A plan verl refuses must be refused by rlcat, with an error at the override that caused it.
- A plan rlcat refuses and verl accepts must be refused only by guards whose docs say verl starts
  such a run and it fails later (`Guard.verl_startup == "later"`, citing verl's source).

The seed is the tier's (`RLCAT_ORACLE_SEED`, printed in pytest's header); every disagreement is
named with its seed, plan and overrides, so `rlcat compile ... --override ...` reproduces it.
"""

from __future__ import annotations

import concurrent.futures
import os
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rlcat.dev.verl_oracle import case_for, judge_all
from rlcat.diagnostics import Diagnostic
from rlcat.docsite.data import Cell, Site
from rlcat.guards.base import REGISTRY
from rlcat.verl.index import load_index, manifest

from conftest import ORACLE_SEED, compile_cell

pytestmark = [pytest.mark.oracle, pytest.mark.xdist_group("verl-oracle")]

# at least 2,000 a run; fewer only by hand, to reproduce one quickly
PERTURBATIONS = int(os.environ.get("RLCAT_ORACLE_PERTURBATIONS", "2000"))

ACTOR = "actor_rollout_ref.actor"
ROLLOUT = "actor_rollout_ref.rollout"


def _backend(*backends: str) -> Callable[[Cell], bool]:
    return lambda cell: cell.backend in backends


def _mode(*modes: str) -> Callable[[Cell], bool]:
    return lambda cell: cell.mode in modes


def _any(cell: Cell) -> bool:
    return True


@dataclass(frozen=True)
class Knob:
    """One thing a perturbation changes: a key, the values it draws from, the plans it applies to."""

    key: str
    values: tuple[Any, ...]
    applies: Callable[[Cell], bool] = _any


KNOBS = (
    Knob("data.train_batch_size", (16, 32, 64, 96, 128, 256, 500, 512, 1024)),
    Knob(f"{ACTOR}.ppo_mini_batch_size", (8, 16, 32, 48, 64, 128, 256, 512)),
    Knob(f"{ACTOR}.ppo_micro_batch_size_per_gpu", (1, 2, 3, 4, 8, 16)),
    Knob(f"{ACTOR}.use_dynamic_bsz", (True, False)),
    Knob(f"{ROLLOUT}.n", (1, 2, 3, 4, 5, 8, 16)),
    Knob("trainer.n_gpus_per_node", (1, 2, 4, 6, 8)),
    Knob("trainer.nnodes", (1, 2, 3, 4)),
    Knob(f"{ACTOR}.ulysses_sequence_parallel_size", (1, 2, 3, 4, 8), _backend("fsdp", "fsdp2")),
    Knob("actor_rollout_ref.model.use_remove_padding", (True, False)),
    Knob(f"{ACTOR}.megatron.tensor_model_parallel_size", (1, 2, 4, 8), _backend("megatron")),
    Knob(f"{ACTOR}.megatron.pipeline_model_parallel_size", (1, 2, 4), _backend("megatron")),
    Knob(f"{ROLLOUT}.tensor_model_parallel_size", (1, 2, 4, 8)),
    Knob(f"{ROLLOUT}.mode", ("async", "sync")),
    Knob(f"{ROLLOUT}.temperature", (0, 0.6, 1.0)),
    Knob(f"{ROLLOUT}.val_kwargs.do_sample", (True, False)),
    Knob(f"+{ACTOR}.no_such_knob", (1,)),
    Knob(f"+{ROLLOUT}.no_such_knob", (1,)),
    Knob("+trainer.no_such_knob", (1,)),
    Knob("async_training.staleness_threshold", (-1, 0, 0.5), _mode("fully_async")),
    Knob("async_training.trigger_parameter_sync_step", (0, 1, 4), _mode("fully_async")),
    Knob("rollout.n_gpus_per_node", (1, 2, 4, 8), _mode("fully_async")),
)


@dataclass(frozen=True)
class Perturbation:
    number: int
    cell: Cell
    overrides: tuple[str, ...]

    @property
    def name(self) -> str:
        cell = self.cell
        where = f"{cell.recipe} -p {cell.platform} --mode {cell.mode} --engine {cell.engine}"
        where += f" --backend {cell.backend}"
        return f"#{self.number} (seed {ORACLE_SEED}): {where} " + " ".join(
            f"--override {o}" for o in self.overrides
        )

    @property
    def keys(self) -> set[str]:
        return {o.split("=", 1)[0].lstrip("+~") for o in self.overrides}


def removed_keys(release: str) -> list[str]:
    """Keys of verl 0.7.1's trainer config that no entry config of `release` has: a script written
    for the old release sets them, and Hydra refuses them (no `+`)."""
    old = load_index("0.7.1", "ppo_trainer")
    entries = [
        load_index(release, e["config_name"], tuple(e["group_overrides"]))
        for e in manifest(release)["entries"]
    ]
    return sorted(k for k in old.keys if not any(i.has(k) or k in i.sections for i in entries))


def perturbations(site: Site) -> list[Perturbation]:
    """The seeded perturbations of the plans the catalog compiles on every platform."""
    rng = random.Random(f"{ORACLE_SEED}:perturbations")
    cells = [c for c in site.cells if c.compiled is not None]
    removed = {
        release: removed_keys(release)
        for release in {c.compiled.profile.verl_index for c in cells if c.compiled}
    }
    out: list[Perturbation] = []
    while len(out) < PERTURBATIONS:
        cell = rng.choice(cells)
        assert cell.compiled is not None
        knobs = [k for k in KNOBS if k.applies(cell)]
        chosen = rng.sample(knobs, rng.choice((1, 1, 2, 2, 3)))
        overrides = [f"{k.key}={rng.choice(k.values)}" for k in chosen]
        gone = removed.get(cell.compiled.profile.verl_index) or []
        if gone and rng.random() < 0.04:
            overrides = [f"{rng.choice(gone)}=1"]
        out.append(Perturbation(len(out), cell, tuple(overrides)))
    return out


@dataclass
class RlcatVerdict:
    refused: bool
    errors: list[Diagnostic]


def rlcat_verdict(p: Perturbation) -> RlcatVerdict:
    _, errors = compile_cell(p.cell, p.overrides)
    return RlcatVerdict(bool(errors), errors)


def at_the_cause(p: Perturbation, errors: list[Diagnostic]) -> bool:
    """An error names the override that caused the refusal: its key or its argument."""
    return any(
        (d.key or "").lstrip("+~") in p.keys or any(o in (d.argument or "") for o in p.overrides)
        for d in errors
    )


def later_failures() -> set[str]:
    """Guards whose docs say verl starts such a run and it fails (or runs wrong) later."""
    return {code for code, guard in REGISTRY.items() if getattr(guard, "verl_startup", "") == "later"}


@pytest.fixture(scope="session")
def judged(
    catalog_site: Site, verl_oracles: dict[str, Any]
) -> list[tuple[Perturbation, RlcatVerdict, dict[str, Any]]]:
    chosen = perturbations(catalog_site)
    by_release: dict[str, list[dict[str, Any]]] = {}
    for p in chosen:
        assert p.cell.compiled is not None
        release = p.cell.compiled.profile.verl_index
        # verl judges the good plan with the perturbation on top, as `--override`s reach the launch
        by_release.setdefault(release, []).append(case_for(str(p.number), p.cell.compiled, extra=p.overrides))
    missing = sorted(set(by_release) - set(verl_oracles))
    if missing:
        pytest.skip(
            f"no verl oracle environment for {', '.join(missing)}: build it with `rlcat dev verl-oracle`"
        )
    # verl's cases do not depend on rlcat's verdicts: the runners judge while rlcat compiles
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        judging = pool.submit(judge_all, verl_oracles, by_release)
        verdicts = [rlcat_verdict(p) for p in chosen]
        replies = {r["id"]: r for rs in judging.result().values() for r in rs}
    return [(p, v, replies[str(p.number)]) for p, v in zip(chosen, verdicts, strict=True)]


def test_verl_and_rlcat_agree_on_every_perturbation(
    judged: list[tuple[Perturbation, RlcatVerdict, dict[str, Any]]],
) -> None:
    later = later_failures()
    tally: Counter[str] = Counter()
    disagreements: list[str] = []
    for p, mine, theirs in judged:
        verl_refuses = theirs["verdict"] == "refused"
        assert theirs["verdict"] in ("accepted", "refused", "unsupported"), f"{p.name}: {theirs}"
        if theirs["verdict"] == "unsupported":
            tally["unsupported by the release"] += 1
            continue
        codes = sorted({d.code for d in mine.errors})
        if verl_refuses and mine.refused:
            tally["both refuse"] += 1
            if not at_the_cause(p, mine.errors):
                disagreements.append(
                    f"{p.name}: rlcat refuses elsewhere ({codes}); verl: {theirs['message'][:200]}"
                )
        elif verl_refuses:
            disagreements.append(
                f"{p.name}: verl refuses, rlcat accepts; verl: {theirs['type']}: {theirs['message'][:300]}"
            )
        elif mine.refused:
            undocumented = [c for c in codes if c not in later]
            tally["rlcat refuses, verl fails later"] += not undocumented
            if undocumented:
                disagreements.append(
                    f"{p.name}: rlcat refuses ({', '.join(undocumented)}) what verl's start-up accepts, "
                    f"and the guard does not say verl fails later: {[d.message[:160] for d in mine.errors]}"
                )
        else:
            tally["both accept"] += 1
    print(f"\n{len(judged)} perturbations (seed {ORACLE_SEED}): {dict(tally)}")
    report = os.environ.get("RLCAT_ORACLE_REPORT")
    if report:  # every disagreement, for a person working through them
        Path(report).write_text("\n".join(disagreements) + "\n", encoding="utf-8")
    assert disagreements == [], f"{len(disagreements)} disagreements:\n" + "\n".join(disagreements[:60])
