"""The differential tier: verl's own start-up checks judge what rlcat calls valid, and refuse what it
must refuse.

Every plan the docs' matrix compiles from the built-in catalog (every recipe × platform × engine ×
mode × backend it allows) goes to the verl release of its platform, whose start-up checks must accept
it (tests/oracle needs `rlcat dev verl-oracle`; a release without its environment is skipped, saying
so). A seeded set of mistakes, each applied to plans of the seed recipes, must be refused by verl and
by rlcat alike; where rlcat misses one today the case is xfail(strict), with the reason, so it flips
when rlcat learns to catch it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from rlcat.compile.assemble import Compiled
from rlcat.dev.verl_oracle import case_for, judge_all
from rlcat.docsite.data import Cell, Site

from conftest import ORACLE_SEED, PLATFORMS, SEED_RECIPES, UPSTREAM_RECIPES, compile_cell, skip_without_oracle

pytestmark = [pytest.mark.oracle, pytest.mark.xdist_group("verl-oracle")]

# The oracle's verdict on a release: the release its platform targets and the reply of its runner.
Verdict = tuple[str, dict[str, Any]]

# Plans rlcat calls valid and verl refuses at start-up, today: each one a guard rlcat still lacks,
# with the verl source that refuses (none now: RLC713 closed the last, the rollout's EP).
KNOWN_DISAGREEMENTS: dict[str, str] = {}


def cell_id(cell: Cell) -> str:
    return f"{cell.recipe}@{cell.platform}/{cell.mode}/{cell.engine}/{cell.backend}"


@pytest.fixture(scope="session")
def plan_verdicts(catalog_site: Site, verl_oracles: dict[str, Any]) -> dict[str, Verdict]:
    """verl's verdict on every plan rlcat compiles, by cell id: all releases judged at once."""
    by_release: dict[str, list[dict[str, Any]]] = {}
    for cell in catalog_site.cells:
        if cell.compiled is not None:
            release = cell.compiled.profile.verl_index
            by_release.setdefault(release, []).append(case_for(cell_id(cell), cell.compiled))
    judged = judge_all(verl_oracles, by_release)
    return {reply["id"]: (release, reply) for release, replies in judged.items() for reply in replies}


def refusal(reply: dict[str, Any]) -> str:
    where = f" [{reply['key']}]" if reply.get("key") else ""
    return f"{reply.get('stage')}: {reply.get('type')}{where}: {reply.get('message')} ({reply.get('at')})"


CATALOG = [(r, p) for r in SEED_RECIPES + UPSTREAM_RECIPES for p in PLATFORMS]


@pytest.mark.parametrize(
    ("recipe", "platform"),
    [
        pytest.param(
            r,
            p,
            id=f"{r}@{p}",
            marks=[pytest.mark.xfail(reason=KNOWN_DISAGREEMENTS[r], strict=True)]
            if r in KNOWN_DISAGREEMENTS
            else [],
        )
        for r, p in CATALOG
    ],
)
def test_verl_accepts_what_rlcat_compiles(
    recipe: str,
    platform: str,
    catalog_site: Site,
    verl_oracles: dict[str, Any],
    plan_verdicts: dict[str, Verdict],
) -> None:
    cells = [c for c in catalog_site.cells if (c.recipe, c.platform) == (recipe, platform) and c.compiled]
    if not cells:
        pytest.skip("rlcat compiles no plan of this recipe on this platform")
    assert cells[0].compiled is not None
    skip_without_oracle(verl_oracles, cells[0].compiled.profile.verl_index)
    verdicts = {cell_id(c): plan_verdicts[cell_id(c)] for c in cells}
    judged = {k: (release, r) for k, (release, r) in verdicts.items() if r["verdict"] != "unsupported"}
    if not judged:
        release, reply = next(iter(verdicts.values()))
        pytest.skip(f"verl {release} cannot judge these plans: {reply['message']}")
    refused = {
        f"{k} (verl {release})": refusal(r)
        for k, (release, r) in judged.items()
        if r["verdict"] != "accepted"
    }
    assert refused == {}, "rlcat compiles plans that verl's start-up checks refuse"
    assert all(r["blocked"] == [] for _, r in judged.values()), "the oracle tried to reach the network"


# --- seeded mistakes: verl refuses each; rlcat must too ---------------------------------------------


@dataclass(frozen=True)
class Mistake:
    """One class of configuration mistake, as Hydra overrides put on top of a good plan."""

    name: str
    overrides: tuple[str, ...]
    verl_says: str  # a part of verl's message
    backends: tuple[str, ...] = ("fsdp", "fsdp2", "megatron")
    rlcat_misses: str = ""  # why rlcat does not refuse it yet (the case is then xfail, strict)


MISTAKES = [
    Mistake(
        "sequence_parallel_without_remove_padding",
        (
            "actor_rollout_ref.actor.ulysses_sequence_parallel_size=2",
            "actor_rollout_ref.model.use_remove_padding=False",
        ),
        "you must enable `use_remove_padding`",
        backends=("fsdp", "fsdp2"),
    ),
    Mistake(
        "train_batch_below_mini_batch",
        (
            "actor_rollout_ref.actor.use_dynamic_bsz=False",
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
            "data.train_batch_size=16",  # divisible by every seed plan's GPUs: the batch check comes first
        ),
        "train_batch_size (16) must be >= actor.ppo_mini_batch_size",
    ),
    Mistake(
        "removed_rollout_mode_sync",
        ("actor_rollout_ref.rollout.mode=sync",),
        "Rollout mode 'sync' has been removed",
    ),
    Mistake(
        "plus_key_in_actor_dataclass",
        ("+actor_rollout_ref.actor.no_such_knob=1",),
        "unexpected keyword argument 'no_such_knob'",
    ),
    Mistake(
        "plus_key_in_rollout_dataclass",
        ("+actor_rollout_ref.rollout.no_such_knob=1",),
        "unexpected keyword argument 'no_such_knob'",
    ),
    Mistake(
        "validation_sampling_at_zero_temperature",
        ("actor_rollout_ref.rollout.val_kwargs.do_sample=True", "actor_rollout_ref.rollout.temperature=0"),
        "validation gen temperature should be greater than 0",
    ),
]
PLANS_PER_MISTAKE = 2


def bases(site: Site, mistake: Mistake) -> list[Cell]:
    """The seeded choice of good plans the mistake is put on: colocated plans of the seed recipes on
    cuda (the fully-async entrypoint runs other checks) with a backend the mistake applies to."""
    fits = [
        c
        for c in site.cells
        if c.compiled is not None
        and c.recipe in SEED_RECIPES
        and (c.platform, c.mode) == ("cuda", "colocate")
        and c.backend in mistake.backends
    ]
    return random.Random(f"{ORACLE_SEED}:{mistake.name}").sample(fits, PLANS_PER_MISTAKE)


def with_mistake(cell: Cell, mistake: Mistake) -> tuple[Compiled, list[str], str]:
    """rlcat's compile of the plan with the mistake on its command line (`--override`): the plan, the
    overrides verl must be given beyond it, and rlcat's verdict."""
    compiled, errors = compile_cell(cell, mistake.overrides)
    verdict = "refused: " + ", ".join(d.code for d in errors) if errors else "accepted"
    if compiled is None:
        assert cell.compiled is not None
        return cell.compiled, list(mistake.overrides), verdict
    return compiled, [], verdict


@pytest.mark.parametrize(
    "mistake",
    [
        pytest.param(
            m,
            id=m.name,
            marks=[pytest.mark.xfail(reason=m.rlcat_misses, strict=True)] if m.rlcat_misses else [],
        )
        for m in MISTAKES
    ],
)
def test_rlcat_refuses_what_verl_refuses(
    mistake: Mistake, catalog_site: Site, verl_oracles: dict[str, Any]
) -> None:
    skip_without_oracle(verl_oracles, "0.9.1")
    chosen = bases(catalog_site, mistake)
    cases, rlcat_says = [], {}
    for cell in chosen:
        compiled, extra, verdict = with_mistake(cell, mistake)
        assert compiled.profile.verl_index == "0.9.1"
        key = f"{cell_id(cell)} + {' '.join(mistake.overrides)}"
        cases.append(case_for(key, compiled, extra=extra))
        rlcat_says[key] = verdict
    replies = verl_oracles["0.9.1"].judge(cases)
    # the mistake is one: verl refuses it, with its own message
    for reply in replies:
        assert reply["verdict"] == "refused", f"verl accepts {reply['id']}"
        assert mistake.verl_says in reply["message"], (
            f"{reply['id']}: verl refuses otherwise: {refusal(reply)}"
        )
    missed = {k: v for k, v in rlcat_says.items() if not v.startswith("refused")}
    assert missed == {}, f"verl refuses these (seed {ORACLE_SEED}) and rlcat does not"
