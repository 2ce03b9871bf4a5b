"""Provenance for users: `rlcat explain RECIPE KEY` and `rlcat compile --explain`."""

from __future__ import annotations

from typing import Any

from rlcat.diagnostics import Diagnostic, RlcatError, diag, printable, suggestion_hint
from rlcat.emit.formats import check_one_line_each, override_text
from rlcat.emit.hydra_value import render
from rlcat.pipeline.assemble import Compiled
from rlcat.pipeline.plan import REMOVED, History
from rlcat.verl.index import KeyIndex, load_index


def _value(value: Any) -> str:
    return "<removed>" if value is REMOVED else render(value)


def _index(c: Compiled) -> KeyIndex:
    group = tuple(f"{g}={o}" for g, o in c.plan.group_choices.items())
    return load_index(c.profile.verl_index, c.plan.config_name, group)


def verl_default(c: Compiled, key: str) -> tuple[bool, Any]:
    index = _index(c)
    return (True, index.default(key)) if index.has(key) else (False, None)


def explain_key(c: Compiled, key: str) -> str:
    """The final value of a verl key (or env var) and every layer that set it, in order. A key that
    neither the plan nor the release's key index has is bad input (RLC401), with close names."""
    history: History | None = c.plan.overrides.get(key)
    is_env = history is None and key in c.plan.env
    if is_env:
        history = c.plan.env[key]
    lines = []
    has_default, default = (False, None) if is_env else verl_default(c, key)
    final = "unset" if history is None or history.removed else _value(history.final.value)
    if history is None and has_default:
        final = f"{_value(default)} (verl's default; rlcat does not set it)"
    lines.append(f"{printable(key)} = {printable(final)}")
    lines.append(
        f"  {c.plan.recipe} on {c.plan.platform}: verl {printable(c.plan.verl_version)}, {c.plan.config_name}"
    )
    rows: list[tuple[str, str, str]] = []
    if has_default:
        rows.append(("verl-default", _value(default), f"verl {c.profile.verl_index} {c.plan.config_name}"))
    for s in history.entries if history else []:
        reason = f" — {s.origin.reason}" if s.origin.reason else ""
        rows.append((str(s.origin.layer), printable(_value(s.value)), printable(s.origin.where() + reason)))
    if not rows:
        raise RlcatError([_unknown_key(c, key)])
    w1 = max(len(r[0]) for r in rows)
    w2 = min(max(len(r[1]) for r in rows), 40)
    lines += [f"  {a:<{w1}}  {b:<{w2}}  {d}" for a, b, d in rows]
    return "\n".join(lines) + "\n"


def _unknown_key(c: Compiled, key: str) -> Diagnostic:
    known = [*c.plan.overrides, *c.plan.env, *_index(c).keys]
    return diag(
        "RLC401",
        f"neither rlcat nor verl {c.profile.verl_index} ({c.plan.config_name}) has this key",
        argument=key,
        key=key,
        hint=suggestion_hint(key, known)
        or "explain takes a verl key (dotted) or an environment variable of the plan; "
        f"`rlcat compile {c.plan.recipe} --platform {c.plan.platform} --explain` lists what rlcat sets",
    )


def annotated_overrides(c: Compiled) -> str:
    """Overrides one per line, each followed by where its value came from."""
    check_one_line_each(c, env=True)
    rows = [(f"{g}={o}", "mode: config group of the entry config") for g, o in c.plan.group_choices.items()]
    rows += [(override_text(o), f"{o.setting.origin.layer}: {o.setting.origin.where()}") for o in c.overrides]
    rows += [(f"{s.key}={s.value}", f"env {s.origin.layer}: {s.origin.where()}") for s in c.env]
    width = min(max(len(t) for t, _ in rows), 100)
    return "".join(f"{text:<{width}}  # {printable(why)}\n" for text, why in rows)


def origins_data(c: Compiled) -> dict[str, Any]:
    """Where every override and env var came from, as JSON data (`compile --explain --format json`)."""
    return {
        "overrides": {o.key: o.setting.origin.to_dict() for o in c.overrides},
        "env": {s.key: s.origin.to_dict() for s in c.env},
    }
