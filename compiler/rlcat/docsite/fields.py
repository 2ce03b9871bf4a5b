"""The recipe field reference: which verl keys (and environment variables) each recipe field sets,
on each verl release rlcat has a key index for.

Nothing here is typed by hand: every value in a plan records the recipe field that set it
(`Origin.field`), and the page collects them from real compiles. First the docs' own compiles (every
built-in recipe on every platform, engine, mode and backend it allows); then, for a field none of
them sets on a release, one compile of a built-in recipe with `--set FIELD=VALUE` (a value of the
field's type), the first that compiles and sets something. A field that still sets nothing says so.
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass, field

from packaging.version import Version
from pydantic import BaseModel

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.diagnostics import RlcatError
from rlcat.docsite.data import Site
from rlcat.docsite.links import page, rel
from rlcat.docsite.md import anchor, breakable_code, code, esc, link, table
from rlcat.model.fields import field_info, recipe_fields, value_type

HERE = "fields.md"
BUILT_IN = "built-in recipes"


@dataclass
class FieldUse:
    """What one field sets on one release, and the compiles that show it."""

    keys: list[str] = field(default_factory=list)  # verl keys as the release names them; `$NAME` for env
    left_out: list[str] = field(default_factory=list)  # keys it sets where a release has them (RLC403)
    shown_by: str = BUILT_IN  # or the `--set` compile that showed it


Uses = dict[str, dict[str, FieldUse]]  # field → release → what it sets there


def field_of(name: str, open_maps: frozenset[str]) -> str:
    """An entry of an open mapping (`env.NAME`, `rollout.engine_kwargs.vllm.x`) is its mapping's field."""
    return next((m for m in sorted(open_maps) if name.startswith(m + ".")), name)


def collect(compiled: Compiled, uses: Uses, shown_by: str = BUILT_IN, only: str | None = None) -> None:
    """Add what each recipe field set in one compiled plan (only field `only`, when given)."""
    open_maps = recipe_fields()[1]
    release = compiled.profile.verl_index
    emitted = {o.setting.key: o.key for o in compiled.overrides}  # left-out keys are not set
    tables = ((compiled.plan.overrides, False), (compiled.plan.env, True))
    for table_, is_env in tables:
        for key, history in table_.items():
            if history.removed or (not is_env and key not in emitted):
                continue
            name = f"${key}" if is_env else emitted[key]
            for entry in history.entries:
                if entry.origin.field is None:
                    continue
                owner = field_of(entry.origin.field, open_maps)
                if only is not None and owner != only:
                    continue
                use = uses.setdefault(owner, {}).setdefault(release, FieldUse(shown_by=shown_by))
                if name not in use.keys:
                    use.keys.append(name)
    for setting in compiled.dropped:
        if setting.origin.field is not None and (
            only is None or field_of(setting.origin.field, open_maps) == only
        ):
            owner = field_of(setting.origin.field, open_maps)
            use = uses.setdefault(owner, {}).setdefault(release, FieldUse(shown_by=shown_by))
            if setting.key not in use.left_out:
                use.left_out.append(setting.key)


def leaf_fields() -> list[str]:
    """The fields that hold a value (not a section), in the schema's order; open mappings included."""
    paths, open_maps = recipe_fields()
    return [p for p in paths if p in open_maps or not any(q.startswith(p + ".") for q in paths)]


def field_uses(site: Site) -> Uses:
    uses: Uses = {}
    for cell in site.cells:
        if cell.compiled is not None:
            collect(cell.compiled, uses)
    newest_first = sorted({p.verl_index for p in site.platforms.values()}, key=Version, reverse=True)
    catalog = site.catalog
    for name in leaf_fields():
        for release in [r for r in newest_first if r not in uses.get(name, {})]:
            if not _vary(site, catalog, name, release, uses):
                # what does not compile or set anything alone on one release is not tried on the older
                # ones (each try is a compile of every recipe): the page says "none found" there
                break
    return uses


def _vary(site: Site, catalog: Catalog, name: str, release: str, uses: Uses) -> bool:
    """Compile a built-in recipe with the field changed (`--set`) until one compile sets something;
    did one?"""
    samples = _samples(name)
    if not samples:
        return False
    platform = next(p for p, profile in site.platforms.items() if profile.verl_index == release)
    for recipe in _kinds_of_plan(site):
        for sample in samples:
            assignment = f"{name}={sample}"
            try:
                compiled = compile_request(
                    Request(recipe, platform, sets=[assignment], allow_known_broken=True), catalog
                )
            except RlcatError:
                continue
            collect(compiled, uses, f"rlcat compile {recipe} --platform {platform} --set {assignment}", name)
            if release in uses.get(name, {}):
                return True
    return False


def _kinds_of_plan(site: Site) -> list[str]:
    """One recipe per algorithm, backend and mode, the written ones before those imported from
    upstream scripts: a field sets a key or not by these axes, and each recipe tried costs a compile
    per field and release (with every recipe, the field search was most of a docs build)."""
    order = sorted(site.recipes, key=lambda n: site.recipes[n].recipe.provenance is not None)
    kinds: dict[tuple[str, str, str], str] = {}
    for name in order:
        r = site.recipes[name].recipe
        kinds.setdefault((r.algorithm, r.backend, r.mode), name)
    return list(kinds.values())


def _samples(name: str) -> list[str]:
    """Values of the field's type to try, as `--set` reads them (YAML)."""
    kind = value_type(field_info(name).annotation)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return []
    if typing.get_origin(kind) is typing.Literal:
        return [json.dumps(v) for v in typing.get_args(kind)]
    if kind is bool:
        return ["true", "false"]
    if kind is int:
        return ["2", "1"]
    if kind is float:
        return ["0.5", "2.0"]
    if kind is str:
        return ['"example"']
    if typing.get_origin(kind) is list:
        return ["[1, 2]"]
    return []


# --- the page --------------------------------------------------------------------------------------


def fields_page(site: Site) -> str:
    uses = field_uses(site)
    releases = sorted({p.verl_index for p in site.platforms.values()})
    on = {r: sorted(n for n, p in site.platforms.items() if p.verl_index == r) for r in releases}
    out = [
        "# Recipe fields and the verl keys they set\n",
        "Which verl keys (and environment variables, written `$NAME`) each recipe field sets, on "
        "each verl release rlcat has a key index for. Nothing here is written by hand: every value "
        "of a plan records the recipe field that set it, and this page collects them from real "
        "compiles — every built-in recipe on every platform, engine, mode and backend it allows, and "
        "for a field none of them sets, a compile of a built-in recipe with the field changed "
        "(`--set`), named in the table. A key's name is the one the release uses.\n",
        "For one plan, with values and where each came from: "
        + code("rlcat explain RECIPE FIELD")
        + " (for example "
        + code("rlcat explain gsm8k_qwen3_8b_fsdp batch.mini_batch_size")
        + ").\n",
        table(
            ["verl release", "platforms"],
            [
                [esc(r), ", ".join(link(code(p), rel(HERE, page("platform", p))) for p in on[r])]
                for r in releases
            ],
        ),
    ]
    sections: dict[str, list[str]] = {}
    for name in leaf_fields():
        sections.setdefault(name.split(".", 1)[0], []).append(name)
    for top, names in sections.items():
        if names == [top]:
            out.append(_field_section(top, uses.get(top, {}), releases, level=2))
            continue
        out.append(f"## {code(top)} {{#{anchor(top)}}}\n")
        out += [_field_section(n, uses.get(n, {}), releases, level=3) for n in names]
    return "\n".join(out)


def _field_section(name: str, by_release: dict[str, FieldUse], releases: list[str], level: int) -> str:
    heading = f"{'#' * level} {code(name)} {{#{anchor(name)}}}\n"
    description = field_info(name).description
    body = [heading] + ([esc(description) + "\n"] if description else [])
    if name in recipe_fields()[1]:
        body.append(
            "A mapping: each entry sets the verl key or environment variable it names"
            + (", as in the compiles below.\n" if by_release else "; no built-in recipe has one.\n")
        )
    elif not by_release:
        body.append(
            "No compile shows a verl key or environment variable set by it: none of the built-in "
            "recipes', nor one of a built-in recipe with this field changed alone. It describes the "
            "recipe itself, or acts only together with other settings (a backend, an algorithm).\n"
        )
    if not by_release:
        return "\n".join(body)
    rows: list[list[str]] = []
    groups: dict[tuple[tuple[str, ...], tuple[str, ...], str], list[str]] = {}
    for release in releases:
        use = by_release.get(release)
        if use is None:
            rows.append([esc(release), "none found", ""])
            continue
        groups.setdefault((tuple(use.keys), tuple(use.left_out), use.shown_by), []).append(release)
    for (keys, left_out, shown_by), group in groups.items():
        shown = esc(shown_by) if shown_by == BUILT_IN else code(shown_by)
        cells = [breakable_code(k) for k in keys]
        cells += [f"left out: {breakable_code(k)} (the release has no such key)" for k in left_out]
        rows.append([esc(", ".join(group)), "<br>".join(cells), shown])
    rows.sort(key=lambda r: r[0])
    body.append(table(["verl release", "sets", "shown by"], rows))
    return "\n".join(body)
