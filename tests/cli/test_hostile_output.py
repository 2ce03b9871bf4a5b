"""Hostile text never leaves its place in rlcat's outputs.

Recipes, catalog entries, platform profiles, file names and command-line values may come from a
hostile pull request. Whatever they hold (a newline and a command, `$(...)`, backticks, quotes, ESC
sequences, bidi controls, U+2028, `::error::` or `##[error]` workflow commands), rlcat's outputs
must keep it inert for their reader:

- bash runs the `shell` launch script: no text can run a command, and python receives exactly the
  argv of the `json` plan;
- terminals and CI logs read stderr and the text report: nothing starts a line, moves the cursor,
  writes the clipboard (OSC 52) or forges a GitHub workflow command;
- GitHub's runner reads the github report: one workflow command per finding, properties intact;
- the `overrides` format prints one override per line: a value it cannot print that way is refused.

Hostile characters sit in double-quoted YAML strings as escapes (or in command-line values), so
the cases hold whether or not the loader also refuses raw U+2028 or U+0085 in a file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from rlcat import __version__
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, diag, printable
from rlcat.emit.formats import FORMATS
from rlcat.emit.reporters import github, sarif, text
from rlcat.model.plan import Layer, Origin, Setting
from rlcat.syntax.bash import shell_word

from conftest import REPO, Result

Run = Callable[..., Result]
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is needed to run launch scripts")

SHIPPED_RECIPE = "gsm8k_qwen3_8b_fsdp"
# Characters that must never reach a terminal or a CI log as they are: C0 controls but tab and the
# line feed that ends a line, DEL, C1 (NEL included), bidi controls, line and paragraph separators.
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the colours rich draws itself
# Files the payloads below create when bash (or anything) runs them.
CANARIES = ("pwned-subst", "pwned-backtick", "pwned-newline", "pwned-quote", "pwned-semicolon")
# python3 on PATH for the scripts: records its argv and environment exactly (JSON), runs nothing.
RECORDER = f"""#!{sys.executable}
import json, os, sys
json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, open(os.environ["RECORD_TO"], "w"))
"""


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Run from an empty folder inside tmp_path, with no user catalog from the environment."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    monkeypatch.delenv("RLCAT_TRACEBACK", raising=False)
    return work


def assert_inert(output: str, workflow_commands: int = 0) -> None:
    """No hidden character, no legacy `##[command]`, and exactly `workflow_commands` lines that
    GitHub's runner reads as a workflow command (it trims leading whitespace first)."""
    found = HIDDEN.findall(output)
    assert not found, f"hidden characters {found!r} in:\n{output!r}"
    assert "##[" not in output, output
    commands = [line for line in output.split("\n") if line.lstrip().startswith("::")]
    assert len(commands) == workflow_commands, f"workflow command lines: {commands}"


def yaml_file(path: Path, data: dict[str, Any]) -> Path:
    """Write `data` as YAML with every non-ASCII or control character as an escape in quotes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=False, sort_keys=False), encoding="utf-8")
    return path


# --- the shell script under bash --------------------------------------------------------------------

PROFILE_TEXT = {
    "summary": "evil\n$(touch pwned-subst)`touch pwned-backtick`\x1b[2J\u2028\u202e",
    "verl_version": "0.9.1\ntouch pwned-newline\n\x1b]52;c;cHduZWQ=\x07\n::add-mask::x",
    "image": "img'; touch pwned-quote; '\u2066 ##[error]forged",
}
PROFILE_ENV = [
    {
        "name": "EVIL_ENV",
        "value": "a'\"$(touch pwned-subst)`touch pwned-backtick`\n::add-mask::x\x1b[31m\u2028\x85",
        "reason": "reason\ntouch pwned-newline",
    },
    {
        "name": "EVIL_QUOTES",
        "value": "it's \"quoted\" $HOME \\ back\\\\slash '; touch pwned-quote; '",
        "reason": "r",
    },
]
RECIPE_TEXT = {
    "env": {
        "RECIPE_NEWLINE": "line1\ntouch pwned-newline\n$(touch pwned-subst)",
        "RECIPE_BIDI": "\u202eevil\u2066\u061c\u200f",
    },
    "trainer": {
        "experiment": "exp'\"; touch pwned-semicolon; `touch pwned-backtick` $(touch pwned-subst)"
        "\n##[error]forged\x1b]52;c;Zm9v\x07\r\u2028\x85",
    },
}
# (id, extra arguments) for the same hostile catalog: command-line values carry the rest
SHELL_CASES = [
    ("catalog-and-recipe", []),
    (
        "command-line-set",
        [
            "--set",
            "trainer.project=" + json.dumps("p\n$(touch pwned-subst)\u202e\u2028`touch pwned-backtick`"),
        ],
    ),
    (
        "command-line-override",
        ["--override", "trainer.experiment_name='x\n; touch pwned-semicolon; \x1b[2J'"],
    ),
]


@pytest.fixture
def hostile_catalog(tmp_path: Path) -> Path:
    """A user catalog folder: the shipped cuda profile renamed `evil` with hostile free text and
    env, and a recipe `hostile` that extends a shipped recipe with hostile env and experiment name."""
    root = tmp_path / "catalog-folder"
    profile = yaml.safe_load((REPO / "catalog" / "platforms" / "cuda.yaml").read_text(encoding="utf-8"))
    profile.update(name="evil", env=PROFILE_ENV, **PROFILE_TEXT)
    yaml_file(root / "catalog" / "platforms" / "evil.yaml", profile)
    recipe = {"name": "hostile", "extends": SHIPPED_RECIPE, "summary": "hostile values", **RECIPE_TEXT}
    yaml_file(root / "recipes" / "hostile.yaml", recipe)
    return root


def run_script(script: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]:
    """Run `script` with bash in an empty folder, python3 replaced by the recorder."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    recorder = bindir / "python3"
    recorder.write_text(RECORDER, encoding="utf-8")
    recorder.chmod(0o755)
    record = tmp_path / "record.json"
    cwd = tmp_path / "run"
    cwd.mkdir()
    env = {
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "RECORD_TO": str(record),
        "HOME": str(tmp_path),
    }
    assert BASH is not None
    run = subprocess.run([BASH, str(script)], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    got = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
    return run, got, cwd


def assert_no_canary(tmp_path: Path) -> None:
    created = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("pwned*"))
    assert created == [], f"a payload ran: {created}"


@needs_bash
@pytest.mark.parametrize("extra", [c[1] for c in SHELL_CASES], ids=[c[0] for c in SHELL_CASES])
def test_shell_script_runs_nothing_and_passes_the_plan_exactly(
    rlcat: Run, tmp_path: Path, hostile_catalog: Path, extra: list[str]
) -> None:
    args = ["compile", "hostile", "--platform", "evil", "--catalog", str(hostile_catalog), *extra]
    planned = rlcat(*args, "--format", "json")
    assert planned.code == 0, planned.err
    plan = json.loads(planned.out)
    script = tmp_path / "launch.sh"
    written = rlcat(*args, "--format", "shell", "-o", str(script))
    assert written.code == 0, written.err
    content = script.read_text(encoding="utf-8")

    assert BASH is not None
    assert subprocess.run([BASH, "-n", str(script)], check=False).returncode == 0
    run, got, cwd = run_script(script, tmp_path)
    assert run.returncode == 0, run.stderr
    assert_no_canary(tmp_path)
    assert sorted(cwd.iterdir()) == []
    assert got["argv"] == [
        "-m",
        plan["entrypoint"],
        f"--config-name={plan['config_name']}",
        *plan["overrides"],
    ]
    assert {name: got["env"].get(name) for name in plan["env"]} == plan["env"]
    # the payloads did reach the plan: the script had something to get wrong
    passed = [*got["argv"], *plan["env"].values()]
    assert any("touch pwned" in word and "\n" in word for word in passed)

    # printed (cat launch.sh in a terminal or a CI log) the script is inert too, one line per word
    assert_inert(content)
    shapes = re.compile(
        r"#!/usr/bin/env bash|# .*|set -euo pipefail|export [A-Za-z_][A-Za-z0-9_]*=.*|python3 .*|    .*|"
    )
    assert [line for line in content.splitlines() if not shapes.fullmatch(line)] == []


def test_shell_header_comments_are_one_line_each(rlcat: Run, hostile_catalog: Path) -> None:
    result = rlcat(
        "compile", "hostile", "--platform", "evil", "--catalog", str(hostile_catalog), "--format", "shell"
    )
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "#!/usr/bin/env bash" and lines[3] == "set -euo pipefail"
    header, regenerate = lines[1], lines[2]
    assert header.startswith("# hostile on evil (verl 0.9.1\\ntouch pwned-newline\\n\\x1b]52;c;cHduZWQ=\\x07")
    assert header.endswith(f"generated by rlcat {__version__}.")
    assert regenerate == (
        f"# Regenerate with: rlcat compile hostile --platform evil --catalog {hostile_catalog} --format shell"
    )


def test_yaml_header_is_one_comment_line(rlcat: Run, hostile_catalog: Path) -> None:
    args = ["compile", "hostile", "--platform", "evil", "--catalog", str(hostile_catalog), "--format", "yaml"]
    refused = rlcat(*args)  # the recipe's values hold hidden characters: YAML cannot show them safely
    assert refused.code == 2 and refused.out == ""
    assert " RLC405 error: " in refused.err
    assert_inert(refused.err)
    result = rlcat(*args, "--set", "trainer.experiment=clean")
    assert result.code == 0, result.err
    header, body = result.out.split("\n", 1)
    assert header.startswith("# hostile on evil: verl 0.9.1\\ntouch pwned-newline\\n\\x1b]52;c;")
    assert_inert(header)
    assert not body.startswith("#") and isinstance(yaml.safe_load(body), dict)


# --- a NUL, or a lone surrogate, cannot be written ----------------------------------------------------


def _with_value(compiled: Compiled, *, env: str | None = None, experiment: str | None = None) -> Compiled:
    """`compiled` with an env var, or the experiment name, set to a value later stages never see from
    files (the model refuses a NUL there): the formats must refuse it themselves."""
    origin = Origin(Layer.RECIPE, "recipe hostile", "recipes/hostile.yaml", 7, 3)
    if env is not None:
        return replace(compiled, env=[*compiled.env, Setting("WITH_NUL", env, origin)])
    overrides = [
        replace(o, setting=replace(o.setting, value=experiment, origin=origin))
        if o.key == "trainer.experiment_name"
        else o
        for o in compiled.overrides
    ]
    return replace(compiled, overrides=overrides)


# (id, where the NUL is, the formats that refuse it)
NUL_CASES = [
    ("env-value", {"env": "a\x00b"}, ["shell"]),
    ("override-value", {"experiment": "a\x00b"}, ["shell", "overrides"]),
]


@pytest.mark.parametrize(("where", "refused"), [c[1:] for c in NUL_CASES], ids=[c[0] for c in NUL_CASES])
def test_a_nul_is_refused_where_it_would_become_an_argument(
    where: dict[str, str], refused: list[str]
) -> None:
    compiled = _with_value(compile_request(Request(SHIPPED_RECIPE, "cuda")), **where)
    key = "WITH_NUL" if "env" in where else "trainer.experiment_name"
    for fmt in refused:
        with pytest.raises(RlcatError) as caught:
            FORMATS[fmt](compiled)
        (finding,) = caught.value.diagnostics
        assert (finding.code, finding.key, finding.file, finding.line) == (
            "RLC405",
            key,
            "recipes/hostile.yaml",
            7,
        )
        assert_inert(finding.render())
    # JSON writes a NUL as \u0000: a reader of the plan gets it, and decides
    assert "\\u0000" in FORMATS["json"](compiled)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_nul_in_a_recipe_never_reaches_an_output(rlcat: Run, tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "catalog-folder"
    fields = {"env": {"WITH_NUL": "a\x00b"}, "trainer": {"experiment": "a\x00b"}}
    yaml_file(
        root / "recipes" / "nul.yaml", {"name": "nul", "extends": SHIPPED_RECIPE, "summary": "s", **fields}
    )
    output = tmp_path / "out" / f"launch.{fmt}"
    result = rlcat("compile", "nul", "--catalog", str(root), "--format", fmt, "-o", str(output))
    if fmt in ("shell", "overrides"):
        assert result.code == ExitCode.INPUT, result.err
        assert " error: " in result.err and not output.exists()
    assert "Traceback" not in result.err and "internal error" not in result.err
    assert_inert(result.err)
    if result.code == 0:  # a format that can hold a NUL writes it escaped
        assert "\x00" not in output.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_bytes_that_are_not_utf8_are_refused_not_crashed_on(rlcat: Run, tmp_path: Path, fmt: str) -> None:
    """A command-line byte that is not UTF-8 arrives as a lone surrogate (surrogateescape)."""
    output = tmp_path / "out" / f"launch.{fmt}"
    argument = 'trainer.experiment_name="a\udcffb"'
    result = rlcat("compile", SHIPPED_RECIPE, "--override", argument, "--format", fmt, "-o", str(output))
    assert result.code == ExitCode.INPUT, result.err
    (finding,) = [line for line in result.err.splitlines() if " RLC105 error: " in line]
    assert finding.startswith("--override trainer.experiment_name=") and "\\udcff" in finding
    assert "not UTF-8" in finding
    assert not output.exists() and "Traceback" not in result.err
    assert_inert(result.err)


# --- stderr and the text report ------------------------------------------------------------------------

FORGED = "\n::error::forged\r::warning::forged\x1b]52;c;Zm9v\x07\x1b[2J\u202e\u2066\x85 ##[error]forged"
# the same, as printable shows it
FORGED_SHOWN = (
    "\\n::error::forged\\r::warning::forged"
    "\\x1b]52;c;Zm9v\\x07\\x1b[2J\\u202e\\u2066\\x85 ##\\x5berror]forged"
)
HOSTILE_RECIPE = {
    "name": "hostile",
    "extends": SHIPPED_RECIPE,
    "summary": "s",
    FORGED: 1,  # an unknown field: its key is in the message and the [key]
    "batch": {"mini_batch_size": FORGED},  # the wrong type: its value is in the message
}
HOSTILE_NAMES = {
    "newline-in-name": "x" + FORGED,
    "name-starts-with-a-command": "::error::forged",
    "blank-then-command": "\u00a0::add-mask::forged",
}


def _named(path: Path) -> Path:
    return yaml_file(path, {**HOSTILE_RECIPE, "name": "hostile"})


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
@pytest.mark.parametrize("command", ["validate", "compile"])
def test_hostile_file_names_stay_inert(rlcat: Run, _isolated: Path, command: str, name: str) -> None:
    path = _named(_isolated / f"{name}.yaml")
    result = rlcat(command, path.name)
    assert result.code in (ExitCode.FINDINGS, ExitCode.INPUT), result.err
    output = result.out + result.err
    assert_inert(output)
    assert printable(path.name) in output


@pytest.mark.parametrize("command", ["validate", "compile"])
def test_hostile_keys_and_values_stay_inert(rlcat: Run, _isolated: Path, command: str) -> None:
    _named(_isolated / "hostile.yaml")
    result = rlcat(command, "hostile.yaml")
    assert result.code in (ExitCode.FINDINGS, ExitCode.INPUT), result.err
    output = result.out + result.err
    assert_inert(output)
    assert f"[{FORGED_SHOWN}]" in output  # the key
    assert f"'{FORGED_SHOWN}'" in output  # the value, in the wrong-type message
    assert " RLC101 error: " in output and " RLC102 error: " in output


# (id, arguments): command-line values with forged commands reach stderr in findings
COMMAND_LINE_CASES = [
    ("set-wrong-type", ["--set", f"batch.mini_batch_size={FORGED}"]),
    ("set-unknown-field", ["--set", f"batch.nope{FORGED}=1"]),
    ("override-unknown-key", ["--override", f"trainer.nope{FORGED}=1"]),
    ("override-not-one-value", ["--override", f"trainer.total_epochs={FORGED}"]),
    ("unknown-recipe", []),
]


@pytest.mark.parametrize("args", [c[1] for c in COMMAND_LINE_CASES], ids=[c[0] for c in COMMAND_LINE_CASES])
def test_hostile_command_line_values_stay_inert_on_stderr(rlcat: Run, args: list[str]) -> None:
    recipe = SHIPPED_RECIPE if args else f"nope{FORGED}"
    result = rlcat("compile", recipe, *args)
    assert result.code == ExitCode.INPUT, result.err
    assert result.out == ""
    assert_inert(result.err)
    assert "\\n::error::forged" in result.err and "\\x1b]52;c;Zm9v\\x07" in result.err


# a source line with raw hidden characters but no line break YAML counts (\v and \f are none)
SOURCE_LINE = "key: \x1b]52;c;Zm9v\x07\u202e\u2066 ##[error]x\x0b\x0c"


def _hostile_findings(folder: Path) -> list[Diagnostic]:
    (folder / "source.yaml").write_text(f"name: fine\n{SOURCE_LINE}\nlast: line\n", encoding="utf-8")
    return [
        # column 7 is the ']' after ESC: shown after `key: \x1b`, 9 characters in
        diag("RLC101", f"unknown field {FORGED}", file="source.yaml", line=2, col=7, key=FORGED, hint=FORGED),
        diag("RLC102", "[bold red]markup[/] :smile: stays text", file=FORGED, line=1, key="k"),
        diag("RLC105", FORGED, argument=f"--set x={FORGED}", hint="[link=https://example.org]x[/link]"),
    ]


@pytest.mark.parametrize("color", [False, True], ids=["plain", "colour"])
def test_text_report_is_inert_with_and_without_colour(_isolated: Path, color: bool) -> None:
    findings = _hostile_findings(_isolated)
    report = text(findings, 1, color=color)
    shown = SGR.sub("", report)
    assert_inert(shown)
    assert FORGED_SHOWN in shown
    assert "[bold red]markup[/] :smile: stays text" in shown  # rich read no markup and no emoji code
    assert "[link=https://example.org]x[/link]" in shown
    assert shown == text(findings, 1, color=False)
    # the excerpt of the file in the working folder is there, escaped, with the caret under the
    # column as shown
    lines = shown.splitlines()
    excerpt = lines.index("      2 | key: \\x1b]52;c;Zm9v\\x07\\u202e\\u2066 ##\\x5berror]x\\x0b\\x0c")
    assert lines[excerpt + 1] == "        | " + " " * 9 + "^"


# --- source excerpts: only regular files inside the working folder -----------------------------------

SECRET = "API_TOKEN=hunter2-secret"
# (id, the file a finding names, relative to the working folder) for files outside it, or not regular
OUTSIDE = [
    ("absolute-path", "{outside}/.env"),
    ("relative-path", "../outside/.env"),
    ("symlink-out", "link-out.yaml"),
    ("through-a-linked-folder", "linked-folder/.env"),
    ("a-folder", "folder"),
    ("proc-environ", "/proc/self/environ"),
]


@pytest.fixture
def secret_outside(tmp_path: Path, _isolated: Path) -> Path:
    """A secret file beside the working folder, and links to it from inside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".env").write_text(f"{SECRET}\n{SECRET}\n", encoding="utf-8")
    (_isolated / "link-out.yaml").symlink_to(outside / ".env")
    (_isolated / "linked-folder").symlink_to(outside, target_is_directory=True)
    (_isolated / "folder").mkdir()
    return outside


@pytest.mark.parametrize("name", [c[1] for c in OUTSIDE], ids=[c[0] for c in OUTSIDE])
def test_no_excerpt_of_a_file_outside_the_working_folder(
    _isolated: Path, secret_outside: Path, name: str
) -> None:
    inside = _isolated / "inside.yaml"
    inside.write_text("name: visible-line\n", encoding="utf-8")
    (_isolated / "link-in.yaml").symlink_to(inside)
    target = name.format(outside=secret_outside)
    findings = [diag("RLC002", "x", file=f, line=1, col=1) for f in (target, "inside.yaml", "link-in.yaml")]
    report = text(findings, len(findings), color=False)
    assert "hunter2" not in report
    # no excerpt of the target at all; the controls, a file inside the folder and a link that stays
    # inside it, do show
    excerpts = [line for line in report.splitlines() if line.startswith("      1 | ")]
    assert excerpts == ["      1 | name: visible-line"] * 2


@pytest.mark.parametrize("how", ["absolute", "relative", "link-in-a-folder"])
def test_validate_shows_no_excerpt_of_a_file_outside(
    rlcat: Run, tmp_path: Path, _isolated: Path, secret_outside: Path, how: str
) -> None:
    """A YAML error on the secret's line: the finding names the file, the excerpt is left out."""
    bad = secret_outside / "bad.yaml"
    bad.write_text(f"name: bad\nsecret: {SECRET} x: y\n", encoding="utf-8")
    target = {"absolute": str(bad), "relative": "../outside/bad.yaml", "link-in-a-folder": "recipes"}[how]
    if how == "link-in-a-folder":
        (_isolated / "recipes").mkdir()
        (_isolated / "recipes" / "bad.yaml").symlink_to(bad)
    result = rlcat("validate", target)
    assert result.code in (ExitCode.FINDINGS, ExitCode.INPUT), result.out
    assert "bad.yaml" in result.out
    assert "hunter2" not in result.out + result.err
    # the control: the same file inside the working folder shows its line
    (_isolated / "bad.yaml").write_text(bad.read_text(encoding="utf-8"), encoding="utf-8")
    assert "hunter2" in rlcat("validate", "bad.yaml").out


# --- the github reporter ---------------------------------------------------------------------------------

# the runner's unescaping (actions/runner src/Runner.Common/ActionCommand.cs), in its order
DATA_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
PROPERTY_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))
COMMAND = re.compile(r"::(?P<name>[a-z]+) (?P<props>.*?)::(?P<data>.*)")


def _unescape(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for escaped, char in escapes:
        text = text.replace(escaped, char)
    return text


def _parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as GitHub's runner reads it (TryParseV2)."""
    match = COMMAND.fullmatch(line.lstrip())
    assert match, line
    props = {}
    for pair in match["props"].split(","):
        name, _, value = pair.partition("=")
        props[name] = _unescape(value, PROPERTY_ESCAPES)
    return match["name"], props, _unescape(match["data"], DATA_ESCAPES)


# (id, finding) with forged commands in every field
GITHUB_CASES = [
    ("newline-in-message", diag("RLC101", FORGED, file="recipes/x.yaml", line=3, col=2)),
    ("escaped-newline-in-message", diag("RLC101", "a%0A::error::forged%0D%25", file="x.yaml", line=1)),
    ("colons-commas-in-file", diag("RLC101", "m", file="a::error,line=9,title=T::b.yaml", line=1, col=1)),
    ("newline-in-file", diag("RLC101", "m", file=f"dir/{FORGED}.yaml", line=2)),
    ("forged-key-and-hint", diag("RLC303", "m", file="x.yaml", key=FORGED, hint=f"h{FORGED}")),
    ("argument-only", diag("RLC105", "m", argument=f"--set a={FORGED}", hint="::add-mask::x")),
]


@pytest.mark.parametrize("finding", [c[1] for c in GITHUB_CASES], ids=[c[0] for c in GITHUB_CASES])
def test_github_report_has_one_command_per_finding(finding: Diagnostic) -> None:
    findings = [finding, diag("RLC304", "a plain note", file="recipes/y.yaml", line=1)]
    report = github(findings, 2)
    assert_inert(report, workflow_commands=len(findings))
    commands = [line for line in report.splitlines() if line.startswith("::")]
    name, props, data = _parse_command(commands[0])
    assert name == {"error": "error", "warning": "warning", "info": "notice"}[str(finding.severity)]
    expected = {"title": finding.code}
    if finding.file:
        expected["file"] = printable(finding.file)
    if finding.line:
        expected["line"] = str(finding.line)
    if finding.col:
        expected["col"] = str(finding.col)
    assert props == expected
    message = printable(finding.message) + (f" [{printable(finding.key)}]" if finding.key else "")
    assert data == message + (f"\n{printable(finding.hint)}" if finding.hint else "")
    assert _parse_command(commands[1]) == (
        "notice",
        {"file": "recipes/y.yaml", "line": "1", "title": "RLC304"},
        "a plain note",
    )


def test_github_report_of_a_hostile_recipe(rlcat: Run, _isolated: Path) -> None:
    path = _named(_isolated / f"{HOSTILE_NAMES['newline-in-name']}.yaml")
    report = rlcat("validate", path.name, "--format", "github")
    found = json.loads(rlcat("validate", path.name, "--format", "json").out)["diagnostics"]
    assert report.code == ExitCode.FINDINGS and found
    assert_inert(report.out, workflow_commands=len(found))
    commands = [line for line in report.out.splitlines() if line.startswith("::")]
    for line, finding in zip(commands, found, strict=True):
        assert _parse_command(line)[1]["file"] == printable(finding["file"])


# --- SARIF locations are URI references -------------------------------------------------------------------

URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")  # as tests/cli/test_sarif_schema.py


@pytest.mark.parametrize(
    "name",
    ["dir with space/recipe.yaml", "données/réglage.yaml", "a:b/c.yaml", "q?#%.yaml", FORGED + ".yaml"],
    ids=["space", "non-ascii", "colon", "uri-delimiters", "forged"],
)
def test_sarif_uri_is_percent_encoded(name: str) -> None:
    log = json.loads(sarif([diag("RLC101", "m", file=name, line=1)], 1))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert URI_CHARS.fullmatch(uri), uri
    assert ":" not in uri.split("/")[0]  # no first segment that reads as a scheme
    assert unquote(uri) == name


# --- the overrides format: one override per line, or refused ----------------------------------------------

# (id, hostile experiment name): values whose override text would not be one line as it is
LINE_BREAKING = [
    ("newline", "a\nb"),
    ("carriage-return", "a\r::error::forged"),
    ("line-separator", "a\u2028b"),
    ("next-line", "a\x85b"),
    ("escape-sequence", "a\x1b]52;c;Zm9v\x07b"),
    ("bidi-override", "a\u202eb"),
]


@needs_bash
@pytest.mark.parametrize("value", [c[1] for c in LINE_BREAKING], ids=[c[0] for c in LINE_BREAKING])
@pytest.mark.parametrize("given_by", ["set", "recipe-file"])
def test_overrides_format_refuses_what_the_shell_format_passes(
    rlcat: Run, tmp_path: Path, value: str, given_by: str
) -> None:
    # --set reads YAML: the value goes in double quotes, or YAML would fold its line breaks
    args = ["compile", SHIPPED_RECIPE, "--set", f"trainer.experiment={json.dumps(value)}"]
    if given_by == "recipe-file":
        root = tmp_path / "catalog-folder"
        yaml_file(
            root / "recipes" / "named.yaml",
            {"name": "named", "extends": SHIPPED_RECIPE, "summary": "s", "trainer": {"experiment": value}},
        )
        args = ["compile", "named", "--catalog", str(root)]
    output = tmp_path / "out" / "overrides.txt"
    refused = rlcat(*args, "--format", "overrides", "-o", str(output))
    assert refused.code == ExitCode.INPUT, refused.err
    assert refused.out == "" and not output.exists() and not output.parent.exists()
    (finding,) = [line for line in refused.err.splitlines() if " RLC405 error: " in line]
    assert finding.endswith(" [trainer.experiment_name]")
    assert "--format shell" in refused.err and "--format json" in refused.err
    assert_inert(refused.err)
    where = finding.split(" RLC405 ")[0]
    assert (
        where.startswith("--set trainer.experiment=")
        if given_by == "set"
        else "/recipes/named.yaml:" in where
    )

    plan = json.loads(rlcat(*args, "--format", "json").out)
    script = tmp_path / "launch.sh"
    assert rlcat(*args, "--format", "shell", "-o", str(script)).code == 0
    run, got, _ = run_script(script, tmp_path)
    assert run.returncode == 0, run.stderr
    assert got["argv"][3:] == plan["overrides"]
    assert [a for a in got["argv"] if a.startswith("trainer.experiment_name=")] == [
        f'trainer.experiment_name="{value}"'
    ]


def test_a_line_break_is_written_by_every_yaml_output_or_by_none(rlcat: Run, tmp_path: Path) -> None:
    """One rule for a value with a line break: every output that can hold it exactly writes it —
    the shell script quotes it, JSON escapes it, and every YAML output (compile's yaml format,
    `rlcat show`, the SkyPilot and KubeRay manifests) writes it as a `|` block that reads back as
    the same text; only the one-override-per-line form refuses it (RLC405), naming the others. The
    yaml format and `show` used to refuse what the YAML manifests of a launch wrote."""
    root = tmp_path / "catalog-folder"
    value = "first line\nsecond line"
    yaml_file(
        root / "recipes" / "named.yaml",
        {
            "name": "named",
            "extends": SHIPPED_RECIPE,
            "summary": "s",
            "trainer": {"experiment": value},
            "env": {"TEAM_NOTE": value},
        },
    )
    args = ["named", "--catalog", str(root)]
    compiled = rlcat("compile", *args, "--format", "yaml")
    assert compiled.code == 0, compiled.err
    assert yaml.safe_load(compiled.out)["trainer"]["experiment_name"] == value
    shown = rlcat("show", *args)
    assert shown.code == 0, shown.err
    data = yaml.safe_load(shown.out)
    assert data["trainer"]["experiment"] == value and data["env"]["TEAM_NOTE"] == value
    for target in ("skypilot", "kuberay"):
        out = tmp_path / f"{target}.yaml"
        launched = rlcat(
            "launch",
            *args,
            "--target",
            target,
            "--ray-auth-mode",
            "disabled",
            "--image",
            "registry.example/verl:1",
            "--emit",
            str(out),
        )
        assert launched.code == 0, (target, launched.err)
        assert "second line" in out.read_text(encoding="utf-8")
    assert json.loads(rlcat("compile", *args, "--format", "json").out)["env"]["TEAM_NOTE"] == value
    refused = rlcat("compile", *args, "--format", "overrides")
    assert refused.code == ExitCode.INPUT and " RLC405 error: " in refused.err
    assert "--format shell" in refused.err and "--format json" in refused.err


# --- the rules themselves ----------------------------------------------------------------------------

PRINTABLE_CASES = [
    ("plain", "recipes/x.yaml:3 ok", "recipes/x.yaml:3 ok"),
    ("tab-stays", "a\tb", "a\tb"),
    ("newline-cr", "a\nb\r\nc", "a\\nb\\r\\nc"),
    ("esc-osc52", "\x1b]52;c;Zm9v\x07", "\\x1b]52;c;Zm9v\\x07"),
    ("del-and-c1", "\x7f\x85\x9b", "\\x7f\\x85\\x9b"),
    (
        "bidi",
        "\u202a\u202e\u2066\u2069\u200e\u200f\u061c",
        "\\u202a\\u202e\\u2066\\u2069\\u200e\\u200f\\u061c",
    ),
    ("separators", "a\u2028b\u2029c", "a\\u2028b\\u2029c"),
    ("invisible-format", "\u00ad\u200b\ufeff\U000e0041", "\\xad\\u200b\\ufeff\\U000e0041"),
    ("legacy-command", "x ##[error]y ###[z", "x ##\\x5berror]y ###\\x5bz"),
    ("visible-unicode", "données 模型 \u00a0", "données 模型 \u00a0"),
]


@pytest.mark.parametrize(
    ("raw", "shown"), [c[1:] for c in PRINTABLE_CASES], ids=[c[0] for c in PRINTABLE_CASES]
)
def test_printable(raw: str, shown: str) -> None:
    assert printable(raw) == shown
    assert_inert(printable(raw))


WORDS = [
    ("plain", "trainer.total_epochs=15"),
    ("quotes-dollar-backticks", "it's \"x\" $HOME `id` $(id) \\ \\\\ \\'"),
    ("newline-command", "a\n; touch pwned-newline\n"),
    ("escape-sequences", "\x1b[2J\x1b]52;c;Zm9v\x07\x7f"),
    ("unicode-hidden", "\u202e\u2066\u2028\x85\u00ad"),
    ("unicode-visible-and-hidden", "模型\u202eé"),
    ("legacy-command", "##[error]x"),
    ("hex-digits-after-escape", "\x1bab\x1b0"),
]
LOCALES = ["C", "C.UTF-8"]


@needs_bash
@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("word", [c[1] for c in WORDS], ids=[c[0] for c in WORDS])
def test_shell_word_is_one_bash_word_with_the_exact_bytes(tmp_path: Path, word: str, locale: str) -> None:
    quoted = shell_word(word)
    assert_inert(quoted)
    script = tmp_path / "word.sh"
    script.write_text(f"printf '%s' {quoted}\n", encoding="utf-8")
    assert BASH is not None
    run = subprocess.run(
        [BASH, str(script)],
        cwd=tmp_path,
        env={"LC_ALL": locale, "PATH": os.environ["PATH"]},
        capture_output=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == word.encode("utf-8")
    assert_no_canary(tmp_path)


# --- machine-readable formats and usage errors --------------------------------------------------------

HIDDEN_AND_LEGACY = "a\u202eb\u2028::error::x\x85c\x9b31m##[error]d"


def assert_terminal_safe(text: str) -> None:
    assert "##[" not in text
    assert not any(unicodedata.category(c) in ("Cf", "Zl", "Zp") for c in text)
    assert not any(unicodedata.category(c) == "Cc" and c not in "\n" for c in text)
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())


def test_json_outputs_escape_what_a_terminal_or_ci_log_would_act_on(rlcat: Run) -> None:
    for args in (
        ["compile", SHIPPED_RECIPE, "--format", "json"],
        ["compile", SHIPPED_RECIPE, "--format", "json", "--explain"],
    ):
        result = rlcat(*args, "--set", f"trainer.experiment={json.dumps(HIDDEN_AND_LEGACY)}")
        assert result.code == 0, result.err
        assert_terminal_safe(result.out)
        plan = json.loads(result.out)  # the same value, once parsed
        assert any(HIDDEN_AND_LEGACY in o for o in plan["overrides"])


def test_yaml_outputs_refuse_what_they_cannot_show_safely(rlcat: Run) -> None:
    result = rlcat(
        "compile",
        SHIPPED_RECIPE,
        "--format",
        "yaml",
        "--set",
        f"trainer.experiment={json.dumps(HIDDEN_AND_LEGACY)}",
    )
    assert result.code == 2 and result.out == ""
    assert " RLC405 error: " in result.err
    assert_terminal_safe(result.err)


def test_usage_errors_show_the_arguments_escaped(rlcat: Run) -> None:
    for args in (
        ["compile", SHIPPED_RECIPE, "--x" + HIDDEN_AND_LEGACY],
        ["compile", "a", "b", HIDDEN_AND_LEGACY],
    ):
        result = rlcat(*args)
        assert result.code == 2
        assert_terminal_safe(result.err)
        assert "\\u202e" in result.err
