"""`--target slurm`: the registry's slot for the sbatch target (head and workers per node, a
container per node, readiness by polling, `srun --overlap`, teardown). Not built yet: choosing it
is RLC1001 until it is. The target will implement base.Target like ray_job.Target does, reading
the node count and GPUs per node from `launch.command` and its options from LaunchOptions."""

from __future__ import annotations

from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.launch.base import Launch, Target


def _not_yet() -> Diagnostic:
    return diag(
        "RLC1001",
        "the slurm target is not built yet",
        argument="--target slurm",
        hint="use --target local inside an allocation, or --target ray-job against a Ray cluster "
        "started on the allocation",
    )


class Slurm(Target):
    name = "slurm"
    summary = "an sbatch script: a Ray head and workers per node, then the trainer (not built yet)"
    executable = True

    def checks(self, launch: Launch) -> list[Diagnostic]:
        return [_not_yet()]

    def render(self, launch: Launch) -> str:
        raise RlcatError([_not_yet()])
