"""A recipe page's GPU placement: one diagram per distinct layout of its compiled plans, with the
platforms that share it (most recipes place the same on every platform: one diagram)."""

from __future__ import annotations

from rlcat.docsite.data import Site
from rlcat.docsite.figures.placement import Layout, layout_of, placement_svg
from rlcat.docsite.md import figure, name_md


def layouts(site: Site, name: str) -> list[tuple[Layout, list[str]]]:
    """Each distinct layout of the recipe (its own engine, mode and backend) and the platforms that
    compile to it, in platform order; a platform where it does not compile has none."""
    engine = site.recipe(name).engine
    found: dict[Layout, list[str]] = {}
    for platform in site.platforms:
        compiled = site.cell(name, platform, engine).compiled
        if compiled is not None:
            found.setdefault(layout_of(compiled), []).append(platform)
    return list(found.items())


def placement_md(site: Site, name: str) -> str:
    """The section's body: a sentence and the diagrams."""
    found = layouts(site, name)
    if not found:
        return "The recipe compiles on no platform: there is no placement to draw.\n"
    out = [
        "Where the compiled plan puts the trainer and the rollout: a row per node, a cell per GPU (top "
        "strip trainer, bottom strip rollout), each model-parallel group outlined. verl reads it from "
        "`trainer.nnodes`, `trainer.n_gpus_per_node` and, when the pools are split, `rollout.*`.\n"
    ]
    for i, (layout, platforms) in enumerate(found):
        shown = ", ".join(platforms)
        if len(found) > 1:
            out.append(f"**{', '.join(name_md(p) for p in platforms)}**\n")
        svg, key = site.drawn.figure(placement_svg, layout, name=f"placement-{i}")
        out.append(figure(svg, f"GPU placement of {name} on {shown}: {layout.summary}", key))
    return "\n".join(out)
