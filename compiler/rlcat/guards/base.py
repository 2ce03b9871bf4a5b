"""The known-issue guard registry: one guard = one small class in its own module, registered by a
decorator that refuses duplicate ids and missing metadata. A guard's docstring is its docs page."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from rlcat.diagnostics import Severity
from rlcat.lower.platform import allows
from rlcat.model.plan import History, Plan, Setting
from rlcat.verl.index import KeyIndex

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rlcat.model.recipe import Critic

ID_PATTERN = re.compile(r"^RLC[5-9]\d\d$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
# The sections every guard's docs must have (a meta-test checks them).
DOC_SECTIONS = ("**Why**", "**Bad**", "**Good**")
VERL_STARTUP = ("", "refuses", "later")


# What a guard reads of the recipe, its model and the platform. The compile path hands it the
# validated Recipe, ModelEntry and PlatformProfile (pydantic models); `rlcat lint` hands it what a
# script says, without building those models (survey.lint_scripts): a guard module imports no
# model, so a cold `rlcat lint` does not load pydantic (bench/lint_scripts.py).


class RecipeView(Protocol):
    """The recipe's axes, its name and its critic."""

    @property
    def name(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def critic(self) -> Critic | None: ...


class ModelView(Protocol):
    """The catalog model: its name, how many positions it has, and its shape as config.json says
    (None, or for the positions a `TODO:` text an import left: not known, and a guard that needs
    the value does not judge it)."""

    @property
    def name(self) -> str: ...
    @property
    def max_position_embeddings(self) -> int | str: ...
    @property
    def extended_max_position_embeddings(self) -> int | None: ...
    @property
    def num_attention_heads(self) -> int | None: ...
    @property
    def num_key_value_heads(self) -> int | None: ...


class PlatformView(Protocol):
    """The platform profile: its name, family, verl release, software versions and `docker_run`."""

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def verl_index(self) -> str: ...
    @property
    def software(self) -> Mapping[str, str]: ...
    @property
    def docker_run(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class Affects:
    """Where a guard applies; an empty field means any. `verl` is a version range such as ">=0.9,<1"
    (PEP 440 specifiers, compared with the key-index release of the platform)."""

    platforms: tuple[str, ...] = ()  # platform names or families (cuda, rocm, npu)
    engines: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    algorithms: tuple[str, ...] = ()
    verl: str = ""

    def on_platform(self, profile: PlatformView) -> bool:
        """The platform part alone: the profile's name or family is listed, or none is."""
        return not self.platforms or bool({profile.name, profile.family} & set(self.platforms))

    def matches(self, recipe: RecipeView, profile: PlatformView) -> bool:
        if not self.on_platform(profile):
            return False
        pairs = (
            (self.engines, recipe.engine),
            (self.backends, recipe.backend),
            (self.modes, recipe.mode),
            (self.algorithms, recipe.algorithm),
        )
        if not allows(pairs):
            return False
        return in_range(profile.verl_index, self.verl)

    def describe(self) -> str:
        parts = []
        for label, values in (
            ("platforms", self.platforms),
            ("engines", self.engines),
            ("backends", self.backends),
            ("modes", self.modes),
            ("algorithms", self.algorithms),
        ):
            if values:
                parts.append(f"{label}: {', '.join(values)}")
        if self.verl:
            parts.append(f"verl {self.verl}")
        return "; ".join(parts) or "every configuration"


def leading_version(text: str) -> Version | None:
    """The version a free-form software entry starts with ('0.22.1rc1 (source build)' → 0.22.1rc1),
    or None when it starts with none ('vLLM with the vllm-ascend plugin')."""
    try:
        return Version(text.split(maxsplit=1)[0]) if text.strip() else None
    except InvalidVersion:
        return None


@cache  # every guard asks for every plan; a handful of (release, range) pairs exist
def in_range(version: str, spec: str) -> bool:
    """Does `version` satisfy a range like '>=0.9,<1.0'? Local and pre-release parts count as the
    release they build on ('0.9.0.amd0' is 0.9.0), as the platform images name them."""
    return SpecifierSet(spec).contains(Version(version).base_version, prereleases=True)


@dataclass(frozen=True)
class Context:
    """What a guard sees: the final recipe, its model, the platform, the plan, verl's key index."""

    recipe: RecipeView
    model: ModelView
    profile: PlatformView
    plan: Plan
    index: KeyIndex
    # the settings of the plan a guard has looked at, in order: a finding about a value the recipe
    # inherits is reported at the recipe's own setting among them (guards.run_guards)
    reads: list[Setting] = field(default_factory=list, compare=False, repr=False)
    # the repository being checked (inside.repository_of): code of it is reviewed with the recipe
    repository: Path | None = None

    def value(self, key: str) -> Any:
        """The value verl will see for `key`: the plan's, else verl's default (simple interpolations
        resolved); None when neither has it."""
        setting = self.setter(key)
        if setting is not None:
            return setting.value
        if not self.index.has(key):
            return None
        return self._resolve(self.index.default(key), depth=0)

    def _resolve(self, default: Any, depth: int) -> Any:
        if not isinstance(default, str) or depth > 5:
            return default
        select = re.fullmatch(r"\$\{oc\.select:([\w.]+),\s*(.*)\}", default)
        if select:
            target = self.value(select.group(1))
            return target if target is not None else _literal(select.group(2))
        plain = re.fullmatch(r"\$\{([\w.]+)\}", default)
        if plain:
            return self.value(plain.group(1))
        return default

    def setter(self, key: str) -> Any:
        """The Setting in force for a key of the plan, or None."""
        return self._read(self.plan.overrides.get(key))

    def env_setter(self, name: str) -> Any:
        """The Setting in force for an environment variable of the plan, or None."""
        return self._read(self.plan.env.get(name))

    def env(self, name: str) -> str | None:
        setting = self.env_setter(name)
        return None if setting is None else str(setting.value)

    def _read(self, history: History | None) -> Setting | None:
        if history is None or history.removed:
            return None
        self.reads.append(history.final)
        return history.final


def _literal(text: str) -> Any:
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Allowance:
    """A guard (or RLC303, a known-broken cell) accepted, with the reason and where it was accepted:
    a recipe's `allow:` or the project file's `[allow]`."""

    reason: str
    by: str  # "the recipe", "the project file"
    file: str | None = None
    line: int | None = None
    key: str | None = None


# Who reads a finding: a recipe's author (`rlcat compile`, `validate`) writes recipe fields, a launch
# script's (`rlcat lint`) writes verl keys.
Reader = Literal["recipe", "script"]


@dataclass(frozen=True)
class Knob:
    """A setting a hint names, as each reader writes it: the recipe field (or the words a recipe's
    author uses: `--engine sglang`) and the verl keys it sets."""

    recipe: str
    keys: tuple[str, ...]

    def said(self, reader: Reader) -> str:
        return self.recipe if reader == "recipe" else " and ".join(self.keys)


def said(recipe: str, script: str) -> Knob:
    """Words each reader says differently (`the mode sets it`, `the entrypoint's config sets it`); a
    recipe's `allow:` has no counterpart in a script (`script=""`)."""
    return Knob(recipe, (script,))


def knob(field_name: str, *keys: str, value: object = None) -> Knob:
    """A recipe field and the verl keys it sets; with `value`, each written with it
    (`batch.responses_per_prompt: 4`, `actor_rollout_ref.rollout.n=4`)."""
    if value is None:
        return Knob(field_name, keys)
    return Knob(f"{field_name}: {value}", tuple(f"{key}={value}" for key in keys))


@dataclass(frozen=True)
class Hint:
    """A hint that names settings: rendered for its reader in one place (`for_reader`), so a script
    gets verl keys and a recipe its fields."""

    parts: tuple[str | Knob, ...]

    def for_reader(self, reader: Reader) -> str:
        return "".join(part if isinstance(part, str) else part.said(reader) for part in self.parts)


def hint(*parts: str | Knob) -> Hint:
    return Hint(parts)


def hint_for(text: str | Hint | None, reader: Reader) -> str | None:
    """A finding's hint as its reader reads it."""
    return text.for_reader(reader) if isinstance(text, Hint) else text


@dataclass(frozen=True)
class Finding:
    """One problem a guard found; `fix` maps verl keys to the values that repair it."""

    message: str
    key: str | None = None  # the verl key the finding is about
    hint: str | Hint | None = None  # a Hint when it names settings (rendered for its reader)
    fix: dict[str, Any] = field(default_factory=dict)
    fix_env: dict[str, str] = field(default_factory=dict)
    env: str | None = None  # the environment variable the finding is about


class Guard:
    """Base class. Subclasses set the metadata and implement `check`."""

    id: ClassVar[str]
    name: ClassVar[str]
    title: ClassVar[str]
    severity: ClassVar[Severity]
    affects: ClassVar[Affects] = Affects()
    source: ClassVar[tuple[str, ...]]
    since: ClassVar[str]
    # What verl's own start-up checks (main_ppo's, before any GPU work) do with what an error guard
    # finds; the differential tier (tests/oracle) holds every guard to it:
    #   "refuses": they refuse it too, so rlcat only says it earlier, at the line that set it;
    #   "later":   they let some or all of it through, and the run fails, or trains otherwise than
    #              asked, later: the guard's **Why** says where, citing verl's source.
    # A warning refuses nothing and leaves it empty.
    verl_startup: ClassVar[str] = ""

    def check(self, ctx: Context) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.docs().split("\n\n", 1)[0].replace("\n", " ")


REGISTRY: dict[str, type[Guard]] = {}
G = TypeVar("G", bound=type[Guard])


def register(cls: G) -> G:
    """Add a guard to the registry; refuse duplicate ids or names and missing metadata or docs."""
    for attr in ("id", "name", "title", "severity", "source", "since"):
        if not getattr(cls, attr, None):
            raise TypeError(f"guard {cls.__name__} has no {attr}")
    if not ID_PATTERN.match(cls.id):
        raise TypeError(f"guard {cls.__name__}: id {cls.id!r} is not RLC5xx-RLC9xx")
    if not NAME_PATTERN.match(cls.name):
        raise TypeError(f"guard {cls.__name__}: name {cls.name!r} is not snake_case")
    if cls.id in REGISTRY:
        raise TypeError(f"guard id {cls.id} is taken by {REGISTRY[cls.id].__name__}")
    if any(g.name == cls.name for g in REGISTRY.values()):
        raise TypeError(f"guard name {cls.name} is taken")
    missing = [s for s in DOC_SECTIONS if s not in (cls.__doc__ or "")]  # as written: no cleandoc needed
    if missing:
        raise TypeError(f"guard {cls.id} docs lack {', '.join(missing)}")
    if (cls.severity == Severity.ERROR) != bool(cls.verl_startup) or cls.verl_startup not in VERL_STARTUP:
        raise TypeError(
            f"guard {cls.id}: verl_startup {cls.verl_startup!r} (an error guard says refuses or later)"
        )
    REGISTRY[cls.id] = cls
    return cls
