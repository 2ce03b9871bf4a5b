from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, register
from rlcat.model.axes import ENGINES


@register
class CustomAllReduceWithExpandableSegments(Guard):
    """The rollout engine's custom all-reduce must be off while PyTorch uses expandable segments.

    **Why**: AMD's images set `PYTORCH_ALLOC_CONF=expandable_segments:True` to avoid out-of-memory
    errors, and that allocator mode conflicts with vLLM's and SGLang's custom all-reduce on ROCm
    (known issue 2; verl's ROCm CI disables it for the same reason). The fix is
    `disable_custom_all_reduce: True` in the engine's kwargs until ROCm resolves the conflict.

    **Bad**:

    ```yaml
    env: {PYTORCH_ALLOC_CONF: "expandable_segments:True"}
    rollout:
      engine_kwargs:
        vllm: {disable_custom_all_reduce: false}
    ```

    **Good**:

    ```yaml
    env: {PYTORCH_ALLOC_CONF: "expandable_segments:True"}
    rollout:
      engine_kwargs:
        vllm: {disable_custom_all_reduce: true}
    ```
    """

    id = "RLC502"
    name = "custom_all_reduce_with_expandable_segments"
    title = "custom all-reduce conflicts with expandable segments on ROCm"
    severity = Severity.ERROR
    affects = Affects(platforms=("rocm",))
    source = (
        "docs/amd_tutorial/amd_quick_start.rst (Known Issue 2)",
        ".github/workflows/e2e_ppo_trainer_megatron_vllm_rocm.yml",
        "docker/rocm/Dockerfile.rocm",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        alloc = ctx.env("PYTORCH_ALLOC_CONF") or ""
        if "expandable_segments:true" not in alloc.replace(" ", "").lower():
            return
        # the engine verl will start: the plan's rollout.name (an --override may switch it)
        engine = ctx.value("actor_rollout_ref.rollout.name")
        if engine not in ENGINES:
            return
        key = f"actor_rollout_ref.rollout.engine_kwargs.{engine}.disable_custom_all_reduce"
        value = ctx.value(key)
        if value is None:
            yield Finding(
                f"{engine}'s custom all-reduce is on while PYTORCH_ALLOC_CONF={alloc}",
                key=key,
                fix={key: True},
            )
        elif value is not True:
            yield Finding(
                f"{key} is {value!r} while PYTORCH_ALLOC_CONF={alloc}",
                key=key,
                hint="set it to True, or drop expandable_segments from PYTORCH_ALLOC_CONF",
            )
