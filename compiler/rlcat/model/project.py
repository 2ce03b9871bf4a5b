"""The project file's settings: `rlcat.toml`, or `[tool.rlcat]` in `pyproject.toml`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from rlcat.model.base import GuardAllowances, Name, Strict

RelativePath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


# One line of text, without < or >: MkDocs writes the site's name into the pages' HTML unescaped.
SiteText = Annotated[str, StringConstraints(min_length=1, max_length=400, pattern=r"^[^<>\x00-\x1f\x7f]+$")]


class SiteSettings(Strict):
    """What the team's docs site (`rlcat docs build --catalog DIR`) says of itself."""

    name: SiteText | None = Field(
        default=None, description="The site's title (default: the name of the project's folder)"
    )
    description: SiteText | None = Field(
        default=None, description="One sentence under the title, and the pages' description"
    )
    install: SiteText | None = Field(
        default=None,
        description="The command that installs rlcat the team's way, shown in the quick start "
        "(default: none shown; the repository's README says how)",
    )


class ProjectSettings(Strict):
    """What a team's repository tells every rlcat command; every field is optional."""

    catalog: list[RelativePath] = Field(
        default=["."],
        max_length=64,
        description="Catalog folders, relative to the project file; each holds recipes/ and/or catalog/",
    )
    platforms: list[Name] = Field(
        default=["cuda", "rocm"],
        min_length=1,
        max_length=64,
        description="The platforms `rlcat validate` compiles each recipe for (with those a recipe "
        "names); the first is the default --platform",
    )
    strict: bool = Field(default=False, description="`rlcat validate` fails on warnings too")
    schemas: RelativePath = Field(
        default="schemas", description="Where `rlcat schemas export` writes the JSON Schemas"
    )
    allow: GuardAllowances = Field(
        default={},
        description="Guards accepted for every recipe of the project (and RLC303), each with the reason",
    )
    site: SiteSettings = Field(
        default_factory=SiteSettings,
        description="The team's docs site: its name, description and install line",
    )
