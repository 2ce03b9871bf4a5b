"""A static reader of verl launch scripts: what a script would give verl, without running it.

    parse (tree-sitter-bash) → evaluate (paths through the script, commands recorded)
        → launches (verl entrypoints, Hydra flags, overrides, env, cuts) → ScriptReading

Nothing the script names is ever run or read: command substitutions are unknown values (the caller
may say what one prints, `outputs`), conditions nobody can decide without running are read both
ways, and every value keeps the line and column where the script wrote it.

    reading = read_script(Path("run_qwen3_8b.sh"), env={"MODEL_PATH": "/models/q"})
    for launch in reading.launches:
        launch.entrypoint, launch.config_name, [o.text for o in launch.overrides], launch.env
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rlcat.diagnostics import Diagnostic, diag
from rlcat.scripts.evaluate import Evaluator
from rlcat.scripts.launches import launches
from rlcat.scripts.parse import decode, parse, read_bytes
from rlcat.scripts.records import Assumption, Cut, Knob, Launch, Override, ScriptReading
from rlcat.scripts.words import MAX_WORK, TooMuchWork

__all__ = [
    "Assumption",
    "Cut",
    "Knob",
    "Launch",
    "Override",
    "ScriptReading",
    "read_script",
    "read_text",
]

Outputs = Callable[[str], str | None]


def read_script(
    path: Path,
    *,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    outputs: Outputs | None = None,
    name: str | None = None,
) -> ScriptReading:
    """Read the launch script at `path` (shown as `name`, by default the path as given).

    `env` is the caller's environment (`--env KEY=VALUE`): names not in it are unset, except the
    ones every environment has (HOME, PWD, USER, PATH, …), which stay unknown and are shown as
    `$HOME`. `args` are the script's positional arguments. `outputs(command)` may give what a
    command substitution `$(command)` prints; by default none is known (none is ever run).
    """
    file = name if name is not None else str(path)
    data, problems = read_bytes(path, file)
    if data is None:
        return ScriptReading(file, diagnostics=tuple(problems))
    text, problems = decode(data, file)
    if text is None:
        return ScriptReading(file, diagnostics=tuple(problems))
    return read_text(text, file=file, env=env, args=args, outputs=outputs)


def read_text(
    text: str,
    *,
    file: str = "<script>",
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    outputs: Outputs | None = None,
) -> ScriptReading:
    """Read a launch script given as text (see read_script)."""
    if "\0" in text:
        _, problems = decode(text.encode(), file)
        return ScriptReading(file, diagnostics=tuple(problems))
    parsed, problems = parse(text, file)
    if parsed is None:
        return ScriptReading(file, diagnostics=tuple(problems))
    evaluator = Evaluator(parsed, env or {}, args, outputs)
    try:
        evaluator.run()
    except RecursionError:  # bounded by parse.MAX_DEPTH; this is the last line of defence
        problem = diag("RLC007", "the script nests too deep to read", file=file, line=1)
        return ScriptReading(file, diagnostics=(*problems, problem))
    except TooMuchWork as exc:
        problem = diag(
            "RLC007",
            f"the script takes more than {MAX_WORK} characters of work to read (values built, "
            "patterns matched): not read",
            file=file,
            line=exc.line,
            hint="a launch script builds a few thousand characters of values; this one is refused",
        )
        return ScriptReading(file, diagnostics=(*problems, problem))
    except MemoryError:  # bounded by MAX_TEXT and MAX_WORK; this is the last line of defence
        problem = diag("RLC007", "the script needs more memory to read than rlcat may use", file=file, line=1)
        return ScriptReading(file, diagnostics=(*problems, problem))
    found, findings = launches(parsed, evaluator.runs)
    diagnostics: list[Diagnostic] = [*problems, *evaluator.diagnostics, *findings]
    if not found:
        diagnostics.append(
            diag(
                "RLC1104",
                "no command here launches verl (`python -m verl.…` or `recipe.…`, behind any launcher)",
                file=file,
                line=1,
                hint="give the script that starts the training run",
            )
        )
    knobs = tuple(Knob(n, d, line) for n, (d, line) in evaluator.knobs.items())
    diagnostics.sort(key=lambda d: (d.line or 0, d.col or 0, d.code))
    unset_reads = tuple(evaluator.unset_reads.items())
    return ScriptReading(file, tuple(found), knobs, tuple(diagnostics), unset_reads)
