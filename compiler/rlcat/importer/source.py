"""What `rlcat import` reads: a launch script, a Hydra `overrides.yaml`, or a command line, each
turned into one `SourceRun` — the entrypoint, the entry config, every override as verl would read
it with the line that wrote it, and the environment the launched process gets.

The script and the command line go through the one static reader (rlcat.scripts): a command line
is quoted back into one line of shell and read like a script, so both find launches the same way.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from rlcat.diagnostics import UNREADABLE_FILES, Diagnostic, RlcatError, Severity, diag
from rlcat.files import read_text
from rlcat.inside import link_out
from rlcat.read.document import compose_yaml
from rlcat.read.nodes import Builder
from rlcat.scripts import Launch, ScriptReading, read_script
from rlcat.scripts import read_text as read_script_text
from rlcat.survey.lint_scripts import ENTRY_CONFIGS, entry_module
from rlcat.syntax.hydra_value import HydraValueError
from rlcat.syntax.hydra_value import parse as parse_hydra_value

SourceKind = Literal["script", "overrides", "command"]
# Hydra's prefixes of an override key: add, add-or-override, delete
_PREFIXES = ("++", "+", "~")


@dataclass(frozen=True)
class SourceSetting:
    """One override of the source, as Hydra reads it."""

    key: str  # the dotted key, without prefix
    prefix: str  # "", "+", "++" or "~"
    value: Any  # as Hydra's grammar reads the text (None for `~key`)
    text: str  # the override as written
    line: int | None
    col: int | None
    known: bool = True  # False: part of the text is only known by running something
    unknown: tuple[str, ...] = ()  # those parts, as written (`$(date +%Y)`, `$HOME`)

    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else "the source"


@dataclass
class SourceRun:
    """One verl launch to import."""

    file: str  # as shown in diagnostics and comments
    kind: SourceKind
    entrypoint: str | None  # a module (`verl.trainer.main_ppo`); None: not known (overrides.yaml)
    config_name: str | None  # the entry config; None: not known
    settings: dict[str, SourceSetting] = field(default_factory=dict)  # by key; the last one wins
    groups: dict[str, SourceSetting] = field(default_factory=dict)  # config-group choices
    # keys the source sets to a value Hydra cannot read (RLC1304): not imported, and still compared,
    # so that a value the recipe gives such a key instead (the first model entry) is never silent
    unread: dict[str, SourceSetting] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    env_unknown: frozenset[str] = frozenset()  # names whose value only running the script would tell
    line: int | None = None  # where the launch command starts
    diagnostics: list[Diagnostic] = field(default_factory=list)


Outputs = Callable[[str], str | None]


def read_source(
    path: Path | None,
    command: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    outputs: Outputs | None = None,
    groups: Sequence[str] = (),
) -> SourceRun:
    """Read the source `rlcat import` was given: a file (a launch script or an `overrides.yaml`), or
    `command`, the words after `--`. `env` is the caller's environment (`--env`), `outputs` what a
    command substitution would print (tests), `groups` the config groups of the target release
    (`model_engine`: an override of one is a group choice, not a key). Raises RlcatError (exit 2)
    when there is nothing to import."""
    if path is None:
        text = shlex.join(command)
        reading = read_script_text(text, file="<command line>", env=env, outputs=outputs)
        return _from_reading(reading, "command", groups)
    shown = str(path)
    # the file named, never one a link leads to outside its folder: the walk's rule (rlcat lint)
    outside = link_out(path, os.path.realpath(os.path.dirname(os.path.abspath(path))), shown)
    if outside is not None:
        raise RlcatError([outside])
    if path.suffix in (".yaml", ".yml"):
        return _from_overrides_yaml(path, shown, groups)
    return _from_reading(read_script(path, env=env, outputs=outputs, name=shown), "script", groups)


def _from_reading(reading: ScriptReading, kind: SourceKind, groups: Sequence[str]) -> SourceRun:
    problems = [d for d in reading.diagnostics if d.severity >= Severity.ERROR and d.code != "RLC1101"]
    if any(d.code in UNREADABLE_FILES for d in problems):  # not read: whether it launches is not known
        raise RlcatError(problems)
    if not reading.launches:
        raise RlcatError(
            [
                *problems,
                diag(
                    "RLC1301",
                    "nothing to import: no command here launches verl",
                    file=reading.file,
                    line=1,
                    hint="give the script that starts the training run, or the command after `--`",
                ),
            ]
        )
    launch = reading.launches[0]
    run = SourceRun(reading.file, kind, entry_module(launch), _config_name(launch), line=launch.line)
    seen: set[tuple[object, ...]] = set()
    for d in reading.diagnostics:  # a finding both branches of a condition make is said once
        if d.code != "RLC1104" and (d.code, d.message, d.line, d.col) not in seen:
            seen.add((d.code, d.message, d.line, d.col))
            run.diagnostics.append(d)
    for name, line in reading.unset_reads:  # read as unset, which only the caller's environment decides
        run.diagnostics.append(
            diag(
                "RLC1102",
                f"${name} is neither set by the script nor given with --env: read as unset (empty), "
                "as if the script ran where it is not set",
                file=reading.file,
                line=line,
                hint=f"give the value the run had with --env {name}=VALUE",
            )
        )
    if len(reading.launches) > 1:
        others = ", ".join(f"line {other.line}" for other in reading.launches[1:])
        assumed = "; ".join(str(a) for a in launch.assumptions) or "the first launch in the script"
        run.diagnostics.append(
            diag(
                "RLC1302",
                f"the script launches verl more than once ({others} too); importing the launch at "
                f"line {launch.line} ({assumed})",
                severity=Severity.WARNING,
                file=reading.file,
                line=launch.line,
                hint="pass --env NAME=VALUE for the variables the script branches on to pick another",
            )
        )
    for override in launch.overrides:
        _add(
            run,
            override.text,
            override.line,
            override.col,
            known=override.known,
            unknown=override.unknown,
            groups=groups,
        )
    run.env = dict(launch.env)
    run.env_unknown = frozenset(launch.env_unknown)
    return run


def _config_name(launch: Launch) -> str | None:
    return launch.config_name or ENTRY_CONFIGS.get(entry_module(launch))


def _from_overrides_yaml(path: Path, shown: str, groups: Sequence[str]) -> SourceRun:
    """Hydra's `.hydra/overrides.yaml`: a YAML list of the override strings the run was given. The
    entry config is read from `hydra.yaml` beside it when it is there (hydra.job.config_name).

    Read as every YAML file rlcat reads (read.document): what aliases expand to is bounded (RLC007 at
    the alias), and each distinct override is parsed once however often aliases repeat it (Hydra
    writes none; a file with thousands of them took half a minute)."""
    text = read_text(path, shown)
    root, lines = compose_yaml(text, shown)
    builder = Builder(shown, text, lines)
    items = builder.build(root, (), 0) if root is not None else None
    if builder.errors:
        raise RlcatError(builder.errors)
    if not isinstance(items, list) or not all(type(item) is str for item in items):
        raise RlcatError(
            [
                diag(
                    "RLC1301",
                    "not a Hydra overrides.yaml: expected a list of override strings (key=value)",
                    file=shown,
                    line=1,
                    hint="give the overrides.yaml of a run's .hydra/ folder, a launch script, or the "
                    "command after `--`",
                )
            ]
        )
    config_name = _hydra_config_name(path.parent / "hydra.yaml")
    entrypoint = next((e for e, c in ENTRY_CONFIGS.items() if c == config_name), None)
    run = SourceRun(shown, "overrides", entrypoint, config_name, line=1)
    values: dict[str, Any] = {}
    for index, item in enumerate(items):
        line, col = builder.positions.get((index,), (None, None))
        _add(run, item, line, col, known=True, groups=groups, values=values)
    return run


def _hydra_config_name(path: Path) -> str | None:
    """`hydra.job.config_name` of the hydra.yaml beside overrides.yaml, if it is there and says."""
    try:
        data = yaml.safe_load(read_text(path, str(path)))
    except (RlcatError, yaml.YAMLError):
        return None
    job = data.get("hydra", {}).get("job", {}) if isinstance(data, dict) else {}
    name = job.get("config_name") if isinstance(job, dict) else None
    return name if isinstance(name, str) else None


def _add(
    run: SourceRun,
    text: str,
    line: int | None,
    col: int | None,
    *,
    known: bool,
    groups: Sequence[str],
    unknown: tuple[str, ...] = (),
    values: dict[str, Any] | None = None,
) -> None:
    """Add one override to `run`; `values` keeps each override's value by its text, so that one
    repeated (by YAML aliases) is parsed once."""
    prefix = next((p for p in _PREFIXES if text.startswith(p)), "")
    key, sep, raw = text[len(prefix) :].partition("=")
    where = {"file": run.file, "line": line, "col": col}
    if not sep and prefix != "~":
        run.diagnostics.append(
            diag(
                "RLC1304",
                f"'{text}' is not an override (key=value); not imported",
                key=key,
                hint="Hydra reads key=value, +key=value, ++key=value or ~key",
                **where,
            )
        )
        return
    value: Any = None
    if sep and values is not None and text in values:
        value = values[text]
    elif sep:
        try:
            value = parse_hydra_value(raw)
            if values is not None:
                values[text] = value
        except HydraValueError as exc:
            if known:
                run.diagnostics.append(
                    diag(
                        "RLC1304",
                        f"Hydra cannot read the value of '{text}': {exc}; not imported",
                        key=key,
                        hint="quote a value that holds commas, spaces or brackets: key='a,b'",
                        **where,
                    )
                )
                run.settings.pop(key, None)  # Hydra keeps the last: an earlier readable value is gone
                run.unread[key] = SourceSetting(key, prefix, None, text, line, col, known)
                return
            value = raw  # only running the script would tell it (`$(date)`): kept as written
    setting = SourceSetting(key, prefix, value, text, line, col, known, unknown)
    table = run.groups if "." not in key and key.split("@", 1)[0] in groups and not prefix else run.settings
    run.unread.pop(key, None)
    earlier = table.pop(key, None)
    if earlier is not None:
        run.diagnostics.append(
            diag(
                "RLC1113",
                f"'{key}' is set twice ({earlier.where()} and here): Hydra keeps the last, and so does "
                "the import",
                key=key,
                **where,
            )
        )
    table[key] = setting
