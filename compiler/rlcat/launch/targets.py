"""The launch targets, by the name `--target` takes; the command line offers exactly these.

A new target is one module implementing base.Target and one line here."""

from __future__ import annotations

from rlcat.launch.base import Target
from rlcat.launch.kuberay import KubeRay
from rlcat.launch.local import Local
from rlcat.launch.ray_job import RayJob
from rlcat.launch.skypilot import SkyPilot
from rlcat.launch.slurm import Slurm

TARGETS: dict[str, Target] = {
    target.name: target for target in (Local(), RayJob(), Slurm(), SkyPilot(), KubeRay())
}
