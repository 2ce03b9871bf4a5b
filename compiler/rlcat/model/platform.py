"""Platform profiles: software baseline, environment, tweaks and support matrix of one platform."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from rlcat.model.axes import Backend, Engine, Mode
from rlcat.model.base import EnvName, Name, Strict, VerlKey
from rlcat.syntax.docker_run import docker_run_flags

REQUIRED_HELP = (
    "when launches on this platform fail with any other value: why. A recipe's own `env:` "
    "otherwise beats the profile's value; giving a required variable another value is an error"
)


def _parses(entry: str) -> str:
    docker_run_flags([entry])  # DockerRunError (a ValueError) where it does not parse
    return entry


# One `docker_run` entry: options `docker run` reads one way only (syntax.docker_run), refused where
# it is written when not, before any launch splits it.
DockerRunEntry = Annotated[str, AfterValidator(_parses)]


class EnvVar(Strict):
    """An environment variable the platform's launches need, with the reason."""

    name: EnvName
    value: str
    reason: str
    source: str = ""
    required_because: str | None = Field(default=None, min_length=1, description="Set " + REQUIRED_HELP)


class TweakWhen(Strict):
    """Conditions (all must hold; an empty list means any)."""

    engine: list[Engine] = Field(default_factory=list)
    backend: list[Backend] = []
    mode: list[Mode] = Field(default_factory=list)
    model: list[Name] = []
    recipe: list[Name] = Field(default_factory=list)
    multi_node: bool | None = None


class Tweak(Strict):
    """A platform adjustment: when it applies, what it sets, and why."""

    id: Name
    when: TweakWhen = Field(default_factory=TweakWhen)
    set: dict[VerlKey, Any] = Field(default_factory=dict)
    env: dict[EnvName, str] = {}
    env_required_because: str | None = Field(
        default=None, min_length=1, description="Set, for every variable of `env`, " + REQUIRED_HELP
    )
    reason: str
    source: str


class SupportCell(Strict):
    """Support status of one mode × engine × backend cell on this platform."""

    mode: Mode
    engine: Engine
    backend: Backend
    status: Literal["supported", "untested", "known-broken"]
    source: str = ""
    note: str = ""


class PlatformProfile(Strict):
    """Everything rlcat knows about running verl on one platform."""

    name: Name
    family: Literal["cuda", "rocm", "npu"]
    vendor: Literal["nvidia", "amd", "huawei"]
    summary: str
    verl_version: str = Field(description="The verl release the platform's image runs")
    # a release name, never a path: the key index is one of those rlcat ships under schemas/verl
    verl_index: str = Field(
        pattern=r"^[0-9]+(\.[0-9]+)*$",
        max_length=40,
        description="The key index (a PyPI release) overrides are checked against",
    )
    image: str = ""
    docker_run: list[DockerRunEntry] = Field(default_factory=list)
    software: dict[str, str] = Field(default_factory=dict)
    gpus: list[str] = Field(default_factory=list)
    env: list[EnvVar] = []
    tweaks: list[Tweak] = Field(default_factory=list)
    support: list[SupportCell] = []
    sources: list[str] = Field(default_factory=list)
