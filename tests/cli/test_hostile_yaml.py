"""Hostile YAML: text that reads differently than it shows, and values YAML 1.1 reads differently.

- U+0085, U+2028 and U+2029 are line breaks to YAML but not to editors, grep or GitHub, so a
  "comment" holding one can carry live YAML. Outside a quoted string they are refused (RLC009) at
  the line and column people see, in recipes, catalog entries, platform profiles and --set values;
  inside quotes they are data, and the lines after them are still counted as people count them.
- Plain scalars are read as YAML 1.2's core schema reads them (`yes`, `on`, `64:00` are text). When
  the schema refuses such a value, the hint says what YAML 1.1 would have read; `010` (8 or 10) is
  refused outright (RLC010).
- A --set value YAML would cut short or take as markup (`run #3` would be 'run', `--- a` would be
  'a') is refused (RLC105), naming the argument and giving the quoted form.

Every file is written to tmp_path and checked with `rlcat validate` (reports on stdout, exit 1 for
findings) or `rlcat compile` (exit 2, diagnostics on stderr).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.diagnostics import ExitCode

from conftest import REPO, Result

Run = Callable[..., Result]
SEED = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text(encoding="utf-8")
CUDA = (REPO / "catalog" / "platforms" / "cuda.yaml").read_text(encoding="utf-8")

# One valid file of each kind, named `hostile`, and where `rlcat validate` finds its kind.
FILES: dict[str, tuple[str, str]] = {
    "recipe": ("recipes/hostile.yaml", SEED.replace("name: gsm8k_qwen3_8b_fsdp", "name: hostile")),
    "model": (
        "catalog/models/hostile.yaml",
        "name: hostile\nhf_id: org/hostile\nfamily: qwen3\nsize: 8B\nmax_position_embeddings: 4096\n",
    ),
    "dataset": (
        "catalog/datasets/hostile.yaml",
        "name: hostile\nsummary: a dataset\ntrain_files: [a.parquet]\nval_files: [b.parquet]\n"
        "preprocessing: python3 prep.py\nreward: exact match\n",
    ),
    "platform": ("catalog/platforms/hostile.yaml", re.sub("^name: cuda$", "name: hostile", CUDA, flags=re.M)),
}
BREAKS = {
    "U+2028 LINE SEPARATOR": "\u2028",
    "U+2029 PARAGRAPH SEPARATOR": "\u2029",
    "U+0085 NEXT LINE": "\x85",
}
# A line appended to a file, with `{ch}` where the hidden line break goes: what people see is one
# comment, one odd key or one value; what YAML reads is two lines.
PLACES = {
    "comment": "# reviewed by the maintainers{ch}env: {{LD_PRELOAD: /tmp/evil.so}}",
    "key": "notes{ch}hf_id: evil/model: x",
    "plain-value": "notes: looks fine{ch}trust_remote_code: true",
}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run from tmp_path (diagnostics name files relative to it), with no user catalog from RLCAT_PATH."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)


def write(tmp_path: Path, kind: str, text: str) -> Path:
    path = tmp_path / FILES[kind][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def validate(rlcat: Run, path: Path) -> tuple[int, list[dict[str, Any]]]:
    result = rlcat("validate", str(path), "--format", "json", "--platform", "cuda")
    assert "Traceback" not in result.out + result.err
    return result.code, json.loads(result.out)["diagnostics"]


def found(diagnostics: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return [(d["code"], d["line"], d["col"]) for d in diagnostics]


def first_diagnostic(err: str) -> str:
    return next(line for line in err.splitlines() if " error: " in line)


def hint_after(err: str, line: str) -> str:
    following = err.splitlines()[err.splitlines().index(line) + 1]
    assert following.startswith("  hint: "), err
    return following.removeprefix("  hint: ")


# --- hidden line breaks ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", FILES)
def test_the_clean_files_validate(rlcat: Run, tmp_path: Path, kind: str) -> None:
    """The control: without the hidden characters every file of the table is valid."""
    code, diagnostics = validate(rlcat, write(tmp_path, kind, FILES[kind][1]))
    assert (code, diagnostics) == (0, [])


@pytest.mark.parametrize("name", BREAKS)
@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("kind", FILES)
def test_hidden_line_break_is_refused_where_people_see_it(
    rlcat: Run, tmp_path: Path, kind: str, place: str, name: str
) -> None:
    character = BREAKS[name]
    appended = PLACES[place].format(ch=character)
    base = FILES[kind][1]
    path = write(tmp_path, kind, base + appended + "\n")
    line, col = base.count("\n") + 1, appended.index(character) + 1

    code, diagnostics = validate(rlcat, path)
    assert code == ExitCode.FINDINGS
    assert found(diagnostics) == [("RLC009", line, col)]
    assert diagnostics[0]["file"] == FILES[kind][0]
    assert name in diagnostics[0]["message"] and name in diagnostics[0]["hint"]


def test_a_hidden_line_break_in_a_comment_hides_live_yaml(rlcat: Run, tmp_path: Path) -> None:
    """The attack, compiled: a comment that carries an env var is refused (exit 2), while the same
    line with a space instead of U+2028 is the comment it looks like."""
    hostile = "# reviewed by the maintainers{}env: {{LD_PRELOAD: /tmp/evil.so}}\n"
    path = write(tmp_path, "recipe", FILES["recipe"][1] + hostile.format("\u2028"))
    result = rlcat("compile", str(path), "--format", "shell")
    assert (result.code, result.out) == (ExitCode.INPUT, "")
    line = FILES["recipe"][1].count("\n") + 1
    assert first_diagnostic(result.err).startswith(f"recipes/hostile.yaml:{line}:30 RLC009 error: ")
    assert "LD_PRELOAD" not in result.err

    write(tmp_path, "recipe", FILES["recipe"][1] + hostile.format(" "))
    result = rlcat("compile", str(path), "--format", "shell")
    assert result.code == 0, result.err
    assert "LD_PRELOAD" not in result.out


def test_every_hidden_line_break_is_reported_at_its_own_line(rlcat: Run, tmp_path: Path) -> None:
    """Lines are counted at \\n only: the break on line 2 does not push the one on line 4 to line 5."""
    text = "name: hostile\n# one\u2028two\nhf_id: org/hostile\nfamily: qwen3 \x85size: 8B\n"
    code, diagnostics = validate(rlcat, write(tmp_path, "model", text + "max_position_embeddings: 4096\n"))
    assert code == ExitCode.FINDINGS
    assert found(diagnostics) == [("RLC009", 2, 6), ("RLC009", 4, 15)]


@pytest.mark.parametrize("quote", ['"', "'"], ids=["double", "single"])
@pytest.mark.parametrize("name", BREAKS)
@pytest.mark.parametrize("kind", ["model", "dataset"])
def test_a_quoted_string_may_hold_them(rlcat: Run, tmp_path: Path, kind: str, name: str, quote: str) -> None:
    """Inside quotes the character is data: the file is valid."""
    text = FILES[kind][1] + f"notes: {quote}first{BREAKS[name]}second{quote}\n"
    assert validate(rlcat, write(tmp_path, kind, text)) == (0, [])


def test_lines_after_a_quoted_one_are_counted_as_people_count_them(rlcat: Run, tmp_path: Path) -> None:
    """PyYAML counts U+2028 as a line; a finding further down still points at the line people see."""
    text = FILES["model"][1] + 'notes: "one\u2028two\u2029three"\nmoe: 1\n'
    code, diagnostics = validate(rlcat, write(tmp_path, "model", text))
    assert code == ExitCode.FINDINGS
    assert [(d["code"], d["line"], d["col"], d["key"]) for d in diagnostics] == [("RLC102", 7, 1, "moe")]


@pytest.mark.parametrize("name", BREAKS)
def test_hidden_line_break_in_a_set_value_is_refused(rlcat: Run, name: str) -> None:
    result = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "--set", f"trainer.experiment=run{BREAKS[name]}x: 1")
    assert (result.code, result.out) == (ExitCode.INPUT, "")
    line = first_diagnostic(result.err)
    assert line.startswith("--set trainer.experiment=run") and " RLC009 error: " in line
    assert name in line and name in hint_after(result.err, line)


def test_a_quoted_set_value_may_hold_one(rlcat: Run) -> None:
    """In YAML quotes the character is data: no RLC009 (the plan's writers decide how to print it)."""
    result = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "--set", 'trainer.experiment="run\u2028x"', "-f", "json")
    assert " RLC009 " not in result.err
    assert result.code == 0, result.err
    assert 'trainer.experiment_name="run\u2028x"' in json.loads(result.out)["overrides"]


# --- YAML 1.1 values in files ---------------------------------------------------------------------

# (id, recipe line, replacement, code, key, texts the hint holds) for values the schema refuses; the
# finding points at the key, as schema findings do, and RLC010 at the value
# fmt: off
REFUSED_IN_FILES: list[tuple[str, str, str, str, str, list[str]]] = [
    ("yes-in-a-bool", "dynamic_batch_size: true", "dynamic_batch_size: yes", "RLC102",
     "batch.dynamic_batch_size", ["YAML 1.1 would have read yes as true", "the string 'yes'", "write true"]),
    ("off-in-a-bool", "dynamic_batch_size: true", "dynamic_batch_size: off", "RLC102",
     "batch.dynamic_batch_size", ["YAML 1.1 would have read off as false", "the string 'off'"]),
    ("y-in-a-bool", "balance_batch: true", "balance_batch: y", "RLC102",
     "trainer.balance_batch", ["YAML 1.1 would have read y as true"]),
    ("sexagesimal-in-an-int", "epochs: 15", "epochs: 1:30", "RLC102",
     "trainer.epochs", ["YAML 1.1 would have read 1:30 as the number 90", "the string '1:30'"]),
    ("underscores-in-an-int", "epochs: 15", "epochs: 1_5", "RLC102",
     "trainer.epochs", ["the number 15", "the string '1_5'"]),
    ("leading-zero-text", "experiment: qwen3_8b_grpo_fsdp", "experiment: 08", "RLC102",
     "trainer.experiment", ["YAML 1.1 would have read 08 as the string '08'", "the number 8", "quote it"]),
    ("octal-or-decimal", "epochs: 15", "epochs: 010", "RLC010",
     "trainer.epochs", ["write 10 or 8"]),
]
# (id, recipe line, replacement, the override the YAML 1.2 reading compiles to)
READ_AS_YAML_12: list[tuple[str, str, str, str]] = [
    ("time-is-text", "experiment: qwen3_8b_grpo_fsdp", "experiment: 64:00",
     'trainer.experiment_name="64:00"'),
    ("yes-is-text", "project: verl_grpo_gsm8k_math", "project: yes", "trainer.project_name=yes"),
    ("on-in-a-list-is-text", "logger: [console, wandb]", "logger: [console, on]",
     "trainer.logger=[console,on]"),
    ("octal-0o", "epochs: 15", "epochs: 0o17", "trainer.total_epochs=15"),
    ("hexadecimal", "epochs: 15", "epochs: 0xF", "trainer.total_epochs=15"),
    ("exponent-is-a-number", "optim: {lr: 1.0e-6}", "optim: {lr: 3e-6}",
     "actor_rollout_ref.actor.optim.lr=3e-06"),
    ("true-in-capitals", "balance_batch: true", "balance_batch: TRUE", "trainer.balance_batch=True"),
]
# fmt: on


def recipe_with(old: str, new: str) -> tuple[str, int, int]:
    """The seed recipe with one line changed, and the line and column of the changed key."""
    assert SEED.count(old) == 1, old
    text = FILES["recipe"][1].replace(old, new)
    offset = text.index(new)
    return text, text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


@pytest.mark.parametrize(
    ("old", "new", "code", "key", "hints"),
    [c[1:] for c in REFUSED_IN_FILES],
    ids=[c[0] for c in REFUSED_IN_FILES],
)
def test_yaml_11_value_refused_by_the_schema_says_why(
    rlcat: Run, tmp_path: Path, old: str, new: str, code: str, key: str, hints: list[str]
) -> None:
    text, line, col = recipe_with(old, new)
    if code == "RLC010":
        col += new.index(" ") + 1
    path = write(tmp_path, "recipe", text)
    status, diagnostics = validate(rlcat, path)
    assert status == ExitCode.FINDINGS
    assert [(d["code"], d["line"], d["col"], d["key"]) for d in diagnostics] == [(code, line, col, key)]
    for hint in hints:
        assert hint in diagnostics[0]["hint"], diagnostics[0]["hint"]
    assert rlcat("compile", str(path)).code == ExitCode.INPUT


@pytest.mark.parametrize(
    ("old", "new", "override"), [c[1:] for c in READ_AS_YAML_12], ids=[c[0] for c in READ_AS_YAML_12]
)
def test_plain_scalars_are_read_as_yaml_12(
    rlcat: Run, tmp_path: Path, old: str, new: str, override: str
) -> None:
    path = write(tmp_path, "recipe", recipe_with(old, new)[0])
    result = rlcat("compile", str(path))
    assert result.code == 0, result.err
    assert override in result.out.splitlines()


def test_yaml_11_value_in_a_catalog_entry_says_why(rlcat: Run, tmp_path: Path) -> None:
    """`trust_remote_code: on` in a user catalog's model is the string 'on' to YAML 1.2: refused, with
    the hint when compiled (rlcat validate reports the finding; its hint is validate_files' to add)."""
    write(tmp_path, "model", FILES["model"][1] + "trust_remote_code: on\n")
    write(tmp_path, "recipe", FILES["recipe"][1].replace("model: qwen3_8b", "model: hostile"))
    result = rlcat("compile", "hostile", "--catalog", str(tmp_path))
    assert (result.code, result.out) == (ExitCode.INPUT, "")
    line = first_diagnostic(result.err)
    assert line.startswith("catalog/models/hostile.yaml:6:1 RLC102 error: expected true or false, got 'on'")
    assert "YAML 1.1 would have read on as true" in hint_after(result.err, line)

    code, diagnostics = validate(rlcat, tmp_path / FILES["model"][0])
    assert code == ExitCode.FINDINGS
    assert [(d["code"], d["line"], d["key"]) for d in diagnostics] == [("RLC102", 6, "trust_remote_code")]


def test_explicit_tags_read_the_same_in_both_versions(rlcat: Run, tmp_path: Path) -> None:
    """`!!str yes` is text in YAML 1.1 too: no note claims otherwise; `!!bool yes` is not YAML 1.2."""
    text, line, col = recipe_with("dynamic_batch_size: true", "dynamic_batch_size: !!str yes")
    code, diagnostics = validate(rlcat, write(tmp_path, "recipe", text))
    assert code == ExitCode.FINDINGS
    assert [(d["code"], d["line"]) for d in diagnostics] == [("RLC102", line)]
    assert "YAML 1.1" not in (diagnostics[0]["hint"] or "")

    text, line, col = recipe_with("dynamic_batch_size: true", "dynamic_batch_size: !!bool yes")
    _, diagnostics = validate(rlcat, write(tmp_path, "recipe", text))
    assert [(d["code"], d["line"], d["col"]) for d in diagnostics] == [("RLC002", line, col + 20)]
    assert "'yes' is not a valid bool" in diagnostics[0]["message"]


# --- --set values ---------------------------------------------------------------------------------

# (id, the --set argument, code, texts of the diagnostic line, texts of its hint)
# fmt: off
REFUSED_SETS: list[tuple[str, str, str, list[str], list[str]]] = [
    ("comment", "trainer.experiment=run #3", "RLC105", ["YAML comment", "the string 'run'"],
     ["""--set 'trainer.experiment="run #3"'"""]),
    ("document-start", "trainer.experiment=--- a", "RLC105", ["document marker (`---`)", "the string 'a'"],
     ["""--set 'trainer.experiment="--- a"'"""]),
    ("document-end", "trainer.experiment=...", "RLC105", ["document marker (`...`)"],
     ["""--set 'trainer.experiment="..."'"""]),
    ("anchor", "trainer.experiment=&a x", "RLC105", ["anchor", "the string 'x'"], ["double quotes"]),
    ("block-scalar", "trainer.experiment=|", "RLC105", ["block scalar", "the string ''"], ["double quotes"]),
    ("comment-after-a-list", "trainer.logger=[console] # wandb", "RLC105", ["YAML comment"],
     ["double quotes"]),
    ("yes-in-a-bool", "batch.dynamic_batch_size=yes", "RLC102", ["expected true or false, got 'yes'"],
     ["YAML 1.1 would have read yes as true", "the string 'yes'"]),
    ("no-in-a-mapping", "actor.offload={param: no}", "RLC102", ["expected true or false, got 'no'"],
     ["YAML 1.1 would have read no as false"]),
    ("octal-or-decimal", "trainer.epochs=010", "RLC010", ["8 in YAML 1.1", "10 in YAML 1.2"],
     ["write 10 or 8"]),
]
# (id, the --set argument, the override it compiles to)
READ_SETS: list[tuple[str, str, str]] = [
    ("quoted-hash", 'trainer.experiment="run #3"', 'trainer.experiment_name="run #3"'),
    ("hash-inside-a-word", "trainer.experiment=a#b", 'trainer.experiment_name="a#b"'),
    ("time-is-text", "trainer.experiment=64:00", 'trainer.experiment_name="64:00"'),
    ("no-is-text", "trainer.project=no", "trainer.project_name=no"),
    ("octal-0o", "trainer.epochs=0o17", "trainer.total_epochs=15"),
    ("dashes-inside-text", "trainer.experiment=a --- b", 'trainer.experiment_name="a --- b"'),
]
# fmt: on


@pytest.mark.parametrize(
    ("assignment", "code", "texts", "hints"), [c[1:] for c in REFUSED_SETS], ids=[c[0] for c in REFUSED_SETS]
)
def test_set_value_yaml_would_misread_is_refused_naming_it(
    rlcat: Run, assignment: str, code: str, texts: list[str], hints: list[str]
) -> None:
    result = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "--set", assignment)
    assert (result.code, result.out) == (ExitCode.INPUT, "")
    line = first_diagnostic(result.err)
    assert line.startswith(f"--set {assignment} {code} error: "), result.err
    for text in texts:
        assert text in line, line
    hint = hint_after(result.err, line)
    for text in hints:
        assert text in hint, hint


@pytest.mark.parametrize(
    ("assignment", "override"), [c[1:] for c in READ_SETS], ids=[c[0] for c in READ_SETS]
)
def test_set_values_are_read_as_yaml_12(rlcat: Run, assignment: str, override: str) -> None:
    result = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "--set", assignment)
    assert result.code == 0, result.err
    assert override in result.out.splitlines()
