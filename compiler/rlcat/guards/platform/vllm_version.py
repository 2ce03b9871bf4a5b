from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, Knob, hint, leading_version, register

MIN_VLLM = Version("0.18")


@register
class VllmTooOldForVerl(Guard):
    """verl 0.9 and later support vLLM 0.18 or newer only.

    **Why**: verl 0.9.0 dropped the code paths for older vLLM releases (its release notes: "vLLM >=
    0.18 only"). A platform image that pairs verl 0.9 with an older vLLM fails when the rollout
    starts. The guard reads the vLLM version from the platform profile's software baseline, and
    applies whenever the plan's rollout is vLLM (`actor_rollout_ref.rollout.name`).

    **Bad**:

    ```yaml
    # catalog/platforms/old.yaml
    verl_index: 0.9.0
    software: {vLLM: 0.17.1}
    ```

    **Good**:

    ```yaml
    verl_index: 0.9.0
    software: {vLLM: 0.27.0}
    ```
    """

    id = "RLC503"
    name = "vllm_too_old_for_verl"
    title = "vLLM older than 0.18 with verl 0.9 or later"
    severity = Severity.ERROR
    verl_startup = "later"
    # the engine is judged on the plan (rollout.name), not the recipe's `engine:` axis
    affects = Affects(verl=">=0.9")
    source = ("verl v0.9.0 release notes (vLLM >= 0.18 only)",)
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.value("actor_rollout_ref.rollout.name") != "vllm":
            return
        software = {k.lower(): v for k, v in ctx.profile.software.items()}
        version = software.get("vllm")
        if version is None:
            return
        have = leading_version(version)
        if have is not None and have < MIN_VLLM:
            yield Finding(
                f"platform {ctx.profile.name} runs vLLM {version}; verl {ctx.profile.verl_index} "
                "needs vLLM 0.18 or newer",
                hint=hint(
                    "use an image with a newer vLLM, or ",
                    Knob("--engine sglang", ("actor_rollout_ref.rollout.name=sglang",)),
                ),
            )
