from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.model.axes import SPLIT_MODES

# The variables that choose the devices a process sees, by runtime: CUDA, HIP and the ROCm runtime
# (ROCR), Ascend (verl/plugin/platform: platform_rocm.py, platform_npu.py).
VISIBILITY = (
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
)


def visible_count(value: str) -> int | None:
    """How many devices a visibility list exposes ('0,1,2,3' → 4, '' → 0); None for a value that is
    not a plain list of indices or UUIDs (one only running the launch tells)."""
    text = value.strip()
    if not text:
        return 0
    if "$" in text or "`" in text:
        return None
    return len([part for part in text.split(",") if part.strip()])


@register
class VisibleDevicesFewerThanGpus(Guard):
    """A GPU-visibility variable must expose at least the GPUs a node is asked for.

    **Why**: Ray counts the devices each node's processes can see, and verl asks its resource pool
    for `trainer.n_gpus_per_node` of them per node (`rollout.n_gpus_per_node` as well in the split
    modes). When `CUDA_VISIBLE_DEVICES` (or `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`,
    `ASCEND_RT_VISIBLE_DEVICES`) lists fewer devices, verl stops with "Total available GPUs 4 is
    less than total desired GPUs 8" (verl/single_controller/ray/base.py,
    ResourcePoolManager._check_resource_available) or the placement group waits for GPUs that never
    appear — after the image is pulled and the cluster started. verl's start-up validation does not
    read the environment.

    **Bad**:

    ```yaml
    env: {CUDA_VISIBLE_DEVICES: "0,1,2,3"}
    resources: {trainer_gpus: 8}
    ```

    **Good**:

    ```yaml
    env: {CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"}
    resources: {trainer_gpus: 8}
    ```
    """

    id = "RLC504"
    name = "visible_devices_fewer_than_gpus"
    title = "GPU-visibility variable exposes fewer devices than n_gpus_per_node"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl/single_controller/ray/base.py (ResourcePoolManager._check_resource_available)",
        "verl/plugin/platform/platform_rocm.py, platform_npu.py (visibility variables)",
    )
    since = "0.2.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        wanted = ctx.value("trainer.n_gpus_per_node")
        if ctx.recipe.mode in SPLIT_MODES:
            rollout = ctx.value("rollout.n_gpus_per_node")
            if isinstance(rollout, int) and (not isinstance(wanted, int) or rollout > wanted):
                wanted = rollout
        if not isinstance(wanted, int) or wanted <= 0:
            return
        for name in VISIBILITY:
            value = ctx.env(name)
            count = visible_count(value) if value is not None else None
            if count is not None and count < wanted:
                yield Finding(
                    f"{name}={value} exposes {count} device(s) but verl asks for {wanted} per node",
                    env=name,
                    hint=f"list {wanted} devices in {name}, or lower n_gpus_per_node to {count}",
                )
