"""`rlcat init`, `rlcat new` and `rlcat schemas export`: what a team repository starts with, that
nothing is overwritten or written through a link, that hostile names come out escaped, and that
what they write validates clean. (tests/e2e/test_team_repo.py runs the same from an installed wheel,
with the real pre-commit.)"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement
from pre_commit.clientlib import load_config

from rlcat import __version__ as VERSION
from rlcat.cli.schemas import schema_files
from rlcat.project import read_project
from rlcat.read.document import load_yaml
from rlcat.scaffold import HOOK, LINT_HOOK, PRE_COMMIT_CONFIG, WORKFLOW, team_files

from conftest import REPO, Result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Run = Callable[..., Result]
PARENT = "gsm8k_qwen3_8b_fsdp"
# where the repositories of these tests install rlcat from (nothing is installed here)
SOURCE = "git+https://git.example.com/ml/rlcat.git@v0.1.0"
SCAFFOLD = {
    ".github/workflows/rlcat.yml",
    ".pre-commit-config.yaml",
    "README.md",
    "catalog/datasets/README.md",
    "catalog/models/README.md",
    "recipes/my_first_recipe.yaml",
    "rlcat.toml",
    "schemas/dataset.schema.json",
    "schemas/model.schema.json",
    "schemas/platform.schema.json",
    "schemas/recipe.schema.json",
    "schemas/result.schema.json",
}


def _files(root: Path) -> set[str]:
    """Every path under `root` but its real folders: files, links, pipes."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_symlink() or not p.is_dir()}


def _yaml(path: Path) -> Any:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and True in data:  # YAML 1.1 reads the workflow's `on` as a boolean
        data["on"] = data.pop(True)
    return data


def _clean(r: Result) -> None:
    """Nothing from a hostile name reaches the terminal raw, and no traceback."""
    text = r.out + r.err
    assert "Traceback" not in text
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u0085\u202e]", text), text


# --- rlcat init ------------------------------------------------------------------------------------


@pytest.fixture
def team(rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository made by `rlcat init`, and the working folder."""
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    r = rlcat("init", "team", "--rlcat-source", SOURCE)
    assert r.code == 0, r.err
    monkeypatch.chdir(tmp_path / "team")
    return tmp_path / "team"


def test_init_writes_the_repository(team: Path, rlcat: Run) -> None:
    assert _files(team) == SCAFFOLD
    # the generator of rlcat's own schemas/ (`rlcat dev schemas --check` keeps those equal to it)
    for name, text in schema_files().items():
        assert (team / "schemas" / name).read_text(encoding="utf-8") == text, name
    kinds = ("dataset", "model", "platform", "recipe", "result")
    assert sorted(schema_files()) == [f"{n}.schema.json" for n in kinds]
    (repo,) = _yaml(team / ".pre-commit-config.yaml")["repos"]
    assert repo == {
        "repo": "https://git.example.com/ml/rlcat.git",
        "rev": "v0.1.0",
        "hooks": [{"id": hook["id"]} for hook in (HOOK, LINT_HOOK)],
    }
    # what it wrote validates clean, and the commands find the team's recipe without options
    r = rlcat("validate", "recipes", "catalog")
    assert r.code == 0 and "1 file checked: 0 error(s), 0 warning(s)" in r.out, r.out + r.err
    assert "my_first_recipe" in rlcat("list").out
    assert rlcat("schemas", "export", "--check").code == 0


def test_init_says_what_it_wrote(rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = rlcat("init", "--rlcat-source", "pypi")
    assert r.code == 0, r.err
    assert [line.removeprefix("wrote: ") for line in r.out.splitlines() if line.startswith("wrote: ")] == (
        sorted(SCAFFOLD)
    )
    assert "rlcat new NAME --from RECIPE" in r.out


# --- where the team's repository installs rlcat from -------------------------------------------------

# Each route: --rlcat-source, the hooks' repository entry in .pre-commit-config.yaml, and the pip
# command CI's install step and the README run.
ROUTES = {
    "pypi": ("pypi", None, [f"rlcat=={VERSION}"]),
    "git": (
        "git+ssh://git@git.example.com/ml/rlcat.git@v0.1.0",
        ("ssh://git@git.example.com/ml/rlcat.git", "v0.1.0"),
        ["rlcat@git+ssh://git@git.example.com/ml/rlcat.git@v0.1.0"],
    ),
    "wheels": ("wheels:/shared/wheels", None, ["--find-links", "/shared/wheels", f"rlcat=={VERSION}"]),
    "index": (
        "index:https://pypi.example.com/simple",
        None,
        ["--index-url", "https://pypi.example.com/simple", f"rlcat=={VERSION}"],
    ),
    # every character a source may hold that bash, YAML or a URL give a meaning of their own
    "quotes": (
        "index:https://h.example.com/s;x='a'&b=(c)!*#[d]",
        None,
        ["--index-url", "https://h.example.com/s;x='a'&b=(c)!*#[d]", f"rlcat=={VERSION}"],
    ),
}


def _install_step(team: Path) -> str:
    steps = _yaml(team / ".github/workflows/rlcat.yml")["jobs"]["validate"]["steps"]
    (step,) = [s for s in steps if s.get("name") == "Install rlcat"]
    return str(step["run"])


def _bash_words(command: str) -> list[str]:
    """The words real bash passes to `python` for a command line (python made a printer)."""
    script = "python() { printf '%s\\0' \"$@\"; }\n" + command
    run = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, check=True)
    return run.stdout.decode().split("\0")[:-1]


@pytest.mark.parametrize("route", list(ROUTES))
def test_each_route_installs_rlcat_from_one_source_everywhere(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    source, git, pip_args = ROUTES[route]
    monkeypatch.chdir(tmp_path)
    r = rlcat("init", "team", "--rlcat-source", source)
    assert r.code == 0, r.err
    team = tmp_path / "team"
    load_config(str(team / ".pre-commit-config.yaml"))  # pre-commit's own reader takes it
    (repo,) = _yaml(team / ".pre-commit-config.yaml")["repos"]
    if git:  # pre-commit's convention: rlcat's repository at a revision, its .pre-commit-hooks.yaml
        assert repo == {"repo": git[0], "rev": git[1], "hooks": [{"id": h["id"]} for h in (HOOK, LINT_HOOK)]}
    else:  # pip's options first in additional_dependencies: pre-commit passes them to pip as they are
        options = [f"{pip_args[0]}={pip_args[1]}"] if len(pip_args) > 1 else []
        pinned = [*options, f"rlcat=={VERSION}"]
        assert repo == {
            "repo": "local",
            "hooks": [{**h, "additional_dependencies": pinned} for h in (HOOK, LINT_HOOK)],
        }
    install = ["-m", "pip", "install", *pip_args]
    assert _bash_words(_install_step(team)) == install
    requirement = Requirement(pip_args[-1])  # as pip reads it
    assert requirement.name == "rlcat" and (requirement.url or "").removeprefix("git+") == "@".join(git or [])
    readme = (team / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```bash\n(.*?)```", readme, re.S)
    assert _bash_words(block.splitlines()[0]) == install
    assert read_project(team / "rlcat.toml").settings.rlcat_source == source
    # the project file holds the choice: the files are written again from it, the same
    before = {name: (team / name).read_bytes() for name in _files(team)}
    monkeypatch.chdir(team)
    again = rlcat("init", "--force")
    assert again.code == 0, again.err
    assert {name: (team / name).read_bytes() for name in _files(team)} == before


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("git+https://h/x.git@v1\nrun: evil", "holds characters other than those of a URL"),
        ("git+https://h/x.git@$(id)", "holds characters other than those of a URL"),
        ("index:https://h/${{ secrets.TOKEN }}", "holds characters other than those of a URL"),
        ("wheels:/srv/`id`", "holds characters other than those of a URL"),
        ('index:https://h/"x', "holds characters other than those of a URL"),
        ("wheels:wheels", "a wheel folder is absolute or a URL"),
        ("git+https://h/x.git", "a git source is git+URL@REV"),
        ("git+h/x.git@v1", "a git source is git+URL@REV"),
        ("git+https://h/x.git@--upload-pack=x", "is not a tag, branch or commit name"),
        ("index:ftp://h/simple", "not a source rlcat can install from"),
        ("rlcat==0.1.0", "not a source rlcat can install from"),
    ],
    ids=[
        "newline",
        "command",
        "expression",
        "backtick",
        "quote",
        "relative",
        "no-rev",
        "no-scheme",
        "option",
        "ftp",
        "pin",
    ],
)
def test_init_refuses_a_source_no_file_could_carry(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    r = rlcat("init", "team", "--rlcat-source", source)
    _clean(r)
    assert r.code == 2 and "--rlcat-source RLC105 error: " in r.err and message in r.err, r.err
    assert not (tmp_path / "team").exists()


def test_init_without_a_source_says_how_to_choose_one(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO())  # no terminal: nobody to ask
    r = rlcat("init", "team")
    assert r.code == 2 and "--rlcat-source RLC105 error: say where" in r.err, r.err
    assert "not on the package index yet" in r.err and "git+URL@REV | wheels:DIR | index:URL" in r.err
    assert not (tmp_path / "team").exists()

    # at a terminal, the person is asked; the answer is checked as the option is
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("wheels:relative\nwheels:/srv/wheels\n"))
    refused = rlcat("init", "team")
    assert refused.code == 2 and "a wheel folder is absolute or a URL" in refused.err, refused.err
    assert "Where do the team's pre-commit hooks and CI install rlcat from?" in refused.out
    asked = rlcat("init", "team")
    assert asked.code == 0, asked.err
    assert read_project(tmp_path / "team" / "rlcat.toml").settings.rlcat_source == "wheels:/srv/wheels"
    shutil.rmtree(tmp_path / "team")
    monkeypatch.setattr("sys.stdin", io.StringIO())
    # a project file's source is checked where it is written, by every command that reads it
    (tmp_path / "rlcat.toml").write_text('strict = true\nrlcat_source = "wheels:here"\n')
    for args in (["init", "--force"], ["config"]):
        bad = rlcat(*args)
        assert bad.code == 2, bad.err
        assert "rlcat.toml:2" in bad.err and "a wheel folder is absolute or a URL" in bad.err, bad.err
        assert "[rlcat_source]" in bad.err


def test_project_file_documents_every_setting_at_its_default(team: Path) -> None:
    """rlcat.toml sets only where rlcat is installed from (every other line commented out);
    uncommented, it still reads, with the default values (examples aside)."""
    text = (team / "rlcat.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text) == {"rlcat_source": SOURCE}
    project = read_project(team / "rlcat.toml")
    assert list(project.origins) == ["rlcat_source"]
    uncommented = "\n".join(re.sub(r"^# (?=\[|\w+ = )", "", line) for line in text.splitlines())
    (team / "rlcat.toml").write_text(uncommented, encoding="utf-8")
    document = tomllib.loads(uncommented)
    defaults = project.settings.model_dump(exclude_none=True)  # TOML has no null: those stay comments
    assert set(document) == set(defaults)
    chosen = ("allow", "rlcat_source", "site")  # set by init, or tables shown by an example
    assert {k: v for k, v in document.items() if k not in chosen} == {
        k: v for k, v in defaults.items() if k not in chosen
    }
    settings = read_project(team / "rlcat.toml").settings
    assert settings.allow == {"RLC303": "our image carries SGLang"}
    assert settings.site.name == "Our RL recipes" and settings.site.install


def test_catalog_readme_examples_are_valid_entries(team: Path, rlcat: Run) -> None:
    for kind in ("models", "datasets"):
        readme = (team / "catalog" / kind / "README.md").read_text(encoding="utf-8")
        (example,) = re.findall(r"```yaml\n(.*?)```", readme, re.S)
        schema_line = example.splitlines()[0]
        entry = yaml.safe_load(example)
        schema = team / "catalog" / kind / schema_line.split("$schema=", 1)[1]
        jsonschema.validate(entry, json.loads(schema.read_text(encoding="utf-8")))
        (team / "catalog" / kind / f"{entry['name']}.yaml").write_text(example, encoding="utf-8")
    r = rlcat("validate", "recipes", "catalog")
    assert r.code == 0 and "3 files checked: 0 error(s), 0 warning(s)" in r.out, r.out


def test_docs_examples_are_what_init_writes() -> None:
    files = team_files(VERSION)
    examples = REPO / "docs" / "examples"
    assert (examples / "pre-commit-config.yaml").read_text(encoding="utf-8") == files[PRE_COMMIT_CONFIG]
    assert (examples / "rlcat-validate.yml").read_text(encoding="utf-8") == files[WORKFLOW]


def test_hooks_file_provides_the_same_hook_and_shows_the_generated_config() -> None:
    text = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    provided = {hook["id"]: hook for hook in yaml.safe_load(text)}
    for hook in (HOOK, LINT_HOOK):
        assert {k: v for k, v in provided[hook["id"]].items() if k != "description"} == hook
    shown = text.split("#   repos:", 1)[1].split("\n#\n", 1)[0]
    config = yaml.safe_load("repos:" + "\n".join(line.removeprefix("#  ") for line in shown.splitlines()))
    generated = yaml.safe_load(team_files(VERSION)[PRE_COMMIT_CONFIG])
    assert config == generated


def test_init_refuses_to_overwrite_and_writes_nothing(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("ours\n")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "my_first_recipe.yaml").write_text("name: my_first_recipe\n")
    r = rlcat("init", "--rlcat-source", SOURCE)
    assert r.code == 2, r.out
    assert r.out == ""
    refused = [line.split(" ")[0] for line in r.err.splitlines() if "RLC106" in line]
    assert refused == ["README.md", "recipes/my_first_recipe.yaml"], r.err
    assert "exists already; nothing was written" in r.err and "--force" in r.err
    assert _files(tmp_path) == {"README.md", "recipes/my_first_recipe.yaml"}
    assert (tmp_path / "README.md").read_text() == "ours\n"

    r = rlcat("init", "--force", "--rlcat-source", SOURCE)
    assert r.code == 0, r.err
    assert _files(tmp_path) == SCAFFOLD and (tmp_path / "README.md").read_text() != "ours\n"


def test_init_never_writes_through_a_link_or_onto_a_special_file(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    team = tmp_path / "team"
    team.mkdir()
    (team / "recipes").symlink_to(outside)  # a link out of the repository
    (team / "README.md").symlink_to(outside / "README.md")  # a dangling link
    (team / "catalog").mkdir()
    (team / "catalog" / "models").write_text("a file where a folder goes\n")
    os.mkfifo(team / "rlcat.toml")  # opened, it would block
    monkeypatch.chdir(tmp_path)
    for force in ([], ["--force"]):
        r = rlcat("init", "team", "--rlcat-source", SOURCE, *force)
        assert r.code == 2, r.out
        assert "team/recipes RLC106 error: a folder goes here, and this is a symbolic link" in r.err
        assert "team/README.md RLC106 error: a file goes here, and this is a symbolic link" in r.err
        assert "team/catalog/models RLC106 error: a folder goes here, and this is a regular file" in r.err
        assert "team/rlcat.toml RLC106 error: a file goes here, and this is a named pipe" in r.err
    assert list(outside.iterdir()) == []
    assert _files(team) == {"recipes", "README.md", "catalog/models", "rlcat.toml"}

    (tmp_path / "plain").write_text("x\n")
    r = rlcat("init", "plain", "--rlcat-source", SOURCE)
    assert r.code == 2 and "plain RLC106 error: not a folder; nothing was written" in r.err


@pytest.mark.parametrize(
    "name",
    [
        "new\nline",
        "esc\x1b[31mred",
        "::error file=x::forged",
        "rtl\u202eexe.lmy",
        "sep\u2028x",
        "spa ce",
        "-dash",
    ],
    ids=["newline", "escape", "workflow-command", "bidi", "line-separator", "space", "dash"],
)
def test_init_in_a_folder_with_a_hostile_name(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    source = ("--rlcat-source", SOURCE)
    r = rlcat("init", *source, "--", name) if name.startswith("-") else rlcat("init", name, *source)
    _clean(r)
    assert r.code == 0, r.err
    assert not any(line.startswith("::") for line in r.out.splitlines())
    assert _files(tmp_path / name) == SCAFFOLD
    monkeypatch.chdir(tmp_path / name)
    assert rlcat("validate", "recipes", "catalog").code == 0
    again = rlcat("init", ".", *source)
    _clean(again)
    assert again.code == 2


# --- rlcat new -------------------------------------------------------------------------------------


def test_new_writes_a_child_that_validates_clean(team: Path, rlcat: Run) -> None:
    r = rlcat("new", "team_run", "--from", PARENT)
    assert r.code == 0, r.err
    assert r.out.splitlines() == [
        f"wrote: recipes/team_run.yaml (extends {PARENT})",
        "check it: rlcat validate recipes/team_run.yaml",
    ]
    text = (team / "recipes" / "team_run.yaml").read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=../schemas/recipe.schema.json\n")
    assert {k: v for k, v in yaml.safe_load(text).items() if k != "summary"} == {
        "name": "team_run",
        "extends": PARENT,
    }
    checked = rlcat("validate", "recipes/team_run.yaml")
    assert checked.code == 0 and "0 error(s), 0 warning(s)" in checked.out, checked.out
    # from a sub-folder the project is found upward; a child of the child gets the same schema line
    os.chdir(team / "recipes")
    r = rlcat("new", "grandchild", "--from", "team_run")
    assert r.code == 0 and r.out.startswith("wrote: grandchild.yaml"), r.out + r.err
    assert (
        (team / "recipes" / "grandchild.yaml")
        .read_text()
        .startswith("# yaml-language-server: $schema=../schemas/recipe.schema.json\n")
    )


def test_new_comments_uncommented_give_the_parent(team: Path, rlcat: Run) -> None:
    """The comments are the parent's settings, as YAML: uncommented, the child resolves to what its
    parent resolves to."""
    assert rlcat("new", "team_run", "--from", PARENT).code == 0
    path = team / "recipes" / "team_run.yaml"
    lines = path.read_text(encoding="utf-8").splitlines()
    cut = len(lines) - lines[::-1].index("#")  # the settings follow the last empty comment line
    path.write_text("\n".join([*lines[:cut], *(line[2:] for line in lines[cut:])]) + "\n")
    child = yaml.safe_load(path.read_text())
    parent = yaml.safe_load((REPO / "recipes" / f"{PARENT}.yaml").read_text())
    assert {k: v for k, v in child.items() if k not in ("name", "extends", "summary")} == {
        k: v for k, v in parent.items() if k not in ("name", "summary")
    }
    assert rlcat("validate", str(path)).code == 0


def test_new_nested_output_and_no_schemas(team: Path, rlcat: Run) -> None:
    r = rlcat("new", "deep", "--from", PARENT, "-o", "recipes/a/b/deep.yaml")
    assert r.code == 0, r.err
    assert (
        (team / "recipes/a/b/deep.yaml")
        .read_text()
        .startswith("# yaml-language-server: $schema=../../../schemas/recipe.schema.json\n")
    )
    for schema in (team / "schemas").iterdir():
        schema.unlink()
    r = rlcat("new", "bare", "--from", PARENT)
    assert r.code == 0 and "rlcat schemas export" in r.err, r.err
    text = (team / "recipes" / "bare.yaml").read_text()
    assert "$schema" not in text and rlcat("validate", "recipes/bare.yaml").code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Team", "--from", PARENT], "NAME RLC103 error: 'Team' is not a recipe name"),
        (["../up", "--from", PARENT], "NAME RLC103 error: '../up' is not a recipe name"),
        (["a\nb", "--from", PARENT], "NAME RLC103 error: 'a\\nb' is not a recipe name"),
        (["x" * 101, "--from", PARENT], "is not a recipe name"),
        (["ok", "--from", f"recipes/{PARENT}.yaml"], "not a path"),
        (["ok", "--from", "nope"], "--from nope RLC201 error: unknown recipe 'nope'"),
        (["ok", "--from", "ok"], "--from ok RLC203 error: a recipe cannot extend itself"),
        (["ok", "--from", PARENT, "-o", "recipes/other.yaml"], "must be in a file named ok.yaml"),
        (
            ["gsm8k_qwen3_8b_megatron", "--from", PARENT],
            "RLC207 error: a recipe named 'gsm8k_qwen3_8b_megatron'",
        ),
        (["my_first_recipe", "--from", PARENT], "recipes/my_first_recipe.yaml RLC106 error: exists already"),
    ],
    ids=[
        "capital",
        "path",
        "newline",
        "long",
        "from-path",
        "unknown",
        "itself",
        "file-name",
        "taken",
        "exists",
    ],
)
def test_new_refuses(team: Path, rlcat: Run, args: list[str], message: str) -> None:
    before = {p: p.read_bytes() for p in (team / "recipes").rglob("*")}
    r = rlcat("new", *args)
    _clean(r)
    assert r.code == 2 and message in r.err, r.err
    assert {p: p.read_bytes() for p in (team / "recipes").rglob("*")} == before


def test_new_from_a_parent_with_hostile_values(team: Path, rlcat: Run) -> None:
    """A team parent's text reaches the child only inside comments that cannot end early: a
    character YAML reads as a line break, or a line that reads as a CI workflow command, leaves
    the settings out instead."""
    seed = (REPO / "recipes" / f"{PARENT}.yaml").read_text(encoding="utf-8")
    for name, value in (("sep_parent", '"a\\u2028b: c"'), ("cmd_parent", '"x\\n::error::forged"')):
        text = seed.replace(f"name: {PARENT}", f"name: {name}").replace(
            "  project: verl_grpo_gsm8k_math", f"  project: {value}"
        )
        (team / "recipes" / f"{name}.yaml").write_text(text, encoding="utf-8")
        child = f"child_of_{name}"
        r = rlcat("new", child, "--from", name)
        assert r.code == 0, r.err
        written = (team / "recipes" / f"{child}.yaml").read_text(encoding="utf-8")
        assert "\u2028" not in written and "::error" not in written
        assert f"`rlcat show {name}`" in written
        # rlcat's own reader takes the file as it is, and it holds only the child's three fields
        loaded = load_yaml(team / "recipes" / f"{child}.yaml", f"recipes/{child}.yaml")
        assert set(loaded.data) == {"name", "extends", "summary"} and loaded.data["extends"] == name


# --- rlcat schemas export ---------------------------------------------------------------------------


def test_schemas_export_check_write_and_links(team: Path, rlcat: Run) -> None:
    (team / "schemas" / "model.schema.json").write_text("{}\n")
    (team / "schemas" / "dataset.schema.json").unlink()
    r = rlcat("schemas", "export", "--check")
    assert r.code == 1 and r.out == "stale: schemas/model.schema.json\nmissing: schemas/dataset.schema.json\n"
    assert "run `rlcat schemas export` to write them" in r.err
    r = rlcat("schemas", "export")
    assert r.code == 0 and r.out == "wrote: schemas/model.schema.json\nwrote: schemas/dataset.schema.json\n"
    assert rlcat("schemas", "export").out == "up to date: schemas\n"
    assert rlcat("schemas", "export", "--check").code == 0
    # the project file's `schemas` setting is the default folder, from any folder below it
    (team / "rlcat.toml").write_text('schemas = "editor/schemas"\n')
    os.chdir(team / "recipes")
    r = rlcat("schemas", "export", "--check")
    assert r.code == 1 and f"missing: {team}/editor/schemas/recipe.schema.json\n" in r.out, r.out
    assert rlcat("schemas", "export").code == 0 and (team / "editor/schemas/recipe.schema.json").is_file()
    # a link where a schema goes is neither followed nor replaced
    outside = team.parent / "outside.json"
    outside.write_text("{}\n")
    (team / "x" / "recipe.schema.json").parent.mkdir()
    (team / "x" / "recipe.schema.json").symlink_to(outside)
    r = rlcat("schemas", "export", str(team / "x"), "--check")
    assert r.code == 1 and "stale: " in r.out and f"rlcat schemas export {team / 'x'}" in r.err
    r = rlcat("schemas", "export", str(team / "x"))
    assert r.code == 2 and "RLC106 error: a file goes here, and this is a symbolic link" in r.err
    assert outside.read_text() == "{}\n" and (team / "x" / "recipe.schema.json").is_symlink()


# --- docs/team-repository.md -----------------------------------------------------------------------

GUIDE = REPO / "docs" / "team-repository.md"


def _guide_blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", GUIDE.read_text(encoding="utf-8"), re.M | re.S)


def test_guide_commands_run_in_order(rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `rlcat` line of the guide's shell blocks runs clean, in order (`cd` followed); the
    recipe and the project file it shows are what rlcat writes."""
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    ran = []
    for block in _guide_blocks("bash"):
        for line in block.splitlines():
            words = line.split()
            if words[:1] == ["cd"]:
                os.chdir(words[1])
            elif words[:1] == ["rlcat"]:
                r = rlcat(*words[1:])
                assert r.code == 0, (line, r.out, r.err)
                ran.append(words[1])
    assert ran == ["init", "new", "validate", "compile", "config", "schemas", "schemas"]
    (recipe,) = _guide_blocks("yaml")
    written = (Path("recipes") / "long_answers.yaml").read_text(encoding="utf-8").splitlines()
    shown = [line for line in recipe.splitlines() if line.strip("# ") != "..."]
    assert [line for line in written if line in shown] == shown, (
        "the guide shows lines rlcat writes, in order"
    )
    (toml,) = _guide_blocks("toml")
    project = Path("rlcat.toml").read_text(encoding="utf-8")
    assert toml in project
