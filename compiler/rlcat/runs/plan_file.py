"""A run folder's plan.json: written by `rlcat compile --run-dir DIR`, read by `rlcat runs`.

It is the `compile --format json --explain` data (entrypoint, config, overrides, env, the origin of
each, the fingerprint) plus what a result needs and the plan alone does not say: the recipe's mode,
engine and backend, its GPU count, the group choices, and the command that makes the plan again.
Read back, it gives the plan in the shape `survey.recipes.diff` compares, so `runs compare` shows
the difference between two runs exactly as `rlcat diff` shows it between two compiles.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlcat import __version__
from rlcat.catalog import display_path
from rlcat.compile.assemble import METRICS_FILE, Compiled
from rlcat.diagnostics import Diagnostic, RlcatError, Severity, diag, json_text
from rlcat.emit.explain import origins_data
from rlcat.emit.formats import override_key, plan_data, plan_fingerprint
from rlcat.files import read_text, write_whole
from rlcat.model.plan import Layer, Origin, Plan, Setting
from rlcat.verl.check import Override

PLAN_FILE = "plan.json"
FORMAT = "rlcat-run/1"
MAX_PLAN_BYTES = 16 * 1024 * 1024


def plan_file_data(c: Compiled, command: list[str]) -> dict[str, Any]:
    """What plan.json holds (module docstring)."""
    res = c.recipe.resources
    return {
        "format": FORMAT,
        "rlcat": __version__,
        "command": command,
        **plan_data(c),
        "mode": c.recipe.mode,
        "engine": c.recipe.engine,
        "backend": c.recipe.backend,
        "gpus": res.nodes * res.gpus_per_node,
        "nodes": res.nodes,
        "group_choices": dict(c.plan.group_choices),
        "origins": origins_data(c),
        "metrics_file": METRICS_FILE,
    }


def write_plan_file(run_dir: Path, c: Compiled, command: list[str]) -> list[Diagnostic]:
    """Write DIR/plan.json (the folder is made if need be). A plan.json of another plan is not
    replaced (RLC1206: one folder per run); a metrics file already there is a warning, since verl's
    file logger empties it when the run starts (it opens it with "wb")."""
    path = run_dir / PLAN_FILE
    text = json_text(plan_file_data(c, command))
    shown = display_path(path)
    found: list[Diagnostic] = []
    try:
        regular = path.is_file() and not path.is_symlink()
        current = read_text(path, shown, limit=MAX_PLAN_BYTES) if regular else None
    except RlcatError:
        current = ""
    if current is not None and current != text:
        raise RlcatError(
            [
                diag(
                    "RLC1206",
                    f"{shown} holds the plan of another run; not replaced",
                    file=shown,
                    hint="give each run a folder of its own: --run-dir runs/NAME",
                )
            ]
        )
    if os.path.lexists(run_dir / METRICS_FILE):
        found.append(
            diag(
                "RLC1206",
                f"{display_path(run_dir / METRICS_FILE)} exists: verl's file logger empties it when the "
                "run starts",
                severity=Severity.WARNING,
                file=display_path(run_dir / METRICS_FILE),
                hint="record it first (rlcat runs add), or use a new --run-dir",
            )
        )
    write_whole(path, text, shown=display_path(path))
    return found


@dataclass(frozen=True)
class Text:
    """A value as the run's plan.json wrote it (Hydra text): compared and shown as it is."""

    text: str

    def __repr__(self) -> str:
        return self.text


@dataclass
class RecordedPlan:
    """A run's plan read back: the data as written, and the plan as survey.diff compares it."""

    folder: Path
    data: dict[str, Any]
    plan: Plan
    overrides: list[Override] = field(default_factory=list)
    env: list[Setting] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        return str(self.data["fingerprint"])

    @property
    def override_texts(self) -> list[str]:
        return list(self.data["overrides"])

    @property
    def command(self) -> list[str]:
        """The `rlcat compile` command that wrote the plan (empty when plan.json holds none)."""
        words = self.data.get("command")
        return list(words) if isinstance(words, list) and all(isinstance(w, str) for w in words) else []

    def arguments(self, option: str) -> list[str]:
        """The values `option` (`--set`, `--override`) took in the command that wrote the plan."""
        words = self.command
        return [words[i + 1] for i in range(len(words) - 1) if words[i] == option]


_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "recipe": str,
    "platform": str,
    "verl_version": str,
    "verl_index": str,
    "entrypoint": str,
    "config_name": str,
    "overrides": list,
    "env": dict,
    "fingerprint": str,
    "mode": str,
    "gpus": int,
}


def read_plan_file(run_dir: Path) -> RecordedPlan:
    """The plan of the run in `run_dir`; RLC1201 when there is none or it is not rlcat's plan.json.
    A fingerprint that does not match the plan it sits in (an edited file) is RLC1208."""
    path = run_dir / PLAN_FILE
    shown = display_path(path)
    if not os.path.isdir(run_dir):
        what = "not a folder" if os.path.lexists(run_dir) else "no such folder"
        raise RlcatError([diag("RLC1201", f"{display_path(run_dir)}: {what}", file=display_path(run_dir))])
    try:
        if path.is_symlink() or not os.path.lexists(path):
            raise FileNotFoundError
        data = json.loads(read_text(path, shown, limit=MAX_PLAN_BYTES), parse_constant=_refuse)
    except FileNotFoundError:
        raise RlcatError(
            [
                diag(
                    "RLC1201",
                    f"no {PLAN_FILE} in {display_path(run_dir)}",
                    file=shown,
                    hint="compile the run with `rlcat compile RECIPE --run-dir DIR`, which writes it",
                )
            ]
        ) from None
    except json.JSONDecodeError as exc:  # at the line and column the JSON reader stopped
        raise RlcatError(
            [
                diag(
                    "RLC1201",
                    f"not a readable plan: not JSON ({exc.msg})",
                    file=shown,
                    line=exc.lineno,
                    col=exc.colno,
                )
            ]
        ) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RlcatError([diag("RLC1201", f"not a readable plan: {exc}", file=shown)]) from None
    problems = _shape_problems(data)
    if problems:
        raise RlcatError(
            [
                diag(
                    "RLC1201",
                    f"not a plan rlcat wrote: {problem}",
                    file=shown,
                    hint="compile the run with `rlcat compile RECIPE --run-dir DIR`, which writes it",
                )
                for problem in problems
            ]
        )
    recorded = RecordedPlan(run_dir, data, _plan(data))
    origins = _mapping(data.get("origins"))
    override_origins, env_origins = _mapping(origins.get("overrides")), _mapping(origins.get("env"))
    groups = recorded.plan.group_choices
    for text in data["overrides"]:
        key = override_key(text)
        if key in groups:
            continue
        prefix = text[: len(text) - len(text.lstrip("+"))]
        value = text.partition("=")[2]
        origin = _origin(override_origins.get(key))
        recorded.overrides.append(Override(prefix, key, Setting(key, Text(value), origin, prefix=prefix)))
    for key, value in data["env"].items():
        recorded.env.append(Setting(key, str(value), _origin(env_origins.get(key))))
    if plan_fingerprint(data) != data["fingerprint"]:
        recorded.diagnostics.append(
            diag(
                "RLC1208",
                "the plan's fingerprint does not match its overrides and env: the file was edited "
                "after rlcat wrote it; the fingerprint of what it holds is recorded",
                file=shown,
                key="fingerprint",
            )
        )
        data["fingerprint"] = plan_fingerprint(data)
    return recorded


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _refuse(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _shape_problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["not a JSON object"]
    problems = []
    for name, kind in _REQUIRED.items():
        value = data.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            problems.append(f"`{name}` is missing or not a {getattr(kind, '__name__', kind)}")
    if not problems:
        if not all(isinstance(t, str) and "=" in t for t in data["overrides"]):
            problems.append("`overrides` holds something other than key=value texts")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in data["env"].items()):
            problems.append("`env` holds something other than text")
        groups = data.get("group_choices", {})
        if not isinstance(groups, dict) or not all(isinstance(v, str) for v in groups.values()):
            problems.append("`group_choices` is not a mapping of names")
    return problems


def _plan(data: dict[str, Any]) -> Plan:
    return Plan(
        data["recipe"],
        data["platform"],
        data["entrypoint"],
        data["config_name"],
        data["verl_version"],
        data["verl_index"],
        dict(data.get("group_choices") or {}),
    )


def _origin(data: Any) -> Origin:
    """An origin as origins_data wrote it; anything else is shown as what it is: unknown."""
    if not isinstance(data, dict):
        return Origin(Layer.RECIPE, "unknown (not in the run's plan.json)")
    try:
        layer = Layer[str(data.get("layer", "")).upper().replace("-", "_")]
    except KeyError:
        layer = Layer.RECIPE
    line = data.get("line")
    return Origin(
        layer,
        str(data.get("label", "")),
        data["file"] if isinstance(data.get("file"), str) else None,
        line if isinstance(line, int) and not isinstance(line, bool) else None,
        reason=data["reason"] if isinstance(data.get("reason"), str) else None,
    )
