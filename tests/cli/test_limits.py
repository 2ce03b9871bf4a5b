"""Limits that bound the work a hostile file can ask for; each one reached is a diagnostic with a
position, never a crash, a RecursionError or memory running out.

- alias expansion is bounded by the text it makes (MAX_EXPANDED_CHARS), not only by the number of
  values: a 64 KB string repeated 4,096 times by three lines of aliases is refused at the alias;
- only regular files are read (a FIFO, /dev/zero, a socket: RLC012), and a file over MAX_BYTES is
  refused from its size, unread;
- `extends` chains are walked in a loop and bounded (MAX_EXTENDS ancestors, RLC007 at the `extends`
  of the file that goes one further), so a 1,000-file chain is refused rather than recursed into;
- merging a child over its parent is linear: 16,000 keys over 16,000 keys validate and compile, and
  every value keeps the origin of the layer that set it.

How long each takes is for bench/, not asserted here.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rlcat.catalog import Catalog
from rlcat.diagnostics import ExitCode
from rlcat.files import MAX_BYTES
from rlcat.read.nodes import MAX_EXPANDED_CHARS
from rlcat.resolve.extends import MAX_EXTENDS, load_recipe_source

from conftest import REPO, Result

Run = Callable[..., Result]
MB = 1024 * 1024
SEED = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text(encoding="utf-8")
MEMORY_LIMIT = 64 * MB  # a refusal needs a few MB; the inputs below would take hundreds or all of it


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)


def no_crash(result: Result) -> None:
    for stream in (result.out, result.err):
        for sign in ("Traceback", "internal error", "RecursionError", "MemoryError"):
            assert sign not in stream, stream[-3000:]


def refused(result: Result) -> list[str]:
    """Exit 2 with nothing on stdout; the diagnostic lines of stderr."""
    no_crash(result)
    assert (result.code, result.out) == (ExitCode.INPUT, ""), result.err
    return [line for line in result.err.splitlines() if " error: " in line]


def validated(rlcat: Run, path: Path) -> tuple[int, list[dict[str, Any]]]:
    result = rlcat("validate", str(path), "--format", "json", "--platform", "cuda")
    no_crash(result)
    return result.code, json.loads(result.out)["diagnostics"]


def recipe(name: str, extra: str = "") -> str:
    return SEED.replace("name: gsm8k_qwen3_8b_fsdp", f"name: {name}") + extra


def measured(rlcat: Run, *args: str) -> tuple[Result, int]:
    """Run rlcat, and the peak of Python allocations while it runs. A first run, outside the
    measurement, imports what the command imports lazily; a refused file leaves nothing in the
    parse cache, so the measured run does the same work again."""
    rlcat(*args)
    tracemalloc.start()
    try:
        result = rlcat(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --- alias expansion, bounded by the text it makes ------------------------------------------------


def size_bomb(name: str) -> str:
    """A 64 KB value, and three lines that repeat it 16, 256 and 4,096 times (a plan of over 256 MiB)."""
    lines = [f"name: {name}", "summary: a size bomb", "extends: gsm8k_qwen3_8b_fsdp", "env:"]
    lines.append("  S0: &s0 " + "x" * 65536)
    for level in range(1, 4):
        lines.append(f"  S{level}: &s{level} [" + ", ".join([f"*s{level - 1}"] * 16) + "]")
    return "\n".join(lines) + "\n"


def test_alias_expansion_is_bounded_by_its_size_at_the_alias(rlcat: Run, tmp_path: Path) -> None:
    path = tmp_path / "recipes" / "bomb.yaml"
    path.parent.mkdir()
    text = size_bomb("bomb")
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size < 70_000
    # the whole expansion would be 4,369 copies of 64 KB; the limit is crossed inside S2
    assert 17 * 65536 < MAX_EXPANDED_CHARS < 273 * 65536

    rss_before = peak_rss()
    code, diagnostics = validated(rlcat, path)
    assert code == ExitCode.INPUT
    assert len(diagnostics) == 1 and diagnostics[0]["code"] == "RLC007", diagnostics
    found = diagnostics[0]
    assert f"more than {MAX_EXPANDED_CHARS} characters" in found["message"]
    # it points at one of S2's aliases: the one its key names (env.S2[i] is the i-th `*s1`)
    line = text.splitlines()[6]
    assert line.startswith("  S2: ")
    alias_columns = [i + 1 for i in range(len(line)) if line.startswith("*s1", i)]
    index = int(found["key"].removeprefix("env.S2[").removesuffix("]"))
    assert (found["line"], found["col"]) == (7, alias_columns[index])
    assert "anchored on line 6" in found["hint"]

    result, peak = measured(rlcat, "compile", str(path), "--format", "json")
    lines = refused(result)
    assert lines[0].startswith(f"recipes/bomb.yaml:7:{alias_columns[index]} RLC007 error: ")
    grown = peak_rss() - rss_before
    assert grown < MEMORY_LIMIT, f"peak RSS grew by {grown / MB:.0f} MB"
    assert peak < MEMORY_LIMIT, f"peak Python allocations {peak / MB:.0f} MB"


def test_a_long_value_without_aliases_is_not_an_alias_bomb(rlcat: Run, tmp_path: Path) -> None:
    """The control: 1 MB of text written out (not repeated by aliases) is read like any value."""
    path = tmp_path / "recipes" / "long.yaml"
    path.parent.mkdir()
    path.write_text(recipe("long", "env:\n" + "".join(f"  V{i}: {'v' * 65536}\n" for i in range(16))))
    assert validated(rlcat, path) == (0, [])


# --- only regular files, never more than MAX_BYTES ------------------------------------------------


@pytest.fixture
def special_files(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A FIFO, a link to /dev/zero and a socket, named like recipe files."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    fifo, zero, sock = folder / "fifo.yaml", folder / "zero.yaml", folder / "sock.yaml"
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock))
    try:
        yield {"a named pipe (FIFO)": fifo, "a character device": zero, "a socket": sock}
    finally:
        listener.close()


@pytest.mark.parametrize("kind", ["a named pipe (FIFO)", "a character device", "a socket"])
def test_only_regular_files_are_read(rlcat: Run, special_files: dict[str, Path], kind: str) -> None:
    """Named on the command line, each is refused before it is read: no wait for a writer, no
    endless read (a link to a device is refused as the link it is, RLC011)."""
    path = special_files[kind]
    result, peak = measured(rlcat, "compile", str(path))
    lines = refused(result)
    assert len(lines) == 1, lines
    if path.is_symlink():
        assert " RLC011 error: " in lines[0] and "is a link to" in lines[0], lines
    else:
        assert " RLC012 error: not a regular file: " in lines[0] and f"{path.name} is {kind}" in lines[0]
    assert peak < MEMORY_LIMIT, f"peak Python allocations {peak / MB:.0f} MB"


# (id, how the model entry is made, the codes a refusal may carry: RLC011 where the catalog refuses a
# link that leaves its folder before the loader sees it)
NEVER_ENDING: list[tuple[str, Callable[[Path], None], set[str]]] = [
    ("fifo", os.mkfifo, {"RLC012"}),
    ("link-to-dev-zero", lambda path: path.symlink_to("/dev/zero"), {"RLC011", "RLC012"}),
]


@pytest.mark.parametrize(("make", "codes"), [c[1:] for c in NEVER_ENDING], ids=[c[0] for c in NEVER_ENDING])
def test_a_catalog_entry_that_never_ends_is_refused(
    rlcat: Run, tmp_path: Path, make: Callable[[Path], None], codes: set[str]
) -> None:
    """A model entry linked to /dev/zero was read until memory ran out; a FIFO would wait forever.
    Whichever stage sees it first (the catalog or the loader), it is refused in bounded memory."""
    (tmp_path / "catalog" / "models").mkdir(parents=True)
    make(tmp_path / "catalog" / "models" / "never.yaml")
    (tmp_path / "recipes").mkdir()
    text = recipe("uses_it").replace("model: qwen3_8b", "model: never")
    (tmp_path / "recipes" / "uses_it.yaml").write_text(text, encoding="utf-8")
    rss_before = peak_rss()
    result, peak = measured(rlcat, "compile", "uses_it", "--catalog", str(tmp_path))
    lines = refused(result)
    assert lines and all(line.split()[1] in codes and "never.yaml" in line for line in lines), lines
    assert peak < MEMORY_LIMIT, f"peak Python allocations {peak / MB:.0f} MB"
    assert peak_rss() - rss_before < MEMORY_LIMIT


def test_a_file_over_the_limit_is_refused_unread(rlcat: Run, tmp_path: Path) -> None:
    """A sparse 64 MiB file: refused from its size, so allocations stay far below what reading takes."""
    path = tmp_path / "huge.yaml"
    with path.open("wb") as sparse:
        sparse.truncate(4 * MAX_BYTES)
    result, peak = measured(rlcat, "compile", str(path))
    limit = f"file is {4 * MAX_BYTES} bytes; the limit is {MAX_BYTES}"
    assert refused(result) == [f"huge.yaml RLC007 error: {limit}"]
    assert peak < MAX_BYTES // 2, f"peak Python allocations {peak / MB:.0f} MB: the file was read"


# --- extends chains -------------------------------------------------------------------------------


def write_chain(root: Path, length: int) -> Path:
    """c0000 (the seed) ← c0001 ← ... ← c<length-1>, each child setting trainer.epochs to its number."""
    folder = root / "recipes"
    folder.mkdir(parents=True)
    (folder / "c0000.yaml").write_text(recipe("c0000"), encoding="utf-8")
    for i in range(1, length):
        child = f"name: c{i:04d}\nextends: c{i - 1:04d}\ntrainer: {{epochs: {i}}}\n"
        (folder / f"c{i:04d}.yaml").write_text(child, encoding="utf-8")
    return folder


def test_a_chain_at_the_limit_compiles(rlcat: Run, tmp_path: Path) -> None:
    """MAX_EXTENDS ancestors: the nearest value wins, and values keep the file that set them."""
    write_chain(tmp_path, MAX_EXTENDS + 1)
    last = f"c{MAX_EXTENDS:04d}"
    result = rlcat("compile", last, "--catalog", str(tmp_path))
    assert result.code == 0, result.err
    assert f"trainer.total_epochs={MAX_EXTENDS}" in result.out.splitlines()
    source = load_recipe_source(last, Catalog.default([tmp_path]))
    assert len(source.files) == MAX_EXTENDS + 1
    assert source.origins[("trainer", "epochs")].file == f"recipes/{last}.yaml"
    assert source.origins[("batch", "mini_batch_size")].file == "recipes/c0000.yaml"


@pytest.mark.parametrize("length", [MAX_EXTENDS + 2, 1000])
def test_a_chain_over_the_limit_is_refused_at_its_extends(rlcat: Run, tmp_path: Path, length: int) -> None:
    """No RecursionError for 1,000 files: refused at the `extends` that would add ancestor MAX_EXTENDS + 1."""
    folder = write_chain(tmp_path, length)
    last = f"c{length - 1:04d}"
    at = f"recipes/c{length - 1 - MAX_EXTENDS:04d}.yaml"
    lines = refused(rlcat("compile", last, "--catalog", str(tmp_path)))
    assert len(lines) == 1 and lines[0].startswith(f"{at}:2:1 RLC007 error: extends chain longer than"), lines
    assert lines[0].endswith(" [extends]")

    # validating the last file alone: reported on it (at its own `extends`), the ancestor as a note
    code, diagnostics = validated(rlcat, folder / f"{last}.yaml")
    assert code == ExitCode.INPUT
    assert [(d["code"], Path(d["file"]).name, d["line"], d["key"]) for d in diagnostics] == [
        ("RLC007", f"{last}.yaml", 2, "extends")
    ]
    assert [(n["file"], n["line"]) for n in diagnostics[0]["notes"]] == [(at, 2)]


# --- merging in linear time -----------------------------------------------------------------------

KEYS = 16_000


@pytest.mark.slow  # a big input
def test_sixteen_thousand_keys_over_sixteen_thousand(rlcat: Run, tmp_path: Path) -> None:
    """A child that overrides half its parent's 16,000 env vars and adds 8,000: every value right."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    parent_env = "".join(f"  P_{i}: parent{i}\n" for i in range(KEYS))
    (folder / "parent.yaml").write_text(recipe("parent", "env:\n" + parent_env), encoding="utf-8")
    child_env = "".join(f"  P_{i}: child{i}\n" for i in range(KEYS // 2, KEYS))
    child_env += "".join(f"  C_{i}: child{i}\n" for i in range(KEYS // 2))
    (folder / "child.yaml").write_text("name: child\nextends: parent\nenv:\n" + child_env, encoding="utf-8")

    assert validated(rlcat, folder / "child.yaml") == (0, [])
    result = rlcat("compile", "child", "--catalog", str(tmp_path), "--format", "json")
    assert result.code == 0, result.err
    expected = {f"P_{i}": f"parent{i}" if i < KEYS // 2 else f"child{i}" for i in range(KEYS)}
    expected |= {f"C_{i}": f"child{i}" for i in range(KEYS // 2)}
    env = json.loads(result.out)["env"]
    assert {k: v for k, v in env.items() if k[:2] in ("P_", "C_")} == expected

    source = load_recipe_source("child", Catalog.default([tmp_path]))
    seed_lines = recipe("parent").count("\n")
    for key, file, line in [
        ("P_0", "parent", seed_lines + 2),
        (f"P_{KEYS - 1}", "child", 3 + KEYS // 2),
        ("C_0", "child", 4 + KEYS // 2),
    ]:
        origin = source.origins[("env", key)]
        assert (origin.file, origin.line) == (f"recipes/{file}.yaml", line), key


def test_a_replaced_value_drops_the_origins_of_what_it_replaced(tmp_path: Path) -> None:
    """A list or scalar replaces a parent's mapping or list whole: none of the old origins stay."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    parent = recipe("parent", "overrides:\n  trainer.x: {a: 1, b: [2, 3]}\n")
    (folder / "parent.yaml").write_text(parent, encoding="utf-8")
    child = "name: child\nextends: parent\ntrainer:\n  logger: [console]\noverrides:\n  trainer.x: 5\n"
    (folder / "child.yaml").write_text(child, encoding="utf-8")
    source = load_recipe_source("child", Catalog.default([tmp_path]))
    assert source.data["trainer"]["logger"] == ["console"]
    assert source.data["overrides"] == {"trainer.x": 5}
    below = [p for p in source.origins if p[:2] in (("trainer", "logger"), ("overrides", "trainer.x"))]
    assert sorted(map(str, below)) == sorted(
        map(str, [("trainer", "logger"), ("trainer", "logger", 0), ("overrides", "trainer.x")])
    )
    for path in below:
        assert source.origins[path].file == "recipes/child.yaml", path
    assert source.origins[("trainer", "project")].file == "recipes/parent.yaml"


def test_a_file_of_too_many_values_is_refused_before_it_is_composed(rlcat: Run, tmp_path: Path) -> None:
    """150,000 one-line fields: refused by counting lines, not by composing 150,000 nodes first."""
    path = tmp_path / "recipes" / "wide.yaml"
    path.parent.mkdir(parents=True)
    fields = "".join(f"unknown_field_{i}: {i}\n" for i in range(150_000))
    path.write_text(recipe("wide", fields), encoding="utf-8")
    result, peak = measured(rlcat, "validate", str(path), "--format", "json")
    (finding,) = json.loads(result.out)["diagnostics"]
    assert finding["code"] == "RLC007" and "values in one file" in finding["message"]
    assert result.code == 2
    assert peak < MEMORY_LIMIT, f"peak Python allocations {peak / MB:.0f} MB"
