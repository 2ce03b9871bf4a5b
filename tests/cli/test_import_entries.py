"""Entries `rlcat import` writes are true or refused (issue 22): a value the source does not say is a
`TODO:` marker that `rlcat validate` refuses (RLC107) at its file, line and key until it is filled in,
never a guess; a new entry's name never reads like a built-in one's."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from import_helpers import SCRIPTS, launches_verl

from rlcat.catalog import Catalog
from rlcat.importer.entries import same_name
from rlcat.model.base import TODO_TEXT, todo_markers

from conftest import Result

Rlcat = Callable[..., Result]
# one import per kind of marker: text fields, the model's positions, and a name the built-in
# dapo_math_17k would read like (deepseek_v3); data files and a model path only a variable gives
# (deepseek_v4_veomni)
TEXT_AND_POSITIONS = "examples__grpo_trainer__run_deepseek_v3_671b_megatron"
FILES = "examples__grpo_trainer__run_deepseek_v4_veomni"
# real values a person would write, by field (a list field gets a list)
FILLED: dict[str, Any] = {
    "hf_id": "deepseek-ai/DeepSeek-V4",
    "family": "deepseek-v3",
    "size": "671B-A37B",
    "max_position_embeddings": 163840,
    "summary": "DAPO-Math-17k prompts",
    "preprocessing": "python3 prepare.py",
    "reward": "math verifier",
    "train_files": ["~/data/train.parquet"],
    "val_files": ["~/data/test.parquet"],
}


def _markers(text: str) -> list[tuple[str, int]]:
    """(key, line) of every marker in a written entry, read off the text itself: `field: 'TODO…`
    or a list item under `field:`."""
    found, field = [], ""
    for number, line in enumerate(text.splitlines(), 1):
        head = re.match(r"^([a-z_]+):", line)
        if head:
            field = head.group(1)
        if TODO_TEXT in line and not line.lstrip().startswith("#"):  # a value, not its comment
            found.append((field if head else f"{field}.0", number))
    return found


def _errors(rlcat: Rlcat, folder: Path, *paths: Path) -> list[dict[str, Any]]:
    r = rlcat("validate", *map(str, paths or [folder]), "--catalog", str(folder), "--format", "json")
    data = yaml.safe_load(r.out)
    errors: list[dict[str, Any]] = [d for d in data["diagnostics"] if d["severity"] == "error"]
    assert r.code == (1 if errors else 0), r.out + r.err
    return errors


@pytest.mark.slow
@pytest.mark.xdist_group("reference-imports")
@pytest.mark.parametrize("name", [TEXT_AND_POSITIONS, FILES])
def test_validate_refuses_each_marker_until_filled_in(
    reference_imports: Callable[[str], Any], rlcat: Rlcat, tmp_path: Path, name: str
) -> None:
    done = reference_imports(name)
    folder = tmp_path / "out"
    shutil.copytree(done.folder, folder)  # the shared import stays as it was
    entries = sorted((folder / "catalog").rglob("*.yaml"))
    assert entries
    # the import says which entries need filling in, and which fields
    said = [d.message for d in done.imported.diagnostics if d.code == "RLC1307"]
    assert len(said) == len(entries)
    for path in entries:
        text = path.read_text()
        expected = _markers(text)
        assert expected
        assert any(path.name in m and all(k.split(".")[0] in m for k, _ in expected) for m in said)
        # each marker: RLC107 at the entry's file, line and key
        got = [(d["key"], d["line"]) for d in _errors(rlcat, folder, path) if d["file"] == str(path)]
        assert sorted(got) == sorted(expected), text
        assert {d["code"] for d in _errors(rlcat, folder, path)} == {"RLC107"}
    # the recipe that names them is refused too, at its `model:` / `dataset:` line
    recipe = folder / done.imported.recipe_file
    lines = {line.split(":")[0]: n for n, line in enumerate(recipe.read_text().splitlines(), 1)}
    named = {lines[path.parent.name.removesuffix("s")] for path in entries}
    on_recipe = [d for d in _errors(rlcat, folder, recipe) if d["code"] == "RLC107"]
    assert {(d["file"], d["line"]) for d in on_recipe} == {(str(recipe), n) for n in named}
    # filled in, every entry and the recipe validate
    for path in entries:
        data = yaml.safe_load(path.read_text())
        for key, _ in todo_markers(data):
            data[str(key[0])] = FILLED[str(key[0])]
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert _errors(rlcat, folder, *entries) == []
    assert not [d for d in _errors(rlcat, folder) if d["code"] == "RLC107"]


def test_a_marker_is_refused_where_it_stands(rlcat: Rlcat, tmp_path: Path) -> None:
    """An entry a person writes with a marker left: RLC107 at each, exit 1; a bad value that is not
    a marker is still a schema error; filled in, it validates."""
    models = tmp_path / "catalog" / "models"
    models.mkdir(parents=True)
    entry = models / "my_model.yaml"
    lines = ["name: my_model", "hf_id: org/My-Model", "family: 'TODO: fill in'", "size: 7B"]
    entry.write_text("\n".join([*lines, "max_position_embeddings: 'TODO: from config.json'", ""]))
    errors = _errors(rlcat, tmp_path, entry)
    assert [(d["code"], d["line"], d["key"]) for d in errors] == [
        ("RLC107", 3, "family"),
        ("RLC107", 5, "max_position_embeddings"),
    ]
    assert "Positions the model has" in errors[1]["hint"]
    filled = [line.replace("'TODO: fill in'", "qwen3") for line in lines]
    entry.write_text("\n".join([*filled, "max_position_embeddings: lots", ""]))
    assert [(d["code"], d["key"]) for d in _errors(rlcat, tmp_path, entry)] == [
        ("RLC102", "max_position_embeddings")
    ]
    entry.write_text("\n".join([*filled, "max_position_embeddings: 32768", ""]))
    assert _errors(rlcat, tmp_path, entry) == []


@pytest.mark.slow
@pytest.mark.xdist_group("reference-imports")
def test_every_import_writes_markers_not_guesses_and_no_built_in_name(
    reference_imports: Callable[[str], Any],
) -> None:
    """Over every reference script: each new entry holds a marker for every field the import could not
    tell (and only there), and no name that reads like a built-in entry's."""
    built_in = Catalog.default()
    names = {kind: {same_name(n) for n in built_in.names(kind)} for kind in ("model", "dataset")}
    written = 0
    for script in (s for s in SCRIPTS if launches_verl(s)):
        done = reference_imports(script)
        # a built-in entry is reused only where the source names it: its model id or first train
        # file ends as a path the source gives (never an entry that merely lowers alike)
        recipe = yaml.safe_load((done.folder / done.imported.recipe_file).read_text())
        source = " ".join(s.text for s in done.run.settings.values()).lower()
        for kind, field in (("model", "hf_id"), ("dataset", "train_files")):
            if recipe[kind] in built_in.names(kind):
                entry = yaml.safe_load(built_in.find(kind, recipe[kind]).read_text())
                named = entry[field][0] if kind == "dataset" else entry[field]
                assert named.rsplit("/", 1)[-1].lower() in source, (script, kind, recipe[kind])
        for path in (done.folder / "catalog").rglob("*.yaml"):
            kind = "model" if path.parent.name == "models" else "dataset"
            data = yaml.safe_load(path.read_text())
            assert same_name(data["name"]) not in names[kind], (script, path)
            said = [
                d.message for d in done.imported.diagnostics if d.code == "RLC1307" and path.name in d.message
            ]
            fields = {str(key[0]) for key, _ in todo_markers(data)}
            assert bool(fields) == bool(said), (script, path)
            assert all(f in said[0] for f in fields) if said else True
            written += 1
    assert written
