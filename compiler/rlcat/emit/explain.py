"""Provenance for users: `rlcat explain RECIPE NAME` and `rlcat compile --explain`.

`explain` takes four kinds of name, looked up in this order:

- a verl key the plan sets or the release's key index has: its final value and every layer that set it;
- an environment variable of the plan: the same, every layer included (a variable the recipe and the
  platform profile both set shows both);
- a recipe field (`batch.mini_batch_size`, `resources`, `model`): the verl keys and variables it
  sets in this plan, each with its history;
- a subtree of verl's config (`actor_rollout_ref.actor.fsdp_config`): the keys the plan sets below
  it, each with its history, and the ones it leaves at verl's defaults.

Anything else is bad input (RLC401, exit 2) with the close names of all four kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rlcat.catalog import shown_file
from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Diagnostic, RlcatError, diag, json_text, printable, suggestion_hint
from rlcat.emit.formats import check_one_line_each, override_text
from rlcat.model.fields import is_recipe_field, recipe_fields
from rlcat.model.plan import REMOVED, History, Layer, Origin
from rlcat.syntax.hydra_value import render
from rlcat.verl.index import KeyIndex, load_index

Kind = Literal["key", "env", "field", "subtree"]
# a subtree's keys at verl's defaults, listed in text (JSON lists them all)
UNSET_SHOWN = 12


@dataclass(frozen=True)
class KeyStory:
    """One key or variable of an explanation: its history in the plan and verl's default."""

    name: str
    env: bool
    history: History | None
    default: tuple[bool, Any]  # (verl's index has the key, its default there)
    left_out: bool  # the plan sets it but this release lacks it: not emitted (RLC403)


@dataclass(frozen=True)
class Explanation:
    """What `rlcat explain` found for one name, before it is written as text or JSON."""

    name: str
    kind: Kind
    compiled: Compiled
    stories: list[KeyStory]
    # a subtree's keys the plan does not set, with verl's default for each
    unset: list[tuple[str, Any]] = field(default_factory=list)
    also: str | None = None  # the name is also a verl subtree, read as a recipe field


def _value(value: Any, env: bool = False) -> str:
    """A value as verl's command line gets it; an environment variable's as the shell exports it."""
    if value is REMOVED:
        return "<removed>"
    return str(value) if env else render(value)


def _default(value: Any) -> str:
    """verl's default as its YAML writes it: `${oc.select:...}` is verl's own live interpolation,
    shown as such, not as the escaped text rlcat would write for a recipe value."""
    return value if isinstance(value, str) else render(value)


def _index(c: Compiled) -> KeyIndex:
    group = tuple(f"{g}={o}" for g, o in c.plan.group_choices.items())
    return load_index(c.profile.verl_index, c.plan.config_name, group)


def verl_default(c: Compiled, key: str) -> tuple[bool, Any]:
    index = _index(c)
    return (True, index.default(key)) if index.has(key) else (False, None)


# --- recipe fields ---------------------------------------------------------------------------------


def set_by_field(origin: Origin, name: str) -> bool:
    """Did the recipe field `name` (or a field below it) set this value?"""
    return origin.field is not None and (origin.field == name or origin.field.startswith(name + "."))


def field_keys(c: Compiled, name: str) -> list[tuple[str, bool]]:
    """(key, is_env) for every verl key and variable the field `name` set in this plan, in plan order."""
    found = [
        (k, False)
        for k, h in c.plan.overrides.items()
        if any(set_by_field(s.origin, name) for s in h.entries)
    ]
    return found + [
        (k, True) for k, h in c.plan.env.items() if any(set_by_field(s.origin, name) for s in h.entries)
    ]


# --- what a name is ----------------------------------------------------------------------------------


def explain(c: Compiled, name: str) -> Explanation:
    """Find what `name` is in this plan (a key, a variable, a recipe field, a verl subtree) and collect
    its story; raise RLC401 (bad input) when it is none of them."""
    index = _index(c)
    dropped = {s.key for s in c.dropped}

    def story(key: str, env: bool) -> KeyStory:
        table = c.plan.env if env else c.plan.overrides
        default = (False, None) if env or not index.has(key) else (True, index.default(key))
        history = table.get(key)
        left_out = key in dropped and history is not None and not history.removed
        return KeyStory(key, env, history, default, left_out)

    if name in c.plan.overrides or index.has(name):
        return Explanation(name, "key", c, [story(name, False)])
    if name in c.plan.env:
        return Explanation(name, "env", c, [story(name, True)])
    prefix = name.rstrip(".") + "."
    below = [k for k in c.plan.overrides if k.startswith(prefix)]
    unset = [
        (k, index.default(k))
        for k in sorted(index.keys)
        if k.startswith(prefix) and k not in c.plan.overrides
    ]
    subtree = bool(below or unset)
    if is_recipe_field(name):
        also = name if subtree else None
        return Explanation(name, "field", c, [story(k, env) for k, env in field_keys(c, name)], also=also)
    if subtree:
        return Explanation(name, "subtree", c, [story(k, False) for k in below], unset)
    raise RlcatError([_unknown(c, index, name)])


def _unknown(c: Compiled, index: KeyIndex, name: str) -> Diagnostic:
    subtrees = {key[:at] for key in index.keys for at, char in enumerate(key) if char == "."}
    known = [*c.plan.overrides, *c.plan.env, *index.keys, *subtrees, *recipe_fields()[0]]
    return diag(
        "RLC401",
        f"not a key of verl {c.profile.verl_index} ({c.plan.config_name}), an environment variable of "
        "the plan or a recipe field",
        argument=name,
        key=name,
        hint=suggestion_hint(name, known)
        or "explain takes a verl key or a subtree of verl's config (dotted), an environment variable "
        f"or a recipe field; `rlcat compile {c.plan.recipe} --platform {c.plan.platform} --explain` "
        "lists what rlcat sets",
    )


# --- text ------------------------------------------------------------------------------------------


def explain_key(c: Compiled, name: str) -> str:
    """`rlcat explain` as text."""
    return explain_text(explain(c, name))


def explain_text(e: Explanation) -> str:
    c = e.compiled
    release = (
        f"  {c.plan.recipe} on {c.plan.platform}: verl {printable(c.plan.verl_version)}, {c.plan.config_name}"
    )
    shown = printable(e.name)
    if e.kind in ("key", "env"):
        head, rest = _story_lines(c, e.stories[0])
        return "\n".join([head, release, *rest]) + "\n"
    if e.kind == "field":
        envs = sum(s.env for s in e.stories)
        count = _count(len(e.stories) - envs, "verl key", "verl keys")
        if envs:
            count += " and " + _count(envs, "environment variable", "environment variables")
        lines = [f"{shown}: recipe field; sets {count} in this plan", release]
        if e.also:
            lines.append(
                f"  ({shown} is also a subtree of verl's config: `explain {shown}.` lists the keys under it)"
            )
        if not e.stories:
            lines.append(
                "  it sets nothing here: its value (or its default) leaves verl's defaults as they are"
            )
    else:
        set_count = _count(len(e.stories), "key", "keys")
        unset_count = _count(len(e.unset), "key", "keys")
        lines = [
            f"{shown.rstrip('.')}: subtree of verl's config; the plan sets {set_count}, "
            f"{unset_count} at verl's defaults",
            release,
        ]
    for s in e.stories:
        head, rest = _story_lines(c, s)
        lines += ["", head, *rest]
    if e.unset:
        lines += ["", f"at verl's defaults (the plan does not set them): {len(e.unset)}"]
        lines += [f"  {printable(k)} = {printable(_default(v))}" for k, v in e.unset[:UNSET_SHOWN]]
        if len(e.unset) > UNSET_SHOWN:
            lines.append(f"  … and {len(e.unset) - UNSET_SHOWN} more (--format json lists them all)")
    return "\n".join(lines) + "\n"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def shown_where(origin: Origin) -> str:
    """`Origin.where()` with its file as catalog.shown_file names it (`built-in recipes/x.yaml:17`)."""
    text = origin.where()
    if origin.file and origin.file in text:
        text = text.replace(origin.file, shown_file(origin.file), 1)
    return text


def _parents(c: Compiled, origin: Origin) -> list[tuple[Any, Origin]]:
    """The values parent recipes gave the recipe field that set this entry, which the recipe (or a
    nearer parent) replaced: parent first, each with its origin (Source.shadowed)."""
    if origin.layer != Layer.RECIPE or not origin.field:
        return []
    return c.shadowed.get(tuple(origin.field.split(".")), [])


def _story_lines(c: Compiled, s: KeyStory) -> tuple[str, list[str]]:
    """`key = value` and one line per layer that set it: layer, value, where."""
    history, (has_default, default) = s.history, s.default
    if history is None or history.removed:
        final = "unset"
    elif s.left_out:
        final = f"left out: verl {c.profile.verl_index} has no such key (RLC403)"
    else:
        final = _value(history.final.value, s.env)
    if history is None and has_default:
        final = f"{_default(default)} (verl's default; rlcat does not set it)"
    rows: list[tuple[str, str, str]] = []
    if has_default:
        rows.append(("verl-default", _default(default), f"verl {c.profile.verl_index} {c.plan.config_name}"))
    for entry in history.entries if history else []:
        reason = f" — {entry.origin.reason}" if entry.origin.reason else ""
        for value, parent in _parents(c, entry.origin):  # the parent recipes' layers it replaced
            rows.append((str(parent.layer), _value(value, s.env), shown_where(parent) + " — replaced below"))
        rows.append((str(entry.origin.layer), _value(entry.value, s.env), shown_where(entry.origin) + reason))
    w1 = max(len(r[0]) for r in rows)
    w2 = min(max(len(printable(r[1])) for r in rows), 40)
    lines = [f"  {a:<{w1}}  {printable(b):<{w2}}  {printable(d)}" for a, b, d in rows]
    return f"{printable(s.name)} = {printable(final)}", lines


# --- JSON ------------------------------------------------------------------------------------------


def explain_json(e: Explanation) -> str:
    """`rlcat explain --format json`: values as Hydra writes them (text), origins as data."""
    c = e.compiled
    data: dict[str, Any] = {
        "name": e.name,
        "kind": e.kind,
        "recipe": c.plan.recipe,
        "platform": c.plan.platform,
        "verl_version": c.plan.verl_version,
        "verl_index": c.plan.verl_index,
        "config_name": c.plan.config_name,
        "keys": [_story_data(c, s) for s in e.stories],
    }
    if e.kind == "subtree":
        data["unset"] = [{"key": k, "verl_default": _default(v)} for k, v in e.unset]
    return json_text(data)


def _story_data(c: Compiled, s: KeyStory) -> dict[str, Any]:
    history = s.history
    final = None if history is None or history.removed else _value(history.final.value, s.env)
    out: dict[str, Any] = {
        "key": s.name,
        "env": s.env,
        "value": final,
        "set_by_plan": final is not None,
        "left_out": s.left_out,
    }
    if s.default[0]:
        out["verl_default"] = _default(s.default[1])
    out["history"] = []
    for entry in history.entries if history else []:
        for value, parent in _parents(c, entry.origin):  # a parent recipe's value, replaced
            replaced = {"value": _value(value, s.env), "removed": False, **parent.to_dict()}
            out["history"].append({**replaced, "field": entry.origin.field, "replaced": True})
        out["history"].append(
            {
                "value": None if entry.value is REMOVED else _value(entry.value, s.env),
                "removed": entry.value is REMOVED,
                **entry.origin.to_dict(),
                "field": entry.origin.field,
            }
        )
    return out


# --- compile --explain -----------------------------------------------------------------------------


def annotated_overrides(c: Compiled) -> str:
    """Overrides one per line, each followed by where its value came from."""
    check_one_line_each(c, env=True)
    rows = [(f"{g}={o}", "mode: config group of the entry config") for g, o in c.plan.group_choices.items()]
    rows += [
        (override_text(o), f"{o.setting.origin.layer}: {shown_where(o.setting.origin)}") for o in c.overrides
    ]
    rows += [(f"{s.key}={s.value}", f"env {s.origin.layer}: {shown_where(s.origin)}") for s in c.env]
    width = min(max(len(t) for t, _ in rows), 100)
    return "".join(f"{text:<{width}}  # {printable(why)}\n" for text, why in rows)


def origins_data(c: Compiled) -> dict[str, Any]:
    """Where every override and env var came from, as JSON data (`compile --explain --format json`)."""
    return {
        "overrides": {o.key: o.setting.origin.to_dict() for o in c.overrides},
        "env": {s.key: s.origin.to_dict() for s in c.env},
    }
