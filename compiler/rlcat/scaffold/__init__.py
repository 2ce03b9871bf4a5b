"""What `rlcat init` writes into a team repository, as text (the command does the writing).

The templates are files beside this module, shipped in the wheel; every rlcat version they name is
the running one, so a repository starts out pinned to the rlcat that made it. Where rlcat is
installed from (the package index, a git repository and revision, a wheel folder or a private
index: model.project.RlcatSource) is written into the pre-commit config, the CI workflow and the
README alike; its text is checked by model.project.parse_rlcat_source and quoted here, for YAML by
_yaml_scalar and for bash by syntax.bash.shell_word. The project file is written from the project
settings' own fields (model/project.py), so its defaults and descriptions live in one place.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from rlcat.model.project import ProjectSettings, RlcatSource
from rlcat.syntax.bash import shell_word

TEMPLATES = Path(__file__).resolve().parent / "templates"
VERSION_MARK = "@RLCAT_VERSION@"
HOOK_MARK = "@RLCAT_HOOK@"
LINT_HOOK_MARK = "@RLCAT_LINT_HOOK@"
REPO_MARK = "@RLCAT_REPO@"
FROM_MARK = "@RLCAT_FROM@"
INSTALL_MARK = "@RLCAT_INSTALL@"
INSTALL_YAML_MARK = "@RLCAT_INSTALL_YAML@"
PYPI = RlcatSource("pypi")

PROJECT_FILE = "rlcat.toml"
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
WORKFLOW = ".github/workflows/rlcat.yml"

# The pre-commit hook, as this repository's .pre-commit-hooks.yaml provides it (a test keeps the
# two equal) and as `rlcat init` writes it into a team's .pre-commit-config.yaml as a local hook.
HOOK: dict[str, Any] = {
    "id": "rlcat-validate",
    "name": "rlcat validate",
    "entry": "rlcat validate",
    "language": "python",
    # recipes/ and catalog/models|datasets|platforms|results/ at the top or below any folder (.yaml, .yml)
    "files": r"(^|/)(recipes|catalog/(models|datasets|platforms|results))/.+\.ya?ml$",
    "types": ["yaml"],
    "pass_filenames": True,
    # one process for all files: the catalog is loaded once, and the report is one list in file order
    "require_serial": True,
}
# The launch-script hook beside it, the same way: every `*.sh` of a commit that launches a verl
# trainer is linted; other shell scripts are noted, not failed (--only-launches).
LINT_HOOK: dict[str, Any] = {
    "id": "rlcat-lint-scripts",
    "name": "rlcat lint (verl launch scripts)",
    "entry": "rlcat lint --only-launches",
    "language": "python",
    "files": r"\.sh$",
    "types": ["shell"],
    "pass_filenames": True,
    # one process for all scripts: the key indexes are loaded once, and the report is one list
    "require_serial": True,
}

# Where each template goes in a team repository.
TEMPLATE_FILES: dict[str, str] = {
    "README.md": "README.md",
    PRE_COMMIT_CONFIG: "pre-commit-config.yaml",
    WORKFLOW: "workflow.yml",
    "catalog/models/README.md": "models-README.md",
    "catalog/datasets/README.md": "datasets-README.md",
}

# Values shown (commented out) for project settings whose default shows nothing.
_PROJECT_EXAMPLES: dict[str, Any] = {
    "allow": {"RLC303": "our image carries SGLang"},
    "site": {
        "name": "Our RL recipes",
        "description": "The team's verl recipes, compiled for every platform we run",
        "install": "pip install --find-links wheels rlcat",
    },
}


def team_files(version: str, source: RlcatSource = PYPI) -> dict[str, str]:
    """The text files of a new team repository (path relative to its root → text), schemas and
    the example recipe aside (the commands that write those make them); rlcat comes from `source`
    (already checked: model.project.parse_rlcat_source)."""
    files = {PROJECT_FILE: project_file(source)}
    install = shell_words(install_command(version, source))
    marks = {
        REPO_MARK: _repo_lines(source),
        HOOK_MARK: _hook_lines(HOOK, version, source),
        LINT_HOOK_MARK: _hook_lines(LINT_HOOK, version, source),
        FROM_MARK: installed_from(source),
        INSTALL_YAML_MARK: _yaml_scalar(install),
        INSTALL_MARK: install,
        VERSION_MARK: version,
    }
    for dest, template in TEMPLATE_FILES.items():
        text = (TEMPLATES / template).read_text(encoding="utf-8")
        for mark, value in marks.items():
            text = text.replace(mark, value)
        files[dest] = text
    return files


def install_command(version: str, source: RlcatSource) -> list[str]:
    """The pip command that installs the pinned rlcat from `source` (CI's install step, the README)."""
    pip = ["python", "-m", "pip", "install"]
    if source.kind == "git":
        return [*pip, f"rlcat@git+{source.location}@{source.rev}"]
    return [*pip, *_pip_options(source), f"rlcat=={version}"]


def _pip_options(source: RlcatSource) -> list[str]:
    option = {"wheels": "--find-links", "index": "--index-url"}.get(source.kind)
    return [option, source.location] if option else []


def shell_words(words: list[str]) -> str:
    return " ".join(shell_word(word) for word in words)


def installed_from(source: RlcatSource) -> str:
    """Where rlcat comes from, in words, for the generated files' comments."""
    return {
        "pypi": "from the package index (PyPI)",
        "git": f"from the git repository {source.location} at {source.rev}",
        "wheels": f"from the wheel folder {source.location}",
        "index": f"from the package index {source.location}",
    }[source.kind]


def _repo_lines(source: RlcatSource) -> str:
    """The pre-commit config's `repo:` entry: rlcat's git repository at a revision, whose
    .pre-commit-hooks.yaml provides the hooks, or a local repository whose hooks install rlcat."""
    if source.kind == "git":
        return "\n".join(
            [
                f"  - repo: {_yaml_scalar(source.location)}",
                f"    rev: {_yaml_scalar(source.rev)}",
                "    hooks:",
            ]
        )
    return "  - repo: local\n    hooks:"


def _hook_lines(provided: dict[str, Any], version: str, source: RlcatSource) -> str:
    """A hook as one entry of the `hooks:` list: by id from rlcat's repository, else whole, with
    pre-commit installing the pinned rlcat into the hook's environment (`additional_dependencies`,
    pip's options first: pre-commit passes them to `pip install` as they are)."""
    if source.kind == "git":
        return f"      - id: {_yaml_scalar(provided['id'])}"
    hook = dict(provided)
    fields = list(hook)
    fields.insert(fields.index("language") + 1, "additional_dependencies")
    options = _pip_options(source)
    pip_option = [f"{options[0]}={options[1]}"] if options else []
    hook["additional_dependencies"] = [*pip_option, f"rlcat=={version}"]
    first, *rest = fields
    lines = [f"      - {first}: {_yaml_scalar(hook[first])}"]
    lines += [f"        {name}: {_yaml_value(hook[name])}" for name in rest]
    return "\n".join(lines)


def _yaml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_scalar(item) for item in value) + "]"
    return _yaml_scalar(value)


def _yaml_scalar(value: Any) -> str:
    """A bool, or a string: plain when it is words YAML 1.1 and 1.2 both read as that text, else in
    single quotes (a regular expression's backslashes stay as they are)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if re.fullmatch(r"[a-z][a-z-]*( [a-z][a-z-]*)*", text) and text not in _YAML_WORDS:
        return text
    return "'" + text.replace("'", "''") + "'"


_YAML_WORDS = {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}


def project_file(source: RlcatSource = PYPI) -> str:
    """`rlcat.toml`: every setting of the project file, described and commented out at its default
    (or an example), so that the file documents itself and changes nothing until a line is
    uncommented; but `rlcat_source`, the one setting `rlcat init` chose, which is set (`rlcat init
    --force` writes the files again from it). `rlcat config` then says which settings come from
    the file."""
    lines = [
        "# rlcat's project file (written by `rlcat init`). Every rlcat command run in this folder or",
        "# below it reads it; `rlcat config` shows each setting in effect and where it comes from.",
        "# Every setting is optional: the commented-out values are the defaults (or examples).",
    ]
    tables: list[str] = []
    for name, info in ProjectSettings.model_fields.items():
        value = _shown_value(name, info)
        if isinstance(value, BaseModel):
            tables += _table(name, info, value)
            continue
        if isinstance(value, dict):
            tables += ["", *_comment(info), f"# [{name}]"]
            tables += [f"# {_toml_key(key)} = {_toml(item)}" for key, item in value.items()]
            continue
        lines += ["", *_comment(info)]
        if name == "rlcat_source":
            lines.append(f"{name} = {_toml(source_text(source))}")
        elif value is not None:
            lines.append(f"# {name} = {_toml(value)}")
    return "\n".join([*lines, *tables]) + "\n"


def _table(name: str, info: FieldInfo, value: BaseModel) -> list[str]:
    """A settings table (`[launch]`, then its own tables, `[launch.slurm]`), every key described; a
    key without a default value (None: TOML has no null) shows an example that stays a comment."""
    lines = ["", *_comment(info), f"# [{name}]"]
    inner: list[str] = []
    for key, field in type(value).model_fields.items():
        item = getattr(value, key)
        if isinstance(item, BaseModel):
            inner += _table(f"{name}.{key}", field, item)
            continue
        lines += _comment(field)
        lines.append(
            f"# {key} = {_toml(item)}" if item is not None else f"#   (unset; e.g. {key} = {_example(field)})"
        )
    return lines + inner


def _example(field: FieldInfo) -> str:
    """The first value a Literal-typed field takes, as TOML."""
    choices = [a for arg in get_args(field.annotation) for a in get_args(arg)]
    return _toml(choices[0]) if choices else '""'


def source_text(source: RlcatSource) -> str:
    """A source as `--rlcat-source` and the project file write it (model.project.parse_rlcat_source
    reads it back)."""
    if source.kind == "pypi":
        return "pypi"
    if source.kind == "git":
        return f"git+{source.location}@{source.rev}"
    return f"{source.kind}:{source.location}"


def _shown_value(name: str, info: FieldInfo) -> Any:
    default = info.get_default(call_default_factory=True)
    if isinstance(default, BaseModel) and name in _PROJECT_EXAMPLES:
        return _PROJECT_EXAMPLES[name]  # a table of optional settings, unset: shown by its example
    return _PROJECT_EXAMPLES.get(name, default) if default in (None, {}, []) else default


def _comment(info: FieldInfo) -> list[str]:
    return [f"# {info.description}."] if info.description else []


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    # a JSON string of printable ASCII is a TOML basic string
    return json.dumps(str(value))


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml(key)
