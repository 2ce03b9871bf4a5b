"""The home page: what rlcat is and the quick start, both taken from README.md so they never drift
(a site of catalog folders, built outside a checkout, has no README: a short text of its own)."""

from __future__ import annotations

import re
from pathlib import Path

from rlcat.docsite.data import Site
from rlcat.docsite.links import ALGORITHM_LABELS, BACKEND_LABELS, ENGINE_LABELS, MODE_LABELS, page
from rlcat.docsite.md import code, esc, link, table
from rlcat.docsite.recipes import gpu_layout_short, whose
from rlcat.files import read_text

QUICK_START = "## Quick start"


def readme_sections(readme: Path) -> tuple[str, str]:
    """(introduction, quick start section) of the README, as Markdown.

    The introduction is everything between the title and the first `## ` heading; the quick start is
    the body of `## Quick start` with its two commands. Links into the repository (relative links)
    become plain text, since the files they name are not pages of the site.
    """
    text = read_text(readme, str(readme))
    if QUICK_START not in text:
        raise ValueError(f"{readme}: no '{QUICK_START}' section")
    head, rest = text.split(QUICK_START, 1)
    intro = head.split("\n", 1)[1] if head.startswith("# ") else head
    quick = rest.split("\n## ", 1)[0]
    return _plain_relative_links(intro.strip()), _plain_relative_links(quick.strip())


def quick_start_commands(readme: Path) -> list[str]:
    """The quick start's commands: the body of each ```bash block of the section."""
    return re.findall(r"```bash\n(.+?)\n```", readme_sections(readme)[1], flags=re.S)


def _plain_relative_links(text: str) -> str:
    return re.sub(r"\[([^\]]+)\]\((?!https?://|mailto:|#)[^)]*\)", r"\1", text)


def catalog_sections(site: Site) -> tuple[str, str]:
    """(introduction, quick start) of a site built from catalog folders (`rlcat docs build
    --catalog DIR`), which has no README to take them from: the team's description and install line
    (the project file's [site] table); without an install line, the quick start says where to look."""
    identity = site.identity
    description = identity.description if identity else ""
    intro = (
        esc(description) + "\n\nEach recipe is compiled by rlcat into the launch plan of every platform, "
        "with the origin of every value"
        + (f"; the recipes marked **{esc(identity.name)}** are the team's own." if identity else ".")
    )
    install = identity.install if identity else None
    commands = [install] if install else []
    quick = "\n".join(["```bash", *commands, "rlcat list", "```"])
    if not install:
        quick = "With rlcat installed as the repository's README says:\n\n" + quick
    return intro, quick


def home_page(site: Site, extra_pages: dict[str, str]) -> str:
    readme = site.root / "README.md"
    intro, quick = readme_sections(readme) if readme.is_file() else catalog_sections(site)
    browse = [
        (link("Support matrix", "matrix.md"), "algorithm × backend × engine × mode on every platform"),
        (
            link("Recipes", "recipes/index.md"),
            f"{len(site.recipes)} recipes, each compiled on every platform with the origin of every value",
        ),
        (
            link("Platforms", "platforms/index.md"),
            "software baseline, image, environment, tweaks and support of each profile",
        ),
        (link("Known-issue guards", "guards/index.md"), "what each guard checks, why, and how to fix it"),
        (link("Models", "models/index.md") + " and " + link("datasets", "datasets/index.md"), "the catalog"),
        (link("Command line", "cli.md"), "every command, option and example"),
        (link("Diagnostics", "diagnostics.md"), "every diagnostic code"),
    ]
    for path, title in extra_pages.items():
        browse.append((link(esc(title), path), ""))
    rows = []
    for name, resolved in site.recipes.items():
        r = resolved.recipe
        rows.append(
            [
                link(code(name), page("recipe", name)),
                ALGORITHM_LABELS.get(r.algorithm, r.algorithm),
                BACKEND_LABELS.get(r.trains_with, r.trains_with),
                ", ".join(ENGINE_LABELS[e] for e in site.engines(name)),
                MODE_LABELS[r.mode],
                esc(gpu_layout_short(site, name)),
                *([whose(site, name) or ""] if site.identity else []),
            ]
        )
    title = esc(site.identity.name) if site.identity else "rlcat"
    return "\n".join(
        [
            f"# {title}\n",
            intro + "\n",
            QUICK_START + " {#quick-start}\n",
            quick + "\n",
            "## In these docs {#contents}\n",
            "".join(f"- **{what}**" + (f" — {why}" if why else "") + "\n" for what, why in browse),
            "## Recipes {#recipes}\n",
            table(
                ["recipe", "algorithm", "backend", "engines", "mode", "GPUs"]
                + (["from"] if site.identity else []),
                rows,
            ),
        ]
    )
