"""The project file's settings: `rlcat.toml`, or `[tool.rlcat]` in `pyproject.toml`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from rlcat.model.base import GuardAllowances, Name, Strict

RelativePath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


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
