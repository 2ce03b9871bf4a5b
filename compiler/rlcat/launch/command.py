"""The one argv and the one env every launch target starts, made from a compiled plan.

The override text comes from emit.formats (override_texts): a target never renders a value itself,
it only quotes the finished words for its reader (bash, POSIX sh, YAML, JSON).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import get_args

from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag
from rlcat.emit.formats import override_texts, refuse_unwritable
from rlcat.model.project import RayAuthMode
from rlcat.syntax.bash import sh_line, shell_word

# Ray's own switch for token authentication (Ray >= 2.52). Left unset, Ray 2.60 turns token auth on
# by itself once a `~/.ray/auth_token` exists, and every client that assumed otherwise fails.
RAY_AUTH_MODE = "RAY_AUTH_MODE"
RAY_AUTH_MODES: tuple[str, ...] = get_args(RayAuthMode)


@dataclass(frozen=True)
class EnvVar:
    """One variable of the launch env, and where its value was set (for diagnostics)."""

    name: str
    value: str
    where: Where = field(default_factory=dict)  # type: ignore[assignment]


@dataclass(frozen=True)
class GpuPool:
    """A resource pool of the plan: `nnodes` nodes of `gpus_per_node` GPUs each (verl's
    trainer.nnodes × trainer.n_gpus_per_node; the rollout pool of fully_async beside it)."""

    name: str
    nnodes: int
    gpus_per_node: int

    @property
    def gpus(self) -> int:
        return self.nnodes * self.gpus_per_node


@dataclass(frozen=True)
class LaunchCommand:
    """What every target starts: `python3 -m ENTRYPOINT --config-name=NAME OVERRIDES...` with `env`."""

    argv: tuple[str, ...]
    env: tuple[EnvVar, ...]
    pools: tuple[GpuPool, ...]
    # the recipe's machines (resources.nodes × resources.gpus_per_node): what a target that starts
    # the cluster itself asks for
    nodes: int = 1
    gpus_per_node: int = 0

    @property
    def env_vars(self) -> dict[str, str]:
        return {v.name: v.value for v in self.env}

    @property
    def gpus(self) -> int:
        """GPUs the plan asks Ray for: every pool's, added up."""
        return sum(p.gpus for p in self.pools)

    def bash_line(self) -> str:
        """The argv as one bash command line (syntax.bash.shell_word: `$'...'` for hidden characters)."""
        return " ".join(shell_word(word) for word in self.argv)

    def posix_line(self) -> str:
        """The argv as one POSIX `sh` command line, for readers that run it with `/bin/sh -c` (Ray's job
        supervisor: `subprocess.Popen(entrypoint, shell=True)`), where bash's `$'...'` does not exist:
        single quotes only, a line break kept inside them."""
        return sh_line(self.argv)


def ray_accelerator(family: str) -> str:
    """The Ray resource a platform's accelerators are counted in: Ascend NPUs are `NPU` (verl's
    device_name on NPU), every GPU family is `GPU`."""
    return "NPU" if family == "npu" else "GPU"


def launch_command(
    compiled: Compiled, auth_mode: str | None, auth_where: Where | None = None
) -> LaunchCommand:
    """The argv and env of the plan, with RAY_AUTH_MODE made explicit.

    The mode is the plan's own RAY_AUTH_MODE (a recipe or platform env) or `auth_mode` (the command
    line, or the project's `[launch].ray_auth_mode` at `auth_where`); neither, or two that differ, is
    RLC1006. Text no process can receive (a NUL, a lone
    surrogate, an env name that is not a shell name) is refused (RLC405), as the shell format does."""
    refuse_unwritable(compiled, argv=True)
    plan = compiled.plan
    argv = ("python3", "-m", plan.entrypoint, f"--config-name={plan.config_name}", *override_texts(compiled))
    env = [EnvVar(s.key, str(s.value), s.origin.position()) for s in compiled.env]
    env += _auth_mode(env, auth_mode, auth_where or {"argument": "--ray-auth-mode"})
    resources = compiled.recipe.resources
    return LaunchCommand(argv, tuple(env), gpu_pools(compiled), resources.nodes, resources.gpus_per_node)


def _auth_mode(env: list[EnvVar], auth_mode: str | None, given: Where) -> list[EnvVar]:
    planned = next((v for v in env if v.name == RAY_AUTH_MODE), None)
    problem: Diagnostic | None = None
    if planned is None and auth_mode is None:
        problem = diag(
            "RLC1006",
            "RAY_AUTH_MODE is not set: Ray 2.60 turns token authentication on by itself when a "
            "~/.ray/auth_token exists, and clients that assumed otherwise fail with InvalidAuthToken",
            argument="--ray-auth-mode",
            hint="say which: --ray-auth-mode token (with the cluster's token in RAY_AUTH_TOKEN or "
            "~/.ray/auth_token), or --ray-auth-mode disabled on a trusted network",
        )
    elif planned is not None and auth_mode is not None and planned.value != auth_mode:
        problem = diag(
            "RLC1006",
            f"{'--ray-auth-mode' if 'argument' in given else '[launch].ray_auth_mode'} "
            f"{auth_mode} differs from RAY_AUTH_MODE={planned.value} in the plan's env",
            hint="leave out --ray-auth-mode, or change the env where the plan sets it",
            **{**planned.where, "argument": planned.where.get("argument") or "--ray-auth-mode"},
        )
    elif planned is not None and planned.value not in RAY_AUTH_MODES:
        problem = diag(
            "RLC1006",
            f"RAY_AUTH_MODE={planned.value} is not one of Ray's modes ({', '.join(RAY_AUTH_MODES)})",
            key=RAY_AUTH_MODE,
            **planned.where,
        )
    if problem:
        raise RlcatError([problem])
    return [] if planned else [EnvVar(RAY_AUTH_MODE, str(auth_mode), given)]


def gpu_pools(compiled: Compiled) -> tuple[GpuPool, ...]:
    """The plan's resource pools as verl reads them: `trainer`, and `rollout` when the plan sets one
    (fully_async gives the rollout its own nodes; verl/experimental/fully_async_policy sizes its
    resource pools from trainer.* and rollout.* nnodes and n_gpus_per_node)."""
    values = {o.key: o.setting.value for o in compiled.overrides}
    pools = []
    for name in ("trainer", "rollout"):
        nnodes, per_node = values.get(f"{name}.nnodes"), values.get(f"{name}.n_gpus_per_node")
        if isinstance(nnodes, int) and isinstance(per_node, int):
            pools.append(GpuPool(name, nnodes, per_node))
    return tuple(pools)
