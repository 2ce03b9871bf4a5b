"""`rlcat launch`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional, TypeAlias

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, one_of
from rlcat.cli.compiling import (
    AllowKnownBrokenOpt,
    EngineOpt,
    ModeOpt,
    OverrideOpt,
    PlatformOpt,
    RecipeArg,
    SetOpt,
    compile_plan,
    plan_request,
    regenerate_command,
)
from rlcat.cli.report import print_diagnostics, write_output
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag, has_errors
from rlcat.launch.base import DEFAULT_EXCLUDES, Console, Launch, LaunchOptions
from rlcat.launch.command import RAY_AUTH_MODES, launch_command
from rlcat.launch.site import PULL_POLICIES, SiteArguments, read_site
from rlcat.launch.slurm_container import CONTAINERS
from rlcat.launch.targets import TARGETS
from rlcat.project import find_project

if TYPE_CHECKING:
    TargetName: TypeAlias = str
    AuthMode: TypeAlias = str
    ContainerName: TypeAlias = str
    PullName: TypeAlias = str
else:
    TargetName, AuthMode, ContainerName = one_of(TARGETS), one_of(RAY_AUTH_MODES), one_of(CONTAINERS)
    PullName = one_of(PULL_POLICIES)

_TARGETS_HELP = "; ".join(f"{name}: {target.summary}" for name, target in TARGETS.items())


@app.command(
    "launch",
    epilog="""Examples:

  rlcat launch geo3k_megatron_4_4 --platform rocm --target local --ray-auth-mode disabled --emit launch.sh

  rlcat launch gsm8k_qwen3_8b_fsdp --target ray-job --ray-auth-mode token --emit job.json

  rlcat launch dapo_math_fsdp2_4_4 --platform rocm --target kuberay --ray-auth-mode token --emit rayjob.yaml

  rlcat launch ppo_qwen2_7b_gsm8k_2x8 -t slurm --ray-auth-mode disabled --sbatch-arg=-pgpu --emit job.sbatch
""",
)
def launch_cmd(
    recipe: RecipeArg,
    target: Annotated[TargetName, typer.Option("--target", "-t", help="Where it runs. " + _TARGETS_HELP)],
    platform: PlatformOpt = None,
    engine: EngineOpt = None,
    mode: ModeOpt = None,
    set_: SetOpt = None,
    override: OverrideOpt = None,
    emit: Annotated[
        Optional[Path],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
        typer.Option(
            "--emit",
            readable=False,
            help="Write the artifact to this file ('-' is stdout, the default), whole or not at all; "
            "a script is made executable.",
        ),
    ] = None,
    submit: Annotated[
        bool, typer.Option("--submit", help="Start it (ray-job: POST to --address; slurm: sbatch).")
    ] = False,
    wait: Annotated[
        bool,
        typer.Option("--wait", help="With --submit: follow the job, print its logs, return its exit code."),
    ] = False,
    address: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="ray-job: the cluster's dashboard, http://HEAD:8265."),
    ] = None,
    ray_auth_mode: Annotated[
        Optional[AuthMode],  # noqa: UP045
        typer.Option(
            "--ray-auth-mode",
            help="RAY_AUTH_MODE of the launch, unless the plan's env sets it (default: the project's "
            "[launch].ray_auth_mode): always explicit, since Ray 2.60 turns token auth on by itself "
            "when ~/.ray/auth_token exists.",
        ),
    ] = None,
    working_dir: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="ray-job: a folder to upload (checked against Ray's 100 MiB limit) or a URI Ray "
            "fetches; leave out when verl is in the image."
        ),
    ] = None,
    exclude: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(help="ray-job: a pattern left out of --working-dir (repeatable; adds to the defaults)."),
    ] = None,
    entrypoint_cpus: Annotated[
        float,
        typer.Option(
            min=0,
            help="ray-job: CPUs reserved for the driver; 0 leaves them out, and Ray then drops "
            "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES from the job (refused: RLC1009).",
        ),
    ] = 1.0,
    image: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="skypilot, kuberay, slurm: the container image (default: the platform profile's)."),
    ] = None,
    container: Annotated[
        Optional[ContainerName],  # noqa: UP045
        typer.Option(
            help="slurm: the container runtime on each node (default: the project's [launch].container, "
            "else docker when there is an image, else none)."
        ),
    ] = None,
    mount: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            help="slurm: a folder the containers see, SRC:DST or SRC:DST:ro, each absolute or after ~, "
            "$HOME or $PWD (repeatable; adds to the project's [launch].mounts). Never /, a home as a "
            "whole, a credential folder or a system folder (RLC1013)."
        ),
    ] = None,
    in_image: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--in-image",
            help="slurm: a folder of the plan's paths that lives in the image (repeatable), so no "
            "mount needs to cover it (RLC1014).",
        ),
    ] = None,
    allow_outputs_in_container: Annotated[
        bool,
        typer.Option(
            "--allow-outputs-in-container",
            help="slurm: accept that checkpoints and dumps outside every mount are lost with the "
            "container (RLC1014 becomes a warning).",
        ),
    ] = False,
    pass_env: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--pass-env",
            help="slurm, ray-job: a variable the job gets by name from the submitting shell, its "
            "value never written into the artifact (repeatable; adds to [launch].pass_env).",
        ),
    ] = None,
    setup: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            help="slurm: a bash line run as written on each node before every command rlcat runs "
            "there, in the container if any (module load, conda activate, source venv/bin/activate; "
            "repeatable; after [launch].setup). One line that bash parses alone (RLC1013)."
        ),
    ] = None,
    sbatch_arg: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--sbatch-arg",
            help="slurm: an sbatch option for the job, --partition=gpu, --account=A, --time=4:00:00, "
            "--qos=Q (repeatable; after [launch.slurm].sbatch_args; with --submit too). Options rlcat "
            "sets itself (--nodes, --output, ...) are refused (RLC1013).",
        ),
    ] = None,
    pull: Annotated[
        Optional[PullName],  # noqa: UP045
        typer.Option(
            help="slurm with docker/podman: how each node gets the image before any container starts, "
            "as docker's --pull; kuberay: the pods' imagePullPolicy (Always, IfNotPresent, Never) "
            "(default: [launch].pull, else missing).",
        ),
    ] = None,
    network_interface: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="slurm: the interface whose address Ray uses on each node; also NCCL_SOCKET_IFNAME "
            "and GLOO_SOCKET_IFNAME (default: Slurm's NodeAddr)."
        ),
    ] = None,
    cpus_per_node: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(min=1, help="slurm: CPUs per node for Ray (default: whole nodes, --exclusive)."),
    ] = None,
    timeout: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(min=1, help="With --submit --wait: stop the job after this many seconds."),
    ] = None,
    allow_known_broken: AllowKnownBrokenOpt = False,
    catalog: CatalogOpt = None,
) -> int:
    """Render the plan as a launcher for a target, check it, and start it when asked.

    With --submit (ray-job): rlcat launch RECIPE --target ray-job --ray-auth-mode token --submit
    --wait --address http://HEAD:8265 follows the job and returns its exit code; with --target slurm,
    --submit --wait runs sbatch --wait and cancels the job on Ctrl-C."""
    _refuse_mixed_actions(emit, submit, wait)
    request = plan_request(recipe, platform, engine, mode, set_, override, allow_known_broken)
    compiled = compile_plan(request, catalog)
    print_diagnostics([d for d in compiled.diagnostics if d.severity < Severity.ERROR])
    project = find_project()
    defaults = project.settings.launch if project is not None else None
    auth_where = None
    if ray_auth_mode is None and defaults is not None and defaults.ray_auth_mode is not None:
        ray_auth_mode, auth_where = defaults.ray_auth_mode, project.where("launch.ray_auth_mode")  # type: ignore[union-attr]
    container = container or (defaults.container if defaults else None)
    site = read_site(
        project,
        SiteArguments(mount or (), in_image or (), pass_env or (), setup or (), sbatch_arg or (), pull),
    )
    options = LaunchOptions(
        address=address,
        working_dir=working_dir,
        excludes=(*DEFAULT_EXCLUDES, *(exclude or [])),
        entrypoint_cpus=entrypoint_cpus,
        timeout=timeout,
        image=image,
        container=container,
        site=site,
        allow_outputs_in_container=allow_outputs_in_container,
        network_interface=network_interface,
        cpus_per_node=cpus_per_node,
    )
    regenerate = regenerate_command(request, catalog)
    regenerate[1] = "launch"
    regenerate += ["--target", target]
    for option, value in (
        ("--ray-auth-mode", ray_auth_mode),
        ("--image", image),
        ("--working-dir", working_dir),
        ("--container", container),
        ("--network-interface", network_interface),
        ("--cpus-per-node", str(cpus_per_node) if cpus_per_node else None),
    ):
        regenerate += [option, value] if value else []
    regenerate += [word for pattern in exclude or [] for word in ("--exclude", pattern)]
    for option, values in (
        ("--mount", mount),
        ("--in-image", in_image),
        ("--pass-env", pass_env),
        ("--setup", setup),
        ("--sbatch-arg", sbatch_arg),
    ):
        regenerate += [f"{option}={value}" for value in values or []]
    regenerate += ["--pull", pull] if pull else []
    regenerate += ["--allow-outputs-in-container"] if allow_outputs_in_container else []
    if entrypoint_cpus != 1.0:
        regenerate += ["--entrypoint-cpus", f"{entrypoint_cpus:g}"]
    chosen = TARGETS[target]
    launch = Launch(compiled, launch_command(compiled, ray_auth_mode, auth_where), options, tuple(regenerate))
    findings = chosen.checks(launch)
    if has_errors(findings):
        raise RlcatError(findings, ExitCode.FINDINGS)
    print_diagnostics(findings)
    artifact = chosen.render(launch)
    if not submit:
        write_output(artifact, emit, executable=chosen.executable)
        return int(ExitCode.OK)
    return chosen.submit(launch, artifact, wait=wait, console=Console(_print_log, print_diagnostics))


def _print_log(text: str) -> None:
    write_output(text)


def _refuse_mixed_actions(emit: Path | None, submit: bool, wait: bool) -> None:
    problems: list[Diagnostic] = []
    if emit is not None and submit:
        problems.append(
            diag(
                "RLC105",
                "--emit writes the artifact, --submit starts it: choose one",
                argument="--emit",
                hint="write it first (--emit FILE), review it, then run rlcat launch ... --submit",
            )
        )
    if wait and not submit:
        problems.append(diag("RLC105", "--wait follows a submitted job: add --submit", argument="--wait"))
    if problems:
        raise RlcatError(problems)
