from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.model.axes import ENGINES
from rlcat.verl.names import ARF

# PyTorch's allocator settings under every name it reads: PYTORCH_ALLOC_CONF (the name since torch
# 2.9), PYTORCH_CUDA_ALLOC_CONF (the older CUDA name, still read) and PYTORCH_HIP_ALLOC_CONF (ROCm).
ALLOC_CONF_NAMES = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")


def expandable_segments(ctx: Context) -> tuple[str, str] | None:
    """The allocator variable that turns expandable segments on, and its value; None when none does."""
    for name in ALLOC_CONF_NAMES:
        value = ctx.env(name)
        if value is not None and "expandable_segments:true" in value.replace(" ", "").lower():
            return name, value
    return None


@register
class CustomAllReduceWithExpandableSegments(Guard):
    """The rollout engine's custom all-reduce must be off while PyTorch uses expandable segments.

    **Why**: with `expandable_segments:True` PyTorch backs its tensors with virtual-memory ranges,
    and the custom all-reduce of vLLM and SGLang shares its CUDA-graph buffers between the
    tensor-parallel ranks with `cudaIpcGetMemHandle` / `hipIpcGetMemHandle`, which refuses them: the
    rollout worker dies while capturing CUDA graphs with "Cuda error custom_all_reduce.cuh:…
    'invalid argument'" (vLLM issue 42609, reported on H100, H200, RTX 3090 and 5090, and on ROCm
    in vLLM PR 55135). AMD's images set `PYTORCH_ALLOC_CONF=expandable_segments:True` to avoid
    out-of-memory errors and turn the custom all-reduce off for this reason (AMD's quick start,
    known issue 2; verl's ROCm CI does the same). It applies under each name PyTorch reads the
    setting from (`PYTORCH_ALLOC_CONF`, `PYTORCH_CUDA_ALLOC_CONF`, `PYTORCH_HIP_ALLOC_CONF`), on CUDA
    and ROCm, and only with a rollout tensor parallel size above 1 (one rank needs no all-reduce).
    Ascend NPUs use HCCL, not this all-reduce. The fix is `disable_custom_all_reduce: True` in the
    engine's kwargs, or dropping expandable segments.

    **Bad**:

    ```yaml
    env: {PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"}
    parallelism:
      rollout: {tp: 2}
    rollout:
      engine_kwargs:
        vllm: {disable_custom_all_reduce: false}
    ```

    **Good**:

    ```yaml
    env: {PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"}
    parallelism:
      rollout: {tp: 2}
    rollout:
      engine_kwargs:
        vllm: {disable_custom_all_reduce: true}
    ```
    """

    id = "RLC502"
    name = "custom_all_reduce_with_expandable_segments"
    title = "custom all-reduce crashes under expandable segments"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "docs/amd_tutorial/amd_quick_start.rst (Known Issue 2)",
        ".github/workflows/e2e_ppo_trainer_megatron_vllm_rocm.yml",
        "docker/rocm/Dockerfile.rocm",
        "https://github.com/vllm-project/vllm/issues/42609",
        "https://github.com/vllm-project/vllm/pull/55135",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.profile.family == "npu":
            return
        found = expandable_segments(ctx)
        if found is None:
            return
        name, alloc = found
        tp = ctx.value(f"{ARF}.rollout.tensor_model_parallel_size")
        if not isinstance(tp, int) or tp <= 1:
            return
        # the engine verl will start: the plan's rollout.name (an --override may switch it)
        engine = ctx.value(f"{ARF}.rollout.name")
        if engine not in ENGINES:
            return
        key = f"{ARF}.rollout.engine_kwargs.{engine}.disable_custom_all_reduce"
        value = ctx.value(key)
        if value is None:
            yield Finding(
                f"{engine}'s custom all-reduce is on (rollout TP {tp}) while {name}={alloc}",
                key=key,
                fix={key: True},
            )
        elif value is not True:
            yield Finding(
                f"{key} is {value!r} while {name}={alloc} (rollout TP {tp})",
                key=key,
                hint=f"set it to True, or drop expandable_segments from {name}",
            )
