"""The files `rlcat import` writes: the recipe, each setting under a comment naming the source
line that set it, and the new catalog entries. Values go through syntax.yaml_text.yaml_document and
comments through comment_line, so nothing from the source can start a line of its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from rlcat.diagnostics import Diagnostic, RlcatError
from rlcat.importer.entries import NewEntry
from rlcat.importer.probe import DOC_MODELS
from rlcat.importer.solve import Solution
from rlcat.importer.source import SourceRun, SourceSetting
from rlcat.model.base import to_fill_in
from rlcat.model.recipe import Provenance, Recipe
from rlcat.syntax.bash import comment_line
from rlcat.syntax.yaml_text import yaml_document

_MAX_NOTES = 4  # source lines named above one setting; more are counted


def recipe_text(run: SourceRun, solution: Solution, name: str, provenance: Provenance | None = None) -> str:
    """The recipe file: a header naming the source, the recipe's fields in the schema's order
    (each under the source lines it carries), `env:`, `overrides:`, and what was left out. With
    `provenance` the header and summary name the upstream file instead of the local copy read."""
    notes = _notes_by_field(solution, run)
    for written, setting in solution.overrides.items():
        moved = " (--migrate: the key as verl renamed it)" if setting.key in solution.renamed else ""
        moved = moved or (
            " (--migrate: where verl's migration puts it)" if setting.key in solution.migrated else ""
        )
        notes[f"overrides.{written}"] = [_note(setting) + moved]
    env_note = f"line {run.line}: the environment of the launch" if run.line else "the source's environment"
    for variable in run.env:
        notes[f"env.{variable}"] = [env_note]
    data = {k: v for k, v in solution.draft.recipe.items() if k != "overrides"}
    data["name"] = name
    data["summary"] = (
        _summary(solution.draft.recipe, provenance) if provenance else f"Imported from {run.file}"
    )
    if provenance is not None:
        data["provenance"] = provenance.model_dump()
    if run.env:
        data["env"] = dict(run.env)
    if solution.draft.recipe.get("overrides"):
        data["overrides"] = solution.draft.recipe["overrides"]
    head = [
        comment_line(f"Imported by `rlcat import` from {_origin(run, provenance)}"),
        comment_line(
            f"({solution.entrypoint} --config-name {solution.config_name}"
            + "".join(f" {g}={o}" for g, o in solution.group_choices.items())
            + "). Each setting's comment names the source line that gave verl its value; `overrides:`"
        ),
        comment_line("holds the keys no typed field sets."),
    ]
    body = _at_source(lambda: _lines(_ordered(data), (), 0, notes), run, solution)
    tail = []
    if solution.left_out:
        tail = ["", comment_line("Left out (the recipe cannot say them, or Hydra would refuse them here):")]
        for key, why in solution.left_out.items():
            found = run.settings.get(key) or run.groups.get(key)
            shown = _note(found) if found is not None else key
            tail.append(comment_line(f"  {shown} — {why}"))
    return "\n".join([*head, *body, *tail]) + "\n"


def _origin(run: SourceRun, provenance: Provenance | None) -> str:
    if provenance is None:
        return str(run.file)
    return f"{provenance.repository}:{provenance.path} at {provenance.commit}"


def _summary(recipe: Mapping[str, Any], provenance: Provenance) -> str:
    """One line naming what the run is and where it comes from (the axes and catalog entries the
    import found), e.g. `GRPO, qwen3_8b on gsm8k_math, fsdp + vllm, colocate: upstream
    examples/grpo_trainer/run_qwen3_8b_fsdp.sh`."""
    axes = f"{recipe['backend']} + {recipe['engine']}, {recipe['mode']}"
    return (
        f"{str(recipe['algorithm']).upper()}, {recipe['model']} on {recipe['dataset']}, {axes}: "
        f"upstream {provenance.path}"
    )


def entry_text(entry: NewEntry, run: SourceRun, solution: Solution) -> str:
    """A new catalog entry, under a comment naming the source and the fields it had to guess."""
    carried = [
        _note(run.settings[key])
        for key, setting in solution.typed.items()
        if setting.origin.field == entry.kind and key in run.settings
    ]
    head = [comment_line(f"Written by `rlcat import` from {run.file}")]
    head += [comment_line(f"  {note}") for note in carried[:_MAX_NOTES]]
    notes: dict[str, list[str]] = {}
    for guessed in entry.guessed:
        what = to_fill_in(DOC_MODELS[entry.kind], guessed)
        notes[guessed] = [f"TODO: fill in {what}: the source gives no value an entry can hold"]
    return "\n".join([*head, *_at_source(lambda: _lines(entry.data, (), 0, notes), run, solution)]) + "\n"


def _at_source(write: Callable[[], list[str]], run: SourceRun, solution: Solution) -> list[str]:
    """`write()`, its refusals (RLC405: text YAML cannot show as it is) pointed at the source line
    that gave the value, with a hint `rlcat import` users can follow. Nothing is written before."""
    try:
        return write()
    except RlcatError as exc:
        raise RlcatError([_pointed(d, run, solution) for d in exc.diagnostics]) from None


def _pointed(d: Diagnostic, run: SourceRun, solution: Solution) -> Diagnostic:
    key = d.key or ""
    setting = _source_setting(key, run, solution)
    line = setting.line if setting is not None else run.line
    col = setting.col if setting is not None else None
    shown = f"line {line} of {run.file}" if line else run.file
    return replace(
        d,
        file=run.file,
        line=line,
        col=col,
        hint=f"correct the value on {shown} (a hidden character, or `##` before `[`) and import again",
    )


def _source_setting(key: str, run: SourceRun, solution: Solution) -> SourceSetting | None:
    """The source setting behind a key of the written file: an override's own, or the first of
    those a typed field carries (the longest field that holds the key)."""
    written = key.removeprefix("overrides.")
    if written != key and written in solution.overrides:
        return solution.overrides[written]
    owners = sorted(
        ((s.origin.field, k) for k, s in solution.typed.items() if s.origin.field and k in run.settings),
        key=lambda item: -len(item[0]),
    )
    for owner, source_key in owners:
        if key == owner or key.startswith(owner + ".") or owner.startswith(key + "."):
            return run.settings[source_key]
    return None


def _notes_by_field(solution: Solution, run: SourceRun) -> dict[str, list[str]]:
    """Source lines by the recipe field that carries them (Origin.field of the typed settings)."""
    found: dict[str, list[SourceSetting]] = {}
    for key, setting in solution.typed.items():
        owner = setting.origin.field
        if owner and key in run.settings:
            found.setdefault(owner, []).append(run.settings[key])
    notes: dict[str, list[str]] = {}
    for key, (setting, default) in solution.unasked.items():
        owner = setting.origin.field
        if owner and owner not in found and owner not in notes:
            notes[owner] = [
                f"not in the source: gives {key} verl's default"
                if default
                else f"not in the source: rlcat sets {key} (verl's default differs)"
            ]
    for owner, settings in found.items():
        ordered = sorted(settings, key=lambda s: (s.line or 0, s.col or 0))
        shown = [_note(s) for s in ordered[:_MAX_NOTES]]
        if len(ordered) > _MAX_NOTES:
            shown.append(f"... and {len(ordered) - _MAX_NOTES} more")
        notes[owner] = shown
    return notes


def _note(setting: SourceSetting) -> str:
    where = f"line {setting.line}" if setting.line is not None else "source"
    return f"{where}: {setting.text}"


def _ordered(data: dict[str, Any]) -> dict[str, Any]:
    declared = [info.alias or field for field, info in Recipe.model_fields.items()]
    rank = {field: i for i, field in enumerate(declared)}
    return dict(sorted(data.items(), key=lambda item: rank.get(item[0], len(rank))))


def _lines(
    data: Mapping[str, Any], path: tuple[str, ...], indent: int, notes: Mapping[str, list[str]]
) -> list[str]:
    pad = "  " * indent
    out: list[str] = []
    if path != ("overrides",):
        # source lines carried by a field left at its default (not written): said here, once
        depth = len(path)
        for owner, lines in notes.items():
            parts = owner.split(".")
            if parts[:depth] == list(path) and len(parts) > depth and parts[depth] not in data:
                out += [pad + comment_line(f"{line} (kept by the default of {owner})") for line in lines]
    for key, value in data.items():
        dotted = ".".join((*path, key)) if path != ("overrides",) else f"overrides.{key}"
        for note in notes.get(dotted, []):
            out.append(pad + comment_line(note))
        if isinstance(value, dict) and value and path != ("overrides",):
            out.append(pad + _key(key) + ":")
            out += _lines(value, (*path, key), indent + 1, notes)
        else:
            try:
                out += [pad + line for line in yaml_document({key: value}).splitlines()]
            except RlcatError as exc:  # named by the key of the whole file, not of this one entry
                raise RlcatError(
                    [replace(d, key=".".join((*path, d.key or key))) for d in exc.diagnostics]
                ) from None
    return out


def _key(key: str) -> str:
    """A mapping key as YAML writes it (quoted where it must be)."""
    return yaml_document({key: 0}).rstrip("\n").removesuffix(": 0")
