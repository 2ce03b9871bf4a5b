from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.guards.model.attention_heads import ROLES, inherits, ulysses_size
from rlcat.model.axes import SPLIT_MODES
from rlcat.verl.names import ARF


@register
class FsdpMeshFitsGpus(Guard):
    """FSDP's shard size and the Ulysses sequence parallel size must divide the GPUs of the role.

    **Why**: verl's FSDP engine builds its device meshes from the trainer's GPUs (world size):
    `fsdp_size` splits them into (world / fsdp_size) × fsdp_size (verl/workers/engine/fsdp/utils.py,
    create_device_mesh), and Ulysses sequence parallelism into (world / sp) × sp
    (fsdp/transformer_impl.py, _init_device_mesh). torch's `init_device_mesh` refuses a shape whose
    product is not the world size, so a size that does not divide the GPUs fails when the workers
    start, after the model is loaded; verl's start-up validation does not check it. An `fsdp_size`
    of 0 divides by zero there; a negative one, or one as large as the world, means one mesh over
    every GPU.

    **Bad**:

    ```yaml
    resources: {trainer_gpus: 8}
    parallelism:
      actor: {fsdp_size: 3}
    ```

    **Good**:

    ```yaml
    resources: {trainer_gpus: 8}
    parallelism:
      actor: {fsdp_size: 4}
    ```
    """

    id = "RLC709"
    name = "fsdp_mesh_fits_gpus"
    title = "fsdp_size or Ulysses sequence parallel size that does not divide the role's GPUs"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl/workers/engine/fsdp/utils.py (create_device_mesh)",
        "verl/workers/engine/fsdp/transformer_impl.py (_init_device_mesh)",
    )
    since = "0.2.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.recipe.backend not in ("fsdp", "fsdp2"):
            return
        v = ctx.value
        pool = "trainer"  # the actor and its reference share the trainer's pool in every mode
        gpus_per_node, nodes = v(f"{pool}.n_gpus_per_node"), v(f"{pool}.nnodes") or 1
        if not isinstance(gpus_per_node, int) or not isinstance(nodes, int) or gpus_per_node <= 0:
            return
        world = gpus_per_node * nodes
        where = "trainer GPUs" if ctx.recipe.mode in SPLIT_MODES else "GPUs"
        for role in ROLES:
            key = f"{ARF}.{role}.fsdp_config.fsdp_size"
            fsdp = v(key)
            if inherits(ctx, role, key):
                pass
            elif fsdp == 0:
                yield Finding(
                    f"{role}: fsdp_size 0 divides by zero in verl's device mesh",
                    key=key,
                    hint="-1 shards over every GPU",
                )
            elif isinstance(fsdp, int) and 0 < fsdp < world and world % fsdp:
                yield Finding(
                    f"{role}: fsdp_size {fsdp} does not divide the {world} {where}",
                    key=key,
                    hint="a divisor of the GPUs, or -1 to shard over all of them",
                )
            sp, key = ulysses_size(ctx, role)
            if sp > 1 and world % sp and not inherits(ctx, role, key):
                yield Finding(
                    f"{role}: Ulysses sequence parallel size {sp} does not divide the {world} {where}",
                    key=key,
                )
