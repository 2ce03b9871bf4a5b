"""Compose verl's Hydra config from a fetched release tree, without importing verl.

Hydra is imported inside the functions: ``import hydra`` costs ~130 ms and the compile path of rlcat
must not pay for it (only `import --whole`, the key-index generator and the tests compose).

The composition is the one verl's launcher performs: ``initialize_config_dir`` on the folder of the
entry config plus ``compose(config_name, overrides)``, which uses the same override parser and config
loader as the command line, so grammar errors, unknown keys without ``+``, ``+`` on an existing key
and missing group options are rejected exactly as a real launch would reject them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlcat.dev.trees import require_tree
from rlcat.verl.names import ENTRY_DIRS

if TYPE_CHECKING:
    from omegaconf import DictConfig


_TRAINER_DIR = "verl/trainer/config"
_SEARCHPATH_KEY = "hydra.searchpath"


def entry_dir(version: str, config_name: str) -> Path:
    """Return the absolute folder holding ``config_name`` in the tree of ``version``.

    Raises:
        KeyError: ``config_name`` is not one of :data:`ENTRY_DIRS`.
        FileNotFoundError: the tree is not fetched.
    """
    if config_name not in ENTRY_DIRS:
        raise KeyError(f"unknown verl entry config {config_name!r}; known: {', '.join(ENTRY_DIRS)}")
    return (require_tree(version) / ENTRY_DIRS[config_name]).resolve()


def _quote(item: str) -> str:
    """Quote ``item`` as a Hydra single-quoted string (paths may hold characters the grammar rejects)."""
    return "'" + item.replace("\\", "\\\\").replace("'", "\\'") + "'"


def with_trainer_searchpath(version: str, config_name: str, overrides: Sequence[str]) -> list[str]:
    """Return ``overrides`` plus the search path that lets secondary entry configs find the trainer.

    The fully-async configs reach ``ppo_trainer`` through ``hydra.searchpath`` set to
    ``pkg://verl.trainer.config`` (imports verl) or ``file://verl/trainer/config`` (relative to the
    cwd). A command-line ``hydra.searchpath`` replaces the YAML one, so an absolute ``file://`` path
    to this tree makes composition independent of both verl being importable and the cwd. When the
    caller already passes a search path, this tree's folder is put first in it (Hydra only reads the
    first ``hydra.searchpath`` override) and any ``pkg://verl.`` entry is dropped.
    """
    if ENTRY_DIRS.get(config_name) == _TRAINER_DIR:
        return list(overrides)
    ours = "file://" + (require_tree(version) / _TRAINER_DIR).resolve().as_posix()
    out = list(overrides)
    for i, line in enumerate(out):
        if line.split("=", 1)[0].strip() != _SEARCHPATH_KEY:
            continue
        from hydra.core.override_parser.overrides_parser import OverridesParser

        value = OverridesParser.create().parse_override(line).value()
        theirs = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        items = [ours] + [v for v in theirs if v != ours and not v.startswith("pkg://verl.")]
        out[i] = f"{_SEARCHPATH_KEY}=[{','.join(_quote(v) for v in items)}]"
        return out
    return [f"{_SEARCHPATH_KEY}=[{_quote(ours)}]", *out]


def compose(version: str, config_name: str, overrides: Sequence[str] = ()) -> DictConfig:
    """Compose ``config_name`` of verl ``version`` with Hydra ``overrides`` and return the config.

    Safe to call repeatedly in one process: any global Hydra state left by an earlier caller is
    cleared first, and ``initialize_config_dir`` restores it on exit. The result is the struct-mode
    config verl's launcher would see, without the ``hydra`` node and with interpolations unresolved.

    Raises:
        FileNotFoundError: the tree of ``version`` is not fetched.
        hydra.errors.HydraException: Hydra rejected the overrides (see :func:`rejected_overrides`).
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rlcat.native import hydra_once

    hydra_once.install()  # every compose of this process shares what depends on the files alone
    config_dir = entry_dir(version, config_name)
    full = with_trainer_searchpath(version, config_name, overrides)
    # initialize_config_dir refuses to run when Hydra is already initialised (a previous caller that
    # did not clean up, or an @hydra.main app); a compose here must not depend on that history.
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(config_dir), version_base=None, job_name="rlcat"):
        cfg: DictConfig = hydra_compose(config_name=config_name, overrides=full)
    return cfg


def flatten(cfg: DictConfig, resolve: bool = False) -> dict[str, Any]:
    """Flatten ``cfg`` into ``{"dotted.key": value}`` over its leaves.

    Leaves are scalars, lists (kept whole) and empty dicts; a node that is itself an interpolation is
    a leaf too, so the key set never depends on ``resolve``. Values are plain Python (lists and dicts
    converted from OmegaConf containers). Mandatory values stay ``"???"``.

    With ``resolve=True`` each interpolation is resolved on its own; a key whose interpolation cannot
    be resolved (missing target, mandatory value, unknown resolver) keeps its raw ``${...}`` string,
    so one broken default never hides the others.
    """
    from omegaconf import DictConfig, ListConfig, OmegaConf

    out: dict[str, Any] = {}

    def raw(node: Any, key: Any) -> Any:
        child = node._get_node(key)
        if isinstance(child, (DictConfig, ListConfig)) and not child._is_interpolation():
            return OmegaConf.to_container(child, resolve=False)
        return child._value()

    def value(node: DictConfig, key: Any) -> Any:
        if not resolve:
            return raw(node, key)
        try:
            got = node[key]
            if isinstance(got, (DictConfig, ListConfig)):
                return OmegaConf.to_container(got, resolve=True)
            return got
        except Exception:
            # The broad except is deliberate: OmegaConf raises several unrelated exception types
            # for unresolvable values and the contract is "keep the raw text" for all of them.
            return raw(node, key)

    def walk(node: DictConfig, prefix: str) -> None:
        for key in node:
            path = f"{prefix}{key!s}"
            child = node._get_node(key)
            if not isinstance(child, DictConfig) or child._is_interpolation():
                out[path] = value(node, key)
            elif child._is_missing():
                out[path] = "???"  # a mandatory dict-typed node: len() would raise
            elif child._is_none():
                out[path] = None
            elif len(child) > 0:
                walk(child, path + ".")
            else:
                out[path] = value(node, key)

    walk(cfg, "")
    return out


def _first_line(exc: BaseException) -> str:
    """Return ``"<ExceptionType>: <first non-empty message line>"`` for a Hydra failure.

    Hydra sometimes re-raises OmegaConf errors as a bare ``ConfigCompositionException()``; the text
    then lives in the cause chain.
    """
    for line in _message(exc).splitlines():
        if line.strip():
            return f"{type(exc).__name__}: {line.strip()}"
    return type(exc).__name__


def _message(exc: BaseException) -> str:
    """Return the text of ``exc``, or of the first exception in its cause chain that has one."""
    seen: BaseException | None = exc
    while seen is not None:
        if str(seen).strip():
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return ""


_QUOTED = re.compile(r"'([^']+)'")
# Hydra messages that quote the override's whole input line rather than its key.
_LINE_MESSAGES = (
    re.compile(r"^Error merging override (?P<line>.+)$", re.MULTILINE),
    re.compile(r"^Override (?P<line>.+) looks like a config group override", re.MULTILINE),
)


def _prefix_fits(message: str, override: Any) -> bool:
    """Tell whether ``override``'s prefix (``+``, ``++``, ``~`` or none) can raise ``message``."""
    if message.startswith("Could not append"):
        return bool(override.is_add())
    if message.startswith("Could not delete"):
        return bool(override.is_delete())
    if message.startswith("Could not override"):
        return not (override.is_add() or override.is_force_add() or override.is_delete())
    return True


def _culprit_by_message(message: str, overrides: Sequence[str]) -> int | None:
    """Return the index of the one override that Hydra's error ``message`` names, if unambiguous.

    Hydra names the failing override either by its whole input line ("Error merging override
    a.b=1") or by a quoted key: ``'a.b'`` (override, append, delete) or ``'group/option'`` (missing
    group option). The wording also tells the prefix ("Could not append" is a ``+``, "Could not
    delete" a ``~``, "Could not override" neither), which keeps ``a.b=1`` and ``+a.b=2`` apart.
    Anything still ambiguous (a key given twice) returns ``None`` so that the caller bisects
    instead of guessing. Note that the hint under "Could not override" quotes ``+<input line>``,
    which is why input lines are only matched in the two messages that really name them.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for pattern in _LINE_MESSAGES:
        found = pattern.search(message)
        if found:
            hits = [i for i, line in enumerate(overrides) if line == found.group("line")]
            return hits[0] if len(hits) == 1 else None

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    quoted = set(_QUOTED.findall(message))
    hits = []
    for i, override in enumerate(parsed):
        names = {override.key_or_group, override.get_key_element().lstrip("~+")}
        option = override.value()
        if isinstance(option, str):
            names.add(f"{override.key_or_group}/{option}")
        if names & quoted and _prefix_fits(message, override):
            hits.append(i)
    return hits[0] if len(hits) == 1 else None


def rejected_overrides(version: str, config_name: str, overrides: Sequence[str]) -> list[tuple[str, str]]:
    """Return every override Hydra rejects, as ``(override, message)`` pairs; empty when all pass.

    The message is ``"<ExceptionType>: <first line of Hydra's message>"``. Hydra stops at the first
    failure, so the failing override is localised, recorded, dropped and the rest composed again
    until the remainder composes. Localisation, cheapest first: each override is parsed alone
    (grammar errors need no compose); then the override named by Hydra's message; otherwise a
    bisection for the shortest failing prefix of the overrides (its last element is the culprit).

    Raises:
        FileNotFoundError: the tree of ``version`` is not fetched.
        hydra.errors.HydraException: the entry config fails to compose with no overrides at all.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    require_tree(version)  # a missing tree is an environment problem, not a rejected override
    parser = OverridesParser.create()
    rejected: dict[int, str] = {}
    for i, line in enumerate(overrides):
        try:
            # parse_overrides (plural) is what compose uses; it words errors as the CLI does.
            parser.parse_overrides([line])
        except Exception as exc:
            rejected[i] = _first_line(exc)

    remaining = [i for i in range(len(overrides)) if i not in rejected]

    def attempt(indices: Sequence[int]) -> BaseException | None:
        try:
            compose(version, config_name, [overrides[i] for i in indices])
        except Exception as exc:
            return exc
        return None

    base_checked = False
    error = attempt(remaining)
    while error is not None:
        culprit_pos = _culprit_by_message(_message(error), [overrides[i] for i in remaining])
        if culprit_pos is None:
            if not base_checked:
                base_error = attempt([])
                if base_error is not None:
                    raise base_error
                base_checked = True
            culprit_pos, error = _bisect(remaining, attempt, error)
        rejected[remaining[culprit_pos]] = _first_line(error)
        del remaining[culprit_pos]
        error = attempt(remaining)
    return [(overrides[i], rejected[i]) for i in sorted(rejected)]


def _bisect(
    indices: Sequence[int],
    attempt: Callable[[Sequence[int]], BaseException | None],
    full_error: BaseException,
) -> tuple[int, BaseException]:
    """Find the shortest failing prefix of ``indices``; return its last position and its error.

    Assumes the empty prefix composes and the whole list fails with ``full_error`` (adding
    overrides never repairs an earlier rejection, as Hydra applies them in order).
    """
    lo, hi = 0, len(indices)  # prefix of length lo composes, prefix of length hi fails
    hi_error = full_error
    while hi - lo > 1:
        mid = (lo + hi) // 2
        err = attempt(indices[:mid])
        if err is None:
            lo = mid
        else:
            hi, hi_error = mid, err
    return hi - 1, hi_error
