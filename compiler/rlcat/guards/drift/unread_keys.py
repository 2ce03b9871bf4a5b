from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, in_range, register
from rlcat.verl.names import MAIN_PPO, ONE_STEP_OFF_MAIN
from rlcat.verl.renames import migration


@dataclass(frozen=True)
class UnreadSection:
    """Keys a release's config tree composes but one entrypoint never reads, with where they went."""

    verl: str  # the releases (PEP 440 range)
    entrypoint: str
    prefix: str  # a top-level section such as "reward_model"; where its keys go is verl's own
    # migration (rlcat.verl.renames.migration, read from the releases' source)
    why: str  # why the entrypoint does not read them, with the verl source that shows it


# verl/experimental/reward_loop/reward_loop.py migrate_legacy_reward_impl (0.9.0 and 0.9.1: lines
# 39-89) moves the legacy sections under `reward.` (schemas/verl/renames.json reads where each key
# goes from that function); only fully_async_main.py:237 calls it there.
# 0.7.1's main_ppo.py:44 called it too; 0.9.0's and 0.9.1's main_ppo.py (main: 167-194, 166-193) go
# straight to validate_config and the trainer, which read config.reward.* only.
_REWARD_WHY = (
    "only the fully-async entrypoint moves the legacy reward sections to reward.* "
    "(fully_async_main.py:237 calls migrate_legacy_reward_impl; verl/trainer/main_ppo.py does not)"
)
UNREAD: tuple[UnreadSection, ...] = tuple(
    UnreadSection(verl=">=0.9", entrypoint=MAIN_PPO, prefix=prefix, why=_REWARD_WHY)
    for prefix in ("reward_model", "custom_reward_function", "sandbox_fusion")
)
# the one-step-off entrypoint hands its config to main_ppo's run_ppo without the migration too
# (0.9.0 and 0.9.1 verl/experimental/one_step_off_policy/main_ppo.py: main)
UNREAD += tuple(replace(s, entrypoint=ONE_STEP_OFF_MAIN) for s in UNREAD)


@register
class KeyComposedButNotRead(Guard):
    """A key the release's config tree accepts but the entrypoint never reads: the setting is lost.

    **Why**: verl keeps old config sections in its tree so that old command lines still compose,
    and relies on a migration step to move them to their new home. From verl 0.9.0 on, only the
    fully-async entrypoint runs that step (`migrate_legacy_reward_impl`,
    `verl/experimental/fully_async_policy/fully_async_main.py:237`); `verl.trainer.main_ppo`
    (`verl/trainer/main_ppo.py`, `main`: lines 167-194 in 0.9.0, 166-193 in 0.9.1) goes straight to the
    trainer, which reads `reward.*` only. So on `main_ppo` the top-level `reward_model.*`,
    `custom_reward_function.*` and `sandbox_fusion.*` compose cleanly and are ignored: upstream's
    DAPO script (`recipe/dapo/test_dapo_7b_math.sh`, run as `verl.trainer.main_ppo`) sets
    `reward_model.reward_manager=dapo` and the overlong buffer under `reward_model.reward_kwargs`,
    and trains with the naive reward manager and no overlong penalty. verl 0.7.1's `main_ppo`
    still migrated them (`verl/trainer/main_ppo.py:44`). The hint names the key's home in the
    release, as verl's migration maps it (`verl/experimental/reward_loop/reward_loop.py:39-89`).
    The guard reads a table of release ranges, entrypoints and sections, so more can be added.

    **Bad**:

    ```yaml
    mode: colocate            # verl.trainer.main_ppo; compiled for cuda (verl 0.9.1)
    overrides:
      reward_model.reward_manager: dapo
      custom_reward_function.path: /data/reward.py
    ```

    **Good**:

    ```yaml
    mode: colocate
    overrides:
      reward.reward_manager.name: dapo
      reward.custom_reward_function.path: /data/reward.py
    ```
    """

    id = "RLC802"
    name = "key_composed_but_not_read"
    title = "key the entrypoint composes but never reads"
    severity = Severity.ERROR
    verl_startup = "later"
    affects = Affects(modes=("colocate", "one_step_off"), verl=">=0.9")
    source = (
        "verl 0.9.0 verl/trainer/main_ppo.py:167-194, 0.9.1 :166-193 (main: no migrate_legacy_reward_impl)",
        "verl 0.9.0 and 0.9.1 verl/experimental/fully_async_policy/fully_async_main.py:237 (the only call)",
        "verl 0.9.0 and 0.9.1 verl/experimental/reward_loop/reward_loop.py:39-89 (the migration)",
        "verl 0.7.1 verl/trainer/main_ppo.py:44 (still migrated)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        release = ctx.index.verl_version
        if not any(s.entrypoint == ctx.plan.entrypoint and in_range(release, s.verl) for s in UNREAD):
            return
        for setting in ctx.plan.active_overrides():
            found = unread(setting.key, ctx.plan.entrypoint, release)
            if found is None or setting.value is None:
                continue  # a null is what the tree holds anyway: nothing is lost
            yield Finding(
                f"verl {release}'s {ctx.plan.entrypoint} never reads {found.key}: its config tree "
                f"composes the key, but {found.section.why}",
                key=setting.key,
                hint=_hint(found),
            )


@dataclass(frozen=True)
class Unread:
    """A key one entrypoint of a release composes but never reads, and its new home (None: none)."""

    key: str
    section: UnreadSection
    home: str | None


def unread(key: str, entrypoint: str, release: str) -> Unread | None:
    """Whether `entrypoint` of verl `release` never reads `key` (a `+` or `++` aside), with the key
    verl's own migration would have moved it to: the one lookup of the guard, its hint, and
    `rlcat import` (which leaves such a key out, or moves it with --migrate)."""
    key = key.lstrip("+")
    top = key.split(".", 1)[0]
    for section in UNREAD:
        if section.entrypoint == entrypoint and section.prefix == top and in_range(release, section.verl):
            moves = migration()
            for old in sorted((m for m in moves if m.split(".", 1)[0] == top), key=len, reverse=True):
                if key == old or key.startswith(old + "."):
                    return Unread(key, section, moves[old] + key[len(old) :])
            return Unread(key, section, None)
    return None


def _hint(found: Unread) -> str:
    if found.home is not None:
        return (
            f"set {found.home} instead (where verl's own migration would have put it); "
            "`rlcat import --migrate` moves such keys of a script"
        )
    return f"{found.key} has no counterpart under reward.* in this release; remove it"
