"""The project file's settings: `rlcat.toml`, or `[tool.rlcat]` in `pyproject.toml`."""

from __future__ import annotations

import re
from typing import Annotated, Literal, NamedTuple

from pydantic import AfterValidator, Field, StringConstraints

from rlcat.model.base import EnvName, GuardAllowances, Name, Strict

RelativePath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]

# --- where a team's repository installs rlcat from (`rlcat init --rlcat-source`) ---

SourceKind = Literal["pypi", "git", "wheels", "index"]
SOURCE_FORMS = (
    "pypi (the package index, once rlcat is published there)",
    "git+URL@REV (a git repository of rlcat and a tag or commit: pre-commit's repo: and rev:)",
    "wheels:DIR (a folder or page of wheels, absolute or a URL: pip's --find-links)",
    "index:URL (a private package index: pip's --index-url)",
)
# URL and path characters only (RFC 3986's): nothing a shell expands ($, `), no space or line break,
# nothing GitHub Actions reads as an expression (${{ }}) -- the scaffold quotes what is left for
# YAML (scaffold._yaml_scalar) and bash (syntax.bash.shell_word), each in its one place.
_SOURCE_CHARS = re.compile(r"[A-Za-z0-9._~:/?#\[\]@!&'()*+,;=%-]+")
_GIT_REV = re.compile(r"[A-Za-z0-9._/+-]+")
_GIT_SCHEMES = ("https://", "http://", "ssh://", "file://", "git://")


class RlcatSource(NamedTuple):
    """How a team's repository installs rlcat: the kind, the URL or folder, the git revision."""

    kind: SourceKind
    location: str = ""
    rev: str = ""


def parse_rlcat_source(text: str) -> RlcatSource:
    """`pypi`, `git+URL@REV`, `wheels:DIR` or `index:URL` (SOURCE_FORMS); ValueError saying what is
    wrong, for a value that is none of them or holds characters no generated file could carry."""
    if len(text) > 2000 or not _SOURCE_CHARS.fullmatch(text):
        raise ValueError(
            "holds characters other than those of a URL or a path (a space, a line break, $, `, \\, "
            "quotes other than ' or non-ASCII): no generated file could carry it safely"
        )
    if text == "pypi":
        return RlcatSource("pypi")
    if text.startswith("git+"):
        url, at, rev = text[len("git+") :].rpartition("@")
        if not url.startswith(_GIT_SCHEMES) or not at or not rev:
            raise ValueError(
                "a git source is git+URL@REV, e.g. git+https://git.example.com/ml/rlcat.git@v0.1.0"
            )
        if not _GIT_REV.fullmatch(rev) or rev.startswith("-"):
            raise ValueError(f"'{rev}' is not a tag, branch or commit name")
        return RlcatSource("git", url, rev)
    kind, colon, where = text.partition(":")
    if colon and kind == "wheels" and (where.startswith(("/", "https://", "http://", "file://"))):
        return RlcatSource("wheels", where)
    if colon and kind == "wheels":
        raise ValueError(
            "a wheel folder is absolute or a URL: pre-commit installs the hooks from a folder of its own, "
            "where a relative path leads elsewhere"
        )
    if colon and kind == "index" and where.startswith(("https://", "http://")):
        return RlcatSource("index", where)
    raise ValueError("not a source rlcat can install from; one of: " + "; ".join(SOURCE_FORMS))


def _checked_source(text: str) -> str:
    parse_rlcat_source(text)
    return text


RlcatSourceText = Annotated[str, AfterValidator(_checked_source)]


# The container runtimes `rlcat launch --target slurm` starts a node's commands in, Ray's
# authentication modes, and docker's pull policies: the one list of each (the command line offers
# exactly these).
ContainerKind = Literal["docker", "podman", "apptainer", "pyxis", "none"]
RayAuthMode = Literal["disabled", "token"]
PullPolicy = Literal["always", "missing", "never"]
# one launch setting's entry (a mount, a shell line, an sbatch option): its grammar is checked by
# the launch, at this file's line, where the launch reads it
LaunchEntry = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


class SlurmLaunchSettings(Strict):
    """`[launch.slurm]`: what every `rlcat launch --target slurm` of the project adds."""

    sbatch_args: list[LaunchEntry] = Field(
        default=[],
        max_length=64,
        description="sbatch options for every job (--partition=gpu, --account=..., --time=..., --qos=...), "
        "before those of --sbatch-arg",
    )


class LaunchSettings(Strict):
    """`[launch]`: the defaults of every `rlcat launch`; the command line adds to the lists and wins
    for the others."""

    ray_auth_mode: RayAuthMode | None = Field(
        default=None, description="RAY_AUTH_MODE of every launch (--ray-auth-mode)"
    )
    container: ContainerKind | None = Field(
        default=None, description="slurm: the container runtime on each node (--container)"
    )
    pull: PullPolicy | None = Field(
        default=None, description="slurm: how each node gets the image (--pull; default: missing)"
    )
    mounts: list[LaunchEntry] = Field(
        default=[], max_length=64, description="slurm: folders the containers see, SRC:DST[:ro] (--mount)"
    )
    in_image: list[LaunchEntry] = Field(
        default=[], max_length=64, description="Paths of the plan that live in the image (--in-image)"
    )
    pass_env: list[EnvName] = Field(
        default=[], max_length=64, description="Variables passed by name into the job (--pass-env)"
    )
    setup: list[LaunchEntry] = Field(
        default=[],
        max_length=64,
        description="slurm: shell lines run on each node before its commands (--setup)",
    )
    slurm: SlurmLaunchSettings = Field(default_factory=SlurmLaunchSettings)


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
    rlcat_source: RlcatSourceText | None = Field(
        default=None,
        description="Where the pre-commit hooks and CI install rlcat from (`rlcat init --rlcat-source`: "
        "pypi, git+URL@REV, wheels:DIR or index:URL); `rlcat init --force` writes them again from it",
    )
    allow: GuardAllowances = Field(
        default={},
        description="Guards accepted for every recipe of the project (and RLC303), each with the reason",
    )
    launch: LaunchSettings = Field(
        default_factory=LaunchSettings, description="The defaults of every `rlcat launch` ([launch])"
    )
    site: SiteSettings = Field(
        default_factory=SiteSettings,
        description="The team's docs site: its name, description and install line",
    )
