"""`rlcat explain`."""

from __future__ import annotations

from typing import Annotated

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, DiffFormatOpt, EngineName, ModeName
from rlcat.cli.compiling import AllowKnownBrokenOpt, PlatformOpt, compile_plan, plan_request
from rlcat.cli.report import write_output
from rlcat.emit.explain import explain, explain_json, explain_text


@app.command(
    "explain",
    epilog="""Examples:

  rlcat explain geo3k_megatron_4_4 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu --platform rocm

  rlcat explain dapo_math_fsdp2_4_4 SGLANG_ATTENTION_BACKEND --platform rocm --engine sglang

  rlcat explain gsm8k_qwen3_8b_fsdp batch.mini_batch_size

  rlcat explain gsm8k_qwen3_8b_fsdp actor_rollout_ref.actor.fsdp_config --format json
""",
)
def explain_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    name: Annotated[
        str,
        typer.Argument(
            help="A verl key or a subtree of verl's config (dotted), an environment variable, or a "
            "recipe field (batch.mini_batch_size, resources, model)."
        ),
    ],
    platform: PlatformOpt = None,
    engine: Annotated[
        EngineName | None, typer.Option(help="Rollout engine, if the recipe allows it.")
    ] = None,
    mode: Annotated[ModeName | None, typer.Option(help="Runtime mode, if the recipe allows it.")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Change a recipe field (repeatable).")
    ] = None,
    override: Annotated[list[str] | None, typer.Option(help="Set a verl key (repeatable).")] = None,
    allow_known_broken: AllowKnownBrokenOpt = False,
    fmt: DiffFormatOpt = "text",
    catalog: CatalogOpt = None,
) -> None:
    """Show the final value of a key and every layer that set it, in order: verl default, recipe (a
    parent recipe's value the recipe replaced among them), mode, platform profile, recipe platform
    block, guard, command line. A built-in file is named as such (built-in recipes/NAME.yaml:LINE).
    A recipe field shows the verl keys it sets in this plan; a subtree, the keys the plan sets below
    it and those left at verl's defaults. An unknown name is bad input (exit 2), with the close
    names."""
    request = plan_request(recipe, platform, engine, mode, set_, override, allow_known_broken)
    compiled = compile_plan(request, catalog)
    found = explain(compiled, name)
    write_output(explain_json(found) if fmt == "json" else explain_text(found))
