"""docs/ci.md stays true: its code blocks are the example files, the example workflow parses and
uses real actions, and every `rlcat` command in the doc and the workflow runs — with the options it
shows — clean on the shipped recipes and catalog, from a repository-like working directory."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlcat import __version__ as rlcat_version
from rlcat.cli import main
from rlcat.scaffold import HOOK, LINT_HOOK

from conftest import REPO, Result

Run = Callable[..., Result]
DOC = REPO / "docs" / "ci.md"
EXAMPLES = REPO / "docs" / "examples"
WORKFLOW = EXAMPLES / "rlcat-validate.yml"
# A fenced block, optionally preceded by `<!-- same as: PATH -->` (the block is that file, verbatim).
BLOCK = re.compile(
    r"(?:<!-- same as: (?P<path>\S+) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S
)


def _blocks(lang: str | None = None) -> list[re.Match[str]]:
    found = list(BLOCK.finditer(DOC.read_text(encoding="utf-8")))
    return [m for m in found if lang is None or m["lang"] == lang]


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    if True in data:  # YAML 1.1 reads the key `on` as a boolean; GitHub reads it as "on"
        data["on"] = data.pop(True)
    return data


def _steps() -> list[dict[str, Any]]:
    jobs = _workflow()["jobs"]
    assert list(jobs) == ["validate"]
    steps = jobs["validate"]["steps"]
    assert isinstance(steps, list)
    return steps


def _rlcat_commands(script: str) -> list[list[str]]:
    """The argument lists of the `rlcat ...` lines of a shell script (comments dropped)."""
    commands = []
    for line in script.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "rlcat":
            commands.append(words[1:])
    return commands


def test_doc_blocks_are_the_example_files() -> None:
    same = {m["path"]: m["body"] for m in _blocks() if m["path"]}
    examples = {p.relative_to(REPO).as_posix() for p in EXAMPLES.iterdir() if p.is_file()}
    assert set(same) == examples, "every example file is shown in docs/ci.md, and only those"
    for path, body in same.items():
        assert body == (REPO / path).read_text(encoding="utf-8"), f"docs/ci.md's copy of {path} differs"


def test_pre_commit_snippet_is_the_local_hook_pinned_to_this_rlcat() -> None:
    (snippet,) = [m["body"] for m in _blocks("yaml") if "repos:" in m["body"]]
    (repo,) = yaml.safe_load(snippet)["repos"]
    assert repo["repo"] == "local"
    pinned = [f"rlcat=={rlcat_version}"]
    assert repo["hooks"] == [{**hook, "additional_dependencies": pinned} for hook in (HOOK, LINT_HOOK)]
    provided = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    for hook in (HOOK, LINT_HOOK):
        assert {k: v for k, v in provided[hook["id"]].items() if k != "description"} == hook
    for line in snippet.splitlines():  # the commented-out `args:` show real options
        if "# args:" in line:
            for option in yaml.safe_load(line.split("# ", 1)[1].split("#")[0])["args"]:
                assert not option.startswith("-") or option in ("--strict", "--platform"), option


def test_workflow_parses_and_uses_real_actions() -> None:
    workflow = _workflow()
    assert {"recipes/**", "catalog/**"} <= set(workflow["on"]["pull_request"]["paths"])
    steps = _steps()
    uses = [step["uses"].split("@")[0] for step in steps if "uses" in step]
    assert uses == ["actions/checkout", "actions/setup-python", "github/codeql-action/upload-sarif"]
    (setup,) = [s for s in steps if s.get("uses", "").startswith("actions/setup-python@")]
    version = tuple(int(p) for p in str(setup["with"]["python-version"]).split("."))
    requires = re.search(r'requires-python = "(.*)"', (REPO / "pyproject.toml").read_text())
    assert requires and requires[1] == ">=3.10,<3.13" and (3, 10) <= version < (3, 13), "rlcat supports it"
    runs = [step["run"] for step in steps if "run" in step]
    assert any("pip install" in run and "rlcat" in run for run in runs)
    sarif_steps = [c for run in runs for c in _rlcat_commands(run) if "sarif" in c]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert [c[c.index("-o") + 1] for c in sarif_steps] == [upload["with"]["sarif_file"]]


@pytest.fixture
def recipes_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory laid out like a recipes repository, holding the shipped files."""
    for folder in ("recipes", "catalog"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    assert main(["schemas", "export"]) == 0  # as `rlcat init` writes them
    return tmp_path


def test_workflow_commands_run_clean_on_the_shipped_catalog(rlcat: Run, recipes_repo: Path) -> None:
    commands = [c for step in _steps() if "run" in step for c in _rlcat_commands(step["run"])]
    assert [c[:3] for c in commands] == [["validate", "recipes", "catalog"]] * 2 + [
        ["schemas", "export", "--check"]
    ]
    files = len(list(recipes_repo.rglob("*.yaml")))
    for args in commands:
        r = rlcat(*args)
        assert r.code == 0, (args, r.out, r.err)
        if "github" in args:
            *annotations, summary = r.out.splitlines()
            assert summary.startswith(f"{files} files checked: 0 error(s), 0 warning(s)"), r.out
            for line in annotations:
                command = re.match(r"::(error|warning|notice) file=([^,]+),line=\d+", line)
                assert command, line
                assert (recipes_repo / command[2]).is_file(), "annotation paths are relative to the repo root"
        if "sarif" in args:
            out = recipes_repo / args[args.index("-o") + 1]
            sarif = json.loads(out.read_text(encoding="utf-8"))
            assert sarif["version"] == "2.1.0"
            assert sarif["runs"][0]["tool"]["driver"]["name"] == "rlcat"
            assert all(res["level"] != "error" for res in sarif["runs"][0]["results"])


def test_doc_commands_run_clean_on_the_shipped_catalog(rlcat: Run, recipes_repo: Path) -> None:
    commands = [c for m in _blocks("bash") for c in _rlcat_commands(m["body"])]
    assert commands and all(c[0] == "validate" for c in commands)
    for args in commands:
        r = rlcat(*args)
        assert r.code == 0, (args, r.out, r.err)
    assert json.loads((recipes_repo / "rlcat-report.json").read_text())["summary"]["error"] == 0


def test_doc_exit_codes_match_the_cli(rlcat: Run, recipes_repo: Path) -> None:
    """The exit-code table: a missing path and an unknown option are 2, a bad file is 1."""
    assert rlcat("validate", "recipes", "nope").code == 2
    assert rlcat("validate", "recipes", "--no-such-option").code == 2
    (recipes_repo / "recipes" / "broken.yaml").write_text("name: broken\nalgorithm: [grpo\n")
    assert rlcat("validate", "recipes/broken.yaml").code == 1
    text = DOC.read_text(encoding="utf-8")
    for code in ("`0`", "`1`", "`2`"):
        assert f"| {code} |" in text
