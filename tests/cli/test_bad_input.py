"""Bad input never crashes rlcat: every case gets exit code 2 and one diagnostic at the right place.

The corpus is tests/bad_input/: one recipe file per case (sub-folders hold small user catalogs for
cases that need several files) and tests/bad_input/cases.yaml with the expected code, line, key and
message of each. Command-line mistakes are listed here. In every case rlcat must exit with 2,
print nothing on stdout, write no -o file, and never show a Python traceback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlcat.diagnostics import CODES, ExitCode

from conftest import REPO, Result

BAD = Path(__file__).parent.parent / "bad_input"
CASES: list[dict[str, Any]] = yaml.safe_load((BAD / "cases.yaml").read_text(encoding="utf-8"))
CASE_KEYS = {"file", "code", "line", "key", "message_contains", "hint_contains", "catalog", "at", "also"}
REQUIRED_KEYS = {"file", "code", "line", "key", "message_contains"}
# `<location> RLCnnn <severity>: <message>[ [key]]`, as Diagnostic.render writes it
DIAGNOSTIC = re.compile(r"^(?P<where>.+?) (?P<code>RLC\d{3}) (?P<severity>error|warning|info): (?P<rest>.*)$")
PAYLOAD_MARKER = "rlcat-tag-executed"  # what python_tag.yaml's payload would create in the cwd


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run from an empty folder, with no user catalog from the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    monkeypatch.delenv("RLCAT_TRACEBACK", raising=False)


def displayed(path: Path) -> str:
    """How diagnostics name a file of the checkout: relative to the data root (the checkout)."""
    return path.resolve().relative_to(REPO).as_posix()


def assert_refused(result: Result, output: Path | None) -> None:
    """Exit code 2, nothing on stdout, no traceback, and no output file (not even a partial one)."""
    assert result.code == ExitCode.INPUT, f"exit code {result.code}\nstderr:\n{result.err}"
    assert result.out == "", f"stdout should be empty:\n{result.out}"
    for stream in (result.out, result.err):
        assert "Traceback" not in stream
        assert "internal error" not in stream
    if output is not None:
        assert not output.exists(), f"{output} was written"
        leftovers = sorted(p.name for p in output.parent.iterdir()) if output.parent.exists() else []
        assert leftovers == [], f"files left next to the output: {leftovers}"


def diagnostic_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if DIAGNOSTIC.match(line)]


def hint_of(err: str, line: str) -> str | None:
    """The `  hint:` line printed right after a diagnostic line, if any."""
    lines = err.splitlines()
    after = lines[lines.index(line) + 1 :]
    if after and after[0].startswith("  hint: "):
        return after[0].removeprefix("  hint: ")
    return None


# --- the corpus ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_bad_recipe_file(rlcat: Callable[..., Result], tmp_path: Path, case: dict[str, Any]) -> None:
    output = tmp_path / "out" / "out.txt"
    args = ["compile", str(BAD / case["file"]), "--platform", "cuda", "-o", str(output)]
    if "catalog" in case:
        args += ["--catalog", str(BAD / case["catalog"])]
    result = rlcat(*args)
    assert_refused(result, output)

    where = displayed(BAD / case.get("at", case["file"]))
    expected = re.compile(rf"^{re.escape(where)}:{case['line']}(?::\d+)? {case['code']} error: ")
    found = [line for line in result.err.splitlines() if expected.match(line)]
    start = f"{where}:{case['line']}"
    assert len(found) == 1, f"expected one stderr line starting '{start}' with {case['code']}:\n{result.err}"
    line = found[0]
    if case["key"] is not None:
        assert line.endswith(f" [{case['key']}]"), f"key {case['key']!r} not named in: {line}"
    assert case["message_contains"] in line, line
    if "hint_contains" in case:
        hint = hint_of(result.err, line)
        assert hint is not None, f"no hint after: {line}"
        assert case["hint_contains"] in hint, hint


def test_yaml_tags_are_never_executed(rlcat: Callable[..., Result], tmp_path: Path) -> None:
    """python_tag.yaml's payload creates a file when a loader runs it; rlcat must refuse it unrun."""
    recipe = BAD / "python_tag.yaml"
    marker = tmp_path / PAYLOAD_MARKER
    assert PAYLOAD_MARKER in recipe.read_text(encoding="utf-8")
    for command in ("compile", "show"):
        result = rlcat(command, str(recipe))
        assert result.code == ExitCode.INPUT
        assert " RLC005 error: " in result.err
        assert not marker.exists(), f"rlcat {command} executed the YAML tag"
    # the control: an unsafe loader does run the payload, so the check above proves something
    yaml.unsafe_load(recipe.read_text(encoding="utf-8"))
    assert marker.exists()


def test_every_file_in_the_corpus_is_a_case() -> None:
    """Every file under tests/bad_input belongs to a case in cases.yaml, and every listed file exists."""
    listed: set[str] = set()
    for case in CASES:
        listed |= {case["file"], *case.get("also", [])}
        if "at" in case:
            listed.add(case["at"])
    on_disk = {p.relative_to(BAD).as_posix() for p in BAD.rglob("*") if p.is_file()} - {"cases.yaml"}
    assert sorted(on_disk - listed) == [], "files in tests/bad_input that cases.yaml does not list"
    assert sorted(listed - on_disk) == [], "files cases.yaml lists that do not exist"


def test_cases_are_well_formed() -> None:
    files = [c["file"] for c in CASES]
    assert len(files) == len(set(files)), "a file is listed twice"
    for case in CASES:
        assert REQUIRED_KEYS <= set(case) <= CASE_KEYS, case
        assert case["code"] in CODES, case
        assert isinstance(case["line"], int) and case["line"] >= 1, case
        assert case["key"] is None or isinstance(case["key"], str), case
        if "catalog" in case:
            assert (BAD / case["catalog"]).is_dir(), case
            assert case["file"].startswith(case["catalog"] + "/"), case
        else:
            assert "/" not in case["file"], f"a single-file case lives at the top of bad_input: {case}"


def test_corpus_covers_every_input_diagnostic() -> None:
    """The corpus has at least one case for each code a recipe file can trigger."""
    covered = {c["code"] for c in CASES}
    wanted = {f"RLC00{n}" for n in range(2, 9)} | {f"RLC10{n}" for n in range(1, 5)}
    wanted |= {"RLC201", "RLC202", "RLC203", "RLC301", "RLC302", "RLC401", "RLC402", "RLC405"}
    assert sorted(wanted - covered) == []


# --- command-line mistakes -----------------------------------------------------------------------

# (id, arguments after `rlcat`, code or None for a usage error, key, texts stderr must contain)
# fmt: off
CLI_CASES: list[tuple[str, list[str], str | None, str | None, list[str]]] = [
    ("unknown-recipe", ["compile", "geo3k_megatron_44"], "RLC201", None,
     ["unknown recipe 'geo3k_megatron_44'", "did you mean 'geo3k_megatron_4_4'"]),
    ("unknown-platform", ["compile", "geo3k_megatron_4_4", "--platform", "rocmm"], "RLC204", None,
     ["unknown platform 'rocmm'", "did you mean 'rocm'"]),
    ("unknown-engine", ["compile", "geo3k_megatron_4_4", "--engine", "trtllm"], None, None,
     ["trtllm", "vllm", "sglang"]),
    ("unknown-mode", ["compile", "geo3k_megatron_4_4", "--mode", "async"], None, None,
     ["'async'", "fully_async"]),
    ("mode-not-allowed", ["compile", "geo3k_megatron_4_4", "--mode", "colocate"], "RLC205", "variants.mode",
     ["does not allow mode 'colocate'"]),
    ("set-unknown-field", ["compile", "geo3k_megatron_4_4", "--set", "batch.nope=1"], "RLC101", "batch.nope",
     ["unknown field 'nope'"]),
    ("set-wrong-type", ["compile", "geo3k_megatron_4_4", "--set", "batch.mini_batch_size=abc"], "RLC102",
     "batch.mini_batch_size", ["expected an integer"]),
    ("set-identity-field", ["compile", "geo3k_megatron_4_4", "--set", "model=qwen3_8b"], "RLC101", "model",
     ["cannot set 'model'"]),
    ("set-no-equals", ["compile", "geo3k_megatron_4_4", "--set", "noequals"], "RLC105", None,
     ["--set expects section.field=value", "'noequals'"]),
    ("set-empty-key", ["compile", "geo3k_megatron_4_4", "--set", "batch.=1"], "RLC105", None, ["--set"]),
    ("override-unknown-key",
     ["compile", "geo3k_megatron_4_4", "--override", "actor_rollout_ref.rollout.nme=vllm"], "RLC401",
     "actor_rollout_ref.rollout.nme", ["did you mean 'actor_rollout_ref.rollout.name'"]),
    ("override-wrong-type", ["compile", "geo3k_megatron_4_4", "--override", "trainer.total_epochs=ten"],
     "RLC402", "trainer.total_epochs", ["got 'ten'"]),
    ("override-no-equals", ["compile", "geo3k_megatron_4_4", "--override", "noequals"], "RLC105", None,
     ["--override expects verl.key=value"]),
    # closed choices are Typer's: a usage error that names the option and lists the choices
    ("unknown-format", ["compile", "geo3k_megatron_4_4", "--format", "xml"], None, None,
     ["--format", "'xml'", "'overrides'"]),
    ("unknown-engine", ["compile", "geo3k_megatron_4_4", "--engine", "trt"], None, None,
     ["--engine", "'trt'", "'sglang'"]),
    ("no-such-file", ["compile", "does/not/exist.yaml"], "RLC001", None, ["does/not/exist.yaml"]),
    ("directory-not-file", ["compile", str(BAD / "extends_cycle/recipes/")], "RLC001", None, ["directory"]),
    ("unknown-option", ["compile", "geo3k_megatron_4_4", "--bogus"], None, None, ["--bogus"]),
    ("missing-argument", ["compile"], None, None, ["Missing argument 'RECIPE'"]),
]
# fmt: on


@pytest.mark.parametrize(
    ("args", "code", "key", "texts"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_bad_command_line(
    rlcat: Callable[..., Result],
    tmp_path: Path,
    args: list[str],
    code: str | None,
    key: str | None,
    texts: list[str],
) -> None:
    output = tmp_path / "out" / "out.txt"
    result = rlcat(*args, "-o", str(output)) if args != ["compile"] else rlcat(*args)
    assert_refused(result, output)
    for text in texts:
        assert text in result.err, f"{text!r} not in stderr:\n{result.err}"
    if code is None:
        return
    errors = [line for line in diagnostic_lines(result.err) if f" {code} error: " in line]
    assert len(errors) == 1, f"expected one {code} error in stderr:\n{result.err}"
    if key is not None:
        assert errors[0].endswith(f" [{key}]"), errors[0]


@pytest.mark.parametrize(
    "args",
    [
        ["--set", "batch.nope=1"],
        ["--set", "batch.mini_batch_size=abc"],
        ["--set", "batch.mini_batch_size=0"],
        ["--set", "trainer.logger=console"],
    ],
    ids=["unknown-field", "wrong-type", "out-of-range", "not-a-list"],
)
def test_errors_in_command_line_values_do_not_blame_the_recipe_file(
    rlcat: Callable[..., Result], args: list[str]
) -> None:
    """A bad --set value has no file position; the finding must not point into the recipe."""
    result = rlcat("compile", "geo3k_megatron_4_4", *args)
    assert_refused(result, None)
    errors = [line for line in diagnostic_lines(result.err) if " error: " in line]
    assert errors, result.err
    for line in errors:
        assert not line.startswith("recipes/"), f"blames the recipe file for a command-line value: {line}"


@pytest.mark.parametrize(
    ("args", "code", "texts"),
    [
        (["show", "geo3k_megatron_44"], "RLC201", ["did you mean 'geo3k_megatron_4_4'"]),
        (["show", "geo3k_megatron_4_4", "--platform", "rocmm"], "RLC204", ["did you mean 'rocm'"]),
        (["show", str(BAD / "duplicate_key.yaml")], "RLC003", ["duplicate key 'engine'"]),
        (["list", "--format", "xml"], None, ["--format", "'xml'", "'table'"]),
        (["nosuchcommand"], None, ["nosuchcommand"]),
    ],
    ids=["show-unknown", "show-platform", "show-bad-file", "list-format", "no-command"],
)
def test_bad_input_to_other_commands(
    rlcat: Callable[..., Result], args: list[str], code: str | None, texts: list[str]
) -> None:
    result = rlcat(*args)
    assert_refused(result, None)
    for text in texts:
        assert text in result.err, f"{text!r} not in stderr:\n{result.err}"
    if code is not None:
        assert any(f" {code} error: " in line for line in diagnostic_lines(result.err)), result.err


@pytest.mark.parametrize(
    "where", ["a-directory", "a-file/out.txt"], ids=["output-is-a-directory", "parent-is-a-file"]
)
def test_unwritable_output_is_bad_input(rlcat: Callable[..., Result], tmp_path: Path, where: str) -> None:
    """`-o` naming a folder, or a path below a file, is a usage problem (exit 2), not a crash (exit 3)."""
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "a-file").write_text("keep me\n", encoding="utf-8")
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    result = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "-o", str(tmp_path / where))
    assert result.code == ExitCode.INPUT, f"exit code {result.code}\nstderr:\n{result.err}"
    assert result.out == ""
    assert "Traceback" not in result.err
    assert "internal error" not in result.err
    assert where.partition("/")[0] in result.err
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "keep me\n"


def test_list_reports_a_broken_user_recipe(rlcat: Callable[..., Result]) -> None:
    """A user catalog with an extends cycle: `rlcat list` names the problem instead of crashing.

    (Whether it still lists the good recipes, with exit code 1, or refuses with 2 is left open here.)
    """
    result = rlcat("list", "--catalog", str(BAD / "extends_cycle"))
    assert result.code in (ExitCode.FINDINGS, ExitCode.INPUT), result.err
    assert "Traceback" not in result.out + result.err
    assert any(" RLC203 error: " in line for line in diagnostic_lines(result.err)), result.err
