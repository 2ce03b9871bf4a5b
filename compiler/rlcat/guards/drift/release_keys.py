from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from rlcat.diagnostics import RlcatError, Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.verl.index import KeyIndex, available_versions, load_index
from rlcat.verl.renames import rename_hint, renamed


@register
class KeyMissingInRelease(Guard):
    """A key that another verl release has but the platform's release lacks, named with its replacement.

    **Why**: verl's config keys move between releases, and Hydra rejects an unknown key only when
    the job starts. verl 0.9.1, for example, dropped `actor_rollout_ref.actor.megatron.grad_offload`,
    which 0.7.1, 0.9.0 and upstream's Megatron scripts still set. The guard compares the plan
    with the key indexes of every release rlcat knows (generated from PyPI, never typed by hand):
    a key set through `overrides:` or `--override` that the target release lacks is an error that
    names the releases that have it and its name in the target release where verl renamed it
    (`schemas/verl/renames.json`: sections moved between the key indexes of two releases, and the
    renamed leaves the reference data states; `rlcat import --migrate` rewrites a script's old
    names), else the closest key of the target release. A recipe field
    that rlcat writes only where the release has the key (`actor.offload.grad` → grad_offload) is
    not a finding: the key check leaves it out with an RLC403 note.

    **Bad**:

    ```yaml
    # compiled for cuda (verl 0.9.1)
    overrides: {actor_rollout_ref.actor.megatron.grad_offload: true}
    ```

    **Good**:

    ```yaml
    actor:
      offload: {grad: true}   # emitted where the release has the key, left out elsewhere (RLC403)
    ```
    """

    id = "RLC801"
    name = "key_missing_in_release"
    title = "key removed or renamed between verl releases"
    severity = Severity.ERROR
    verl_startup = "refuses"
    source = (
        "schemas/verl/<version>/*.json (generated from the PyPI releases)",
        "verl 0.9.1 wheel: no grad_offload in engine/megatron.yaml",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        target = ctx.index
        for setting in ctx.plan.active_overrides():
            key = setting.key
            if setting.optional or target.name_of(key, setting.alternatives) or target.open_dict_of(key):
                continue  # an optional key is rlcat's own choice, left out by the key check (RLC403)
            holders = [
                v
                for v in available_versions()
                if v != target.verl_version and (idx := _comparable(v, target)) is not None and idx.has(key)
            ]
            if not holders:
                continue  # unknown everywhere: the key check reports it with a did-you-mean
            where = ", ".join(holders)
            newer = [v for v in holders if Version(v) > Version(target.verl_version)]
            change = "does not have it yet" if newer and len(newer) == len(holders) else "dropped it"
            moved = renamed(key, target)
            change = "has it under another name" if moved else change
            yield Finding(
                f"verl {target.verl_version} {change}: {key} is in {where}",
                key=key,
                hint=rename_hint(moved) if moved else _closest(key, target),
            )


def _comparable(version: str, target: KeyIndex) -> KeyIndex | None:
    """The same entry config in another release (ppo_megatron_trainer where the group choice is new)."""
    candidates = [(target.config_name, target.group_overrides)]
    if target.group_overrides == ("model_engine=megatron",):
        candidates.append(("ppo_megatron_trainer", ()))
    for name, groups in candidates:
        try:
            return load_index(version, name, groups)
        except RlcatError:
            continue
    return None


def _closest(key: str, target: KeyIndex) -> str:
    parts = key.split(".")
    for width in range(len(parts) - 1, 0, -1):
        suffix = "." + ".".join(parts[-width:])
        found = sorted(k for k in target.keys if k.endswith(suffix))
        if found and width >= 2:
            return "the closest key in this release: " + " or ".join(found[:3])
    return "this release has no key of that name; remove the setting"
