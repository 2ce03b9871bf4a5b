"""`rlcat explain`."""

from __future__ import annotations

from typing import Annotated

import typer

from rlcat.cli.app import app
from rlcat.cli.common import AllowKnownBrokenOpt, CatalogOpt, EngineName, ModeName, compile_plan, write_output
from rlcat.emit.explain import explain_key
from rlcat.pipeline.assemble import Request


@app.command(
    "explain",
    epilog="""Examples:

  rlcat explain geo3k_megatron_4_4 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu --platform rocm

  rlcat explain dapo_math_fsdp2_4_4 SGLANG_ATTENTION_BACKEND --platform rocm --engine sglang
""",
)
def explain_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    key: Annotated[str, typer.Argument(help="A verl key (dotted) or an environment variable.")],
    platform: Annotated[str, typer.Option("--platform", "-p", help="Platform profile.")] = "cuda",
    engine: Annotated[
        EngineName | None, typer.Option(help="Rollout engine, if the recipe allows it.")
    ] = None,
    mode: Annotated[ModeName | None, typer.Option(help="Runtime mode, if the recipe allows it.")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Change a recipe field (repeatable).")
    ] = None,
    override: Annotated[list[str] | None, typer.Option(help="Set a verl key (repeatable).")] = None,
    allow_known_broken: AllowKnownBrokenOpt = False,
    catalog: CatalogOpt = None,
) -> None:
    """Show the final value of a key and every layer that set it, in order: verl default, recipe, mode,
    platform profile, recipe platform block, guard, command line."""
    compiled = compile_plan(
        Request(
            recipe, platform, engine, mode, None, list(set_ or []), list(override or []), allow_known_broken
        ),
        catalog,
    )
    write_output(explain_key(compiled, key))
