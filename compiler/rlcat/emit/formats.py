"""Output formats: each turns a Compiled plan into text. The only stage that writes files is the CLI."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from rlcat import __version__
from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag, json_text, printable
from rlcat.syntax.bash import comment_line, shell_word
from rlcat.syntax.hydra_value import as_config_value, render
from rlcat.syntax.yaml_text import yaml_document
from rlcat.verl.check import Override


def override_text(o: Override) -> str:
    """`key=value` in Hydra's grammar, with the `++` prefix for a key inside an open dict."""
    return f"{o.prefix}{o.key}={render(o.setting.value)}"


def override_texts(c: Compiled) -> list[str]:
    """Group choices first (they pick the config tree), then every key override in plan order."""
    groups = [f"{g}={o}" for g, o in c.plan.group_choices.items()]
    return groups + [override_text(o) for o in c.overrides]


# Where str.splitlines() (and so most readers of "one item per line") breaks a line.
_LINE_BREAK = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_OTHER_FORMATS = (
    "use --format shell (bash quotes every character) or --format json (or, for a line break, --format yaml)"
)


def _words(c: Compiled, *, env: bool) -> list[tuple[str, str, Where]]:
    """(key, text, where the value was set) of every override, and with `env` every env var, as the
    launch passes them: `key=value` and the env value."""
    words: list[tuple[str, str, Where]] = [(g, f"{g}={o}", {}) for g, o in c.plan.group_choices.items()]
    words += [(o.key, override_text(o), o.setting.origin.position()) for o in c.overrides]
    if env:
        words += [(s.key, str(s.value), s.origin.position()) for s in c.env]
    return words


def check_one_line_each(c: Compiled, *, env: bool = False) -> None:
    """Raise RlcatError (RLC405) unless every override (and with `env` every env var) prints as one
    line that shows what it is: the overrides format and `compile --explain` print one per line, and
    a value's line break (Hydra keeps a raw one inside quotes) would make two; a control or bidi
    character would reach the terminal, and `##[` a CI log, as it is."""
    problems = []
    for key, text, where in _words(c, env=env):
        shown = printable(text)
        if shown == text:
            continue
        what = "a line break" if _LINE_BREAK.search(text) else "a control or invisible character"
        problems.append(
            diag(
                "RLC405",
                f"{shown} holds {what}, and this format prints one override per line as it is",
                key=key,
                hint=_OTHER_FORMATS,
                **where,
            )
        )
    if problems:
        raise RlcatError(problems)


def refuse_unwritable(c: Compiled, *, argv: bool) -> None:
    """Raise RlcatError (RLC405) for text no output can hold: a lone surrogate has no UTF-8 form;
    with `argv` (the text becomes the arguments and environment of a process) also a NUL, which ends
    a C string, and an env var name that is not a shell name."""
    problems: list[Diagnostic] = []
    for key, text, where in _words(c, env=True):
        reason = None
        if argv and "\0" in text:
            reason = "holds a NUL character, which no command line or environment can pass"
        elif any("\ud800" <= char <= "\udfff" for char in text):
            # Python's stand-in for a byte of a command-line argument that is not UTF-8
            reason = "holds a lone surrogate (a byte that is not UTF-8 text), which no output can hold"
        if reason:
            problems.append(diag("RLC405", f"{printable(text)} {reason}", key=key, **where))
    if argv:
        # model.base.EnvName allows only these; `export NAME=` has no way to quote a name
        problems += [
            diag(
                "RLC405", f"{printable(s.key)} is not a shell variable name", key=s.key, **s.origin.position()
            )
            for s in c.env
            if not (s.key.isascii() and s.key.isidentifier())
        ]
    if problems:
        raise RlcatError(problems)


def to_overrides(c: Compiled) -> str:
    """One override per line; refused (RLC405) when a value cannot be shown on one line as it is."""
    check_one_line_each(c)
    return "".join(line + "\n" for line in override_texts(c))


def plan_data(c: Compiled) -> dict[str, Any]:
    """The plan as JSON data (the `json` format; `--explain` adds the origins). Refused (RLC405) when
    a value holds text no output can hold."""
    refuse_unwritable(c, argv=False)
    data = {
        "recipe": c.plan.recipe,
        "platform": c.plan.platform,
        "verl_version": c.plan.verl_version,
        "verl_index": c.plan.verl_index,
        "entrypoint": c.plan.entrypoint,
        "config_name": c.plan.config_name,
        "overrides": override_texts(c),
        "env": c.env_vars,
        "left_out": [s.key for s in c.dropped],
    }
    return {**data, "fingerprint": plan_fingerprint(data)}


# Where a run's metrics go is no part of what it trains: two runs of one plan that log to different
# places (`compile --run-dir`, wandb or not) share a fingerprint.
UNFINGERPRINTED_KEYS = frozenset({"trainer.logger"})
UNFINGERPRINTED_ENV = frozenset({"VERL_FILE_LOGGER_PATH", "VERL_FILE_LOGGER_ROOT"})


def override_key(text: str) -> str:
    """The key of an override's text (`++a.b=1` → `a.b`); Hydra's key grammar has no `=`."""
    return text.lstrip("+").partition("=")[0]


def plan_fingerprint(data: Mapping[str, Any]) -> str:
    """`sha256:...` of what verl receives: the entrypoint, the config, the overrides as they are
    written (group choices included; sorted, as no two name one key) and the env, less where the
    metrics are logged. The same plan gives the same fingerprint on any machine: a run's result
    records it, and `rlcat runs add` recomputes it from the run's plan.json."""
    canonical = {
        "entrypoint": data["entrypoint"],
        "config_name": data["config_name"],
        "overrides": sorted(t for t in data["overrides"] if override_key(t) not in UNFINGERPRINTED_KEYS),
        "env": {k: v for k, v in sorted(data["env"].items()) if k not in UNFINGERPRINTED_ENV},
    }
    text = json.dumps(canonical, ensure_ascii=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def to_json(c: Compiled) -> str:
    return json_text(plan_data(c))


def to_yaml(c: Compiled) -> str:
    """The overrides as a config file, under a one-line comment that names the launch."""
    refuse_unwritable(c, argv=False)
    tree: dict[str, Any] = dict(c.plan.group_choices)
    for o in c.overrides:
        node = tree
        *parents, leaf = o.key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = as_config_value(o.setting.value)
    header = [
        f"{c.plan.recipe} on {c.plan.platform}: verl {c.plan.verl_version}, {c.plan.entrypoint} "
        f"--config-name={c.plan.config_name}"
    ]
    # a mapping cannot say how a key reaches verl's config: the keys that take Hydra's + or ++ (keys
    # added, or set inside an open dict) are listed above it, as the other formats write them
    prefixed = [f"  {o.prefix}{o.key}" for o in c.overrides if o.prefix]
    if prefixed:
        header += ["As command-line overrides, these keys take Hydra's prefix:", *prefixed]
    return yaml_document(tree, header=header)


def to_shell(c: Compiled) -> str:
    """A runnable launch script: exports, then one python command. Every word is quoted for bash
    (shell_word) and every comment is one line (comment_line): no text from a recipe, catalog entry
    or platform profile can run a command, start a line or reach a terminal unescaped. Text with a
    NUL is refused (RLC405): no process argument can hold it."""
    refuse_unwritable(c, argv=True)
    regenerate = c.regenerate or ["rlcat", "compile", c.plan.recipe, "--platform", c.plan.platform]
    regenerate = [*regenerate, "--format", "shell"]
    lines = [
        "#!/usr/bin/env bash",
        comment_line(
            f"{c.plan.recipe} on {c.plan.platform} (verl {c.plan.verl_version}),"
            f" generated by rlcat {__version__}."
        ),
        comment_line("Regenerate with: " + " ".join(shell_word(a) for a in regenerate)),
        "set -euo pipefail",
        "",
    ]
    for name, value in c.env_vars.items():
        lines.append(f"export {name}={shell_word(value)}")
    if c.env_vars:
        lines.append("")
    # Extra Hydra overrides given to the script are passed through ("$@"), after rlcat's.
    command = " ".join(
        shell_word(a) for a in ("python3", "-m", c.plan.entrypoint, f"--config-name={c.plan.config_name}")
    )
    args = [command] + [shell_word(o) for o in override_texts(c)] + ['"$@"']
    lines.append(" \\\n    ".join(args))
    return "\n".join(lines) + "\n"


FORMATS: dict[str, Callable[[Compiled], str]] = {
    "overrides": to_overrides,
    "shell": to_shell,
    "json": to_json,
    "yaml": to_yaml,
}
