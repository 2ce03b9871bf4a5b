"""One Diagnostic type for every stage, and the exception that carries them."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from functools import cache
from typing import Any, TypedDict


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()


class ExitCode(IntEnum):
    """The exit-code contract, shared by every command."""

    OK = 0
    FINDINGS = 1  # at least one finding at error level
    INPUT = 2  # usage error, or input that could not be read or understood
    INTERNAL = 3  # a bug in rlcat: one line on stderr, the traceback in a log file
    INTERRUPTED = 130
    BROKEN_PIPE = 141  # stdout's reader went away (`| head`): quietly, as a tool killed by SIGPIPE
    TERMINATED = 143  # SIGTERM (128 + 15), as a shell reports it: what Slurm, Kubernetes or CI expect


EXIT_CODES_TEXT = (
    "`0` success, `1` findings at error level, `2` usage error or unreadable input, `3` internal "
    "error (a bug in rlcat; the traceback is written to a log file), `130` interrupted, `141` the "
    "reader of the output went away (as after SIGPIPE, e.g. `| head`), `143` terminated (SIGTERM)"
)

# Files that could not be read at all (missing, not a regular file, not UTF-8, too large or too
# deep): exit 2 whichever command was reading them (validate, lint).
UNREADABLE_FILES = frozenset({"RLC001", "RLC006", "RLC007", "RLC012"})

# Codes are stable; families by hundreds. Each entry: (title, default severity).
CODES: dict[str, tuple[str, Severity]] = {
    # 0xx: reading input
    "RLC001": ("file not found", Severity.ERROR),
    "RLC002": ("YAML syntax error", Severity.ERROR),
    "RLC003": ("duplicate key", Severity.ERROR),
    "RLC004": ("not a mapping at top level", Severity.ERROR),
    "RLC005": ("unsupported YAML tag", Severity.ERROR),
    "RLC006": ("file is not valid UTF-8 text", Severity.ERROR),
    "RLC007": ("input too large, too deep or too costly to read", Severity.ERROR),
    "RLC008": ("empty file", Severity.ERROR),
    "RLC009": ("text that reads differently than it shows", Severity.ERROR),
    "RLC010": ("YAML 1.1 value that YAML 1.2 reads differently", Severity.ERROR),
    "RLC011": ("link or file outside the folder", Severity.ERROR),
    "RLC012": ("not a regular file", Severity.ERROR),
    "RLC013": ("project file is not valid TOML", Severity.ERROR),
    "RLC050": ("shell script syntax the reader cannot parse", Severity.ERROR),  # rlcat.scripts
    # 1xx: schema
    "RLC101": ("unknown field", Severity.ERROR),
    "RLC102": ("wrong type", Severity.ERROR),
    "RLC103": ("invalid value", Severity.ERROR),
    "RLC104": ("missing field", Severity.ERROR),
    "RLC105": ("bad command-line setting", Severity.ERROR),
    "RLC106": ("output not written", Severity.ERROR),
    "RLC107": ("value left to fill in (a TODO marker)", Severity.ERROR),
    # 2xx: references
    "RLC201": ("unknown recipe", Severity.ERROR),
    "RLC202": ("unknown catalog entry", Severity.ERROR),
    "RLC203": ("extends cycle", Severity.ERROR),
    "RLC204": ("unknown platform", Severity.ERROR),
    "RLC205": ("axis value not allowed by the recipe", Severity.ERROR),
    "RLC206": ("entry replaces a built-in one", Severity.WARNING),
    "RLC207": ("two entries with one name", Severity.ERROR),
    # 3xx: lowering / compile
    "RLC301": ("invalid combination", Severity.ERROR),
    "RLC302": ("GPU layout does not fit", Severity.ERROR),
    "RLC303": ("known broken on this platform", Severity.ERROR),
    "RLC304": ("untested on this platform", Severity.INFO),
    # 4xx: verl key index
    "RLC401": ("unknown verl key", Severity.ERROR),
    "RLC402": ("value type differs from verl's default", Severity.ERROR),
    "RLC403": ("key absent from this verl release, left out", Severity.INFO),
    "RLC404": ("key index missing for this verl release", Severity.ERROR),
    "RLC405": ("value cannot be written as a Hydra override", Severity.ERROR),
    "RLC406": ("key not valid in Hydra's override grammar", Severity.ERROR),
    "RLC407": ("interpolation in recipe data", Severity.WARNING),
    "RLC408": ("'+' adds a key verl's config already has", Severity.ERROR),
    "RLC409": ("'+' adds a key to a section verl builds as a dataclass", Severity.ERROR),
    "RLC410": ("a value the release's dataclass refuses at start-up", Severity.ERROR),
    # 45x: verl's own start-up checks, run with --verl-native (rlcat.native)
    "RLC450": ("verl's own start-up checks refuse the plan", Severity.ERROR),
    "RLC451": ("verl's own start-up checks did not judge the plan", Severity.WARNING),
    # 10xx: launch (rlcat.launch): checks before a launch starts, and what a submitted job did
    "RLC1001": ("launch target or action not available", Severity.ERROR),
    "RLC1002": ("plan needs more GPUs than the cluster has", Severity.ERROR),
    "RLC1003": ("job env key that verl's ray.init sets itself", Severity.ERROR),
    "RLC1004": ("`$` in a job env value, which Ray expands", Severity.ERROR),
    "RLC1005": ("more than one GPU-visibility variable on ROCm", Severity.ERROR),
    "RLC1006": ("RAY_AUTH_MODE not explicit, or not the cluster's", Severity.ERROR),
    "RLC1007": ("working_dir unreadable, over Ray's size limit, or not uploadable here", Severity.ERROR),
    "RLC1008": ("Ray cluster unreachable or refused the request", Severity.ERROR),
    "RLC1009": ("NOSET variable dropped without entrypoint resources", Severity.ERROR),
    "RLC1010": ("launched job progress and result", Severity.INFO),
    "RLC1011": ("no container image for the target", Severity.ERROR),
    "RLC1012": ("Slurm refused the job or cannot be reached", Severity.ERROR),
    "RLC1013": ("mount, setup line, sbatch option or passed variable refused", Severity.ERROR),
    "RLC1014": ("plan path a container launch would not see", Severity.ERROR),
    "RLC1015": ("credential variable the plan needs does not reach the job", Severity.WARNING),
    # 11xx: launch scripts, read without running them (rlcat.scripts)
    "RLC1101": ("launch command cut short by a line continuation", Severity.ERROR),
    "RLC1102": ("value only known by running a command", Severity.WARNING),
    "RLC1103": ("condition undecidable without running: both branches read", Severity.INFO),
    "RLC1104": ("script launches no verl trainer", Severity.WARNING),
    "RLC1105": ("variable the script requires is not set", Severity.WARNING),
    "RLC1106": ("shell construct not evaluated", Severity.WARNING),
    # rlcat lint: what the launches a script makes give verl (rlcat.survey.lint_scripts)
    "RLC1111": ("launch of an entrypoint rlcat has no key index for", Severity.ERROR),
    "RLC1112": ("entry config or group choice without a key index: keys not checked", Severity.WARNING),
    "RLC1113": ("the same key overridden twice", Severity.WARNING),
    "RLC1114": ("override Hydra's grammar cannot read", Severity.ERROR),
    "RLC1115": ("entry config name that is not a name (a path)", Severity.ERROR),
    # 12xx: runs and results (rlcat runs, rlcat results)
    "RLC1201": ("run folder without a readable plan", Severity.ERROR),
    "RLC1202": ("metrics line that is not a file-logger record", Severity.WARNING),
    "RLC1203": ("half-written last metrics line skipped", Severity.INFO),
    "RLC1204": ("metrics line over the size limit", Severity.WARNING),
    "RLC1205": ("metrics thinned or capped", Severity.INFO),
    "RLC1206": ("a run or result file is already there", Severity.ERROR),
    "RLC1207": ("run launched with other overrides than its plan", Severity.WARNING),
    "RLC1208": ("plan fingerprint does not match the plan", Severity.WARNING),
    "RLC1209": ("no metrics to record", Severity.ERROR),
    # 13xx: rlcat import: a launch script, overrides.yaml or command line turned into a recipe
    "RLC1301": ("nothing rlcat import can read as a verl launch", Severity.ERROR),
    "RLC1302": ("entrypoint, entry config or group choice no recipe axis selects", Severity.WARNING),
    "RLC1303": ("source setting left out of the recipe or changed to compile", Severity.WARNING),
    "RLC1304": ("source word that is not an override", Severity.WARNING),
    "RLC1305": ("round trip: the recipe gives verl another value than the source", Severity.ERROR),
    "RLC1306": ("import would overwrite a file", Severity.ERROR),
    "RLC1307": ("new catalog entry to fill in: fields the source does not say", Severity.WARNING),
    "RLC1308": (
        "source setting moved where verl's own migration or a rename puts it (--migrate)",
        Severity.INFO,
    ),
    "RLC1309": ("the whole-config proof cannot compose here (Hydra, the release's tree)", Severity.ERROR),
}


# Characters that change how the rest of a line shows, or start a new one: control characters (C0,
# DEL, C1; newline, carriage return, ESC, NEL), format characters (bidi controls, zero-width and tag
# characters), the line and paragraph separators, and lone surrogates (which no UTF-8 stream can
# hold). Format characters matter for CI logs too: GitHub's runner compares with .NET's culture-aware
# matching, which skips them, so "\u00ad::error::" would still read as a workflow command.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# GitHub's runner still reads the legacy workflow command `##[name]data` anywhere in a line.
_LEGACY_COMMAND, _LEGACY_COMMAND_SHOWN = "##[", "##\\x5b"


def python_escape(char: str) -> str:
    """`\\n`, `\\x1b`, `\\u202e`: the character as a Python string literal writes it."""
    return char.encode("unicode_escape").decode("ascii")


def printable(text: str, escape: Callable[[str], str] = python_escape) -> str:
    """`text` as one line that shows what it is, for a terminal or a CI log: every hidden character
    (see _HIDDEN; tab stays) is written by `escape`, and `##[` becomes `##\\x5b`. Nothing in the
    result can start a new line, move the cursor, reach the clipboard or forge a workflow command."""
    if text.isprintable() and _LEGACY_COMMAND not in text:  # the common case, in one C-speed pass
        return text
    shown = "".join(
        escape(char) if char != "\t" and unicodedata.category(char) in _HIDDEN else char for char in text
    )
    # after escaping: the escapes hold no '#' or '[', so every `##[` left was in the text
    return shown.replace(_LEGACY_COMMAND, _LEGACY_COMMAND_SHOWN)


def json_text(data: Any, **options: Any) -> str:
    """`data` as indented JSON for a terminal, a CI log or a file: hidden characters (as in
    `printable`) written as `\\uXXXX` escapes and `##[` as `##\\u005b` — the same JSON value, but
    nothing in it can forge a workflow command or reach a terminal raw. Other text stays readable."""
    text = json.dumps(data, indent=2, ensure_ascii=False, **options)
    if not text.isprintable() or _LEGACY_COMMAND in text:
        text = "".join(
            json.dumps(char)[1:-1] if char not in "\n" and unicodedata.category(char) in _HIDDEN else char
            for char in text
        )  # the newlines json.dumps writes are its own indentation: any in a value are escaped
        text = text.replace(_LEGACY_COMMAND, "##\\u005b")
    return text + "\n"


class Where(TypedDict, total=False):
    """Where a finding points: a file position, or the command-line argument that gave the value.
    Passed to `diag(..., **where)`."""

    file: str | None
    line: int | None
    col: int | None
    argument: str | None


@dataclass(frozen=True)
class Note:
    """Another place a finding concerns, said in words: where the inherited value it is about was
    set ("inherited from gsm8k_qwen3_8b_fsdp, built-in, line 26"). `file` and `line` only for a
    file of the user's own (never a built-in one, which their repository does not have)."""

    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"message": self.message, "file": self.file, "line": self.line, "col": self.col}


@dataclass(frozen=True)
class Diagnostic:
    """A finding from any stage: where it is, what is wrong, and how to fix it."""

    code: str
    message: str
    severity: Severity = Severity.ERROR
    file: str | None = None
    line: int | None = None
    col: int | None = None
    key: str | None = None
    hint: str | None = None
    # the command-line argument a finding is about, when it is not in a file (`--override k=v`)
    argument: str | None = None
    # where the value the finding is about came from, when the finding points elsewhere (`moved`)
    notes: tuple[Note, ...] = ()
    # the platforms a recipe was compiled on that gave the finding (`rlcat validate`: one_per_problem)
    platforms: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return CODES.get(self.code, ("", Severity.ERROR))[0]

    def location(self) -> str:
        """`file:line:col`, or the argument; printable, and never the start of a workflow command."""
        if self.file is None:
            return printable(self.argument or "<input>")
        name = printable(self.file)
        if name[:1].isspace() or name.startswith(":"):
            # the location starts the line, and GitHub's runner reads a line that starts with "::"
            # after blanks as a workflow command; "./" names the same file
            name = "./" + name
        parts = [name]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "key": self.key,
            "hint": self.hint,
            "notes": [n.to_dict() for n in self.notes],
            "platforms": list(self.platforms),
        }

    def headline(self) -> str:
        """`location CODE severity: message [key]`, every field printable: one line."""
        key = f" [{printable(self.key)}]" if self.key else ""
        return f"{self.location()} {self.code} {self.severity}: {printable(self.message)}{key}"

    def note_lines(self) -> list[str]:
        """`  note: inherited from ...`, one printable line per note."""
        return [f"  note: {printable(n.message)}" for n in self.notes]

    def render(self) -> str:
        """One line per finding, then its notes and the hint (STYLE practice 6); nothing from the
        input can start another line."""
        lines = [self.headline(), *self.note_lines()]
        if self.hint:
            lines.append(f"  hint: {printable(self.hint)}")
        return "\n".join(lines)

    def moved(self, to: Where, note: Note | None) -> Diagnostic:
        """The same finding at `to` (a file position), with where it pointed kept as `note` (None:
        a note already says it)."""
        return replace(
            self,
            file=to.get("file"),
            line=to.get("line"),
            col=to.get("col"),
            argument=to.get("argument"),
            notes=(*self.notes, note) if note is not None else self.notes,
        )


def diag(code: str, message: str, **kwargs: object) -> Diagnostic:
    """Build a Diagnostic with the code's default severity unless one is given."""
    if "severity" not in kwargs:
        kwargs["severity"] = CODES[code][1]
    return Diagnostic(code, message, **kwargs)  # type: ignore[arg-type]


def one_per_problem(found: Iterable[tuple[str, Diagnostic]], checked: Sequence[str]) -> list[Diagnostic]:
    """One finding per problem, not one per platform: `found` holds the findings of the same check on
    each platform of `checked`, each with its platform. Findings from different platforms with the
    same code, severity, place and key whose messages have the same words but where a platform's
    own value goes (`verl 0.9.1` on one, `verl 0.9.0` on another) are one problem: one finding, the
    words that differ joined (`verl 0.9.1/0.9.0`), naming its platforms (`platforms`; the message
    says `(on rocm)` when it does not hold on every platform checked). Two findings of one platform
    stay two."""
    problems: list[tuple[list[str], list[Diagnostic]]] = []
    by_place: dict[tuple[object, ...], list[int]] = {}
    for platform, d in found:
        place = (d.code, d.severity, d.file, d.line, d.col, d.key, d.argument, d.notes)
        candidates = [i for i in by_place.get(place, []) if platform not in problems[i][0]]
        same = [i for i in candidates if problems[i][1][0].message == d.message]
        alike = [i for i in candidates if _alike(problems[i][1][0], d)]
        if same or alike:
            platforms, members = problems[(same or alike)[0]]
            platforms.append(platform)
            members.append(d)
            continue
        by_place.setdefault(place, []).append(len(problems))
        problems.append(([platform], [d]))
    out = []
    for platforms, members in problems:
        message = _joined_words([d.message for d in members])
        hints = [d.hint for d in members]
        hint = _joined_words([h or "" for h in hints]) if all(hints) else members[0].hint
        if len(platforms) < len(checked):
            message += f" (on {', '.join(platforms)})"
        out.append(replace(members[0], message=message, hint=hint, platforms=tuple(platforms)))
    return out


def _alike(a: Diagnostic, b: Diagnostic) -> bool:
    """The same words but where a platform's own value goes: as many words, at most one in four of
    them different (at least one may differ), in the message and in the hint."""
    return _alike_words(a.message, b.message) and (
        a.hint == b.hint or (a.hint is not None and b.hint is not None and _alike_words(a.hint, b.hint))
    )


def _alike_words(a: str, b: str) -> bool:
    words_a, words_b = a.split(" "), b.split(" ")
    if len(words_a) != len(words_b):
        return False
    differ = sum(x != y for x, y in zip(words_a, words_b, strict=True))
    return differ <= max(1, len(words_a) // 4)


def _joined_words(texts: Sequence[str]) -> str:
    """`texts` (as many words each) as one: a word they differ in is each text's word, joined by `/`."""
    if len(set(texts)) == 1:
        return texts[0]
    columns = zip(*(text.split(" ") for text in texts), strict=True)
    return " ".join("/".join(dict.fromkeys(words)) for words in columns)


def dotted(path: tuple[str | int, ...]) -> str:
    """('trainer', 'logger', 1) → 'trainer.logger[1]'"""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


class RlcatError(Exception):
    """Stops a stage; carries the diagnostics that explain why."""

    def __init__(self, diagnostics: Iterable[Diagnostic], exit_code: ExitCode = ExitCode.INPUT):
        self.diagnostics = list(diagnostics)
        self.exit_code = exit_code
        super().__init__("\n".join(d.render() for d in self.diagnostics))


def is_guard_code(code: str) -> bool:
    """RLC5xx-RLC9xx: findings of the guards (RLC9xx: security)."""
    return len(code) == 6 and code.startswith("RLC") and code[3] in "56789"


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity >= Severity.ERROR for d in diagnostics)


def did_you_mean(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Close matches for a misspelt name; dotted keys are also matched on their last segment."""
    pool = sorted(set(choices))
    if len(pool) > 64:
        # difflib compares every pair of characters: keep the 64 names sharing the most bigrams
        grams = _bigrams(word)
        pool = sorted(pool, key=lambda c: -len(grams & _bigrams(c)) / (len(grams | _bigrams(c)) or 1))[:64]
    import difflib  # here: most runs suggest nothing, and a cold `rlcat lint` skips the import

    found = difflib.get_close_matches(word, pool, n=n, cutoff=0.6)
    if not found and "." in word:
        tail = word.rsplit(".", 1)[1]
        found = [c for c in pool if c.rsplit(".", 1)[-1] == tail][:n]
    return found


@cache
def _bigrams(text: str) -> frozenset[str]:
    return frozenset(text[i : i + 2] for i in range(len(text) - 1))


def suggestion_hint(word: str, choices: Iterable[str]) -> str | None:
    close = did_you_mean(word, choices)
    if not close:
        return None
    return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
