"""Hydra's compose, each step that depends on verl's config files alone done once per process.

A compose reads every YAML file of the entry config's defaults tree, walks that tree, merges the
files, then applies the key overrides. Plans of one entry config and one set of config-group choices
share everything but the last step, and a process that composes many of them (the verl runner,
`rlcat import --whole`, the key-index generator, the tests) pays for the rest once:

- each file is parsed once (by its real path, size and modification time);
- the defaults list of one entry config, search path and set of group overrides is built once;
- the config merged from one defaults list of one search path is merged once;
- each override text is parsed once (a catalog plan is some eighty overrides, most of them shared
  with the plans of its recipe on other platforms and with every perturbation of it);
- each interpolation text is parsed once (OmegaConf parses `${...}` on every resolution).

Each compose still gets a fresh copy of what was kept, so the configs Hydra returns are as new as
ever, and every key override is applied by Hydra as before (tests/oracle and tests/verl compare the
results with Hydra's own compose). This file is loaded by two interpreters: rlcat's
(`rlcat.native.hydra_once`) and, by path, the Python that has verl (native/runner.py imports it as
`hydra_once`), so it imports nothing of rlcat.
"""

from __future__ import annotations

import functools
import os
import pickle
from typing import Any

import omegaconf._utils
import omegaconf.base
from hydra._internal import config_loader_impl
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.core_plugins.file_config_source import FileConfigSource
from hydra._internal.defaults_list import DefaultsList, Overrides
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from omegaconf.grammar_parser import parse as parse_interpolation

_INSTALLED: list[bool] = []


def fresh_copy(value: Any) -> Any:
    """A deep copy of a whole config or a loaded file (a root: nothing outside it to share).
    pickle's round trip gives the same nodes, flags and values as `copy.deepcopy` at a seventh of
    its cost, which was a third of the verl runner's time per plan."""
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def install() -> None:
    """Make this process's Hydra do each file-only step once (idempotent)."""
    if _INSTALLED:
        return
    _parse_each_file_once()
    _defaults_lists_once()
    _merge_defaults_once()
    _parse_overrides_once()
    _parse_interpolations_once()
    _INSTALLED.append(True)


def _sources(repo: Any) -> list[str]:
    return [f"{source.scheme()}://{source.path}" for source in repo.get_sources()]


def _parse_each_file_once() -> None:
    parse = FileConfigSource.load_config
    parsed: dict[tuple[str, int, int], Any] = {}

    def load_config(self: FileConfigSource, config_path: str) -> Any:
        full = os.path.realpath(os.path.join(self.path, self._normalize_file_name(config_path)))
        try:
            stat = os.stat(full)
        except OSError:
            return parse(self, config_path)  # Hydra's own error for a missing file
        key = (full, stat.st_size, stat.st_mtime_ns)
        if key not in parsed:
            parsed[key] = parse(self, config_path)
        return fresh_copy(parsed[key])

    FileConfigSource.load_config = load_config  # type: ignore[method-assign]


def _defaults_lists_once() -> None:
    """The defaults list depends on the config name, the search path and the group overrides
    (choices, appended groups, deletions), never on key overrides; each compose keeps its own key
    overrides, in order, as Hydra sorts them."""
    real = config_loader_impl.create_defaults_list  # type: ignore[attr-defined]
    made: dict[str, DefaultsList] = {}

    def create(
        repo: Any, config_name: Any, overrides_list: Any, prepend_hydra: bool, skip_missing: bool
    ) -> DefaultsList:
        fresh = Overrides(repo=repo, overrides_list=overrides_list)
        key = repr(
            (
                config_name,
                prepend_hydra,
                skip_missing,
                _sources(repo),
                fresh.override_choices,
                fresh.append_group_defaults,
                fresh.deletions,
            )
        )
        if key not in made:
            made[key] = real(repo, config_name, overrides_list, prepend_hydra, skip_missing)
        first = made[key]
        return DefaultsList(
            defaults=first.defaults,
            defaults_tree=first.defaults_tree,
            config_overrides=fresh.config_overrides,
            overrides=first.overrides,
        )

    config_loader_impl.create_defaults_list = create  # type: ignore[attr-defined]


def _merge_defaults_once() -> None:
    """A defaults list names files by their path inside the search path, so the merged config is
    kept by the list and the search path together."""
    real = ConfigLoaderImpl._compose_config_from_defaults_list
    merged: dict[str, Any] = {}

    def compose_from_defaults(self: Any, defaults: list[Any], repo: Any) -> Any:
        key = repr((_sources(repo), defaults))
        if key not in merged:
            merged[key] = real(self, defaults, repo)
        return fresh_copy(merged[key])

    ConfigLoaderImpl._compose_config_from_defaults_list = compose_from_defaults  # type: ignore[method-assign]


def _parse_overrides_once() -> None:
    """An override's parse depends on its text alone, and a compose only reads it (its value is
    wrapped into new config nodes when applied), so one parse serves every compose. The texts are
    parsed in order, so the first that fails raises Hydra's own error, and a failure is not kept."""
    real = OverridesParser.parse_overrides
    parsed: dict[str, Override] = {}

    def parse_overrides(self: OverridesParser, overrides: list[str]) -> list[Override]:
        fresh = list(dict.fromkeys(text for text in overrides if text not in parsed))
        if len(parsed) + len(fresh) > 65536:
            parsed.clear()  # bounded: a process that composes very many plans starts over
            fresh = list(dict.fromkeys(overrides))
        if fresh:
            parsed.update(zip(fresh, real(self, fresh), strict=True))
        found = [parsed[text] for text in overrides]
        for override in found:
            override.config_loader = self.config_loader  # as Hydra's own parse sets it
        return found

    OverridesParser.parse_overrides = parse_overrides  # type: ignore[method-assign]


def _parse_interpolations_once() -> None:
    """A parse tree depends on the text alone and is only read by the visitor that resolves it, so
    one tree serves every resolution; a text that fails to parse is not kept and fails again the
    same way."""
    memo = functools.lru_cache(maxsize=65536)(parse_interpolation)
    omegaconf.base.parse = memo  # type: ignore[attr-defined]
    omegaconf._utils.parse = memo  # type: ignore[attr-defined]
