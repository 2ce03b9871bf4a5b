"""A page per recipe: what it is, its file, and what it compiles to on every platform, with origins."""

from __future__ import annotations

from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Diagnostic, is_guard_code
from rlcat.docsite.data import Cell, Site
from rlcat.docsite.links import (
    ALGORITHM_LABELS,
    BACKEND_LABELS,
    ENGINE_LABELS,
    MODE_LABELS,
    STATUS_ICONS,
    origin_md,
    page,
    platform_anchor,
    rel,
)
from rlcat.docsite.md import breakable_code, code, details, esc, fence, link, name_code, name_md, table, tabs
from rlcat.docsite.md import facts as md_facts
from rlcat.docsite.placements import placement_md
from rlcat.docsite.results import recipe_results_md
from rlcat.emit.formats import FORMATS, override_text, override_texts
from rlcat.files import read_text
from rlcat.model.axes import SPLIT_MODES
from rlcat.model.plan import Setting
from rlcat.model.recipe import Provenance
from rlcat.survey.recipes import diff
from rlcat.syntax.hydra_value import render_or_repr


def gpu_layout(site: Site, name: str) -> str:
    res = site.recipe(name).resources
    nodes = f"{res.nodes} node{'s' if res.nodes > 1 else ''} × {res.gpus_per_node} GPUs"
    if site.recipe(name).mode in SPLIT_MODES:
        return f"{nodes}: {res.trainer_gpus} trainer + {res.rollout_gpus} rollout GPUs per node"
    return f"{nodes}, colocated (trainer and rollout share every GPU)"


def gpu_layout_short(site: Site, name: str) -> str:
    res = site.recipe(name).resources
    text = f"{res.nodes} × {res.gpus_per_node}"
    if site.recipe(name).mode in SPLIT_MODES:
        text += f" ({res.trainer_gpus} + {res.rollout_gpus})"
    return text


def _parallelism(site: Site, name: str) -> str:
    p = site.recipe(name).parallelism
    parts = []
    for role in ("actor", "ref", "critic", "rollout"):
        values = getattr(p, role).model_dump(exclude_none=True)
        if values:
            parts.append(f"{role} " + ", ".join(f"{k.upper()} {v}" for k, v in values.items()))
    return "; ".join(parts) or "verl's defaults"


def cell_status(c: Cell) -> str:
    """supported / known issue / untested, as the matrix and the recipe pages show it."""
    if c.known_issue:
        return "known issue"
    return "supported" if c.status == "supported" else "untested"


def diagnostic_code_md(d: Diagnostic, here: str) -> str:
    if is_guard_code(d.code):
        return link(d.code, rel(here, page("guard", d.code)))
    return link(d.code, rel(here, f"diagnostics.md#{d.code.lower()}"))


def diagnostics_md(diagnostics: list[Diagnostic], here: str, indent: int = 0) -> str:
    rows = []
    for d in diagnostics:
        message = esc(d.message) + (f" — hint: {esc(d.hint)}" if d.hint else "")
        rows.append([diagnostic_code_md(d, here), str(d.severity), code(d.key) if d.key else "", message])
    return table(["code", "severity", "key", "message"], rows, indent)


def overrides_md(site: Site, c: Compiled, here: str) -> str:
    rows = [
        [breakable_code(f"{g}={o}"), "*recipe* · config group of the entry config"]
        for g, o in c.plan.group_choices.items()
    ]
    rows += [
        [breakable_code(override_text(o)), origin_md(o.setting.origin, here, site.on_site)]
        for o in c.overrides
    ]
    return table(["override", "origin"], rows)


def env_md(site: Site, c: Compiled, here: str) -> str:
    rows = [
        [breakable_code(s.key, "_"), breakable_code(s.value, ":,"), origin_md(s.origin, here, site.on_site)]
        for s in c.env
    ]
    return table(["variable", "value", "origin"], rows)


def _compile_command(site: Site, c: Cell, fmt: str | None = None) -> str:
    r = site.recipe(c.recipe)
    cmd = f"rlcat compile {c.recipe} --platform {c.platform}"
    if c.engine != r.engine:
        cmd += f" --engine {c.engine}"
    return cmd + (f" --format {fmt}" if fmt else "")


def cell_md(site: Site, c: Cell, here: str, reference: Cell | None = None) -> str:
    """Everything one compile gives: guards, overrides, env, left-out keys and the launch script; with
    a `reference` cell that compiles, the plan is shown as its changes against the reference's."""
    note = f": {esc(c.support.note)}" if c.support and c.support.note else ""
    status = cell_status(c)
    out = [f"{STATUS_ICONS[status]} **{status}** — the platform marks this cell *{c.status}*{note}\n"]
    out.append(fence(_compile_command(site, c) + " --explain", "bash"))
    if c.compiled is None:
        out.append("**Does not compile:**\n\n" + diagnostics_md(c.diagnostics, here))
        return "\n".join(out)
    comp = c.compiled
    out.append(
        f"verl {esc(comp.plan.verl_version)} (key index {esc(comp.plan.verl_index)}): "
        f"{code(f'python3 -m {comp.plan.entrypoint} --config-name={comp.plan.config_name}')}\n"
    )
    guards = c.guards
    notes = [d for d in c.diagnostics if not is_guard_code(d.code)]
    if guards:
        out.append("**Guards that fire**\n\n" + diagnostics_md(guards, here))
    else:
        out.append("**Guards that fire**: none.\n")
    if notes:
        out.append("**Notes**\n\n" + diagnostics_md(notes, here))
    if reference is not None and reference.compiled is not None:
        rows = _change_rows(site, reference.compiled, comp, c.platform, here)
        against = f"{name_md(reference.platform)}, {ENGINE_LABELS[reference.engine]}"
        out.append(
            f"**Overrides** ({len(override_texts(comp))}) and **environment** ({len(comp.env)}): "
            + (
                f"as in the [{against} compile](#{platform_anchor(reference.platform)}) except\n\n"
                + table(["change", "setting", "there", "here", "why"], rows)
                if rows
                else f"the same as in the [{against} compile](#{platform_anchor(reference.platform)}).\n"
            )
        )
        out.append(f"The whole plan and its launch script: {code(_compile_command(site, c, 'shell'))}.\n")
        return "\n".join(out)
    out.append(f"**Overrides** ({len(override_texts(comp))})\n\n" + overrides_md(site, comp, here))
    if comp.env:
        out.append(f"**Environment** ({len(comp.env)})\n\n" + env_md(site, comp, here))
    if comp.dropped:
        rows = [
            [breakable_code(s.key), code(render_or_repr(s.value)), origin_md(s.origin, here, site.on_site)]
            for s in comp.dropped
        ]
        out.append("**Left out** (see the notes above)\n\n" + table(["key", "value", "origin"], rows))
    script = FORMATS["shell"](comp)
    out.append(
        details(
            f"Launch script ({_compile_command(site, c, 'shell')})",
            fence(script, "bash"),
            kind="example",
        )
    )
    return "\n".join(out)


def _setting_of(c: Compiled, table_name: str, key: str) -> Setting | None:
    if table_name == "override":
        return next((o.setting for o in c.overrides if o.key == key), None)
    if table_name == "env":
        return next((s for s in c.env if s.key == key), None)
    return None


def _change_rows(site: Site, a: Compiled, b: Compiled, right: str, here: str) -> list[list[str]]:
    """One table row per setting that differs from plan `a` to plan `b` (compiled for `right`)."""
    rows = []
    for ch in diff(a, b):
        show = str if ch.table in ("env", "entry") else render_or_repr
        before = code(show(ch.before)) if ch.kind != "added" else "—"
        after = code(show(ch.after)) if ch.kind != "removed" else "—"
        setting = _setting_of(b if ch.kind != "removed" else a, ch.table, ch.key)
        if setting is not None:
            why = origin_md(setting.origin, here, site.on_site)
        else:  # entrypoint, config, verl release: what the platform runs
            why = "*platform* · " + link(f"platform {esc(right)}", rel(here, page("platform", right)))
        rows.append([ch.kind, breakable_code(ch.key, "._" if ch.table == "env" else "."), before, after, why])
    return rows


def platform_diff_md(site: Site, name: str, left: str, right: str, here: str) -> str:
    """What compiling for `right` instead of `left` changes, for every engine the recipe allows."""
    items = []
    for engine in site.engines(name):
        a, b = site.cell(name, left, engine).compiled, site.cell(name, right, engine).compiled
        if a is None or b is None:
            items.append((ENGINE_LABELS[engine], "One of the two does not compile; see below.\n"))
            continue
        rows = _change_rows(site, a, b, right, here)
        body = (
            f"{len(rows)} differences "
            f"({code(f'rlcat diff {name} --platform {left} --against {right} --engine {engine}')}):\n\n"
            + table(["change", "setting", f"on {name_md(left)}", f"on {name_md(right)}", "why"], rows)
            if rows
            else "No differences.\n"
        )
        items.append((ENGINE_LABELS[engine], body))
    return tabs(items)


def recipe_page(site: Site, name: str) -> str:
    here = page("recipe", name)
    resolved = site.recipes[name]
    r = resolved.recipe
    engines = site.engines(name)
    facts = [
        ("algorithm", ALGORITHM_LABELS.get(r.algorithm, r.algorithm)),
        ("backend", BACKEND_LABELS.get(r.trains_with, r.trains_with)),
        (
            "rollout engine",
            ENGINE_LABELS[r.engine]
            + (
                " (also: " + ", ".join(ENGINE_LABELS[e] for e in engines[1:]) + ", with `--engine`)"
                if engines[1:]
                else ""
            ),
        ),
        ("mode", MODE_LABELS[r.mode]),
        (
            "model",
            link(code(r.model), rel(here, page("model", r.model)))
            + f" — {esc(resolved.model.hf_id)} ({esc(resolved.model.size)}, {esc(resolved.model.modality)})",
        ),
        (
            "dataset",
            link(code(r.dataset), rel(here, page("dataset", r.dataset)))
            + f" — {esc(resolved.dataset.summary)}",
        ),
        ("GPU layout", esc(gpu_layout(site, name))),
        ("parallelism", esc(_parallelism(site, name))),
        (
            "batch",
            esc(
                f"{r.batch.mini_batch_size} prompts per mini batch, {r.batch.responses_per_prompt} responses "
                f"per prompt, prompt ≤ {r.batch.max_prompt_length} and response ≤ "
                f"{r.batch.max_response_length} tokens"
            ),
        ),
    ]
    if r.provenance is not None:
        facts.append(("provenance", provenance_md(r.provenance)))
    mark = whose(site, name)
    if mark is not None:
        facts.append(("from", mark if mark == "built-in" else f"{mark}'s catalog"))
    if r.extends:
        facts.append(("extends", recipe_ref(site, r.extends, here)))
    children = sorted(n for n, other in site.recipes.items() if other.recipe.extends == name)
    if children:
        facts.append(
            ("extended by", ", ".join(link(code(c), rel(here, page("recipe", c))) for c in children))
        )
    for guard_id, reason in sorted(r.allow.items()):
        facts.append(("silences", link(guard_id, rel(here, page("guard", guard_id))) + " — " + esc(reason)))
    out = [
        # the override tables need the width more than the list of recipes (the Recipes tab has it)
        "---\nhide:\n  - navigation\n---\n",
        f"# {name_md(name)}\n",
        esc(r.summary) + "\n",
        md_facts(facts),
        "## On every platform {#platforms}\n",
        "Each row is one compile of this recipe; the sections below hold its guards, overrides and "
        "environment, every value with its origin.\n",
    ]
    reference = _reference_cell(site, name)
    if reference is not None:
        out.append(
            f"The {name_md(reference.platform)} compile with {ENGINE_LABELS[reference.engine]} is shown "
            "whole; every other compile as its changes against it.\n"
        )
    rows = []
    for c in site.recipe_cells(name):
        rows.append(
            [
                link(esc(c.platform), "#" + platform_anchor(c.platform)),
                ENGINE_LABELS[c.engine],
                f"{STATUS_ICONS[cell_status(c)]} {cell_status(c)}",
                esc(c.status),
                "yes"
                if c.compiles
                else "**no**: RLC303, known broken (`--allow-known-broken` compiles it)"
                if c.compiled is not None
                else "**no**",
                ", ".join(link(g, rel(here, page("guard", g))) for g in c.guard_ids) or "—",
                esc(c.compiled.plan.verl_version) if c.compiled else "—",
            ]
        )
    out.append(table(["platform", "engine", "status", "platform says", "compiles", "guards", "verl"], rows))
    out.append("## GPU placement {#placement}\n")
    out.append(placement_md(site, name))
    out.append("## Results {#results}\n")
    out.append(recipe_results_md(site, name, here))
    if "cuda" in site.platforms and "rocm" in site.platforms:
        out.append("## From CUDA to ROCm {#cuda-to-rocm}\n")
        out.append(
            f"What the {link('rocm profile', rel(here, page('platform', 'rocm')))} and the recipe's "
            "`platforms:` block change against the `cuda` compile, for each engine:\n"
        )
        out.append(platform_diff_md(site, name, "cuda", "rocm", here))
    source = site.recipe_file(name)
    out.append("## Recipe file {#recipe-file}\n")
    out.append(
        f"{code(resolved.source.files[-1])}"
        + (f", extending {recipe_ref(site, r.extends, here)}" if r.extends else "")
        + f". Resolved with every default filled in: {code(f'rlcat show {name}')}.\n"
    )
    out.append(fence(read_text(source, str(source)), "yaml", 'linenums="1"'))
    for platform, profile in site.platforms.items():
        # Left out of the site's search: a plan's hundreds of overrides per platform made the index
        # 3.9 MB (1.2 MB without), every search for a key hit every recipe page, and indexing them
        # was a tenth of the build. The key's own pages (guards, fields) are what a search should find.
        out.append(f"## {name_md(platform)} {{#{platform_anchor(platform)} data-search-exclude}}\n")
        out.append(
            f"{esc(profile.summary)} — {link('platform profile', rel(here, page('platform', platform)))}.\n"
        )
        items = []
        for engine in engines:
            c = site.cell(name, platform, engine)
            against = None if reference is None or c is reference else reference
            items.append((ENGINE_LABELS[engine], cell_md(site, c, here, against)))
        out.append(tabs(items))
    return "\n".join(out)


def _reference_cell(site: Site, name: str) -> Cell | None:
    """The compile shown whole — the recipe's own engine on cuda, the platform verl's own scripts
    are written for — while the page shows every other compile as its changes against it, each
    change with its origin: ten whole plans of 70 to 150 overrides each, with their launch scripts,
    made a page of 200 to 400 kB, and rendering them was most of the docs build (`rlcat compile
    --explain` prints any of them whole)."""
    r = site.recipe(name)
    platform = "cuda" if "cuda" in site.platforms else next(iter(site.platforms), None)
    if platform is None:
        return None
    cell = site.cell(name, platform, r.engine)
    return cell if cell.compiled is not None else None


def provenance_md(origin: Provenance) -> str:
    """The upstream file, linked at the commit it was imported from."""
    # the path may break after a `/`: in the recipes index it is the widest column
    shown = link(breakable_code(origin.path, "/"), origin.url)
    return shown + f" in {esc(origin.repository)} at {code(origin.commit[:12])}"


def whose(site: Site, name: str) -> str | None:
    """On a team's site, whose recipe it is: the team's (by the site's name) or rlcat's built-in."""
    if site.identity is None:
        return None
    return f"**{esc(site.identity.name)}**" if site.is_team_recipe(name) else "built-in"


def recipe_ref(site: Site, name: str, here: str) -> str:
    """A recipe's name, linked to its page when the site has it (a team's site without the built-in
    recipes names a built-in parent without a page)."""
    if site.has_page("recipe", name):
        return link(code(name), rel(here, page("recipe", name)))
    return f"{code(name)} (built-in)"


def recipes_index(site: Site) -> str:
    here = "recipes/index.md"
    headers = ["recipe", "algorithm", "backend", "engines", "mode", "GPUs"]
    if site.identity is not None:
        headers.append("from")
    own: list[list[str]] = []
    upstream: list[list[str]] = []
    for name, resolved in site.recipes.items():
        r = resolved.recipe
        row = [
            link(name_code(name), rel(here, page("recipe", name))),
            ALGORITHM_LABELS.get(r.algorithm, r.algorithm),
            BACKEND_LABELS.get(r.trains_with, r.trains_with),
            ", ".join(ENGINE_LABELS[e] for e in site.engines(name)),
            MODE_LABELS[r.mode],
            esc(gpu_layout_short(site, name)),
        ]
        mark = whose(site, name)
        if mark is not None:
            row.append(mark)
        if r.provenance is None:
            own.append([*row, esc(r.summary)])
        else:
            upstream.append([*row, provenance_md(r.provenance)])
    out = [
        "# Recipes\n\n"
        "A recipe fixes one point of the algorithm × backend × engine × mode space; `rlcat compile` turns "
        "it into the launch plan of a platform. Each page shows the recipe file and its compiled "
        "overrides and environment on every platform, with the origin of every value.\n\n"
        + table([*headers, "summary"], own)
    ]
    if upstream:
        out.append(
            "\n## Upstream examples {#upstream}\n\n"
            "verl's own example launch scripts, converted by `rlcat import` (`recipes/upstream/`): each "
            "recipe names the upstream file and commit it was read from, and compiles to the same "
            "value on every key the script sets. Their names follow the "
            + (
                link("naming grammar", rel(here, "recipe-names.md"))
                if site.has_guide("recipe-names.md")
                else "naming grammar"
            )
            + ". No upstream script runs the one-step-off-policy mode, so no example uses it.\n\n"
            + table([*headers, "upstream file"], upstream)
        )
    return "\n".join(out)
