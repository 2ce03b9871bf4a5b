"""The project file's settings: `rlcat.toml`, or `[tool.rlcat]` in `pyproject.toml`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from rlcat.model.base import EnvName, GuardAllowances, Name, Strict

RelativePath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


# The container runtimes `rlcat launch --target slurm` starts a node's commands in, Ray's
# authentication modes, and docker's pull policies: the one list of each (the command line offers
# exactly these).
ContainerKind = Literal["docker", "podman", "apptainer", "pyxis", "none"]
RayAuthMode = Literal["disabled", "token"]
PullPolicy = Literal["always", "missing", "never"]
# one launch setting's entry (a mount, a shell line, an sbatch option): its grammar is checked by
# the launch, at this file's line, where the launch reads it
LaunchEntry = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


class SlurmLaunchSettings(Strict):
    """`[launch.slurm]`: what every `rlcat launch --target slurm` of the project adds."""

    sbatch_args: list[LaunchEntry] = Field(
        default=[],
        max_length=64,
        description="sbatch options for every job (--partition=gpu, --account=..., --time=..., --qos=...), "
        "before those of --sbatch-arg",
    )


class LaunchSettings(Strict):
    """`[launch]`: the defaults of every `rlcat launch`; the command line adds to the lists and wins
    for the others."""

    ray_auth_mode: RayAuthMode | None = Field(
        default=None, description="RAY_AUTH_MODE of every launch (--ray-auth-mode)"
    )
    container: ContainerKind | None = Field(
        default=None, description="slurm: the container runtime on each node (--container)"
    )
    pull: PullPolicy | None = Field(
        default=None, description="slurm: how each node gets the image (--pull; default: missing)"
    )
    mounts: list[LaunchEntry] = Field(
        default=[], max_length=64, description="slurm: folders the containers see, SRC:DST[:ro] (--mount)"
    )
    in_image: list[LaunchEntry] = Field(
        default=[], max_length=64, description="Paths of the plan that live in the image (--in-image)"
    )
    pass_env: list[EnvName] = Field(
        default=[], max_length=64, description="Variables passed by name into the job (--pass-env)"
    )
    setup: list[LaunchEntry] = Field(
        default=[],
        max_length=64,
        description="slurm: shell lines run on each node before its commands (--setup)",
    )
    slurm: SlurmLaunchSettings = Field(default_factory=SlurmLaunchSettings)


class ProjectSettings(Strict):
    """What a team's repository tells every rlcat command; every field is optional."""

    catalog: list[RelativePath] = Field(
        default=["."],
        max_length=64,
        description="Catalog folders, relative to the project file; each holds recipes/ and/or catalog/",
    )
    platforms: list[Name] = Field(
        default=["cuda", "rocm"],
        min_length=1,
        max_length=64,
        description="The platforms `rlcat validate` compiles each recipe for (with those a recipe "
        "names); the first is the default --platform",
    )
    strict: bool = Field(default=False, description="`rlcat validate` fails on warnings too")
    schemas: RelativePath = Field(
        default="schemas", description="Where `rlcat schemas export` writes the JSON Schemas"
    )
    allow: GuardAllowances = Field(
        default={},
        description="Guards accepted for every recipe of the project (and RLC303), each with the reason",
    )
    launch: LaunchSettings = Field(
        default_factory=LaunchSettings, description="The defaults of every `rlcat launch` ([launch])"
    )
