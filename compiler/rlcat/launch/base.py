"""What a launch target is: the registry's interface, the options of the command line, and the plan
and command a target works from. One module per target implements it (targets.py lists them)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.launch.command import LaunchCommand
from rlcat.launch.site import Site

# What a refused YAML artifact (syntax.yaml_text: hidden characters, a `::` line) suggests instead.
YAML_HINT = "use --target ray-job (JSON escapes it)"

# Ray job runtime envs carry these out of a working_dir unless told otherwise (gitignore patterns,
# as Ray's `excludes` reads them): history, weights and checkpoints that make an upload pass Ray's
# 100 MiB package limit (verl issue #696).
DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git",
    "**/__pycache__",
    "*.safetensors",
    "*.bin",
    "*.pt",
    "*.parquet",
    "checkpoints",
    "wandb",
    "outputs",
)


@dataclass(frozen=True)
class LaunchOptions:
    """The command line's launch choices. Each target reads the ones it needs; a target that needs
    more (Slurm: nodes, container, network interface) adds fields here, with their defaults."""

    # ray-job: the dashboard of a running cluster (`http://HOST:8265`)
    address: str | None = None
    # ray-job: a local folder (uploaded on --submit) or a remote URI Ray fetches; None: verl is in
    # the image, nothing is uploaded (the default verl's docs recommend for production)
    working_dir: str | None = None
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    # ray-job: CPUs reserved for the driver; 0 leaves them out (and Ray then drops
    # RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES from the job's env: RLC1009)
    entrypoint_cpus: float = 1.0
    # --submit --wait: stop the job after this many seconds (None: wait as long as it runs)
    timeout: float | None = None
    poll_seconds: float = 1.0
    # skypilot, kuberay, slurm: the container image (default: the platform profile's `image`)
    image: str | None = None
    # slurm: the container runtime per node (slurm_container.CONTAINERS; None: docker when there
    # is an image, else none), the interface that carries Ray, NCCL and Gloo, and the CPUs per node
    # (None: whole nodes, `--exclusive`)
    container: str | None = None
    network_interface: str | None = None
    cpus_per_node: int | None = None
    # mounts, paths in the image, variables passed by name, setup lines, sbatch options, the pull
    # policy (site.py), from the project file and the command line
    site: Site = field(default_factory=Site)
    # a container's checkpoints and dumps outside every mount are a warning, not an error (RLC1014)
    allow_outputs_in_container: bool = False


@dataclass(frozen=True)
class Launch:
    """One launch: the compiled plan, the argv and env every target starts, and the options."""

    compiled: Compiled
    command: LaunchCommand
    options: LaunchOptions = field(default_factory=LaunchOptions)
    # the `rlcat launch ...` arguments that render this launch again (the artifacts name it)
    regenerate: tuple[str, ...] = ()


@dataclass(frozen=True)
class Console:
    """Where a submitting target reports: `log` prints the job's own output (stdout), `tell` prints
    rlcat's findings and progress (stderr, as diagnostics)."""

    log: Callable[[str], None]
    tell: Callable[[list[Diagnostic]], None]


class Target(ABC):
    """A way to start the plan. `checks` runs before anything is rendered or started; `render` is
    the reviewable artifact (`--emit`, or stdout); `submit` hands it to the engine (`--submit`) and,
    with `wait`, returns the job's exit code."""

    name: ClassVar[str]
    summary: ClassVar[str]
    # --emit writes an executable file (a script run as ./launch.sh)
    executable: ClassVar[bool] = False

    def checks(self, launch: Launch) -> list[Diagnostic]:
        """Findings about the plan for this target, before anything starts (no network)."""
        return []

    @abstractmethod
    def render(self, launch: Launch) -> str:
        """The artifact as text, deterministic for one plan and one set of options."""

    def submit(self, launch: Launch, artifact: str, *, wait: bool, console: Console) -> int:
        """Start the artifact; the exit code to return (the job's own with `wait`)."""
        raise RlcatError(
            [
                diag(
                    "RLC1001",
                    f"the {self.name} target renders its artifact; rlcat does not submit it",
                    argument="--submit",
                    hint=f"write it with --emit FILE and start it with the {self.name} tools",
                )
            ]
        )


def image_of(launch: Launch) -> str | None:
    """--image, else the profile's image reference (its first word: profiles may say how the image
    was built after it), else None."""
    if launch.options.image:
        return launch.options.image
    words = launch.compiled.profile.image.split()
    return words[0] if words else None


def working_dir_path(options: LaunchOptions) -> Path | None:
    """The local folder of --working-dir, or None for none or a remote URI (`gcs://`, `s3://`,
    `https://...zip`) that Ray fetches itself."""
    if options.working_dir is None or "://" in options.working_dir:
        return None
    return Path(options.working_dir)
