"""The project file (rlcat.toml, or [tool.rlcat] in pyproject.toml): found upward from the working
folder, its catalog folders searched by every command, its settings shown by `rlcat config`, and
every mistake in it a diagnostic at its file, line and key."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import REPO, Result

Run = Callable[..., Result]
PARENT = "gsm8k_qwen3_8b_fsdp"


def _team(root: Path, project: str | None = "", *, pyproject: bool = False) -> Path:
    """A team repository: a base recipe of its own, a child of it, and a model entry of its own."""
    (root / "recipes" / "team").mkdir(parents=True)
    (root / "catalog" / "models").mkdir(parents=True)
    seed = (REPO / "recipes" / f"{PARENT}.yaml").read_text(encoding="utf-8")
    base = seed.replace(f"\nname: {PARENT}\n", "\nname: team_base\n")
    base = base.replace("\nmodel: qwen3_8b\n", "\nmodel: team_model\n")
    assert "model: team_model" in base
    (root / "recipes" / "team_base.yaml").write_text(base, encoding="utf-8")
    (root / "recipes" / "team" / "team_child.yaml").write_text(
        "extends: team_base\nname: team_child\nbatch:\n  mini_batch_size: 32\n", encoding="utf-8"
    )
    model = (REPO / "catalog" / "models" / "qwen3_8b.yaml").read_text(encoding="utf-8")
    (root / "catalog" / "models" / "team_model.yaml").write_text(
        model.replace("name: qwen3_8b", "name: team_model"), encoding="utf-8"
    )
    if project is not None:
        if pyproject:
            text = '[project]\nname = "team"\n\n[tool.rlcat]\n' + project
            (root / "pyproject.toml").write_text(text, encoding="utf-8")
        else:
            (root / "rlcat.toml").write_text(project, encoding="utf-8")
    return root


@pytest.mark.parametrize("pyproject", [False, True], ids=["rlcat.toml", "pyproject.toml"])
def test_every_command_finds_the_team_catalog_from_a_subfolder(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pyproject: bool
) -> None:
    team = _team(tmp_path / "team", pyproject=pyproject)
    monkeypatch.chdir(team / "recipes" / "team")
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    compiled = rlcat("compile", "team_child", "--platform", "rocm")
    assert compiled.code == 0, compiled.err
    assert "actor_rollout_ref.actor.ppo_mini_batch_size=32" in compiled.out
    shown = rlcat("show", "team_child")
    assert shown.code == 0 and "team_model" in shown.out, shown.err
    explained = rlcat("explain", "team_child", "actor_rollout_ref.actor.ppo_mini_batch_size")
    assert explained.code == 0 and "team_child.yaml" in explained.out, explained.err
    listed = rlcat("list", "--format", "json")
    names = {row["name"] for row in json.loads(listed.out)}
    assert {"team_base", "team_child", PARENT} <= names
    assert rlcat("diff", "team_child", "team_base").code == 0
    assert rlcat("matrix", "team_child", "--platform", "cuda").code == 0


def test_without_a_project_the_team_catalog_is_not_searched(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = _team(tmp_path / "team", project=None)
    monkeypatch.chdir(team)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    result = rlcat("compile", "team_child")
    assert result.code == 2 and "RLC201 error: unknown recipe 'team_child'" in result.err


def test_a_recipe_path_brings_its_own_catalog(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No project file: the folder above the recipes/ folder a recipe file sits in is searched, so
    its parent and its model entry are found, and the regenerate line repeats --catalog."""
    team = _team(tmp_path / "team", project=None)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    child = team / "recipes" / "team" / "team_child.yaml"
    assert rlcat("compile", str(child)).code == 0
    compiled = rlcat("compile", str(child), "--format", "shell", "--catalog", str(team))
    assert compiled.code == 0, compiled.err
    assert "--format shell" in compiled.out.splitlines()[2]
    assert f"--catalog {team}" in compiled.out.splitlines()[2]
    assert rlcat("show", str(child)).code == 0


def test_rlcat_toml_wins_over_pyproject_and_a_pyproject_without_the_table_is_passed_by(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "rlcat.toml").write_text('platforms = ["rocm"]\n', encoding="utf-8")
    inner = outer / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.ruff]\nline-length = 1\n', encoding="utf-8"
    )
    monkeypatch.chdir(inner)
    shown = json.loads(rlcat("config", "--format", "json").out)
    assert shown["project_file"] == str(outer / "rlcat.toml")
    (inner / "rlcat.toml").write_text("strict = true\n", encoding="utf-8")
    (inner / "pyproject.toml").write_text("[tool.rlcat]\nstrict = false\n", encoding="utf-8")
    shown = json.loads(rlcat("config", "--format", "json").out)
    assert shown["project_file"] == str(inner / "rlcat.toml")
    strict = next(row for row in shown["settings"] if row["setting"] == "strict")
    assert strict == {"setting": "strict", "value": True, "source": f"{inner / 'rlcat.toml'}:1"}


def test_config_shows_each_setting_and_where_it_comes_from(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    team = _team(
        tmp_path / "team",
        '# team settings\nplatforms = ["rocm", "cuda"]\nschemas = "editor/schemas"\n\n'
        '[allow]\nRLC303 = "our image carries SGLang"\n',
    )
    monkeypatch.chdir(team)
    monkeypatch.setenv("RLCAT_PATH", str(extra))
    result = rlcat("config", "--catalog", str(tmp_path))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == f"project file: {team / 'rlcat.toml'}"
    catalog_rows = [line.split() for line in lines if line.startswith("catalog")]
    assert [row[1] for row in catalog_rows] == [str(tmp_path), str(extra), str(team), str(REPO)]
    assert "RLCAT_PATH" in " ".join(catalog_rows[1]) and "built-in" in catalog_rows[3]
    rows = {row["setting"]: row for row in json.loads(rlcat("config", "-f", "json").out)["settings"]}
    assert rows["platforms"]["value"] == ["rocm", "cuda"]
    assert rows["platforms"]["source"] == f"{team / 'rlcat.toml'}:2"
    assert rows["schemas"] == {
        "setting": "schemas",
        "value": str(team / "editor" / "schemas"),
        "source": f"{team / 'rlcat.toml'}:3",
    }
    assert rows["allow"]["value"] == {"RLC303": "our image carries SGLang"}
    assert rows["strict"] == {"setting": "strict", "value": False, "source": "default"}


def test_validate_checks_the_project_on_its_platforms_and_strictness(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = _team(tmp_path / "team", 'platforms = ["rocm"]\nstrict = true\n')
    # a warning-level finding: a user entry that replaces a built-in one (RLC206)
    model = (REPO / "catalog" / "models" / "qwen3_8b.yaml").read_text(encoding="utf-8")
    (team / "catalog" / "models" / "qwen3_8b.yaml").write_text(model + "# ours\n", encoding="utf-8")
    monkeypatch.chdir(team)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    result = rlcat("validate", "--format", "json")
    report = json.loads(result.out)
    assert report["files"] == 4  # the team's files only, not rlcat's own catalog
    codes = {d["code"] for d in report["diagnostics"]}
    assert codes == {"RLC206"}, report
    assert result.code == 1  # strict = true in the project: the warning fails the check
    assert rlcat("validate", "--no-strict").code == 0
    on = [d["message"] for d in report["diagnostics"]]
    assert on and all("(on " not in m for m in on)  # one platform: nothing said per platform


@pytest.mark.parametrize(
    ("text", "code", "line", "message"),
    [
        ('platforms = ["rocm"\n', "RLC013", 2, "not valid TOML"),
        ("strict = true\nplatfroms = []\n", "RLC101", 2, "platfroms"),
        ('strict = "yes"\n', "RLC102", 1, "strict"),
        ('\n\n[allow]\nRLC999 = "x"\nRLC101 = "no"\n', "RLC103", 5, "RLC101"),
        ('catalog = ["missing"]\n', "RLC001", None, "no such folder"),
    ],
    ids=["toml-syntax", "unknown-key", "wrong-type", "bad-allow-id", "missing-catalog"],
)
def test_a_bad_project_file_is_a_diagnostic_at_its_line(
    rlcat: Run,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    code: str,
    line: int | None,
    message: str,
) -> None:
    (tmp_path / "rlcat.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for args in (("compile", PARENT), ("config",), ("validate",), ("list",)):
        result = rlcat(*args)
        assert result.code == 2, (args, result.err)
        assert result.out == "" and "Traceback" not in result.err
        first = result.err.splitlines()[0]
        assert f" {code} error: " in first and message in result.err, result.err
        if line is not None:
            assert re.match(re.escape(f"{tmp_path / 'rlcat.toml'}:{line}") + "[: ]", first), first


def test_unknown_project_key_gets_a_did_you_mean(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.rlcat]\nplatfroms = []\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = rlcat("config")
    assert result.code == 2 and "did you mean 'platforms'?" in result.err, result.err
    assert result.err.startswith(f"{tmp_path / 'pyproject.toml'}:2 ")


@pytest.mark.parametrize(
    "content",
    [b"strict = true\n\xff\n", b"x" * (1 << 20) + b"\n"],
    ids=["not-utf8", "too-big"],
)
def test_unreadable_project_files_are_refused(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    (tmp_path / "rlcat.toml").write_bytes(content)
    monkeypatch.chdir(tmp_path)
    result = rlcat("compile", PARENT)
    assert result.code == 2 and result.out == ""
    assert result.err.split()[1] in {"RLC006", "RLC007"}, result.err


def test_hostile_text_in_the_project_file_is_shown_escaped(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rlcat.toml").write_text(
        'catalog = ["\\u001b]0;x\\u0007\\n::error::forged"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    result = rlcat("config")
    assert result.code == 2
    assert "\x1b" not in result.err and "\n::error" not in result.err, result.err


def test_the_project_accepts_a_known_broken_cell_and_silences_guards_where_it_says_so(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cell = (PARENT, "--platform", "rocm-7.0.2", "--engine", "sglang")
    monkeypatch.chdir(tmp_path)
    refused = rlcat("compile", *cell)
    assert refused.code == 1 and "RLC303 error" in refused.err and "project" in refused.err
    (tmp_path / "rlcat.toml").write_text(
        'strict = false\n[allow]\nRLC303 = "our image carries SGLang"\nRLC703 = "we know"\n', encoding="utf-8"
    )
    accepted = rlcat("compile", *cell)
    assert accepted.code == 0, accepted.err
    assert "RLC303 warning" in accepted.err
    assert "(allowed by the project file: our image carries SGLang)" in accepted.err
    # silencing an error-level guard is itself a warning, at the project file's [allow] table
    silenced = [line for line in accepted.err.splitlines() if " RLC703 warning: " in line]
    assert silenced and silenced[0].startswith(f"{tmp_path / 'rlcat.toml'}:2 "), accepted.err
    assert "silenced by the project file: we know" in silenced[0] and "[allow.RLC703]" in silenced[0]
    # the same through validate, which compiles every recipe on the project's platforms
    report = json.loads(rlcat("validate", str(REPO / "recipes" / f"{PARENT}.yaml"), "-f", "json").out)
    assert any(d["code"] == "RLC703" and d["severity"] == "warning" for d in report["diagnostics"]), report


def test_the_first_of_the_projects_platforms_is_every_commands_default(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = _team(tmp_path / "team", 'platforms = ["rocm"]\n')
    monkeypatch.chdir(team)
    plan = json.loads(rlcat("compile", PARENT, "--format", "json").out)
    assert plan["platform"] == "rocm"
    body = rlcat("launch", PARENT, "--target", "ray-job", "--ray-auth-mode", "disabled")
    assert body.code == 0, body.err
    metadata = json.loads(body.out)["metadata"]
    assert metadata["rlcat_platform"] == "rocm" and "--platform rocm" in metadata["rlcat_command"]
    assert f"{PARENT} on rocm" in rlcat("explain", PARENT, "trainer.nnodes").out
    assert f"--- {PARENT} on rocm\n+++ {PARENT} on cuda" in rlcat("diff", PARENT, "--against", "cuda").out
    assert json.loads(rlcat("compile", PARENT, "-p", "cuda", "--format", "json").out)["platform"] == "cuda"
    rows = {row["setting"]: row for row in json.loads(rlcat("config", "-f", "json").out)["settings"]}
    assert rows["platform"] == {
        "setting": "platform",
        "value": "rocm",
        "source": f"first of platforms ({team / 'rlcat.toml'}:1)",
    }
    monkeypatch.chdir(tmp_path)  # no project file: the setting's default, cuda first
    assert json.loads(rlcat("compile", PARENT, "--format", "json").out)["platform"] == "cuda"
    rows = {row["setting"]: row for row in json.loads(rlcat("config", "-f", "json").out)["settings"]}
    assert rows["platform"] == {
        "setting": "platform",
        "value": "cuda",
        "source": "first of platforms (default)",
    }
