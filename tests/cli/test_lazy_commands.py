"""The command registry: a command's module is imported when the command is looked up, so a short
command such as `rlcat lint SCRIPT` loads no other command's modules (nor the compile pipeline),
while --help, suggestions and the CLI reference still see every command in order."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from rlcat.cli.app import COMMAND_MODULES, app, command_tree

from conftest import REPO, Result

Run = Callable[..., Result]
SCRIPT = REPO / "tests" / "data" / "lint" / "clean.sh"


def _modules_after(code: str, prefixes: tuple[str, ...] = ("rlcat.cli",)) -> list[str]:
    """The modules under `prefixes` a fresh interpreter holds after running `code`."""
    loaded = f"sorted(m for m in sys.modules if m.startswith({prefixes!r}))"
    probe = f"{code}\nimport json, sys\nprint(json.dumps({loaded}))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO, timeout=120
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


LINT = f"from rlcat.cli import main\nmain(['lint', {str(SCRIPT)!r}])"


def test_lint_loads_no_other_command() -> None:
    loaded = _modules_after(LINT)
    assert loaded == [
        "rlcat.cli",
        "rlcat.cli.app",
        "rlcat.cli.common",
        "rlcat.cli.lint",
        "rlcat.cli.process",
        "rlcat.cli.report",
    ]


def test_a_cold_lint_loads_no_recipe_model_nor_the_compile_pipeline() -> None:
    """`rlcat lint SCRIPT` checks a script through the guards' plain views (guards.base ScriptAxes,
    NoPlatform, and the model's shape as plain data, rlcat.model_facts): the recipe and catalog
    models, the compile pipeline and the plan formats are left unloaded. Typer is loaded, and the
    pydantic it coerces parameters with, as for every command; and the YAML reader, which reads the
    built-in model entries a script's model path is matched against."""
    heavy = ("rlcat.model.recipe", "rlcat.model.platform", "rlcat.model.catalog")
    heavy += ("rlcat.resolve", "rlcat.compile.assemble", "rlcat.emit.formats")
    assert _modules_after(LINT, heavy) == []
    assert _modules_after(LINT, ("rlcat.model_facts", "rlcat.read.document")) == [
        "rlcat.model_facts",
        "rlcat.read.document",
    ]
    assert _modules_after(LINT, ("typer.main",)) == ["typer.main"]  # the probe sees what is loaded


def test_lint_with_a_platform_loads_the_profile_model() -> None:
    # what --platform needs is loaded where it is used: the profile is validated as ever
    loaded = _modules_after(
        f"from rlcat.cli import main\nmain(['lint', {str(SCRIPT)!r}, '-p', 'rocm'])",
        ("rlcat.model.platform",),
    )
    assert loaded == ["rlcat.model.platform"]


def test_lint_loads_none_of_what_only_other_commands_use() -> None:
    # validating catalog files, launching, importing, the docs site, tables and colour
    others = ("rlcat.survey.validate_files", "rlcat.model.results", "rlcat.launch", "rlcat.importer")
    others += ("rlcat.docsite", "rlcat.runs", "rich")
    assert _modules_after(LINT, others) == []


def test_the_command_line_alone_loads_no_command() -> None:
    assert _modules_after("import rlcat.cli") == ["rlcat.cli", "rlcat.cli.process"]
    assert _modules_after("import rlcat.cli.app") == ["rlcat.cli", "rlcat.cli.app", "rlcat.cli.process"]


def test_every_command_is_in_the_registry_in_help_order() -> None:
    tree = command_tree()
    assert list(tree.commands) == list(COMMAND_MODULES)
    # a command a module registers without a line in the registry would never be found
    registered = [info.name for info in app.registered_commands] + [g.name for g in app.registered_groups]
    assert sorted(registered) == sorted(COMMAND_MODULES)
    for name, command in tree.commands.items():
        assert command.name == name
        assert command.callback is not None or command.commands  # type: ignore[attr-defined]
    # each command comes from the module the registry names
    for name, module in COMMAND_MODULES.items():
        callbacks = [tree.commands[name].callback]
        callbacks += [c.callback for c in getattr(tree.commands[name], "commands", {}).values()]
        assert any(c is not None and c.__module__ == module for c in callbacks), (name, module)


@pytest.mark.parametrize(("typo", "meant"), [("lnt", "lint"), ("compil", "compile"), ("doc", "docs")])
def test_a_mistyped_command_is_told_its_name(rlcat: Run, typo: str, meant: str) -> None:
    result = rlcat(typo)
    assert result.code == 2 and f"No such command '{typo}'. Did you mean '{meant}'" in result.err, result.err


def test_the_cli_reference_shows_every_command() -> None:
    from rlcat.docsite.cli_ref import cli_page

    page = cli_page(command_tree())
    assert "rlcat [OPTIONS] COMMAND [ARGS]..." in page
    for name in COMMAND_MODULES:
        assert f"## rlcat {name} {{#rlcat-{name}}}" in page, name
    assert "rlcat runs show" in page and "rlcat dev verl-index" in page  # and the groups' commands
