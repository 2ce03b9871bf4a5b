"""Big and hostile inputs, generated in tmp_path (nothing this size is committed to the corpus).

- ~10 MB recipe files: under the loader's MAX_BYTES (16 MiB) they are parsed and checked like any
  other file; above it they are refused unparsed (RLC007);
- an alias bomb (a billion values after expansion) is refused by the node limit with bounded memory;
- 5,000 levels of nesting (flow or block, mappings or lists, or built from aliases) are refused
  (RLC002 from the parser's own depth limit, or RLC007 from rlcat's) without a RecursionError.

Validate exits 1 for a finding and 2 for input it cannot read (RLC001/006/007); compile exits 2 for
both, writes no -o file, and neither ever prints a traceback. How long they take is measured in
bench/, not asserted here.
"""

from __future__ import annotations

import json
import resource
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.files import MAX_BYTES

from conftest import REPO, Result

pytestmark = pytest.mark.slow

Run = Callable[..., Result]
MB = 1024 * 1024
SEED = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text(encoding="utf-8")
BOMB_MEMORY_LIMIT = 200 * MB


def recipe(name: str) -> str:
    """The seed recipe renamed, so that it validates clean as <name>.yaml."""
    return SEED.replace("name: gsm8k_qwen3_8b_fsdp", f"name: {name}")


def no_crash(result: Result) -> None:
    for stream in (result.out, result.err):
        assert "Traceback" not in stream, stream[-3000:]
        assert "internal error" not in stream, stream[-3000:]
        assert "RecursionError" not in stream, stream[-3000:]


def validate(rlcat: Run, path: Path) -> tuple[int, list[dict[str, Any]]]:
    result = rlcat("validate", str(path), "--format", "json", "--platform", "cuda")
    no_crash(result)
    report = json.loads(result.out)
    assert report["files"] == 1
    return result.code, report["diagnostics"]


def compile_(rlcat: Run, path: Path) -> Result:
    out = path.parent / "out" / "plan.txt"
    result = rlcat("compile", str(path), "--platform", "cuda", "-o", str(out))
    no_crash(result)
    assert result.out == ""
    if result.code:
        assert not out.exists(), f"exit {result.code} but {out} was written"
    else:
        assert out.is_file()
    return result


# --- ~10 MB files --------------------------------------------------------------------------------


def padded_with_comments(name: str, size: int) -> str:
    line = "# " + "padding " * 12 + "\n"
    return recipe(name) + line * ((size - len(SEED)) // len(line) + 1)


def long_summary(name: str, size: int) -> str:
    return recipe(name).replace("\nsummary: ", "\nsummary: " + "y" * size + " ", 1)


def big_env(name: str, size: int) -> str:
    """A recipe followed by an env: map of 2,000 variables with ~5 KB values each."""
    value = "v" * (size // 2000)
    return recipe(name) + "env:\n" + "".join(f"  VAR_{i:04d}: {value}{i}\n" for i in range(2000))


@pytest.mark.parametrize("make", [padded_with_comments, long_summary, big_env], ids=lambda f: f.__name__)
def test_ten_megabyte_recipe_is_read_and_checked(
    rlcat: Run, tmp_path: Path, make: Callable[..., str]
) -> None:
    """A valid recipe of ~10 MB (under the 16 MiB limit) parses and compiles like a small one."""
    path = tmp_path / "recipes" / "big.yaml"
    path.parent.mkdir()
    path.write_text(make("big", 10 * MB), encoding="utf-8")
    assert 10 * MB <= path.stat().st_size < MAX_BYTES
    code, diagnostics = validate(rlcat, path)
    assert (code, [d for d in diagnostics if d["severity"] == "error"]) == (0, [])
    result = compile_(rlcat, path)
    assert result.code == 0, result.err


def test_ten_megabytes_of_one_scalar_is_not_a_recipe(rlcat: Run, tmp_path: Path) -> None:
    """10 MB of one long plain scalar: parsed, then refused as not a mapping (RLC004)."""
    path = tmp_path / "scalar.yaml"
    path.write_text("x" * (10 * MB) + "\n", encoding="utf-8")
    code, diagnostics = validate(rlcat, path)
    assert code == 1
    assert [(d["code"], d["line"]) for d in diagnostics] == [("RLC004", 1)]
    result = compile_(rlcat, path)
    assert result.code == 2 and " RLC004 error: " in result.err


def test_ten_megabytes_of_bad_yaml_points_at_the_line(rlcat: Run, tmp_path: Path) -> None:
    """A syntax error after ~10 MB of comments is found and placed on its line."""
    path = tmp_path / "recipes" / "late_error.yaml"
    path.parent.mkdir()
    text = padded_with_comments("late_error", 10 * MB) + "batch: {mini_batch_size: 8\n"
    path.write_text(text, encoding="utf-8")
    last_line = text.count("\n")
    code, diagnostics = validate(rlcat, path)
    assert code == 1
    assert [d["code"] for d in diagnostics] == ["RLC002"]
    assert last_line <= diagnostics[0]["line"] <= last_line + 1
    assert compile_(rlcat, path).code == 2


def test_file_over_the_size_limit_is_refused_unparsed(rlcat: Run, tmp_path: Path) -> None:
    """One byte over MAX_BYTES: RLC007 with the size, exit 2 for both commands, fast."""
    path = tmp_path / "recipes" / "huge.yaml"
    path.parent.mkdir()
    text = padded_with_comments("huge", MAX_BYTES + 1000)
    path.write_text(text[:MAX_BYTES] + "\n", encoding="utf-8")
    assert path.stat().st_size == MAX_BYTES + 1
    code, diagnostics = validate(rlcat, path)
    assert code == 2
    assert [d["code"] for d in diagnostics] == ["RLC007"]
    assert f"{MAX_BYTES + 1} bytes" in diagnostics[0]["message"]
    result = compile_(rlcat, path)
    assert result.code == 2 and " RLC007 error: " in result.err


# --- alias bomb ----------------------------------------------------------------------------------


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """`width ** levels` values once the aliases are expanded (10^9 by default) from a 1 KB file."""
    lines = ["name: bomb", "summary: billion laughs", "extends: gsm8k_qwen3_8b_fsdp", "env:"]
    lines.append("  L0: &a0 [" + ", ".join(["lol"] * width) + "]")
    for i in range(1, levels):
        lines.append(f"  L{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def mapping_bomb(levels: int = 9, width: int = 10) -> str:
    """The same with mappings: each level is a mapping whose values all alias the level below."""
    lines = ["name: bomb", "summary: billion laughs in mappings", "extends: gsm8k_qwen3_8b_fsdp"]
    lines.append("overrides:")
    lines.append("  x0: &m0 {" + ", ".join(f"k{j}: lol" for j in range(width)) + "}")
    for i in range(1, levels):
        lines.append(f"  x{i}: &m{i} {{" + ", ".join(f"k{j}: *m{i - 1}" for j in range(width)) + "}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("make", [alias_bomb, mapping_bomb], ids=lambda f: f.__name__)
def test_alias_bomb_is_refused_fast_with_bounded_memory(
    rlcat: Run, tmp_path: Path, make: Callable[[], str]
) -> None:
    path = tmp_path / "recipes" / "bomb.yaml"
    path.parent.mkdir()
    path.write_text(make(), encoding="utf-8")
    assert path.stat().st_size < 2000

    # time, without tracemalloc's overhead
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    code, diagnostics = validate(rlcat, path)
    assert code == 2
    assert any(d["code"] == "RLC007" and "alias bomb" in d["message"] for d in diagnostics), diagnostics
    result = compile_(rlcat, path)
    assert result.code == 2 and "alias bomb" in result.err
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    assert grown < BOMB_MEMORY_LIMIT, f"peak RSS grew by {grown / MB:.0f} MB"

    # memory: the peak of Python allocations while compiling a fresh copy (not from the parse cache)
    fresh = tmp_path / "recipes" / "bomb2.yaml"
    fresh.write_text(make().replace("name: bomb", "name: bomb2"), encoding="utf-8")
    tracemalloc.start()
    try:
        result = rlcat("compile", str(fresh), "--platform", "cuda")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.code == 2 and "alias bomb" in result.err
    assert peak < BOMB_MEMORY_LIMIT, f"peak Python allocations {peak / MB:.0f} MB"


# --- 5,000 levels of nesting ---------------------------------------------------------------------

DEPTH = 5000
HEAD = "name: deep\nsummary: nested 5000 levels\nextends: gsm8k_qwen3_8b_fsdp\n"
NESTINGS: dict[str, Callable[[], str]] = {
    "flow-lists": lambda: HEAD + "env: " + "[" * DEPTH + "]" * DEPTH + "\n",
    "flow-mappings": lambda: HEAD + "env: " + "{a: " * DEPTH + "1" + "}" * DEPTH + "\n",
    "block-mappings": lambda: (
        HEAD
        + "env:\n"
        + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(DEPTH))
        + " " * (DEPTH + 1)
        + "v\n"
    ),
    "block-lists": lambda: HEAD + "env:\n" + "".join(" " * (i + 1) + "-\n" for i in range(DEPTH)),
    "alias-chain": lambda: (
        HEAD + "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, DEPTH))
    ),
}


@pytest.mark.parametrize("kind", list(NESTINGS))
def test_five_thousand_levels_of_nesting(rlcat: Run, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "recipes" / "deep.yaml"
    path.parent.mkdir()
    path.write_text(NESTINGS[kind](), encoding="utf-8")
    code, diagnostics = validate(rlcat, path)
    assert code in (1, 2)
    assert diagnostics and {d["code"] for d in diagnostics} <= {"RLC002", "RLC007"}, diagnostics
    result = compile_(rlcat, path)
    assert result.code == 2
    assert " RLC002 error: " in result.err or " RLC007 error: " in result.err
