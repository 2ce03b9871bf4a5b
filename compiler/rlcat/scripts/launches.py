"""Which recorded commands launch verl, and what each launch gives verl.

A launch is a Python interpreter (`python`, `python3.11`, a path to one) running a module or a
script of verl (`verl.…`) or verl-recipe (`recipe.…`), found behind any wrappers: `uv run …`,
`ray job submit … --`, `srun`, `nohup`, `env VAR=x`, `torchrun …`, an array holding the launcher
(`"${LAUNCH[@]}"`). The words after the entrypoint are split into Hydra's own flags
(`--config-path`, `--config-name`, …) and the overrides, which are kept exactly as verl receives
them, each with the line and column where the script wrote it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from rlcat.diagnostics import Diagnostic, Severity, diag
from rlcat.scripts.cuts import find_cut
from rlcat.scripts.evaluate import CommandRun
from rlcat.scripts.parse import ParsedScript
from rlcat.scripts.records import Assumption, Cut, Launch, Override
from rlcat.scripts.state import Field, Text

_PYTHON = re.compile(r"(?:python|pypy)(?:[0-9]+(?:\.[0-9]+)*)?\Z")
_PYTHON_FLAGS = set("bBdEhiIOPqsSuvVx")  # options without a value
_VERL_MODULE = re.compile(r"(?:verl|recipe)(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_VERL_SCRIPT = re.compile(r"(?:^|/)(?:verl|recipe)/(?:.*/)?[A-Za-z0-9_\-]+\.py\Z")
# Commands whose arguments are not run: `echo python -m verl…` prints, it launches nothing.
_NOT_LAUNCHERS = {"echo", "printf", "cat", "tee", "grep", "sed", "awk", "mkdir", "rm", "cp", "mv", "ls",
                  "git", "wget", "curl", "pip", "pip3", "test", "[", "export", "readonly", "local",
                  "declare", "cd", "sleep", "kill", "pkill", "ps", "hf", "huggingface-cli", "tar",
                  "du", "df", "touch", "chmod", "ln", "find", "xargs"}  # fmt: skip
_TORCHRUN_FLAGS = {"--standalone", "--no-python", "--no_python", "--run-path", "--run_path", "-m", "--module"}
_TORCH_LAUNCHERS = ("torch.distributed.run", "torch.distributed.launch")
# Hydra's command-line flags (hydra/_internal/utils.py, get_args_parser): with a value, or without.
_HYDRA_VALUE = {"--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd", "--cfg", "-c",
                "--package", "-p", "--experimental-rerun"}  # fmt: skip
_HYDRA_FLAG = {"--multirun", "-m", "--resolve", "--help", "-h", "--hydra-help", "--version", "--run", "-r",
               "--shell-completion", "-sc"}  # fmt: skip
_HYDRA_INFO = {"all", "config", "defaults", "defaults-tree", "plugins", "searchpath"}
# The first word of a command that is the rest of a cut launch command, not a command of its own.
_OVERRIDE_SHAPED = re.compile(r"\+{0,2}[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-$]+)*=|~[A-Za-z_]|[+-]")


def launches(parsed: ParsedScript, runs: Sequence[CommandRun]) -> tuple[list[Launch], list[Diagnostic]]:
    """The verl launches among the commands, deduplicated over paths (a launch every path reaches
    the same way is reported once, with only the assumptions all of them made)."""
    found: dict[tuple[object, ...], Launch] = {}
    diagnostics: list[Diagnostic] = []
    for index, run in enumerate(runs):
        launch = _launch(run)
        if launch is None:
            continue
        cut = _cut(parsed, runs, index, run)
        if cut is not None:
            launch = _with_cut(launch, *cut)
        key = (run.start, launch.launcher, launch.entrypoint, launch.hydra_flags, launch.overrides,
               tuple(sorted(launch.env.items())), launch.cut)  # fmt: skip
        earlier = found.get(key)
        if earlier is not None:
            common = set(launch.assumptions)
            found[key] = _replace_assumptions(earlier, tuple(a for a in earlier.assumptions if a in common))
        else:
            found[key] = launch
    for launch in found.values():
        diagnostics.extend(_findings(parsed, launch))
    return list(found.values()), diagnostics


def _launch(run: CommandRun) -> Launch | None:
    words = [f.text for f in run.argv]
    if not words or (words[0].known and posixpath.basename(words[0].value) in _NOT_LAUNCHERS):
        return None
    for index, word in enumerate(words):
        if not word.known:
            continue
        name = posixpath.basename(word.value)
        if _PYTHON.match(name):
            return _python(run, index)
        if name == "torchrun":
            return _torchrun(run, index + 1, index + 1)
    return None


def _python(run: CommandRun, interpreter: int) -> Launch | None:
    words = [f.text.value for f in run.argv]
    position = interpreter + 1
    while position < len(words):
        word = words[position]
        if word == "-m" and position + 1 < len(words):
            module = words[position + 1]
            if module in _TORCH_LAUNCHERS:
                return _torchrun(run, position + 2, position)
            return _entry(run, position, position + 1, module, "module")
        if word.startswith("-m") and len(word) > 2:
            return _entry(run, position, position, word[2:], "module")
        if word in ("-W", "-X"):
            position += 2
            continue
        if word[:2] in ("-W", "-X") or (
            word.startswith("-") and len(word) > 1 and set(word[1:]) <= _PYTHON_FLAGS
        ):
            position += 1
            continue
        if word.startswith("-"):
            return None  # -c code, - (stdin), --version: not a launch
        return _entry(run, position, position, word, "script")
    return None


def _torchrun(run: CommandRun, position: int, launcher_end: int) -> Launch | None:
    """torchrun's options, then the module (`-m`) or script it starts."""
    words = [f.text.value for f in run.argv]
    module = False
    while position < len(words):
        word = words[position]
        if word in ("-m", "--module"):
            module = True
            position += 1
        elif word in _TORCHRUN_FLAGS or (word.startswith("-") and "=" in word):
            position += 1
        elif word.startswith("-"):
            position += 2
        else:
            return _entry(run, position, position, word, "module" if module else "script")
    return None


def _entry(run: CommandRun, launcher_end: int, entry: int, name: str, kind: str) -> Launch | None:
    """The launch of `name` (argv[entry]); the launcher is argv before `launcher_end`."""
    if kind == "module" and not _VERL_MODULE.match(name):
        return None
    if kind == "script" and not _VERL_SCRIPT.search(name):
        return None
    flags, overrides = _hydra(run.argv[entry + 1 :])
    launcher = [f.text.value for f in run.argv[:launcher_end]]
    env = dict(run.env)
    unset = set(run.env_unset)
    for variable, value in _env_wrapper(launcher).items():
        if value is None:
            env.pop(variable, None)
            unset.add(variable)
        else:
            env[variable] = Text(value)
    for variable, text in run.prefix:
        env[variable] = text
        unset.discard(variable)
    unknown: list[str] = []
    for text in [*(f.text for f in run.argv), *env.values()]:
        unknown.extend(u for u in text.unknown if u not in unknown)
    line, col = (run.argv[0].line, run.argv[0].col) if run.argv else (0, 0)
    return Launch(
        line=line,
        col=col,
        launcher=tuple(launcher),
        entrypoint=name,
        entry_kind="module" if kind == "module" else "script",
        hydra_flags=tuple(flags),
        overrides=tuple(overrides),
        env={variable: text.value for variable, text in env.items()},
        env_unset=tuple(sorted(unset)),
        env_unknown=tuple(sorted(variable for variable, text in env.items() if not text.known)),
        assumptions=tuple(Assumption(a.line, a.condition, a.holds) for a in run.assumptions),
        unknown=tuple(unknown),
    )


def _hydra(fields: Sequence[Field]) -> tuple[list[tuple[str, str | None]], list[Override]]:
    flags: list[tuple[str, str | None]] = []
    overrides: list[Override] = []
    position = 0
    while position < len(fields):
        text = fields[position].text.value
        name, equals, value = text.partition("=")
        if name in _HYDRA_VALUE and text.startswith("-"):
            if equals:
                flags.append((name, value))
                position += 1
            else:
                following = fields[position + 1].text.value if position + 1 < len(fields) else None
                flags.append((name, following))
                position += 2
            continue
        if text in _HYDRA_FLAG:
            flags.append((text, None))
            position += 1
            continue
        if text in ("--info", "-i"):
            following = fields[position + 1].text.value if position + 1 < len(fields) else None
            taken = following in _HYDRA_INFO
            flags.append((text, following if taken else None))
            position += 2 if taken else 1
            continue
        overrides.append(_override(fields[position]))
        position += 1
    return flags, overrides


def _override(field: Field) -> Override:
    return Override(field.text.value, field.line, field.col, field.text.known, field.text.unknown)


def _env_wrapper(launcher: list[str]) -> dict[str, str | None]:
    """`env [-i] [-u NAME] NAME=value … cmd` among the launcher's words (None: removed)."""
    out: dict[str, str | None] = {}
    for start, word in enumerate(launcher):
        if posixpath.basename(word) != "env":
            continue
        position = start + 1
        while position < len(launcher):
            option = launcher[position]
            if option in ("-u", "--unset") and position + 1 < len(launcher):
                out[launcher[position + 1]] = None
                position += 2
            elif option.startswith("-"):
                position += 1
            elif re.match(r"[A-Za-z_][A-Za-z0-9_]*=", option):
                name, _, value = option.partition("=")
                out[name] = value
                position += 1
            else:
                break
    return out


def _cut(
    parsed: ParsedScript, runs: Sequence[CommandRun], index: int, run: CommandRun
) -> tuple[Cut, Override | None] | None:
    """The cut at the end of a launch, with the words of the separate command(s) it leaves; and
    the extra word bash passes for an escaped blank at the end, if any."""
    found = find_cut(parsed, run.end)
    if found is None:
        return None
    resume = found.resume
    lost: list[Override] = []
    resumes = parsed.position(resume)[0] if resume is not None else None
    position = index
    while resume is not None:
        tail_index = next(
            (
                i
                for i in range(position + 1, len(runs))
                if runs[i].start == resume and runs[i].world == run.world
            ),
            None,
        )
        if tail_index is None:
            break
        tail = runs[tail_index]
        words = [*tail.prefix_words, *tail.argv]
        if not words or not _OVERRIDE_SHAPED.match(words[0].text.value):
            break  # the next command is a command of its own: nothing of the launch is lost
        lost.extend(_override(f) for f in words)
        following = find_cut(parsed, tail.end)
        resume = following.resume if following else None
        position = tail_index
    cut = Cut(line=found.line, col=found.col, reason=found.reason, resumes=resumes, lost=tuple(lost))
    extra = Override(found.extra, found.line, found.col) if found.extra is not None else None
    return cut, extra


def _with_cut(launch: Launch, cut: Cut, extra: Override | None) -> Launch:
    overrides = launch.overrides
    if extra is not None:  # `\ ` at the end: bash passes the escaped blank as one more word
        overrides = (*overrides, extra)
    return Launch(**{**launch.__dict__, "cut": cut, "overrides": overrides})


def _replace_assumptions(launch: Launch, assumptions: tuple[Assumption, ...]) -> Launch:
    return Launch(**{**launch.__dict__, "assumptions": assumptions})


def _findings(parsed: ParsedScript, launch: Launch) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    file = parsed.file
    if launch.cut is not None:
        cut = launch.cut
        where = {
            "blank line": "a blank line",
            "comment": "a comment line",
            "trailing whitespace": "whitespace",
        }
        lost = len(cut.lost)
        if lost:
            count = (
                f"the {lost} overrides from line {cut.resumes} on never reach"
                if lost > 1
                else (f"the override on line {cut.resumes} never reaches")
            )
            message = (
                f"the `\\` on line {cut.line} is followed by {where[cut.reason]}: the launch command ends "
                f"there, and {count} verl (bash runs the rest as a separate command)"
            )
        else:
            message = (
                f"the `\\` on line {cut.line} is followed by {where[cut.reason]}: "
                "the launch command ends there"
            )
        out.append(
            diag(
                "RLC1101",
                message,
                file=file,
                line=cut.line,
                col=cut.col,
                hint="remove the blank or comment line inside the command, and any blank after a `\\`",
                severity=Severity.ERROR if lost else Severity.WARNING,
            )
        )
    for override in launch.overrides:
        if not override.known:
            out.append(
                diag(
                    "RLC1102",
                    f"override {override.text!r} is only known when the script runs: shown as written",
                    file=file,
                    line=override.line,
                    col=override.col,
                    key=override.key or None,
                    hint="give the value with --env NAME=VALUE, or write it in the script",
                )
            )
    return out
