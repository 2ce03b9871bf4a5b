"""What `rlcat init` writes into a team repository, as text (the command does the writing).

The templates are files beside this module, shipped in the wheel; every rlcat version they name is
the running one, so a repository starts out pinned to the rlcat that made it. The project file is
written from the project settings' own fields (model/project.py), so its defaults and descriptions
live in one place.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from rlcat.model.project import ProjectSettings

TEMPLATES = Path(__file__).resolve().parent / "templates"
VERSION_MARK = "@RLCAT_VERSION@"
HOOK_MARK = "@RLCAT_HOOK@"
LINT_HOOK_MARK = "@RLCAT_LINT_HOOK@"

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


def team_files(version: str) -> dict[str, str]:
    """The text files of a new team repository (path relative to its root → text), schemas and
    the example recipe aside (the commands that write those make them)."""
    files = {PROJECT_FILE: project_file()}
    for dest, template in TEMPLATE_FILES.items():
        text = (TEMPLATES / template).read_text(encoding="utf-8").replace(VERSION_MARK, version)
        text = text.replace(HOOK_MARK, _local_hook(HOOK, version))
        files[dest] = text.replace(LINT_HOOK_MARK, _local_hook(LINT_HOOK, version))
    return files


def _local_hook(provided: dict[str, Any], version: str) -> str:
    """A hook as one entry of a `repo: local` list: pre-commit installs the pinned rlcat from the
    package index into the hook's environment (`additional_dependencies`)."""
    hook = dict(provided)
    fields = list(hook)
    fields.insert(fields.index("language") + 1, "additional_dependencies")
    hook["additional_dependencies"] = [f"rlcat=={version}"]
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


def project_file() -> str:
    """`rlcat.toml`: every setting of the project file, described and commented out at its default
    (or an example), so that the file documents itself and changes nothing until a line is
    uncommented. `rlcat config` then says which settings come from the file."""
    lines = [
        "# rlcat's project file (written by `rlcat init`). Every rlcat command run in this folder or",
        "# below it reads it; `rlcat config` shows each setting in effect and where it comes from.",
        "# Every setting is optional: the commented-out values are the defaults (or examples).",
    ]
    tables: list[str] = []
    for name, info in ProjectSettings.model_fields.items():
        value = _shown_value(name, info)
        if isinstance(value, dict):
            tables += ["", *_comment(info), f"# [{name}]"]
            tables += [f"# {_toml_key(key)} = {_toml(item)}" for key, item in value.items()]
            continue
        lines += ["", *_comment(info)]
        if value is not None:
            lines.append(f"# {name} = {_toml(value)}")
    return "\n".join([*lines, *tables]) + "\n"


def _shown_value(name: str, info: FieldInfo) -> Any:
    default = info.get_default(call_default_factory=True)
    if isinstance(default, BaseModel):  # a table of optional settings: shown by its example
        default = default.model_dump(exclude_none=True)
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
