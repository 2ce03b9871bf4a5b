"""`rlcat import`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from rlcat.arguments import split_assignment
from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt
from rlcat.cli.compiling import PLATFORM_DEFAULT_HELP, platform_or_default
from rlcat.cli.report import catalog_for, print_diagnostics, write_output
from rlcat.compile.assemble import Compiled
from rlcat.dev.whole import compose_side, entry_config, require_whole
from rlcat.diagnostics import ExitCode, RlcatError, diag
from rlcat.emit.formats import override_texts
from rlcat.importer import Imported, import_run, prove, read_source, render_report, target_for, write_files
from rlcat.importer.whole import ASIDE, WholeProof, prove_whole, render_whole
from rlcat.model.axes import NAME_PATTERN
from rlcat.model.recipe import Provenance


@app.command(
    "import",
    epilog="""Examples:

  rlcat import run_qwen3_8b_fsdp.sh -o my_catalog --name qwen3_run

  rlcat import -o my_catalog -- python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_dynamic_bsz=True

  rlcat import test_dapo_7b_math.sh -o my_catalog --migrate

  rlcat import run.sh -o my_catalog --whole --aside paths --accept trainer.logger="we log to wandb"
""",
)
def import_cmd(
    source: Annotated[
        list[str] | None,
        typer.Argument(
            help="A launch script or a Hydra overrides.yaml; or, after `--`, the command line that "
            "launches verl.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            readable=False,
            metavar="DIR",
            help="The catalog folder to write (recipes/, catalog/).",
        ),
    ] = Path("."),
    name: Annotated[
        str | None, typer.Option(help="The recipe's name (default: from the source file's name).")
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            "-p",
            help=f"Platform profile to compile the proof for ({PLATFORM_DEFAULT_HELP}).",
            show_default=False,
        ),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option("--env", help="A variable of the caller's environment: KEY=VALUE (repeatable)."),
    ] = None,
    provenance: Annotated[
        str | None,
        typer.Option(
            help="The upstream file SOURCE is a copy of, OWNER/REPO:PATH@COMMIT (full commit id): "
            "written to the recipe's `provenance:` and named in its header and summary.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Replace files the folder already has.")] = False,
    migrate: Annotated[
        bool,
        typer.Option(
            help="Rewrite what verl itself moved, and list each rewrite: keys the entrypoint never reads "
            "(the legacy reward_model.*, custom_reward_function.*, sandbox_fusion.* of "
            "verl.trainer.main_ppo >= 0.9) go where verl's own migration puts them (they take effect, "
            "which changes the run); keys verl renamed between releases get the target release's name, "
            "the value unchanged. Without it both are left out: the first as the source's run ignored "
            "them, the second as Hydra would refuse them."
        ),
    ] = False,
    whole: Annotated[
        bool,
        typer.Option(
            help="Also compose the source and the compiled recipe with Hydra against the release's config "
            "tree (the `verl` extra and `rlcat dev fetch-verl`) and compare every leaf key both ways; each "
            "difference names the recipe line that causes it."
        ),
    ] = False,
    aside: Annotated[
        list[str] | None,
        typer.Option(
            metavar="KIND",
            help=f"With --whole, leave one kind of key out of the comparison: {', '.join(ASIDE)} "
            "(repeatable).",
            show_default=False,
        ),
    ] = None,
    accept: Annotated[
        list[str] | None,
        typer.Option(
            metavar="KEY=REASON",
            help="With --whole, accept the differences at KEY (or below it) for REASON: printed, and not "
            "failing the import (repeatable).",
            show_default=False,
        ),
    ] = None,
    catalog: CatalogOpt = None,
) -> None:
    """Turn a verl launch script, overrides.yaml or command line into a recipe, and prove it.

    Writes OUTPUT/recipes/NAME.yaml (typed fields where rlcat models the setting, `overrides:` for
    the rest, `env:`, the source line of each setting as a comment) and any model and dataset
    entries it needs, then compiles the recipe for the platform and compares the plan with the
    source on every key it sets. Exits 1 when a value differs without a reason.
    """
    words = list(source or [])
    if not words:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    "nothing to import: give a launch script, an overrides.yaml, or a command after `--`",
                    argument="SOURCE",
                    hint="rlcat import run.sh -o my_catalog",
                )
            ]
        )
    file = Path(words[0]) if len(words) == 1 else None
    if file is not None and not file.exists():
        raise RlcatError([diag("RLC001", "no such file", file=str(file))])
    environment = dict(split_assignment(text, "--env", "KEY", "HOME=/home/me") for text in env or [])
    accepted = dict(
        split_assignment(text, "--accept", "KEY", "trainer.logger=we log to wandb") for text in accept or []
    )
    for kind in aside or []:
        if kind not in ASIDE:
            raise RlcatError(
                [
                    diag(
                        "RLC105",
                        f"--aside {kind}: not one of {', '.join(ASIDE)}",
                        argument=f"--aside {kind}",
                        hint="--aside paths",
                    )
                ]
            )
    if (aside or accepted) and not whole:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    "--aside and --accept apply to the whole-config proof",
                    argument="--aside" if aside else "--accept",
                    hint="add --whole",
                )
            ]
        )
    recipe_name = _recipe_name(name, file)
    origin = _provenance(provenance) if provenance is not None else None
    searched = catalog_for(catalog)  # where existing entries are found (not the output folder)
    platform = platform_or_default(platform)
    target = target_for(platform, searched)
    if whole:
        require_whole(target.profile.verl_index)
    run = read_source(file, words if file is None else (), env=environment, groups=list(target.groups))
    imported = import_run(run, target, searched, recipe_name, origin, migrate=migrate)
    print_diagnostics(imported.diagnostics)
    written = write_files(imported, output, force=force)
    proof_catalog = catalog_for([output, *(catalog or [])])
    report = prove(written[0], proof_catalog, platform, run, imported.solution)
    print_diagnostics(report.diagnostics + report.findings)
    text = render_report(report, run, imported.solution, written[0])
    proof = None
    if whole and report.compiled is not None:
        proof = prove_whole_config(imported, report.compiled, aside or [], accepted)
        text += render_whole(proof, report.compiled.profile.verl_index)
    write_output(text)
    if not report.ok or (proof is not None and not proof.ok):
        raise typer.Exit(ExitCode.FINDINGS)


def prove_whole_config(
    imported: Imported, compiled: Compiled, aside: list[str], accepted: dict[str, str]
) -> WholeProof:
    """Both sides composed with Hydra (rlcat.dev.whole) and compared leaf by leaf: the one path of
    the whole-config proof, which tests/verl/test_import_whole.py runs on the reference scripts.
    The source side is the script as verl receives it after the migration --migrate applied."""
    run, solution = imported.run, imported.solution
    version, config = compiled.profile.verl_index, compiled.plan.config_name
    # with --migrate the source is composed as verl receives it once the migration ran: each key
    # --migrate rewrote under its new name, the value as the script wrote it
    migrated = [
        (s.text, solution.migrated_text(s)) for s in run.settings.values() if s.key in solution.migrated
    ]
    rewritten = dict(migrated)
    source = [s.text for s in run.groups.values()] + [
        rewritten.get(s.text, s.text) for s in run.settings.values()
    ]
    theirs = compose_side(version, entry_config(run.config_name, config), source)
    ours = compose_side(version, config, override_texts(compiled))
    proof = prove_whole(
        run,
        compiled,
        theirs.resolved,
        ours.resolved,
        ours.raw if ours.resolved != theirs.resolved else {},  # only a difference needs its cause
        aside=aside,
        accepted=accepted,
        refused=theirs.refused,
        refused_at_start=imported.solution.refused_at_start,
        unread_here=imported.solution.unread_here,
    )
    proof.recipe_refused = ours.refused
    proof.migrated = migrated
    return proof


def _provenance(given: str) -> Provenance:
    """OWNER/REPO:PATH@COMMIT, as the upstream `source` and `commit` of a reference record say it."""
    repository, _, rest = given.partition(":")
    path, _, commit = rest.rpartition("@")
    try:
        return Provenance(repository=repository, path=path, commit=commit)
    except ValidationError:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    f"'{given}' is not OWNER/REPO:PATH@COMMIT (a relative path, a full 40-digit commit id)",
                    argument=f"--provenance {given}",
                    hint="--provenance verl-project/verl:examples/grpo_trainer/run_qwen3_8b_fsdp.sh@"
                    + "0" * 40,
                )
            ]
        ) from None


def _recipe_name(given: str | None, file: Path | None) -> str:
    if given is not None:
        if not re.match(NAME_PATTERN, given) or len(given) > 100:
            raise RlcatError(
                [
                    diag(
                        "RLC105",
                        f"'{given}' is not a recipe name (lowercase letters, digits, _ . -)",
                        argument=f"--name {given}",
                        hint="--name qwen3_8b_grpo",
                    )
                ]
            )
        return given
    stem = file.stem if file is not None and file.name not in ("overrides.yaml", "overrides.yml") else ""
    if file is not None and not stem and file.parent.name == ".hydra":
        stem = file.parent.parent.name
    cleaned = re.sub(r"[^a-z0-9_.\-]+", "_", stem.lower()).strip("_.-")[:100]
    return cleaned if cleaned and re.match(NAME_PATTERN, cleaned) else "imported"
