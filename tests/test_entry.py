"""The console script's quick path for `rlcat compile` (entry.py) against the Typer CLI (cli.py).

entry.py parses a well-formed compile command line itself, so that a compile imports neither
Typer, rich nor pydantic; everything else goes to Typer. These tests hold the two to the same
options, the same output, the same exit codes and the same files, and check which path ran.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from rlcat import cli, entry

from conftest import REPO

HEAVY = ("pydantic", "pydantic_core", "typer", "click", "rich", "hydra", "omegaconf", "jsonschema")


def test_option_table_matches_the_typer_command() -> None:
    command = typer.main.get_command(cli.app).commands["compile"]  # type: ignore[attr-defined]
    declared = {}
    for param in command.params:
        if param.param_type_name != "option" or param.name == "help":
            continue
        kind = "flag" if param.is_flag else "many" if param.multiple else "one"
        for spelling in param.opts:
            declared[spelling] = kind
        # click checks that an existing path is readable unless told not to; the quick path has no
        # such check, so both leave paths to cli_common (catalog_for, write_output)
        if param.name in entry.PATH_PARAMETERS:
            info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)  # Typer >= 0.25
            readable = getattr(info, "readable", None) if info else getattr(param.type, "readable", None)
            assert readable is False, param.name
    assert declared == {spelling: kind for spelling, (_, kind) in entry.COMPILE_OPTIONS.items()}


def test_every_option_reaches_compile_command() -> None:
    import inspect

    from rlcat.cli_common import compile_command

    parameters = set(inspect.signature(compile_command).parameters) - {"recipe"}
    assert {name for name, _ in entry.COMPILE_OPTIONS.values()} == parameters


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (["r", "-p", "rocm"], {"recipe": "r", "platform": "rocm"}),
        (["--platform=rocm", "r"], {"recipe": "r", "platform": "rocm"}),
        (
            ["r", "--set", "a.b=1", "--set=c.d=x=y", "--override", "k=v"],
            {"recipe": "r", "sets": ["a.b=1", "c.d=x=y"], "overrides": ["k=v"]},
        ),
        (["r", "-o", "out.sh", "--explain"], {"recipe": "r", "output": Path("out.sh"), "explain": True}),
        (["r", "--catalog", "a", "--catalog", "b"], {"recipe": "r", "catalog": [Path("a"), Path("b")]}),
        (["r", "--set", ""], {"recipe": "r", "sets": [""]}),
    ],
)
def test_well_formed_command_lines_are_parsed(tokens: list[str], expected: dict[str, object]) -> None:
    assert entry.parse_compile(tokens) == expected


@pytest.mark.parametrize(
    "tokens",
    [
        [],
        ["a", "b"],
        ["r", "--help"],
        ["r", "-h"],
        ["r", "--platform"],
        ["r", "--platform", "--engine", "vllm"],
        ["r", "--platform", "a", "--platform", "b"],
        ["r", "-procm"],
        ["r", "-p=rocm"],
        ["r", "--plat", "rocm"],
        ["r", "--explain=yes"],
        ["r", "--explain", "--explain"],
        ["r", "--", "x"],
        ["r", "--set", "-x=1"],
    ],
)
def test_anything_else_is_left_to_typer(tokens: list[str]) -> None:
    assert entry.parse_compile(tokens) is None


# --- the two paths give the same result ------------------------------------------------------------

CASES = {
    "default": ["compile", "geo3k_megatron_4_4", "--platform", "rocm"],
    "options first": ["compile", "-p", "rocm", "-f", "json", "geo3k_megatron_4_4"],
    "equals spelling": [
        "compile",
        "dapo_math_fsdp2_4_4",
        "--platform=cuda",
        "--engine=sglang",
        "--format=shell",
    ],
    "sets and overrides": [
        "compile",
        "gsm8k_qwen3_8b_fsdp",
        "--set",
        "batch.mini_batch_size=64",
        "--override",
        "trainer.save_freq=50",
        "--format",
        "yaml",
    ],
    "explain": ["compile", "qwen3_5_35b_megatron", "--platform", "rocm", "--explain"],
    "explain json": ["compile", "ppo_qwen2_7b_gsm8k", "--explain", "-f", "json"],
    "output file": ["compile", "geo3k_megatron_4_4", "-p", "rocm", "-o", "{tmp}/plan.sh", "-f", "shell"],
    "catalog folder": ["compile", "geo3k_megatron_4_4", "--catalog", "{tmp}"],
    "notes on stderr": ["compile", "gsm8k_qwen3_8b_megatron", "--platform", "npu"],
    "unknown recipe": ["compile", "geo3k_megatron_44", "--platform", "rocm"],
    "unknown platform": ["compile", "geo3k_megatron_4_4", "--platform", "rocm9"],
    "bad format": ["compile", "geo3k_megatron_4_4", "--format", "toml"],
    "explain with shell": ["compile", "geo3k_megatron_4_4", "--explain", "--format", "shell"],
    "bad set": ["compile", "geo3k_megatron_4_4", "--set", "batch.mini_batch_size=zero"],
    "engine not allowed": ["compile", "geo3k_megatron_4_4", "--mode", "colocate"],
    "set with a tag": ["compile", "geo3k_megatron_4_4", "--set", "batch.mini_batch_size=!!int 1.5"],
    "set with a self alias": ["compile", "geo3k_megatron_4_4", "--set", "batch.mini_batch_size=&a [*a]"],
    "set with a python tag": [
        "compile",
        "geo3k_megatron_4_4",
        "--set",
        "trainer.project=!!python/name:os.system",
    ],
    "output is a folder": ["compile", "geo3k_megatron_4_4", "-o", "{tmp}"],
    "missing catalog folder": ["compile", "geo3k_megatron_4_4", "--catalog", "{tmp}/nope"],
    "recipe file": ["compile", str(REPO / "recipes" / "gsm8k_qwen3_8b_megatron.yaml")],
    "help": ["compile", "--help"],
    "missing value": ["compile", "geo3k_megatron_4_4", "--platform"],
    "unknown option": ["compile", "geo3k_megatron_4_4", "--plat", "rocm"],
    "no recipe": ["compile"],
    "repeated option": ["compile", "geo3k_megatron_4_4", "-p", "cuda", "-p", "rocm"],
    "attached short value": ["compile", "geo3k_megatron_4_4", "-procm"],
}
USAGE = {"help", "missing value", "unknown option", "no recipe", "repeated option", "attached short value"}


def _run(
    main: object, argv: list[str], tmp: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str, dict[str, str]]:
    capsys.readouterr()
    code = main(argv)  # type: ignore[operator]
    out, err = capsys.readouterr()
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(tmp.iterdir()) if p.is_file()}
    for p in tmp.iterdir():
        if p.is_file():
            p.unlink()
    return code, out.replace(str(tmp), "{tmp}"), err.replace(str(tmp), "{tmp}"), files


@pytest.fixture
def cli_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    calls: list[list[str]] = []
    real = cli.main

    def spy(argv: list[str] | None = None) -> int:
        calls.append(list(argv or []))
        return real(argv)

    monkeypatch.setattr(cli, "main", spy)
    yield calls


@pytest.mark.parametrize("case", list(CASES))
def test_quick_path_and_typer_agree(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], cli_calls: list[list[str]]
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in CASES[case]]
    quick = _run(entry.main, argv, tmp_path, capsys)
    took_typer = bool(cli_calls)
    cli_calls.clear()
    typer_run = _run(cli.main, argv, tmp_path, capsys)
    assert quick == typer_run
    assert took_typer == (case in USAGE), "usage errors go to Typer; well-formed compiles do not"
    assert "Traceback" not in quick[2]
    if case == "output file":
        assert quick[0] == 0 and quick[1] == "" and quick[3]["plan.sh"].startswith("#!")


def test_cases_cover_success_findings_and_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    codes = {}
    for case, argv in CASES.items():
        codes[case] = _run(entry.main, [a.replace("{tmp}", str(tmp_path)) for a in argv], tmp_path, capsys)[0]
    assert {codes[c] for c in USAGE} <= {0, 2} and codes["help"] == 0
    assert codes["default"] == 0 and codes["unknown recipe"] == 2 and codes["bad format"] == 2
    assert codes["set with a tag"] == codes["set with a self alias"] == codes["set with a python tag"] == 2


# --- a compile process imports nothing heavy -------------------------------------------------------

CHILD = """
import contextlib, io, json, sys
from rlcat.entry import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    code = main(json.loads(sys.argv[1]))
heavy = set(json.loads(sys.argv[2]))
print(json.dumps([code, sorted({m.split(".")[0] for m in sys.modules} & heavy), len(out.getvalue())]))
"""


def _child(argv: list[str], tmp_path: Path) -> tuple[int, list[str], int]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(argv), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    code, heavy, chars = json.loads(proc.stdout)
    return code, heavy, chars


@pytest.mark.parametrize(
    "argv",
    [
        ["compile", "geo3k_megatron_4_4", "--platform", "rocm"],
        ["compile", "dapo_math_fsdp2_4_4", "--platform", "rocm-7.0.2", "--engine", "sglang", "-f", "shell"],
        ["compile", "ppo_qwen2_7b_gsm8k", "-p", "npu", "--explain", "-f", "json"],
    ],
)
def test_a_compile_imports_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    code, heavy, chars = _child(argv, tmp_path)
    assert code == 0 and chars > 1000
    assert heavy == []


def test_a_rejected_recipe_is_explained_by_pydantic(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    text = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("name: gsm8k_qwen3_8b_fsdp", "name: bad\nbatchsize: 3"), encoding="utf-8")
    code, heavy, _ = _child(["compile", str(bad)], tmp_path)
    assert code == 2 and "pydantic" in heavy and "typer" not in heavy
