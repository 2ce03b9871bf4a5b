"""The known-issue guard registry: one guard = one small class in its own module, registered by a
decorator that refuses duplicate ids and missing metadata. A guard's docstring is its docs page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar, Final, TypeVar

from ..diagnostics import Severity
from ..model.plain import ModelEntry, PlatformProfile, Recipe
from ..plan import Plan
from ..platforms import allows
from ..record import Record
from ..verl.index import KeyIndex

ID_PATTERN = re.compile(r"^RLC[5-8]\d\d$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
# The sections every guard's docs must have (a meta-test checks them).
DOC_SECTIONS = ("**Why**", "**Bad**", "**Good**")


# Not dataclasses: importing dataclasses (it imports inspect) is a measurable part of a cold compile.
class Affects(Record):
    """Where a guard applies; an empty field means any. `verl` is a range such as ">=0.9,<1"."""

    __slots__ = __match_args__ = ("platforms", "engines", "backends", "modes", "algorithms", "verl")

    def __init__(  # noqa: PLR0917 - fields may be passed by position
        self,
        platforms: tuple[str, ...] = (),
        engines: tuple[str, ...] = (),
        backends: tuple[str, ...] = (),
        modes: tuple[str, ...] = (),
        algorithms: tuple[str, ...] = (),
        verl: str = "",
    ) -> None:
        self.platforms: Final = platforms  # platform names or families (cuda, rocm, npu)
        self.engines: Final = engines
        self.backends: Final = backends
        self.modes: Final = modes
        self.algorithms: Final = algorithms
        self.verl: Final = verl

    def on_platform(self, profile: PlatformProfile) -> bool:
        """The platform part alone: the profile's name or family is listed, or none is."""
        return not self.platforms or bool({profile.name, profile.family} & set(self.platforms))

    def matches(self, recipe: Recipe, profile: PlatformProfile) -> bool:
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


def version_tuple(text: str) -> tuple[int, ...]:
    """Leading numeric release of a version string: '0.9.0.amd0' → (0, 9, 0), '0.22.1rc1' → (0, 22, 1)."""
    match = re.match(r"\d+(?:\.\d+)*", text.strip())
    return tuple(int(p) for p in match.group(0).split(".")) if match else ()


def in_range(version: str, spec: str) -> bool:
    """Does `version` satisfy a comma-separated range like '>=0.9,<1.0'? (no packaging import on
    the compile path)"""
    have = version_tuple(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        op, bound = re.match(r"(>=|<=|==|!=|>|<)\s*(.+)", clause).groups()  # type: ignore[union-attr]
        want = version_tuple(bound)
        width = max(len(have), len(want))
        a, b = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        ok = {">=": a >= b, "<=": a <= b, "==": a == b, "!=": a != b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True


class Context:
    """What a guard sees: the final recipe, its model, the platform, the plan, verl's key index."""

    __slots__ = ("index", "model", "plan", "profile", "recipe")

    def __init__(
        self, recipe: Recipe, model: ModelEntry, profile: PlatformProfile, plan: Plan, index: KeyIndex
    ) -> None:
        self.recipe = recipe
        self.model = model
        self.profile = profile
        self.plan = plan
        self.index = index

    def value(self, key: str) -> Any:
        """The value verl will see for `key`: the plan's, else verl's default (simple interpolations
        resolved); None when neither has it."""
        history = self.plan.overrides.get(key)
        if history is not None and not history.removed:
            return history.final.value
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
        history = self.plan.overrides.get(key)
        return None if history is None or history.removed else history.final

    def env(self, name: str) -> str | None:
        history = self.plan.env.get(name)
        return None if history is None or history.removed else str(history.final.value)

    @property
    def total_gpus(self) -> int:
        return self.recipe.resources.nodes * self.recipe.resources.gpus_per_node


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


class Finding(Record):
    """One problem a guard found; `fix` maps verl keys to the values that repair it."""

    __slots__ = __match_args__ = ("message", "key", "hint", "fix", "fix_env")

    def __init__(
        self,
        message: str,
        key: str | None = None,
        hint: str | None = None,
        fix: dict[str, Any] | None = None,
        fix_env: dict[str, str] | None = None,
    ) -> None:
        self.message: Final = message
        self.key: Final = key
        self.hint: Final = hint
        self.fix: Final[dict[str, Any]] = {} if fix is None else fix
        self.fix_env: Final[dict[str, str]] = {} if fix_env is None else fix_env


class Guard:
    """Base class. Subclasses set the metadata and implement `check`."""

    id: ClassVar[str]
    name: ClassVar[str]
    title: ClassVar[str]
    severity: ClassVar[Severity]
    affects: ClassVar[Affects] = Affects()
    source: ClassVar[tuple[str, ...]]
    since: ClassVar[str]

    def check(self, ctx: Context) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def docs(cls) -> str:
        import inspect

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
        raise TypeError(f"guard {cls.__name__}: id {cls.id!r} is not RLC5xx-RLC8xx")
    if not NAME_PATTERN.match(cls.name):
        raise TypeError(f"guard {cls.__name__}: name {cls.name!r} is not snake_case")
    if cls.id in REGISTRY:
        raise TypeError(f"guard id {cls.id} is taken by {REGISTRY[cls.id].__name__}")
    if any(g.name == cls.name for g in REGISTRY.values()):
        raise TypeError(f"guard name {cls.name} is taken")
    # the raw docstring holds the sections if docs() does (it only strips indentation), and reading
    # it keeps inspect (cleandoc) off the compile path, which registers every guard
    missing = [s for s in DOC_SECTIONS if s not in (cls.__doc__ or "")]
    if missing:
        raise TypeError(f"guard {cls.id} docs lack {', '.join(missing)}")
    REGISTRY[cls.id] = cls
    return cls
