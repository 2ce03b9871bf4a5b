"""A page per platform profile: software baseline, image and docker run line, environment with
reasons, tweaks, support matrix, and the guards that can apply there."""

from __future__ import annotations

from rlcat.docsite.data import Site
from rlcat.docsite.links import ENGINE_LABELS, page, platform_anchor, rel, tweak_anchor
from rlcat.docsite.matrix import support_table
from rlcat.docsite.md import code, esc, facts, fence, link, name_md, table
from rlcat.guards import REGISTRY
from rlcat.guards.base import in_range
from rlcat.model.platform import PlatformProfile, TweakWhen
from rlcat.syntax.bash import shell_word
from rlcat.syntax.docker_run import docker_run_flags
from rlcat.syntax.hydra_value import render_or_repr


def docker_run_line(p: PlatformProfile) -> str:
    """`docker run` with the profile's flags and image, one flag per line."""
    image = p.image.split(" ", 1)[0] if p.image else "IMAGE"
    flags = [" ".join(shell_word(word) for word in words) for words in docker_run_flags(p.docker_run).words]
    return " \\\n    ".join(["docker run -it --rm", *flags, shell_word(image)]) + "\n"


def _when(w: TweakWhen) -> str:
    parts = []
    for label, values in (
        ("engine", [ENGINE_LABELS.get(v, v) for v in w.engine]),
        ("backend", list(w.backend)),
        ("mode", list(w.mode)),
        ("model", list(w.model)),
        ("recipe", list(w.recipe)),
    ):
        if values:
            parts.append(f"{label} is {' or '.join(values)}")
    if w.multi_node is not None:
        parts.append("more than one node" if w.multi_node else "a single node")
    return " and ".join(parts) or "always"


def guards_for(p: PlatformProfile) -> list[str]:
    """Guards whose `affects` can match this platform (name or family, and its verl release)."""
    out = []
    for guard_id in sorted(REGISTRY):
        a = REGISTRY[guard_id].affects
        if not a.on_platform(p):
            continue
        if not in_range(p.verl_index, a.verl):
            continue
        out.append(guard_id)
    return out


def _support_section(site: Site, p: PlatformProfile, here: str) -> str:
    parts: list[str] = []
    parts.append("## Support matrix {#support}\n")
    if p.support:
        rows = []
        for s in p.support:
            recipes = sorted(
                {
                    c.recipe
                    for c in site.cells
                    if c.platform == p.name and (c.mode, c.engine, c.backend) == (s.mode, s.engine, s.backend)
                }
            )
            rows.append(
                [
                    esc(s.mode),
                    ENGINE_LABELS.get(s.engine, s.engine),
                    esc(s.backend),
                    f"**{s.status}**" if s.status == "known-broken" else s.status,
                    esc(s.note) or "—",
                    esc(s.source) or "—",
                    ", ".join(
                        link(code(r), rel(here, page("recipe", r) + "#" + platform_anchor(p.name)))
                        for r in recipes
                    )
                    or "—",
                ]
            )
        parts.append("What the profile states for each mode × engine × backend cell.\n")
        parts.append(table(["mode", "engine", "backend", "status", "note", "source", "recipes"], rows))
    else:
        parts.append("The profile lists no cells.\n")
    return "\n".join(parts)


def platform_page(site: Site, name: str) -> str:
    here = page("platform", name)
    p = site.platforms[name]
    out = [
        f"# Platform {name_md(name)}\n",
        esc(p.summary) + ".\n",
        facts(
            [
                ("family", esc(p.family)),
                ("vendor", esc(p.vendor)),
                ("verl release", esc(p.verl_version)),
                ("key index", f"verl {esc(p.verl_index)} (overrides are checked against it)"),
                ("GPUs", esc(", ".join(p.gpus)) or "—"),
                ("compile for it", code(f"rlcat compile RECIPE --platform {name}")),
            ]
        ),
        "## Software baseline {#software}\n",
    ]
    if p.software:
        out.append(table(["component", "version"], [[esc(k), esc(v)] for k, v in p.software.items()]))
    else:
        out.append("Not stated.\n")
    out.append("## Image and docker run {#image}\n")
    if p.image:
        out.append(f"Image: {code(p.image)}\n")
        out.append(fence(docker_run_line(p), "bash"))
    else:
        out.append("No container image: verl is installed from PyPI on the host or in your own image.\n")
    out.append("## Environment {#environment}\n")
    if p.env:
        out.append("Exported by every launch script compiled for this platform.\n")
        rows = [[code(e.name), code(e.value), esc(e.reason), esc(e.source) or "—"] for e in p.env]
        out.append(table(["variable", "value", "why", "source"], rows))
    else:
        out.append("The profile adds no environment variables.\n")
    out.append("## Tweaks {#tweaks}\n")
    if p.tweaks:
        out.append("Settings the profile adds when a recipe meets the condition.\n")
        for t in p.tweaks:
            out.append(f"### {name_md(t.id)} {{#{tweak_anchor(t.id)}}}\n")
            out.append(f"**When** {esc(_when(t.when))}.\n")
            sets = [[code(f"{k}={render_or_repr(v)}")] for k, v in t.set.items()]
            sets += [[code(f"{k}={v}") + " (environment)"] for k, v in t.env.items()]
            out.append(table(["sets"], sets))
            out.append(f"**Why**: {esc(t.reason)}\n")
            out.append(f"**Source**: {esc(t.source)}\n")
    else:
        out.append("None.\n")
    out.append(_support_section(site, p, here))
    out.append("### With the catalog's recipes {#support-recipes}\n")
    matrix = link("support matrix", rel(here, "matrix.md"))
    out.append(f"The same, by algorithm, from compiling every recipe here (see the {matrix}).\n")
    out.append(support_table(site, p, here))
    out.append("## Guards that can apply {#guards}\n")
    rows = [
        [link(g, rel(here, page("guard", g))), esc(REGISTRY[g].title), esc(REGISTRY[g].affects.describe())]
        for g in guards_for(p)
    ]
    out.append(table(["guard", "checks", "applies to"], rows))
    if p.sources:
        out.append("## Sources {#sources}\n")
        out.append("".join(f"- {esc(s)}\n" for s in p.sources))
    return "\n".join(out)


def platforms_index(site: Site) -> str:
    here = "platforms/index.md"
    rows = [
        [
            link(code(name), rel(here, page("platform", name))),
            esc(p.vendor),
            esc(p.verl_version),
            esc(p.verl_index),
            esc(p.summary),
        ]
        for name, p in site.platforms.items()
    ]
    return (
        "# Platforms\n\n"
        "A platform profile holds the verl release a platform runs (and the key index its overrides are "
        "checked against), its container image, software baseline, environment, tweaks and support "
        "matrix. `--platform NAME` picks one.\n\n"
        + table(["profile", "vendor", "verl", "key index", "summary"], rows)
    )
